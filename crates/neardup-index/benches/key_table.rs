//! Candidate pairs from a key table of random keys, the shape of LSH band keys: documents x
//! bands entries, and a key space that makes ordinary buckets (a few documents each) or a
//! flood (every document in crowded buckets, where the candidate budget cuts in).
//!
//! ```sh
//! cargo bench -p neardup-index --bench key_table
//! ```

use divan::counter::ItemsCount;
use divan::Bencher;
use neardup_index::{CandidateLimits, KeyTable};

fn main() {
    divan::main();
}

/// `documents` documents with 16 keys each from a space of `space` keys per band.
fn entries(documents: u32, space: u64) -> Vec<(u64, u32)> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut entries = Vec::with_capacity(documents as usize * 16);
    for document in 0..documents {
        for band in 0..16u64 {
            // splitmix64: a fixed, well-mixed sequence (not a test oracle, only a workload).
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            entries.push(((band << 48) | ((z ^ (z >> 31)) % space), document));
        }
    }
    entries
}

/// 100,000 documents whose band keys mostly differ: buckets of one or two documents.
#[divan::bench(sample_count = 10)]
fn ordinary(bencher: Bencher) {
    let entries = entries(100_000, 200_000);
    bencher
        .counter(ItemsCount::new(entries.len()))
        .with_inputs(|| KeyTable::from_entries(entries.clone()))
        .bench_values(|table| table.candidate_pairs_with_stats(CandidateLimits::default()));
}

/// 20,000 documents in buckets of about 400: 8 million pairs without the budget.
#[divan::bench(sample_count = 10)]
fn flood(bencher: Bencher) {
    let entries = entries(20_000, 50);
    bencher
        .counter(ItemsCount::new(entries.len()))
        .with_inputs(|| KeyTable::from_entries(entries.clone()))
        .bench_values(|table| table.candidate_pairs_with_stats(CandidateLimits::default()));
}
