//! Run statistics helpers.

use std::collections::BTreeMap;

use neardup_core::cluster::Assignment;

/// Cluster size -> number of clusters of that size (singletons included), sorted by size.
pub fn cluster_size_histogram(assignment: &Assignment) -> Vec<(usize, u64)> {
    let mut sizes: Vec<usize> = vec![0; assignment.duplicate_of.len()];
    for document in 0..assignment.duplicate_of.len() as u32 {
        sizes[assignment.cluster_of(document) as usize] += 1;
    }
    let mut histogram: BTreeMap<usize, u64> = BTreeMap::new();
    for size in sizes.into_iter().filter(|&s| s > 0) {
        *histogram.entry(size).or_default() += 1;
    }
    histogram.into_iter().collect()
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), or `None` elsewhere.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_clusters_by_size() {
        let assignment = Assignment {
            duplicate_of: vec![None, Some(0), Some(0), None, None, Some(4)],
            similarity: vec![None; 6],
        };
        assert_eq!(
            cluster_size_histogram(&assignment),
            vec![(1, 1), (2, 1), (3, 1)]
        );
    }
}
