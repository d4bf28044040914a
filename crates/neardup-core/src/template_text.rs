//! The fixed text and the slots of a template, told from a few of its fillings (the
//! templates of a run's stats file and report).
//!
//! The fixed text is what the first filling shares with every other one in the same order:
//! its characters aligned in a longest common subsequence with each. What is left between
//! them are the slots: `{}` in the fixed text, and each filling's own text there. A single
//! letter or digit aligned by chance inside a slot (two amounts that share a `5`) is slot,
//! not fixed text; a single mark or word between two slots ("{}:{}", "{}月{}日") stays fixed.

/// Characters of each filling read: a template's notice is short, and the alignment costs
/// the product of two lengths (a stats file describes 20 templates of 8 documents).
pub const DESCRIBED_CHARS: usize = 256;

/// A template as its fillings show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateText {
    /// The fixed text, `{}` in each slot: `【{}】您的验证码是{}，{}分钟内有效`.
    pub fixed: String,
    /// Per filling given, in order, the text of each slot.
    pub slots: Vec<Vec<String>>,
}

/// The template of `fillings` (each cut to [`DESCRIBED_CHARS`] characters); `None` without
/// a filling. One filling is all fixed text.
///
/// ```
/// use neardup_core::template_text::describe;
/// let found = describe(&[
///     "【招商银行】您的验证码是482105，5分钟内有效。",
///     "【淘宝】您的验证码是913377，10分钟内有效。",
/// ])
/// .unwrap();
/// assert_eq!(found.fixed, "【{}】您的验证码是{}，{}分钟内有效。");
/// assert_eq!(found.slots[1], ["淘宝", "913377", "10"]);
/// ```
pub fn describe(fillings: &[&str]) -> Option<TemplateText> {
    let texts: Vec<Units> = fillings.iter().map(|text| Units::of(text)).collect();
    let (first, others) = texts.split_first()?;
    let units = &first.units;
    // Per other filling, where each unit of the first one is in it.
    let alignments: Vec<Vec<Option<usize>>> = (others.iter())
        .map(|other| align(units, &other.units))
        .collect();
    let mut fixed: Vec<bool> = (0..units.len())
        .map(|i| alignments.iter().all(|a| a[i].is_some()))
        .collect();
    // A lone aligned character beside a character of its own kind (a digit among digits, a
    // letter among letters) was aligned by chance inside a slot.
    let kind = |c: char| match c {
        '0'..='9' => 0,
        c if c.is_alphabetic() => 1,
        _ => 2,
    };
    let by_chance: Vec<bool> = (0..units.len())
        .map(|i| {
            let before = i.checked_sub(1);
            let after = Some(i + 1).filter(|&a| a < units.len());
            let lone = [before, after].iter().all(|n| n.is_none_or(|n| !fixed[n]));
            let same = [before, after]
                .iter()
                .flatten()
                .any(|&n| kind(units[n]) == kind(units[i]));
            fixed[i] && lone && kind(units[i]) < 2 && same
        })
        .collect();
    for (keep, chance) in fixed.iter_mut().zip(by_chance) {
        *keep &= !chance;
    }
    // The slots: ranges of the first filling's units, empty where another filling has
    // units of its own between two fixed ones (or before the first, after the last).
    let gap = |b: usize| {
        (others.iter().zip(&alignments)).any(|(other, at)| {
            let from = b.checked_sub(1).and_then(|p| at[p]).map_or(0, |p| p + 1);
            let to = at.get(b).copied().flatten().unwrap_or(other.units.len());
            from < to
        })
    };
    let mut slots: Vec<(usize, usize)> = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    loop {
        if i < units.len() && !fixed[i] {
            let start = i;
            while i < units.len() && !fixed[i] {
                i += 1;
            }
            slots.push((start, i));
            text.push_str("{}");
        } else if gap(i) && slots.last().is_none_or(|&(_, end)| end != i) {
            slots.push((i, i));
            text.push_str("{}");
        }
        if i == units.len() {
            break;
        }
        if fixed[i] {
            // White space between two fixed units of the first filling, as one space.
            if i > 0 && fixed[i - 1] && first.place[i] > first.place[i - 1] + 1 {
                text.push(' ');
            }
            text.push(first.chars[first.place[i]]);
            i += 1;
        }
    }
    let mut values = vec![first.slot_values(&slots, &Some)];
    for (other, alignment) in others.iter().zip(&alignments) {
        values.push(other.slot_values(&slots, &|i| alignment.get(i).copied().flatten()));
    }
    Some(TemplateText {
        fixed: text,
        slots: values,
    })
}

/// A filling as it is aligned: its characters (cut to [`DESCRIBED_CHARS`]), and its *units*,
/// the characters but white space, full-width ASCII folded ("，" and "," align), each with
/// its place among the characters.
struct Units {
    chars: Vec<char>,
    units: Vec<char>,
    place: Vec<usize>,
}

