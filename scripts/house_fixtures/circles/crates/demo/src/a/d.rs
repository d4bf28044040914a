pub fn f() -> u8 {
    super::e::g()
}
