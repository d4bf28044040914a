//! Synthetic near-duplicate benchmarks: edited copies and hard negatives of a corpus, with the
//! truth of which document is a copy of which.
//!
//! # Overview
//!
//! [`Synthesizer::generate`] takes the texts of a source corpus and returns a [`Benchmark`]:
//! every source document (`s<N>`, numbered from 1 in input order), for a `duplicate_rate`
//! fraction of them 1 to `max_variants` edited copies (`s<N>-v<K>`), and for a
//! `hard_negatives` fraction of them one *hard negative* (`s<N>-hn1`): the source's opening
//! (title or first sentence) followed by text taken from other documents, which looks like a
//! copy but is not one.
//!
//! A variant gets one or two edits drawn from the enabled [`Edit`]s, each applied with the
//! same `strength` in (0, 1] (roughly the fraction of characters touched; see each edit's
//! function). An edit that cannot change a text (no Han characters to convert, one sentence
//! to swap) is replaced by another enabled edit, so a variant's [`Category`] names the edits
//! actually applied, in the canonical order of [`Edit::ALL`]. If no enabled edit changes a
//! text, that variant is not produced and is counted in [`Summary::skipped_variants`].
//!
//! # Wrappers, re-wraps and templates
//!
//! With `wrappers` N > 0, N *accounts* are drawn (seeded), each with a Chinese and an English
//! wrapper: a header and a footer made of built-in boilerplate lines ("本文来源于网络，版权归原作者
//! 所有……", "Copyright © 2021 Kalo Media. All rights reserved.") filled with the account's own
//! names, site and numbers, more than [`SHORT_BODY`] characters long, so that the wrapper is
//! longer than any body of at most that length. Every source is assigned an account, and its
//! original, its variants (edited before wrapping) and its hard negative are written as
//! `header + "\n" + body + "\n" + footer` with the account's wrapper for the source's script
//! (Chinese if it has CJK characters). Different sources of one account are different
//! clusters: hard negatives that share a header and a footer longer than their bodies.
//! A `rewrap` fraction of the sources gets one *re-wrap* (`s<N>-rw1`, category `rewrap`): the
//! unedited body in the wrapper of another account, in the source's cluster.
//!
//! With `templates` N > 0, N *template notices* (`t<K>`, category `template`, a cluster each)
//! are added: bank messages, verification codes, delivery and meeting notices, dividend
//! announcements... in Chinese if most sources have CJK characters, in English otherwise.
//! Notices of one family differ only in their numbers and names; no two are identical.
//!
//! The truth clusters are: a source with its variants; identical source texts (exact byte
//! equality) share one cluster, named after the first of them; near-identical sources are
//! assumed distinct, so a source corpus with unflagged near-duplicates yields some truth
//! "non-duplicates" that a good method rightly merges. Every hard negative is a cluster of its
//! own. A hard negative's opening is at most half of its source, and it takes at most half of
//! each donor document (preferring donors of the same script that no other hard negative
//! used), so it is no closer than a Jaccard of about 0.5 to any one document.
//!
//! # Determinism
//!
//! Everything is drawn from [`Rng`] (SplitMix64 over [`mix64`](neardup_core::hash::mix64)) seeded by the seed: each
//! source document has two streams of its own (derived from the seed and its position), one
//! for its variants and one for its hard negative; the word pool and the final order have
//! theirs, and so do the accounts, each source's choice of account and re-wrap, and the
//! template notices, so that the defaults (no wrappers, no templates) give the same bytes as
//! before those options existed. Generation is sequential, so the same texts, seed and options give the same
//! benchmark on any machine and with any thread count. The documents are returned
//! *shuffled* (seeded), so a duplicate is rarely next to its original and a "keep the first"
//! policy keeps originals and copies alike.
//!
//! # Example
//!
//! ```
//! use neardup_eval::synth::{SynthOptions, Synthesizer};
//!
//! let options = SynthOptions { duplicate_rate: 1.0, ..SynthOptions::default() };
//! let synthesizer = Synthesizer::new(options)?;
//! let texts = ["今天北京天气晴朗，适合出门散步。傍晚有小雨。", "The quick brown fox. It jumps."];
//! let benchmark = synthesizer.generate(&texts);
//! assert!(benchmark.documents.len() >= 4);
//! # Ok::<(), neardup_pipeline::Error>(())
//! ```

mod edits;
mod hard_negative;
mod names;
pub mod notices;
mod punctuation;
mod rng;
mod sentences;
mod template;
mod wrap;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

pub use self::edits::{
    boilerplate, char_sub, delete, insert, script, truncate, width, word_sub, WordPool,
    BOILERPLATE_EN, BOILERPLATE_ZH,
};
use self::hard_negative::add_hard_negative;
pub use self::punctuation::punct;
pub use self::rng::Rng;
pub use self::sentences::{opening_length, sentences, swap, Sentence};
pub use self::template::{EN_FAMILIES, ZH_FAMILIES};
pub use self::wrap::{Account, Wrapper, SHORT_BODY};
use neardup_core::tokenize::is_cjk;
use neardup_pipeline::Result;

