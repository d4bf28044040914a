pub struct Q;

pub fn make() -> crate::p::inner::I {
    crate::p::inner::I(Q)
}
