//! What a collection did lately, kept in memory for the console and
//! `GET /v1/collections/{name}/activity`: the latest duplicates with what they matched, and
//! the counters sampled every [`SAMPLE_MS`] over the last [`SAMPLES`] samples (a day), so
//! that a plot does not start empty when a page opens. Both restart empty with the service;
//! the counters themselves survive restarts (`counters.json`).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use super::{lock, Counters};
use crate::api::{self, RecentDuplicate, Sample};
use crate::settings::format_time;

/// Duplicates kept, newest first.
pub const RECENT: usize = 50;
/// Milliseconds between samples.
pub const SAMPLE_MS: i64 = 10_000;
/// Samples kept: a day.
pub const SAMPLES: usize = 8640;
/// Characters of a duplicate's text kept (when the collection keeps texts).
const TEXT_CHARS: usize = 500;

/// The latest duplicates and the sampled counters of one collection.
#[derive(Debug, Default)]
pub struct Activity {
    recent: Mutex<VecDeque<RecentDuplicate>>,
    history: Mutex<VecDeque<Sample>>,
}

impl Activity {
    /// Notes a duplicate answered at `now_ms`: `id` matched `duplicate_of`; its text when
    /// the collection keeps texts (cut to 500 characters).
    pub fn duplicate(
        &self,
        now_ms: i64,
        id: &str,
        duplicate_of: &str,
        similarity: f64,
        distance: Option<u32>,
        text: Option<&str>,
    ) {
        let mut recent = lock(&self.recent);
        if recent.len() == RECENT {
            recent.pop_back();
        }
        recent.push_front(RecentDuplicate {
            time: format_time(now_ms),
            id: id.to_owned(),
            duplicate_of: duplicate_of.to_owned(),
            similarity,
            distance,
            text: text.map(|t| t.chars().take(TEXT_CHARS).collect()),
        });
    }

    /// Takes a sample of `counters` (and `documents`, the live count) when the last one is
    /// [`SAMPLE_MS`] old or more.
    pub fn sample(&self, now_ms: i64, documents: u64, counters: &Counters) {
        let mut history = lock(&self.history);
        if history
            .back()
            .is_some_and(|last| now_ms - last.time_ms < SAMPLE_MS)
        {
            return;
        }
        if history.len() == SAMPLES {
            history.pop_front();
        }
        let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
        history.push_back(Sample {
            time_ms: now_ms,
            documents,
            stored: load(&counters.stored),
            duplicates: load(&counters.duplicates),
            checks: load(&counters.checks),
        });
    }

    /// The answer of the activity route.
    pub fn answer(&self) -> api::Activity {
        api::Activity {
            recent_duplicates: lock(&self.recent).iter().cloned().collect(),
            sample_seconds: (SAMPLE_MS / 1000) as u64,
            history: lock(&self.history).iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_duplicates_come_newest_first_and_are_bounded() {
        let activity = Activity::default();
        for i in 0..RECENT + 7 {
            let text = "字".repeat(600);
            activity.duplicate(i as i64, &format!("n{i}"), "a", 0.9, Some(2), Some(&text));
        }
        let answer = activity.answer();
        assert_eq!(answer.recent_duplicates.len(), RECENT);
        assert_eq!(answer.recent_duplicates[0].id, format!("n{}", RECENT + 6));
        assert_eq!(answer.recent_duplicates[RECENT - 1].id, "n7");
        let text = answer.recent_duplicates[0].text.as_deref().unwrap();
        assert_eq!(text.chars().count(), 500);
    }

    #[test]
    fn samples_are_spaced_and_bounded() {
        let activity = Activity::default();
        let counters = Counters::default();
        for second in 0..(SAMPLES as i64 + 100) * 10 + 5 {
            counters.stored.store(second as u64, Ordering::Relaxed);
            activity.sample(second * 1000, 3, &counters);
        }
        let answer = activity.answer();
        assert_eq!(answer.history.len(), SAMPLES);
        assert!(answer
            .history
            .windows(2)
            .all(|w| w[1].time_ms - w[0].time_ms == SAMPLE_MS));
        assert_eq!(
            answer.history.last().unwrap().stored,
            (SAMPLES as u64 + 100) * 10
        );
    }
}
