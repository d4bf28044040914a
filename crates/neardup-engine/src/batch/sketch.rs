//! The sketch stage: every document sketched in parallel, block by block, its facts kept in
//! memory and its sketch in a [`SketchStore`] (in memory or spilled), with what boilerplate
//! handling removed summed as the documents go.

use std::time::Instant;

use neardup_core::{Error, Method, Result, Sketch, SketchNotes};
use rayon::prelude::*;

use super::check_document_count;
use super::options::Progress;
use super::outcome::{BoilerplateLine, BoilerplateStats};
use crate::sketch_store::{Prechecks, SketchStore, Spilling, StoreBuilder};

/// Per document, what the engine keeps in memory whatever holds the sketches.
#[derive(Default)]
pub(crate) struct Facts {
    /// [`Sketch::identity`].
    pub(crate) identity: Vec<u128>,
    /// [`Sketch::is_empty`].
    pub(crate) empty: Vec<bool>,
    /// [`Sketch::exact_only`].
    pub(crate) exact_only: Vec<bool>,
    /// Characters of the text (for the keep policy), at most `u32::MAX`.
    pub(crate) lengths: Vec<u32>,
    /// Whether pairs carry a distance ([`Method::distance`](neardup_core::Method::distance) of the
    /// first sketch with itself).
    pub(crate) distances: Option<bool>,
}

/// The sketch stage, fed block by block: [`dedup`](super::dedup) gives it every text at once; a run
/// whose corpus does not fit in memory reads its input in blocks, gives each block to
/// [`Sketcher::push_owned`], and has the sketches spilled ([`crate::sketch_store`]). Either way
/// [`Sketcher::finish`] gives the same outcome for the same texts, however they were cut into
/// blocks.
pub struct Sketcher<'m, M: Method> {
    pub(crate) method: &'m M,
    pub(crate) documents: Option<usize>,
    pub(crate) store: StoreBuilder<M::Sketch>,
    pub(crate) spilling: Option<Spilling>,
    pub(crate) facts: Facts,
    pub(crate) notes: NoteTotals,
    pub(crate) first_lines: FirstLines,
    pub(crate) started: Instant,
}

impl Facts {
    /// Room for `documents` documents, so that a known corpus takes no growth slack.
    fn with_capacity(documents: usize) -> Facts {
        Facts {
            identity: Vec::with_capacity(documents),
            empty: Vec::with_capacity(documents),
            exact_only: Vec::with_capacity(documents),
            lengths: Vec::with_capacity(documents),
            distances: None,
        }
    }
}

