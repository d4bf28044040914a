//! `neardup fingerprint` and `neardup hamming`: SimHash fingerprints to a file, and the pairs
//! of a fingerprint file within a Hamming distance.

use std::io::IsTerminal;

use clap::{Args, ValueEnum};
use neardup_pipeline::fingerprints::{self, Bits};

use crate::args::{InputArgs, RunArgs, SimHashFeatureArgs};
use crate::{progress, threads};

/// Fingerprint width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BitsArg {
    /// 64 bits (16 hex digits).
    #[value(name = "64")]
    B64,
    /// 128 bits (32 hex digits; the low half is the 64-bit fingerprint).
    #[value(name = "128")]
    B128,
}

#[derive(Args)]
pub struct FingerprintArgs {
    /// Input files (JSONL, text, CSV, TSV, Parquet; .gz/.zst read transparently; `-` = stdin).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Output file: one JSON row per document, {"id", "fingerprint": "<hex>"} (`-` = stdout).
    #[arg(short, long)]
    output: String,
    /// Fingerprint width.
    #[arg(long, default_value = "64")]
    bits: BitsArg,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    input: InputArgs,
    /// The feature and weight parameters of `--method simhash`.
    #[command(flatten)]
    features: SimHashFeatureArgs,
}

pub fn fingerprint(args: &FingerprintArgs) -> anyhow::Result<()> {
    args.input.note_unused_id(&args.inputs, args.run.quiet);
    let pool = threads::pool(args.run.threads)?;
    let show = !args.run.quiet && std::io::stderr().is_terminal();
    let progress = progress::Bar::new(show);
    let bits = match args.bits {
        BitsArg::B64 => Bits::B64,
        BitsArg::B128 => Bits::B128,
    };
    let input = args.run.input_options(&args.input);
    let report = pool.install(|| {
        fingerprints::fingerprint(
            &args.inputs,
            &input,
            &args.output,
            bits,
            &args.features.0.given,
            &progress,
        )
    })?;
    progress.finish();
    if !args.run.quiet {
        eprintln!(
            "neardup: {} fingerprints ({} bits); {} documents without features (fingerprint \
             0), {} with fewer than --min-features (dedup matches those as exact copies only)",
            report.documents,
            bits.count(),
            report.empty_documents,
            report.few_features
        );
    }
    if report.skipped > 0 {
        eprintln!("neardup: skipped {} bad records", report.skipped);
    }
    Ok(())
}

#[derive(Args)]
pub struct HammingArgs {
    /// Fingerprint file: JSON lines {"id", "fingerprint": "<hex>"} (as `fingerprint` writes)
    /// or one hex fingerprint per line (id = line number); 16 or 32 hex digits.
    input: String,
    /// Output file: {"a", "b", "distance"} per pair, `a` before `b` in input order (with
    /// --groups: pairs of distinct fingerprints, each group named by its first id).
    #[arg(short, long)]
    output: String,
    /// Largest Hamming distance of a pair (identical fingerprints, distance 0, included).
    #[arg(long)]
    max_distance: u32,
    /// Write identical fingerprints compactly here: one row per fingerprint, {"id",
    /// "group"}, the group being the id of the first fingerprint equal to it; the output then
    /// names each group once instead of listing the pairs inside and between groups.
    #[arg(long, value_name = "FILE")]
    groups: Option<String>,
    /// Most pairs to write (and to hold: the pairs of distinct fingerprints are held, the rest
    /// streamed); a run with more is refused before writing anything [default: 32 per
    /// fingerprint, at least 10,000,000].
    #[arg(long, value_name = "N")]
    max_pairs: Option<u64>,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// No summary.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

pub fn hamming(args: &HammingArgs) -> anyhow::Result<()> {
    let pool = threads::pool(args.threads)?;
    let job = fingerprints::HammingJob {
        input: args.input.clone(),
        output: args.output.clone(),
        max_distance: args.max_distance,
        groups: args.groups.clone(),
        max_pairs: args.max_pairs,
    };
    let report = pool.install(|| fingerprints::hamming(&job))?;
    if !args.quiet {
        eprintln!(
            "neardup: {} fingerprints ({} bits, {} groups of identical ones), {} pairs within \
             distance {}",
            report.fingerprints, report.bits, report.groups, report.pairs, args.max_distance
        );
    }
    Ok(())
}
