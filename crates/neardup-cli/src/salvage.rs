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

/// Rewrites every segment that does not open with every record that checks (after copying
/// the whole file to `collections/<name>/salvaged/`), skipping only the bad bytes, and
/// accepts every gap in sequence numbers, then says what it did: the bytes and documents
/// skipped in each segment. The skipped records are lost to the collection; the copy keeps
/// them.
pub fn salvage(args: &SalvageArgs) -> Result<()> {
    let report = neardup_service::salvage(&args.data_dir, &args.collection)
        .map_err(|e| anyhow!("{}", e.message))?;
    if report.rewritten.is_empty() && report.gaps.is_empty() {
        eprintln!(
            "neardup: collection {:?} has no corrupt record and no gap: nothing to do",
            args.collection
        );
        return Ok(());
    }
    for rewritten in &report.rewritten {
        let salvaged = &rewritten.salvaged;
        let bytes: u64 = salvaged.skipped.iter().map(|s| s.bytes).sum();
        eprintln!(
            "neardup: {}: kept {} records; skipped {bytes} bytes in {} and {} numbered \
             between the ones kept; the whole file was copied to {}",
            rewritten.path.display(),
            salvaged.kept,
            counted(salvaged.skipped.len() as u64, "place"),
            counted(salvaged.documents_skipped, "document"),
            rewritten.copy.display()
        );
        for skipped in &salvaged.skipped {
            eprintln!(
                "neardup:   skipped {} bytes at byte {}: {}",
                skipped.bytes, skipped.offset, skipped.message
            );
        }
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

/// `1 place`, `2 places`.
fn counted(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}
