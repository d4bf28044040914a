//! Memory of the candidate generators on hostile inputs, measured by a counting allocator
//! (issue 28): bytes, not seconds, so the bounds hold on any machine.
//!
//! The tests of this binary run one at a time (a lock), so that the peak one of them sees is
//! its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use neardup_index::{
    pass_join_within, CandidateGenerator, CandidateLimits, EditBound, JoinBudget, SharedKeyTable,
};

/// The system allocator, counting the bytes held and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only
// observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let held = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(held, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(pointer, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes `work` held at once beyond what was held when it started.
fn peak_of<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let start = HELD.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    let result = work();
    (result, PEAK.load(Ordering::Relaxed).saturating_sub(start))
}

/// `documents` documents with 8 keys each drawn from 12 keys: buckets of about 2,500
/// documents, over the bucket cap, sharing most keys with each other (a template flood as
/// the `segments` and `sentences` methods key it).
fn flood_entries(documents: u32) -> Vec<(u64, u32)> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut entries = Vec::with_capacity(documents as usize * 8);
    for document in 0..documents {
        for _ in 0..8 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            entries.push((state % 12, document));
        }
    }
    entries
}

/// Issue 28, item 6: `dedup --method segments` on a template flood gathered every anchor pair
/// of every bucket (up to `bucket_cap` per key and document) before the budget cut them: 401
/// MB at 10,000 documents, an abort asking for 4 GB at 100,000.
#[test]
fn shared_key_flood_does_not_gather_every_bucket_pair() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let documents = 5000;
    let entries = flood_entries(documents);
    let limits = CandidateLimits::default();
    let ((pairs, stats), peak) =
        peak_of(|| SharedKeyTable::new(entries, 4).candidate_pairs(limits));
    // The buckets hold 24 million anchor pairs (190 MB packed) ...
    assert!(stats.raw_pairs > 20_000_000, "{stats:?}");
    // ... but the answer stays within the budget, and so does the memory: the entries and
    // their index (about 40,000 entries), the kept pairs, and one merge per thread.
    let budget = documents as usize * limits.candidate_budget;
    assert!(pairs.len() <= budget, "{} pairs", pairs.len());
    assert!(stats.budget_hits > 4000, "{stats:?}");
    assert!(peak < 8 << 20, "peak {peak} bytes");
}

/// Issue 28, item 7: `dedup --method join --measure edit` on one 50 MB document aborted at
/// 3.9 GB: Pass-Join kept a hash map and a list per possible length up to the longest
/// sequence (about 70 bytes a character, even for lengths no sequence has).
#[test]
fn edit_join_of_one_long_sequence_holds_memory_linear_in_its_segments() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let long: Vec<u32> = (0..1_000_000u32).map(|i| i % 5000).collect();
    let sequences = vec![long, vec![1, 2, 3]];
    let ((pairs, cut, over), peak) =
        peak_of(|| pass_join_within(&sequences, EditBound::Absolute(8), JoinBudget::UNLIMITED));
    assert_eq!((pairs.len(), cut, over), (0, 0, false));
    // The sequences are the caller's (4 MB); the join's own structures are a few entries per
    // segment and a histogram per sequence.
    assert!(peak < 1 << 20, "peak {peak} bytes");
}
