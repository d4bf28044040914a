//! `neardup synth`: build a near-duplicate benchmark from a corpus.

use clap::Args;

use crate::args::InputArgs;

#[derive(Args)]
pub struct SynthArgs {
    /// Source corpus (JSONL, text, CSV, TSV, Parquet; .gz/.zst read transparently; `-` =
    /// stdin). Its documents are assumed distinct; identical texts share a truth cluster.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Output corpus (JSONL): {"id": "s<N>" | "s<N>-v<K>" | "s<N>-hn<K>", "text", "source"},
    /// shuffled with the seed.
    // This text is the `--help` of the option, where backticks would show, so the `<N>` in it
    // is not marked as code.
    #[allow(rustdoc::invalid_html_tags)]
    #[arg(short, long)]
    output: String,
    /// Output truth (JSONL, one row per corpus row): {"id", "cluster", "category"}.
    #[arg(long)]
    truth: String,
    /// Seed of every random choice: the same input, seed and options give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Fraction of source documents that get edited copies.
    #[arg(long, default_value_t = 0.3)]
    duplicate_rate: f64,
    /// A source that gets copies gets 1 to this many.
    #[arg(long, default_value_t = 3)]
    max_variants: usize,
    /// Edits to draw from (one or two per copy): char-sub, word-sub, script, insert, delete,
    /// punct, width, boilerplate, truncate, swap.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "char-sub,word-sub,script,insert,delete,punct,width,boilerplate,truncate,swap"
    )]
    edits: Vec<neardup_eval::synth::Edit>,
    /// Strength of each edit in (0, 1]: roughly the fraction of characters it touches.
    #[arg(long, default_value_t = 0.05)]
    strength: f64,
    /// Fraction of source documents that get a hard negative (same opening, other text).
    #[arg(long, default_value_t = 0.05)]
    hard_negatives: f64,
    /// Use only the first N source documents.
    #[arg(long)]
    limit: Option<usize>,
    /// No summary.
    #[arg(short, long)]
    quiet: bool,
    /// Where the text and the id are (the id is copied to "source").
    #[command(flatten)]
    input: InputArgs,
}

pub fn synth(args: &SynthArgs) -> anyhow::Result<()> {
    use neardup_eval::synth::SynthOptions;
    use neardup_eval::synth_io::{run_synth, SynthConfig};

    let config = SynthConfig {
        inputs: args.inputs.clone(),
        input: args.input.options(),
        corpus: args.output.clone(),
        truth: args.truth.clone(),
        limit: args.limit,
        options: SynthOptions {
            seed: args.seed,
            duplicate_rate: args.duplicate_rate,
            max_variants: args.max_variants,
            edits: args.edits.clone(),
            strength: args.strength,
            hard_negatives: args.hard_negatives,
        },
    };
    let summary = run_synth(&config)?;
    if !args.quiet {
        print_synth_summary(&summary);
    }
    Ok(())
}

fn print_synth_summary(summary: &neardup_eval::synth::Summary) {
    eprintln!(
        "neardup: {} sources ({} repeating an earlier text), {} variants, {} hard negatives",
        summary.sources, summary.repeated_sources, summary.variants, summary.hard_negatives,
    );
    let by_edit: Vec<String> = summary
        .variants_by_edit
        .iter()
        .map(|(edit, count)| format!("{edit} {count}"))
        .collect();
    eprintln!("neardup: variants per edit: {}", by_edit.join(", "));
    if summary.skipped_variants + summary.skipped_hard_negatives > 0 {
        eprintln!(
            "neardup: not produced: {} variants (no enabled edit changed the text), {} hard \
             negatives (no other text to take from)",
            summary.skipped_variants, summary.skipped_hard_negatives,
        );
    }
}
