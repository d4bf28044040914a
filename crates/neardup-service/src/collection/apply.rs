//! One group of inserts, checked and stored: each document against the stored documents
//! (in parallel: they do not change during the group) and against the documents of its own
//! group accepted before it (in order), so that of two identical texts exactly one is stored.
//! The accepted documents are written with one sync, and only then answered as stored.

use std::sync::atomic::Ordering;

use hashbrown::HashSet;
use neardup_core::registry::Registered;
use neardup_core::{Method, Sketch};
use neardup_engine::collection_index::{rank, verify, CollectionIndex, Match};

use super::{Collection, Inserted, Prepared, Reply, State, MAX_FUTURE_MS};
use crate::error::ServiceError;
use crate::settings::{format_time, RetentionBy};
use crate::store::{Insert, Record, StoreError};

/// The answers of a group: one list per job, in order.
type Answers = Vec<Vec<Result<Inserted, ServiceError>>>;

/// The documents of a group accepted so far.
struct Accepted<'a, M: Method> {
    /// An index over them, found by position.
    index: CollectionIndex,
    /// Each document, its retention time, its record's length.
    documents: Vec<(&'a Prepared<M>, i64, u32)>,
    /// Their ids.
    ids: HashSet<&'a str>,
    /// Their records, encoded.
    bytes: Vec<u8>,
    /// The sequence number of the first.
    first_seq: u64,
    /// Scratch space for the index's candidates.
    candidates: Vec<(u64, Option<u32>)>,
}

impl<'a, M: Method> Accepted<'a, M> {
    /// Accepts `document` with retention time `time_ms`: indexed, its record encoded. Its
    /// position among the accepted.
    fn push(&mut self, document: &'a Prepared<M>, time_ms: i64, now: i64) -> usize {
        let at = self.documents.len();
        self.index.insert(at as u64, &document.entry);
        self.ids.insert(document.id.as_str());
        let before = self.bytes.len();
        Record::Insert(Insert {
            seq: self.first_seq + at as u64,
            time_ms,
            inserted_ms: now,
            id: document.id.clone(),
            entry: document.entry.clone(),
            sketch: {
                let mut out = Vec::new();
                document.sketch.encode(&mut out);
                out
            },
            text: document.text.clone(),
        })
        .encode(&mut self.bytes);
        let len = (self.bytes.len() - before) as u32;
        self.documents.push((document, time_ms, len));
        at
    }
}

/// The same error for every document of the group.
fn refuse_all<M: Method>(group: &[(Vec<Prepared<M>>, Reply)], error: &ServiceError) -> Answers {
    group
        .iter()
        .map(|(docs, _)| docs.iter().map(|_| Err(error.clone())).collect())
        .collect()
}

