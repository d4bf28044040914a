//! What the crowd check ([`super::common`]) hands the candidate stage ([`super::candidates`])
//! about the leaders' keys: the gathered `(key, leader)` entries, the leaders that have a key,
//! and the exact-only leaders left out. Both stages use these; neither owns them.

use neardup_index::ExternalKeys;

/// The crowd check's `(key, leader)` entries of every leader's distinct keys, sorted, for the
/// candidate stage to pair instead of gathering the keys again.
pub(crate) enum GatheredKeys<'d> {
    /// The `(key, rank)` entries of the keys two leaders or more may share (ranks, not
    /// documents: the candidate stage pairs ranks), sorted in runs in the spill directory,
    /// and the leaders with a key.
    Spilled(ExternalKeys<'d>, Keyed),
    /// In memory: the entries of the keys that two leaders or more share (the others pair
    /// nothing), sorted by key then leader, and the leaders with a key.
    Held {
        /// The shared keys' entries.
        entries: Vec<(u64, u32)>,
        /// The leaders that have a key at all.
        keyed: Keyed,
    },
}

/// The documents that have a key at all: one bit a document.
pub(crate) struct Keyed(Vec<u64>);

impl Keyed {
    /// None of `documents` documents.
    pub(crate) fn new(documents: usize) -> Keyed {
        Keyed(vec![0; documents.div_ceil(64)])
    }

    /// Adds `document`.
    pub(crate) fn insert(&mut self, document: u32) {
        self.0[document as usize / 64] |= 1 << (document % 64);
    }

    /// The documents with a key, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (self.0.iter().enumerate()).flat_map(|(word, &bits)| {
            (0..64u32)
                .filter(move |bit| bits & (1 << bit) != 0)
                .map(move |bit| word as u32 * 64 + bit)
        })
    }
}

/// The ranks of the exact-only leaders, which take part in exact-copy groups only: a bitmap
/// by rank (2.5 MB at 20 million documents), looked up once an entry of the spilled key runs
/// where a table by document missed the cache.
pub(crate) struct ExcludedRanks(Vec<u64>);

impl ExcludedRanks {
    /// The ranks of the documents `exact_only` flags.
    pub(crate) fn new(exact_only: &[bool], rank: &[u32]) -> ExcludedRanks {
        let mut bits = vec![0u64; rank.len().div_ceil(64)];
        for (document, _) in exact_only.iter().enumerate().filter(|(_, &only)| only) {
            let ranked = rank[document] as usize;
            bits[ranked / 64] |= 1 << (ranked % 64);
        }
        ExcludedRanks(bits)
    }

    /// `ranked`, unless it is left out.
    #[inline]
    pub(crate) fn map(&self, ranked: u32) -> Option<u32> {
        let bit = self.0[ranked as usize / 64] >> (ranked % 64) & 1;
        (bit == 0).then_some(ranked)
    }
}
