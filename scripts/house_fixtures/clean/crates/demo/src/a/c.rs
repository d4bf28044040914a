//! Names only its parent: `super::shared` is `a`, not a sibling.
use super::shared;

pub struct X;

pub fn count() -> u8 {
    // super::b::make() would be a circle; a comment is not code.
    let _text = "super::b::Y";
    shared() + super::shared()
}

#[cfg(test)]
mod tests {
    // Tests name what they like: `b` here makes no circle with `b`'s `use super::c::X`.
    use crate::a::b::make;

    #[test]
    fn made() {
        let _ = make();
    }
}
