//! Identical fingerprints grouped, and the pairs of positions their groups make, written in
//! order without holding them: what keeps a `hamming` run's memory bounded by its distinct
//! fingerprints' pairs.

use rayon::prelude::*;

/// The fingerprints of a file grouped by value: a group per distinct fingerprint, numbered
/// by its first position, with its members in position order.
pub(super) struct Identical {
    /// The first position of each group, ascending.
    pub(super) leaders: Vec<u32>,
    /// `members[offsets[g]..offsets[g + 1]]` are the positions of group `g`, ascending.
    offsets: Vec<u32>,
    members: Vec<u32>,
    /// The group of each position.
    group: Vec<u32>,
}

impl Identical {
    pub(super) fn of(fingerprints: &[u128]) -> Identical {
        let mut order: Vec<u32> = (0..fingerprints.len() as u32).collect();
        order.par_sort_unstable_by_key(|&p| (fingerprints[p as usize], p));
        let mut runs: Vec<&[u32]> = order
            .chunk_by(|&x, &y| fingerprints[x as usize] == fingerprints[y as usize])
            .collect();
        runs.par_sort_unstable_by_key(|run| run[0]);
        let mut identical = Identical {
            leaders: Vec::with_capacity(runs.len()),
            offsets: Vec::with_capacity(runs.len() + 1),
            members: Vec::with_capacity(fingerprints.len()),
            group: vec![0; fingerprints.len()],
        };
        identical.offsets.push(0);
        for (number, run) in runs.iter().enumerate() {
            identical.leaders.push(run[0]);
            identical.members.extend_from_slice(run);
            identical.offsets.push(identical.members.len() as u32);
            for &position in run.iter() {
                identical.group[position as usize] = number as u32;
            }
        }
        identical
    }

    fn members(&self, group: u32) -> &[u32] {
        let group = group as usize;
        &self.members[self.offsets[group] as usize..self.offsets[group + 1] as usize]
    }

    pub(super) fn leader_of_group(&self, group: u32) -> u32 {
        self.leaders[group as usize]
    }

    pub(super) fn leader_of(&self, position: u32) -> u32 {
        self.leader_of_group(self.group[position as usize])
    }

    pub(super) fn largest_group(&self) -> usize {
        (0..self.leaders.len() as u32)
            .map(|g| self.members(g).len())
            .max()
            .unwrap_or(0)
    }

    pub(super) fn repeated_groups(&self) -> u64 {
        (0..self.leaders.len() as u32)
            .filter(|&g| self.members(g).len() > 1)
            .count() as u64
    }

    /// The pairs of positions the groups and the pairs of groups make.
    pub(super) fn expanded_pairs(&self, leader_pairs: &[(u32, u32, u32)]) -> u128 {
        let size = |g: u32| self.members(g).len() as u128;
        let within: u128 = (0..self.leaders.len() as u32)
            .map(|g| size(g) * size(g).saturating_sub(1) / 2)
            .sum();
        let between: u128 = (leader_pairs.iter())
            .map(|&(a, b, _)| size(a) * size(b))
            .sum();
        within + between
    }
}

/// The pairs of positions, written in order without holding them: per group, the groups
/// within the distance (both ways), so that a position's later partners are read from the
/// members lists.
pub(super) struct Expanded<'a> {
    identical: &'a Identical,
    /// `near[offsets[g]..offsets[g + 1]]`: `(group, distance)` of the groups near `g`.
    offsets: Vec<usize>,
    near: Vec<(u32, u32)>,
}

impl<'a> Expanded<'a> {
    pub(super) fn new(identical: &'a Identical, leader_pairs: &[(u32, u32, u32)]) -> Expanded<'a> {
        let groups = identical.leaders.len();
        let mut offsets = vec![0usize; groups + 1];
        for &(a, b, _) in leader_pairs {
            offsets[a as usize + 1] += 1;
            offsets[b as usize + 1] += 1;
        }
        for g in 0..groups {
            offsets[g + 1] += offsets[g];
        }
        let mut next = offsets.clone();
        let mut near = vec![(0u32, 0u32); offsets[groups]];
        for &(a, b, distance) in leader_pairs {
            near[next[a as usize]] = (b, distance);
            next[a as usize] += 1;
            near[next[b as usize]] = (a, distance);
            next[b as usize] += 1;
        }
        Expanded {
            identical,
            offsets,
            near,
        }
    }

    /// The positions after `x` within the distance of it, ascending, with the distance.
    pub(super) fn partners(&self, x: u32) -> Vec<(u32, u32)> {
        let group = self.identical.group[x as usize];
        let later = |members: &'a [u32]| &members[members.partition_point(|&m| m <= x)..];
        let mut partners: Vec<(u32, u32)> = (later(self.identical.members(group)).iter())
            .map(|&y| (y, 0))
            .collect();
        let range = self.offsets[group as usize]..self.offsets[group as usize + 1];
        for &(other, distance) in &self.near[range] {
            let members = later(self.identical.members(other));
            partners.extend(members.iter().map(|&y| (y, distance)));
        }
        partners.sort_unstable();
        partners
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_numbered_by_first_position_and_expand_in_order() {
        let fingerprints = [5u128, 3, 5, 9, 3, 5];
        let identical = Identical::of(&fingerprints);
        assert_eq!(identical.leaders, vec![0, 1, 3]);
        assert_eq!(
            (0..6).map(|x| identical.leader_of(x)).collect::<Vec<_>>(),
            vec![0, 1, 0, 3, 1, 0]
        );
        assert_eq!(
            (identical.largest_group(), identical.repeated_groups()),
            (3, 2)
        );
        // Groups 0 (5) and 1 (3) near each other at distance 1.
        let near = [(0, 1, 1)];
        assert_eq!(identical.expanded_pairs(&near), 3 + 1 + 3 * 2);
        let expanded = Expanded::new(&identical, &near);
        assert_eq!(expanded.partners(0), vec![(1, 1), (2, 0), (4, 1), (5, 0)]);
        assert_eq!(expanded.partners(1), vec![(2, 1), (4, 0), (5, 1)]);
        assert_eq!(expanded.partners(3), vec![]);
        assert_eq!(expanded.partners(5), vec![]);
    }
}
