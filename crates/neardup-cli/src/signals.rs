//! Ctrl-C and termination: no temporary output file is left behind.

use neardup_pipeline::paths::remove_temporary_files;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// On SIGINT, SIGTERM or SIGHUP, removes every temporary output file and exits with status
/// 128 + the signal's number, as a shell reports a process killed by it. Outputs already
/// renamed into place stay; outputs not yet committed keep their previous content.
pub fn remove_temporaries_on_signal() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        // Without the handler a signal kills the process as before; temporary files may stay.
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            remove_temporary_files(|_| std::process::exit(128 + signal));
        }
    });
}