impl Units {
    fn of(text: &str) -> Units {
        let chars: Vec<char> = text.chars().take(DESCRIBED_CHARS).collect();
        let (mut units, mut place) = (Vec::new(), Vec::new());
        for (at, &c) in chars.iter().enumerate() {
            if c.is_whitespace() {
                continue;
            }
            let folded = match c {
                '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
                _ => c,
            };
            units.push(folded);
            place.push(at);
        }
        Units {
            chars,
            units,
            place,
        }
    }

    /// The text of each slot (ranges of the first filling's units), trimmed, when the unit
    /// at the first filling's unit `i` is this filling's `at(i)` (known for every fixed
    /// unit; `None` past the end, where a slot runs to the end of the text).
    fn slot_values(
        &self,
        slots: &[(usize, usize)],
        at: &dyn Fn(usize) -> Option<usize>,
    ) -> Vec<String> {
        let char_at = |unit: Option<usize>| unit.and_then(|u| self.place.get(u).copied());
        (slots.iter())
            .map(|&(start, end)| {
                let from = match start {
                    0 => 0,
                    _ => char_at(at(start - 1)).map_or(0, |p| p + 1),
                };
                let to = char_at(at(end)).unwrap_or(self.chars.len()).max(from);
                let value: String = self.chars[from..to].iter().collect();
                value.trim().to_owned()
            })
            .collect()
    }
}

/// Where each character of `a` is in `b` under a longest common subsequence (`None` for
/// the characters left out). Ties keep the earliest match in `b`.
fn align(a: &[char], b: &[char]) -> Vec<Option<usize>> {
    let (n, m) = (a.len(), b.len());
    // lengths[i][j]: the LCS of a[i..] and b[j..].
    let width = m + 1;
    let mut lengths = vec![0u16; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i * width + j] = if a[i] == b[j] {
                lengths[(i + 1) * width + j + 1] + 1
            } else {
                lengths[(i + 1) * width + j].max(lengths[i * width + j + 1])
            };
        }
    }
    let mut found = vec![None; n];
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            found[i] = Some(j);
            i += 1;
            j += 1;
        } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fillings_of_an_exam_notice_show_their_names_and_numbers() {
        let found = describe(&[
            "【广州教育考试院】王伟同学您好，考试将于5月12日9点开始，座位号31。",
            "【深圳教育考试院】李娜同学您好，考试将于6月3日14点开始，座位号7。",
            "【广州教育考试院】张敏同学您好，考试将于5月20日9点开始，座位号58。",
        ])
        .unwrap();
        assert_eq!(
            found.fixed,
            "【{}教育考试院】{}同学您好，考试将于{}月{}日{}点开始，座位号{}。"
        );
        assert_eq!(found.slots[1], ["深圳", "李娜", "6", "3", "14", "7"]);
        assert_eq!(found.slots[2], ["广州", "张敏", "5", "20", "9", "58"]);
    }

    proptest::proptest! {
        #[test]
        fn any_fillings_give_their_own_texts_back(
            texts in proptest::collection::vec("[ab1-3，,。 ]{0,12}", 1..5),
        ) {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let found = describe(&texts).unwrap();
            // Each filling is the fixed text with its own slots put back (but for white
            // space and full-width forms).
            for (text, slots) in texts.iter().zip(&found.slots) {
                let mut pieces = found.fixed.split("{}");
                let mut rebuilt = pieces.next().unwrap_or("").to_owned();
                for (piece, slot) in pieces.zip(slots) {
                    rebuilt.push_str(slot);
                    rebuilt.push_str(piece);
                }
                let bare = |t: &str| -> String { Units::of(t).units.into_iter().collect() };
                proptest::prop_assert_eq!(bare(&rebuilt), bare(text));
            }
        }
    }

    #[test]
    fn one_filling_is_all_fixed_and_none_is_nothing() {
        let found = describe(&["Hi Mary, room 12."]).unwrap();
        assert_eq!(found.fixed, "Hi Mary, room 12.");
        assert_eq!(found.slots, [Vec::<String>::new()]);
        assert_eq!(describe(&[]), None);
    }

    #[test]
    fn a_prefix_of_one_filling_is_a_slot_and_texts_are_cut() {
        let found = describe(&["转发：您的验证码是1234。", "您的验证码是5678。"]).unwrap();
        assert_eq!(found.fixed, "{}您的验证码是{}。");
        assert_eq!(found.slots[0], ["转发：", "1234"]);
        assert_eq!(found.slots[1], ["", "5678"]);
        let long = "字".repeat(2 * DESCRIBED_CHARS);
        let found = describe(&[&long, &long]).unwrap();
        assert_eq!(found.fixed.chars().count(), DESCRIBED_CHARS);
    }
}
