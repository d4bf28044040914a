//! Slots: the parts of a text that differ between fillings of one template.
//!
//! Two notices of one template (a bank message, a verification code, a dividend
//! announcement) share their wording and differ in what fills it: amounts, card digits,
//! codes, dates, times, phone numbers. Their shingle sets can be as close as two copies of
//! one text, and a shared company or bank name lets them agree on their rare shingles too.
//! What sets them apart is that *every* number differs. Copies of one text keep their
//! numbers, or change one or two in an edit.
//!
//! The slots of a text are its numbers: the maximal runs of ASCII digits of the normalised
//! text (NFKC has already made full-width digits ASCII; punctuation folding splits
//! `1,234.56` into `1`, `234` and `56`, the same way in every document). A number of
//! [`LONG_NUMBER_DIGITS`] digits or more (a code, an account, an order or phone number) is an
//! identifier: it counts [`LONG_NUMBER_WEIGHT`] times, so that two verification codes that
//! differ only in their code are two fillings. A pair *disagrees on
//! its slots* when each side has at least [`SLOT_MISMATCHES`] numbers the other lacks (as
//! multisets) and the multiset Jaccard of the two is under the agreement threshold. One
//! changed number never refuses a pair, and neither does a text whose numbers are all in
//! the other (a truncated copy, a text contained in another): only two texts that both
//! carry numbers the other does not.
//!
//! Measured on the labelled corpora in docs/evaluation.md ("Template precision").

use crate::hash::{hash64, mix64};

/// The fewest numbers each side of a pair must lack from the other before the pair can
/// disagree on its slots.
pub const SLOT_MISMATCHES: usize = 2;

/// The fewest digits of a number that counts [`LONG_NUMBER_WEIGHT`] times.
pub const LONG_NUMBER_DIGITS: usize = 6;

/// How many times a number of [`LONG_NUMBER_DIGITS`] digits or more counts.
pub const LONG_NUMBER_WEIGHT: usize = 3;

/// The default least multiset Jaccard of the numbers of a pair with
/// [`SLOT_MISMATCHES`] mismatches on each side.
pub const DEFAULT_SLOT_AGREEMENT: f64 = 0.2;

