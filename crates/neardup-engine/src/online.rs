//! The online engine: check one text against the stored ones, and check-and-insert (draft for
//! issue 10, on branch `service-design`; not wired to a store or a server yet).
//!
//! [`OnlineDedup`] keeps every stored document's sketch and the index its method's [`Join`]
//! asks for (exact identities always; LSH keys for [`Join::SymmetricKeys`]; a Hamming index
//! for [`Join::Hamming`]). Calls are sequential by design: the service's one writer per
//! collection applies a group of requests in queue order, each seeing the ones before it, so
//! of two identical texts the first is stored and the second is answered as its duplicate.

use std::collections::HashMap;

use neardup_core::{Error, Join, Method, Result, Sketch};
use neardup_index::{HammingIndex, MemoryIndex, OnlineIndex};

/// A stored document that a text matches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    /// Its id.
    pub id: u64,
    /// The verified similarity.
    pub similarity: f64,
    /// The Hamming distance, for methods with fingerprints.
    pub distance: Option<u32>,
}

/// The answer to a check-and-insert.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Inserted {
    /// Stored: no stored document matched.
    Stored,
    /// Not stored: a duplicate of the best match.
    Duplicate(Match),
}

/// Check and check-and-insert against the stored documents of one collection.
pub struct OnlineDedup<M: Method> {
    method: M,
    sketches: HashMap<u64, M::Sketch>,
    identities: HashMap<u128, Vec<u64>>,
    keys: MemoryIndex,
    hamming: Option<HammingIndex>,
}

impl<M: Method> OnlineDedup<M> {
    /// An empty collection of `method`; `max_distance` is the largest Hamming radius the
    /// method uses (for [`Join::Hamming`]).
    ///
    /// # Errors
    /// A method whose join has no online form yet (`Probe`, `SharedKeys`, `Prefix`).
    pub fn new(method: M, max_distance: u32) -> Result<OnlineDedup<M>> {
        let hamming = match method.join() {
            Join::Hamming => Some(
                HammingIndex::build(&[], max_distance, None)
                    .map_err(|e| Error::invalid("max_distance", e.to_string()))?,
            ),
            Join::Identity | Join::SymmetricKeys => None,
            other => {
                return Err(Error::invalid(
                    "method",
                    format!("{other:?} has no online index yet"),
                ))
            }
        };
        Ok(OnlineDedup {
            method,
            sketches: HashMap::new(),
            identities: HashMap::new(),
            keys: MemoryIndex::new(),
            hamming,
        })
    }

    /// Stored documents.
    pub fn len(&self) -> usize {
        self.sketches.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.sketches.is_empty()
    }

    /// The stored documents `text` matches, best first (similarity, then distance, then id).
    pub fn check(&self, text: &str) -> Vec<Match> {
        self.matches(&self.method.sketch(text))
    }

    fn matches(&self, sketch: &M::Sketch) -> Vec<Match> {
        if sketch.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<Match> = Vec::new();
        let distance = |a: &M::Sketch, b: &M::Sketch| self.method.distance(a, b);
        for &id in self
            .identities
            .get(&sketch.identity())
            .into_iter()
            .flatten()
        {
            let stored = &self.sketches[&id];
            found.push(Match {
                id,
                similarity: 1.0,
                distance: distance(sketch, stored),
            });
        }
        if !sketch.exact_only() {
            let mut candidates: Vec<u64> = Vec::new();
            match (self.method.join(), &self.hamming) {
                (Join::SymmetricKeys, _) => {
                    let mut keys = Vec::new();
                    self.method.keys(sketch, &mut keys);
                    self.keys.probe(&keys, &mut candidates);
                }
                (Join::Hamming, Some(index)) => {
                    if let Some((fingerprint, radius)) = self.method.hamming_key(sketch) {
                        let radius = radius.min(index.max_distance());
                        if let Ok(near) = index.query(fingerprint, radius) {
                            candidates.extend(near.into_iter().map(|(id, _)| id));
                        }
                    }
                }
                _ => {}
            }
            for id in candidates {
                if found.iter().any(|m| m.id == id) {
                    continue;
                }
                let stored = &self.sketches[&id];
                if stored.exact_only() {
                    continue;
                }
                if let Some(similarity) = self.method.verify(sketch, stored) {
                    found.push(Match {
                        id,
                        similarity,
                        distance: distance(sketch, stored),
                    });
                }
            }
        }
        found.sort_by(|a, b| {
            b.similarity
                .total_cmp(&a.similarity)
                .then(a.distance.cmp(&b.distance))
                .then(a.id.cmp(&b.id))
        });
        found
    }

