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

use crate::backend::link::SqlLink;
use crate::backend::postgres::slot;
use crate::results::replication::SlotRetention;

/// The slot a run watches, and what it saw of it.
pub struct SlotWatch {
    /// The slot's name and the primary's major version; `None`: nothing to watch (MariaDB, a
    /// standby without a slot).
    slot: Option<(String, u32)>,
    /// The primary's `max_slot_wal_keep_size`, as read at the start.
    keep: Option<String>,
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
        SlotWatch::of(None, None)
    }

    fn of(slot: Option<(String, u32)>, keep: Option<String>) -> SlotWatch {
        SlotWatch {
            slot,
            keep,
            step: Mutex::new(None),
            lost_at: Mutex::new(None),
            said: AtomicBool::new(false),
        }
    }

    /// The slot of the standby at `replica` on the PostgreSQL primary at `primary`: the
    /// standby's `primary_slot_name` (PostgreSQL 12 and later; before, the slot its WAL
    /// receiver streams from, else its `application_name`, which is the slot's name on a
    /// standby ibench made), when the primary has it.
    pub fn find(
        primary: &mut SqlLink,
        replica: &mut SqlLink,
        application_name: Option<&str>,
    ) -> SlotWatch {
        let mut ask = |sql: &str| replica.value(sql).ok().flatten().filter(|n| !n.is_empty());
        let named = ask("SHOW primary_slot_name")
            // Before 12 the slot is in recovery.conf, which SHOW cannot read; the WAL
            // receiver names the slot it streams from (9.6 and later).
            .or_else(|| ask("SELECT slot_name FROM pg_stat_wal_receiver"))
            .or_else(|| application_name.map(str::to_string));
        let (Some(name), Ok(major)) = (named, slot::major_version(primary)) else {
            return SlotWatch::none();
        };
        let there = slot::read_slots(primary, major, Some(&name)).is_ok_and(|s| !s.is_empty());
        if !there {
            return SlotWatch::none();
        }
        let keep = slot::keep_size(primary, major);
        SlotWatch::of(Some((name, major)), keep)
    }

    /// One reading of the slot on the primary, folded into the step's figures. The first
    /// reading that shows it lost says so on the terminal.
    pub fn read(&self, primary: &mut SqlLink) -> Result<(), String> {
        let Some((name, major)) = &self.slot else {
            return Ok(());
        };
        let Some(reading) = slot::read_slots(primary, *major, Some(name))?.pop() else {
            return Ok(());
        };
        let mut step = lock(&self.step);
        let figures = step.get_or_insert_with(SlotRetention::default);
        figures.fold(&reading, self.keep.as_deref());
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
        let w = SlotWatch::of(Some(("s".to_string(), 15)), Some("1MB".to_string()));
        *lock(&w.lost_at) = Some(Instant::now());
        let later = Instant::now() + std::time::Duration::from_secs(2);
        assert_eq!(w.end_step(later).1, Some(0.0));
        assert!(w.is_lost());
    }
}