/// The slots of normalised text: a 32-bit hash of each maximal run of ASCII digits
/// ([`LONG_NUMBER_WEIGHT`] times for a long one), sorted, repeats kept (a multiset).
pub fn number_slots(normalized: &str) -> Vec<u32> {
    let bytes = normalized.as_bytes();
    let mut slots = Vec::new();
    let mut push = |digits: &[u8]| {
        let weight = match digits.len() >= LONG_NUMBER_DIGITS {
            true => LONG_NUMBER_WEIGHT,
            false => 1,
        };
        let hash = (hash64(digits) >> 32) as u32;
        slots.extend(std::iter::repeat_n(hash, weight));
    };
    let mut start = None;
    for (i, byte) in bytes.iter().enumerate() {
        match (byte.is_ascii_digit(), start) {
            (true, None) => start = Some(i),
            (false, Some(from)) => {
                push(&bytes[from..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        push(&bytes[from..]);
    }
    slots.sort_unstable();
    slots
}

/// A hash of the ASCII digits of normalised text in text order, whatever separates them
/// (never 0); 0 for a text without digits. Two copies of one notice have their numbers in
/// the same order even where an edit put a space inside one (a space every 20 characters
/// splits a long number in two); two fillings of one template differ here, even where they
/// share some of their numbers (a month, a seat), because the template puts each number in
/// its place.
pub fn digit_order(normalized: &str) -> u32 {
    let digits: Vec<u8> = normalized.bytes().filter(u8::is_ascii_digit).collect();
    match digits.is_empty() {
        true => 0,
        false => ((hash64(&digits) >> 32) as u32).max(1),
    }
}

/// Where the numbers of a text stand, for [`template_slots_agree`]: two hashes, each 0
/// when unknown: a text without digits, a sketch written before them, or a text with two
/// numbers apart only by spaces ([`number_places`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NumberPlaces {
    /// The character before each number, skipping spaces and digits, in text order (a
    /// number is a digit run, as for [`number_slots`]). Two fillings of
    /// one template have the same layout, their numbers in the same places; a copy whose
    /// numbers were rewritten ("2024-05-17" for "5月17日") has another.
    pub layout: u32,
    /// The numbers with the character before each, in text order.
    pub numbers: u32,
}

/// The [`NumberPlaces`] of normalised text; unknown (0s) when two of its numbers (digit
/// runs, as for [`number_slots`]) are apart only by spaces. Punctuation folds to a space,
/// so an amount, a time or a date ("3084.92", "08:20", "2024-05-17") is such a group, and
/// so is a number an edit cut with a space ("第2 7考场"): where a group's cuts fall is an
/// edit's choice ("308 4.92" and "3084.9 2" are copies), so the places of such a text are
/// not compared, and the digit order decides.
pub fn number_places(normalized: &str) -> NumberPlaces {
    // Two running hashes, each value mixed into the state; no allocation (every `minhash`
    // sketch with numbers takes its places).
    const SEED: u64 = 0x706c_6163_6573_0001; // "places"
    let (mut layout, mut numbers) = (SEED, SEED);
    let mut count = 0usize;
    // The UTF-8 bytes of the last character that is neither a space nor a digit.
    let mut before = 0u32;
    // Whether the last character other than a space was a digit.
    let mut after_digit = false;
    let mut in_number = false;
    for &byte in normalized.as_bytes() {
        if byte.is_ascii_digit() {
            if !in_number {
                if after_digit {
                    return NumberPlaces::default();
                }
                layout = mix64(layout ^ u64::from(before));
                numbers = mix64(numbers ^ (1 << 32 | u64::from(before)));
                count += 1;
                in_number = true;
            }
            numbers = mix64(numbers ^ u64::from(byte));
            after_digit = true;
        } else {
            in_number = false;
            if !byte.is_ascii_whitespace() {
                // A continuation byte extends the character; any other starts one.
                before = match byte & 0xC0 == 0x80 {
                    true => before << 8 | u32::from(byte),
                    false => u32::from(byte),
                };
                after_digit = false;
            }
        }
    }
    let finish = |state: u64| match count {
        0 => 0,
        _ => ((mix64(state ^ count as u64) >> 32) as u32).max(1),
    };
    NumberPlaces {
        layout: finish(layout),
        numbers: finish(numbers),
    }
}

/// The numbers of a text ([`number_slots`]), the hash of its digits in text order
/// ([`digit_order`]; 0 when unknown or without digits) and where its numbers stand
/// ([`number_places`]).
pub type TextSlots<'s> = (&'s [u32], u32, NumberPlaces);

/// Whether two texts that are both made mostly of a template's fixed text (a crowd's
/// common features) agree on their slots: they do when their digits come in the same order
/// ([`digit_order`]; two copies of a notice), or when one side has no number the other
/// lacks (a copy cut short or with a number added); two fillings, each with a number of its
/// own in its place, do not, however many numbers they share. Two texts with their numbers
/// in the same places ([`number_places`]) agree only on the same number in every place:
/// two fillings of one template can have the same numbers in another order (5月17日 seat 7
/// against 5月7日 seat 17), or the same digits cut otherwise (第1考场座位号25 against
/// 第12考场座位号5). `order_a` or `order_b` 0 (unknown: an older sketch) falls back to
/// [`slots_agree`]; an unknown layout leaves the places out.
pub fn template_slots_agree(
    (a, order_a, places_a): TextSlots<'_>,
    (b, order_b, places_b): TextSlots<'_>,
    agreement: f64,
) -> bool {
    if order_a == 0 || order_b == 0 {
        return slots_agree(a, b, agreement);
    }
    if places_a.layout != 0 && places_a.layout == places_b.layout {
        return places_a.numbers == places_b.numbers;
    }
    if order_a == order_b {
        return true;
    }
    let shared = crate::measure::intersection_size(a, b);
    (a.len() - shared).min(b.len() - shared) == 0
}

/// Whether two sorted slot multisets ([`number_slots`]) agree: true unless each side has at
/// least [`SLOT_MISMATCHES`] slots the other lacks and their multiset Jaccard is under
/// `agreement`.
pub fn slots_agree(a: &[u32], b: &[u32], agreement: f64) -> bool {
    if a.len() < SLOT_MISMATCHES || b.len() < SLOT_MISMATCHES {
        return true;
    }
    // The merge of two sorted slices counts repeats as a multiset intersection.
    let shared = crate::measure::intersection_size(a, b);
    let (only_a, only_b) = (a.len() - shared, b.len() - shared);
    if only_a.min(only_b) < SLOT_MISMATCHES {
        return true;
    }
    let jaccard = shared as f64 / (a.len() + b.len() - shared) as f64;
    jaccard >= agreement - 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::Normalizer;

    fn slots(text: &str) -> Vec<u32> {
        number_slots(&Normalizer::default().normalize(text))
    }

    #[test]
    fn numbers_are_digit_runs_of_the_normalised_text() {
        assert_eq!(slots("no numbers here"), Vec::<u32>::new());
        // Full-width digits are ASCII after NFKC; punctuation splits runs.
        assert_eq!(slots("尾号４８２１"), slots("尾号4821"));
        assert_eq!(slots("$1,234.56"), slots("1 234 56"));
        assert_eq!(slots("7 7").len(), 2);
        let hash = |digits: &[u8]| (hash64(digits) >> 32) as u32;
        let mut expected = vec![hash(b"2024"), hash(b"15")];
        expected.sort_unstable();
        assert_eq!(slots("于2024年第15次"), expected);
        // A long number is an identifier: it counts three times.
        assert_eq!(slots("code 638121"), vec![hash(b"638121"); 3]);
    }

    #[test]
    fn two_fillings_of_one_template_disagree() {
        let a = slots("Chase alert: a purchase of $412.07 was made on your card ending in 4821 at Northwind Traders in Atlanta on May 5. If this was not you, call 800-555-0199.");
        let b = slots("Chase alert: a purchase of $87.50 was made on your card ending in 1937 at Northwind Traders in Atlanta on June 17. If this was not you, call 888-555-0142.");
        assert!(!slots_agree(&a, &b, DEFAULT_SLOT_AGREEMENT));
        let a = slots(
            "【招商银行】您尾号4821的储蓄卡于3月5日14:20支出人民币412.07元，当前余额9,120.00元。",
        );
        let b = slots(
            "【招商银行】您尾号1937的储蓄卡于6月17日09:41支出人民币87.50元，当前余额2,306.18元。",
        );
        assert!(!slots_agree(&a, &b, DEFAULT_SLOT_AGREEMENT));
    }

    #[test]
    fn two_codes_differ_in_their_identifier() {
        // One number each differs, but it is a code: a filling, not an edit.
        let a = slots("Your Venmo verification code is 638121. It expires in 11 minutes.");
        let b = slots("Your Venmo verification code is 606535. It expires in 11 minutes.");
        assert!(!slots_agree(&a, &b, DEFAULT_SLOT_AGREEMENT));
        // A copy with a changed short number still agrees.
        let c = slots("Your Venmo verification code is 638121. It expires in 10 minutes.");
        assert!(slots_agree(&a, &c, DEFAULT_SLOT_AGREEMENT));
    }

    #[test]
    fn copies_and_light_edits_agree() {
        let text =
            "Net income was 12.4 mln dlrs, or 1.05 dlrs a share, against 9.8 mln dlrs in 1986.";
        let a = slots(text);
        assert!(slots_agree(&a, &a, DEFAULT_SLOT_AGREEMENT));
        // One changed number: at most one mismatch a side.
        let b = slots(&text.replace("12.4", "13.4"));
        assert!(slots_agree(&a, &b, DEFAULT_SLOT_AGREEMENT));
        // A truncated copy: its numbers are all in the whole.
        let c = slots("Net income was 12.4 mln dlrs, or 1.05 dlrs a share");
        assert!(slots_agree(&a, &c, DEFAULT_SLOT_AGREEMENT));
        // No numbers, or one, on either side: nothing to disagree on.
        assert!(slots_agree(
            &a,
            &slots("no numbers"),
            DEFAULT_SLOT_AGREEMENT
        ));
        assert!(slots_agree(&a, &slots("just 7"), DEFAULT_SLOT_AGREEMENT));
    }

    fn ordered(text: &str) -> (Vec<u32>, u32, NumberPlaces) {
        let normalized = Normalizer::default().normalize(text);
        let slots = number_slots(&normalized);
        (slots, digit_order(&normalized), number_places(&normalized))
    }

    /// Whether two texts' slots agree at the default agreement.
    fn agree(a: &(Vec<u32>, u32, NumberPlaces), b: &(Vec<u32>, u32, NumberPlaces)) -> bool {
        template_slots_agree(of(a), of(b), DEFAULT_SLOT_AGREEMENT)
    }

    fn of(slots: &(Vec<u32>, u32, NumberPlaces)) -> TextSlots<'_> {
        (&slots.0, slots.1, slots.2)
    }

    #[test]
    fn fillings_of_a_template_disagree_in_place_even_sharing_numbers() {
        let exam = |name: &str, numbers: [u32; 5]| {
            let [month, day, hour, room, seat] = numbers;
            ordered(&format!(
                "【南京教育考试院】{name}同学您好，您报名的考试将于{month}月{day}日{hour}点开始，\
                 考场为第{room}考场，座位号{seat}，请携带身份证和准考证提前三十分钟到达。"
            ))
        };
        let a = exam("王伟", [3, 16, 9, 12, 7]);
        // Two of five shared: the multiset check lets them through, the order does not.
        let b = exam("李娜", [3, 8, 10, 12, 21]);
        assert!(slots_agree(&a.0, &b.0, DEFAULT_SLOT_AGREEMENT));
        assert!(!agree(&a, &b));
        // One number of its own on each side is a filling too.
        let c = exam("王伟", [3, 16, 9, 12, 8]);
        assert!(!agree(&a, &c));
        // A copy with a space inside a number, a forwarding prefix, or cut short agrees.
        let text = "【铁路客服】订单E183152144，刘婷您已购4月10日G300次11车14C号。";
        let spaced = ordered(&text.replace("E183152144", "E18315214 4"));
        let whole = ordered(text);
        let forwarded = ordered(&format!("转发：{text}"));
        let cut = ordered("【铁路客服】订单E183152144，刘婷您已购4月10日G300次");
        for copy in [&spaced, &forwarded, &cut] {
            assert!(agree(&whole, copy));
        }
        // An unknown order (an older sketch) is the multiset check.
        assert!(template_slots_agree(
            (&a.0, 0, NumberPlaces::default()),
            of(&b),
            DEFAULT_SLOT_AGREEMENT
        ));
        assert_eq!(digit_order("no digits"), 0);
    }

    fn exam_text_split() -> String {
        "【重庆教育考试院】张杰同学您好，您报名的考试将于5月26日11点开始，考场为第2 7考场，\
         座位号14，请携带身份证和准考证提前三十分钟到达。"
            .to_owned()
    }

    #[test]
    fn fillings_with_the_same_numbers_in_other_places_disagree() {
        let exam = |name: &str, city: &str, numbers: [u32; 5], spaced: bool| {
            let [month, day, hour, room, seat] = numbers;
            let text = format!(
                "【{city}教育考试院】{name}同学您好，您报名的考试将于{month}月{day}日{hour}点开始，\
                 考场为第{room}考场，座位号{seat}，请携带身份证和准考证提前三十分钟到达。"
            );
            // The edit of a flood: a space every 20 characters, through a number or not.
            let text = match spaced {
                false => text,
                true => (text.chars().collect::<Vec<_>>().chunks(20))
                    .map(|chunk| chunk.iter().collect::<String>())
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            ordered(&text)
        };
        // The same multiset of numbers {5, 7, 7, 11, 17}, in other places.
        let a = exam("杨芳", "重庆", [5, 17, 11, 7, 7], false);
        let b = exam("赵军", "上海", [5, 7, 11, 7, 17], false);
        assert_eq!(a.0, b.0);
        assert_eq!(a.2.layout, b.2.layout);
        assert!(!agree(&a, &b));
        // Without the places (an older sketch), the multiset rule lets them through.
        let unknown = NumberPlaces::default();
        assert!(template_slots_agree(
            (&a.0, a.1, unknown),
            (&b.0, b.1, unknown),
            DEFAULT_SLOT_AGREEMENT
        ));
        // The same digits in the same order, cut otherwise: 1 and 25 against 12 and 5.
        let c = exam("陈芳", "成都", [3, 20, 11, 1, 25], false);
        let d = exam("陈洋", "深圳", [3, 20, 11, 12, 5], false);
        assert_eq!(c.1, d.1);
        assert!(!agree(&c, &d));
        // A copy with spaces, one of them inside a number ("第2 7考场"), has another
        // layout, and the same digit order.
        for numbers in [[5, 17, 11, 7, 7], [5, 26, 11, 27, 14], [12, 31, 16, 20, 27]] {
            let whole = exam("张杰", "重庆", numbers, false);
            let spaced = exam("张杰", "重庆", numbers, true);
            assert_eq!(whole.1, spaced.1);
            assert!(agree(&whole, &spaced));
        }
        let whole = exam("张杰", "重庆", [5, 26, 11, 27, 14], false);
        let split = ordered(&exam_text_split());
        assert_eq!(split.2, NumberPlaces::default());
        assert!(agree(&whole, &split));
        // Groups of numbers apart by spaces or folded punctuation: cut otherwise by an edit,
        // the places are unknown and the digit order decides.
        let paid = ordered("您尾号2870的储蓄卡于12月12日08:20支出人民币3084.92元");
        assert_eq!(paid.2, NumberPlaces::default());
        for copy in ["支出人民币308 4.92元", "支出人民币3084.9 2元"] {
            let copy = ordered(&format!("您尾号2870的储蓄卡于12月12日08:20{copy}"));
            assert!(agree(&paid, &copy));
        }
        // A copy whose amount lost its cents ("$1226.29" -> "$1226.a") has a number fewer:
        // all of its numbers are in the other.
        let paid = ordered("Your order #53392911 totaling $1226.29 will ship by February 5.");
        let garbled = ordered("Your order #53392911 totaling $1226.a will ship by February 5.");
        assert!(agree(&paid, &garbled));
        // A copy whose date was rewritten has its numbers elsewhere: the multiset rule.
        let dated = ordered("会议于2024年5月17日召开，地点为第7会议室。");
        let rewritten = ordered("会议于5月17日（2024年）召开，地点为第7会议室。");
        assert_ne!(dated.2.layout, rewritten.2.layout);
        assert!(agree(&dated, &rewritten));
        assert_eq!(number_places("no digits"), NumberPlaces::default());
    }

    #[test]
    fn the_agreement_threshold_is_the_multiset_jaccard() {
        let a = slots("1 2 3 4 5 6 7 8");
        let b = slots("1 2 3 4 5 6 90 91");
        // Two mismatches a side, Jaccard 6 / 10.
        assert!(slots_agree(&a, &b, 0.6));
        assert!(!slots_agree(&a, &b, 0.61));
        assert!(slots_agree(&a, &b, 0.0));
    }
}