impl<'m, M: Method> Sketcher<'m, M> {
    /// A sketch stage with `method` (already learned, see [`Learned`](super::Learned)) for
    /// `documents` texts when their number is known (the stage's progress counts them, and
    /// [`Sketcher::finish`] checks that all came; a caller that does not know it reports progress
    /// itself). With `spilling`, sketches are written to a spill in its directory, and the
    /// candidate stage of symmetric keys sorts its entries in runs there (see [`neardup_index::ExternalKeys`]);
    /// else everything is kept in memory.
    ///
    /// # Errors
    /// More than [`MAX_DOCUMENTS`](super::MAX_DOCUMENTS) documents (parameter `documents`).
    pub fn new(
        method: &'m M,
        documents: Option<usize>,
        spilling: Option<Spilling>,
        progress: &dyn Progress,
    ) -> Result<Sketcher<'m, M>> {
        let spill = match &spilling {
            Some(spilling) => {
                Some((spilling.dir.create("sketches")).map_err(crate::sketch_store::spill_error)?)
            }
            None => None,
        };
        // A method's pre-checks go to a spill of their own beside the sketches.
        let prechecks = match (&spilling, method.pair_precheck().map_or(0, |p| p.width)) {
            (Some(spilling), width @ 1..) => Some(Prechecks::new(
                (spilling.dir.create("prechecks")).map_err(crate::sketch_store::spill_error)?,
                width,
            )),
            _ => None,
        };
        if let Some(documents) = documents {
            check_document_count(documents)?;
            progress.stage("sketch", documents as u64);
        }
        Ok(Sketcher {
            method,
            documents,
            store: StoreBuilder::new(spill, prechecks, documents.unwrap_or(0)),
            spilling,
            facts: Facts::with_capacity(documents.unwrap_or(0)),
            notes: NoteTotals::default(),
            first_lines: FirstLines::default(),
            started: Instant::now(),
        })
    }

    /// Sketches the next texts (borrowed).
    ///
    /// # Errors
    /// More texts than announced, or a spill that cannot be written (parameter `temp_dir`).
    pub fn push<S: AsRef<str> + Sync>(
        &mut self,
        texts: &[S],
        progress: &dyn Progress,
    ) -> Result<()> {
        self.push_iter(texts.par_iter(), progress)
    }

    /// Sketches the next texts, dropping each once it is sketched.
    ///
    /// # Errors
    /// As [`Sketcher::push`].
    pub fn push_owned(&mut self, texts: Vec<String>, progress: &dyn Progress) -> Result<()> {
        self.push_iter(texts.into_par_iter(), progress)
    }

    pub(super) fn push_iter<I>(&mut self, texts: I, progress: &dyn Progress) -> Result<()>
    where
        I: IndexedParallelIterator,
        I::Item: AsRef<str>,
    {
        let first = self.facts.lengths.len();
        check_document_count(first + texts.len())?;
        if let Some(documents) = self.documents.filter(|&d| first + texts.len() > d) {
            return Err(Error::invalid(
                "documents",
                format!(
                    "{} texts given to a sketch stage of {documents}",
                    first + texts.len()
                ),
            ));
        }
        type Noted = (u32, Option<DocumentNotes>);
        let (method, first_lines) = (self.method, &self.first_lines);
        let (sketches, noted): (Vec<M::Sketch>, Vec<Noted>) = texts
            .enumerate()
            .map(|(i, text)| {
                sketch_one(
                    method,
                    (first + i) as u32,
                    text.as_ref(),
                    first_lines,
                    progress,
                )
            })
            .unzip();
        let facts = &mut self.facts;
        if facts.distances.is_none() {
            facts.distances = (sketches.first()).map(|s| method.distance(s, s).is_some());
        }
        for sketch in &sketches {
            facts.identity.push(sketch.identity());
            facts.empty.push(sketch.is_empty());
            facts.exact_only.push(sketch.exact_only());
        }
        for (length, note) in noted {
            facts.lengths.push(length);
            if let Some(note) = note {
                self.notes.add(&note);
            }
        }
        self.store.extend(self.method, sketches)
    }

    /// Ends the stage: the sketches of every document given, their facts, and what
    /// boilerplate handling removed; and how the stage spilled.
    ///
    /// # Errors
    /// Fewer texts than announced (parameter `documents`), or a spill that cannot be written
    /// (parameter `temp_dir`).
    pub(super) fn into_sketched(self) -> Result<(Sketched<M::Sketch>, Option<Spilling>)> {
        let given = self.facts.lengths.len();
        if let Some(documents) = self.documents.filter(|&d| d != given) {
            return Err(Error::invalid(
                "documents",
                format!("{given} texts given to a sketch stage of {documents}"),
            ));
        }
        let boilerplate = boilerplate_stats(self.notes, self.first_lines);
        let sketched = Sketched {
            sketches: self.store.finish()?,
            facts: self.facts,
            boilerplate,
            started: self.started,
        };
        Ok((sketched, self.spilling))
    }
}

/// What the sketch stage hands on: every document's sketch (in memory or spilled), the
/// facts kept per document whatever holds the sketches, and what boilerplate handling
/// removed.
pub(crate) struct Sketched<S> {
    /// The sketches, by document.
    pub(crate) sketches: SketchStore<S>,
    /// The facts, by document.
    pub(crate) facts: Facts,
    /// What boilerplate handling removed, summed over the documents.
    pub(crate) boilerplate: BoilerplateStats,
    /// When the stage began.
    pub(crate) started: Instant,
}

