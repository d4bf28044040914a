//! `neardup`: find and remove near-duplicate text.
//!
//! This binary only translates the command line into a [`neardup_pipeline::run::RunConfig`]
//! and draws progress; every algorithm lives in the library crates.

// mimalloc: the sketch and corpus stages allocate and free millions of small buffers, and
// glibc's allocator cost about 7% of a run's time (bench/history/2026-11-batch-cost.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_e` of `include/mimalloc.h`,
/// the same in mimalloc 2 and 3 (libmimalloc-sys builds 3 and names no constant for it).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// Memory is taken from the system as it is used and given back as soon as it is freed.
///
/// - No transparent huge pages: mimalloc asks for them on its arenas (reserved before `main`
///   runs, so its own option comes too late), and half-used 2 MB pages counted in the peak (a
///   30 MB corpus: 80 against 63 MB, glibc's 62; the 94 MB corpus: 462 against 431 MB).
/// - Freed memory goes back at once instead of a second later (mimalloc 3's default): a
///   stage's large buffers are freed just before the next stage allocates its own, and the
///   delay let both count in the peak (548 against 465 MB on the 94 MB corpus, 318 against
///   217 MB at 4x under `--memory-limit 256M`).
///
/// In memory neither costs measurable time (medians of 5 alternating runs); runs that spill
/// pay for their stages' allocation churn in system time (16x under `1G`: 159 against 129 s
/// with mimalloc's default delay, which broke `--memory-limit 256M` at 4x: 321 MB).
/// `MIMALLOC_VERBOSE=1` prints mimalloc's options (as they were before this call) and what
/// it purged.
fn give_memory_back() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: `mi_option_set` only stores the value; any value is valid for this option.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes its flag and zeroes; it only sets a flag of this
    // process (a kernel without it refuses the call, which changes nothing).
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

mod args;
mod config;
mod dedup;
mod errors;
mod eval;
mod fingerprint;
mod progress;
mod report;
mod salvage;
mod serve;
mod shell;
mod signals;
mod spans;
#[cfg(feature = "synth")]
mod synth;
mod threads;
mod tune;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "neardup",
    version,
    about = "Find and remove near-duplicate text (Chinese and English)."
)]
struct Cli {
    /// Read options from this TOML file (else $NEARDUP_CONFIG, else the first neardup.toml in
    /// this folder or a parent); flags win over NEARDUP_<OPTION> variables, which win over
    /// the file (see the README).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Read no configuration file.
    #[arg(long, global = true)]
    no_config: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Remove exact and near-duplicate documents; write the kept ones and what was removed.
    Dedup(Box<dedup::DedupArgs>),
    /// Remove repeated passages (substrings, lines or sentences found in several documents)
    /// from inside the documents, keeping the first copy.
    Spans(Box<spans::SpansArgs>),
    /// Write one self-contained HTML page about a dedup run: numbers, charts, and the largest and
    /// borderline clusters with each duplicate beside its representative.
    Report(report::ReportArgs),
    /// Score a `dedup --clusters` file against ground truth (clusters or labelled pairs).
    Eval(eval::EvalArgs),
    /// Build a near-duplicate benchmark from a corpus: edited copies, hard negatives, truth.
    #[cfg(feature = "synth")]
    Synth(synth::SynthArgs),
    /// Write a flood of short notices made from templates (SMS, dated headers, inline
    /// wrappers), each sent 1-4 times with light edits, and its truths.
    #[cfg(feature = "synth")]
    SynthNotices(synth::NoticesArgs),
    /// Sweep thresholds, shingle sizes and permutations on a labelled sample; recommend one.
    Tune(Box<tune::TuneArgs>),
    /// Write the SimHash fingerprint of every document: {"id", "fingerprint": "<hex>"}.
    Fingerprint(Box<fingerprint::FingerprintArgs>),
    /// Write every pair of a fingerprint file within a Hamming distance: {"a", "b", "distance"}.
    Hamming(fingerprint::HammingArgs),
    /// Serve durable check-and-insert over HTTP: collections of stored texts, each new text
    /// checked against them within milliseconds (see docs/service.md).
    Serve(serve::ServeArgs),
    /// Talk to `neardup serve`: create collections, insert, check, bulk-load a JSONL file,
    /// load-test.
    Client(serve::ClientArgs),
    /// Make a service collection that refuses to open (a corrupt record, a missing segment)
    /// open again: cut at the bad record, keeping a copy of the original file.
    Salvage(salvage::SalvageArgs),
    /// Print the completion script of a shell: `source <(neardup completions bash)`.
    Completions(shell::CompletionsArgs),
    /// Print the man page of neardup or of one command (`neardup man dedup | man -l -`), or
    /// write them all with --dir.
    Man(shell::ManArgs),
}

