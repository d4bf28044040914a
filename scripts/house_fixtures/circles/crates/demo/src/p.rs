//! A module file with a folder of children (`p/inner.rs`).
pub mod inner;

pub use self::inner::I;

pub struct P;

#[cfg(test)]
mod tests {
    // A test names what it likes: no edge.
    use crate::a::Y;
}
