//! The per-step monitor: once a second it swaps out the live counters of every connection,
//! appends a timeline line and redraws the progress line.

use crate::stats::convert::{count_f64, round_to_u64};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::results::{TimelineLine, TimelineWriter};
use crate::stats::thousands::group;
use crate::stats::{LiveCounters, OpKind, SecondCounts};
use crate::workload::steps::StepName;

/// How the step's progress is measured, for the progress line.
#[derive(Clone, Copy, Debug)]
pub enum Goal {
    /// Rows of `kind` to reach.
    Rows {
        /// The op kind whose rows count.
        kind: OpKind,
        /// Total rows.
        total: u64,
    },
    /// A fixed duration.
    Seconds(f64),
    /// Nothing to count toward (l.x).
    None,
}

/// Where progress goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressMode {
    /// Redraw one line on a terminal.
    Terminal,
    /// A plain line every 10 seconds.
    Plain,
    /// Nothing.
    Quiet,
}

impl ProgressMode {
    /// Terminal when stderr is one, plain otherwise, nothing when quiet.
    pub fn detect(quiet: bool) -> Self {
        if quiet {
            ProgressMode::Quiet
        } else if std::io::stderr().is_terminal() {
            ProgressMode::Terminal
        } else {
            ProgressMode::Plain
        }
    }
}

/// The per-second series the monitor saw, whole seconds only.
#[derive(Debug, Default)]
pub struct Seconds {
    /// Per op kind, the counts of each whole second.
    pub per_kind: BTreeMap<OpKind, Vec<SecondCounts>>,
}

/// Watches one step.
pub struct Monitor<'a> {
    step: StepName,
    start: Instant,
    counters: Vec<(OpKind, Arc<LiveCounters>)>,
    timeline: &'a mut TimelineWriter,
    mode: ProgressMode,
    goal: Goal,
    next_tick: u32,
    seen: Seconds,
    last_plain: Instant,
    pub(crate) timeline_error: Option<String>,
    /// l.x: the index builds as the server reports them.
    index: Option<super::index_progress::Watch>,
    /// The step's connections, and how many had finished at the last look.
    connections: u32,
    finished_connections: u32,
    /// Per counter, its connection thread's CPU at the last tick, ns.
    cpu_seen_ns: Vec<Option<u64>>,
    /// The run's parts: each second's replica lag.
    parts: &'a dyn crate::run_part::RunPart,
}

impl<'a> Monitor<'a> {
    /// A monitor for a step that started at `start`.
    pub fn new(
        step: StepName,
        start: Instant,
        counters: Vec<(OpKind, Arc<LiveCounters>)>,
        timeline: &'a mut TimelineWriter,
        mode: ProgressMode,
        goal: Goal,
        parts: &'a dyn crate::run_part::RunPart,
    ) -> Self {
        let slots = counters.len();
        let connections = u32::try_from(slots).unwrap_or(u32::MAX);
        Monitor {
            step,
            start,
            counters,
            timeline,
            mode,
            goal,
            next_tick: 1,
            seen: Seconds::default(),
            last_plain: Instant::now(),
            timeline_error: None,
            index: None,
            connections,
            finished_connections: 0,
            cpu_seen_ns: vec![None; slots],
            parts,
        }
    }

    /// Show the server's index builds (l.x) on the progress line and in the timeline.
    pub fn watch_index_builds(&mut self, watch: super::index_progress::Watch) {
        self.index = Some(watch);
    }

