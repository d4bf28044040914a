//! Options shared by several subcommands, declared once and flattened into each.

use clap::Args;
use neardup_core::methods::minhash::MinHashBuilder;
use neardup_core::normalize::{ChineseVariant, NormalizeOptions};
use neardup_core::tokenize::Tokenizer;
use neardup_pipeline::input::{Format, InputOptions};

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

/// How text is normalised before shingling (`dedup`, `tune`).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Normalisation")]
pub struct NormalizeArgs {
    /// Chinese script: `simplified` (convert traditional) or `keep`.
    #[arg(long, default_value = "simplified", value_parser = ["simplified", "keep"])]
    pub chinese_variant: String,
    /// Strip HTML tags and decode entities (web pages).
    #[arg(long)]
    pub strip_html: bool,
    /// Keep punctuation and symbols (by default they become spaces).
    #[arg(long)]
    pub keep_punctuation: bool,
    /// Keep letter case (by default text is lowercased).
    #[arg(long)]
    pub keep_case: bool,
}

impl NormalizeArgs {
    /// The normaliser options.
    pub fn options(&self) -> NormalizeOptions {
        NormalizeOptions {
            lowercase: !self.keep_case,
            chinese_variant: match self.chinese_variant.as_str() {
                "keep" => ChineseVariant::Keep,
                _ => ChineseVariant::Simplified,
            },
            strip_punctuation: !self.keep_punctuation,
            strip_html: self.strip_html,
        }
    }
}

/// How normalised text becomes shingles (`dedup`, `tune`; `tune` sweeps `--ngram` itself).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Shingles")]
pub struct ShingleArgs {
    /// Shingles: `auto` (character n-grams sized by script), `token` (one token per CJK
    /// character and per word), `char` (character n-grams), `word` (jieba for Chinese).
    #[arg(long, default_value = "auto")]
    pub tokenizer: Tokenizer,
    /// For `auto`: characters per shingle on non-CJK text [default: --ngram + 2].
    #[arg(long)]
    pub latin_ngram: Option<usize>,
    /// Remove English and Chinese stopwords before shingling.
    #[arg(long)]
    pub stopwords: bool,
}

impl ShingleArgs {
    /// `builder` with these shingles and `normalize`.
    pub fn apply(&self, builder: MinHashBuilder, normalize: &NormalizeArgs) -> MinHashBuilder {
        let mut builder = builder
            .normalize(normalize.options())
            .tokenizer(self.tokenizer)
            .remove_stopwords(self.stopwords);
        if let Some(n) = self.latin_ngram {
            builder = builder.latin_ngram(n);
        }
        builder
    }
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
