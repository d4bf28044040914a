//! The template check the set-verifying methods share (`minhash`, `simhash`): which elements
//! of a verification set a crowd shares (common marks, set by the engine's frequency count
//! through [`crate::Method::mark_common`]), whether a set is *templated* (mostly a template's
//! fixed text), and whether two templated sets agree on what is their own (their rare
//! elements: the filling).
//!
//! A verification set is the top 32 bits of each feature hash, sorted, without repeats; its
//! marks are one bit per element, 32 to a word, empty when nothing was counted.

use crate::boilerplate::{DfFloors, DfLimit, DEFAULT_MAX_DF};
use crate::method::{SketchDecoder, SketchEncoder, PRIORITY_KEY};
use crate::normalize::Normalizer;
use crate::params::{param_value_by_choice, Params, Setting};
use crate::sketch_kind::SketchKind;
use crate::slots::DEFAULT_SLOT_AGREEMENT;
use crate::tokenize::{Shingler, ShinglerBuilder, Tokenizer};
use crate::{Error, Result};

/// Which parts of a pair must agree besides its shingles: the parts that differ between
/// fillings of one template (see [`crate::slots`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Slots {
    /// No check (the library's default; the registry's is [`Slots::Numbers`]).
    #[default]
    Off,
    /// A pair whose sides each carry at least two numbers the other lacks must reach
    /// `slot_agreement` on the Jaccard of their numbers
    /// ([`crate::slots::slots_agree`]).
    Numbers,
}

crate::named_choices!(Slots as "slots" {
    Numbers => "numbers",
    Off => "off",
});

param_value_by_choice!(Slots);

/// What a template means: whether two fillings of one template are duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Templates {
    /// Two fillings are different documents (notices, alerts, news): a pair of templated
    /// sketches must also agree on its filling (rare shingles, numbers in their places).
    #[default]
    Distinct,
    /// Every filling of one template is a duplicate of the others (the seeds' mass-sent spam
    /// and ad copy): two templated sketches are compared on their template, the shingles
    /// a crowd shares.
    Duplicate,
}

crate::named_choices!(Templates as "templates" {
    Distinct => "distinct",
    Duplicate => "duplicate",
});

param_value_by_choice!(Templates);

/// The longest text (in characters of the normalised text without its boilerplate, spaces
/// not counted) that the template check reads: the check is for short messages made from
/// templates (notices, alerts, reposts), and a longer text's template set would cost a
/// `u32` a character in memory and in the count of common elements for nothing a
/// verification of its features does not already decide (measured in docs/evaluation.md).
pub const TEMPLATE_MAX_CHARS: usize = 512;

/// The default `rare_threshold`.
pub const DEFAULT_RARE_THRESHOLD: f64 = 0.4;

/// The least share of common elements in a *templated* set.
pub const TEMPLATED_SHARE: f64 = 0.5;

/// A verification set and its common marks.
#[derive(Debug, Clone, Copy)]
pub struct Marked<'s> {
    /// The set: sorted, without repeats.
    pub set: &'s [u32],
    /// Bit `i` set when element `i` of `set` is common; empty when not counted.
    pub common: &'s [u32],
}

impl Marked<'_> {
    /// Whether element `i` is marked common (`false` when nothing was counted).
    pub fn is_marked(&self, i: usize) -> bool {
        self.common
            .get(i / 32)
            .is_some_and(|word| word & (1 << (i % 32)) != 0)
    }

    /// Whether any element was counted.
    pub fn counted(&self) -> bool {
        !self.common.is_empty()
    }

    /// Whether common marks cover at least [`TEMPLATED_SHARE`] of the set.
    pub fn templated(&self) -> bool {
        self.counted() && self.count(true) as f64 >= TEMPLATED_SHARE * self.set.len() as f64
    }

    /// The elements marked `marked` (common when `true`, rare when `false`): a count of the
    /// marks' bits (no bit is set past the set's end).
    pub fn count(&self, marked: bool) -> usize {
        let common: usize = (self.common.iter())
            .map(|word| word.count_ones() as usize)
            .sum();
        match marked {
            true => common,
            false => self.set.len() - common.min(self.set.len()),
        }
    }
}

