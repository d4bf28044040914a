//! An inline module one level down: its `super::super` is g.
pub struct H;

mod inner {
    use super::super::i::I;

    pub fn f() -> I {
        I
    }
}
