//! Fingerprints of real text, scaled up, for the Hamming index benchmark (issue 8): writes
//! `N` little-endian `u64` SimHash fingerprints to a file, so that the index is measured on
//! the bucket skew of real text and not only on uniform random bits.
//!
//! ```sh
//! cargo run --release -p neardup-eval --example simhash_corpus -- \
//!     --data ../shared/data --count 50000000 --seed 1 --out fps.u64
//! ```
//!
//! # Segments
//!
//! Real text cut into short segments: THUCNews titles (one each); Reuters-21578 bodies cut
//! at their paragraph indents; the Sohu pair files (`dd-test`, `dc-test`, both sides) cut
//! into sentences at `。！？!?`, line breaks and double spaces; the textreuse books cut into
//! paragraphs at blank lines, paragraphs over 80 words cut again at `. `. Each segment is
//! normalised (`Normalizer::default()`) and tokenised once (`Tokenizer::Token`: one token
//! per CJK character, one per word elsewhere); segments under 3 tokens are dropped. English
//! (Reuters, books) and Chinese (THUCNews, Sohu) segments form two pools.
//!
//! # Documents
//!
//! Document `i` is drawn from its own seeded stream (so any prefix of the output is a sample
//! of the same distribution, and threads need no coordination):
//! - with probability `--near 0.05` (for `i > 0`) an edited copy of an earlier document `j`
//!   (uniform below `i`): 1 to 3 token edits;
//! - otherwise a pool (English or Chinese, in proportion to their segments), then 1, 2, 3 or
//!   4 segments drawn uniformly from it (probabilities 0.05, 0.35, 0.35, 0.25) and joined,
//!   then 0 to 2 token edits (a lone segment is kept unedited half of the time).
//!
//! A token edit deletes a token, replaces one with a token of another random segment of the
//! pool, or inserts one (equally likely). Edits work on the normalised token stream, which
//! is what editing the normalised text at word (or CJK character) boundaries gives, without
//! re-running the normaliser per document. The fingerprint is
//! `simhash64(term_frequencies(tokens))`: unigram term frequencies, as the SimHash method
//! does with `ngram 1`. Lone segments are rare on purpose: with ~0.2 million segments, each
//! is drawn about 0.05 N / 0.2 million times, and those copies are near duplicates of each
//! other; more of them would make the k = 3 self-join mostly a few huge clusters.
//!
//! The program prints a JSON summary (segments per source, mean tokens, seconds) to stderr.

use std::time::Instant;

use neardup_core::normalize::Normalizer;
use neardup_core::simhash::{simhash64, term_frequencies};
use neardup_core::tokenize::{Shingler, ShinglerBuilder, Tokenizer};
use rayon::prelude::*;

fn main() {
    if let Err(message) = run() {
        eprintln!("simhash_corpus: {message}");
        std::process::exit(2);
    }
}

struct Options {
    data: String,
    count: usize,
    seed: u64,
    near: f64,
    out: String,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        data: "../shared/data".into(),
        count: 1_000_000,
        seed: 1,
        near: 0.05,
        out: String::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--data" => options.data = value.clone(),
            "--count" => options.count = value.parse().map_err(|e| bad(&e))?,
            "--seed" => options.seed = value.parse().map_err(|e| bad(&e))?,
            "--near" => options.near = value.parse().map_err(|e| bad(&e))?,
            "--out" => options.out = value.clone(),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if options.out.is_empty() {
        return Err("give --out FILE".into());
    }
    Ok(options)
}

/// Segments of one pool as token hash lists, and how many came from each source.
#[derive(Default)]
struct Pool {
    segments: Vec<Vec<u64>>,
    sources: Vec<(String, usize)>,
}

