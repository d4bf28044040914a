//! `neardup salvage`: make a collection with a corrupt or missing segment open again.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::Args;

#[derive(Args)]
pub struct SalvageArgs {
    /// The service's data folder (the service must be stopped).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// The collection to salvage.
    #[arg(value_name = "COLLECTION")]
    collection: String,
}

/// Cuts every corrupt segment of the collection at its first bad record (after copying the
/// whole file to `collections/<name>/salvaged/`) and accepts every gap in sequence numbers,
/// then says what it did. The documents from a bad record to the end of its segment are
/// lost to the collection; the copy keeps them.
pub fn salvage(args: &SalvageArgs) -> Result<()> {
    let report = neardup_service::salvage(&args.data_dir, &args.collection)
        .map_err(|e| anyhow!("{}", e.message))?;
    if report.cut.is_empty() && report.gaps.is_empty() {
        eprintln!(
            "neardup: collection {:?} has no corrupt record and no gap: nothing to do",
            args.collection
        );
        return Ok(());
    }
    for (path, offset, bytes, copy) in &report.cut {
        eprintln!(
            "neardup: {}: cut at byte {offset} ({bytes} bytes removed); the whole file was \
             copied to {}",
            path.display(),
            copy.display()
        );
    }
    for (first, after) in &report.gaps {
        eprintln!(
            "neardup: documents {first} to {} are missing and were accepted as lost",
            after.saturating_sub(1)
        );
    }
    eprintln!(
        "neardup: collection {:?} opens again at the next start",
        args.collection
    );
    Ok(())
}
