//! The terminal progress bar (hidden when stderr is not a terminal or with --quiet).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use neardup_engine::Progress;

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
        let style =
            ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, {eta})")
                .map(|s| s.progress_chars("=> "))
                .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Bar { bar }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn stage(&self, name: &'static str, total: u64) {
        self.bar.set_message(name);
        self.bar.set_length(total);
        self.bar.set_position(0);
    }

    fn advance(&self, done: u64) {
        self.bar.inc(done);
    }
}
