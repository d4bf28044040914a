//! A folder module: its children name it (`super::`) and it names them (`self::`).
pub mod b;
pub mod c;

pub use self::c::X;

pub fn shared() -> u8 {
    1
}
