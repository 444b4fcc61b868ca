//! l.x's index builds as the server reports them (PostgreSQL's
//! `pg_stat_progress_create_index`, MySQL's performance_schema stages): polled once a second
//! from a connection of its own on a thread of its own, so a slow answer never holds up the
//! timeline, and turned into the progress line's text with a rate and an ETA.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::backend::{Conn, IndexProgress};
use crate::results::IndexBuildProgress;
use crate::stats::convert::{count_f64, round_to_u64};
use crate::stats::thousands::group;

/// How often the server is asked.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The latest reading, shared by the poller and the monitor.
#[derive(Default)]
pub struct Shared {
    latest: Mutex<Vec<IndexBuildProgress>>,
}

/// Ask the server over `conn` once a second until `over` is set, keeping the latest
/// reading in `shared`. When the server does not report the progress, or the connection or a
/// poll fails, it says so once (unless `quiet`) and stops asking.
pub fn poll(conn: Result<Box<dyn Conn>, String>, shared: &Shared, over: &AtomicBool, quiet: bool) {
    let say = |what: &str| {
        if !quiet {
            crate::say!(
                "{}l.x     index build progress: {what}",
                crate::console::line_start()
            );
        }
    };
    let mut conn = match conn {
        Ok(c) => c,
        Err(e) => return say(&format!("not polled: {e}")),
    };
    while !over.load(Ordering::Relaxed) {
        let asked = Instant::now();
        match conn.index_build_progress() {
            Ok(IndexProgress::Running(builds)) => {
                *shared.latest.lock().unwrap_or_else(PoisonError::into_inner) = builds;
            }
            Ok(IndexProgress::NotReported(why)) => return say(&format!("not reported: {why}")),
            Err(e) => return say(&format!("not polled any more: {e}")),
        }
        let next = asked + POLL_INTERVAL;
        while !over.load(Ordering::Relaxed) && Instant::now() < next {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The monitor's view of the builds: the latest reading, and where the current count began,
/// for its rate.
pub struct Watch {
    shared: Arc<Shared>,
    /// The first build's count as first seen: its unit, total, work done, and when. A count
    /// goes on while its unit and total stay and its work does not fall: InnoDB counts one
    /// total over all the stages of an `ALTER TABLE`; PostgreSQL starts a new count with
    /// each phase that counts something else and with each index.
    count_start: Option<(String, u64, u64, Instant)>,
    /// The first build's work done at the last reading.
    last_done: u64,
    rate_per_sec: Option<f64>,
}

impl Watch {
    /// A view of what the poller keeps in `shared`.
    pub fn new(shared: Arc<Shared>) -> Watch {
        Watch {
            shared,
            count_start: None,
            last_done: 0,
            rate_per_sec: None,
        }
    }

    /// The latest reading (for the timeline), with the first build's rate brought up to date.
    pub fn latest(&mut self) -> Vec<IndexBuildProgress> {
        let builds = self
            .shared
            .latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let now = Instant::now();
        self.rate_per_sec = None;
        match (builds.first(), &self.count_start) {
            (Some(b), Some((unit, total, done0, t0)))
                if *unit == b.unit && *total == b.total && b.done >= self.last_done =>
            {
                let seconds = (now - *t0).as_secs_f64();
                if seconds >= 0.5 && b.done > *done0 {
                    self.rate_per_sec = Some(count_f64(b.done - done0) / seconds);
                }
            }
            (Some(b), _) => {
                self.count_start = Some((b.unit.clone(), b.total, b.done, now));
            }
            (None, _) => self.count_start = None,
        }
        self.last_done = builds.first().map_or(0, |b| b.done);
        builds
    }

    /// The progress line's text for `builds` (as [`Watch::latest`] gave them).
    pub fn text(&self, builds: &[IndexBuildProgress]) -> String {
        progress_text(builds, self.rate_per_sec)
    }
}

/// The builds on the progress line: the first one's phase, work done of its total, its rate
/// (`rate_per_sec`, since its count began) and the ETA of that count; the others' phase and
/// work.
/// Empty when no build is running.
pub fn progress_text(builds: &[IndexBuildProgress], rate_per_sec: Option<f64>) -> String {
    let mut parts = Vec::new();
    for (i, b) in builds.iter().enumerate() {
        let mut text = b.phase.clone();
        if b.builds > 1 {
            text.push_str(&format!(" ({} builds)", b.builds));
        }
        if b.total > 0 {
            let share = count_f64(b.done) / count_f64(b.total) * 100.0;
            text.push_str(&format!(
                " {}/{} {} ({share:.0}%)",
                group(b.done),
                group(b.total),
                b.unit
            ));
            if let Some(rate) = rate_per_sec.filter(|r| i == 0 && *r > 0.0) {
                let left = count_f64(b.total.saturating_sub(b.done)) / rate;
                text.push_str(&format!(
                    " {} {}/s, ETA {left:.0}s",
                    group(round_to_u64(rate)),
                    b.unit
                ));
            }
        }
        parts.push(text);
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(phase: &str, done: u64, total: u64, unit: &str, builds: u32) -> IndexBuildProgress {
        IndexBuildProgress {
            phase: phase.into(),
            done,
            total,
            unit: unit.into(),
            builds,
        }
    }

    #[test]
    fn the_progress_text_gives_the_phase_the_work_its_rate_and_the_eta() {
        let scanning = build("building index: scanning table", 1234, 5678, "blocks", 1);
        assert_eq!(
            progress_text(std::slice::from_ref(&scanning), Some(400.0)),
            "building index: scanning table 1,234/5,678 blocks (22%) 400 blocks/s, ETA 11s"
        );
        // No rate yet (the phase was just seen): no ETA.
        assert_eq!(
            progress_text(std::slice::from_ref(&scanning), None),
            "building index: scanning table 1,234/5,678 blocks (22%)"
        );
        // A phase without counts, and a second phase of other builds.
        let waiting = build("waiting for writers before build", 0, 0, "", 2);
        let merging = build("alter table (merge sort)", 52_257, 115_390, "work units", 1);
        assert_eq!(
            progress_text(&[waiting, merging], Some(1000.0)),
            "waiting for writers before build (2 builds); \
             alter table (merge sort) 52,257/115,390 work units (45%)"
        );
        assert_eq!(progress_text(&[], Some(5.0)), "");
    }

    #[test]
    fn builds_of_one_phase_are_summed() {
        let p = IndexProgress::merged([
            build(
                "building index: loading tuples in tree",
                10,
                100,
                "tuples",
                1,
            ),
            build("building index: scanning table", 5, 50, "blocks", 1),
            build(
                "building index: loading tuples in tree",
                30,
                200,
                "tuples",
                1,
            ),
        ]);
        assert_eq!(
            p,
            IndexProgress::Running(vec![
                build(
                    "building index: loading tuples in tree",
                    40,
                    300,
                    "tuples",
                    2
                ),
                build("building index: scanning table", 5, 50, "blocks", 1),
            ])
        );
    }

    #[test]
    fn the_rate_counts_from_where_the_count_began() {
        let shared = Arc::new(Shared::default());
        let mut watch = Watch::new(Arc::clone(&shared));
        let set = |b: Vec<IndexBuildProgress>| *shared.latest.lock().unwrap() = b;
        set(vec![build("scanning", 100, 1000, "blocks", 1)]);
        assert_eq!(watch.latest().len(), 1);
        assert_eq!(watch.rate_per_sec, None, "one reading gives no rate");
        // Pretend the count began 2 s ago.
        let back_2s = |w: &mut Watch| {
            if let Some(start) = w.count_start.as_mut() {
                start.3 -= Duration::from_secs(2);
            }
        };
        back_2s(&mut watch);
        set(vec![build("scanning", 500, 1000, "blocks", 1)]);
        watch.latest();
        // 400 blocks in 2 s and however long this thread waited: at most 200 blocks/s.
        let rate = watch.rate_per_sec.expect("a rate");
        assert!(rate > 0.0 && rate <= 200.0, "{rate}");
        // InnoDB's next stage goes on counting toward the same total: the rate goes on.
        set(vec![build("merge sort", 700, 1000, "blocks", 1)]);
        watch.latest();
        let rate = watch.rate_per_sec.expect("the count goes on");
        assert!(rate > 0.0 && rate <= 300.0, "{rate}");
        // Another unit (PostgreSQL's next phase) starts over, and so does the next index.
        set(vec![build("sorting", 0, 300, "tuples", 1)]);
        watch.latest();
        assert_eq!(watch.rate_per_sec, None);
        back_2s(&mut watch);
        set(vec![build("scanning", 10, 300, "tuples", 1)]);
        watch.latest();
        assert!(watch.rate_per_sec.is_some());
        set(vec![build("scanning", 5, 300, "tuples", 1)]);
        watch.latest();
        assert_eq!(watch.rate_per_sec, None, "the work fell: a new count");
        set(Vec::new());
        assert!(watch.latest().is_empty());
        assert!(watch.count_start.is_none());
    }
}