/// The stream of the word pool (source documents use streams `0..`).
const POOL_STREAM: u64 = u64::MAX;
/// The stream of the final shuffle.
const SHUFFLE_STREAM: u64 = u64::MAX - 1;
/// The stream of the accounts' wrappers.
const ACCOUNT_STREAM: u64 = u64::MAX - 2;
/// The stream of the template notices.
const TEMPLATE_STREAM: u64 = u64::MAX - 3;
/// Source `i`'s account and re-wrap draw from stream `WRAP_STREAMS + i` (far above the `2 * i`
/// and `2 * i + 1` of its variants and hard negative).
const WRAP_STREAMS: u64 = 1 << 62;
/// How many draws look for a template notice not produced yet.
const TEMPLATE_DRAWS: usize = 1000;

/// One kind of edit that turns a document into a near-duplicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Edit {
    /// Substitute characters ([`char_sub`]).
    CharSub,
    /// Substitute words with words of other documents ([`word_sub`]).
    WordSub,
    /// Convert simplified Chinese to traditional ([`script`]).
    Script,
    /// Insert characters ([`insert`]).
    Insert,
    /// Delete characters ([`delete`]).
    Delete,
    /// Change, add or remove punctuation ([`punct`]).
    Punct,
    /// Full-width / half-width changes ([`width`]).
    Width,
    /// Append or prepend a boilerplate line ([`boilerplate`]).
    Boilerplate,
    /// Cut the end ([`truncate`]).
    Truncate,
    /// Swap two adjacent sentences ([`swap`]).
    Swap,
}

impl Edit {
    /// Every edit, in canonical order.
    pub const ALL: [Edit; 10] = [
        Edit::CharSub,
        Edit::WordSub,
        Edit::Script,
        Edit::Insert,
        Edit::Delete,
        Edit::Punct,
        Edit::Width,
        Edit::Boilerplate,
        Edit::Truncate,
        Edit::Swap,
    ];

    /// The name used on the command line and in the truth file (`char-sub`, `punct`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Edit::CharSub => "char-sub",
            Edit::WordSub => "word-sub",
            Edit::Script => "script",
            Edit::Insert => "insert",
            Edit::Delete => "delete",
            Edit::Punct => "punct",
            Edit::Width => "width",
            Edit::Boilerplate => "boilerplate",
            Edit::Truncate => "truncate",
            Edit::Swap => "swap",
        }
    }
}

impl fmt::Display for Edit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Edit {
    type Err = neardup_core::Error;

    /// Accepts the names of [`Edit::name`].
    fn from_str(name: &str) -> std::result::Result<Edit, neardup_core::Error> {
        let found = Edit::ALL.into_iter().find(|edit| edit.name() == name);
        found.ok_or_else(|| {
            let names: Vec<&str> = Edit::ALL.iter().map(|edit| edit.name()).collect();
            let message = format!(
                "unknown edit {name:?}; expected one of: {}",
                names.join(", ")
            );
            neardup_core::Error::invalid("edits", message)
        })
    }
}

/// What a benchmark document is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Category {
    /// A source document, unchanged.
    Original,
    /// An edited copy of a source document, with the edits applied (canonical order).
    Variant(Vec<Edit>),
    /// A source's opening followed by other documents' text: not a duplicate.
    HardNegative,
    /// A source's body in the wrapper of another account: a duplicate.
    Rewrap,
    /// A template notice: a cluster of its own.
    Template,
}

impl Category {
    /// `original`, `hard_negative`, `rewrap`, `template`, or the edit names joined by `+` (`punct+width`).
    pub fn name(&self) -> String {
        match self {
            Category::Original => "original".to_owned(),
            Category::HardNegative => "hard_negative".to_owned(),
            Category::Rewrap => "rewrap".to_owned(),
            Category::Template => "template".to_owned(),
            Category::Variant(edits) => {
                let names: Vec<&str> = edits.iter().map(|edit| edit.name()).collect();
                names.join("+")
            }
        }
    }
}

/// The parameters of a benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthOptions {
    /// The seed of every random choice.
    pub seed: u64,
    /// The fraction of source documents that get variants, in `[0, 1]`.
    pub duplicate_rate: f64,
    /// A source that gets variants gets 1 to this many (at least 1).
    pub max_variants: usize,
    /// The edits to draw from (at least one; repeats are ignored).
    pub edits: Vec<Edit>,
    /// How strong each edit is, in `(0, 1]`: roughly the fraction of characters it touches.
    pub strength: f64,
    /// The fraction of source documents that get a hard negative, in `[0, 1]`.
    pub hard_negatives: f64,
    /// How many accounts wrap the documents in their header and footer (0: no wrapping).
    pub wrappers: usize,
    /// The fraction of source documents that get a re-wrap (their body in another account's
    /// wrapper), in `[0, 1]`; more than 0 needs at least 2 `wrappers`.
    pub rewrap: f64,
    /// How many template notices to add.
    pub templates: usize,
}

