//! The online index: one document at a time, by 64-bit id.
//!
//! The service checks each new text against the stored ones and then stores it; documents
//! leave when their retention window ends. [`OnlineIndex`] is that contract; [`MemoryIndex`]
//! implements it in memory (a reference and a cache), and the service implements it on disk
//! with the same tests.

use std::fmt;

use hashbrown::hash_map::Entry;
use hashbrown::HashMap;

/// An id that is already in the index: ids are never overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DuplicateId(pub u64);

impl fmt::Display for DuplicateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "id {} is already stored", self.0)
    }
}

impl std::error::Error for DuplicateId {}

/// Insert, probe and remove documents by id, under bucket keys.
pub trait OnlineIndex {
    /// Stores `id` under `keys` (repeats ignored).
    ///
    /// # Errors
    /// [`DuplicateId`] when `id` is stored already; the index is unchanged.
    fn insert(&mut self, id: u64, keys: &[u64]) -> Result<(), DuplicateId>;

    /// Puts in `out` the stored ids sharing at least one of `keys`, ascending, without
    /// repeats (`out` is cleared first).
    fn probe(&self, keys: &[u64], out: &mut Vec<u64>);

    /// Removes `id`; false when it was not stored.
    fn remove(&mut self, id: u64) -> bool;

    /// Number of stored ids.
    fn len(&self) -> usize;

    /// True when nothing is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An [`OnlineIndex`] in memory: a hash map of buckets, and each id's keys for removal.
#[derive(Debug, Clone, Default)]
pub struct MemoryIndex {
    buckets: HashMap<u64, Vec<u64>>,
    keys: HashMap<u64, Box<[u64]>>,
}

impl MemoryIndex {
    /// An empty index.
    pub fn new() -> MemoryIndex {
        MemoryIndex::default()
    }

    /// Removes every id below `seq` at once (a retention drop): each bucket loses its
    /// members below `seq`, in one pass over the buckets, however large (a flood's bucket
    /// would make [`OnlineIndex::remove`] one id at a time quadratic).
    pub fn forget_below(&mut self, seq: u64) {
        self.keys.retain(|&id, _| id >= seq);
        self.buckets.retain(|_, bucket| {
            bucket.retain(|&id| id >= seq);
            !bucket.is_empty()
        });
    }

    /// Every `(key, id)` stored, in no set order.
    pub fn pairs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (self.buckets.iter()).flat_map(|(&key, ids)| ids.iter().map(move |&id| (key, id)))
    }

    /// The lowest and highest ids stored, if any.
    pub fn id_range(&self) -> Option<(u64, u64)> {
        let first = self.keys.keys().min()?;
        Some((*first, *self.keys.keys().max()?))
    }

    /// Approximate heap bytes held: a bucket entry and a key per stored key, and an entry
    /// of each map per id and per bucket (counted as filled, not by capacity, so that the
    /// estimate grows smoothly).
    pub fn memory_bytes(&self) -> usize {
        let stored: usize = self.keys.values().map(|keys| keys.len()).sum();
        stored * 16 + (self.keys.len() + self.buckets.len()) * 48
    }
}

/// Buckets of ids by key, each read from its oldest member: what the budgeted probes of an
/// online index read ([`MemoryIndex`], and [`crate::KeyIndex`]'s levels).
pub trait Buckets {
    /// Appends to `out` at most `limit` members of `key`'s bucket, oldest first; returns the
    /// number of members the bucket has (at least those read).
    fn read_bucket(&self, key: u64, limit: usize, out: &mut Vec<u64>) -> usize;

    /// [`OnlineIndex::probe`] within a budget: puts in `out` (cleared first) at most
    /// `limit` ids, ascending, without repeats, read from the first `limit` members of each
    /// bucket of `keys` (buckets keep insertion order: with ids inserted in increasing order,
    /// as the service's sequence numbers are, `out` holds the `limit` lowest ids sharing a
    /// key). Returns an estimate of how many were left out: the most members one bucket had
    /// past the first `limit` (at least that many ids were not read), plus the ids read past
    /// `limit`; 0 when nothing was.
    ///
    /// A query then reads at most `keys.len() x limit` members whatever the buckets hold: a
    /// template flood, where every stored text shares a key with every new one, costs a
    /// bounded amount per query instead of growing with the index.
    fn probe_within(&self, keys: &[u64], limit: usize, out: &mut Vec<u64>) -> u64 {
        out.clear();
        let mut left_out = 0;
        for &key in keys {
            let size = self.read_bucket(key, limit, out);
            left_out = left_out.max(size.saturating_sub(limit) as u64);
        }
        within_budget(out, limit, left_out)
    }

