//! A registered method behind one object-safe trait, so that the Python classes and the Spark
//! helpers can hold "a method" without being generic over it, and built methods can be cached
//! by their name and parameters (a Spark executor builds each method once, not once per batch).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use neardup_core::cluster::Assignment;
use neardup_core::codec::Decoder;
use neardup_core::corpus::CorpusStats;
use neardup_core::hash::{hash128, hash128_u64s};
use neardup_core::methods::minhash::MinHashSketch;
use neardup_core::methods::simhash::SimHashSketch;
use neardup_core::registry::{self, MethodVisitor, Params, Registered};
use neardup_core::{CommonMarking, Error, Result, Sketch};
use neardup_engine::collection_index::{self, CollectionIndex, IndexEntry};
use neardup_engine::{EngineOptions, NoProgress, Outcome};
use rayon::prelude::*;

/// What the Spark path needs of one document's sketch.
pub struct SketchRow {
    /// [`Sketch::identity`] (exact copies share it).
    pub identity: u128,
    /// No feature after normalisation: always kept alone.
    pub empty: bool,
    /// Too few features to compare approximately: exact copies only.
    pub exact_only: bool,
    /// The encoded sketch ([`Sketch::encode`]).
    pub encoded: Vec<u8>,
    /// The bucket keys ([`Method::keys`]), sorted and deduplicated; empty for an empty or
    /// exact-only document.
    pub keys: Vec<u64>,
}

