//! The time a service reads: documents' insertion times, retention and expiry.
//!
//! A [`Service`](crate::Service) reads the time through the [`Clock`] of its
//! [`ServiceOptions`](crate::ServiceOptions): the [`SystemClock`] by default, a
//! [`ManualClock`] in tests, which then advance time instead of sleeping through a retention
//! window. The writer's cadence (maintenance every second, the queue's back-pressure) is
//! timing, not time, and stays on the system's monotonic clock.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// Milliseconds since the Unix epoch, by the system's clock.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
}

/// A clock that moves only when told: [`ManualClock::advance`].
#[derive(Debug)]
pub struct ManualClock {
    ms: AtomicI64,
}

impl ManualClock {
    /// A clock showing `ms` milliseconds since the Unix epoch.
    pub fn at(ms: i64) -> ManualClock {
        ManualClock {
            ms: AtomicI64::new(ms),
        }
    }

    /// A clock showing the system's time now.
    pub fn starting_now() -> ManualClock {
        ManualClock::at(now_ms())
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_advanced() {
        let clock = ManualClock::at(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        clock.advance(Duration::from_millis(2_300));
        assert_eq!(clock.now_ms(), 3_300);
        assert!(SystemClock.now_ms() > 1_700_000_000_000);
    }
}