/// What sketching removed from one document, when it removed anything: the keys of its
/// boilerplate lines (their texts are kept once, in [`FirstLines`]).
struct DocumentNotes {
    lines: Vec<u64>,
    discounted: u64,
}

/// The documents' notes summed as they are sketched (sums and counts, so the order of the
/// documents does not change them): nothing is held per document.
#[derive(Default)]
pub(crate) struct NoteTotals {
    /// Features discounted, over all documents.
    pub(crate) discounted: u64,
    /// Documents with at least one boilerplate line removed.
    pub(crate) documents: u64,
    /// Lines removed, over all documents.
    pub(crate) removed_lines: u64,
    /// Per distinct line key, the documents it was removed from.
    pub(crate) counts: std::collections::HashMap<u64, u64>,
}

impl NoteTotals {
    fn add(&mut self, note: &DocumentNotes) {
        self.discounted += note.discounted;
        if note.lines.is_empty() {
            return;
        }
        self.documents += 1;
        self.removed_lines += note.lines.len() as u64;
        for &key in &note.lines {
            *self.counts.entry(key).or_insert(0) += 1;
        }
    }
}

/// Line key -> ((document, position), text) of its first occurrence.
type FirstLineMap = std::collections::HashMap<u64, ((u32, u32), Box<str>)>;

/// Per boilerplate line key, the first document (input order) it was removed from and its
/// text there: filled by the parallel sketch stage (the smallest document index wins, so
/// the result does not depend on the order the documents were sketched in), in shards
/// behind locks.
pub(crate) struct FirstLines {
    pub(crate) shards: Vec<std::sync::Mutex<FirstLineMap>>,
}

impl Default for FirstLines {
    fn default() -> FirstLines {
        FirstLines {
            shards: (0..64).map(|_| Default::default()).collect(),
        }
    }
}

impl FirstLines {
    /// `at` is (document, position of the line among the document's removed lines).
    fn offer(&self, key: u64, at: (u32, u32), text: &str) {
        let shard = &self.shards[(key % 64) as usize];
        let mut map = shard
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match map.get_mut(&key) {
            Some(first) if first.0 <= at => {}
            Some(first) => *first = (at, text.into()),
            None => {
                map.insert(key, (at, text.into()));
            }
        }
    }

    fn into_map(self) -> FirstLineMap {
        (self.shards.into_iter())
            .flat_map(|shard| {
                shard
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
            })
            .collect()
    }
}

fn sketch_one<M: Method>(
    method: &M,
    document: u32,
    text: &str,
    first_lines: &FirstLines,
    progress: &dyn Progress,
) -> (M::Sketch, (u32, Option<DocumentNotes>)) {
    let mut notes = SketchNotes::default();
    let sketch = method.sketch_noted(text, &mut notes);
    progress.advance(1);
    let noted = (!notes.removed_lines.is_empty() || notes.discounted_features > 0).then(|| {
        let mut lines: Vec<u64> = Vec::with_capacity(notes.removed_lines.len());
        for line in &notes.removed_lines {
            if !lines.contains(&line.key) {
                first_lines.offer(line.key, (document, lines.len() as u32), line.text);
                lines.push(line.key);
            }
        }
        DocumentNotes {
            lines,
            discounted: notes.discounted_features,
        }
    });
    let length = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
    (sketch, (length, noted))
}