/// A method, whatever its type.
pub trait DynMethod: Send + Sync {
    /// The shape of how candidates are found ([`neardup_core::Join::shape`]).
    fn join_shape(&self) -> neardup_core::JoinShape;
    /// Whether a batch run learns statistics from the corpus first.
    fn learns_from_corpus(&self) -> bool;
    /// Per text, the upper 64 bits of the identity of its corpus features and the features,
    /// sorted and distinct ([`Method::corpus_features`]): a distributed corpus pass counts a
    /// feature set once per distinct identity, as the batch engine's pass does.
    fn corpus_features(&self, texts: &[&str]) -> Vec<(u64, Vec<u64>)>;
    /// The limits the method resolves from a corpus of `documents` documents
    /// ([`Method::learned_limits`]): the counts below the least of them never matter.
    fn corpus_limits(&self, documents: u64) -> Vec<(&'static str, u64)>;
    /// This method after learning from `corpus` ([`Method::learn`]).
    fn learned(&self, corpus: &Arc<CorpusStats>) -> Arc<dyn DynMethod>;
    /// The document-frequency limit of common features among `leaders` distinct documents
    /// ([`Method::common_limit`]); `None` when the method marks none.
    fn common_limit(&self, leaders: u64) -> Option<u64>;
    /// The features an encoded sketch is counted by ([`Method::frequency_features`]).
    fn frequency_features(&self, encoded: &[u8]) -> Result<Vec<u32>>;
    /// An encoded sketch with the features in `common` (sorted) marked
    /// ([`Method::mark_common`]).
    fn mark_common(&self, encoded: &[u8], common: &[u32]) -> Result<Vec<u8>>;
    /// Whether the batch engine checks common features of crowded documents (`max_df`).
    fn checks_common(&self) -> bool;
    /// Whether the batch engine marks the common features of crowded documents only
    /// ([`Method::marks_crowds_only`]).
    fn marks_crowds_only(&self) -> bool;
    /// The batch engine over `texts`.
    fn dedup(&self, texts: &[&str], options: EngineOptions) -> Result<Outcome>;
    /// Sketch rows of `texts`, in parallel, in order.
    fn sketch_rows(&self, texts: &[&str]) -> Vec<SketchRow>;
    /// The verified similarity (and Hamming distance) of two encoded sketches, as the batch
    /// engine verifies a candidate pair.
    fn verify(&self, a: &[u8], b: &[u8]) -> Result<Option<(f64, Option<u32>)>>;
    /// The plain similarity of two encoded sketches (a member and its component's kept
    /// document under `connected` clustering).
    fn similarity(&self, a: &[u8], b: &[u8]) -> Result<f64>;
    /// The fingerprint and search radius of an encoded sketch, for a Hamming join; `None`
    /// when the document enters no candidate generation or the method has no fingerprints.
    fn hamming_key(&self, encoded: &[u8]) -> Result<Option<(u64, u32)>>;
    /// The template keys of an encoded sketch (templates duplicate,
    /// [`neardup_engine::template_keys`]); empty for a sketch that is not templated.
    fn template_keys(&self, encoded: &[u8]) -> Result<Vec<u64>>;
    /// Whether the join pairs templated sketches by their template keys.
    fn has_template_keys(&self) -> bool;
    /// The join tokens of an encoded sketch ([`Method::join_tokens`]), sorted and distinct.
    fn join_tokens(&self, encoded: &[u8]) -> Result<Vec<u64>>;
    /// The prefix of an encoded sketch's join tokens under the global order "rarer first":
    /// a token's count is `frequent`'s, 0 when absent (ties by token). As many tokens as
    /// the method stores under ([`Method::keys`]: the prefix length a pair at the threshold
    /// needs, whatever the global order).
    fn join_prefix(&self, encoded: &[u8], frequent: &HashMap<u64, u32>) -> Result<Vec<u64>>;
    /// MinHash signatures of `texts` (minhash only).
    fn signatures(&self, texts: &[&str]) -> Option<Vec<Vec<u32>>>;
    /// SimHash fingerprints of `texts` (simhash only).
    fn fingerprints(&self, texts: &[&str]) -> Option<Vec<u64>>;
    /// A new, empty online index of this method.
    fn new_index(self: Arc<Self>) -> Result<Box<dyn DynIndex>>;
}

/// An online index (insert, query, encode) of one method's documents, numbered 0, 1, ...
pub trait DynIndex: Send + Sync {
    /// Adds `texts` (numbered from [`DynIndex::len`] on).
    fn insert(&mut self, texts: &[&str]);
    /// Adds one document from its encoded sketch (a loaded index).
    fn insert_encoded(&mut self, encoded: &[u8]) -> Result<()>;
    /// Per text, the stored documents it matches: `(number, similarity, distance)`, best
    /// first, at most `limit`.
    fn query(&self, texts: &[&str], limit: usize) -> Vec<Vec<collection_index::Match>>;
    /// Documents stored.
    fn len(&self) -> usize;
    /// The encoded sketch of document `number`.
    fn encoded(&self, number: usize, out: &mut Vec<u8>);
}

struct Typed<M: Registered> {
    method: M,
}

fn decode<S: Sketch>(bytes: &[u8]) -> Result<S> {
    S::decode(bytes)
}

impl<M: Registered> DynMethod for Typed<M> {
    fn join_shape(&self) -> neardup_core::JoinShape {
        self.method.join().shape()
    }
    fn learns_from_corpus(&self) -> bool {
        self.method.learns_from_corpus()
    }
    fn corpus_features(&self, texts: &[&str]) -> Vec<(u64, Vec<u64>)> {
        texts
            .par_iter()
            .map(|text| {
                let mut features = Vec::new();
                self.method.corpus_features(text, &mut features);
                features.sort_unstable();
                features.dedup();
                ((hash128_u64s(&features) >> 64) as u64, features)
            })
            .collect()
    }
    fn corpus_limits(&self, documents: u64) -> Vec<(&'static str, u64)> {
        let mut method = self.method.clone();
        method.learn(&Arc::new(CorpusStats::from_counts(documents, [])));
        method.learned_limits()
    }
    fn learned(&self, corpus: &Arc<CorpusStats>) -> Arc<dyn DynMethod> {
        let mut method = self.method.clone();
        method.learn(corpus);
        Arc::new(Typed { method })
    }
    fn common_limit(&self, leaders: u64) -> Option<u64> {
        self.method.common_limit(leaders)
    }
    fn frequency_features(&self, encoded: &[u8]) -> Result<Vec<u32>> {
        let sketch: M::Sketch = decode(encoded)?;
        Ok(self.method.frequency_features(&sketch).to_vec())
    }
    fn mark_common(&self, encoded: &[u8], common: &[u32]) -> Result<Vec<u8>> {
        let mut sketch: M::Sketch = decode(encoded)?;
        self.method
            .mark_common(&mut sketch, &|value| common.binary_search(&value).is_ok());
        let mut out = Vec::new();
        sketch.encode(&mut out);
        Ok(out)
    }
    fn checks_common(&self) -> bool {
        self.method.common_limit(u64::MAX / 2).is_some()
    }
    fn marks_crowds_only(&self) -> bool {
        self.method.marks_crowds_only()
    }
    fn dedup(&self, texts: &[&str], options: EngineOptions) -> Result<Outcome> {
        neardup_engine::dedup(&self.method, texts, options, &NoProgress)
    }
    fn sketch_rows(&self, texts: &[&str]) -> Vec<SketchRow> {
        texts
            .par_iter()
            .map(|text| {
                let sketch = self.method.sketch(text);
                let mut encoded = Vec::new();
                sketch.encode(&mut encoded);
                let (empty, exact_only) = (sketch.is_empty(), sketch.exact_only());
                let mut keys = Vec::new();
                if !empty && !exact_only {
                    self.method.keys(&sketch, &mut keys);
                    keys.sort_unstable();
                    keys.dedup();
                }
                SketchRow {
                    identity: sketch.identity(),
                    empty,
                    exact_only,
                    encoded,
                    keys,
                }
            })
            .collect()
    }
    fn verify(&self, a: &[u8], b: &[u8]) -> Result<Option<(f64, Option<u32>)>> {
        let (a, b): (M::Sketch, M::Sketch) = (decode(a)?, decode(b)?);
        Ok((self.method.verify(&a, &b)).map(|s| (s, self.method.distance(&a, &b))))
    }
    fn similarity(&self, a: &[u8], b: &[u8]) -> Result<f64> {
        let (a, b): (M::Sketch, M::Sketch) = (decode(a)?, decode(b)?);
        Ok(self.method.similarity(&a, &b))
    }
    fn hamming_key(&self, encoded: &[u8]) -> Result<Option<(u64, u32)>> {
        let sketch: M::Sketch = decode(encoded)?;
        let join = self.method.join();
        Ok(neardup_engine::hamming_key(&self.method, &join, &sketch))
    }
    fn template_keys(&self, encoded: &[u8]) -> Result<Vec<u64>> {
        let sketch: M::Sketch = decode(encoded)?;
        let mut keys = Vec::new();
        neardup_engine::template_keys(&self.method, &self.method.join(), &sketch, &mut keys);
        Ok(keys)
    }
    fn has_template_keys(&self) -> bool {
        neardup_engine::template_anchors(&self.method.join()).is_some()
    }
    fn join_tokens(&self, encoded: &[u8]) -> Result<Vec<u64>> {
        let sketch: M::Sketch = decode(encoded)?;
        let mut tokens = Vec::new();
        self.method.join_tokens(&sketch, &mut tokens);
        tokens.sort_unstable();
        tokens.dedup();
        Ok(tokens)
    }
    fn join_prefix(&self, encoded: &[u8], frequent: &HashMap<u64, u32>) -> Result<Vec<u64>> {
        let sketch: M::Sketch = decode(encoded)?;
        let mut stored = Vec::new();
        self.method.keys(&sketch, &mut stored);
        let mut tokens = Vec::new();
        self.method.join_tokens(&sketch, &mut tokens);
        tokens.sort_unstable();
        tokens.dedup();
        tokens.sort_by_key(|t| (frequent.get(t).copied().unwrap_or(0), *t));
        tokens.truncate(stored.len());
        Ok(tokens)
    }
    fn signatures(&self, texts: &[&str]) -> Option<Vec<Vec<u32>>> {
        self.read_sketches(texts, |s: &MinHashSketch| s.signature().to_vec())
    }
    fn fingerprints(&self, texts: &[&str]) -> Option<Vec<u64>> {
        self.read_sketches(texts, SimHashSketch::fingerprint)
    }
    fn new_index(self: Arc<Self>) -> Result<Box<dyn DynIndex>> {
        let index = CollectionIndex::new(&self.method, self.method.join().max_radius())?;
        Ok(Box::new(TypedIndex {
            owner: self,
            index,
            sketches: Vec::new(),
            entries: Vec::new(),
        }))
    }
}

impl<M: Registered> Typed<M> {
    /// Per text, `read` of its sketch, when the method's sketches are `S`; else `None`.
    fn read_sketches<S: 'static, T: Send>(
        &self,
        texts: &[&str],
        read: impl Fn(&S) -> T + Sync,
    ) -> Option<Vec<T>> {
        if std::any::TypeId::of::<M::Sketch>() != std::any::TypeId::of::<S>() {
            return None;
        }
        let read = |text: &&str| {
            let sketch = self.method.sketch(text);
            let sketch = (&sketch as &dyn Any).downcast_ref::<S>();
            read(sketch.expect("the sketch type was checked"))
        };
        Some(texts.par_iter().map(read).collect())
    }
}

