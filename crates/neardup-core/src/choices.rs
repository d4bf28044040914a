//! Enums of named choices (a parameter's values): [`named_choices!`] gives one its `name()`,
//! its `NAMES` and its `FromStr`, from one table, so that a name is written once and the
//! refusal lists what is accepted.

/// `names` as a refusal lists them: `a`, `a or b`, `a, b or c`.
pub fn expected(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [head @ .., last] => format!("{} or {last}", head.join(", ")),
    }
}

/// Gives a unit enum its names on the command line and in files, from one table:
///
/// ```
/// # use neardup_core::named_choices;
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// enum Side { Left, Right }
/// named_choices!(Side as "side" { Left => "left" | "l", Right => "right" });
///
/// assert_eq!(Side::Left.name(), "left");
/// assert_eq!("l".parse::<Side>().unwrap(), Side::Left);
/// assert_eq!(Side::NAMES, ["left", "right"]);
/// let refused = "up".parse::<Side>().unwrap_err();
/// assert_eq!(refused.to_string(), "invalid `side`: \"up\" (expected left or right)");
/// ```
///
/// `name()` gives a variant's name; `NAMES` lists them in the table's order, the order the
/// refusal of another text (an [`crate::Error`] about the parameter) lists them in; a name's
/// aliases (after `|`) parse, unlisted. With `trimmed`, the text is trimmed first.
#[macro_export]
macro_rules! named_choices {
    ($ty:ident as $param:literal { $($variant:ident => $name:literal $(| $alias:literal)*),+ $(,)? }) => {
        $crate::named_choices!(@impl $ty, $param, false, { $($variant => $name $(| $alias)*),+ });
    };
    ($ty:ident as $param:literal, trimmed { $($variant:ident => $name:literal $(| $alias:literal)*),+ $(,)? }) => {
        $crate::named_choices!(@impl $ty, $param, true, { $($variant => $name $(| $alias)*),+ });
    };
    (@impl $ty:ident, $param:literal, $trim:literal, { $($variant:ident => $name:literal $(| $alias:literal)*),+ }) => {
        impl $ty {
            /// Every name, in the order a refusal lists them.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The name used on the command line and in files.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::Error;
            fn from_str(text: &str) -> $crate::Result<$ty> {
                let text = if $trim { text.trim() } else { text };
                match text {
                    $($name $(| $alias)* => Ok($ty::$variant),)+
                    _ => Err($crate::Error::invalid(
                        $param,
                        format!("{text:?} (expected {})", $crate::choices::expected($ty::NAMES)),
                    )),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_listed_as_a_sentence() {
        assert_eq!(expected(&["a"]), "a");
        assert_eq!(expected(&["a", "b"]), "a or b");
        assert_eq!(expected(&["a", "b", "c"]), "a, b or c");
    }
}
