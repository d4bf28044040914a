//! Memory sampling: the peak resident memory of each stage of a run, for the statistics
//! file's `peak_rss_by_stage`.

use neardup_engine::Progress;

/// Passes progress on and notes the peak resident memory of each stage, sampled every
/// [`SAMPLE_MS`] milliseconds by a thread (`VmRSS` of `/proc/self/status`; Linux only). The
/// kernel's own high-water mark is left alone, so that tools measuring the process from
/// outside see its true peak.
pub(super) struct StagePeaks<'a> {
    inner: &'a dyn Progress,
    state: std::sync::Arc<std::sync::Mutex<PeakState>>,
    sampler: Option<std::thread::JoinHandle<()>>,
}

/// Milliseconds between two samples of [`StagePeaks`].
const SAMPLE_MS: u64 = 20;

#[derive(Default)]
struct PeakState {
    stages: Vec<(String, u64)>,
    done: bool,
}

impl PeakState {
    fn note(&mut self, resident: u64) {
        if let Some(last) = self.stages.last_mut() {
            last.1 = last.1.max(resident);
        }
    }
}

/// `VmRSS` of this process in bytes.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

impl<'a> StagePeaks<'a> {
    pub(super) fn new(inner: &'a dyn Progress) -> StagePeaks<'a> {
        let state = std::sync::Arc::new(std::sync::Mutex::new(PeakState {
            stages: vec![("read".to_owned(), 0)],
            done: false,
        }));
        let sampler = resident_bytes().is_some().then(|| {
            let state = state.clone();
            std::thread::spawn(move || loop {
                let resident = resident_bytes().unwrap_or(0);
                {
                    let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                    if state.done {
                        return;
                    }
                    state.note(resident);
                }
                std::thread::sleep(std::time::Duration::from_millis(SAMPLE_MS));
            })
        });
        StagePeaks {
            inner,
            state,
            sampler,
        }
    }

    /// Starts the stage `next`.
    pub(super) fn switch(&self, next: &str) {
        let resident = resident_bytes().unwrap_or(0);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.note(resident);
        state.stages.push((next.to_owned(), resident));
    }

    /// The peak of each stage that ran, in order (empty where memory cannot be read).
    pub(super) fn finish(mut self) -> Vec<(String, u64)> {
        let resident = resident_bytes().unwrap_or(0);
        let stages = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.note(resident);
            state.done = true;
            std::mem::take(&mut state.stages)
        };
        match self.sampler.take() {
            Some(sampler) => {
                let _ = sampler.join();
                stages
            }
            None => Vec::new(),
        }
    }
}

impl Progress for StagePeaks<'_> {
    fn stage(&self, name: &'static str, total: u64) {
        self.switch(name);
        self.inner.stage(name, total);
    }
    fn stage_bytes(&self, name: &'static str, total: u64) {
        self.switch(name);
        self.inner.stage_bytes(name, total);
    }
    fn advance(&self, done: u64) {
        self.inner.advance(done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_raises_only_the_current_stage() {
        let mut state = PeakState {
            stages: vec![("read".to_owned(), 5)],
            done: false,
        };
        state.note(3);
        state.stages.push(("sketch".to_owned(), 4));
        state.note(9);
        state.note(7);
        assert_eq!(
            state.stages,
            [("read".to_owned(), 5), ("sketch".to_owned(), 9)]
        );
    }

    #[test]
    fn no_stage_no_note() {
        let mut state = PeakState::default();
        state.note(10);
        assert!(state.stages.is_empty());
    }

    #[test]
    fn every_stage_that_ran_is_reported_in_order() {
        let peaks = StagePeaks::new(&neardup_engine::NoProgress);
        peaks.stage("sketch", 1);
        peaks.stage_bytes("read+sketch", 1);
        peaks.switch("write");
        let stages = peaks.finish();
        if resident_bytes().is_none() {
            assert!(stages.is_empty());
            return;
        }
        let names: Vec<&str> = stages.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["read", "sketch", "read+sketch", "write"]);
        assert!(stages.iter().all(|&(_, peak)| peak > 0));
    }
}
