//! The pacer: an absolute schedule for paced connections (spec section 4).
//!
//! Operation `i` is due at `start + i / rate`. A late connection sends at once (catch-up)
//! and its latency counts from the due time, so a server stall shows in the latency instead
//! of vanishing (coordinated omission). The schedule never drifts: it is computed from the
//! start, not from the previous operation.

use crate::stats::convert::count_f64;
use std::time::{Duration, Instant};

/// An absolute schedule of `ops_per_sec` operations per second from `start`.
#[derive(Clone, Debug)]
pub struct Pacer {
    start: Instant,
    ops_per_sec: f64,
    next: u64,
}

impl Pacer {
    /// A schedule starting at `start`. `ops_per_sec` must be > 0.
    pub fn new(start: Instant, ops_per_sec: f64) -> Self {
        Pacer {
            start,
            ops_per_sec,
            next: 0,
        }
    }

    /// When operation `i` is due.
    pub fn due(&self, i: u64) -> Instant {
        self.start + Duration::from_secs_f64(count_f64(i) / self.ops_per_sec)
    }

    /// The due time of the next operation; advances the schedule.
    pub fn next_due(&mut self) -> Instant {
        let d = self.due(self.next);
        self.next += 1;
        d
    }

    /// How many operations have been handed out.
    pub fn issued(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_absolute_and_does_not_drift() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, 2.0);
        assert_eq!(p.next_due(), t0);
        assert_eq!(p.next_due(), t0 + Duration::from_millis(500));
        assert_eq!(p.next_due(), t0 + Duration::from_secs(1));
        // After a million operations at 1000/s the schedule is exactly 1000 s out.
        let q = Pacer::new(t0, 1000.0);
        let d = q.due(1_000_000) - t0;
        assert!((d.as_secs_f64() - 1000.0).abs() < 1e-6, "{d:?}");
        assert_eq!(p.issued(), 3);
    }

    #[test]
    fn a_late_caller_gets_past_due_times_to_catch_up() {
        // A caller that was stalled for 2 s at 10 ops/s finds 20 operations already due:
        // it sends them back to back, each measured from its own due time.
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, 10.0);
        let now = t0 + Duration::from_secs(2);
        let overdue = std::iter::from_fn(|| Some(p.next_due()))
            .take_while(|d| *d <= now)
            .count();
        assert_eq!(overdue, 21); // ops 0..=20 are due at or before t0 + 2 s
    }
}
