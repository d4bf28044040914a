//! A hash table in shards, for the per-document tables of a large corpus.
//!
//! A hash table grows by doubling: for a moment it holds its old table and its new one,
//! half again the memory it ends with (a table of 20 million ids takes about 170 MB and held
//! 250 MB while it grew). [`ShardedTable`] splits its entries over [`SHARDS`] tables by bits
//! of their hash, so each grows on its own and the moment of growth holds one shard's old
//! table beside the rest: the peak is the table's size, not one and a half times it.

use hashbrown::hash_table::{Entry, HashTable};

/// Shards of a [`ShardedTable`].
pub const SHARDS: usize = 256;

/// A hash table whose entries are spread over [`SHARDS`] shards by bits 32 to 39 of their
/// hash (bits that neither the position in a shard, the low bits, nor the tag kept for
/// probing, the top 7, depend on).
#[derive(Debug, Clone)]
pub struct ShardedTable<T> {
    shards: Vec<HashTable<T>>,
}

impl<T> Default for ShardedTable<T> {
    fn default() -> ShardedTable<T> {
        ShardedTable {
            shards: (0..SHARDS).map(|_| HashTable::new()).collect(),
        }
    }
}

impl<T> ShardedTable<T> {
    /// An empty table (no shard allocates until it takes an entry).
    pub fn new() -> ShardedTable<T> {
        ShardedTable::default()
    }

    fn shard(hash: u64) -> usize {
        (hash >> 32) as usize % SHARDS
    }

    /// The entry of hash `hash` for which `eq` holds.
    pub fn find(&self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<&T> {
        self.shards[Self::shard(hash)].find(hash, eq)
    }

    /// Adds `value`, of hash `hash`, which the table must not hold (`hasher` gives an
    /// entry's hash when its shard grows).
    pub fn insert_unique(&mut self, hash: u64, value: T, hasher: impl Fn(&T) -> u64) {
        self.shards[Self::shard(hash)].insert_unique(hash, value, hasher);
    }

    /// Adds `value`, of hash `hash`, unless an entry for which `eq` holds is there: whether
    /// it was added.
    pub fn insert_new(
        &mut self,
        hash: u64,
        value: T,
        eq: impl FnMut(&T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) -> bool {
        match self.shards[Self::shard(hash)].entry(hash, eq, hasher) {
            Entry::Occupied(_) => false,
            Entry::Vacant(vacant) => {
                vacant.insert(value);
                true
            }
        }
    }

    /// Room for `entries` entries in all, spread evenly (hashes are): each shard is sized
    /// once, for its share and a margin, so that it need not grow while they come.
    pub fn reserve(&mut self, entries: usize, hasher: impl Fn(&T) -> u64) {
        let share = entries / SHARDS;
        // Hashes are not spread exactly evenly: a shard takes about its share plus a few
        // standard deviations (the square root of the share).
        let margin = 4 * (share as f64).sqrt() as usize + 16;
        for shard in &mut self.shards {
            shard.reserve((share + margin).saturating_sub(shard.len()), &hasher);
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.shards.iter().map(HashTable::len).sum()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(HashTable::is_empty)
    }

    /// Bytes the shards' tables take.
    pub fn allocation_size(&self) -> usize {
        self.shards.iter().map(HashTable::allocation_size).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(value: u64) -> u64 {
        crate::hash::mix64(value)
    }

    #[test]
    fn holds_what_a_set_holds() {
        let mut table: ShardedTable<u64> = ShardedTable::new();
        let mut set = std::collections::HashSet::new();
        for value in (0..50_000u64).map(|v| v % 30_011) {
            let hash = mix(value);
            let added = table.insert_new(hash, value, |&v| v == value, |&v| mix(v));
            assert_eq!(added, set.insert(value));
        }
        assert_eq!(table.len(), set.len());
        for value in 0..40_000u64 {
            let found = table.find(mix(value), |&v| v == value).copied();
            assert_eq!(found, set.get(&value).copied());
        }
        assert!(!table.is_empty());
        assert!(ShardedTable::<u64>::new().is_empty());
    }

    #[test]
    fn reserved_shards_do_not_grow() {
        let mut table: ShardedTable<u64> = ShardedTable::new();
        table.reserve(100_000, |&v| mix(v));
        let reserved = table.allocation_size();
        for value in 0..100_000u64 {
            table.insert_unique(mix(value), value, |&v| mix(v));
        }
        assert_eq!(table.len(), 100_000);
        assert_eq!(table.allocation_size(), reserved);
    }
}
