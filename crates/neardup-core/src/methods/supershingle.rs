//! `supershingle`: shingling with super-shingles (Broder, Glassman, Manasse and Zweig 1997;
//! Broder 2000, "Identifying and filtering near-duplicate documents").
//!
//! A document's w-shingles (the `minhash` shingles) get `min_hashes` min-hashes; these are
//! grouped, in order, into `super_shingles` runs, and each run is hashed into one
//! super-shingle. Two documents sharing at least `min_super` super-shingles are candidates.
//! Broder's values are the defaults: 84 min-hashes in 6 super-shingles of 14, one shared
//! super-shingle making a candidate. A pair of resemblance `J` shares a given super-shingle
//! with probability `J^14`, so candidates are pairs of high resemblance: 0.79 at `J = 0.9`,
//! 0.22 at 0.8, 0.03 at 0.7. (This is LSH banding with fixed bands: `minhash` derives its
//! bands from the threshold instead.)
//!
//! Candidates are verified with the true set measure (`verify = jaccard`, the default, at
//! `threshold`); `verify = none` keeps Broder's estimate, the fraction of equal min-hashes,
//! as the similarity and makes every candidate a duplicate. `--cluster connected` gives
//! Broder's union-find clustering. Shingles, boilerplate handling and
//! normalisation are `minhash`'s, with the same parameters.

use std::sync::Arc;

use crate::corpus::CorpusStats;
use crate::methods::minhash::{MinHash, MinHashSketch};
use crate::methods::shared::classic::VERIFY_PARAM;
use crate::methods::shared::verify::Verification;
use crate::params::{ParamKind, ParamSpec, Params, Registered, Setting};
use crate::{CommonMarking, Error, Join, Method, Result, SketchNotes, Verdict};

/// The default `min_hashes` (Broder 2000).
pub const DEFAULT_PERMUTATIONS: usize = 84;
/// The default `super_shingles` (Broder 2000).
pub const DEFAULT_SUPER_SHINGLES: usize = 6;

/// Shingling with super-shingles.
#[derive(Debug, Clone)]
pub struct SuperShingle {
    inner: MinHash,
    super_shingles: usize,
    min_super: usize,
    verify: bool,
}

impl SuperShingle {
    /// The MinHash underneath (its bands are the super-shingles).
    pub fn minhash(&self) -> &MinHash {
        &self.inner
    }
}

impl Method for SuperShingle {
    type Sketch = MinHashSketch;

    fn name(&self) -> &'static str {
        "supershingle"
    }
    fn sketch(&self, text: &str) -> MinHashSketch {
        self.inner.sketch(text)
    }
    fn sketch_noted<'t>(&self, text: &'t str, notes: &mut SketchNotes<'t>) -> MinHashSketch {
        self.inner.sketch_noted(text, notes)
    }
    fn join(&self) -> Join<Self> {
        match self.min_super {
            1 => Join::SymmetricKeys,
            min => Join::SharedKeys {
                min: min as u32,
                anchors: None,
                priority: None,
            },
        }
    }
    /// The super-shingles.
    fn keys(&self, sketch: &MinHashSketch, keys: &mut Vec<u64>) {
        self.inner.keys(sketch, keys);
    }
    fn learns_from_corpus(&self) -> bool {
        self.inner.learns_from_corpus()
    }
    fn corpus_features(&self, text: &str, features: &mut Vec<u64>) {
        self.inner.corpus_features(text, features);
    }
    fn learned_limits(&self) -> Vec<(&'static str, u64)> {
        self.inner.learned_limits()
    }
    /// MinHash's, but of every document: a super-shingle of 14 min-hashes is shared by a
    /// template's fillings only when their shingles nearly all agree, so fillings meet
    /// outside any crowd.
    fn common_marks(&self) -> Option<crate::CommonMarks<SuperShingle>> {
        Some(crate::CommonMarks {
            limit: |method, documents| method.inner.common_limit(documents),
            features: |method, sketch| method.inner.frequency_features(sketch),
            mark: |method, sketch, is_common| method.inner.mark_common(sketch, is_common),
            changes_keys: |method, sketch| method.inner.marks_changed_keys(sketch),
            crowds_only: false,
        })
    }
    fn set_frequency_floors(&mut self, floors: crate::boilerplate::DfFloors) {
        self.inner.set_frequency_floors(floors);
    }
    fn learn(&mut self, corpus: &Arc<CorpusStats>) {
        self.inner.learn(corpus);
    }
    /// The set measure, or with `verify = none` the fraction of equal min-hashes.
    fn similarity(&self, a: &MinHashSketch, b: &MinHashSketch) -> f64 {
        if self.verify {
            self.inner.similarity(a, b)
        } else if a.identity() == b.identity() {
            1.0
        } else {
            crate::minhash::estimate_jaccard(a.signature(), b.signature())
        }
    }
    fn verify(&self, a: &MinHashSketch, b: &MinHashSketch) -> Option<f64> {
        if self.verify {
            self.inner.verify(a, b)
        } else {
            Some(self.similarity(a, b))
        }
    }
    fn verdict(&self, a: &MinHashSketch, b: &MinHashSketch) -> Verdict {
        match self.verify {
            true => self.inner.verdict(a, b),
            false => Verdict::of(self.verify(a, b)),
        }
    }
    fn threshold(&self) -> f64 {
        if self.verify {
            self.inner.threshold()
        } else {
            0.0
        }
    }
}

