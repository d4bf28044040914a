//! The trait every near-duplicate method implements.
//!
//! Every method neardup has or plans (exact hashing, MinHash-LSH, SimHash block tables,
//! n-gram inverted indexes, I-Match, shingle fingerprints) follows one pattern: compute a
//! per-document *sketch*, emit bucket *keys* so that similar documents are likely (or, for
//! exact indexes, certain) to share one, then confirm each candidate pair with a true
//! similarity measure. The engines in `neardup-pipeline` and `neardup-index` only see this
//! trait, so a new method is one module in [`crate::methods`] plus one registration line.

/// What a method computes once per document.
pub trait Sketch: Send + Sync {
    /// True when the document has no feature at all (empty after normalisation): it is then
    /// never a candidate and never a duplicate; it is always kept on its own.
    fn is_empty(&self) -> bool;

    /// A 128-bit identity of the document's features: equal identities mean identical
    /// features, so similarity 1 without comparing. Engines use it to collapse exact copies
    /// before candidate generation, which keeps LSH buckets small on corpora with many
    /// verbatim repeats.
    fn identity(&self) -> u128;
}

/// A near-duplicate method: sketch, keys, verification.
pub trait Method: Send + Sync {
    /// The per-document data kept in memory.
    type Sketch: Sketch;

    /// The method's name, as given on the command line.
    fn name(&self) -> &'static str;

    /// Sketches raw (not yet normalised) document text.
    fn sketch(&self, text: &str) -> Self::Sketch;

    /// Appends the bucket keys of a sketch: documents sharing a key are candidates.
    fn keys(&self, sketch: &Self::Sketch, keys: &mut Vec<u64>);

    /// The true similarity of two sketches, in `[0, 1]`.
    fn similarity(&self, a: &Self::Sketch, b: &Self::Sketch) -> f64;

    /// The similarity at or above which two documents are duplicates.
    fn threshold(&self) -> f64;

    /// Whether `similarity` makes a duplicate. A tolerance of 1e-9 keeps ratios such as
    /// 7/10 equal to a threshold of 0.7 whatever the rounding.
    fn is_duplicate(&self, similarity: f64) -> bool {
        similarity >= self.threshold() - 1e-9
    }
}
