//! Single budgeted queries against one dense Hamming level of `n` random fingerprints at
//! `k = 3` (4 blocks of 16 bits): the service's largest level. Prints the time of the build
//! (as a merge makes it: entries sorted by id) and the median time of a query over 5 rounds
//! of 200,000.
//!
//! ```sh
//! cargo run --release -p neardup-index --example dense_probe -- 40000000
//! ```

use neardup_index::HammingIndex;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(40_000_000, |a| a.parse().expect("a count"));
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let entries: Vec<(u64, u64)> = (0..n as u64).map(|id| (id, next())).collect();
    let started = std::time::Instant::now();
    let index = HammingIndex::build_dense(&entries, 3, Some(4)).expect("an index");
    let build = started.elapsed().as_secs_f64();
    let queries: Vec<u64> = (0..200_000)
        .map(|i| entries[(i * 7919) % n].1 ^ 0b101)
        .collect();
    let mut rounds = Vec::new();
    let mut found = 0;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        for &query in &queries {
            found += index.query_within(query, 3, 128).expect("k fits").0.len();
        }
        rounds.push(start.elapsed().as_secs_f64() / queries.len() as f64 * 1e9);
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "n {n}: built in {build:.2} s, {:.0} ns a query (median of 5), {found} found",
        rounds[2]
    );
}