impl Command {
    /// Whether the command was given `--quiet`.
    fn quiet(&self) -> bool {
        match self {
            Command::Dedup(args) => args.quiet(),
            Command::Spans(args) => args.quiet(),
            Command::Fingerprint(args) => args.run.quiet,
            Command::Hamming(args) => args.quiet,
            Command::Report(args) => args.quiet,
            Command::Tune(args) => args.quiet,
            #[cfg(feature = "synth")]
            Command::Synth(args) => args.quiet,
            #[cfg(feature = "synth")]
            Command::SynthNotices(args) => args.quiet,
            _ => false,
        }
    }
}

/// `command` and its subcommands with `args_override_self`: the last occurrence of an option
/// wins, so that the options of a configuration file, placed first, give way to the
/// command line's ([`config::layered`]).
fn overriding(command: clap::Command) -> clap::Command {
    let names: Vec<String> = (command.get_subcommands())
        .map(|sub| sub.get_name().to_owned())
        .collect();
    names
        .iter()
        .fold(command.args_override_self(true), |command, name| {
            command.mut_subcommand(name, overriding)
        })
}

fn main() -> ExitCode {
    give_memory_back();
    let command = overriding(Cli::command());
    let cwd = std::env::current_dir().unwrap_or_default();
    let argv = std::env::args_os().collect();
    let argv = match config::layered(&command, argv, &cwd, &|name| std::env::var_os(name)) {
        Ok(argv) => argv,
        Err(message) => {
            eprintln!("neardup: error: {message}");
            return ExitCode::from(2);
        }
    };
    let matches = command.get_matches_from(argv);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    // The service drains its queues on SIGTERM itself; every other command removes its
    // temporary outputs and exits.
    if !matches!(cli.command, Command::Serve(_)) {
        signals::remove_temporaries_on_signal();
    }
    // Temporary files and folders of killed runs found where this one writes are removed
    // (neardup_pipeline::stale); each is told on stderr unless --quiet.
    if !cli.command.quiet() {
        neardup_pipeline::stale::report_removed_with(|removed| eprintln!("neardup: {removed}"));
        neardup_pipeline::output::tell_waiting_with(|waiting| eprintln!("neardup: {waiting}"));
    }
    let result = match &cli.command {
        Command::Dedup(args) => {
            // `get_matches` ran the subcommand's parser, so its matches are there.
            let given = matches.subcommand_matches("dedup");
            dedup::dedup(args, given.map(dedup::given_options).unwrap_or_default())
        }
        Command::Spans(args) => spans::spans(args),
        Command::Report(args) => report::report(args),
        Command::Eval(args) => eval::eval(args),
        #[cfg(feature = "synth")]
        Command::Synth(args) => synth::synth(args),
        #[cfg(feature = "synth")]
        Command::SynthNotices(args) => synth::notices(args),
        Command::Tune(args) => tune::tune(args),
        Command::Fingerprint(args) => fingerprint::fingerprint(args),
        Command::Hamming(args) => fingerprint::hamming(args),
        Command::Serve(args) => serve::serve(args),
        Command::Client(args) => serve::client(args),
        Command::Salvage(args) => salvage::salvage(args),
        Command::Completions(args) => shell::completions(args, Cli::command()),
        Command::Man(args) => shell::man(args, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of an output went away (`-o - | head`): nothing to say, as ripgrep.
        Err(_) if neardup_pipeline::output::reader_gone() => ExitCode::SUCCESS,
        Err(error) => {
            let message = errors::with_flags(&format!("{error:#}"), &Cli::command());
            eprintln!("neardup: error: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variables of the test and bench harnesses and of the token are no option's
    /// `NEARDUP_<OPTION>` ([`config`]): setting them never changes a run.
    #[test]
    fn no_option_takes_a_harness_variable() {
        let harness = [
            "NEARDUP_BIN",
            "NEARDUP_BINARY",
            "NEARDUP_DATA",
            "NEARDUP_REQUIRE_DATA",
            "NEARDUP_REQUIRE_CLI",
            "NEARDUP_REQUIRE_STANDALONE",
            "NEARDUP_WHEEL",
            "NEARDUP_TEST_VENV",
            "NEARDUP_BENCH_PYTHON",
            "NEARDUP_FAIL_AFTER_STAGE",
            "NEARDUP_CONSOLE_SCREENSHOT",
            "NEARDUP_REPORT_SCREENSHOT",
            "NEARDUP_TOKEN",
            "NEARDUP_CONFIG",
        ];
        let command = Cli::command();
        let commands = command
            .get_subcommands()
            .flat_map(|sub| std::iter::once(sub).chain(sub.get_subcommands()));
        for sub in commands {
            for arg in sub.get_arguments() {
                if let Some(long) = arg.get_long() {
                    let variable = config::variable(long);
                    assert!(
                        !harness.contains(&variable.as_str()),
                        "{}: --{long}",
                        sub.get_name()
                    );
                }
            }
        }
    }
}
