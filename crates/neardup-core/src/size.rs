//! Sizes in bytes as people write them: `64M`, `512K`, `2G`, `1048576`.

/// A size in bytes: a whole number with an optional `K`, `M`, `G` or `T` suffix (powers of
/// 1024, either case, an optional `B` or `iB` after it: `36M`, `36MiB`, `36mb`).
///
/// # Errors
/// Anything else, or a size past `u64::MAX`, with a message naming the text and showing the
/// accepted forms.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let expected = || format!("{text:?}: expected a size such as 64M, 512K, 2G or 1048576");
    let lower = trimmed.to_ascii_lowercase();
    let unit_at = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(unit_at);
    let shift = match unit.trim_start() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(expected()),
    };
    let value: u64 = digits.parse().map_err(|_| expected())?;
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?}: too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_and_without_suffixes() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("36MiB"), Ok(36 << 20));
        assert_eq!(parse_size(" 2g "), Ok(2 << 30));
        assert_eq!(parse_size("512 KB"), Ok(512 << 10));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn other_text_is_refused_with_the_accepted_forms() {
        for bad in ["", "M", "1.5G", "-1", "12X", "1e6", "64MM"] {
            let message = parse_size(bad).unwrap_err();
            assert!(
                message.contains("expected a size such as 64M"),
                "{bad}: {message}"
            );
        }
        assert_eq!(
            parse_size("99999999999T").unwrap_err(),
            "\"99999999999T\": too large"
        );
    }
}