/// The template set of a normalised text, for a method whose own features do not tell a
/// template from ordinary text (`simhash`: English 4-character shingles are nearly all
/// common in any corpus): the top 32 bits of the hashes of its shingles with spaces left
/// out (an edit that puts a space inside a word keeps them), 2 characters on CJK text and
/// [`TEMPLATE_LATIN_NGRAM`] on other scripts, sorted, without repeats. At that length a
/// flood of one template shares most of its shingles and ordinary text few (on the English
/// newswire of docs/evaluation.md, 1% of the documents have half of their 7-character
/// shingles in more than 50 documents; every notice of a flood of 4,000 English ones does).
pub fn template_set(normalized: &str) -> Box<[u32]> {
    static SHINGLER: std::sync::OnceLock<Option<Shingler>> = std::sync::OnceLock::new();
    let shingler = SHINGLER.get_or_init(|| {
        (ShinglerBuilder::new().tokenizer(Tokenizer::Auto).ngram(2))
            .latin_ngram(TEMPLATE_LATIN_NGRAM)
            .build()
            .ok()
    });
    let Some(shingler) = shingler else {
        return Box::default();
    };
    let joined: String = normalized.chars().filter(|&c| c != ' ').collect();
    let mut set: Vec<u32> = (shingler.shingle_hashes(&joined).iter())
        .map(|&hash| (hash >> 32) as u32)
        .collect();
    set.sort_unstable();
    set.dedup();
    set.into_boxed_slice()
}

/// The shingle size of [`template_set`] on text other than CJK.
pub const TEMPLATE_LATIN_NGRAM: usize = 7;

/// The marks of `set` under `is_common` (one bit per element), and how many are marked.
pub fn mark(set: &[u32], is_common: &dyn Fn(u32) -> bool) -> (Box<[u32]>, u64) {
    let mut common = vec![0u32; set.len().div_ceil(32)];
    let mut marked = 0;
    for (element, &value) in set.iter().enumerate() {
        if is_common(value) {
            common[element / 32] |= 1 << (element % 32);
            marked += 1;
        }
    }
    (common.into_boxed_slice(), marked)
}

