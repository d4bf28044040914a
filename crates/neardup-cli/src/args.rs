//! Options shared by several subcommands, declared once and flattened into each.

use clap::builder::PossibleValuesParser;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};
use neardup_core::registry::{self, MethodSpec, ParamKind, ParamSpec, Params};
use neardup_pipeline::input::{Format, InputOptions, OnError};

/// Where the text and the id of a record are (`dedup`, `report`, `synth`, `tune`).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Input")]
pub struct InputArgs {
    /// Field holding the text (dotted path for nested JSON; column name for CSV/Parquet).
    #[arg(long, default_value = "text")]
    pub text_field: String,
    /// Field holding the id; without it the id is the 1-based record number.
    #[arg(long)]
    pub id_field: Option<String>,
    /// Input format (default: from the extension): jsonl, text, csv, tsv, parquet.
    #[arg(long)]
    pub format: Option<Format>,
}

impl InputArgs {
    /// Reader options (bad records are errors unless the caller changes `on_error`).
    pub fn options(&self) -> InputOptions {
        InputOptions {
            format: self.format,
            text_field: self.text_field.clone(),
            id_field: self.id_field.clone(),
            ..InputOptions::default()
        }
    }
}

impl InputArgs {
    /// Tells on stderr when no `--id-field` was given and the first input's records have an
    /// `id` field: their ids will be record numbers, which `eval` and `report` must then be
    /// given too, and which rarely is what was meant (the README's next steps failed so).
    pub fn note_unused_id(&self, inputs: &[String], quiet: bool) {
        if quiet || self.id_field.is_some() {
            return;
        }
        let Some(first) = inputs.first() else { return };
        if neardup_pipeline::input::first_record_has_field(first, &self.options(), "id")
            == Some(true)
        {
            eprintln!(
                "neardup: note: the records have an \"id\" field, but without --id-field the \
                 ids are record numbers (1, 2, ...); give --id-field id to use it"
            );
        }
    }
}

/// How a run treats bad records and uses the machine (`dedup`, `fingerprint`).
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// On a bad record: `fail` (default; nothing is written) or `skip` (counted, reported).
    #[arg(long, default_value = "fail")]
    pub on_error: OnError,
    /// Largest accepted record (a size: 256M, 1G, 65536).
    #[arg(long, value_name = "SIZE", default_value = "256M",
          value_parser = parse_size)]
    pub max_doc_bytes: usize,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// No progress bar and no summary (skipped records and warnings are still reported).
    #[arg(short, long)]
    pub quiet: bool,
}

impl RunArgs {
    /// `input` with these error and size settings.
    pub fn input_options(&self, input: &InputArgs) -> InputOptions {
        InputOptions {
            on_error: self.on_error,
            max_doc_bytes: self.max_doc_bytes,
            ..input.options()
        }
    }
}

/// A size in bytes: a number with an optional K, M, G or T suffix (powers of 1024), as
/// [`neardup_core::size::parse_size`] reads it.
pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let bytes = neardup_core::size::parse_size(text)?;
    usize::try_from(bytes).map_err(|_| format!("{text:?}: too large"))
}

/// The parameters of every registered method, one flag each (`lsh_threshold` is
/// `--lsh-threshold`), generated from the registry: a new method or parameter needs no change
/// here. Only the values given on the command line are passed on; the method supplies its
/// defaults.
#[derive(Debug, Clone, Default)]
pub struct MethodArgs {
    /// The given parameters, by name.
    pub given: Params,
}

impl MethodArgs {
    /// The parameters to offer, less `skip` (those a command sweeps itself): the first
    /// declaration of every name, in registry order.
    /// With `only`, the parameters of that method alone.
    fn specs(only: Option<&str>, skip: &[&str]) -> Vec<ParamSpec> {
        let mut specs: Vec<ParamSpec> = Vec::new();
        let methods = registry::methods().into_iter();
        for method in methods.filter(|m| only.is_none_or(|name| name == m.name)) {
            for param in method.params {
                if !skip.contains(&param.name) && specs.iter().all(|p| p.name != param.name) {
                    specs.push(param);
                }
            }
        }
        specs
    }

    fn flag(name: &str) -> String {
        name.replace('_', "-")
    }