struct TypedIndex<M: Registered> {
    owner: Arc<Typed<M>>,
    index: CollectionIndex,
    sketches: Vec<M::Sketch>,
    entries: Vec<IndexEntry>,
}

impl<M: Registered> TypedIndex<M> {
    fn push(&mut self, sketch: M::Sketch) {
        let entry = IndexEntry::of(&self.owner.method, &sketch);
        let number = self.sketches.len() as u64;
        self.index.insert(number, &entry);
        self.sketches.push(sketch);
        self.entries.push(entry);
    }
}

impl<M: Registered> DynIndex for TypedIndex<M> {
    fn insert(&mut self, texts: &[&str]) {
        let method = &self.owner.method;
        let sketches: Vec<M::Sketch> = texts.par_iter().map(|t| method.sketch(t)).collect();
        for sketch in sketches {
            self.push(sketch);
        }
    }
    fn insert_encoded(&mut self, encoded: &[u8]) -> Result<()> {
        let sketch = M::Sketch::decode(encoded)?;
        self.push(sketch);
        Ok(())
    }
    fn query(&self, texts: &[&str], limit: usize) -> Vec<Vec<collection_index::Match>> {
        let method = &self.owner.method;
        texts
            .par_iter()
            .map(|text| {
                let sketch = method.sketch(text);
                let entry = IndexEntry::of(method, &sketch);
                let mut candidates = Vec::new();
                self.index.candidates(&entry, &mut candidates);
                let mut matches: Vec<collection_index::Match> = (candidates.into_iter())
                    .filter_map(|(seq, _)| {
                        let stored = &self.sketches[seq as usize];
                        let stored_entry = &self.entries[seq as usize];
                        collection_index::verify(method, &sketch, &entry, seq, stored, stored_entry)
                    })
                    .collect();
                collection_index::rank(&mut matches);
                matches.truncate(limit);
                matches
            })
            .collect()
    }
    fn len(&self) -> usize {
        self.sketches.len()
    }
    fn encoded(&self, number: usize, out: &mut Vec<u8>) {
        self.sketches[number].encode(out);
    }
}

