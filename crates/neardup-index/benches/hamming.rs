//! The exact Hamming index on random 64-bit fingerprints: build, single queries at k = 3
//! and k = 10, the all-pairs self-join at k = 3 (2M) and k = 10 (200k), the 128-bit join,
//! and the `HammingJoin` generator on a template flood. `main` prints the bytes per stored
//! fingerprint of the 2M indexes first.
//!
//! ```sh
//! cargo bench -p neardup-index --bench hamming
//! ```
//! Random fingerprints are the easy case (no bucket skew); issue 8's benchmark adds
//! fingerprints of real text and the peers.

use std::sync::OnceLock;

use divan::Bencher;
use neardup_index::{
    self_join_128, CandidateGenerator, CandidateLimits, HammingIndex, HammingJoin,
};

fn main() {
    for k in [3, 10] {
        let index = index(k);
        let bytes = index.memory_bytes() as f64 / index.len() as f64;
        eprintln!("2M fingerprints, k = {k}: {bytes:.2} bytes per fingerprint");
        print_query_percentiles(index, k);
    }
    divan::main();
}

/// Median and 99th percentile of single queries (divan reports the mean and the extremes).
fn print_query_percentiles(index: &HammingIndex, k: u32) {
    let queries: Vec<u64> = entries(5000).iter().map(|e| e.1 ^ 0b101).collect();
    let mut times: Vec<std::time::Duration> = (queries.iter())
        .map(|&query| {
            let start = std::time::Instant::now();
            divan::black_box(index.query(query, k).unwrap());
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    eprintln!("  query k = {k}: p50 {:?}, p99 {:?}", at(0.5), at(0.99));
}

/// `n` fingerprints from splitmix64 (a fixed workload, not a test oracle), with ids.
fn entries(n: usize) -> Vec<(u64, u64)> {
    let mut state = 0x1234_5678_9abc_def0u64;
    (0..n as u64)
        .map(|id| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (id, z ^ (z >> 31))
        })
        .collect()
}

const SIZE: usize = 2_000_000;

fn index(max_distance: u32) -> &'static HammingIndex {
    static K3: OnceLock<HammingIndex> = OnceLock::new();
    static K10: OnceLock<HammingIndex> = OnceLock::new();
    let cell = if max_distance == 3 { &K3 } else { &K10 };
    cell.get_or_init(|| HammingIndex::build(&entries(SIZE), max_distance, None).unwrap())
}

#[divan::bench(args = [3, 10], sample_count = 5)]
fn build_2m(bencher: Bencher, max_distance: u32) {
    let entries = entries(SIZE);
    bencher.bench(|| HammingIndex::build(&entries, max_distance, None).unwrap());
}

/// One query (a stored fingerprint with two bits flipped) against 2 million.
#[divan::bench(args = [3, 10])]
fn query_2m(bencher: Bencher, k: u32) {
    let index = index(k);
    let queries: Vec<u64> = entries(1000).iter().map(|e| e.1 ^ 0b101).collect();
    let mut next = 0;
    bencher.bench_local(|| {
        next = (next + 1) % queries.len();
        index.query(queries[next], k).unwrap().len()
    });
}

#[divan::bench(sample_count = 3)]
fn self_join_2m_k3(bencher: Bencher) {
    let index = index(3);
    bencher.bench(|| index.self_join(3).unwrap().len());
}

#[divan::bench(sample_count = 3)]
fn self_join_200k_k10(bencher: Bencher) {
    let index = HammingIndex::build(&entries(200_000), 10, None).unwrap();
    bencher.bench(|| index.self_join(10).unwrap().len());
}

/// 1M random 128-bit fingerprints at k = 6 (each half joined at 3).
#[divan::bench(sample_count = 3)]
fn self_join_128_1m_k6(bencher: Bencher) {
    let halves = entries(2_000_000);
    let fingerprints: Vec<u128> = (halves.chunks(2))
        .map(|pair| (u128::from(pair[0].1) << 64) | u128::from(pair[1].1))
        .collect();
    bencher.bench(|| self_join_128(&fingerprints, 6).unwrap().len());
}

/// A template flood: 200k fingerprints within 2 bits of one value (0, 1 or 2 bits flipped),
/// radius 3, default limits (bucket cap 1000, budget 32).
#[divan::bench(sample_count = 3)]
fn hamming_join_flood_200k(bencher: Bencher) {
    let centre = 0x5DEE_CE66_D1CE_4E5Bu64;
    let flood: Vec<(u32, u64, u32)> = (entries(200_000).into_iter())
        .map(|(id, random)| {
            let flips = [1u64 << (random >> 58), 1u64 << ((random >> 52) & 63)];
            let flipped = (random % 3) as usize;
            let fingerprint = flips.iter().take(flipped).fold(centre, |fp, f| fp ^ f);
            (id as u32, fingerprint, 3)
        })
        .collect();
    bencher.bench(|| {
        let join = HammingJoin::new(flood.clone());
        join.candidate_pairs(CandidateLimits::default()).0.len()
    });
}

/// `HammingJoin` on 1M random fingerprints with radii 3 to 6 (ordinary input).
#[divan::bench(sample_count = 3)]
fn hamming_join_1m_mixed_radii(bencher: Bencher) {
    let documents: Vec<(u32, u64, u32)> = (entries(1_000_000).into_iter())
        .map(|(id, fingerprint)| (id as u32, fingerprint, 3 + (fingerprint % 4) as u32))
        .collect();
    bencher.bench(|| {
        let join = HammingJoin::new(documents.clone());
        join.candidate_pairs(CandidateLimits::default()).0.len()
    });
}