impl Default for SynthOptions {
    /// Seed 1, 30% of documents with up to 3 variants, every edit at strength 0.05, 5% hard
    /// negatives, no wrappers, re-wraps or templates.
    fn default() -> SynthOptions {
        SynthOptions {
            seed: 1,
            duplicate_rate: 0.3,
            max_variants: 3,
            edits: Edit::ALL.to_vec(),
            strength: 0.05,
            hard_negatives: 0.05,
            wrappers: 0,
            rewrap: 0.0,
            templates: 0,
        }
    }
}

/// One document of a benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthDocument {
    /// `s<N>`, `s<N>-v<K>`, `s<N>-hn<K>`, `s<N>-rw<K>` or `t<K>`.
    pub id: String,
    /// The text.
    pub text: String,
    /// The index of the source document it was made from (`None` for a template notice).
    pub source: Option<usize>,
    /// The id of its truth cluster: the first original with the same source text, or its own
    /// id for a hard negative or a template notice.
    pub cluster: String,
    /// What it is.
    pub category: Category,
}

/// Counts of what a benchmark holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Source documents.
    pub sources: usize,
    /// Source documents whose text repeats an earlier one (they share its cluster).
    pub repeated_sources: usize,
    /// Variants produced.
    pub variants: usize,
    /// Variants per category name (`punct`, `punct+width`, ...).
    pub variants_by_category: BTreeMap<String, usize>,
    /// Variants per edit (a two-edit variant counts for both).
    pub variants_by_edit: BTreeMap<Edit, usize>,
    /// Variants not produced because no enabled edit changed the text.
    pub skipped_variants: usize,
    /// Hard negatives produced.
    pub hard_negatives: usize,
    /// Hard negatives not produced (empty source, or no other distinct document).
    pub skipped_hard_negatives: usize,
    /// Documents wrapped in their account's header and footer (re-wraps not included).
    pub wrapped: usize,
    /// Re-wraps produced.
    pub rewraps: usize,
    /// Template notices produced.
    pub templates: usize,
}

/// A generated benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Benchmark {
    /// The documents, in seeded random order.
    pub documents: Vec<SynthDocument>,
    /// What they are.
    pub summary: Summary,
}

/// A checked set of options that generates benchmarks.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthesizer {
    options: SynthOptions,
}

impl Synthesizer {
    /// Checks the options.
    ///
    /// # Errors
    ///
    /// [`Error::Parameter`](neardup_pipeline::Error::Parameter) naming the option and the value if a rate
    /// is outside `[0, 1]`, the strength outside `(0, 1]`, `max_variants` is 0, no edit is
    /// enabled, or `rewrap` is above 0 with fewer than 2 `wrappers`.
    pub fn new(mut options: SynthOptions) -> Result<Synthesizer> {
        check_rate("duplicate-rate", options.duplicate_rate)?;
        check_rate("hard-negatives", options.hard_negatives)?;
        check_rate("rewrap", options.rewrap)?;
        if options.rewrap > 0.0 && options.wrappers < 2 {
            let message = format!(
                "{} needs at least 2 wrappers to re-wrap in another account (got {})",
                options.rewrap, options.wrappers
            );
            return Err(neardup_core::Error::invalid("rewrap", message).into());
        }
        if !(options.strength > 0.0 && options.strength <= 1.0) {
            let message = format!("{} (expected a number in (0, 1])", options.strength);
            return Err(neardup_core::Error::invalid("strength", message).into());
        }
        if options.max_variants == 0 {
            return Err(
                neardup_core::Error::invalid("max-variants", "0 (expected 1 or more)").into(),
            );
        }
        let mut unique = Vec::with_capacity(options.edits.len());
        for edit in options.edits {
            if !unique.contains(&edit) {
                unique.push(edit);
            }
        }
        options.edits = unique;
        if options.edits.is_empty() {
            return Err(
                neardup_core::Error::invalid("edits", "empty (expected at least one)").into(),
            );
        }
        Ok(Synthesizer { options })
    }

    /// The checked options (repeated edits removed).
    pub fn options(&self) -> &SynthOptions {
        &self.options
    }

