//! A folder module: in its mod.rs (module k::l), `super::m` is k::m.
use super::m::M;

pub struct L(pub M);