    /// The ids of `keys`' buckets, the smallest buckets first, up to `limit` in all (each
    /// bucket read from its oldest), ascending; returns an estimate of the ids left out. A
    /// priority key shared by a crowd (a value of a template's filling that turned frequent
    /// since the model was learned) then does not push out the few texts of a rarer one,
    /// where a notice's copies are.
    fn probe_smallest_first(&self, keys: &[u64], limit: usize, out: &mut Vec<u64>) -> u64 {
        out.clear();
        let mut sized: Vec<(usize, u64)> = (keys.iter())
            .map(|&key| (self.read_bucket(key, 0, out), key))
            .filter(|&(size, _)| size > 0)
            .collect();
        sized.sort_by_key(|&(size, _)| size);
        let mut left_out = 0u64;
        for (size, key) in sized {
            let room = limit.saturating_sub(out.len());
            let read = self.read_bucket(key, room, out).min(room);
            left_out = left_out.max(size.saturating_sub(read) as u64);
            out.sort_unstable();
            out.dedup();
        }
        left_out
    }

    /// [`Buckets::probe_within`] under priority keys (keys with
    /// [`neardup_core::PRIORITY_KEY`] set, [`neardup_core::Join::PriorityKeys`]): the ids of
    /// the priority keys first, up to `limit`, then those of the other keys not among them,
    /// up to `limit` in all. A notice's copies, under its filling's priority keys, are then
    /// found even where its template's oldest fillings fill every ordinary bucket. `out` is
    /// ascending within each of the two parts; the estimate is the two parts' summed.
    ///
    /// The keys are looked up without their priority bit ([`without_priority`]), as they
    /// must be stored: so keys stored before priority keys existed, whose top bit is
    /// anybody's, still meet those of a new text.
    fn probe_priority_first(&self, keys: &[u64], limit: usize, out: &mut Vec<u64>) -> u64 {
        let (first, ordinary): (Vec<u64>, Vec<u64>) = keys
            .iter()
            .partition(|&&key| key >= neardup_core::PRIORITY_KEY);
        let (first, ordinary) = (without_priority(&first), without_priority(&ordinary));
        let mut left_out = self.probe_smallest_first(&first, limit, out);
        if ordinary.is_empty() {
            return left_out;
        }
        let mut others = Vec::new();
        left_out += self.probe_within(&ordinary, limit, &mut others);
        let kept = out.len();
        for id in others {
            if out[..kept].binary_search(&id).is_ok() {
                continue;
            }
            if out.len() == limit {
                left_out += 1;
                continue;
            }
            out.push(id);
        }
        left_out
    }
}

/// The end of a budgeted probe: `out` sorted, without repeats, cut to `limit` ids; returns
/// `left_out` plus the ids cut.
pub(crate) fn within_budget(out: &mut Vec<u64>, limit: usize, mut left_out: u64) -> u64 {
    out.sort_unstable();
    out.dedup();
    if out.len() > limit {
        left_out += (out.len() - limit) as u64;
        out.truncate(limit);
    }
    left_out
}

impl Buckets for MemoryIndex {
    fn read_bucket(&self, key: u64, limit: usize, out: &mut Vec<u64>) -> usize {
        let Some(bucket) = self.buckets.get(&key) else {
            return 0;
        };
        out.extend_from_slice(&bucket[..bucket.len().min(limit)]);
        bucket.len()
    }
}

/// `keys` with [`neardup_core::PRIORITY_KEY`] cleared: the buckets of a store under priority
/// keys (see [`MemoryIndex::probe_priority_first`]).
pub fn without_priority(keys: &[u64]) -> Vec<u64> {
    keys.iter()
        .map(|&key| key & !neardup_core::PRIORITY_KEY)
        .collect()
}

impl OnlineIndex for MemoryIndex {
    fn insert(&mut self, id: u64, keys: &[u64]) -> Result<(), DuplicateId> {
        let Entry::Vacant(slot) = self.keys.entry(id) else {
            return Err(DuplicateId(id));
        };
        let mut unique = keys.to_vec();
        unique.sort_unstable();
        unique.dedup();
        for &key in &unique {
            self.buckets.entry(key).or_default().push(id);
        }
        slot.insert(unique.into_boxed_slice());
        Ok(())
    }

    fn probe(&self, keys: &[u64], out: &mut Vec<u64>) {
        out.clear();
        for key in keys {
            if let Some(bucket) = self.buckets.get(key) {
                out.extend_from_slice(bucket);
            }
        }
        out.sort_unstable();
        out.dedup();
    }