    /// Generates the benchmark of `texts` (see the [module documentation](self)).
    pub fn generate(&self, texts: &[&str]) -> Benchmark {
        let clusters = first_copies(texts);
        let pool = WordPool::sample(texts, &mut Rng::stream(self.options.seed, POOL_STREAM));
        let accounts = wrap::accounts(
            self.options.wrappers,
            &mut Rng::stream(self.options.seed, ACCOUNT_STREAM),
        );
        let mut context = Context {
            texts,
            clusters: &clusters,
            pool: &pool,
            used_donors: vec![false; texts.len()],
            accounts: &accounts,
        };
        let mut benchmark = Benchmark {
            documents: Vec::new(),
            summary: Summary::default(),
        };
        for index in 0..texts.len() {
            self.generate_source(&mut context, index, &mut benchmark);
        }
        self.add_templates(texts, &mut benchmark);
        let mut shuffler = Rng::stream(self.options.seed, SHUFFLE_STREAM);
        shuffler.shuffle(&mut benchmark.documents);
        benchmark
    }

    /// Adds source `index`, its variants and its hard negative to `benchmark`. Variants and
    /// hard negatives draw from separate streams, so either rate can change without changing
    /// the other's documents.
    fn generate_source(&self, context: &mut Context<'_>, index: usize, benchmark: &mut Benchmark) {
        let origin = Origin {
            index,
            id: format!("s{}", index + 1),
            cluster: format!("s{}", context.clusters[index] + 1),
        };
        let text = context.texts[index];
        let start = benchmark.documents.len();
        benchmark.summary.sources += 1;
        benchmark.summary.repeated_sources += usize::from(context.clusters[index] != index);
        let (id, cluster) = (origin.id.clone(), origin.cluster.clone());
        benchmark.push(&origin, id, text.to_owned(), cluster, Category::Original);
        let mut rng = Rng::stream(self.options.seed, 2 * index as u64);
        if rng.chance(self.options.duplicate_rate) {
            self.add_variants(context, &origin, &mut rng, benchmark);
        }
        let mut rng = Rng::stream(self.options.seed, 2 * index as u64 + 1);
        if rng.chance(self.options.hard_negatives) {
            add_hard_negative(context, &origin, &mut rng, benchmark);
        }
        if !context.accounts.is_empty() {
            self.wrap_source(context, &origin, start, benchmark);
        }
    }

    /// Wraps the documents of `origin` (from `start` on) in the wrapper of its account and
    /// adds its re-wrap if it gets one.
    fn wrap_source(
        &self,
        context: &Context<'_>,
        origin: &Origin,
        start: usize,
        benchmark: &mut Benchmark,
    ) {
        let accounts = context.accounts;
        let mut rng = Rng::stream(self.options.seed, WRAP_STREAMS + origin.index as u64);
        let account = rng.below(accounts.len());
        let text = context.texts[origin.index];
        let cjk = text.chars().any(is_cjk);
        let wrapper = accounts[account].wrapper(cjk);
        for document in &mut benchmark.documents[start..] {
            document.text = wrapper.wrap(&document.text);
            benchmark.summary.wrapped += 1;
        }
        if rng.chance(self.options.rewrap) {
            let other = (account + 1 + rng.below(accounts.len() - 1)) % accounts.len();
            let rewrapped = accounts[other].wrapper(cjk).wrap(text);
            benchmark.summary.rewraps += 1;
            let id = format!("{}-rw1", origin.id);
            benchmark.push(
                origin,
                id,
                rewrapped,
                origin.cluster.clone(),
                Category::Rewrap,
            );
        }
    }

    /// Adds the template notices, `t1` to `t<templates>`: Chinese if most texts have CJK
    /// characters, each family equally likely, redrawn while equal to an earlier notice.
    fn add_templates(&self, texts: &[&str], benchmark: &mut Benchmark) {
        if self.options.templates == 0 {
            return;
        }
        let cjk = texts.iter().filter(|t| t.chars().any(is_cjk)).count();
        let chinese = 2 * cjk > texts.len();
        let mut rng = Rng::stream(self.options.seed, TEMPLATE_STREAM);
        let mut seen = HashSet::new();
        for _ in 0..self.options.templates {
            let fresh = (0..TEMPLATE_DRAWS).find_map(|_| {
                let family = rng.below(template::families(chinese));
                let notice = template::notice(chinese, family, &mut rng);
                (!seen.contains(&notice)).then_some(notice)
            });
            let Some(notice) = fresh else {
                break;
            };
            seen.insert(notice.clone());
            benchmark.summary.templates += 1;
            let id = format!("t{}", benchmark.summary.templates);
            benchmark.documents.push(SynthDocument {
                id: id.clone(),
                text: notice,
                source: None,
                cluster: id,
                category: Category::Template,
            });
        }
    }

