//! Edit distance (Levenshtein: insertions, deletions, substitutions of one item) of two
//! sequences of `u32` items (characters), the one implementation every method and join
//! uses.
//!
//! [`edit_distance_within`] is the kernel: the distance when at most a bound, stopping as
//! soon as the bound is out of reach. [`edit_distance`] and [`edit_similarity`]
//! (`1 - distance / longer length`, with a cutoff) are built on it.

/// The edit distance of `a` and `b` when at most `bound`, else `None`.
///
/// A length difference above the bound answers at once; otherwise rapidfuzz's Levenshtein
/// with a score cutoff runs, the shorter sequence first (bit-parallel, Hyyrö 2003, in 64-item
/// blocks, with mbleven for bounds under 4; it stops once the bound is out of reach).
/// Measured against a banded dynamic programme and a single-word Myers bit vector on news
/// titles and articles (bounds of 10% and 30% of the longer text, and unbounded), this is
/// as fast or faster in every case, by 1.5 to 3 times on titles.
pub fn edit_distance_within(a: &[u32], b: &[u32], bound: u32) -> Option<u32> {
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if b.len() - a.len() > bound as usize {
        return None;
    }
    let args = rapidfuzz::distance::levenshtein::Args::default().score_cutoff(bound as usize);
    rapidfuzz::distance::levenshtein::distance_with_args(
        a.iter().copied(),
        b.iter().copied(),
        &args,
    )
    .map(|d| d as u32)
}

/// The edit distance of `a` and `b`.
pub fn edit_distance(a: &[u32], b: &[u32]) -> u32 {
    let longer = a.len().max(b.len());
    let bound = u32::try_from(longer).unwrap_or(u32::MAX);
    // Invariant: no two sequences are further apart than the longer one's length.
    edit_distance_within(a, b, bound).unwrap_or(bound)
}

/// The normalised edit similarity `1 - distance / max(|a|, |b|)` (two empty sequences: 1)
/// when it reaches `cutoff`, else `None`.
///
/// Comparisons carry the tolerances the methods have always used: a pair is kept when its
/// similarity is at least `cutoff - 1e-9`, and the search stops once the distance exceeds the
/// bound that such a similarity allows (with a margin of `1e-5`).
pub fn edit_similarity(a: &[u32], b: &[u32], cutoff: f64) -> Option<f64> {
    if a.is_empty() && b.is_empty() {
        return Some(1.0);
    }
    let cutoff = cutoff - 1e-9;
    let longer = a.len().max(b.len());
    // The largest normalised distance of a kept pair, as a distance bound.
    let max_normalized = (1.0 - cutoff + 1e-5).clamp(0.0, 1.0);
    let bound = (longer as f64 * max_normalized).ceil() as usize;
    let distance = edit_distance_within(a, b, u32::try_from(bound).unwrap_or(u32::MAX))?;
    let normalized = f64::from(distance) / longer as f64;
    if normalized > max_normalized {
        return None;
    }
    let similarity = 1.0 - normalized;
    (similarity >= cutoff).then_some(similarity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook dynamic programme, the reference.
    fn levenshtein(a: &[u32], b: &[u32]) -> u32 {
        let mut row: Vec<u32> = (0..=b.len() as u32).collect();
        for i in 1..=a.len() {
            let mut diagonal = row[0];
            row[0] = i as u32;
            for j in 1..=b.len() {
                let above = row[j];
                row[j] = (diagonal + u32::from(a[i - 1] != b[j - 1]))
                    .min(above + 1)
                    .min(row[j - 1] + 1);
                diagonal = above;
            }
        }
        row[b.len()]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn bounded_distance_agrees_with_the_full_table(
            a in prop::collection::vec(0u32..3, 0..90),
            b in prop::collection::vec(0u32..3, 0..90),
            bound in 0u32..12,
        ) {
            let d = levenshtein(&a, &b);
            let want = (d <= bound).then_some(d);
            prop_assert_eq!(edit_distance_within(&a, &b, bound), want);
            prop_assert_eq!(edit_distance(&a, &b), d);
        }

        #[test]
        fn long_sequences_agree_with_the_full_table(
            a in prop::collection::vec(0u32..4, 60..200),
            b in prop::collection::vec(0u32..4, 60..200),
            bound in 0u32..150,
        ) {
            let d = levenshtein(&a, &b);
            prop_assert_eq!(edit_distance_within(&a, &b, bound), (d <= bound).then_some(d));
        }

        #[test]
        fn similarity_agrees_with_the_full_table(
            a in prop::collection::vec(0u32..3, 0..120),
            b in prop::collection::vec(0u32..3, 0..120),
            cutoff in 0.0f64..1.0,
        ) {
            let longer = a.len().max(b.len());
            let want = if longer == 0 {
                Some(1.0)
            } else {
                let similarity = 1.0 - f64::from(levenshtein(&a, &b)) / longer as f64;
                (similarity >= cutoff - 1e-9).then_some(similarity)
            };
            prop_assert_eq!(edit_similarity(&a, &b, cutoff), want);
        }
    }

    #[test]
    fn similarity_is_exact_at_the_cutoff() {
        let a: Vec<u32> = "kitten".chars().map(u32::from).collect();
        let b: Vec<u32> = "sitting".chars().map(u32::from).collect();
        let similarity = edit_similarity(&a, &b, 0.0).unwrap();
        assert_eq!(similarity, 1.0 - 3.0 / 7.0);
        assert_eq!(edit_similarity(&a, &b, similarity), Some(similarity));
        assert_eq!(edit_similarity(&a, &b, 0.6), None);
        assert_eq!(edit_similarity(&[], &[], 1.0), Some(1.0));
        assert_eq!(edit_similarity(&a, &[], 0.0), Some(0.0));
        assert_eq!(edit_distance(&a, &b), 3);
    }
}
