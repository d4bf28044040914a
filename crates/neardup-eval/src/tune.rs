//! Parameter sweeps on labelled data: `neardup tune`.
//!
//! Runs the dedup engine once per combination of a grid (threshold, n-gram size,
//! permutations; the LSH bands follow from each threshold as in a real run), scores each
//! result against the ground truth with [`crate::eval`], and recommends the setting that best
//! meets an [`Objective`]: the highest F1, or the highest recall at a minimum precision (the
//! question news feeds ask: "how much can I remove while staying 97% precise?"). Timings are
//! wall-clock seconds of the engine on this machine, for comparing settings, not a benchmark.

use std::fmt::Write as _;
use std::str::FromStr;
use std::time::Instant;

use neardup_core::methods::minhash::MinHashBuilder;
use neardup_core::tokenize::Tokenizer;
use serde_json::{json, Value};

use neardup_engine::{dedup, EngineOptions, NoProgress};
use neardup_pipeline::Result;
use crate::eval::{Metrics, Scores};
use crate::eval_io::LoadedTruth;

/// What the recommendation optimises.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// The highest F1.
    F1,
    /// The highest recall among settings with at least this precision.
    RecallAtPrecision(f64),
}

impl FromStr for Objective {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Objective, String> {
        if text == "f1" {
            return Ok(Objective::F1);
        }
        let precision = text
            .strip_prefix("recall@")
            .and_then(|p| p.parse::<f64>().ok());
        match precision {
            Some(p) if (0.0..=1.0).contains(&p) => Ok(Objective::RecallAtPrecision(p)),
            _ => Err(format!(
                "{text:?} (expected f1 or recall@P with 0 <= P <= 1, e.g. recall@0.97)"
            )),
        }
    }
}

/// The values to sweep; every combination is run.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneGrid {
    /// Similarity thresholds.
    pub thresholds: Vec<f64>,
    /// Tokens per shingle.
    pub ngrams: Vec<usize>,
    /// Signature lengths.
    pub permutations: Vec<usize>,
}

/// The result of one setting.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneRow {
    /// Tokens per shingle (`auto`: characters on CJK text).
    pub ngram: usize,
    /// `auto` only: characters per shingle on non-CJK text.
    pub latin_ngram: Option<usize>,
    /// Signature length.
    pub permutations: usize,
    /// Similarity threshold.
    pub threshold: f64,
    /// LSH bands and rows used.
    pub bands_rows: (usize, usize),
    /// Pairwise precision, recall and F1.
    pub scores: Scores,
    /// Adjusted Rand index (cluster truth only).
    pub adjusted_rand_index: Option<f64>,
    /// Documents kept.
    pub kept: u64,
    /// Engine seconds.
    pub seconds: f64,
}

/// Runs every setting of `grid` on `texts` (whose ids are `ids`) and scores it.
///
/// # Errors
/// When a combination of parameters is invalid (named in the error), or when `ids` hold
/// fewer than half of the truth's ids ([`LoadedTruth::check_ids`]).
pub fn sweep(
    texts: &[&str],
    ids: &[Value],
    truth: &LoadedTruth,
    base: &MinHashBuilder,
    grid: &TuneGrid,
    engine: EngineOptions,
) -> Result<Vec<TuneRow>> {
    truth.check_ids("the inputs", ids)?;
    let mut rows = Vec::new();
    for &ngram in &grid.ngrams {
        for &permutations in &grid.permutations {
            for &threshold in &grid.thresholds {
                let builder = base
                    .clone()
                    .ngram(ngram)
                    .permutations(permutations)
                    .threshold(threshold);
                let method = builder.build()?;
                let shingler = method.shingler();
                let latin_ngram =
                    (shingler.tokenizer() == Tokenizer::Auto).then(|| shingler.latin_ngram());
                let started = Instant::now();
                let outcome = dedup(&method, texts, engine, &NoProgress);
                let seconds = started.elapsed().as_secs_f64();
                let clusters: Vec<u32> = (0..texts.len() as u32)
                    .map(|d| outcome.assignment.cluster_of(d))
                    .collect();
                let (scores, adjusted_rand_index) = match truth.score(ids, &clusters) {
                    Metrics::Clusters(m) => (m.pairs.scores(), Some(m.adjusted_rand_index)),
                    Metrics::Pairs(m) => (m.confusion.scores(), None),
                };
                let kept = outcome
                    .assignment
                    .duplicate_of
                    .iter()
                    .filter(|d| d.is_none())
                    .count();
                let lsh = method.lsh();
                rows.push(TuneRow {
                    ngram,
                    latin_ngram,
                    permutations,
                    threshold,
                    bands_rows: (lsh.bands, lsh.rows),
                    scores,
                    adjusted_rand_index,
                    kept: kept as u64,
                    seconds,
                });
            }
        }
    }
    Ok(rows)
}