    /// Adds 1 to `max_variants` variants of `origin` (fewer if no edit applies).
    fn add_variants(
        &self,
        context: &Context<'_>,
        origin: &Origin,
        rng: &mut Rng,
        benchmark: &mut Benchmark,
    ) {
        let text = context.texts[origin.index];
        let mut made = 0;
        for _ in 0..1 + rng.below(self.options.max_variants) {
            let Some((variant, edits)) = self.variant(text, context.pool, rng) else {
                benchmark.summary.skipped_variants += 1;
                continue;
            };
            made += 1;
            count_variant(&mut benchmark.summary, &edits);
            let id = format!("{}-v{made}", origin.id);
            let category = Category::Variant(edits);
            benchmark.push(origin, id, variant, origin.cluster.clone(), category);
        }
    }

    /// An edited copy of `text` and the edits applied (canonical order), or `None` if no
    /// enabled edit changes it.
    fn variant(&self, text: &str, pool: &WordPool, rng: &mut Rng) -> Option<(String, Vec<Edit>)> {
        let wanted = (1 + rng.below(2)).min(self.options.edits.len());
        let mut order = self.options.edits.clone();
        rng.shuffle(&mut order);
        let mut current = text.to_owned();
        let mut applied = Vec::new();
        for edit in order {
            if applied.len() == wanted {
                break;
            }
            if let Some(next) = self.apply(edit, &current, pool, rng) {
                current = next;
                applied.push(edit);
            }
        }
        applied.sort_unstable();
        (!applied.is_empty() && current != text).then_some((current, applied))
    }

    /// Applies one edit at the configured strength.
    fn apply(&self, edit: Edit, text: &str, pool: &WordPool, rng: &mut Rng) -> Option<String> {
        let strength = self.options.strength;
        match edit {
            Edit::CharSub => char_sub(text, rng, strength),
            Edit::WordSub => word_sub(text, rng, strength, pool),
            Edit::Script => script(text),
            Edit::Insert => insert(text, rng, strength),
            Edit::Delete => delete(text, rng, strength),
            Edit::Punct => punct(text, rng, strength),
            Edit::Width => width(text, rng, strength),
            Edit::Boilerplate => boilerplate(text, rng),
            Edit::Truncate => truncate(text, strength),
            Edit::Swap => swap(text, rng),
        }
    }
}

/// The source a document is made from.
struct Origin {
    /// Its position among the source texts.
    index: usize,
    /// Its id, `s<N>`.
    id: String,
    /// Its truth cluster.
    cluster: String,
}

impl Benchmark {
    /// Adds a document made from `origin`.
    fn push(
        &mut self,
        origin: &Origin,
        id: String,
        text: String,
        cluster: String,
        category: Category,
    ) {
        let source = Some(origin.index);
        self.documents.push(SynthDocument {
            id,
            text,
            source,
            cluster,
            category,
        });
    }
}

/// Refuses a rate outside `[0, 1]`.
fn check_rate(name: &'static str, rate: f64) -> Result<()> {
    if (0.0..=1.0).contains(&rate) {
        return Ok(());
    }
    let message = format!("{rate} (expected a number in [0, 1])");
    Err(neardup_core::Error::invalid(name, message).into())
}

/// Counts a produced variant in the summary.
fn count_variant(summary: &mut Summary, edits: &[Edit]) {
    summary.variants += 1;
    let category = Category::Variant(edits.to_vec()).name();
    *summary.variants_by_category.entry(category).or_default() += 1;
    for edit in edits {
        *summary.variants_by_edit.entry(*edit).or_default() += 1;
    }
}

/// What every source's generation reads.
struct Context<'a> {
    /// The source texts.
    texts: &'a [&'a str],
    /// For each text, the index of the first text equal to it.
    clusters: &'a [usize],
    /// The words [`word_sub`] takes from.
    pool: &'a WordPool,
    /// For each text, whether a hard negative already took text from it: two hard negatives
    /// with the same donor would be near-duplicates of each other.
    used_donors: Vec<bool>,
    /// The accounts that wrap the documents (none without wrapping).
    accounts: &'a [Account],
}

/// For each text, the index of its first exact copy (itself if it is the first).
fn first_copies(texts: &[&str]) -> Vec<usize> {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(texts.len());
    let found = texts
        .iter()
        .enumerate()
        .map(|(index, text)| *first.entry(*text).or_insert(index));
    found.collect()
}

#[cfg(test)]
mod tests {
    use super::edits::COMMON_HAN;
    use super::*;

    pub(super) const ZH: &str =
        "今天北京天气晴朗，适合出门散步。傍晚可能有小雨，记得带伞！明天气温回升。";
    pub(super) const EN: &str =
        "The quick brown fox jumps over the lazy dog. It was 42 degrees! Nobody minded.";

    pub(super) fn rng() -> Rng {
        Rng::new(7)
    }

