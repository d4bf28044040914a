//! `neardup report`: write one self-contained HTML page about a dedup run.

use clap::Args;

use crate::args::InputArgs;

#[derive(Args)]
pub struct ReportArgs {
    /// The inputs of the dedup run, read with the same options (the page shows their texts).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The clusters file written by `neardup dedup --clusters`.
    #[arg(long)]
    clusters: String,
    /// The statistics file written by `neardup dedup --stats` (method, timings, S-curve).
    #[arg(long)]
    stats: Option<String>,
    /// Where to write the HTML page (`-` = stdout).
    #[arg(short, long)]
    output: String,
    /// Clusters in each of the two lists (largest, borderline).
    #[arg(long, default_value_t = 50)]
    max_clusters: usize,
    /// Duplicates shown per cluster, the least similar first.
    #[arg(long, default_value_t = 8)]
    max_members: usize,
    /// Characters of each text shown and compared; longer texts are cut with a note.
    #[arg(long, default_value_t = 3000)]
    max_chars: usize,
    /// No summary line.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// The input options given to `dedup`.
    #[command(flatten)]
    input: InputArgs,
}

pub fn report(args: &ReportArgs) -> anyhow::Result<()> {
    use neardup_eval::report::ReportOptions;
    use neardup_eval::report_io::{write_report, ReportConfig};

    args.input.note_unused_id(&args.inputs, args.quiet);
    let config = ReportConfig {
        inputs: args.inputs.clone(),
        input: args.input.options(),
        clusters: args.clusters.clone(),
        stats: args.stats.clone(),
        output: args.output.clone(),
        options: ReportOptions {
            max_clusters: args.max_clusters,
            max_members: args.max_members,
            max_chars: args.max_chars,
            ..ReportOptions::default()
        },
    };
    let summary = write_report(&config)?;
    if !args.quiet {
        eprintln!(
            "neardup: report of {} documents written to {} ({:.1} KiB)",
            summary.documents,
            args.output,
            summary.bytes as f64 / 1024.0
        );
    }
    Ok(())
}
