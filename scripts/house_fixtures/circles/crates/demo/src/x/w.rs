pub struct W;

pub fn z() -> crate::x::y::z::Z {
    crate::x::y::z::Z(W)
}
