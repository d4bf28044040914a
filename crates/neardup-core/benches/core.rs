//! Single-thread speed of each sketch step on real text, in bytes per second of input:
//! normalisation (with and without traditional-to-simplified), shingling, the two signature
//! schemes, the whole MinHash sketch, and verification of a candidate pair.
//!
//! ```sh
//! cargo bench -p neardup-core --bench core
//! ```
//! Chinese: the 500 Sohu news articles (`sentence2` of `dc-test.jsonl`, about 1,000
//! characters each); English: the first 2,000 Reuters bodies; both from `../shared/data` (2,000
//! synthetic texts when it is absent, said on stderr).

use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use neardup_core::methods::minhash::MinHashBuilder;
use neardup_core::minhash::{MinHasher, SketchScheme};
use neardup_core::normalize::{ChineseVariant, NormalizeOptions, Normalizer};
use neardup_core::tokenize::{ShinglerBuilder, Tokenizer};
use neardup_core::Method;

fn main() {
    divan::main();
}

#[derive(Debug, Clone, Copy)]
enum Corpus {
    Chinese,
    English,
}

const CORPORA: [Corpus; 2] = [Corpus::Chinese, Corpus::English];

fn texts(corpus: Corpus) -> &'static [String] {
    static CHINESE: OnceLock<Vec<String>> = OnceLock::new();
    static ENGLISH: OnceLock<Vec<String>> = OnceLock::new();
    let (cell, file, field, fallback) = match corpus {
        Corpus::Chinese => (
            &CHINESE,
            "sohu-news-pairs/dc-test.jsonl",
            "sentence2",
            "国务院总理今天在北京主持召开常务会议，部署进一步扩大内需的措施。",
        ),
        Corpus::English => (
            &ENGLISH,
            "reuters21578/bodies.jsonl",
            "text",
            "The company said its first quarter net income rose to 12 mln dlrs. ",
        ),
    };
    cell.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/").to_owned() + file;
        match std::fs::read_to_string(&path) {
            Ok(text) => (text.lines())
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .filter_map(|row| row[field].as_str().map(str::to_owned))
                .take(2000)
                .collect(),
            Err(_) => {
                eprintln!("{path} not found: a synthetic text instead");
                (0..2000)
                    .map(|i| format!("{i} {}", fallback.repeat(16)))
                    .collect()
            }
        }
    })
}

fn bytes(texts: &[String]) -> BytesCount {
    BytesCount::new(texts.iter().map(String::len).sum::<usize>())
}

/// Normalises every text of `corpus` with `normalizer`.
fn bench_normalizer(bencher: Bencher, corpus: Corpus, normalizer: Normalizer) {
    let texts = texts(corpus);
    bencher.counter(bytes(texts)).bench(|| {
        texts
            .iter()
            .map(|t| normalizer.normalize(t).len())
            .sum::<usize>()
    });
}

#[divan::bench(args = CORPORA)]
fn normalise(bencher: Bencher, corpus: Corpus) {
    let options = NormalizeOptions {
        chinese_variant: ChineseVariant::Keep,
        ..NormalizeOptions::default()
    };
    bench_normalizer(bencher, corpus, Normalizer::new(options));
}

#[divan::bench(args = CORPORA)]
fn normalise_to_simplified(bencher: Bencher, corpus: Corpus) {
    bench_normalizer(bencher, corpus, Normalizer::default());
}

#[divan::bench(args = CORPORA)]
fn shingle(bencher: Bencher, corpus: Corpus) {
    let texts = texts(corpus);
    let normalizer = Normalizer::default();
    let normalized: Vec<String> = texts.iter().map(|t| normalizer.normalize(t)).collect();
    let shingler = ShinglerBuilder::new()
        .tokenizer(Tokenizer::Auto)
        .build()
        .unwrap();
    bencher.counter(bytes(texts)).bench(|| {
        normalized
            .iter()
            .map(|t| shingler.shingles(t).len())
            .sum::<usize>()
    });
}

#[divan::bench(args = [SketchScheme::Classic, SketchScheme::OnePermutation])]
fn signature(bencher: Bencher, scheme: SketchScheme) {
    let texts = texts(Corpus::Chinese);
    let normalizer = Normalizer::default();
    let shingler = ShinglerBuilder::new().build().unwrap();
    let sets: Vec<_> = (texts.iter())
        .map(|t| shingler.shingles(&normalizer.normalize(t)))
        .collect();
    let hasher = MinHasher::new(128, scheme, 1).unwrap();
    bencher.counter(bytes(texts)).bench(|| {
        sets.iter()
            .map(|s| u64::from(hasher.signature(s.hashes())[0]))
            .sum::<u64>()
    });
}

/// `MinHash::sketch` at the defaults: normalise with t2s, shingle, signature, identity.
#[divan::bench(args = CORPORA)]
fn whole_sketch(bencher: Bencher, corpus: Corpus) {
    let texts = texts(corpus);
    let method = MinHashBuilder::new().build().unwrap();
    bencher.counter(bytes(texts)).bench(|| {
        texts
            .iter()
            .map(|t| u64::from(method.sketch(t).signature()[0]))
            .sum::<u64>()
    });
}

/// Verification of each text against the next (499 pairs in Chinese, 1,999 in English):
/// Jaccard of the verification sets, through `Method::verify`.
#[divan::bench(args = CORPORA)]
fn verify(bencher: Bencher, corpus: Corpus) {
    let method = MinHashBuilder::new().build().unwrap();
    let sketches: Vec<_> = texts(corpus).iter().map(|t| method.sketch(t)).collect();
    bencher
        .counter(divan::counter::ItemsCount::new(sketches.len() - 1))
        .bench(|| {
            (sketches.windows(2))
                .filter_map(|pair| method.verify(black_box(&pair[0]), &pair[1]))
                .count()
        });
}
