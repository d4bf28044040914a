//! Siblings of a folder module: b and c by `use super::..`, d and e by paths in code.
mod b;
mod c;
mod d;
mod e;

pub use self::b::Y;

pub fn shared() -> u8 {
    1
}