    /// Random sentences of common characters (Chinese) or of words (English).
    fn random_sentence(rng: &mut Rng, chinese: bool) -> String {
        let han: Vec<char> = COMMON_HAN.chars().collect();
        let words = [
            "river", "market", "council", "storm", "season", "league", "vaccine", "bank",
        ];
        let length = 8 + rng.below(12);
        match chinese {
            true => (0..length)
                .map(|_| han[rng.below(han.len())])
                .chain(['。'])
                .collect(),
            false => {
                let chosen: Vec<&str> =
                    (0..length).map(|_| words[rng.below(words.len())]).collect();
                format!("{}. ", chosen.join(" "))
            }
        }
    }

    /// 40 Chinese and 40 English documents: a title, then one to four random sentences.
    pub(super) fn texts() -> Vec<String> {
        let mut rng = Rng::new(99);
        let document = |i: usize, rng: &mut Rng| {
            let chinese = i < 40;
            let title = if chinese {
                format!("标题{i}号：新闻。")
            } else {
                format!("Headline {i}. ")
            };
            let body: String = (0..1 + i % 4)
                .map(|_| random_sentence(rng, chinese))
                .collect();
            title + body.trim_end()
        };
        (0..80).map(|i| document(i, &mut rng)).collect()
    }

    pub(super) fn generate(options: SynthOptions) -> Benchmark {
        let texts = texts();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        Synthesizer::new(options).unwrap().generate(&texts)
    }

    #[test]
    fn generation_is_deterministic_by_seed() {
        let options = SynthOptions {
            duplicate_rate: 0.5,
            hard_negatives: 0.2,
            ..Default::default()
        };
        let first = generate(options.clone());
        assert_eq!(first, generate(options.clone()));
        let other = generate(SynthOptions { seed: 2, ..options });
        assert_ne!(first.documents, other.documents);
    }

    #[test]
    fn truth_has_originals_variants_and_hard_negatives() {
        let options = SynthOptions {
            duplicate_rate: 1.0,
            hard_negatives: 1.0,
            ..Default::default()
        };
        let benchmark = generate(options);
        let summary = &benchmark.summary;
        assert_eq!(summary.sources, 80);
        assert_eq!(summary.hard_negatives, 80);
        assert!(summary.variants >= 80, "{summary:?}");
        assert_eq!(benchmark.documents.len(), 80 + summary.variants + 80);
        for document in &benchmark.documents {
            let source = format!("s{}", document.source.unwrap() + 1);
            match &document.category {
                Category::Original => {
                    assert_eq!((&document.id, &document.cluster), (&source, &source))
                }
                Category::Variant(edits) => {
                    assert!((1..=2).contains(&edits.len()));
                    assert!(document.id.starts_with(&format!("{source}-v")));
                    assert_eq!(document.cluster, source);
                }
                Category::HardNegative => assert_eq!(document.cluster, document.id),
                Category::Rewrap | Category::Template => unreachable!("not enabled"),
            }
        }
        let positions: Vec<Option<usize>> = benchmark.documents.iter().map(|d| d.source).collect();
        assert!(
            !positions.windows(2).all(|w| w[0] <= w[1]),
            "documents are shuffled"
        );
    }

    #[test]
    fn identical_sources_share_a_cluster() {
        let texts = ["同一篇文章。", "另一篇。", "同一篇文章。"];
        let options = SynthOptions {
            duplicate_rate: 0.0,
            hard_negatives: 0.0,
            ..Default::default()
        };
        let benchmark = Synthesizer::new(options).unwrap().generate(&texts);
        let third = benchmark.documents.iter().find(|d| d.id == "s3").unwrap();
        assert_eq!(third.cluster, "s1");
        assert_eq!(benchmark.summary.repeated_sources, 1);
    }

    #[test]
    fn a_variant_records_the_edit_actually_applied() {
        let options = SynthOptions {
            duplicate_rate: 1.0,
            edits: vec![Edit::Script, Edit::Width],
            ..Default::default()
        };
        let benchmark = Synthesizer::new(options)
            .unwrap()
            .generate(&["plain english text"]);
        for document in &benchmark.documents {
            if let Category::Variant(edits) = &document.category {
                assert_eq!(edits, &[Edit::Width], "script cannot apply to English");
            }
        }
        let options = SynthOptions {
            duplicate_rate: 1.0,
            edits: vec![Edit::Script],
            ..Default::default()
        };
        let benchmark = Synthesizer::new(options)
            .unwrap()
            .generate(&["plain english text"]);
        assert_eq!(benchmark.documents.len(), 1);
        assert!(benchmark.summary.skipped_variants >= 1);
    }

