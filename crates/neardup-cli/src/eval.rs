//! `neardup eval`: score a clusters file against ground truth.

use anyhow::Context;
use clap::Args;

#[derive(Args)]
pub struct EvalArgs {
    /// Ground truth (JSONL): clusters {"id","cluster","category"?}, labelled pairs
    /// {"a","b","label"}, or Sohu pairs {"sentence1","sentence2","label"} whose row i holds
    /// documents 2i+1 and 2i+2 (the record numbers of its texts written one after another).
    #[arg(long)]
    truth: String,
    /// The clusters file written by `neardup dedup --clusters` (ids compare as JSON: 3 != "3").
    #[arg(long)]
    predicted: String,
    /// Truth format (default: from the first row's fields): clusters, pairs, sohu.
    #[arg(long)]
    truth_format: Option<neardup_eval::eval::TruthFormat>,
    /// The numeric pair label that marks duplicates (the Sohu files use 5).
    #[arg(long, default_value_t = 1.0)]
    positive_label: f64,
    /// Write the numbers as one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// Where to write the report (`-` = stdout).
    #[arg(short, long, default_value = "-")]
    output: String,
}

pub fn eval(args: &EvalArgs) -> anyhow::Result<()> {
    use neardup_eval::eval_io::{evaluate, EvalOptions};
    use neardup_pipeline::output::AtomicOutput;
    use neardup_pipeline::paths::check_distinct_named;

    let inputs = [
        (Some("`truth`"), args.truth.as_str()),
        (Some("`predicted`"), &args.predicted),
    ];
    check_distinct_named(&inputs, &[("`output`", &args.output)])?;
    let options = EvalOptions {
        truth_format: args.truth_format,
        positive_label: args.positive_label,
    };
    let report = evaluate(&args.truth, &args.predicted, &options)?;
    let text = if args.json {
        format!("{:#}\n", report.to_json())
    } else {
        report.to_string()
    };
    let mut out = AtomicOutput::create(&args.output)?;
    let written = out.writer().write_all(text.as_bytes());
    written.with_context(|| format!("{}: cannot write the report", args.output))?;
    out.commit()?;
    Ok(())
}
