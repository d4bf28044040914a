use rayon::prelude::*;

/// Sizes of the buckets seen by [`KeyTable::candidate_pairs_with_stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BucketStats {
    /// Buckets holding two documents or more.
    pub shared_buckets: u64,
    /// Documents in the largest bucket.
    pub largest_bucket: u64,
    /// Pairs emitted by buckets before deduplication.
    pub raw_pairs: u64,
    /// Buckets larger than the cap, whose members were paired with the first `cap` only.
    pub capped_buckets: u64,
}

/// Default largest bucket paired in full (see [`KeyTable::candidate_pairs_with_stats`]).
pub const DEFAULT_BUCKET_CAP: usize = 1000;

/// A batch table of `(key, document)` entries.
#[derive(Debug, Clone, Default)]
pub struct KeyTable {
    entries: Vec<(u64, u32)>,
}

impl KeyTable {
    /// An empty table.
    pub fn new() -> KeyTable {
        KeyTable::default()
    }

    /// A table from ready-made entries.
    pub fn from_entries(entries: Vec<(u64, u32)>) -> KeyTable {
        KeyTable { entries }
    }

    /// Adds the keys of `document`.
    pub fn insert(&mut self, document: u32, keys: &[u64]) {
        self.entries.extend(keys.iter().map(|&key| (key, document)));
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every pair `(a, b)` with `a < b` sharing at least one key, sorted, without repeats.
    pub fn candidate_pairs(self) -> Vec<(u32, u32)> {
        self.candidate_pairs_with_stats(usize::MAX).0
    }

    /// Candidate pairs with bucket statistics. A bucket of more than `cap` documents (for
    /// example a million one-line notifications from one template) is not paired in full,
    /// which would be quadratic: each of its members is paired with the `cap` first
    /// (lowest-numbered) members only, the *anchors*.
    pub fn candidate_pairs_with_stats(mut self, cap: usize) -> (Vec<(u32, u32)>, BucketStats) {
        let cap = cap.max(1);
        self.entries.par_sort_unstable();
        self.entries.dedup();
        let buckets: Vec<&[(u64, u32)]> = self
            .entries
            .chunk_by(|x, y| x.0 == y.0)
            .filter(|bucket| bucket.len() > 1)
            .collect();
        let stats = BucketStats {
            shared_buckets: buckets.len() as u64,
            largest_bucket: buckets.iter().map(|b| b.len() as u64).max().unwrap_or(0),
            raw_pairs: buckets.iter().map(|b| pair_count(b.len(), cap)).sum(),
            capped_buckets: buckets.iter().filter(|b| b.len() > cap).count() as u64,
        };
        let mut packed: Vec<u64> = buckets
            .par_iter()
            .flat_map_iter(|bucket| bucket_pairs(bucket, cap))
            .collect();
        packed.par_sort_unstable();
        packed.dedup();
        let pairs = packed
            .into_iter()
            .map(|p| ((p >> 32) as u32, p as u32))
            .collect();
        (pairs, stats)
    }
}

fn pair_count(size: usize, cap: usize) -> u64 {
    let (size, anchors) = (size as u64, size.min(cap) as u64);
    // Pairs among the anchors, plus each other member with every anchor.
    anchors * (anchors - 1) / 2 + (size - anchors) * anchors
}

/// The pairs of a bucket, packed `a << 32 | b` with `a < b` (entries are sorted by document):
/// every member with each of the first `cap` members.
fn bucket_pairs(bucket: &[(u64, u32)], cap: usize) -> impl Iterator<Item = u64> + '_ {
    let anchors = &bucket[..bucket.len().min(cap)];
    anchors.iter().enumerate().flat_map(move |(i, &(_, a))| {
        bucket[i + 1..]
            .iter()
            .map(move |&(_, b)| ((a as u64) << 32) | b as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slow reference: compare every pair's key sets.
    fn brute_force(keys: &[Vec<u64>]) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for a in 0..keys.len() {
            for b in a + 1..keys.len() {
                if keys[a].iter().any(|k| keys[b].contains(k)) {
                    pairs.push((a as u32, b as u32));
                }
            }
        }
        pairs
    }

    #[test]
    fn matches_brute_force_on_random_keys() {
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let keys: Vec<Vec<u64>> = (0..300)
            .map(|_| (0..4).map(|_| next() % 500).collect())
            .collect();
        let mut table = KeyTable::new();
        for (document, document_keys) in keys.iter().enumerate() {
            table.insert(document as u32, document_keys);
        }
        assert_eq!(table.candidate_pairs(), brute_force(&keys));
    }

    #[test]
    fn repeated_keys_of_one_document_make_no_self_pair() {
        let mut table = KeyTable::new();
        table.insert(3, &[1, 1, 1]);
        table.insert(5, &[1]);
        let (pairs, stats) = table.candidate_pairs_with_stats(DEFAULT_BUCKET_CAP);
        assert_eq!(pairs, vec![(3, 5)]);
        let expected = BucketStats {
            shared_buckets: 1,
            largest_bucket: 2,
            raw_pairs: 1,
            capped_buckets: 0,
        };
        assert_eq!(stats, expected);
    }

    #[test]
    fn oversized_buckets_pair_members_with_anchors_only() {
        let mut table = KeyTable::new();
        for document in 0..6 {
            table.insert(document, &[9]);
        }
        let (pairs, stats) = table.candidate_pairs_with_stats(2);
        // Anchors 0 and 1: (0, 1), then 0 and 1 with each of 2..6.
        assert_eq!(pairs.len(), 1 + 2 * 4);
        assert!(pairs.iter().all(|&(a, _)| a < 2));
        assert_eq!((stats.raw_pairs, stats.capped_buckets), (9, 1));
    }
}