    fn remove(&mut self, id: u64) -> bool {
        let Some(keys) = self.keys.remove(&id) else {
            return false;
        };
        for key in keys.iter() {
            if let Entry::Occupied(mut bucket) = self.buckets.entry(*key) {
                bucket.get_mut().retain(|&other| other != id);
                if bucket.get().is_empty() {
                    bucket.remove();
                }
            }
        }
        true
    }

    fn len(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64, Vec<u64>),
        Remove(u64),
        Probe(Vec<u64>),
    }

    fn op() -> impl Strategy<Value = Op> {
        let keys = || prop::collection::vec(0u64..20, 0..5);
        prop_oneof![
            (0u64..30, keys()).prop_map(|(id, keys)| Op::Insert(id, keys)),
            (0u64..30).prop_map(Op::Remove),
            keys().prop_map(Op::Probe),
        ]
    }

    proptest! {
        /// Any sequence of operations answers as a plain map of id -> keys would.
        #[test]
        fn matches_a_map_of_ids(ops in prop::collection::vec(op(), 0..80)) {
            let mut index = MemoryIndex::new();
            let mut model: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
            let mut found = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(id, keys) => {
                        let expected = if model.contains_key(&id) { Err(DuplicateId(id)) } else { Ok(()) };
                        model.entry(id).or_insert_with(|| keys.clone());
                        prop_assert_eq!(index.insert(id, &keys), expected);
                    }
                    Op::Remove(id) => prop_assert_eq!(index.remove(id), model.remove(&id).is_some()),
                    Op::Probe(keys) => {
                        index.probe(&keys, &mut found);
                        let expected: Vec<u64> = (model.iter())
                            .filter(|(_, stored)| stored.iter().any(|k| keys.contains(k)))
                            .map(|(&id, _)| id)
                            .collect();
                        prop_assert_eq!(&found, &expected);
                    }
                }
                prop_assert_eq!(index.len(), model.len());
            }
        }
    }

    proptest! {
        /// With ids inserted in increasing order, a budgeted probe is the unbounded one's
        /// first `limit` ids, and says when it left any out.
        #[test]
        fn a_budgeted_probe_keeps_the_lowest_ids(
            stored in prop::collection::vec(prop::collection::vec(0u64..8, 0..4), 0..60),
            removed in prop::collection::vec(0usize..60, 0..10),
            keys in prop::collection::vec(0u64..8, 0..4),
            limit in 1usize..12,
        ) {
            let mut index = MemoryIndex::new();
            for (id, keys) in stored.iter().enumerate() {
                index.insert(id as u64, keys).unwrap();
            }
            for id in removed {
                index.remove(id as u64);
            }
            let (mut all, mut some) = (Vec::new(), Vec::new());
            index.probe(&keys, &mut all);
            let left_out = index.probe_within(&keys, limit, &mut some);
            prop_assert_eq!(&some[..], &all[..all.len().min(limit)]);
            if all.len() > limit {
                prop_assert!(left_out > 0);
            }
            if left_out == 0 {
                prop_assert_eq!(&some, &all);
            }
        }
    }

    #[test]
    fn a_flooded_bucket_is_read_up_to_the_limit() {
        let mut index = MemoryIndex::new();
        for id in 0..10_000u64 {
            index.insert(id, &[7, id + 100]).unwrap();
        }
        let mut found = Vec::new();
        let left_out = index.probe_within(&[7, 1_000_000], 128, &mut found);
        assert_eq!(found, (0..128).collect::<Vec<u64>>());
        assert_eq!(left_out, 10_000 - 128);
    }

    #[test]
    fn priority_keys_are_read_first() {
        let mut index = MemoryIndex::new();
        for id in 0..10_000u64 {
            index.insert(id, &[7]).unwrap();
        }
        let copy = 5 | neardup_core::PRIORITY_KEY;
        index.insert(10_000, &without_priority(&[7, copy])).unwrap();
        let mut found = Vec::new();
        index.probe_within(&[7, 5], 128, &mut found);
        assert!(!found.contains(&10_000));
        let left_out = index.probe_priority_first(&[7, copy], 128, &mut found);
        assert_eq!(found.len(), 128);
        assert_eq!(found[0], 10_000);
        assert_eq!(found[1..], (0..127).collect::<Vec<u64>>());
        assert!(left_out >= 10_000 - 128, "{left_out}");
    }

    #[test]
    fn a_stored_id_is_not_overwritten() {
        let mut index = MemoryIndex::new();
        index.insert(u64::MAX, &[1, 2]).unwrap();
        let error = index.insert(u64::MAX, &[3]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("id {} is already stored", u64::MAX)
        );
        let mut found = Vec::new();
        index.probe(&[3], &mut found);
        assert!(found.is_empty());
        index.probe(&[2, 1], &mut found);
        assert_eq!(found, vec![u64::MAX]);
    }
}
