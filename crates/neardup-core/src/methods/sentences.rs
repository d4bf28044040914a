//! `sentences`: sentence-based signatures.
//!
//! - `sentence_signature = marks` ("基于句子", sentence-based): every run of punctuation
//!   marks is a feature made of the `context` tokens (CJK characters or words) on each side
//!   of it, the marks themselves left out (so full-width and half-width punctuation, or a
//!   comma turned into a full stop, give the same feature). Documents sharing at least
//!   `min_shared` features are candidates (then verified, see
//!   [`crate::methods::shared::classic`]).
//! - `sentence_signature = longest`: the signature a large Chinese search engine is
//!   reported to use, a hash of the document's `sentences` longest sentences (3 by default;
//!   all of them in a shorter document). Equal signatures are candidates.
//!
//! Strengths and weaknesses (pinned by the tests): a repost with a changed header and footer
//! (source line, editor's name, "转发" notes) keeps its body's punctuation contexts and its
//! longest sentences, so both catch it; `marks` also survives edits inside sentences that do
//! not touch the characters next to a mark; `longest` breaks when one of the longest
//! sentences is edited, and text without punctuation has one sentence and one context at
//! most (compared as exact copies when it has fewer than `min_shared` features).

use crate::boilerplate::lines;
use crate::hash::{hash128_u64s, hash64, mix64};
use crate::methods::shared::classic::{self, is_mark, ClassicSketch, Verifier};
use crate::methods::shared::params::{normalize_options, normalize_settings, NORMALIZE_PARAMS};
use crate::normalize::{NormalizeOptions, Normalizer};
use crate::params::{param_value_by_choice, ParamKind, ParamSpec, Params, Registered, Setting};
use crate::sketch_kind::SketchKind;
use crate::tokenize::is_cjk;
use crate::{Error, Join, Method, Result, SketchNotes};

/// The sketch of [`Sentences`].
pub type SentencesSketch = ClassicSketch<{ SketchKind::Sentences.byte() }>;

/// Which sentence signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SentenceSignature {
    /// The tokens around every punctuation mark.
    #[default]
    Marks,
    /// A hash of the longest sentences.
    Longest,
}

crate::named_choices!(SentenceSignature as "sentence_signature", trimmed {
    Marks => "marks",
    Longest => "longest",
});

param_value_by_choice!(SentenceSignature);

/// Sentence signatures.
#[derive(Debug, Clone)]
pub struct Sentences {
    normalizer: Normalizer,
    /// The same normalisation, punctuation kept (to find the marks).
    marks_normalizer: Normalizer,
    verifier: Verifier,
    signature: SentenceSignature,
    context: usize,
    min_shared: usize,
    sentences: usize,
}

impl Sentences {
    /// The punctuation-context features of raw `text`, sorted, without repeats.
    pub fn mark_features(&self, text: &str) -> Vec<u64> {
        self.mark_features_plain(&self.normalizer.strip_html_if_enabled(text))
    }

    /// [`Sentences::mark_features`] of text without markup.
    fn mark_features_plain(&self, plain: &str) -> Vec<u64> {
        let folded = self.marks_normalizer.normalize_plain(plain);
        let mut tokens: Vec<u64> = Vec::new();
        // Positions in `tokens` where a run of marks stands (before `tokens[i]`).
        let mut marks: Vec<usize> = Vec::new();
        let mut word = String::new();
        let flush = |word: &mut String, tokens: &mut Vec<u64>| {
            if !word.is_empty() {
                tokens.push(hash64(word.as_bytes()));
                word.clear();
            }
        };
        for c in folded.chars() {
            if is_cjk(c) {
                flush(&mut word, &mut tokens);
                tokens.push(mix64(c as u64 | 1 << 40));
            } else if c.is_whitespace() {
                flush(&mut word, &mut tokens);
            } else if is_mark(c) {
                flush(&mut word, &mut tokens);
                if marks.last() != Some(&tokens.len()) {
                    marks.push(tokens.len());
                }
            } else {
                word.push(c);
            }
        }
        flush(&mut word, &mut tokens);
        let k = self.context;
        let mut features: Vec<u64> = (marks.iter())
            .filter_map(|&at| {
                let left = &tokens[at.saturating_sub(k)..at];
                let right = &tokens[at..(at + k).min(tokens.len())];
                if left.is_empty() && right.is_empty() {
                    return None;
                }
                let mut parts = Vec::with_capacity(2 * k + 1);
                parts.push(left.len() as u64);
                parts.extend_from_slice(left);
                parts.extend_from_slice(right);
                let hash = hash128_u64s(&parts);
                Some((hash as u64) ^ ((hash >> 64) as u64))
            })
            .collect();
        features.sort_unstable();
        features.dedup();
        features
    }

    /// The `sentences` longest sentences of raw `text`, normalised, longest first (ties in
    /// text order of the normalised sentence).
    pub fn longest_sentences(&self, text: &str) -> Vec<String> {
        self.longest_sentences_plain(&self.normalizer.strip_html_if_enabled(text))
    }