    /// Stores `text` under `id` unless it matches a stored document.
    ///
    /// # Errors
    /// `id` already stored (parameter `id`); nothing changes.
    pub fn insert(&mut self, id: u64, text: &str) -> Result<Inserted> {
        if self.sketches.contains_key(&id) {
            return Err(Error::invalid("id", format!("{id} is already stored")));
        }
        let sketch = self.method.sketch(text);
        if let Some(best) = self.matches(&sketch).first() {
            return Ok(Inserted::Duplicate(*best));
        }
        if !sketch.exact_only() && !sketch.is_empty() {
            match (self.method.join(), self.hamming.as_mut()) {
                (Join::SymmetricKeys, _) => {
                    let mut keys = Vec::new();
                    self.method.keys(&sketch, &mut keys);
                    // The id is new (checked above), so this cannot fail.
                    let _ = self.keys.insert(id, &keys);
                }
                (Join::Hamming, Some(index)) => {
                    if let Some((fingerprint, _)) = self.method.hamming_key(&sketch) {
                        let _ = index.insert(id, fingerprint);
                    }
                }
                _ => {}
            }
        }
        if !sketch.is_empty() {
            self.identities
                .entry(sketch.identity())
                .or_default()
                .push(id);
        }
        self.sketches.insert(id, sketch);
        Ok(Inserted::Stored)
    }

    /// Removes `id` (retention, or a `DELETE`); false when it was not stored.
    pub fn remove(&mut self, id: u64) -> bool {
        let Some(sketch) = self.sketches.remove(&id) else {
            return false;
        };
        if let Some(ids) = self.identities.get_mut(&sketch.identity()) {
            ids.retain(|&other| other != id);
            if ids.is_empty() {
                self.identities.remove(&sketch.identity());
            }
        }
        self.keys.remove(id);
        if let Some(index) = self.hamming.as_mut() {
            index.remove(id);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_core::methods::exact::Exact;
    use neardup_core::methods::minhash::MinHashBuilder;
    use neardup_core::methods::simhash::SimHash;
    use neardup_core::registry::{Params, Registered};

    const NEWS: &str =
        "国务院总理李克强今天在北京主持召开国务院常务会议，部署进一步扩大内需的措施，\
                        会议决定加大对基础设施建设的投入。";
    const REPOST: &str =
        "國務院總理李克強今天在北京主持召開國務院常務會議,部署進一步擴大內需的措施!\
                          會議決定加大對基礎設施建設的投入。";
    const OTHER: &str = "今天上海天气晴朗，适合出门散步，傍晚可能有小雨，请带好雨具出行。";

    fn exercise<M: Method>(method: M, max_distance: u32) {
        let mut online = OnlineDedup::new(method, max_distance).unwrap();
        assert_eq!(online.insert(1, NEWS).unwrap(), Inserted::Stored);
        match online.insert(2, REPOST).unwrap() {
            Inserted::Duplicate(found) => assert_eq!(found.id, 1),
            Inserted::Stored => panic!("the repost was stored"),
        }
        assert_eq!(online.insert(3, OTHER).unwrap(), Inserted::Stored);
        assert!(
            online.insert(3, NEWS).is_err(),
            "an id is never overwritten"
        );
        assert_eq!(online.len(), 2);
        let found = online.check(REPOST);
        assert_eq!(found.first().map(|m| m.id), Some(1));
        assert!(online
            .check("完全无关的另一句话，讲的是足球比赛的结果和球员的表现。")
            .is_empty());
        assert!(online.remove(1));
        assert!(!online.remove(1));
        assert!(
            online.check(REPOST).is_empty(),
            "a removed document matches nothing"
        );
        assert_eq!(online.insert(4, REPOST).unwrap(), Inserted::Stored);
    }

    #[test]
    fn every_method_checks_and_inserts() {
        exercise(MinHashBuilder::new().build().unwrap(), 0);
        exercise(Exact::default(), 0);
        exercise(SimHash::from_params(&Params::new()).unwrap(), 24);
    }

    #[test]
    fn of_identical_texts_in_sequence_exactly_one_is_stored() {
        let mut online = OnlineDedup::new(MinHashBuilder::new().build().unwrap(), 0).unwrap();
        let answers: Vec<Inserted> = (0..10).map(|id| online.insert(id, NEWS).unwrap()).collect();
        assert_eq!(answers[0], Inserted::Stored);
        assert!(answers[1..]
            .iter()
            .all(|a| matches!(a, Inserted::Duplicate(m) if m.id == 0)));
    }
}
