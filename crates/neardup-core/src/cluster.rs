//! From verified pairs to kept documents and duplicates.
//!
//! Documents are ranked by a [`KeepPolicy`] (input order, longest first, shortest first;
//! ties by input order). Two rules turn verified pairs into clusters:
//!
//! - [`ClusterMode::Representative`] (default): documents are visited in rank order; one that
//!   is verified similar to an already *kept* document becomes its duplicate (the most
//!   similar one if several, then the best ranked), otherwise it is kept. Every removed
//!   document is therefore verified similar to the document that stands for it, and a chain
//!   A~B~C with A and C dissimilar keeps both A and C. This is the greedy result-set
//!   algorithm of the QQ short-text article, applied to verified candidate pairs.
//! - [`ClusterMode::Connected`]: union-find over verified pairs; the best-ranked document of
//!   each component is kept. Recall is higher, but chains merge unrelated texts.
//!
//! Both are deterministic: the result depends only on the ranks and the set of pairs, not on
//! their order.

/// Which document of a cluster is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeepPolicy {
    /// The first in input order (default).
    #[default]
    First,
    /// The longest (in characters).
    Longest,
    /// The shortest (in characters).
    Shortest,
}

crate::named_choices!(KeepPolicy as "keep" {
    First => "first",
    Longest => "longest",
    Shortest => "shortest",
});

/// How verified pairs become clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClusterMode {
    /// Greedy: each removed document is similar to its kept representative (default).
    #[default]
    Representative,
    /// Connected components of the verified-pair graph.
    Connected,
}

crate::named_choices!(ClusterMode as "cluster" {
    Representative => "representative",
    Connected => "connected",
});

/// A verified pair of document indices with its similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// One document.
    pub a: u32,
    /// The other document.
    pub b: u32,
    /// Their verified similarity.
    pub similarity: f64,
    /// Their Hamming distance, for methods with fingerprints (SimHash).
    pub distance: Option<u32>,
}

/// The outcome for each document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Assignment {
    /// `None` for a kept document, else the kept document it duplicates.
    pub duplicate_of: Vec<Option<u32>>,
    /// The similarity to `duplicate_of`, when set.
    pub similarity: Similarities,
}

/// One optional similarity per document, in 8 bytes each (an `Option<f64>` takes 16): NaN
/// stands for none, and a similarity is never NaN.
#[derive(Debug, Clone, Default)]
pub struct Similarities(Vec<f64>);

/// Equal when every document has the same similarity or none in both (NaN, which marks none,
/// is not equal to itself as an `f64`).
impl PartialEq for Similarities {
    fn eq(&self, other: &Similarities) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Similarities {
    /// `documents` documents without a similarity.
    pub fn none(documents: usize) -> Similarities {
        Similarities(vec![f64::NAN; documents])
    }

    /// Every similarity, in document order (as [`Similarities::iter`] gives them).
    pub fn to_vec(&self) -> Vec<Option<f64>> {
        self.iter().collect()
    }

    /// The similarity of `document`.
    pub fn get(&self, document: usize) -> Option<f64> {
        Some(self.0[document]).filter(|s| !s.is_nan())
    }

    /// Sets the similarity of `document` (a NaN similarity is none).
    pub fn set(&mut self, document: usize, similarity: Option<f64>) {
        self.0[document] = similarity.unwrap_or(f64::NAN);
    }

    /// The similarities in document order.
    pub fn iter(&self) -> impl Iterator<Item = Option<f64>> + '_ {
        self.0.iter().map(|&s| Some(s).filter(|s| !s.is_nan()))
    }

    /// Documents held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no document is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<Option<f64>>> for Similarities {
    fn from(values: Vec<Option<f64>>) -> Similarities {
        Similarities(values.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
    }
}

impl Assignment {
    /// Number of documents kept (not duplicates).
    pub fn kept(&self) -> usize {
        self.duplicate_of.iter().filter(|d| d.is_none()).count()
    }

