//! Similarity measures on sorted sets and fingerprints, and the edit distance of sequences
//! ([`edit`]).
//!
//! Set measures take sorted, deduplicated slices of any ordered type (the 64-bit hashes of a
//! [`crate::tokenize::ShingleSet`], or the 32-bit verification sets of the MinHash sketches)
//! and run in `O(|A| + |B|)` by merging.

pub mod edit;

pub use edit::{edit_distance, edit_distance_within, edit_similarity};

/// Size of the intersection of two sorted, deduplicated slices.
///
/// A merge without branches on the comparison: both cursors move by the outcome as a
/// number, so the processor does not mispredict the half of the steps that go the other
/// way (about twice as fast on the sets of near-duplicate candidates, whose order is random).
pub fn intersection_size<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (&a[i], &b[j]);
        shared += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    shared
}

/// Jaccard similarity `|A ∩ B| / |A ∪ B|`; two empty sets have similarity 0 (nothing to
/// compare, never a duplicate).
///
/// ```
/// assert_eq!(neardup_core::measure::jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
/// ```
pub fn jaccard<T: Ord>(a: &[T], b: &[T]) -> f64 {
    let shared = intersection_size(a, b);
    let union = a.len() + b.len() - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

/// Containment `|A ∩ B| / min(|A|, |B|)`: 1 when the smaller set lies inside the larger, for
/// a short text quoted inside a long one.
///
/// ```
/// assert_eq!(neardup_core::measure::containment(&[1, 2], &[1, 2, 3, 4]), 1.0);
/// ```
pub fn containment<T: Ord>(a: &[T], b: &[T]) -> f64 {
    let smaller = a.len().min(b.len());
    if smaller == 0 {
        0.0
    } else {
        intersection_size(a, b) as f64 / smaller as f64
    }
}

/// Cosine similarity of two sets seen as binary vectors: `|A ∩ B| / sqrt(|A| |B|)`.
pub fn cosine<T: Ord>(a: &[T], b: &[T]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    intersection_size(a, b) as f64 / ((a.len() as f64) * (b.len() as f64)).sqrt()
}

/// Weighted Jaccard of two sorted sets whose elements carry weights (`a_weights[i]` is the
/// weight of `a[i]`): the weight of the shared elements over the weight of the union. With
/// every weight 1 it is [`jaccard`].
///
/// ```
/// use neardup_core::measure::weighted_jaccard;
/// let j = weighted_jaccard(&[1, 2, 3], &[1.0, 1.0, 2.0], &[2, 3, 4], &[1.0, 2.0, 1.0]);
/// assert_eq!(j, 3.0 / 5.0);
/// ```
pub fn weighted_jaccard<T: Ord>(a: &[T], a_weights: &[f32], b: &[T], b_weights: &[f32]) -> f64 {
    let shared = weighted_intersection(a, a_weights, b, b_weights);
    let union = total(a_weights) + total(b_weights) - shared;
    if union <= 0.0 {
        0.0
    } else {
        shared / union
    }
}

/// Weighted containment: the weight of the shared elements over the smaller total weight.
pub fn weighted_containment<T: Ord>(a: &[T], a_weights: &[f32], b: &[T], b_weights: &[f32]) -> f64 {
    let smaller = total(a_weights).min(total(b_weights));
    if smaller <= 0.0 {
        return 0.0;
    }
    weighted_intersection(a, a_weights, b, b_weights) / smaller
}

fn total(weights: &[f32]) -> f64 {
    weights.iter().map(|&w| f64::from(w)).sum()
}

/// The summed smaller weight of the elements two sorted weighted sets share.
fn weighted_intersection<T: Ord>(a: &[T], a_weights: &[f32], b: &[T], b_weights: &[f32]) -> f64 {
    let (mut i, mut j, mut shared) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += f64::from(a_weights[i].min(b_weights[j]));
                i += 1;
                j += 1;
            }
        }
    }
    shared
}

/// Hamming distance of two 64-bit fingerprints.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The set measure used to verify candidate pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SetMeasure {
    /// Jaccard similarity (default).
    #[default]
    Jaccard,
    /// Containment of the smaller set in the larger.
    Containment,
}

impl SetMeasure {
    /// Computes the measure.
    pub fn compute<T: Ord>(self, a: &[T], b: &[T]) -> f64 {
        match self {
            SetMeasure::Jaccard => jaccard(a, b),
            SetMeasure::Containment => containment(a, b),
        }
    }

    /// The weighted measure ([`weighted_jaccard`], [`weighted_containment`]).
    pub fn compute_weighted<T: Ord>(
        self,
        a: &[T],
        a_weights: &[f32],
        b: &[T],
        b_weights: &[f32],
    ) -> f64 {
        match self {
            SetMeasure::Jaccard => weighted_jaccard(a, a_weights, b, b_weights),
            SetMeasure::Containment => weighted_containment(a, a_weights, b, b_weights),
        }
    }
}

crate::named_choices!(SetMeasure as "measure" {
    Jaccard => "jaccard",
    Containment => "containment",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        assert_eq!(intersection_size(&[1, 3, 5, 7], &[3, 4, 5]), 2);
        assert_eq!(jaccard(&[1, 3, 5, 7], &[3, 4, 5]), 2.0 / 5.0);
        assert_eq!(containment(&[1, 3, 5, 7], &[3, 4, 5]), 2.0 / 3.0);
        assert!((cosine(&[1, 2], &[2, 3]) - 0.5).abs() < 1e-12);
        assert_eq!(hamming(0b1011, 0b0001), 2);
    }

    #[test]
    fn empty_sets_are_never_similar() {
        let empty: &[u64] = &[];
        assert_eq!(jaccard(empty, empty), 0.0);
        assert_eq!(containment(empty, &[1]), 0.0);
        assert_eq!(cosine(empty, empty), 0.0);
        assert_eq!(jaccard::<u32>(&[7, 9], &[7, 9]), 1.0);
    }
}
