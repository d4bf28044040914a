//! The Hamming join of [`crate::HammingJoin`] cut into the steps a distributed engine runs
//! (the Spark path): a plan, rows to group by key, and the pairs of one group.
//!
//! # How
//!
//! As in the batch join, the documents of radius at least `k` are joined at distance `k` for
//! every distinct radius `k`, largest first, and a pair is kept by the pass of its smaller
//! radius. A pass cuts the 64 bits into `m` blocks; two fingerprints within `k` agree on some
//! block up to `r = floor(k / m)` bits. Each document gives, per block, one *stored* row
//! under its own block value and one *probe* row under every other value within `r` of it;
//! rows are grouped by `(block, value)`, and in a group every member meets the stored members
//! ranked before it. A pair is reported by the first block on which the two are within `r`
//! only, so the passes and blocks report each pair once, with no set of seen pairs.
//!
//! The batch join picks `m` for work in memory; a distributed one pays for every row it
//! shuffles, so [`distributed_passes`] weighs a row as [`ROW_COST`] comparisons: more, narrower
//! blocks probed within a smaller radius than the batch join would take.
//!
//! # Bounds
//!
//! In a group, a member stops after `cap` partners within the distance (a flood of
//! near-identical fingerprints costs `cap` comparisons a member and block) and after reading
//! [`READS_PER_CAP`]` x cap` stored members (a block value shared by many fingerprints that
//! differ elsewhere). Below both, the join is exact: every pair within the smaller of the two
//! radii, and no other.

use crate::hamming_blocks::{binomial, for_each_within, layout, Block};

/// What one shuffled row costs, in fingerprint comparisons, when [`distributed_passes`] picks
/// the blocks.
pub const ROW_COST: f64 = 30.0;

/// A member of a group reads at most this many times `cap` stored members.
pub const READS_PER_CAP: usize = 16;

/// The most values a probe enumerates per block: a plan never probes wider.
const MAX_PROBES: f64 = 4096.0;

/// A row of a group: `(rank, fingerprint, radius, stored)`.
pub type GroupMember = (u64, u64, u32, bool);

/// One pass of the join: the documents of radius at least `k`, cut into `blocks`, each probed
/// within `radius`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HammingPass {
    /// The distance of the pass (the smaller radius of the pairs it keeps).
    pub k: u32,
    /// The number of blocks.
    pub blocks: u32,
    /// The radius within which a block value is probed: `floor(k / blocks)`.
    pub radius: u32,
}

/// The passes of a join of documents by radius: `radii` holds `(radius, documents)` for
/// every distinct radius (radii above 64 count as 64). Largest radius first.
pub fn distributed_passes(radii: &[(u32, u64)]) -> Vec<HammingPass> {
    let mut distinct: Vec<(u32, u64)> = radii.iter().map(|&(r, n)| (r.min(64), n)).collect();
    distinct.sort_unstable_by_key(|d| std::cmp::Reverse(d.0));
    let mut passes: Vec<HammingPass> = Vec::new();
    let mut at_least = 0u64;
    for (index, &(k, documents)) in distinct.iter().enumerate() {
        at_least += documents;
        if distinct.get(index + 1).is_some_and(|next| next.0 == k) {
            continue;
        }
        let blocks = pass_blocks(k, at_least);
        passes.push(HammingPass {
            k,
            blocks,
            radius: k / blocks,
        });
    }
    passes
}

/// The number of blocks for a pass at distance `k` over `n` documents: the least estimated
/// cost of shuffling the rows ([`ROW_COST`] each) and comparing the members of neighbouring
/// groups, among the layouts whose probes stay under [`MAX_PROBES`] values a block.
fn pass_blocks(k: u32, n: u64) -> u32 {
    let n = n.max(2) as f64;
    let cost = |m: u32| {
        let width = 64 / m;
        let radius = (k / m).min(width);
        let probes: f64 = (0..=radius).map(|i| binomial(width, i)).sum();
        if probes > MAX_PROBES {
            return f64::INFINITY;
        }
        let rows = n * f64::from(m) * probes;
        let comparisons = f64::from(m) * n * n * probes / 2f64.powi(width as i32) / 2.0;
        rows * ROW_COST + comparisons
    };
    (1..=(k + 1).min(64))
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(1)
}

impl HammingPass {
    fn layout(&self) -> Vec<Block> {
        layout(self.blocks)
    }

    /// Calls `emit(block, value, stored)` for every row of a document with `fingerprint`:
    /// per block, the stored row of its own value, then a probe row of every other value
    /// within the radius.
    pub fn rows(&self, fingerprint: u64, mut emit: impl FnMut(u32, u64, bool)) {
        for (index, block) in self.layout().into_iter().enumerate() {
            let own = block.value(fingerprint);
            for_each_within(own, block.width, self.radius, &mut |value| {
                emit(index as u32, value, value == own);
            });
        }
    }

