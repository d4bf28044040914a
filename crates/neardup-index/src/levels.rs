//! The frozen levels of an online index, shared behind [`Arc`]: a merge takes a snapshot of
//! the levels it replaces ([`Levels::merge`]), is built from it on another thread while
//! queries and inserts go on, and is swapped in afterwards ([`Levels::install`]). Removals
//! and retention drops made meanwhile are not lost: the levels are immutable, so a removed
//! document is recorded here and skipped by queries ([`Levels::is_gone`]) until a merge
//! leaves it out.

use std::sync::Arc;

use hashbrown::HashSet;

/// A level is merged into the ones before it while each of those is at most this many times
/// the size merged so far: sizes fall geometrically, a query reads O(log n) levels and each
/// document is rebuilt O(log n) times.
pub const LEVEL_FANOUT: usize = 4;

/// What [`Levels`] needs to know of a level.
pub trait Level {
    /// The documents it holds (removed ones included until a merge leaves them out).
    fn docs(&self) -> usize;

    /// Whether it holds document `seq`.
    fn holds(&self, seq: u64) -> bool;

    /// The documents it holds below `seq`.
    fn docs_below(&self, seq: u64) -> usize;
}

/// A frozen level and the range of sequence numbers it holds.
#[derive(Debug)]
struct Frozen<L> {
    level: Arc<L>,
    first: u64,
    last: u64,
    /// Its documents below the floor (forgotten, still held).
    below: usize,
}

/// Frozen levels, oldest first, with the removals they still hold.
#[derive(Debug)]
pub struct Levels<L> {
    frozen: Vec<Frozen<L>>,
    /// Documents removed from a frozen level since its last merge.
    removed: HashSet<u64, foldhash::fast::FixedState>,
    /// Documents below are forgotten (a retention drop).
    floor: u64,
}

impl<L> Default for Levels<L> {
    fn default() -> Self {
        Levels {
            frozen: Vec::new(),
            removed: HashSet::default(),
            floor: 0,
        }
    }
}

/// A merge to build: the levels it replaces (oldest first) and what it leaves out.
#[derive(Debug)]
pub struct Merge<L> {
    levels: Vec<Arc<L>>,
    first: u64,
    last: u64,
    /// The removals within the levels when the merge was planned, ascending.
    removed: Vec<u64>,
    floor: u64,
}

impl<L> Merge<L> {
    /// The levels to merge, oldest first.
    pub fn levels(&self) -> &[Arc<L>] {
        &self.levels
    }

    /// Whether the merged level leaves `seq` out.
    pub fn is_gone(&self, seq: u64) -> bool {
        seq < self.floor || self.removed.binary_search(&seq).is_ok()
    }

    /// The lowest sequence number the merged level can hold.
    pub fn first(&self) -> u64 {
        self.first.max(self.floor)
    }

    /// The highest sequence number the merged level can hold.
    pub fn last(&self) -> u64 {
        self.last
    }
}

impl<L: Level> Levels<L> {
    /// Adds the newest frozen level, holding the documents `first..=last`.
    pub fn push(&mut self, level: L, first: u64, last: u64) {
        let below = match first < self.floor {
            true => level.docs_below(self.floor),
            false => 0,
        };
        self.frozen.push(Frozen {
            level: Arc::new(level),
            first,
            last,
            below,
        });
    }

    /// The highest sequence number a frozen level holds, if any.
    pub fn last(&self) -> Option<u64> {
        self.frozen.last().map(|f| f.last)
    }