    #[test]
    fn bad_options_are_refused_with_their_name() {
        let refused = |options: SynthOptions| Synthesizer::new(options).unwrap_err().to_string();
        let base = SynthOptions::default();
        assert!(refused(SynthOptions {
            strength: 0.0,
            ..base.clone()
        })
        .contains("strength"));
        assert!(refused(SynthOptions {
            duplicate_rate: 1.5,
            ..base.clone()
        })
        .contains("duplicate-rate"));
        assert!(refused(SynthOptions {
            hard_negatives: -0.1,
            ..base.clone()
        })
        .contains("hard-negatives"));
        assert!(refused(SynthOptions {
            max_variants: 0,
            ..base.clone()
        })
        .contains("max-variants"));
        assert!(refused(SynthOptions {
            edits: vec![],
            ..base
        })
        .contains("edits"));
        assert!("bogus"
            .parse::<Edit>()
            .unwrap_err()
            .to_string()
            .contains("\"bogus\""));
        assert_eq!("word-sub".parse::<Edit>(), Ok(Edit::WordSub));
    }

    /// Options with every kind of document: variants, hard negatives, wrappers, re-wraps and
    /// template notices.
    fn wrapped_options() -> SynthOptions {
        SynthOptions {
            duplicate_rate: 0.5,
            hard_negatives: 0.3,
            wrappers: 5,
            rewrap: 0.5,
            templates: 30,
            ..Default::default()
        }
    }

    #[test]
    fn defaults_are_unchanged_by_the_wrapper_and_template_options() {
        let options = SynthOptions {
            duplicate_rate: 0.5,
            hard_negatives: 0.3,
            ..Default::default()
        };
        assert_eq!(
            (options.wrappers, options.rewrap, options.templates),
            (0, 0.0, 0)
        );
        let plain = generate(options.clone());
        assert!(plain.documents.iter().all(|d| d.id.starts_with('s')));
        assert_eq!((plain.summary.wrapped, plain.summary.rewraps), (0, 0));
        // Wrapping and templates draw from streams of their own: the bodies of the
        // originals, variants and hard negatives, their ids and clusters do not change.
        let wrapped = generate(wrapped_options());
        let (texts, accounts) = (texts(), test_accounts());
        let mut bodies: HashMap<&str, (&str, &str)> = HashMap::new();
        for document in &wrapped.documents {
            let Some(source) = document.source else {
                continue;
            };
            let (_, body) = unwrap(&document.text, &texts[source], &accounts).unwrap();
            if document.category != Category::Rewrap {
                bodies.insert(&document.id, (body, &document.cluster));
            }
        }
        for document in &plain.documents {
            let found = bodies.get(document.id.as_str());
            assert_eq!(
                found,
                Some(&(document.text.as_str(), document.cluster.as_str()))
            );
        }
        assert_eq!(bodies.len(), plain.documents.len());
    }

    #[test]
    fn wrapped_generation_is_deterministic_by_seed() {
        let first = generate(wrapped_options());
        assert_eq!(first, generate(wrapped_options()));
        let other = generate(SynthOptions {
            seed: 2,
            ..wrapped_options()
        });
        assert_ne!(first.documents, other.documents);
        let summary = &first.summary;
        assert_eq!(
            summary.wrapped,
            80 + summary.variants + summary.hard_negatives
        );
        assert!(
            summary.rewraps >= 20 && summary.rewraps <= 60,
            "{summary:?}"
        );
        assert_eq!(summary.templates, 30);
        let documents = 80 + summary.variants + summary.hard_negatives + summary.rewraps + 30;
        assert_eq!(first.documents.len(), documents);
    }

    /// The accounts of [`wrapped_options`].
    fn test_accounts() -> Vec<Account> {
        wrap::accounts(5, &mut Rng::stream(1, ACCOUNT_STREAM))
    }

