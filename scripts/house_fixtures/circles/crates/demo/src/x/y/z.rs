//! Module x::y::z: `super::super::w` is x::w.
use super::super::w::W;

pub struct Z(pub W);
