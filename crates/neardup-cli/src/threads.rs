//! The worker pool of `--threads`.

use anyhow::{bail, Context};

/// The most worker threads `--threads` accepts: far beyond any machine's cores, well below
/// what would exhaust the process's memory or the kernel's thread limit.
pub const MAX_THREADS: usize = 1024;

/// A rayon pool of `threads` workers (0: one per core).
///
/// # Errors
///
/// Above [`MAX_THREADS`], or when the threads cannot be started.
pub fn pool(threads: usize) -> anyhow::Result<rayon::ThreadPool> {
    if threads > MAX_THREADS {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        bail!(
            "--threads {threads}: at most {MAX_THREADS} worker threads are allowed \
             (0 = one per core; this machine has {cores})"
        );
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")
}
