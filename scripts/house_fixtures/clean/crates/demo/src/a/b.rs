//! Names its sibling `c`, and its parent.
use super::c::X;
use super::shared;

pub struct Y(pub X);

pub fn make() -> Y {
    let _ = shared();
    Y(X)
}