    /// [`Sentences::longest_sentences`] of text without markup.
    fn longest_sentences_plain(&self, plain: &str) -> Vec<String> {
        let mut found: Vec<(usize, String)> = lines(plain)
            .map(|line| self.normalizer.normalize_plain(line))
            .filter(|line| !line.is_empty())
            .map(|line| (line.chars().filter(|&c| c != ' ').count(), line))
            .collect();
        found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        found.dedup_by(|a, b| a.1 == b.1);
        found.truncate(self.sentences);
        found.into_iter().map(|(_, line)| line).collect()
    }
}

impl Method for Sentences {
    type Sketch = SentencesSketch;

    fn name(&self) -> &'static str {
        "sentences"
    }

    classic::verified_by!(verifier);

    /// Boilerplate lines and edge pieces leave the text before its sentences are read.
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> SentencesSketch {
        let body = (self.verifier).body(&self.normalizer, text, &mut notes.removed_lines);
        let (keys, few) = match self.signature {
            SentenceSignature::Marks => {
                let features = self.mark_features_plain(&body.plain);
                let few = features.len() < self.min_shared;
                (features, few)
            }
            SentenceSignature::Longest => {
                let mut hashes: Vec<u64> = (self.longest_sentences_plain(&body.plain).iter())
                    .map(|sentence| hash64(sentence.replace(' ', "").as_bytes()))
                    .collect();
                hashes.sort_unstable();
                let keys = match hashes.is_empty() {
                    true => Vec::new(),
                    false => vec![classic::signature(1, &hashes)],
                };
                (keys, false)
            }
        };
        (self.verifier).sketch(&self.normalizer, (text, &body), keys, few)
    }

    fn join(&self) -> Join<Self> {
        match self.signature {
            SentenceSignature::Marks if self.min_shared > 1 => Join::SharedKeys {
                min: self.min_shared as u32,
                anchors: self.verifier.anchors(),
                priority: None,
            },
            _ => self.verifier.keys_join(),
        }
    }

    fn keys(&self, sketch: &SentencesSketch, keys: &mut Vec<u64>) {
        keys.extend_from_slice(sketch.keys());
    }

    classic::learns_boilerplate_by!(verifier, normalizer);
}

impl Registered for Sentences {
    const NAME: &'static str = "sentences";
    const ABOUT: &'static str =
        "sentence features: tokens around punctuation, or the longest sentences";

    fn params() -> Vec<ParamSpec> {
        let mut params = classic::verify_params();
        params.extend([
            ParamSpec {
                name: "sentence_signature",
                kind: ParamKind::Choice(&["marks", "longest"]),
                default: Some("marks"),
                help: "`marks`: the tokens on each side of every punctuation mark are the \
                       features; `longest`: one hash of the longest sentences.",
                group: None,
            },
            ParamSpec {
                name: "context",
                kind: ParamKind::Count,
                default: Some("2"),
                help: "With marks: tokens (CJK characters or words) taken on each side of a mark.",
                group: None,
            },
            ParamSpec {
                name: "min_shared",
                kind: ParamKind::Count,
                default: Some("3"),
                help: "With marks: features two documents share to be candidates; documents \
                       with fewer are compared as exact copies only.",
                group: None,
            },
            ParamSpec {
                name: "sentences",
                kind: ParamKind::Count,
                default: Some("3"),
                help: "With longest: the longest sentences hashed into the signature.",
                group: None,
            },
        ]);
        params.extend(NORMALIZE_PARAMS.iter().copied());
        params
    }

    fn from_params(params: &Params) -> Result<Sentences> {
        let options: NormalizeOptions = normalize_options(params)?;
        let context: usize = params.get("context")?.unwrap_or(2);
        if !(1..=16).contains(&context) {
            return Err(Error::invalid(
                "context",
                format!("{context} (expected 1 to 16)"),
            ));
        }
        let min_shared: usize = params.get("min_shared")?.unwrap_or(3);
        if min_shared == 0 {
            return Err(Error::invalid("min_shared", "0 (expected at least 1)"));
        }
        let sentences: usize = params.get("sentences")?.unwrap_or(3);
        if sentences == 0 {
            return Err(Error::invalid("sentences", "0 (expected at least 1)"));
        }
        let normalizer = Normalizer::new(options.clone());
        Ok(Sentences {
            marks_normalizer: Normalizer::new(NormalizeOptions {
                strip_punctuation: false,
                ..options
            }),
            verifier: Verifier::from_params(params, &normalizer)?,
            normalizer,
            signature: params.get("sentence_signature")?.unwrap_or_default(),
            context,
            min_shared,
            sentences,
        })
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = self.verifier.settings();
        settings.push((
            "sentence_signature",
            Setting::Text(self.signature.name().to_owned()),
        ));
        match self.signature {
            SentenceSignature::Marks => settings.extend([
                ("context", Setting::Count(self.context as u64)),
                ("min_shared", Setting::Count(self.min_shared as u64)),
            ]),
            SentenceSignature::Longest => {
                settings.push(("sentences", Setting::Count(self.sentences as u64)));
            }
        }
        settings.extend(normalize_settings(self.normalizer.options()));
        settings
    }
}
