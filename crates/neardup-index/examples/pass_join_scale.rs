//! Times `pass_join` and `set_join` on a file of texts, one per line (characters as items,
//! character bigrams as set tokens):
//! `cargo run --release -p neardup-index --example pass_join_scale -- FILE (abs TAU | norm T | jaccard T)`.

use std::time::Instant;

use neardup_index::{
    edit_distance_within, ngram_dedup, pass_join, set_join, EditBound, SetMeasure,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(kind), Some(value)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: pass_join_scale FILE (abs TAU | norm T)");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let sequences: Vec<Vec<u32>> = text
        .lines()
        .map(|line| line.chars().map(u32::from).collect())
        .collect();
    if kind == "ngram" {
        // The seed's all-4-gram index, buckets capped at 1,000, verified at edit similarity T.
        let t: f64 = value.parse().unwrap_or(0.9);
        let bound = EditBound::Normalized(t);
        let start = Instant::now();
        let result = ngram_dedup(&sequences, 4, 1000, |a, b| {
            let (x, y) = (&sequences[a as usize], &sequences[b as usize]);
            let longer = x.len().max(y.len());
            let d = edit_distance_within(x, y, bound.max_edits(longer))?;
            Some(1.0 - f64::from(d) / longer.max(1) as f64)
        });
        println!(
            "{} texts, all-4-gram index at edit similarity {t}: {} pairs, {} capped buckets ({} texts left out), {} comparisons in {:.2} s",
            sequences.len(),
            result.pairs.len(),
            result.capped_buckets,
            result.capped_texts,
            result.comparisons,
            start.elapsed().as_secs_f64()
        );
        return;
    }
    if kind == "jaccard" {
        let t: f64 = value.parse().unwrap_or(0.8);
        let sets: Vec<Vec<u64>> = sequences
            .iter()
            .map(|s| {
                s.windows(2)
                    .map(|w| u64::from(w[0]) << 32 | u64::from(w[1]))
                    .collect()
            })
            .collect();
        let start = Instant::now();
        let pairs = set_join(&sets, SetMeasure::Jaccard, t);
        println!(
            "{} texts, Jaccard {t} on character bigrams: {} pairs in {:.2} s",
            sets.len(),
            pairs.len(),
            start.elapsed().as_secs_f64()
        );
        return;
    }
    let bound = match kind.as_str() {
        "abs" => EditBound::Absolute(value.parse().unwrap_or(1)),
        _ => EditBound::Normalized(value.parse().unwrap_or(0.9)),
    };
    let start = Instant::now();
    let pairs = pass_join(&sequences, bound);
    println!(
        "{} texts, {:?}: {} pairs in {:.2} s",
        sequences.len(),
        bound,
        pairs.len(),
        start.elapsed().as_secs_f64()
    );
}
