//! The terminal progress bar (hidden when stderr is not a terminal or with --quiet).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use neardup_engine::Progress;

/// A stage counted in documents or pairs.
const COUNT_TEMPLATE: &str = "{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, {eta})";
/// A stage that reads the inputs (a run that spills): bytes done.
const BYTES_TEMPLATE: &str = "{msg:>12} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})";

/// A progress bar that follows the engine's stages.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A visible bar when `show`, else a hidden one.
    pub fn new(show: bool) -> Bar {
        let bar = ProgressBar::with_draw_target(
            None,
            if show {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        bar.set_style(Bar::style(COUNT_TEMPLATE));
        Bar { bar }
    }

    fn style(template: &str) -> ProgressStyle {
        ProgressStyle::with_template(template)
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
    }

    /// Prints `line` on stderr above the bar (a line printed while the bar is drawn would
    /// be cut into it).
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn stage(&self, name: &'static str, total: u64) {
        self.bar.set_style(Bar::style(COUNT_TEMPLATE));
        self.bar.set_message(name);
        self.bar.set_length(total);
        self.bar.set_position(0);
    }

    fn stage_bytes(&self, name: &'static str, total: u64) {
        self.bar.set_style(Bar::style(BYTES_TEMPLATE));
        self.bar.set_message(name);
        self.bar.set_length(total);
        self.bar.set_position(0);
    }

    fn advance(&self, done: u64) {
        self.bar.inc(done);
    }
}