    /// Adds one argument per parameter to `command`.
    pub fn augment(command: clap::Command, only: Option<&str>, skip: &[&str]) -> clap::Command {
        let mut command = command;
        for param in Self::specs(only, skip) {
            let mut help = param.help.to_owned();
            let users: Vec<&str> = (registry::methods().into_iter())
                .filter(|m| m.param(param.name).is_some())
                .map(|m| m.name)
                .collect();
            if only.is_none() && users.len() < registry::methods().len() {
                help.push_str(&format!(" [methods: {}]", users.join(", ")));
            }
            let mut arg = Arg::new(param.name)
                .long(Self::flag(param.name))
                .help(help)
                .help_heading(param.group.unwrap_or("Method parameters"));
            arg = match param.kind {
                ParamKind::Flag => arg.action(ArgAction::SetTrue),
                ParamKind::Choice(names) => arg
                    .value_name(param.name.to_uppercase())
                    .value_parser(PossibleValuesParser::new(names.iter().copied()))
                    .action(ArgAction::Set),
                ParamKind::Number => arg.value_name("X").action(ArgAction::Set),
                ParamKind::Count => arg.value_name("N").action(ArgAction::Set),
                ParamKind::Text => arg.value_name("TEXT").action(ArgAction::Set),
                ParamKind::File => arg.value_name("FILE").action(ArgAction::Set),
            };
            if let (Some(default), false) = (param.default, param.kind == ParamKind::Flag) {
                arg = arg.default_value(default);
            }
            command = command.arg(arg);
        }
        command
    }

    /// The parameters given on the command line (defaults are left to the method).
    pub fn from_matches(matches: &ArgMatches, only: Option<&str>, skip: &[&str]) -> MethodArgs {
        let mut given = Params::new();
        for param in Self::specs(only, skip) {
            if matches.value_source(param.name) != Some(ValueSource::CommandLine) {
                continue;
            }
            let value = match param.kind {
                ParamKind::Flag => matches.get_flag(param.name).to_string(),
                _ => (matches.get_one::<String>(param.name).cloned()).unwrap_or_default(),
            };
            given.insert(param.name, value);
        }
        MethodArgs { given }
    }

    /// The given parameters that `method` has, and the flags of those it has not (in help
    /// order).
    pub fn for_method(&self, method: &MethodSpec) -> (Params, Vec<String>) {
        let mut params = Params::new();
        let mut unused = Vec::new();
        for spec in Self::specs(None, &[]) {
            let (name, Some(value)) = (spec.name, self.given.raw(spec.name)) else {
                continue;
            };
            if method.param(name).is_some() {
                params.insert(name, value);
            } else {
                unused.push(format!("--{}", Self::flag(name)));
            }
        }
        (params, unused)
    }
}

/// The method parameters of `dedup`.
impl Args for MethodArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        MethodArgs::augment(command, None, &[])
    }
    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        MethodArgs::augment(command, None, &[])
    }
}

impl FromArgMatches for MethodArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(MethodArgs::from_matches(matches, None, &[]))
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = MethodArgs::from_matches(matches, None, &[]);
        Ok(())
    }
}

/// The method parameters of `tune`, without the swept ones (`ngram`, `permutations`,
/// `threshold`, `max_distance`: `tune` has `--ngrams`, `--permutations`, `--thresholds` and
/// `--max-distances`).
#[derive(Debug, Clone, Default)]
pub struct TuneMethodArgs(pub MethodArgs);

const SWEPT: &[&str] = &["ngram", "permutations", "threshold", "max_distance"];

impl Args for TuneMethodArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        MethodArgs::augment(command, None, SWEPT)
    }
    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        MethodArgs::augment(command, None, SWEPT)
    }
}

impl FromArgMatches for TuneMethodArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(TuneMethodArgs(MethodArgs::from_matches(
            matches, None, SWEPT,
        )))
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0 = MethodArgs::from_matches(matches, None, SWEPT);
        Ok(())
    }
}

/// The feature and weight parameters of `simhash` (`fingerprint`): its parameters without the
/// distance and verification ones, which only matter when fingerprints are compared.
#[derive(Debug, Clone, Default)]
pub struct SimHashFeatureArgs(pub MethodArgs);

const COMPARISON: &[&str] = &["max_distance", "verify", "verify_threshold"];

impl Args for SimHashFeatureArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        MethodArgs::augment(command, Some("simhash"), COMPARISON)
    }
    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        MethodArgs::augment(command, Some("simhash"), COMPARISON)
    }
}

impl FromArgMatches for SimHashFeatureArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(SimHashFeatureArgs(MethodArgs::from_matches(
            matches,
            Some("simhash"),
            COMPARISON,
        )))
    }
    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0 = MethodArgs::from_matches(matches, Some("simhash"), COMPARISON);
        Ok(())
    }
}

/// The names of the registered methods, for `--method`.
pub fn method_names() -> Vec<&'static str> {
    registry::methods().iter().map(|m| m.name).collect()
}

/// Parses a count that must be at least 1 (`--bucket-cap`, `--candidate-budget`): 0 would
/// compare no documents at all, so it is refused rather than read as 1.
pub fn at_least_one(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (0 would compare no documents)".to_owned()),
        Ok(n) => Ok(n),
        Err(error) => Err(error.to_string()),
    }
}