/// The index of the recommended row, or `None` when no row meets the objective.
pub fn recommend(rows: &[TuneRow], objective: Objective) -> Option<usize> {
    let key = |row: &TuneRow| match objective {
        Objective::F1 => (row.scores.f1, row.scores.recall),
        Objective::RecallAtPrecision(_) => (row.scores.recall, row.scores.f1),
    };
    rows.iter()
        .enumerate()
        .filter(|(_, row)| match objective {
            Objective::F1 => true,
            Objective::RecallAtPrecision(p) => row.scores.precision >= p,
        })
        // Ties go to the earlier (usually cheaper) setting.
        .max_by(|(i, a), (j, b)| {
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(j.cmp(i))
        })
        .map(|(index, _)| index)
}

/// The table and the recommendation as text.
pub fn render_text(rows: &[TuneRow], objective: Objective) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ngram  perms  threshold  bands x rows  precision  recall      F1     ARI     kept  seconds");
    let ngram = |row: &TuneRow| match row.latin_ngram {
        Some(latin) => format!("{}/{latin}", row.ngram),
        None => row.ngram.to_string(),
    };
    for row in rows {
        let ari = row
            .adjusted_rand_index
            .map_or("      -".to_owned(), |a| format!("{a:7.4}"));
        let _ = writeln!(
            out,
            "{:>5}  {:5}  {:9.2}  {:>12}  {:9.4}  {:6.4}  {:6.4}  {ari}  {:7}  {:7.2}",
            ngram(row),
            row.permutations,
            row.threshold,
            format!("{} x {}", row.bands_rows.0, row.bands_rows.1),
            row.scores.precision,
            row.scores.recall,
            row.scores.f1,
            row.kept,
            row.seconds,
        );
    }
    let _ = match recommend(rows, objective) {
        Some(best) => {
            let row = &rows[best];
            writeln!(
                out,
                "\nrecommended ({}): --ngram {}{} --permutations {} --threshold {} (precision {:.4}, recall {:.4}, F1 {:.4})",
                describe(objective),
                row.ngram,
                row.latin_ngram
                    .filter(|&latin| latin != row.ngram + 2)
                    .map_or(String::new(), |latin| format!(" --latin-ngram {latin}")),
                row.permutations,
                row.threshold,
                row.scores.precision,
                row.scores.recall,
                row.scores.f1
            )
        }
        None => writeln!(
            out,
            "\nno setting meets the objective ({})",
            describe(objective)
        ),
    };
    out
}

/// The table and the recommendation as JSON.
pub fn render_json(rows: &[TuneRow], objective: Objective) -> Value {
    let rows_json: Vec<Value> = rows
        .iter()
        .map(|row| {
            json!({
                "ngram": row.ngram, "latin_ngram": row.latin_ngram, "permutations": row.permutations, "threshold": row.threshold,
                "bands": row.bands_rows.0, "rows": row.bands_rows.1,
                "precision": row.scores.precision, "recall": row.scores.recall, "f1": row.scores.f1,
                "adjusted_rand_index": row.adjusted_rand_index, "kept": row.kept, "seconds": row.seconds,
            })
        })
        .collect();
    json!({"objective": describe(objective), "rows": rows_json, "recommended": recommend(rows, objective)})
}

fn describe(objective: Objective) -> String {
    match objective {
        Objective::F1 => "highest F1".to_owned(),
        Objective::RecallAtPrecision(p) => format!("highest recall at precision >= {p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(threshold: f64, precision: f64, recall: f64) -> TuneRow {
        let f1 = 2.0 * precision * recall / (precision + recall);
        TuneRow {
            ngram: 5,
            latin_ngram: None,
            permutations: 128,
            threshold,
            bands_rows: (21, 6),
            scores: Scores {
                precision,
                recall,
                f1,
            },
            adjusted_rand_index: None,
            kept: 0,
            seconds: 0.0,
        }
    }

    #[test]
    fn objectives_parse() {
        assert_eq!("f1".parse::<Objective>(), Ok(Objective::F1));
        assert_eq!(
            "recall@0.97".parse::<Objective>(),
            Ok(Objective::RecallAtPrecision(0.97))
        );
        assert!("recall@2".parse::<Objective>().is_err());
        assert!("precision".parse::<Objective>().is_err());
    }

    #[test]
    fn recommendation_follows_the_objective() {
        let rows = [
            row(0.5, 0.90, 0.95),
            row(0.7, 0.98, 0.85),
            row(0.9, 1.0, 0.60),
        ];
        assert_eq!(recommend(&rows, Objective::F1), Some(0));
        assert_eq!(
            recommend(&rows, Objective::RecallAtPrecision(0.97)),
            Some(1)
        );
        assert_eq!(
            recommend(&rows, Objective::RecallAtPrecision(0.999)),
            Some(2)
        );
        assert_eq!(
            recommend(&rows[..1], Objective::RecallAtPrecision(0.97)),
            None
        );
        assert!(render_text(&rows[..1], Objective::RecallAtPrecision(0.97)).contains("no setting"));
    }

    #[test]
    fn ties_go_to_the_first_setting() {
        let rows = [row(0.6, 1.0, 1.0), row(0.7, 1.0, 1.0)];
        assert_eq!(recommend(&rows, Objective::F1), Some(0));
    }
}
