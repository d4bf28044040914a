pub struct I;

pub fn h() -> super::h::H {
    super::h::H
}
