//! The exact Hamming index on random 64-bit fingerprints: build, single queries at k = 3
//! and k = 10, and the all-pairs self-join at k = 3.
//!
//! ```sh
//! cargo bench -p neardup-index --bench hamming
//! ```
//! Random fingerprints are the easy case (no bucket skew); issue 8's benchmark adds
//! fingerprints of real text and the peers.

use std::sync::OnceLock;

use divan::Bencher;
use neardup_index::HammingIndex;

fn main() {
    divan::main();
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