    /// The frozen levels, oldest first, each with the lowest and highest sequence numbers
    /// it may hold.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64, &Arc<L>)> {
        self.frozen.iter().map(|f| (f.first, f.last, &f.level))
    }

    /// The frozen levels, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &L> {
        self.frozen.iter().map(|f| f.level.as_ref())
    }

    /// The number of frozen levels.
    pub fn len(&self) -> usize {
        self.frozen.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.frozen.is_empty()
    }

    /// The documents the levels hold, less those removed or forgotten.
    pub fn docs(&self) -> usize {
        let held: usize = self.frozen.iter().map(|f| f.level.docs() - f.below).sum();
        held.saturating_sub(self.removed.len())
    }

    /// Whether a query must skip `seq`: removed, or below the retention floor.
    #[inline]
    pub fn is_gone(&self, seq: u64) -> bool {
        seq < self.floor || (!self.removed.is_empty() && self.removed.contains(&seq))
    }

    /// True when no document needs skipping (queries then check nothing).
    #[inline]
    pub fn all_live(&self) -> bool {
        self.floor == 0 && self.removed.is_empty()
    }

    /// The retention floor: documents below it are forgotten.
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// The documents removed from frozen levels since their last merge, in no set order.
    pub fn removed(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.removed.iter().copied()
    }

    /// Records the removal of `seq`; false when no frozen level holds its range, or it was
    /// removed already.
    pub fn remove(&mut self, seq: u64) -> bool {
        let held =
            (self.frozen.iter()).any(|f| (f.first..=f.last).contains(&seq) && f.level.holds(seq));
        held && seq >= self.floor && self.removed.insert(seq)
    }

    /// Forgets every document below `seq`: levels wholly below are dropped, the others skip
    /// them until their next merge.
    pub fn forget_below(&mut self, seq: u64) {
        self.floor = self.floor.max(seq);
        let floor = self.floor;
        self.frozen.retain(|f| f.last >= floor);
        for f in self.frozen.iter_mut().filter(|f| f.first < floor) {
            f.below = f.level.docs_below(floor);
        }
        self.removed.retain(|&removed| removed >= floor);
    }

    /// The merge due, if any: the newest frozen level with the ones before it while each
    /// is at most [`LEVEL_FANOUT`] times the size merged so far.
    pub fn merge(&self) -> Option<Merge<L>> {
        let mut size = self.frozen.last()?.level.docs();
        let mut count = 1;
        for f in self.frozen.iter().rev().skip(1) {
            if f.level.docs() > LEVEL_FANOUT * size {
                break;
            }
            size += f.level.docs();
            count += 1;
        }
        if count < 2 {
            return None;
        }
        let taken = &self.frozen[self.frozen.len() - count..];
        let (first, last) = (taken[0].first, taken[count - 1].last);
        let mut removed: Vec<u64> = (self.removed.iter())
            .copied()
            .filter(|s| (first..=last).contains(s))
            .collect();
        removed.sort_unstable();
        Some(Merge {
            levels: taken.iter().map(|f| Arc::clone(&f.level)).collect(),
            first,
            last,
            removed,
            floor: self.floor,
        })
    }

    /// Puts `merged`, built from `merge`, in place of its levels; false (nothing changed)
    /// when they are no longer all there (a retention drop took one meanwhile).
    pub fn install(&mut self, merge: Merge<L>, merged: L) -> bool {
        let Some(at) = (self.frozen.iter()).position(|f| Arc::ptr_eq(&f.level, &merge.levels[0]))
        else {
            return false;
        };
        let count = merge.levels.len();
        let same = self.frozen.len() >= at + count
            && (self.frozen[at..at + count].iter())
                .zip(&merge.levels)
                .all(|(f, l)| Arc::ptr_eq(&f.level, l));
        if !same {
            return false;
        }
        let below = merged.docs_below(self.floor);
        let replacement = (merged.docs() > below).then(|| Frozen {
            level: Arc::new(merged),
            first: merge.first(),
            last: merge.last,
            below,
        });
        self.frozen.splice(at..at + count, replacement);
        for seq in &merge.removed {
            self.removed.remove(seq);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Docs(usize);

    impl Level for Docs {
        fn docs(&self) -> usize {
            self.0
        }

        fn holds(&self, _seq: u64) -> bool {
            true
        }

        fn docs_below(&self, _seq: u64) -> usize {
            0
        }
    }

    fn levels(sizes: &[usize]) -> Levels<Docs> {
        let mut levels = Levels::default();
        let mut next = 0u64;
        for &size in sizes {
            levels.push(Docs(size), next, next + size as u64 - 1);
            next += size as u64;
        }
        levels
    }

    #[test]
    fn merges_follow_the_fanout() {
        assert!(levels(&[100]).merge().is_none());
        assert!(levels(&[100, 10]).merge().is_none());
        let merge = levels(&[1000, 30, 10, 10]).merge().unwrap();
        assert_eq!(merge.levels().len(), 3);
        assert_eq!(merge.first(), 1000);
    }

    #[test]
    fn an_install_replaces_the_levels_and_keeps_later_removals() {
        let mut l = levels(&[10, 10]);
        assert!(l.remove(3));
        assert!(!l.remove(3));
        assert!(!l.remove(99));
        let merge = l.merge().unwrap();
        assert!(merge.is_gone(3) && !merge.is_gone(4));
        assert!(l.remove(15));
        assert!(l.install(merge, Docs(18)));
        assert_eq!(l.len(), 1);
        assert!(!l.is_gone(3), "the merge left it out");
        assert!(l.is_gone(15), "removed while the merge was built");
        assert_eq!(l.docs(), 17);
    }

    #[test]
    fn a_merge_whose_levels_were_dropped_is_not_installed() {
        let mut l = levels(&[10, 10]);
        let merge = l.merge().unwrap();
        l.forget_below(10);
        assert!(l.is_gone(9) && !l.is_gone(10));
        assert!(!l.install(merge, Docs(20)));
        assert_eq!(l.len(), 1);
    }
}
