use super::{b::Y, shared};

pub struct X;

pub(in crate::a) fn wrap(y: Y) -> Y {
    let _ = shared();
    y
}