    /// The account whose wrapper (for the script of `source`) surrounds `text`, and the body.
    fn unwrap<'t>(text: &'t str, source: &str, accounts: &[Account]) -> Option<(usize, &'t str)> {
        let cjk = source.chars().any(is_cjk);
        accounts.iter().enumerate().find_map(|(index, account)| {
            let wrapper = account.wrapper(cjk);
            let inner = text.strip_prefix(&wrapper.header)?.strip_prefix('\n')?;
            let inner = inner.strip_suffix(&wrapper.footer)?.strip_suffix('\n')?;
            Some((index, inner))
        })
    }

    #[test]
    fn an_account_wraps_its_posts_in_one_wrapper_longer_than_short_bodies() {
        let texts = texts();
        let benchmark = generate(wrapped_options());
        let accounts = test_accounts();
        let mut users: HashMap<&str, usize> = HashMap::new();
        for document in &benchmark.documents {
            let Some(source) = document.source else {
                continue;
            };
            let body = &texts[source];
            let (index, inner) = unwrap(&document.text, body, &accounts).expect("wrapped");
            let wrapper = accounts[index].wrapper(body.chars().any(is_cjk));
            assert!(wrapper.chars() > SHORT_BODY && wrapper.chars() > body.chars().count());
            if matches!(document.category, Category::Original | Category::Rewrap) {
                assert_eq!(inner, body);
            }
            if document.category != Category::Rewrap {
                let first = *users.entry(&document.cluster).or_insert(index);
                assert_eq!(first, index, "a source and its copies share one account");
            }
        }
        let mut per_account = vec![0; accounts.len()];
        for index in users.values() {
            per_account[*index] += 1;
        }
        assert!(per_account.iter().all(|&n| n >= 2), "{per_account:?}");
    }

    #[test]
    fn a_rewrap_has_another_wrapper_the_same_body_and_the_same_cluster() {
        let benchmark = generate(wrapped_options());
        let (texts, accounts) = (texts(), test_accounts());
        let by_id: HashMap<&str, &SynthDocument> = benchmark
            .documents
            .iter()
            .map(|d| (d.id.as_str(), d))
            .collect();
        let mut rewraps = 0;
        for document in &benchmark.documents {
            if document.category != Category::Rewrap {
                continue;
            }
            rewraps += 1;
            assert!(document.id.ends_with("-rw1"));
            let original = by_id[document.id.trim_end_matches("-rw1")];
            assert_eq!(document.cluster, original.cluster);
            assert_eq!(document.source, original.source);
            let source = &texts[document.source.unwrap()];
            let (account, body) = unwrap(&document.text, source, &accounts).unwrap();
            let (own, own_body) = unwrap(&original.text, source, &accounts).unwrap();
            assert_ne!(account, own);
            assert_eq!((body, own_body), (source.as_str(), source.as_str()));
            let cjk = source.chars().any(is_cjk);
            let (wrapper, own) = (accounts[account].wrapper(cjk), accounts[own].wrapper(cjk));
            assert_ne!(
                (&wrapper.header, &wrapper.footer),
                (&own.header, &own.footer)
            );
            assert_ne!(document.text, original.text);
        }
        assert_eq!(rewraps, benchmark.summary.rewraps);
        assert!(rewraps > 0);
    }

    #[test]
    fn template_notices_are_distinct_clusters_of_their_own() {
        let benchmark = generate(SynthOptions {
            templates: 500,
            ..Default::default()
        });
        let notices: Vec<&SynthDocument> = benchmark
            .documents
            .iter()
            .filter(|d| d.category == Category::Template)
            .collect();
        assert_eq!(notices.len(), 500);
        assert_eq!(benchmark.summary.templates, 500);
        let distinct: HashSet<&str> = notices.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(distinct.len(), 500);
        let mut ids: Vec<&str> = notices.iter().map(|d| d.id.as_str()).collect();
        ids.sort_by_key(|id| id[1..].parse::<usize>().unwrap());
        assert_eq!(ids.first(), Some(&"t1"));
        assert_eq!(ids.last(), Some(&"t500"));
        for notice in &notices {
            assert_eq!(notice.cluster, notice.id);
            assert_eq!(notice.source, None);
        }
        // The test texts are half Chinese, half English: no majority, English notices.
        assert!(notices.iter().all(|d| !d.text.chars().any(is_cjk)));
        let chinese = Synthesizer::new(SynthOptions {
            templates: 10,
            ..Default::default()
        })
        .unwrap()
        .generate(&[ZH, ZH, EN]);
        let notices = chinese
            .documents
            .iter()
            .filter(|d| d.category == Category::Template);
        assert_eq!(notices.clone().count(), 10);
        assert!(notices.clone().all(|d| d.text.chars().any(is_cjk)));
    }

    #[test]
    fn rewrap_without_wrappers_or_out_of_range_is_refused() {
        let refused = |options: SynthOptions| Synthesizer::new(options).unwrap_err().to_string();
        let base = SynthOptions {
            wrappers: 3,
            ..Default::default()
        };
        assert!(refused(SynthOptions {
            rewrap: 1.5,
            ..base.clone()
        })
        .contains("rewrap"));
        assert!(refused(SynthOptions {
            rewrap: -0.5,
            ..base.clone()
        })
        .contains("rewrap"));
        assert!(refused(SynthOptions {
            rewrap: 0.2,
            wrappers: 0,
            ..base.clone()
        })
        .contains("rewrap"));
        assert!(refused(SynthOptions {
            rewrap: 0.2,
            wrappers: 1,
            ..base.clone()
        })
        .contains("rewrap"));
        assert!(Synthesizer::new(SynthOptions {
            rewrap: 0.2,
            ..base
        })
        .is_ok());
    }

    #[test]
    fn categories_join_edit_names() {
        assert_eq!(
            Category::Variant(vec![Edit::Punct, Edit::Width]).name(),
            "punct+width"
        );
        assert_eq!(Category::HardNegative.name(), "hard_negative");
        assert_eq!(Category::Original.name(), "original");
        assert_eq!(Category::Rewrap.name(), "rewrap");
        assert_eq!(Category::Template.name(), "template");
    }
}