/// The elements two sets share whose marks on both sides are `marked`: their common
/// elements (`true`) or their rare ones (`false`).
pub fn shared_elements(a: Marked<'_>, b: Marked<'_>, marked: bool) -> usize {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.set.len() && j < b.set.len() {
        match a.set[i].cmp(&b.set[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += usize::from(a.is_marked(i) == marked && b.is_marked(j) == marked);
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

/// Whether two marked sets agree on their rare elements: their Jaccard reaches `threshold`
/// (true when neither has a rare element).
pub fn rare_agree(a: Marked<'_>, b: Marked<'_>, threshold: f64) -> bool {
    let (rare_a, rare_b) = (a.count(false), b.count(false));
    if rare_a + rare_b == 0 {
        return true;
    }
    let shared = shared_elements(a, b, false);
    let jaccard = shared as f64 / (rare_a + rare_b - shared) as f64;
    jaccard >= threshold - 1e-9
}

/// The template check of a method that verifies a set of its own features (`simhash`):
/// common marks from `max_df`, then, for a pair with a templated side, the rare elements at
/// `rare_threshold`, and for a pair of two templated sides the numbers in their places
/// ([`crate::slots::template_slots_agree`]) or, with templates duplicate, the template
/// itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TemplateCheck {
    /// Features in more documents than this are common; [`DfLimit::Off`] turns the check off.
    pub max_df: DfLimit,
    /// Least Jaccard of the rare elements.
    pub rare_threshold: f64,
    /// Whether the numbers of two templated sides must agree.
    pub slots: Slots,
    /// Least Jaccard of the numbers ([`crate::slots::template_slots_agree`]).
    pub slot_agreement: f64,
    /// What a template means.
    pub templates: Templates,
    /// The least count of a fractional `max_df`.
    pub floors: DfFloors,
}

use crate::slots::NumberPlaces;
pub use crate::slots::TextSlots;

impl TemplateCheck {
    /// The check of `params` ([`crate::methods::shared::params::TEMPLATE_PARAMS`] and
    /// `max_df`).
    ///
    /// # Errors
    /// A value that does not parse, or a threshold outside `(0, 1]`, naming its parameter.
    pub fn from_params(params: &Params) -> Result<TemplateCheck> {
        let max_df = DfLimit::parse(params.raw("max_df").unwrap_or(DEFAULT_MAX_DF), "max_df")?;
        let rare_threshold = params
            .get("rare_threshold")?
            .unwrap_or(DEFAULT_RARE_THRESHOLD);
        let slot_agreement = params
            .get("slot_agreement")?
            .unwrap_or(DEFAULT_SLOT_AGREEMENT);
        for (name, value) in [
            ("rare_threshold", rare_threshold),
            ("slot_agreement", slot_agreement),
        ] {
            if !(value > 0.0 && value <= 1.0) {
                return Err(Error::invalid(
                    name,
                    format!("{value} (expected {})", crate::error::THRESHOLD_RANGE),
                ));
            }
        }
        Ok(TemplateCheck {
            max_df,
            rare_threshold,
            slots: params.get("slots")?.unwrap_or(Slots::Numbers),
            slot_agreement,
            templates: params.get("templates")?.unwrap_or_default(),
            floors: DfFloors::BATCH,
        })
    }

    /// Whether the check is on (`max_df` not off).
    pub fn is_on(&self) -> bool {
        self.max_df != DfLimit::Off
    }

    /// Whether sketches carry the numbers of their text.
    pub fn reads_slots(&self) -> bool {
        self.is_on() && self.slots == Slots::Numbers
    }

    /// The template part of raw `text` whose normalised body (without its boilerplate,
    /// `stripped` when some left) is `body`, of `length` characters without spaces: the
    /// template set of the whole text (a frequent piece a notice opens with may hold its
    /// filling, "Hi Mary, this is a reminder of your appointment with Dr.", which the
    /// method's own features may leave out but the check must see) and the numbers of the
    /// body (a dated header's date is not the filling). Empty when the check is off, the
    /// body has no feature (`has_features` false) or is longer than
    /// [`TEMPLATE_MAX_CHARS`].
    pub fn part(
        &self,
        normalizer: &Normalizer,
        (text, body, stripped): (&str, &str, bool),
        length: usize,
        has_features: bool,
    ) -> TemplatePart {
        if !(self.is_on() && has_features && length <= TEMPLATE_MAX_CHARS) {
            return TemplatePart::default();
        }
        let set = match stripped {
            false => template_set(body),
            true => template_set(&normalizer.normalize(text)),
        };
        let (slots, digit_order, places) = match self.reads_slots() {
            true => (
                crate::slots::number_slots(body).into_boxed_slice(),
                crate::slots::digit_order(body),
                crate::slots::number_places(body),
            ),
            false => (Box::default(), 0, NumberPlaces::default()),
        };
        TemplatePart {
            set,
            common: Box::default(),
            digit_order: if slots.is_empty() { 0 } else { digit_order },
            places: match slots.is_empty() {
                true => NumberPlaces::default(),
                false => places,
            },
            slots,
        }
    }

    /// The document-frequency limit among `documents` ([`crate::Method::common_limit`]).
    pub fn common_limit(&self, documents: u64) -> Option<u64> {
        self.max_df.resolve(documents, 1, self.floors.common)
    }

    /// The settings, for the stats file (`max_df` is the boilerplate's).
    pub fn settings(&self) -> Vec<(&'static str, Setting)> {
        vec![
            ("rare_threshold", Setting::Number(self.rare_threshold)),
            ("slots", Setting::Text(self.slots.name().to_owned())),
            ("slot_agreement", Setting::Number(self.slot_agreement)),
            ("templates", Setting::Text(self.templates.name().to_owned())),
        ]
    }

    /// With templates duplicate, the similarity of two templated sides on their template
    /// (the containment of their common elements: the share of the smaller common set in
    /// the other) when it reaches `threshold`; `None` otherwise.
    pub fn same_template(&self, a: Marked<'_>, b: Marked<'_>, threshold: f64) -> Option<f64> {
        if self.templates != Templates::Duplicate || !a.templated() || !b.templated() {
            return None;
        }
        let smaller = a.count(true).min(b.count(true)).max(1);
        let similarity = shared_elements(a, b, true) as f64 / smaller as f64;
        (similarity >= threshold - 1e-9).then_some(similarity)
    }

    /// Whether a pair the method's own measure accepted passes the template check: always
    /// when neither side is templated; else its rare elements must agree, and when both
    /// are, its numbers too.
    pub fn agree(
        &self,
        (a, slots_a): (Marked<'_>, TextSlots<'_>),
        (b, slots_b): (Marked<'_>, TextSlots<'_>),
    ) -> bool {
        let (templated_a, templated_b) = (a.templated(), b.templated());
        if !templated_a && !templated_b {
            return true;
        }
        if a.counted() && b.counted() && !rare_agree(a, b, self.rare_threshold) {
            return false;
        }
        !(templated_a && templated_b && self.slots == Slots::Numbers)
            || crate::slots::template_slots_agree(slots_a, slots_b, self.slot_agreement)
    }
}

/// What a sketch carries for the template check: its template set and common marks, its
/// numbers and the hash of its digits in text order. Empty (no set) when the check is off or
/// the text is too long; a method encodes it ahead of its own sketch, under a kind of its own
/// ([`TemplatePart::encode`]), so that sketches without it keep their old bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TemplatePart {
    /// The template set ([`template_set`]).
    pub set: Box<[u32]>,
    /// Bit `i` set when element `i` of `set` is common ([`crate::Method::mark_common`]);
    /// empty when not counted. Encoded, so that a sketch marked on one machine is verified
    /// marked on another (Spark); the service marks stored sketches again before verifying.
    pub common: Box<[u32]>,
    /// The numbers of the text ([`crate::slots::number_slots`]); empty without the slots.
    pub slots: Box<[u32]>,
    /// The hash of the text's digits in text order ([`crate::slots::digit_order`]); 0
    /// without slots.
    pub digit_order: u32,
    /// Where the text's numbers stand ([`crate::slots::number_places`]); 0s without slots
    /// or unknown (a sketch written before them).
    pub places: NumberPlaces,
}

impl TemplatePart {
    /// Whether the sketch has no template set (the check does not read it).
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The set and its marks.
    pub fn marked(&self) -> Marked<'_> {
        Marked {
            set: &self.set,
            common: &self.common,
        }
    }

    /// The numbers and the digit order.
    pub fn text_slots(&self) -> TextSlots<'_> {
        (&self.slots, self.digit_order, self.places)
    }

    /// Marks the elements `is_common` says are common; returns how many.
    pub fn mark(&mut self, is_common: &dyn Fn(u32) -> bool) -> u64 {
        let marked;
        (self.common, marked) = mark(&self.set, is_common);
        marked
    }

    /// Appends the *rare* elements of the part (unmarked ones; all of them when nothing was
    /// counted) to `out`, and returns whether the part is templated. A templated part with
    /// no rare element appends its digit order in a namespace of its own (`1 << 32 |
    /// order`) instead; one without digits either (only template text) counts as not
    /// templated. A pair with a templated side passes the check only when its rare elements
    /// reach `rare_threshold` in Jaccard (or, both sides without any, agree on their
    /// numbers): an exact join over these elements finds every pair the check can accept
    /// with a templated side, without the quadratic answer of the template's shared text.
    pub fn rare_elements(&self, out: &mut Vec<u64>) -> bool {
        let marked = self.marked();
        let before = out.len();
        out.extend(
            (self.set.iter().enumerate())
                .filter(|&(i, _)| !marked.is_marked(i))
                .map(|(_, &value)| u64::from(value)),
        );
        if !marked.templated() {
            return false;
        }
        if out.len() > before {
            return true;
        }
        if self.digit_order != 0 {
            out.push(1 << 32 | u64::from(self.digit_order));
            return true;
        }
        false
    }

    /// Appends the online *priority keys* of a templated part to `out` and returns whether
    /// it is templated: its [`TemplatePart::rare_elements`] and its digits in order, each
    /// hashed in a namespace of its own with [`PRIORITY_KEY`] set. The digits are a key too
    /// because what is rare changes as a stream's model is learned again (a value new since
    /// the last learning is rare in every text that has it); the digits of a notice and of
    /// its copies do not.
    pub fn priority_keys(&self, out: &mut Vec<u64>) -> bool {
        let mut rare = Vec::new();
        if !self.rare_elements(&mut rare) {
            return false;
        }
        if self.digit_order != 0 {
            rare.push(1 << 32 | u64::from(self.digit_order));
        }
        out.extend(rare.into_iter().map(priority_key));
        true
    }

    /// Appends the *template keys* of a templated part to `out` and returns whether it is
    /// templated (nothing appended otherwise): [`TEMPLATE_BANDS`] keys, each the hash of
    /// [`TEMPLATE_ROWS`] min-hashes of its common elements (its template's text). Two
    /// fillings of one template share most of their common elements; at a Jaccard `J` of
    /// those they share a key with probability `1 - (1 - J^2)^4` (0.98 at `J = 0.8`, 0.87 at
    /// 0.6), and a text of another template almost never.
    pub fn template_keys(&self, out: &mut Vec<u64>) -> bool {
        let marked = self.marked();
        if !marked.templated() {
            return false;
        }
        let common: Vec<u64> = (self.set.iter().enumerate())
            .filter(|&(i, _)| marked.is_marked(i))
            .map(|(_, &value)| u64::from(value))
            .collect();
        if common.is_empty() {
            return false;
        }
        for band in 0..TEMPLATE_BANDS {
            let mut key = vec![band as u64 ^ 0x7465_6d70_6c61_7465]; // "template"
            for row in 0..TEMPLATE_ROWS {
                let seed = crate::hash::mix64((band * TEMPLATE_ROWS + row) as u64 + 1);
                let least = (common.iter())
                    .map(|&value| crate::hash::mix64(value ^ seed))
                    .min()
                    .unwrap_or(0);
                key.push(least);
            }
            let hash = crate::hash::hash128_u64s(&key);
            out.push((hash as u64) ^ ((hash >> 64) as u64));
        }
        true
    }

    /// Appends the *template sample* of a templated part to `out` (sorted) and returns whether
    /// it is templated (nothing appended otherwise): the [`TEMPLATE_SAMPLE_KEYS`] least hashes
    /// of its common elements (a bottom-k sketch of its template's text: two fillings of one
    /// template share about `k J` of them at a Jaccard `J` of those elements). One hash an
    /// element, where [`TemplatePart::template_keys`] takes one a band: the stats group a
    /// run's templated texts by it.
    pub fn template_sample(&self, out: &mut Vec<u64>) -> bool {
        let marked = self.marked();
        if !marked.counted() || (marked.count(true) as f64) < SAMPLED_SHARE * self.set.len() as f64
        {
            return false;
        }
        let mut least = [u64::MAX; TEMPLATE_SAMPLE_KEYS];
        let mut held = 0;
        for (i, &value) in self.set.iter().enumerate() {
            if !marked.is_marked(i) {
                continue;
            }
            let hash = crate::hash::mix64(u64::from(value) ^ 0x7361_6d70_6c65_5f6b); // "sample_k"
            if held < TEMPLATE_SAMPLE_KEYS {
                least[held] = hash;
                held += 1;
                least[..held].sort_unstable();
            } else if hash < least[TEMPLATE_SAMPLE_KEYS - 1] {
                let at = least.partition_point(|&kept| kept < hash);
                least.copy_within(at..TEMPLATE_SAMPLE_KEYS - 1, at + 1);
                least[at] = hash;
            }
        }
        out.extend_from_slice(&least[..held]);
        held > 0
    }

    /// Writes the part under `kind` (set, marks, slots, digit order) when it has a set; the
    /// method's own sketch follows it.
    pub fn encode(&self, kind: SketchKind, out: &mut Vec<u8>) {
        if !self.set.is_empty() {
            SketchEncoder::new(out, kind.byte())
                .u32s(&self.set)
                .u32s(&self.common)
                .u32s(&self.slots)
                .u32s(&order_and_places(self.digit_order, self.places));
        }
    }

    /// Reads a part written under `kind` by [`TemplatePart::encode`] and returns it with the
    /// bytes that follow, which must be a sketch of kind `inner`.
    ///
    /// # Errors
    /// Bytes that are not such a part: cut short, an empty or unsorted set, marks of the
    /// wrong length, a digit order without slots, or an inner sketch of another kind.
    pub fn decode(
        bytes: &[u8],
        kind: SketchKind,
        inner: SketchKind,
    ) -> Result<(TemplatePart, &[u8])> {
        let mut decoder = SketchDecoder::new(bytes, kind.byte(), kind.name())?;
        let set = decoder.u32s()?;
        let common = decoder.u32s()?;
        let slots = decoder.u32s()?;
        let order = decoder.u32s()?;
        let rest = decoder.rest();
        // A part written before the places has the digit order alone.
        let (digit_order, places) = match *order.as_slice() {
            [digit_order] => (digit_order, NumberPlaces::default()),
            [digit_order, layout, numbers] => (digit_order, NumberPlaces { layout, numbers }),
            _ => {
                let count = order.len();
                return Err(Error::invalid(
                    "sketch",
                    format!("{count} digit orders and places (expected one or three)"),
                ));
            }
        };
        let increasing = |values: &[u32]| values.windows(2).all(|w| w[0] < w[1]);
        if set.is_empty() || !increasing(&set) || !slots.is_sorted() {
            return Err(Error::invalid(
                "sketch",
                "template set empty or not strictly increasing, or slots unsorted",
            ));
        }
        let unslotted = slots.is_empty() && (digit_order != 0 || places.layout != 0);
        if unslotted || rest.get(3) != Some(&inner.byte()) {
            return Err(Error::invalid(
                "sketch",
                "a digit order or layout without slots, or an inner sketch of another kind",
            ));
        }
        if !common.is_empty() && common.len() != set.len().div_ceil(32) {
            return Err(Error::invalid(
                "sketch",
                format!("{} mark words for {} elements", common.len(), set.len()),
            ));
        }
        let part = TemplatePart {
            set: set.into_boxed_slice(),
            common: common.into_boxed_slice(),
            slots: slots.into_boxed_slice(),
            digit_order,
            places,
        };
        Ok((part, rest))
    }
}