    /// Wait for the next tick, at most until every connection has finished (`finished()`
    /// counts those that have; checked every 50 ms). Returns false once all have, after
    /// writing the last (partial) second.
    pub fn tick(&mut self, finished: &dyn Fn() -> usize) -> bool {
        let due = self.start + Duration::from_secs(u64::from(self.next_tick));
        loop {
            self.finished_connections = u32::try_from(finished()).unwrap_or(u32::MAX);
            if self.finished_connections >= self.connections {
                self.sample(false);
                self.finish_line();
                return false;
            }
            let now = Instant::now();
            if now >= due {
                break;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(50)));
        }
        self.sample(true);
        true
    }

    fn sample(&mut self, whole: bool) {
        let mut merged: BTreeMap<OpKind, SecondCounts> = BTreeMap::new();
        for ((kind, c), seen) in self.counters.iter().zip(&mut self.cpu_seen_ns) {
            let mut counts = c.swap();
            if let Some(now) = c
                .cpu_clock
                .get()
                .and_then(|&k| crate::stats::clock_cpu_ns(k))
            {
                counts.cpu_us = Some(now.saturating_sub(seen.unwrap_or(0)) / 1000);
                *seen = Some(now);
            }
            merged.entry(*kind).or_default().merge(counts);
        }
        let any = merged.values().any(|c| c.ops > 0);
        let index_builds = self.index.as_mut().map(|w| w.latest()).unwrap_or_default();
        if whole {
            for (kind, c) in &merged {
                self.seen.per_kind.entry(*kind).or_default().push(*c);
            }
        }
        if whole || any {
            let (replica_lag_ms, replica_lost) = self
                .parts
                .replica_second(self.start, self.next_tick)
                .unwrap_or((None, false));
            let line = TimelineLine {
                step: self.step,
                second: self.next_tick,
                ops: merged
                    .iter()
                    .map(|(k, c)| (k.name().to_string(), *c))
                    .collect(),
                index_builds: index_builds.clone(),
                finished_connections: self.finished_connections,
                replica_lag_ms,
                replica_lost,
            };
            if let Err(e) = self.timeline.write(&line)
                && self.timeline_error.is_none()
            {
                self.timeline_error = Some(format!("{e:#}"));
            }
        }
        if whole {
            self.progress(&merged, &index_builds);
            self.next_tick += 1;
        }
    }

    fn total_rows(&self, kind: OpKind) -> u64 {
        self.counters
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, c)| c.total_rows.load(Ordering::Relaxed))
            .sum()
    }

    fn progress(
        &mut self,
        this_second: &BTreeMap<OpKind, SecondCounts>,
        index_builds: &[crate::results::IndexBuildProgress],
    ) {
        if self.mode == ProgressMode::Quiet {
            return;
        }
        let elapsed = self.start.elapsed().as_secs_f64();
        let mut text = format!("{:<7}", self.step.to_string());
        match self.goal {
            Goal::Rows { kind, total } => {
                let done = self.total_rows(kind);
                let rate = count_f64(done) / elapsed.max(1e-9);
                let eta = if rate > 0.0 {
                    format!("{:.0}s", count_f64(total.saturating_sub(done)) / rate)
                } else {
                    "?".into()
                };
                text.push_str(&format!(
                    " {}/{} rows  {} rows/s  ETA {eta}",
                    group(done),
                    group(total),
                    group(round_to_u64(rate))
                ));
            }
            Goal::Seconds(total) => {
                text.push_str(&format!(" {elapsed:.0}/{total:.0} s"));
            }
            Goal::None => text.push_str(&format!(" {elapsed:.0} s")),
        }
        if let Some(w) = self.index.as_ref().filter(|_| !index_builds.is_empty()) {
            text.push_str(&format!("  {}", w.text(index_builds)));
        }
        for (kind, c) in this_second {
            let unit = if kind.rate_counts_rows() {
                "rows/s"
            } else {
                "/s"
            };
            text.push_str(&format!("  {} {}{unit}", kind.name(), group(c.rate(*kind))));
        }
        match self.mode {
            ProgressMode::Terminal => {
                crate::say_inline!("\r\x1b[2K{text}");
                let _ = std::io::stderr().flush();
            }
            ProgressMode::Plain => {
                if self.last_plain.elapsed() >= Duration::from_secs(10) {
                    crate::say!("{text}");
                    self.last_plain = Instant::now();
                }
            }
            ProgressMode::Quiet => {}
        }
    }

    fn finish_line(&self) {
        if self.mode == ProgressMode::Terminal {
            crate::say_inline!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
    }

    /// The whole seconds seen.
    pub fn into_seconds(self) -> Seconds {
        self.seen
    }
}