impl Pool {
    fn add(&mut self, source: &str, texts: Vec<String>, text_tools: &(Normalizer, Shingler)) {
        let (normalizer, shingler) = text_tools;
        let segments: Vec<Vec<u64>> = (texts.par_iter())
            .map(|text| shingler.token_hashes(&normalizer.normalize(text)))
            .filter(|tokens| tokens.len() >= 3)
            .collect();
        self.sources.push((source.to_string(), segments.len()));
        self.segments.extend(segments);
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

/// The string fields `fields` of every line of a JSON-lines file.
fn jsonl_fields(path: &str, fields: &[&str]) -> Result<Vec<String>, String> {
    let mut texts = Vec::new();
    for (number, line) in read(path)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{path}:{}: {e}", number + 1))?;
        for field in fields {
            if let Some(text) = value.get(*field).and_then(|v| v.as_str()) {
                texts.push(text.to_string());
            }
        }
    }
    Ok(texts)
}

fn split_keep(text: &str, cut: impl Fn(char) -> bool) -> Vec<String> {
    (text.split(cut))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Paragraphs of a book at blank lines; long ones cut again into sentences.
fn book_segments(text: &str) -> Vec<String> {
    let mut segments = Vec::new();
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        if paragraph.split_whitespace().count() > 80 {
            segments.extend(split_keep(paragraph, |c| c == '.'));
        } else {
            segments.push(paragraph.to_string());
        }
    }
    segments
}

fn pools(data: &str) -> Result<(Pool, Pool), String> {
    let tools = (
        Normalizer::default(),
        (ShinglerBuilder::new()
            .tokenizer(Tokenizer::Token)
            .ngram(1)
            .build())
        .map_err(|e| e.to_string())?,
    );
    let (mut english, mut chinese) = (Pool::default(), Pool::default());
    let titles = jsonl_fields(&format!("{data}/thucnews-titles/titles.jsonl"), &["text"])?;
    chinese.add("thucnews titles", titles, &tools);
    let mut sohu = Vec::new();
    for file in ["dd-test", "dc-test"] {
        let path = format!("{data}/sohu-news-pairs/{file}.jsonl");
        for text in jsonl_fields(&path, &["sentence1", "sentence2"])? {
            let sentence_end = |c: char| "。！？!?\n".contains(c);
            for piece in text.split("  ") {
                sohu.extend(split_keep(piece, sentence_end));
            }
        }
    }
    chinese.add("sohu sentences", sohu, &tools);
    let reuters = jsonl_fields(&format!("{data}/reuters21578/bodies.jsonl"), &["text"])?;
    let paragraphs = (reuters.iter())
        .flat_map(|body| body.split("\n    ").map(String::from))
        .collect();
    english.add("reuters paragraphs", paragraphs, &tools);
    let mut books = Vec::new();
    let folder = format!("{data}/textreuse-ats");
    let mut names: Vec<_> = (std::fs::read_dir(&folder).map_err(|e| format!("{folder}: {e}"))?)
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    names.sort();
    for path in names {
        books.extend(book_segments(&read(&path.to_string_lossy())?));
    }
    english.add("textreuse book paragraphs", books, &tools);
    Ok((english, chinese))
}

/// splitmix64 (a workload generator, not a test oracle).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Generator<'a> {
    pools: [&'a Pool; 2],
    english_share: f64,
    seed: u64,
    near: f64,
}

impl Generator<'_> {
    /// The tokens of document `i`, and its pool.
    fn tokens(&self, i: usize) -> (Vec<u64>, usize) {
        let mut rng = SplitMix(self.seed ^ (i as u64).wrapping_mul(0xa076_1d64_78bd_642f));
        if i > 0 && rng.unit() < self.near {
            let (mut tokens, pool) = self.tokens(rng.below(i));
            let edits = 1 + rng.below(3);
            edit(&mut tokens, edits, self.pools[pool], &mut rng);
            return (tokens, pool);
        }
        let pool_index = usize::from(rng.unit() >= self.english_share);
        let pool = self.pools[pool_index];
        let draw = rng.unit();
        let count = [0.05, 0.40, 0.75, 1.0]
            .iter()
            .position(|&p| draw < p)
            .unwrap_or(3)
            + 1;
        let mut tokens = Vec::new();
        for _ in 0..count {
            tokens.extend_from_slice(&pool.segments[rng.below(pool.segments.len())]);
        }
        let edits = if count == 1 && rng.unit() < 0.5 {
            0
        } else {
            rng.below(3)
        };
        edit(&mut tokens, edits, pool, &mut rng);
        (tokens, pool_index)
    }
}

/// `edits` token edits: delete, replace with a token from a random segment, or insert one.
fn edit(tokens: &mut Vec<u64>, edits: usize, pool: &Pool, rng: &mut SplitMix) {
    for _ in 0..edits {
        let segment = &pool.segments[rng.below(pool.segments.len())];
        let other = segment[rng.below(segment.len())];
        let kind = rng.below(3);
        if tokens.len() <= 1 || kind == 2 {
            tokens.insert(rng.below(tokens.len() + 1), other);
        } else if kind == 0 {
            tokens.remove(rng.below(tokens.len()));
        } else {
            let at = rng.below(tokens.len());
            tokens[at] = other;
        }
    }
}

fn run() -> Result<(), String> {
    let options = parse()?;
    let start = Instant::now();
    let (english, chinese) = pools(&options.data)?;
    let segments = english.segments.len() + chinese.segments.len();
    let generator = Generator {
        pools: [&english, &chinese],
        english_share: english.segments.len() as f64 / segments.max(1) as f64,
        seed: options.seed,
        near: options.near,
    };
    let load_seconds = start.elapsed().as_secs_f64();
    let (fingerprints, token_counts): (Vec<u64>, Vec<u32>) = ((0..options.count).into_par_iter())
        .map(|i| {
            let (tokens, _) = generator.tokens(i);
            (simhash64(&term_frequencies(&tokens)), tokens.len() as u32)
        })
        .unzip();
    let bytes: Vec<u8> = fingerprints.iter().flat_map(|f| f.to_le_bytes()).collect();
    std::fs::write(&options.out, bytes).map_err(|e| format!("{}: {e}", options.out))?;
    let sources: Vec<String> = (english.sources.iter().chain(&chinese.sources))
        .map(|(name, count)| format!("{name:?}: {count}"))
        .collect();
    let mean_tokens =
        token_counts.iter().map(|&t| f64::from(t)).sum::<f64>() / options.count.max(1) as f64;
    eprintln!(
        "{{\"count\": {}, \"segments\": {{{}}}, \"mean_tokens\": {mean_tokens:.1}, \
         \"load_seconds\": {load_seconds:.2}, \"seconds\": {:.2}}}",
        options.count,
        sources.join(", "),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
