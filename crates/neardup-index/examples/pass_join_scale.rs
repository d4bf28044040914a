//! Times `pass_join` on a file of texts, one per line (characters as items):
//! `cargo run --release -p neardup-index --example pass_join_scale -- FILE (abs TAU | norm T)`.

use std::time::Instant;

use neardup_index::{pass_join, EditBound};

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
