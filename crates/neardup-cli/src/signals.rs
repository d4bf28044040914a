//! Ctrl-C and termination: no temporary output file is left behind, and a command may first
//! write what it has (`tune`'s partial table).

use std::sync::Mutex;

use neardup_pipeline::paths::remove_temporary_files;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// What runs on a signal before the temporary files are removed.
type Hook = Box<dyn FnOnce() + Send>;

static BEFORE_EXIT: Mutex<Option<Hook>> = Mutex::new(None);

/// Runs `hook` on SIGINT, SIGTERM or SIGHUP, before the temporary files are removed and the
/// process exits (replacing a hook set before): `tune` writes the table of the runs it
/// finished.
pub fn before_exit_on_signal(hook: impl FnOnce() + Send + 'static) {
    *BEFORE_EXIT.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(hook));
}

/// On SIGINT, SIGTERM or SIGHUP, runs the hook of [`before_exit_on_signal`], removes every
/// temporary output file and exits with status 128 + the signal's number, as a shell
/// reports a process killed by it. Outputs already renamed into place stay; outputs not yet
/// committed keep their previous content.
pub fn remove_temporaries_on_signal() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        // Without the handler a signal kills the process as before; temporary files may stay.
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let hook = BEFORE_EXIT.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(hook) = hook {
                hook();
            }
            remove_temporary_files(|_| std::process::exit(128 + signal));
        }
    });
}