impl<M: Registered + 'static> Collection<M> {
    /// Checks and stores one group of jobs; the answers per job, in order.
    pub(super) fn apply_group(&self, group: &[(Vec<Prepared<M>>, Reply)]) -> Answers {
        let now = self.clock.now_ms();
        if let Err(error) = self.check_failed() {
            return refuse_all(group, &error);
        }
        let index = match CollectionIndex::new(&self.method, self.max_radius) {
            Ok(index) => index,
            Err(e) => return refuse_all(group, &ServiceError::from(e)),
        };
        let mut answers: Answers = Vec::new();
        // Answer slots: (job, position) -> accepted index, filled after the sync.
        let mut slots: Vec<Vec<Option<usize>>> = Vec::new();
        let mut accepted = Accepted {
            index,
            documents: Vec::new(),
            ids: HashSet::new(),
            bytes: Vec::new(),
            first_seq: 0,
            candidates: Vec::new(),
        };
        {
            let state = self.read();
            accepted.first_seq = state.next_seq;
            let mut against_stored = self.find_in_stored(&state, group, now).into_iter();
            for (documents, _) in group {
                let mut job_answers = Vec::with_capacity(documents.len());
                let mut job_slots = Vec::with_capacity(documents.len());
                for document in documents {
                    let stored = against_stored.next().unwrap_or(Ok(None));
                    let (answer, slot) = self.decide(&state, &mut accepted, document, stored, now);
                    job_answers.push(answer);
                    job_slots.push(slot);
                }
                answers.push(job_answers);
                slots.push(job_slots);
            }
        }
        if !accepted.documents.is_empty() {
            if let Err(error) = self.commit(&accepted.bytes, &accepted.documents, now) {
                for (job_answers, job_slots) in answers.iter_mut().zip(&slots) {
                    for (answer, slot) in job_answers.iter_mut().zip(job_slots) {
                        if slot.is_some() {
                            *answer = Err(error.clone());
                        }
                    }
                }
            }
        }
        self.count_answers(&answers);
        if let Some(learning) = &self.learning {
            // In the order answered; an exact copy of a document held is not counted again.
            let documents = group.iter().flat_map(|(docs, _)| docs);
            for (document, answer) in documents.zip(answers.iter().flatten()) {
                if let Ok(a) = answer {
                    if a.stored || a.similarity.is_some_and(|s| s < 1.0) {
                        learning.count(&document.features);
                    }
                }
            }
        }
        answers
    }

    /// The best stored match of each document of the group, in order. The stored documents
    /// do not change during the group: in parallel.
    fn find_in_stored(
        &self,
        state: &State,
        group: &[(Vec<Prepared<M>>, Reply)],
        now: i64,
    ) -> Vec<Result<Option<Match>, StoreError>> {
        use rayon::prelude::*;
        let all: Vec<&Prepared<M>> = group.iter().flat_map(|(docs, _)| docs).collect();
        all.par_iter()
            .map(|d| {
                self.find(state, &d.sketch, &d.entry, now)
                    .map(|found| found.into_iter().next())
            })
            .collect()
    }

    /// The answer to one document of the group, and its position among the accepted when it
    /// is stored.
    fn decide<'a>(
        &self,
        state: &State,
        accepted: &mut Accepted<'a, M>,
        document: &'a Prepared<M>,
        stored: Result<Option<Match>, StoreError>,
        now: i64,
    ) -> (Result<Inserted, ServiceError>, Option<usize>) {
        let time_ms = match self.admit(state, accepted, document, now) {
            Ok(time_ms) => time_ms,
            Err(error) => return (Err(error), None),
        };
        // Against the stored documents, then against this group's.
        let stored = match stored {
            Ok(found) => found,
            Err(error) => return (Err(error.into()), None),
        };
        let best = match stored {
            Some(m) => {
                let id = state.doc(m.seq).map(|(_, d)| d.id.to_string());
                Some((m, id.unwrap_or_default()))
            }
            None => self.find_in_group(accepted, document),
        };
        if let Some((m, id)) = &best {
            self.activity.duplicate(
                now,
                &document.id,
                id,
                m.similarity,
                m.distance,
                document.text.as_deref(),
            );
        }
        match best {
            Some((m, id)) => (
                Ok(Inserted {
                    id: document.id.clone(),
                    stored: false,
                    duplicate_of: Some(id),
                    similarity: Some(m.similarity),
                    distance: m.distance,
                }),
                None,
            ),
            None => {
                let at = accepted.push(document, time_ms, now);
                let inserted = Inserted {
                    id: document.id.clone(),
                    stored: true,
                    duplicate_of: None,
                    similarity: None,
                    distance: None,
                };
                (Ok(inserted), Some(at))
            }
        }
    }

    /// Refuses an id that is stored or accepted in this group, and a time too far ahead or
    /// already out of the window; else the document's retention time.
    fn admit(
        &self,
        state: &State,
        accepted: &Accepted<'_, M>,
        document: &Prepared<M>,
        now: i64,
    ) -> Result<i64, ServiceError> {
        if self.live_id(state, &document.id, now).is_some()
            || accepted.ids.contains(document.id.as_str())
        {
            return Err(ServiceError::new(
                409,
                "id_exists",
                format!(
                    "id {:?} is already stored in collection {:?}; ids are never overwritten \
                     (DELETE it first)",
                    document.id, self.name
                ),
            )
            .field("id"));
        }
        let time_ms = match (self.settings.retention_by, document.time_ms) {
            (RetentionBy::Time, Some(t)) => t,
            _ => now,
        };
        if let Some(t) = document.time_ms {
            if t > now + MAX_FUTURE_MS {
                return Err(ServiceError::invalid(
                    "time",
                    format!(
                        "{} is more than an hour ahead of the server's clock ({})",
                        format_time(t),
                        format_time(now)
                    ),
                ));
            }
        }
        if self.expired(time_ms, now) {
            return Err(ServiceError::invalid(
                "time",
                format!(
                    "{} is already outside the retention window ({})",
                    format_time(time_ms),
                    self.settings.retention.as_deref().unwrap_or_default()
                ),
            ));
        }
        Ok(time_ms)
    }

    /// The best match of `document` among the documents of its group accepted before it,
    /// with its id.
    fn find_in_group(
        &self,
        accepted: &mut Accepted<'_, M>,
        document: &Prepared<M>,
    ) -> Option<(Match, String)> {
        let left_out = accepted
            .index
            .candidates(&document.entry, &mut accepted.candidates);
        self.counters
            .candidates_capped
            .fetch_add(left_out, Ordering::Relaxed);
        self.counters
            .verified
            .fetch_add(accepted.candidates.len() as u64, Ordering::Relaxed);
        let mut found: Vec<Match> = accepted
            .candidates
            .iter()
            .filter_map(|&(at, _)| {
                let (other, _, _) = accepted.documents[at as usize];
                verify(
                    &self.method,
                    &document.sketch,
                    &document.entry,
                    at,
                    &other.sketch,
                    &other.entry,
                )
            })
            .collect();
        rank(&mut found);
        found
            .first()
            .map(|m| (*m, accepted.documents[m.seq as usize].0.id.clone()))
    }

    /// Counts the answers: stored, duplicates, refused.
    fn count_answers(&self, answers: &Answers) {
        for answer in answers.iter().flatten() {
            let counter = match answer {
                Ok(a) if a.stored => &self.counters.stored,
                Ok(_) => &self.counters.duplicates,
                Err(_) => &self.counters.refused,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}