use crate::Sketch as _;

/// MinHash's parameters that super-shingles fix or replace, or do not take: `templates`
/// (its `duplicate` needs minhash's own keys and verification, which super-shingles do not
/// use, so the option would be accepted and do nothing).
const REPLACED: &[&str] = &[
    "bands",
    "rows",
    "lsh_threshold",
    "permutations",
    "templates",
];

impl Registered for SuperShingle {
    const NAME: &'static str = "supershingle";
    const ABOUT: &'static str =
        "Broder's super-shingles: min-hashes grouped into super-shingles, union-find ready";

    fn params() -> Vec<ParamSpec> {
        let mut params: Vec<ParamSpec> = vec![VERIFY_PARAM];
        params.extend([
            ParamSpec {
                name: "super_shingles",
                kind: ParamKind::Count,
                default: Some("6"),
                help: "Super-shingles per document; the min-hashes are split evenly among them.",
                group: None,
            },
            ParamSpec {
                name: "min_super",
                kind: ParamKind::Count,
                default: Some("1"),
                help: "Super-shingles two documents share to be candidates.",
                group: None,
            },
        ]);
        params.push(ParamSpec {
            name: "min_hashes",
            kind: ParamKind::Count,
            default: Some("84"),
            help: "Min-hashes per document, split evenly among the super-shingles (Broder: 84).",
            group: None,
        });
        params.extend(
            (<MinHash as Registered>::params().into_iter())
                .filter(|param| !REPLACED.contains(&param.name)),
        );
        params
    }

    fn from_params(params: &Params) -> Result<SuperShingle> {
        let verify = match params.get("verify")?.unwrap_or(Verification::Jaccard) {
            Verification::Jaccard => true,
            Verification::None => false,
            Verification::Edit => {
                return Err(Error::invalid(
                    "verify",
                    "\"edit\" (supershingle verifies with jaccard or none)",
                ))
            }
        };
        let super_shingles: usize = params
            .get("super_shingles")?
            .unwrap_or(DEFAULT_SUPER_SHINGLES);
        let permutations: usize = params.get("min_hashes")?.unwrap_or(DEFAULT_PERMUTATIONS);
        if super_shingles == 0 || super_shingles > permutations {
            return Err(Error::invalid(
                "super_shingles",
                format!("{super_shingles} (expected 1 to min_hashes = {permutations})"),
            ));
        }
        if !permutations.is_multiple_of(super_shingles) {
            return Err(Error::invalid(
                "super_shingles",
                format!("{super_shingles} does not divide min_hashes = {permutations}"),
            ));
        }
        let min_super: usize = params.get("min_super")?.unwrap_or(1);
        if !(1..=super_shingles).contains(&min_super) {
            return Err(Error::invalid(
                "min_super",
                format!("{min_super} (expected 1 to super_shingles = {super_shingles})"),
            ));
        }
        let mut inner = Params::new();
        for (name, value) in params.iter() {
            if !matches!(
                name,
                "verify" | "super_shingles" | "min_super" | "min_hashes"
            ) {
                inner.insert(name, value);
            }
        }
        inner.insert("permutations", permutations.to_string());
        inner.insert("bands", super_shingles.to_string());
        inner.insert("rows", (permutations / super_shingles).to_string());
        Ok(SuperShingle {
            inner: MinHash::from_params(&inner)?,
            super_shingles,
            min_super,
            verify,
        })
    }

    fn settings(&self) -> Vec<(&'static str, Setting)> {
        let mut settings = vec![
            (
                "verify",
                Setting::Text(if self.verify { "jaccard" } else { "none" }.to_owned()),
            ),
            ("super_shingles", Setting::Count(self.super_shingles as u64)),
            ("min_super", Setting::Count(self.min_super as u64)),
            (
                "min_hashes",
                Setting::Count((self.inner.lsh().bands * self.inner.lsh().rows) as u64),
            ),
        ];
        // MinHash's bands are the super-shingles, its rows and permutations the min-hashes.
        settings.extend(
            (self.inner.settings().into_iter())
                .filter(|(name, _)| !matches!(*name, "bands" | "rows" | "permutations")),
        );
        settings
    }
}