    /// The pairs `(a, b)` of ranks, `a < b`, that the group of `block` reports: `members`
    /// are `(rank, fingerprint, radius, stored)` of its rows, any order (ranks distinct). A
    /// member meets the stored members ranked before it, in rank order, until `cap` of them
    /// are within the distance or [`READS_PER_CAP`]` x cap` were read; a pair is reported
    /// when the two are within the smaller radius, that radius is this pass's `k`, and
    /// `block` is the first on which they are within the pass's radius.
    pub fn group_pairs(
        &self,
        block: u32,
        members: &mut [GroupMember],
        cap: usize,
        out: &mut Vec<(u64, u64)>,
    ) {
        let blocks = self.layout();
        members.sort_unstable_by_key(|m| m.0);
        let stored: Vec<(u64, u64, u32)> = (members.iter())
            .filter(|m| m.3)
            .map(|m| (m.0, m.1, m.2.min(64)))
            .collect();
        if stored.is_empty() {
            return;
        }
        let reads = cap.saturating_mul(READS_PER_CAP);
        for &(b, fb, rb, _) in members.iter() {
            let rb = rb.min(64);
            let (mut partners, mut read) = (0usize, 0usize);
            for &(a, fa, ra) in &stored {
                if a >= b || partners >= cap || read >= reads {
                    break;
                }
                read += 1;
                let distance = (fa ^ fb).count_ones();
                if distance > self.k {
                    continue;
                }
                partners += 1;
                if ra.min(rb) == self.k && first_block(&blocks, self.radius, fa, fb) == block {
                    out.push((a, b));
                }
            }
        }
    }
}

/// The first block on which `a` and `b` are within `radius`.
fn first_block(blocks: &[Block], radius: u32, a: u64, b: u64) -> u32 {
    (blocks.iter())
        .position(|block| (block.value(a) ^ block.value(b)).count_ones() <= radius)
        .map_or(u32::MAX, |p| p as u32)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    /// The whole distributed join in memory: rows grouped, groups paired.
    fn join(entries: &[(u64, u64, u32)], cap: usize) -> Vec<(u64, u64)> {
        let mut radii: HashMap<u32, u64> = HashMap::new();
        for e in entries {
            *radii.entry(e.2.min(64)).or_default() += 1;
        }
        let radii: Vec<(u32, u64)> = radii.into_iter().collect();
        let mut pairs = Vec::new();
        for pass in distributed_passes(&radii) {
            let mut groups: HashMap<(u32, u64), Vec<GroupMember>> = HashMap::new();
            for &(rank, fingerprint, radius) in entries.iter().filter(|e| e.2.min(64) >= pass.k) {
                pass.rows(fingerprint, |block, value, stored| {
                    groups.entry((block, value)).or_default().push((
                        rank,
                        fingerprint,
                        radius,
                        stored,
                    ));
                });
            }
            for ((block, _), mut members) in groups {
                pass.group_pairs(block, &mut members, cap, &mut pairs);
            }
        }
        pairs.sort_unstable();
        pairs
    }

    fn brute_force(entries: &[(u64, u64, u32)]) -> Vec<(u64, u64)> {
        let mut pairs = Vec::new();
        for x in entries {
            for y in entries {
                if x.0 < y.0 && (x.1 ^ y.1).count_ones() <= x.2.min(y.2).min(64) {
                    pairs.push((x.0, y.0));
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    #[test]
    fn passes_take_the_largest_radius_first_and_count_the_documents_above() {
        let passes = distributed_passes(&[(11, 1_000_000), (15, 10), (11, 5)]);
        assert_eq!(passes.iter().map(|p| p.k).collect::<Vec<_>>(), [15, 11]);
        for pass in &passes {
            assert_eq!(pass.radius, pass.k / pass.blocks);
            assert!(pass.blocks >= 1 && pass.blocks <= pass.k + 1);
        }
        // Many documents: narrow enough groups, few enough probes.
        let big = &distributed_passes(&[(11, 1_000_000)])[0];
        assert!(big.blocks >= 4, "{big:?}");
        assert!(distributed_passes(&[]).is_empty());
    }

    #[test]
    fn rows_store_the_own_value_and_probe_the_others_within_the_radius() {
        let pass = HammingPass {
            k: 7,
            blocks: 4,
            radius: 1,
        };
        let mut rows = Vec::new();
        pass.rows(0xffff_0000_1234_8001, |block, value, stored| {
            rows.push((block, value, stored))
        });
        assert_eq!(rows.len(), 4 * 17);
        assert_eq!(rows.iter().filter(|r| r.2).count(), 4);
        assert!(rows.contains(&(0, 0x8001, true)));
        assert!(rows.contains(&(0, 0x8000, false)));
        assert!(rows.contains(&(3, 0xffff, true)));
    }

    #[test]
    fn a_flood_is_paired_up_to_the_cap() {
        // 50 identical fingerprints of radius 3: each meets its first 10 elders.
        let entries: Vec<(u64, u64, u32)> = (0..50).map(|rank| (rank, 0xabcdef, 3)).collect();
        let pairs = join(&entries, 10);
        for b in 0..50u64 {
            let partners: Vec<u64> = pairs.iter().filter(|p| p.1 == b).map(|p| p.0).collect();
            assert_eq!(partners, (0..b.min(10)).collect::<Vec<_>>());
        }
        assert_eq!(join(&entries, 1000), brute_force(&entries));
    }

    /// Fingerprints around a few centres, radii per document.
    fn entries() -> impl Strategy<Value = Vec<(u64, u64, u32)>> {
        (
            prop::collection::vec(any::<u64>(), 1..4),
            prop::collection::vec(
                (0usize..4, prop::collection::vec(0u32..64, 0..12), 0u32..20),
                0..60,
            ),
        )
            .prop_map(|(centres, members)| {
                (members.into_iter().enumerate())
                    .map(|(rank, (c, bits, radius))| {
                        let flips = bits.iter().fold(0u64, |f, &bit| f ^ (1 << bit));
                        (rank as u64 * 3, centres[c % centres.len()] ^ flips, radius)
                    })
                    .collect()
            })
    }

    proptest! {
        #[test]
        fn the_distributed_join_equals_all_pairs(entries in entries()) {
            prop_assert_eq!(join(&entries, 1000), brute_force(&entries));
        }
    }
}
