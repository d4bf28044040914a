//! `neardup synth`: build a near-duplicate benchmark from a corpus.

use clap::Args;

use crate::args::InputArgs;

#[derive(Args)]
pub struct SynthArgs {
    /// Source corpus (JSONL, text, CSV, TSV, Parquet; .gz/.zst read transparently; `-` =
    /// stdin). Its documents are assumed distinct; identical texts share a truth cluster.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Output corpus (JSONL): {"id": "s<N>" | "s<N>-v<K>" | "s<N>-hn<K>" | "s<N>-rw<K>" |
    /// "t<K>", "text", "source"}, shuffled with the seed.
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
    /// Number of accounts that wrap every document in a header and footer of their own (0 =
    /// no wrapping): more than 300 characters of boilerplate in Chinese for texts with CJK
    /// characters, in English otherwise. Different sources of one account are hard negatives.
    #[arg(long, default_value_t = 0)]
    wrappers: usize,
    /// Fraction of source documents that get a re-wrapped copy (the unedited body in another
    /// account's wrapper, category "rewrap"): a duplicate. Needs --wrappers 2 or more.
    #[arg(long, default_value_t = 0.0)]
    rewrap: f64,
    /// Number of template notices to add (bank messages, verification codes, dividend notices:
    /// the same text but for numbers and names; category "template", a cluster each), Chinese
    /// if most sources have CJK characters.
    #[arg(long, default_value_t = 0)]
    templates: usize,
    /// Use only the first N source documents.
    #[arg(long)]
    limit: Option<usize>,
    /// No summary.
    #[arg(short, long)]
    pub(crate) quiet: bool,
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
            wrappers: args.wrappers,
            rewrap: args.rewrap,
            templates: args.templates,
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
    if summary.wrapped + summary.rewraps + summary.templates > 0 {
        eprintln!(
            "neardup: {} documents wrapped, {} re-wraps, {} template notices",
            summary.wrapped, summary.rewraps, summary.templates,
        );
    }
    if summary.skipped_variants + summary.skipped_hard_negatives > 0 {
        eprintln!(
            "neardup: not produced: {} variants (no enabled edit changed the text), {} hard \
             negatives (no other text to take from)",
            summary.skipped_variants, summary.skipped_hard_negatives,
        );
    }
}

/// `neardup synth-notices`: a flood of short notices made from templates, with two truths.
#[derive(Args)]
pub struct NoticesArgs {
    /// Output flood (JSONL): {"id": "n<N>-c<K>", "text"}, shuffled with the seed.
    #[arg(short, long)]
    output: String,
    /// Output notice truth (JSONL): {"id", "cluster": "n<N>", "category": <template>}; copies
    /// of one notice are duplicates, two fillings of one template are not.
    #[arg(long)]
    truth: String,
    /// Output template truth (JSONL): {"id", "cluster": <template>}, the truth of
    /// `--templates duplicate` (every filling of one template in one cluster).
    #[arg(long)]
    template_truth: Option<String>,
    /// What the flood is made of: `sms` (bank, parcel, train, code, power-bill, exam notices,
    /// Chinese and English), `headers` (posts under a dated header line), `wrappers` (short
    /// posts with an inline wrapper), `mixed` (a third each).
    #[arg(long, default_value = "sms")]
    shape: neardup_eval::synth::notices::FloodShape,
    /// Distinct notices; each is sent 1 to --max-copies times with light edits.
    #[arg(long, default_value_t = 5000)]
    notices: usize,
    /// Most copies of one notice.
    #[arg(long, default_value_t = 4)]
    max_copies: usize,
    /// Seed of every random choice: the same options give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Post bodies for `headers`, `wrappers` and `mixed` (one a record, distinct; random
    /// Chinese text when absent or used up).
    #[arg(long)]
    bodies: Vec<String>,
    /// No summary.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Where the text and the id of --bodies are.
    #[command(flatten)]
    input: InputArgs,
}

pub fn notices(args: &NoticesArgs) -> anyhow::Result<()> {
    use neardup_eval::synth::notices::FloodOptions;
    use neardup_eval::synth_io::{run_notices, NoticesConfig};

    if args.max_copies == 0 {
        anyhow::bail!("--max-copies takes a whole number of at least 1 (given 0)");
    }
    let config = NoticesConfig {
        bodies: args.bodies.clone(),
        input: args.input.options(),
        corpus: args.output.clone(),
        truth: args.truth.clone(),
        template_truth: args.template_truth.clone(),
        options: FloodOptions {
            shape: args.shape,
            notices: args.notices,
            max_copies: args.max_copies,
            seed: args.seed,
        },
    };
    let documents = run_notices(&config)?;
    if !args.quiet {
        eprintln!(
            "neardup: {documents} documents, copies of {} {} notices",
            args.notices,
            args.shape.name()
        );
    }
    Ok(())
}
