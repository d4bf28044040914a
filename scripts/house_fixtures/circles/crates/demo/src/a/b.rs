use super::c::X;
use super::shared;

pub struct Y(pub X);

pub fn make() -> Y {
    // crate::p::P in a comment names nothing,
    let _text = "and crate::p::P in a string neither";
    let _ = shared();
    Y(X)
}
