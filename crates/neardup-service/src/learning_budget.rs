//! The server-wide budget of stream learning (`neardup serve --learning-memory`).
//!
//! A collection that learns from its stream (`max_df`, `boilerplate_df`) keeps windows of
//! frequency tables of `frequency_memory` bytes each ([`Settings::learning_memory`]). They
//! grow with what is inserted, but each may reach its memory, and a service holds up to
//! `--max-collections` of them: the sum of what they may reach is bounded by one budget.
//!
//! - **Creation.** A `PUT` whose collection would take the sum past the budget is refused
//!   (409 `learning_memory_limit`, naming the budget, what is taken and what was asked).
//! - **Start.** Stored collections open whatever the budget: the data is never refused. When
//!   they already pass it (a smaller `--learning-memory` than before), the log says so, and
//!   creations that learn are refused until collections are dropped or the budget raised.
//! - **Unavailable collections** (not opened at start) hold no tables and count nothing.

use crate::error::ServiceError;
use crate::settings::Settings;

/// The default budget where the machine's memory cannot be read: 4 GiB.
pub const FALLBACK_LEARNING_MEMORY: u64 = 4 << 30;

/// The default budget: a quarter of the machine's physical memory (Linux `MemTotal`; a
/// fixed figure, so that each start of a server has the same budget, whatever else runs),
/// or [`FALLBACK_LEARNING_MEMORY`] where it cannot be read. The rest is left to the indexes
/// (121 bytes a stored document), the connections and the system.
pub fn default_learning_memory() -> u64 {
    physical_memory().map_or(FALLBACK_LEARNING_MEMORY, |bytes| bytes / 4)
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let total = info
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))?;
    let kilobytes: u64 = total.trim().trim_end_matches("kB").trim().parse().ok()?;
    kilobytes.checked_mul(1024)
}

/// What the open collections' learning may take: the bytes and the number of collections
/// that learn.
pub(crate) fn taken<'a>(settings: impl Iterator<Item = &'a Settings>) -> (u64, usize) {
    let charges = settings
        .map(Settings::learning_memory)
        .filter(|&bytes| bytes > 0);
    charges.fold((0, 0), |(bytes, count), charge| {
        (bytes.saturating_add(charge), count + 1)
    })
}

/// Refuses a new collection whose learning would take the sum past `budget`.
///
/// # Errors
/// 409 `learning_memory_limit` under `frequency_memory`, naming the budget, what is taken
/// and what was asked.
pub(crate) fn admit(
    budget: u64,
    (taken, learning): (u64, usize),
    settings: &Settings,
) -> Result<(), ServiceError> {
    let asked = settings.learning_memory();
    if asked == 0 || taken.saturating_add(asked) <= budget {
        return Ok(());
    }
    let left = budget.saturating_sub(taken);
    Err(ServiceError::new(
        409,
        "learning_memory_limit",
        format!(
            "this collection's stream learning may take {} ({}), and the server's learning \
             budget is {} (--learning-memory), of which {} is taken by {learning} \
             collection(s) and {} is left: lower frequency_memory, turn learning off \
             (max_df and boilerplate_df \"off\"), drop a collection, or raise \
             --learning-memory",
            size(asked),
            settings.learning_memory_detail(),
            size(budget),
            size(taken),
            size(left),
        ),
    )
    .field("frequency_memory"))
}

/// Logs that the collections opened at start already pass the budget (they serve anyway).
pub(crate) fn warn_at_start(budget: u64, (taken, learning): (u64, usize)) {
    if taken > budget {
        eprintln!(
            "neardup: warning: the {learning} stored collections that learn may take {} of \
             stream learning tables, more than --learning-memory {}; they open and serve, and \
             a new collection that learns is refused until some are dropped or the budget is \
             raised",
            size(taken),
            size(budget)
        );
    }
}

/// `bytes` as bytes and in the largest binary unit it reaches (`4294967296 bytes (4.0 GiB)`).
pub(crate) fn size(bytes: u64) -> String {
    let units = [(30, "GiB"), (20, "MiB"), (10, "KiB")];
    match units.iter().find(|(shift, _)| bytes >= 1 << shift) {
        Some((shift, unit)) => {
            let value = bytes as f64 / (1u64 << shift) as f64;
            format!("{bytes} bytes ({value:.1} {unit})")
        }
        None => format!("{bytes} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_bytes_and_units() {
        assert_eq!(size(512), "512 bytes");
        assert_eq!(size(36 << 20), "37748736 bytes (36.0 MiB)");
        assert_eq!(size(4 << 30), "4294967296 bytes (4.0 GiB)");
    }

    #[test]
    fn the_default_budget_is_a_quarter_of_the_machine() {
        let budget = default_learning_memory();
        match physical_memory() {
            Some(total) => assert_eq!(budget, total / 4),
            None => assert_eq!(budget, FALLBACK_LEARNING_MEMORY),
        }
        assert!(budget > 0);
    }
}
