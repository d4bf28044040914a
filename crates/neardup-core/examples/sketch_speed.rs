//! Single-thread speed of each sketch step, and the estimation error of classic MinHash vs
//! one-permutation hashing at equal signature length.
//!
//! ```sh
//! cargo run --release -p neardup-core --example sketch_speed -- CORPUS.jsonl [FIELD] [NGRAM] [PERMUTATIONS]
//! ```
//! The corpus is JSONL with the text in FIELD (default `text`). Prints MB/s of input text for
//! normalisation, shingling, and each signature scheme (median of 3 passes).

use std::time::Instant;

use neardup_core::hash::mix64;
use neardup_core::measure::jaccard;
use neardup_core::methods::minhash::MinHashBuilder;
use neardup_core::minhash::{estimate_jaccard, MinHasher, SketchScheme};
use neardup_core::normalize::{ChineseVariant, NormalizeOptions, Normalizer};
use neardup_core::tokenize::{ShinglerBuilder, Tokenizer};
use neardup_core::Method;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn time(passes: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..passes)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: sketch_speed CORPUS.jsonl [FIELD] [NGRAM] [PERMUTATIONS]");
    let field = args.get(2).map_or("text", String::as_str);
    let ngram: usize = args
        .get(3)
        .map_or(5, |v| v.parse().expect("NGRAM is a number"));
    let permutations: usize = args
        .get(4)
        .map_or(128, |v| v.parse().expect("PERMUTATIONS is a number"));
    let texts: Vec<String> = std::fs::read_to_string(path)
        .expect("readable corpus")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v[field].as_str().map(str::to_owned))
        .collect();
    let megabytes = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    println!(
        "{} documents, {megabytes:.1} MB, {ngram}-grams, {permutations} permutations, 1 thread",
        texts.len()
    );

    let normalizer = Normalizer::new(NormalizeOptions {
        chinese_variant: ChineseVariant::Keep,
        ..Default::default()
    });
    let with_t2s = Normalizer::default();
    let shingler = ShinglerBuilder::new()
        .tokenizer(Tokenizer::Auto)
        .ngram(ngram)
        .build()
        .unwrap();
    let mut normalized = Vec::new();
    let seconds = time(3, || {
        normalized = texts.iter().map(|t| normalizer.normalize(t)).collect()
    });
    println!("normalise (no t2s)     {:8.1} MB/s", megabytes / seconds);
    let seconds = time(1, || {
        let _: Vec<String> = texts.iter().map(|t| with_t2s.normalize(t)).collect();
    });
    println!("normalise (with t2s)   {:8.1} MB/s", megabytes / seconds);
    let mut sets = Vec::new();
    let seconds = time(3, || {
        sets = normalized.iter().map(|t| shingler.shingles(t)).collect()
    });
    println!("shingle                {:8.1} MB/s", megabytes / seconds);
    for scheme in [SketchScheme::Classic, SketchScheme::OnePermutation] {
        let hasher = MinHasher::new(permutations, scheme, 1).unwrap();
        let seconds = time(3, || {
            let total: u64 = sets
                .iter()
                .map(|s| hasher.signature(s.hashes())[0] as u64)
                .sum();
            std::hint::black_box(total);
        });
        println!("signature {scheme:<14?}{:8.1} MB/s", megabytes / seconds);
    }
    let seconds = time(3, || {
        let total: usize = texts
            .iter()
            .map(|t| shingler.shingles(&with_t2s.normalize(t)).len())
            .sum();
        std::hint::black_box(total);
    });
    println!("normalise + shingle    {:8.1} MB/s", megabytes / seconds);
    let method = MinHashBuilder::new()
        .ngram(ngram)
        .permutations(permutations)
        .build()
        .unwrap();
    let seconds = time(3, || {
        let total: u64 = texts
            .iter()
            .map(|t| method.sketch(t).signature()[0] as u64)
            .sum();
        std::hint::black_box(total);
    });
    println!(
        "whole sketch (normalise with t2s + shingle + classic signature + identity) {:8.1} MB/s",
        megabytes / seconds
    );
    println!("\nmean absolute error of the Jaccard estimate (60 pairs per cell)");
    println!("set size | classic | oph");
    for size in [20u64, 100, 1000, 10_000] {
        let errors: Vec<f64> = [SketchScheme::Classic, SketchScheme::OnePermutation]
            .iter()
            .map(|&scheme| estimation_error(MinHasher::new(permutations, scheme, 1).unwrap(), size))
            .collect();
        println!("{size:8} | {:.4}  | {:.4}", errors[0], errors[1]);
    }
}

fn estimation_error(hasher: MinHasher, size: u64) -> f64 {
    let trials = 60u64;
    let mut total = 0.0;
    for t in 0..trials {
        let shift = size * (t % 10) / 10;
        let mut a: Vec<u64> = (0..size).map(|i| mix64(t << 40 | i)).collect();
        let mut b: Vec<u64> = (shift..shift + size).map(|i| mix64(t << 40 | i)).collect();
        a.sort_unstable();
        b.sort_unstable();
        total += (estimate_jaccard(&hasher.signature(&a), &hasher.signature(&b)) - jaccard(&a, &b))
            .abs();
    }
    total / trials as f64
}
