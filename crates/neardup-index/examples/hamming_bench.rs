//! The benchmark program of the exact Hamming index (issue 8): build time, memory per
//! stored fingerprint, single-thread query latency at k = 3 and k = 10, and the all-pairs
//! self-join at k = 3, printed as one JSON object. `bench/run hamming` drives it and sets it
//! side by side with the Python peers; see BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p neardup-index --example hamming_bench -- --random 2000000 --seed 1
//! cargo run --release -p neardup-index --example hamming_bench -- --input fps.u64 --limit 1000000
//! ```
//!
//! Options:
//! - `--input FILE` (little-endian `u64` fingerprints; `--limit N` keeps the first `N`) or
//!   `--random N` (splitmix64 from `--seed S`, default 1). Ids are the positions.
//! - `--ks 3,10`: one index per k, built with `max_distance = k` (blocks: `blocks_for`, or
//!   `--blocks M` for every k).
//! - `--queries Q` (default 10000) of each kind: `near` = a stored fingerprint (at a random
//!   position) with between 1 and k distinct random bits flipped, so each has a match;
//!   `random` = a random 64-bit value. Timed one by one on the main thread.
//! - `--join-threads 2,1`: self-join at k = 3 on rayon pools of these sizes (`--no-join`
//!   skips it; `--join-max N` skips it above N fingerprints; `--join-single-max N` skips
//!   the 1-thread join above N).
//! - `--dump-queries DIR`: write the queries (`near_k{K}.u64`, `random.u64`) for the peers.
//!
//! Memory: `bytes_per_fingerprint` is the index's own count of the heap bytes it holds
//! (`HammingIndex::memory_bytes`: fingerprints, ids, liveness, block tables and offsets),
//! per stored fingerprint; `rss_delta_bytes` is the resident set growth across the build
//! (VmRSS of /proc/self/status, which also holds what the build freed but the allocator kept),
//! and `build_peak_rss_bytes` is VmHWM after the build (input included). `memory_source`
//! names the method of `bytes_per_fingerprint`.

use std::io::{Read, Write};
use std::time::Instant;

use neardup_index::HammingIndex;

fn main() {
    if let Err(message) = run() {
        eprintln!("hamming_bench: {message}");
        std::process::exit(2);
    }
}

/// The command line.
struct Options {
    input: Option<String>,
    limit: Option<usize>,
    random: Option<usize>,
    seed: u64,
    ks: Vec<u32>,
    blocks: Option<u32>,
    queries: usize,
    join_threads: Vec<usize>,
    join_max: usize,
    join_single_max: usize,
    dump_queries: Option<String>,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        input: None,
        limit: None,
        random: None,
        seed: 1,
        ks: vec![3, 10],
        blocks: None,
        queries: 10_000,
        join_threads: vec![2, 1],
        join_max: usize::MAX,
        join_single_max: usize::MAX,
        dump_queries: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--no-join" {
            options.join_threads.clear();
            continue;
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        let list = || -> Result<Vec<usize>, String> {
            (value.split(',').filter(|s| !s.is_empty()))
                .map(|s| s.parse().map_err(|e| format!("{flag} {value}: {e}")))
                .collect()
        };
        match flag.as_str() {
            "--input" => options.input = Some(value.clone()),
            "--limit" => options.limit = Some(number()?),
            "--random" => options.random = Some(number()?),
            "--seed" => options.seed = number()? as u64,
            "--ks" => options.ks = list()?.into_iter().map(|k| k as u32).collect(),
            "--blocks" => options.blocks = Some(number()? as u32),
            "--queries" => options.queries = number()?,
            "--join-threads" => options.join_threads = list()?,
            "--join-max" => options.join_max = number()?,
            "--join-single-max" => options.join_single_max = number()?,
            "--dump-queries" => options.dump_queries = Some(value.clone()),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(options)
}

/// splitmix64: a fixed pseudo-random stream (a workload, not a test oracle).
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
        (self.next() % n as u64) as usize
    }
}

fn load(options: &Options) -> Result<(Vec<u64>, String), String> {
    if let Some(n) = options.random {
        let mut rng = SplitMix(options.seed);
        let source = format!("random splitmix64 seed {}", options.seed);
        return Ok(((0..n).map(|_| rng.next()).collect(), source));
    }
    let path = options
        .input
        .as_ref()
        .ok_or("give --input FILE or --random N")?;
    // Only the first `limit` fingerprints are read, so that the peak RSS is not the file's.
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let limit = options.limit.map_or(u64::MAX, |n| n as u64 * 8);
    let mut bytes = Vec::new();
    (file.take(limit).read_to_end(&mut bytes)).map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() % 8 != 0 {
        return Err(format!(
            "{path}: {} bytes, not a multiple of 8",
            bytes.len()
        ));
    }
    let fingerprints = (bytes.chunks_exact(8))
        .map(|chunk| u64::from_le_bytes(chunk.try_into().expect("chunks of 8")))
        .collect::<Vec<u64>>();
    if fingerprints.len() < options.limit.unwrap_or(0) {
        return Err(format!(
            "{path}: {} fingerprints, fewer than --limit",
            fingerprints.len()
        ));
    }
    Ok((fingerprints, path.clone()))
}