    /// All documents kept.
    pub fn all_kept(documents: usize) -> Assignment {
        Assignment {
            duplicate_of: vec![None; documents],
            similarity: Similarities::none(documents),
        }
    }
    /// The representative (kept document) of `document`.
    pub fn cluster_of(&self, document: u32) -> u32 {
        self.duplicate_of[document as usize].unwrap_or(document)
    }
}

/// The rank of every document under `policy` (0 = kept first); `lengths` in characters (any
/// integer type: the engine holds them as `u32`).
pub fn ranks<L: Ord + Copy>(lengths: &[L], policy: KeepPolicy) -> Vec<u32> {
    if policy == KeepPolicy::First {
        // The input order is the rank order: no second vector.
        return (0..lengths.len() as u32).collect();
    }
    let mut order: Vec<u32> = (0..lengths.len() as u32).collect();
    match policy {
        KeepPolicy::First => {}
        KeepPolicy::Longest => order.sort_by_key(|&d| std::cmp::Reverse(lengths[d as usize])),
        KeepPolicy::Shortest => order.sort_by_key(|&d| lengths[d as usize]),
    }
    let mut rank = vec![0u32; lengths.len()];
    for (position, &document) in order.iter().enumerate() {
        rank[document as usize] = position as u32;
    }
    rank
}

/// The representative rule over `documents` documents (see the module docs).
pub fn representative(rank: &[u32], pairs: &[Pair]) -> Assignment {
    let documents = rank.len();
    // A document only ever joins a better-ranked one: each pair is listed once, under its
    // worse-ranked document, as (worse, better, similarity), and the lists are visited in
    // rank order. A document without a list is kept; one visited earlier is kept when it
    // found no kept document to join. Per pair 4 bytes (the pairs in that order, by index),
    // per document nothing beyond the assignment.
    let edge = |index: u32| {
        let pair = &pairs[index as usize];
        match rank[pair.a as usize] < rank[pair.b as usize] {
            true => (pair.b, pair.a, pair.similarity),
            false => (pair.a, pair.b, pair.similarity),
        }
    };
    let mut order: Vec<u32> = (0..pairs.len() as u32).collect();
    order.sort_unstable_by_key(|&index| {
        let worse = edge(index).0;
        (rank[worse as usize], worse)
    });
    let mut assignment = Assignment::all_kept(documents);
    for list in order.chunk_by(|&x, &y| edge(x).0 == edge(y).0) {
        let document = edge(list[0]).0;
        let best = (list.iter().map(|&index| edge(index)))
            .filter(|&(_, other, _)| {
                assignment.duplicate_of[other as usize].is_none()
                    && rank[other as usize] < rank[document as usize]
            })
            .min_by(|x, y| {
                y.2.total_cmp(&x.2)
                    .then(rank[x.1 as usize].cmp(&rank[y.1 as usize]))
            });
        if let Some((_, other, similarity)) = best {
            assignment.duplicate_of[document as usize] = Some(other);
            assignment
                .similarity
                .set(document as usize, Some(similarity));
        }
    }
    assignment
}

/// Connected components over `pairs`; `similarity(a, b)` computes the similarity of a member
/// to its kept document (it may be below the threshold: that is what chaining means).
pub fn connected(rank: &[u32], pairs: &[Pair], similarity: impl Fn(u32, u32) -> f64) -> Assignment {
    let documents = rank.len();
    let mut sets = UnionFind::new(documents);
    for pair in pairs {
        sets.union(pair.a, pair.b);
    }
    let mut best: Vec<Option<u32>> = vec![None; documents];
    for document in 0..documents as u32 {
        let root = sets.find(document) as usize;
        if best[root].is_none_or(|b| rank[document as usize] < rank[b as usize]) {
            best[root] = Some(document);
        }
    }
    let mut assignment = Assignment::all_kept(documents);
    for document in 0..documents as u32 {
        let root = sets.find(document) as usize;
        // Every root has a best member: the loop above visited every document.
        let kept = best[root].unwrap_or(document);
        if kept != document {
            assignment.duplicate_of[document as usize] = Some(kept);
            assignment
                .similarity
                .set(document as usize, Some(similarity(document, kept)));
        }
    }
    assignment
}

/// Union-find with path halving and union by size.
#[derive(Debug, Clone)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }
    /// The root of `x`.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grandparent = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grandparent;
            x = grandparent;
        }
        x
    }
    /// Merges the sets of `a` and `b`.
    pub fn union(&mut self, a: u32, b: u32) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn similarities_hold_none_apart_from_any_value() {
        let mut held = Similarities::none(4);
        held.set(1, Some(0.0));
        held.set(2, Some(1.0));
        held.set(3, Some(f64::NAN));
        assert_eq!(held.to_vec(), [None, Some(0.0), Some(1.0), None]);
        assert_eq!(held.get(1), Some(0.0));
        assert_eq!(
            held,
            Similarities::from(vec![None, Some(0.0), Some(1.0), None])
        );
        assert_ne!(
            held,
            Similarities::from(vec![None, Some(0.0), Some(0.5), None])
        );
        assert_ne!(held, Similarities::none(3));
        assert_eq!(Similarities::none(2).len(), 2);
    }

    use super::*;

    fn pair(a: u32, b: u32, similarity: f64) -> Pair {
        Pair {
            a,
            b,
            similarity,
            distance: None,
        }
    }

    #[test]
    fn representative_does_not_chain() {
        // 0~1 and 1~2, but 0 and 2 are not similar: 0 and 2 are kept, 1 goes to 0.
        let rank = ranks(&[10, 10, 10], KeepPolicy::First);
        let got = representative(&rank, &[pair(1, 2, 0.9), pair(0, 1, 0.8)]);
        assert_eq!(got.duplicate_of, vec![None, Some(0), None]);
        assert_eq!(got.similarity.to_vec(), vec![None, Some(0.8), None]);
    }

    #[test]
    fn connected_chains() {
        let rank = ranks(&[10, 10, 10], KeepPolicy::First);
        let got = connected(&rank, &[pair(1, 2, 0.9), pair(0, 1, 0.8)], |_, _| 0.5);
        assert_eq!(got.duplicate_of, vec![None, Some(0), Some(0)]);
        assert_eq!(got.similarity.get(2), Some(0.5));
    }

    #[test]
    fn keep_policies_pick_the_kept_document() {
        let lengths = [5, 20, 10];
        let pairs = [pair(0, 1, 0.9), pair(1, 2, 0.9), pair(0, 2, 0.9)];
        let longest = representative(&ranks(&lengths, KeepPolicy::Longest), &pairs);
        assert_eq!(longest.duplicate_of, vec![Some(1), None, Some(1)]);
        let shortest = representative(&ranks(&lengths, KeepPolicy::Shortest), &pairs);
        assert_eq!(shortest.duplicate_of, vec![None, Some(0), Some(0)]);
    }

    #[test]
    fn most_similar_kept_document_wins() {
        let rank = ranks(&[1, 1, 1], KeepPolicy::First);
        let got = representative(&rank, &[pair(0, 2, 0.7), pair(1, 2, 0.95)]);
        assert_eq!(got.duplicate_of, vec![None, None, Some(1)]);
    }

    /// The rule as the module docs state it, with a list of neighbours per document: the
    /// oracle of the compact [`representative`].
    fn representative_by_lists(rank: &[u32], pairs: &[Pair]) -> Assignment {
        let documents = rank.len();
        let mut neighbours: Vec<Vec<(u32, f64)>> = vec![Vec::new(); documents];
        for pair in pairs {
            let (better, worse) = match rank[pair.a as usize] < rank[pair.b as usize] {
                true => (pair.a, pair.b),
                false => (pair.b, pair.a),
            };
            neighbours[worse as usize].push((better, pair.similarity));
        }
        let mut order: Vec<u32> = (0..documents as u32).collect();
        order.sort_by_key(|&d| rank[d as usize]);
        let mut assignment = Assignment::all_kept(documents);
        let mut kept = vec![false; documents];
        for document in order {
            let best = neighbours[document as usize]
                .iter()
                .filter(|&&(other, _)| {
                    kept[other as usize] && rank[other as usize] < rank[document as usize]
                })
                .min_by(|x, y| {
                    y.1.total_cmp(&x.1)
                        .then(rank[x.0 as usize].cmp(&rank[y.0 as usize]))
                });
            match best {
                Some(&(other, similarity)) => {
                    assignment.duplicate_of[document as usize] = Some(other);
                    assignment
                        .similarity
                        .set(document as usize, Some(similarity));
                }
                None => kept[document as usize] = true,
            }
        }
        assignment
    }

    proptest::proptest! {
        #[test]
        fn representative_matches_the_rule_stated_with_lists(
            lengths in proptest::collection::vec(1u32..5, 1..40),
            edges in proptest::collection::vec((0u32..40, 0u32..40, 0u8..4), 0..120),
            policy in 0u8..3,
        ) {
            let policy = [KeepPolicy::First, KeepPolicy::Longest, KeepPolicy::Shortest]
                [policy as usize];
            let n = lengths.len() as u32;
            let pairs: Vec<Pair> = (edges.iter())
                .filter(|&&(a, b, _)| a % n != b % n)
                .map(|&(a, b, s)| pair(a % n, b % n, 0.7 + f64::from(s) * 0.1))
                .collect();
            let rank = ranks(&lengths, policy);
            proptest::prop_assert_eq!(
                representative(&rank, &pairs),
                representative_by_lists(&rank, &pairs)
            );
        }
    }

    #[test]
    fn pair_order_does_not_matter() {
        let rank = ranks(&[3, 1, 2, 4], KeepPolicy::Longest);
        let mut pairs = vec![
            pair(0, 1, 0.8),
            pair(2, 3, 0.9),
            pair(1, 2, 0.85),
            pair(0, 3, 0.8),
        ];
        let first = representative(&rank, &pairs);
        pairs.reverse();
        assert_eq!(first, representative(&rank, &pairs));
    }
}
