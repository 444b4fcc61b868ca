//! The standby's replication slot during a run with a PostgreSQL `--replica-url`
//! (docs/replication.md): the heartbeat's reader asks [`SlotWatch::read`] once a second (and
//! as a step ends) on its connection to the primary, which answers while the standby is down
//! too. Each step records the most WAL the slot held back, its worst `wal_status` and least
//! `safe_wal_size` (`results::replication::SlotRetention`); a slot the primary invalidated
//! (`wal_status` `lost`: the standby fell further behind than `max_slot_wal_keep_size` and can
//! never catch up) marks the replica lost with that reason, and the wait for its catch-up ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crate::backend::replication::{ReplicaLink, WatchedSlot};
use crate::results::replication::SlotRetention;

/// The slot a run watches, and what it saw of it.
pub struct SlotWatch {
    /// The slot (its name, the primary's major version and `max_slot_wal_keep_size` as read
    /// at the start); `None`: nothing to watch (MariaDB, a standby without a slot).
    slot: Option<WatchedSlot>,
    /// The step's figures so far (`None` until a reading).
    step: Mutex<Option<SlotRetention>>,
    /// When a reading first showed the slot lost.
    lost_at: Mutex<Option<Instant>>,
    /// The warning that the slot was lost was said.
    said: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SlotWatch {
    /// Nothing to watch.
    pub fn none() -> SlotWatch {
        SlotWatch::of(None)
    }

    /// A watch of `slot`, the standby's slot on the primary as the start found it
    /// (PostgreSQL: `ReplicaLink::find_slot`); `None`: nothing to watch.
    pub fn of(slot: Option<WatchedSlot>) -> SlotWatch {
        SlotWatch {
            slot,
            step: Mutex::new(None),
            lost_at: Mutex::new(None),
            said: AtomicBool::new(false),
        }
    }

    /// One reading of the slot on the primary, folded into the step's figures. The first
    /// reading that shows it lost says so on the terminal.
    pub fn read(&self, primary: &mut ReplicaLink) -> Result<(), String> {
        let Some(slot) = &self.slot else {
            return Ok(());
        };
        let Some(reading) = primary.read_slot(slot)? else {
            return Ok(());
        };
        let mut step = lock(&self.step);
        let figures = step.get_or_insert_with(SlotRetention::default);
        figures.fold(&reading, slot.keep.as_deref());
        if reading.is_lost() {
            lock(&self.lost_at).get_or_insert_with(Instant::now);
            if !self.said.swap(true, Ordering::Relaxed)
                && let Some(why) = &figures.lost
            {
                crate::say!("warning: replica lost: {why}");
            }
        }
        Ok(())
    }

    /// A step begins: its figures start afresh.
    pub fn begin_step(&self) {
        *lock(&self.step) = None;
    }

    /// The step that began at `start` ends: its figures, and the seconds into it from which
    /// the slot was lost (0 when it was lost before the step).
    pub fn end_step(&self, start: Instant) -> (Option<SlotRetention>, Option<f64>) {
        let figures = lock(&self.step).take();
        let lost_from =
            lock(&self.lost_at).map(|at| at.saturating_duration_since(start).as_secs_f64());
        (figures, lost_from)
    }

    /// The primary invalidated the slot: the standby can never catch up.
    pub fn is_lost(&self) -> bool {
        lock(&self.lost_at).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_watched_answers_nothing() {
        let w = SlotWatch::none();
        w.begin_step();
        assert_eq!(w.end_step(Instant::now()), (None, None));
        assert!(!w.is_lost());
    }

    #[test]
    fn a_slot_lost_before_the_step_is_lost_from_its_start() {
        let w = SlotWatch::of(Some(WatchedSlot {
            name: "s".to_string(),
            major: 15,
            keep: Some("1MB".to_string()),
        }));
        *lock(&w.lost_at) = Some(Instant::now());
        let later = Instant::now() + std::time::Duration::from_secs(2);
        assert_eq!(w.end_step(later).1, Some(0.0));
        assert!(w.is_lost());
    }
}