/// A stored fingerprint with between 1 and `k` distinct random bits flipped.
fn near_queries(fingerprints: &[u64], k: u32, count: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix(seed ^ 0x6e65_6172 ^ u64::from(k));
    (0..count)
        .map(|_| {
            let mut query = fingerprints[rng.below(fingerprints.len())];
            let flips = 1 + rng.below(k.max(1) as usize);
            let mut flipped = 0u64;
            while flipped.count_ones() < flips as u32 {
                flipped |= 1 << rng.below(64);
            }
            query ^= flipped;
            query
        })
        .collect()
}

fn random_queries(count: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix(seed ^ 0x7261_6e64);
    (0..count).map(|_| rng.next()).collect()
}

/// A field of /proc/self/status in bytes (0 where there is none).
fn status_bytes(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    (status.lines())
        .find(|line| line.starts_with(field))
        .and_then(|line| line.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// p50, p99 and max of latencies in microseconds, and the mean number of matches.
fn latency_json(index: &HammingIndex, queries: &[u64], k: u32) -> String {
    let mut nanos = Vec::with_capacity(queries.len());
    let mut matches = 0usize;
    for &query in queries {
        let start = Instant::now();
        let found = index
            .query(query, k)
            .expect("k is the index's max_distance");
        nanos.push(start.elapsed().as_nanos() as f64);
        matches += found.len();
    }
    nanos.sort_by(f64::total_cmp);
    let at = |q: f64| nanos[((q * nanos.len() as f64).ceil() as usize).clamp(1, nanos.len()) - 1];
    format!(
        "{{\"queries\": {}, \"p50_us\": {:.3}, \"p99_us\": {:.3}, \"max_us\": {:.3}, \
         \"mean_us\": {:.3}, \"mean_matches\": {:.3}}}",
        nanos.len(),
        at(0.5) / 1e3,
        at(0.99) / 1e3,
        nanos.last().copied().unwrap_or(0.0) / 1e3,
        nanos.iter().sum::<f64>() / nanos.len().max(1) as f64 / 1e3,
        matches as f64 / queries.len().max(1) as f64
    )
}

fn join_json(index: &HammingIndex, threads: usize) -> Result<String, String> {
    let pool = (rayon::ThreadPoolBuilder::new().num_threads(threads).build())
        .map_err(|e| format!("thread pool of {threads}: {e}"))?;
    let start = Instant::now();
    let pairs = pool
        .install(|| index.self_join(3))
        .map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    let identical = pairs.iter().filter(|pair| pair.2 == 0).count();
    Ok(format!(
        "{{\"threads\": {threads}, \"seconds\": {seconds:.4}, \"pairs\": {}, \
         \"identical_pairs\": {identical}}}",
        pairs.len()
    ))
}

fn write_u64s(path: &str, values: &[u64]) -> Result<(), String> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| format!("{path}: {e}"))
}

/// One index at `max_distance = k`: build, memory, queries, and (k = 3) the joins.
fn measure_k(options: &Options, entries: &[(u64, u64)], k: u32) -> Result<String, String> {
    let fingerprints: Vec<u64> = entries.iter().map(|e| e.1).collect();
    let near = near_queries(&fingerprints, k, options.queries, options.seed);
    let random = random_queries(options.queries, options.seed);
    if let Some(dir) = &options.dump_queries {
        write_u64s(&format!("{dir}/near_k{k}.u64"), &near)?;
        write_u64s(&format!("{dir}/random.u64"), &random)?;
    }
    drop(fingerprints);
    let rss_before = status_bytes("VmRSS:");
    let start = Instant::now();
    let index = HammingIndex::build(entries, k, options.blocks).map_err(|e| e.to_string())?;
    let build_seconds = start.elapsed().as_secs_f64();
    let rss_delta = status_bytes("VmRSS:").saturating_sub(rss_before);
    let index_bytes = index.memory_bytes() as u64;
    let peak = status_bytes("VmHWM:");
    let mut joins = Vec::new();
    let n = entries.len();
    if k == 3 && n <= options.join_max {
        for &threads in &options.join_threads {
            if threads == 1 && n > options.join_single_max {
                continue;
            }
            joins.push(join_json(&index, threads)?);
        }
    }
    Ok(format!(
        "{{\"k\": {k}, \"blocks\": {}, \"build_seconds\": {build_seconds:.4}, \
         \"index_bytes\": {index_bytes}, \"bytes_per_fingerprint\": {:.2}, \
         \"memory_source\": \"memory_bytes\", \"rss_delta_bytes\": {rss_delta}, \
         \"build_peak_rss_bytes\": {peak}, \
         \"near\": {}, \"random\": {}, \"self_join\": [{}]}}",
        index.blocks(),
        index_bytes as f64 / n.max(1) as f64,
        latency_json(&index, &near, k),
        latency_json(&index, &random, k),
        joins.join(", ")
    ))
}

fn run() -> Result<(), String> {
    let options = parse()?;
    let (fingerprints, source) = load(&options)?;
    let entries: Vec<(u64, u64)> = (0u64..).zip(fingerprints).collect();
    let distinct = {
        let mut sorted: Vec<u64> = entries.iter().map(|e| e.1).collect();
        sorted.sort_unstable();
        sorted.dedup();
        sorted.len()
    };
    let mut per_k = Vec::new();
    for &k in &options.ks {
        per_k.push(measure_k(&options, &entries, k)?);
    }
    let json = format!(
        "{{\"tool\": \"neardup\", \"source\": {:?}, \"n\": {}, \"distinct\": {distinct}, \
         \"threads\": {}, \"results\": [{}]}}",
        source,
        entries.len(),
        rayon::current_num_threads(),
        per_k.join(", ")
    );
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{json}").map_err(|e| e.to_string())
}