/// The digit order, and the places when known (a part without them is written as before).
pub(crate) fn order_and_places(digit_order: u32, places: NumberPlaces) -> Vec<u32> {
    match places == NumberPlaces::default() {
        true => vec![digit_order],
        false => vec![digit_order, places.layout, places.numbers],
    }
}

/// The least share of common elements in a part with a [`TemplatePart::template_sample`].
pub const SAMPLED_SHARE: f64 = 0.75;

/// Hashes in a [`TemplatePart::template_sample`].
pub const TEMPLATE_SAMPLE_KEYS: usize = 8;

/// Bands of [`TemplatePart::template_keys`].
pub const TEMPLATE_BANDS: usize = 8;
/// Min-hashes in a band of [`TemplatePart::template_keys`].
pub const TEMPLATE_ROWS: usize = 1;

/// The priority key of a rare element or a digit order ([`TemplatePart::priority_keys`]).
fn priority_key(element: u64) -> u64 {
    const NAMESPACE: u64 = 0x7261_7265_5f6b_6579; // "rare_key"
    PRIORITY_KEY | crate::hash::hash64(&(element ^ NAMESPACE).to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_sample_is_the_least_hashes_of_the_common_elements() {
        let set: Vec<u32> = (1..=40).collect();
        let part = |common_below: u32| {
            let mut part = TemplatePart {
                set: set.clone().into_boxed_slice(),
                ..TemplatePart::default()
            };
            part.mark(&|v| v < common_below);
            part
        };
        // 35 of 40 common: the 8 least hashes of those 35, ascending.
        let mut sample = Vec::new();
        assert!(part(36).template_sample(&mut sample));
        let mut expected: Vec<u64> = (1..36u64)
            .map(|v| crate::hash::mix64(v ^ 0x7361_6d70_6c65_5f6b))
            .collect();
        expected.sort_unstable();
        expected.truncate(TEMPLATE_SAMPLE_KEYS);
        assert_eq!(sample, expected);
        // 25 of 40 (templated, under three quarters) and unmarked: none.
        let mut none = Vec::new();
        assert!(!part(26).template_sample(&mut none));
        assert!(!TemplatePart {
            set: set.into_boxed_slice(),
            ..TemplatePart::default()
        }
        .template_sample(&mut none));
        assert!(none.is_empty());
    }

    #[test]
    fn marks_count_share_and_decide() {
        let set = [1, 2, 3, 4, 5, 6];
        let (common, marked) = mark(&set, &|v| v <= 4);
        assert_eq!(marked, 4);
        let a = Marked {
            set: &set,
            common: &common,
        };
        assert!(a.templated() && a.is_marked(0) && !a.is_marked(5));
        assert_eq!((a.count(true), a.count(false)), (4, 2));
        // Another filling: the same fixed text, its own rare elements.
        let other = [1, 2, 3, 4, 7, 8];
        let (other_common, _) = mark(&other, &|v| v <= 4);
        let b = Marked {
            set: &other,
            common: &other_common,
        };
        assert_eq!(shared_elements(a, b, true), 4);
        assert_eq!(shared_elements(a, b, false), 0);
        assert!(!rare_agree(a, b, 0.4));
        assert!(rare_agree(a, a, 0.4));
        // Unmarked: not templated, nothing marked.
        let plain = Marked {
            set: &set,
            common: &[],
        };
        assert!(!plain.templated() && !plain.is_marked(0) && !plain.counted());
    }
}