struct Build;

impl MethodVisitor for Build {
    type Output = Arc<dyn DynMethod>;
    fn visit<M: Registered>(self, method: M) -> Arc<dyn DynMethod> {
        Arc::new(Typed { method })
    }
}

/// Methods built so far, by name and parameters: building a method can load dictionaries
/// (jieba's, the traditional-to-simplified table), which a Spark batch should not repeat.
static CACHE: Mutex<Option<HashMap<String, Arc<dyn DynMethod>>>> = Mutex::new(None);

/// The method `name` with `params`, built once per process.
///
/// # Errors
/// An unknown method or parameter, or a value the method refuses (naming it).
pub fn method(name: &str, params: &Params) -> Result<Arc<dyn DynMethod>> {
    let key = format!("{name}\u{1}{params:?}");
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(method) = cache.get(&key) {
        return Ok(Arc::clone(method));
    }
    let built = registry::with_method(name, params, Build)?;
    if cache.len() > 64 {
        cache.clear();
    }
    cache.insert(key, Arc::clone(&built));
    Ok(built)
}

/// The method `name` with `params` after learning from an encoded [`CorpusStats`] (a
/// distributed corpus pass; see `neardup/spark/`), built once per process and table.
///
/// # Errors
/// As [`method`], and a table that does not decode.
pub fn learned_method(name: &str, params: &Params, corpus: &[u8]) -> Result<Arc<dyn DynMethod>> {
    let key = format!("{name}\u{1}{params:?}\u{1}{:032x}", hash128(corpus));
    {
        let cache = CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(method) = cache.as_ref().and_then(|cache| cache.get(&key)) {
            return Ok(Arc::clone(method));
        }
    }
    let mut decoder = Decoder::new(corpus)?;
    let stats = CorpusStats::decode(&mut decoder)?;
    decoder.end()?;
    let learned = method(name, params)?.learned(&Arc::new(stats));
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache
        .get_or_insert_with(HashMap::new)
        .insert(key, Arc::clone(&learned));
    Ok(learned)
}

/// The representative clustering of `documents` documents numbered by rank (0 kept first)
/// from verified pairs `(a, b, similarity)`: the engine's own rule.
pub fn representative(documents: usize, pairs: &[(u32, u32, f64)]) -> Result<Assignment> {
    let rank: Vec<u32> = (0..documents as u32).collect();
    let mut list = Vec::with_capacity(pairs.len());
    for &(a, b, similarity) in pairs {
        if a as usize >= documents || b as usize >= documents {
            return Err(Error::invalid(
                "pairs",
                format!("({a}, {b}): a document number is not below {documents}"),
            ));
        }
        list.push(neardup_core::cluster::Pair {
            a: a.min(b),
            b: a.max(b),
            similarity,
            distance: None,
        });
    }
    Ok(neardup_core::cluster::representative(&rank, &list))
}