/// Sums the documents' notes: per distinct line, its first text and the documents it was
/// removed from, most documents first.
fn boilerplate_stats(notes: NoteTotals, first_lines: FirstLines) -> BoilerplateStats {
    let mut stats = BoilerplateStats {
        discounted_features: notes.discounted,
        documents: notes.documents,
        removed_lines: notes.removed_lines,
        ..BoilerplateStats::default()
    };
    let counts = notes.counts;
    let mut first = first_lines.into_map();
    let mut lines: Vec<(u64, (u32, u32), Box<str>)> = (counts.into_iter())
        .filter_map(|(key, documents)| {
            let (at, text) = first.remove(&key)?;
            Some((documents, at, text))
        })
        .collect();
    // Most documents first, then by first occurrence: (document, position) is unique.
    lines.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    stats.lines = (lines.into_iter())
        .map(|(documents, at, text)| BoilerplateLine {
            text: text.into(),
            documents,
            first: at.0,
        })
        .collect();
    stats
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::batch::testing::Words;
    use crate::sketch_store::MemorySpillDir;
    use crate::NoProgress;

    #[test]
    fn the_stage_keeps_each_documents_facts() {
        let method = Words::default();
        let mut sketcher = Sketcher::new(&method, Some(3), None, &NoProgress).unwrap();
        sketcher.push(&["a b", ""], &NoProgress).unwrap();
        sketcher
            .push_owned(vec!["b a  ü".to_owned()], &NoProgress)
            .unwrap();
        let (sketched, spilling) = sketcher.into_sketched().unwrap();
        assert!(spilling.is_none());
        let facts = &sketched.facts;
        assert_eq!(facts.empty, vec![false, true, false]);
        assert_eq!(facts.exact_only, vec![false; 3]);
        assert_eq!(facts.lengths, vec![3, 0, 6]);
        assert_eq!(facts.distances, Some(false));
        assert_ne!(facts.identity[0], facts.identity[2]);
        assert_eq!(sketched.sketches.len(), 3);
        assert!(!sketched.sketches.is_spilled());
        assert_eq!(sketched.boilerplate, BoilerplateStats::default());
    }

    #[test]
    fn more_or_fewer_texts_than_announced_are_refused() {
        let method = Words::default();
        let mut sketcher = Sketcher::new(&method, Some(2), None, &NoProgress).unwrap();
        let more = sketcher.push(&["a", "b", "c"], &NoProgress).unwrap_err();
        assert!(more.to_string().contains("documents"), "{more}");
        sketcher.push(&["a"], &NoProgress).unwrap();
        let fewer = sketcher.into_sketched().err().unwrap();
        assert!(fewer.to_string().contains("1 texts given"), "{fewer}");
    }

    #[test]
    fn a_spilling_stage_reads_its_sketches_back() {
        let method = Words::default();
        let spilling = Spilling {
            dir: Arc::new(MemorySpillDir),
            budget: 1 << 20,
        };
        let mut sketcher = Sketcher::new(&method, None, Some(spilling), &NoProgress).unwrap();
        sketcher.push(&["a b", "c d e"], &NoProgress).unwrap();
        let (sketched, spilling) = sketcher.into_sketched().unwrap();
        assert!(spilling.is_some());
        assert!(sketched.sketches.is_spilled());
        assert!(sketched.sketches.spilled_bytes() > 0);
        let read = sketched.sketches.get(&method, 1).unwrap();
        assert_eq!(*read, method.sketch("c d e"));
    }

    #[test]
    fn the_first_occurrence_of_a_line_wins() {
        let first = FirstLines::default();
        first.offer(7, (5, 0), "late");
        first.offer(7, (2, 1), "early");
        first.offer(7, (2, 3), "later");
        let map = first.into_map();
        assert_eq!(map[&7], ((2, 1), "early".into()));
    }

    #[test]
    fn boilerplate_lines_come_most_documents_first() {
        let mut notes = NoteTotals::default();
        for (lines, discounted) in [(vec![1, 2], 3), (vec![2], 0), (vec![], 1)] {
            notes.add(&DocumentNotes { lines, discounted });
        }
        let first = FirstLines::default();
        first.offer(1, (0, 0), "one");
        first.offer(2, (0, 1), "two");
        let stats = boilerplate_stats(notes, first);
        assert_eq!(
            (
                stats.discounted_features,
                stats.documents,
                stats.removed_lines
            ),
            (4, 2, 3)
        );
        let lines: Vec<(&str, u64, u32)> = (stats.lines.iter())
            .map(|line| (line.text.as_str(), line.documents, line.first))
            .collect();
        assert_eq!(lines, vec![("two", 2, 0), ("one", 1, 0)]);
    }
}
