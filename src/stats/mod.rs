//! Measurement: latency histograms per operation kind, live per-second counters, summaries.
//!
//! Each connection thread owns an [`OpRecorder`] (no lock on the hot path). The recorder keeps
//! two HdrHistograms (latency from the intended start, and service time from the real send)
//! and bumps a set of atomics ([`LiveCounters`]) that the step's monitor thread swaps out once
//! a second to build the per-second timeline. At the end of a step the recorders are merged
//! per operation kind.

pub mod convert;
pub mod decision;
pub mod thousands;

pub use convert::{
    count_f64, i64_f64, i64_u64, round_to_u64, round_to_usize, u64_i64, u64_usize, usize_f64,
    usize_u64,
};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The kinds of operation the steps do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A multi-row insert.
    Insert,
    /// A delete of the oldest rows.
    Delete,
    /// A covering range query through a secondary index.
    RangeQuery,
    /// A 10-id point query on the primary key.
    PointQuery,
    /// Creating the secondary indexes of one table.
    CreateIndexes,
    /// One microbenchmark operation: a statement or a transaction.
    Micro,
}

impl OpKind {
    /// The name used in `run.json` and the timeline.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Insert => "insert",
            OpKind::Delete => "delete",
            OpKind::RangeQuery => "range_query",
            OpKind::PointQuery => "point_query",
            OpKind::Micro => "micro",
            OpKind::CreateIndexes => "create_indexes",
        }
    }

    /// The kind named `name` ([`OpKind::name`]).
    pub fn from_name(name: &str) -> Option<OpKind> {
        [
            OpKind::Insert,
            OpKind::Delete,
            OpKind::RangeQuery,
            OpKind::PointQuery,
            OpKind::Micro,
            OpKind::CreateIndexes,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// Whether a per-second rate of this kind counts rows (inserts and deletes, whose
    /// statements carry a batch of rows) rather than operations.
    pub fn rate_counts_rows(self) -> bool {
        matches!(self, OpKind::Insert | OpKind::Delete)
    }

    /// The unit of a per-second rate of this kind: `rows/s` or `ops/s`.
    pub fn rate_unit(self) -> &'static str {
        if self.rate_counts_rows() {
            "rows/s"
        } else {
            "ops/s"
        }
    }
}

impl SecondCounts {
    /// The second's rate of an op of `kind`: its rows or its ops ([`OpKind::rate_counts_rows`]).
    pub fn rate(&self, kind: OpKind) -> u64 {
        if kind.rate_counts_rows() {
            self.rows
        } else {
            self.ops
        }
    }
}

/// Upper bounds (inclusive, µs) of the original's 10 latency buckets; the last is open.
pub const BUCKET_BOUNDS_US: [u64; 9] = [
    256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000,
];

/// Labels of the 10 buckets, in order.
pub const BUCKET_LABELS: [&str; 10] = [
    "256us", "1ms", "4ms", "16ms", "64ms", "256ms", "1s", "4s", "16s", ">16s",
];

/// The largest latency a histogram tracks, µs (one day); larger values are clamped.
const MAX_TRACKED_US: u64 = 86_400_000_000;

/// A new empty latency histogram in microseconds, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts; fall back to an auto-resizing one.
    Histogram::new_with_bounds(1, MAX_TRACKED_US, 3)
        .or_else(|_| Histogram::new(3))
        .unwrap_or_else(|_| unreachable_histogram())
}

#[cold]
fn unreachable_histogram() -> Histogram<u64> {
    // `Histogram::new(3)` only fails for sigfig > 5; this is never reached.
    panic!("hdrhistogram rejected 3 significant digits")
}

/// Counters of one (connection, op kind) that the monitor thread reads and resets every second.
#[derive(Debug, Default)]
pub struct LiveCounters {
    /// Operations finished since the last swap.
    pub ops: AtomicU64,
    /// Rows affected since the last swap.
    pub rows: AtomicU64,
    /// Largest latency since the last swap, µs.
    pub max_latency_us: AtomicU64,
    /// Operations finished since the step started (never reset).
    pub total_ops: AtomicU64,
    /// Rows affected since the step started (never reset).
    pub total_rows: AtomicU64,
    /// The connection thread's CPU clock ([`current_thread_cpu_clock`]), set when the thread
    /// starts, so the monitor can read the connection's own CPU each second.
    pub cpu_clock: std::sync::OnceLock<libc::clockid_t>,
}

/// One second's worth of one op kind, as swapped out of [`LiveCounters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondCounts {
    /// Operations finished in the second.
    pub ops: u64,
    /// Rows affected in the second.
    pub rows: u64,
    /// Largest latency of an operation finished in the second, µs.
    pub max_latency_us: u64,
    /// CPU the connections of this op kind used in the second (their own threads, not the
    /// rest of ibench), µs; `None` when not read (older files, a thread already ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<u64>,
}

impl LiveCounters {
    /// Take this second's counts and reset them.
    pub fn swap(&self) -> SecondCounts {
        SecondCounts {
            ops: self.ops.swap(0, Ordering::Relaxed),
            rows: self.rows.swap(0, Ordering::Relaxed),
            max_latency_us: self.max_latency_us.swap(0, Ordering::Relaxed),
            cpu_us: None,
        }
    }
}

impl SecondCounts {
    /// Add another connection's counts of the same second.
    pub fn merge(&mut self, other: SecondCounts) {
        self.ops += other.ops;
        self.rows += other.rows;
        self.max_latency_us = self.max_latency_us.max(other.max_latency_us);
        self.cpu_us = match (self.cpu_us, other.cpu_us) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// The figures of one op kind: one connection's as its [`OpRecorder`] keeps them, or a step's
/// over all its connections ([`merge`]).
pub struct OpFigures {
    /// Latency from the intended start (the due time for paced connections, the send time
    /// otherwise), µs.
    pub latency: Histogram<u64>,
    /// Service time from the real send, µs.
    pub service: Histogram<u64>,
    /// Operations finished.
    pub ops: u64,
    /// Rows affected (inserted, deleted, read).
    pub rows: u64,
    /// Operations retried after a transient conflict (not counted in `ops`).
    pub retries: u64,
    /// Statements that affected fewer rows than asked (see `Worker::short_statements`).
    pub short_statements: u64,
    /// CPU seconds of the connections' own threads over their loops (user + system).
    pub thread_cpu_seconds: f64,
}

impl OpFigures {
    /// No operation yet.
    pub fn new() -> Self {
        OpFigures {
            latency: new_histogram(),
            service: new_histogram(),
            ops: 0,
            rows: 0,
            retries: 0,
            short_statements: 0,
            thread_cpu_seconds: 0.0,
        }
    }

    /// Add `other`'s figures to these.
    pub fn add(&mut self, other: &OpFigures) {
        // Both histograms have the same bounds, so adding cannot fail; a failure would only
        // drop samples, which the counts below would then show.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        self.ops += other.ops;
        self.rows += other.rows;
        self.retries += other.retries;
        self.short_statements += other.short_statements;
        self.thread_cpu_seconds += other.thread_cpu_seconds;
    }
}

impl Default for OpFigures {
    fn default() -> Self {
        OpFigures::new()
    }
}

/// What one connection measured for one op kind.
pub struct OpRecorder {
    /// The op kind.
    pub kind: OpKind,
    /// Its figures so far.
    pub figures: OpFigures,
    /// Shared with the monitor thread.
    pub live: Arc<LiveCounters>,
}

impl OpRecorder {
    /// A recorder for one connection's op kind.
    pub fn new(kind: OpKind) -> Self {
        OpRecorder {
            kind,
            figures: OpFigures::new(),
            live: Arc::new(LiveCounters::default()),
        }
    }

    /// Record one finished operation.
    #[inline]
    pub fn record(&mut self, latency: Duration, service: Duration, rows: u64) {
        let latency_us = duration_us(latency);
        let f = &mut self.figures;
        f.latency.saturating_record(latency_us.max(1));
        f.service.saturating_record(duration_us(service).max(1));
        f.ops += 1;
        f.rows += rows;
        let live = &self.live;
        live.ops.fetch_add(1, Ordering::Relaxed);
        live.rows.fetch_add(rows, Ordering::Relaxed);
        live.total_ops.fetch_add(1, Ordering::Relaxed);
        live.total_rows.fetch_add(rows, Ordering::Relaxed);
        live.max_latency_us.fetch_max(latency_us, Ordering::Relaxed);
    }
}

/// Whole microseconds of a duration, saturating.
pub fn duration_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Merge recorders per op kind.
pub fn merge(recorders: impl IntoIterator<Item = OpRecorder>) -> BTreeMap<OpKind, OpFigures> {
    let mut out: BTreeMap<OpKind, OpFigures> = BTreeMap::new();
    for r in recorders {
        out.entry(r.kind).or_default().add(&r.figures);
    }
    out
}

/// The calling thread's CPU clock, which another thread can read with
/// [`clock_cpu_ns`]; `None` when the system has none.
pub fn current_thread_cpu_clock() -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self is the calling thread, alive for the call; the call writes `clock`.
    let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &raw mut clock) };
    (rc == 0).then_some(clock)
}

/// The CPU time of a thread's clock, ns; `None` once its thread has ended.
pub fn clock_cpu_ns(clock: libc::clockid_t) -> Option<u64> {
    // SAFETY: clock_gettime writes into the timespec we pass; a stale clock id is an error.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::clock_gettime(clock, &raw mut ts) };
    if rc != 0 {
        return None;
    }
    Some(i64_u64(ts.tv_sec) * 1_000_000_000 + i64_u64(ts.tv_nsec))
}

/// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`), 0 when unknown.
pub fn thread_cpu_seconds() -> f64 {
    // SAFETY: clock_gettime writes into the timespec we pass.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) };
    if rc != 0 {
        return 0.0;
    }
    i64_f64(ts.tv_sec) + i64_f64(ts.tv_nsec) / 1e9
}

/// Percentiles, max, mean and the 10 bucket shares of a latency histogram, all in µs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Median, µs.
    pub p50_us: u64,
    /// 90th percentile, µs.
    pub p90_us: u64,
    /// 99th percentile, µs.
    pub p99_us: u64,
    /// 99.9th percentile, µs.
    pub p99_9_us: u64,
    /// Largest, µs.
    pub max_us: u64,
    /// Share of operations (0..=1) per bucket of [`BUCKET_LABELS`].
    pub bucket_shares: [f64; 10],
}

impl LatencySummary {
    /// Summarise a histogram.
    pub fn of(h: &Histogram<u64>) -> Self {
        let count = h.len();
        let mut shares = [0.0; 10];
        if count > 0 {
            let mut low = 0;
            for (i, &bound) in BUCKET_BOUNDS_US.iter().enumerate() {
                shares[i] = count_f64(h.count_between(low, bound)) / count_f64(count);
                low = bound + 1;
            }
            let below: f64 = shares[..9].iter().sum();
            shares[9] = (1.0 - below).max(0.0);
        }
        LatencySummary {
            count,
            mean_us: if count > 0 { h.mean() } else { 0.0 },
            p50_us: h.value_at_quantile(0.5),
            p90_us: h.value_at_quantile(0.9),
            p99_us: h.value_at_quantile(0.99),
            p99_9_us: h.value_at_quantile(0.999),
            max_us: h.max(),
            bucket_shares: shares,
        }
    }
}

/// The recorded values of a histogram as `[value_us, count]` pairs (each value is the highest
/// equivalent value of its HdrHistogram bucket), enough to rebuild and merge it later.
pub fn histogram_counts(h: &Histogram<u64>) -> Vec<[u64; 2]> {
    h.iter_recorded()
        .map(|v| [v.value_iterated_to(), v.count_at_value()])
        .collect()
}

/// The per-second rate at the median and the 1%-low (the rate exceeded in 99% of seconds) of a
/// series of per-second counts. Returns `None` for an empty series.
pub fn rate_percentiles(per_second: &[u64]) -> Option<(f64, f64)> {
    if per_second.is_empty() {
        return None;
    }
    let mut sorted = per_second.to_vec();
    sorted.sort_unstable();
    let at = |q: f64| {
        let idx = round_to_usize(usize_f64(sorted.len() - 1) * q);
        count_f64(sorted[idx])
    };
    Some((at(0.5), at(0.01)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_histograms_and_counts_per_kind() {
        let mut a = OpRecorder::new(OpKind::Insert);
        let mut b = OpRecorder::new(OpKind::Insert);
        let mut c = OpRecorder::new(OpKind::Delete);
        a.record(Duration::from_micros(100), Duration::from_micros(90), 50);
        b.record(Duration::from_millis(2), Duration::from_millis(1), 50);
        b.record(Duration::from_millis(3), Duration::from_millis(1), 50);
        c.record(Duration::from_secs(2), Duration::from_millis(5), 50);
        let m = merge([a, b, c]);
        let ins = &m[&OpKind::Insert];
        assert_eq!((ins.ops, ins.rows), (3, 150));
        assert_eq!(ins.latency.len(), 3);
        let s = LatencySummary::of(&ins.latency);
        assert_eq!(s.count, 3);
        assert!((s.bucket_shares[0] - 1.0 / 3.0).abs() < 1e-9);
        assert!((s.bucket_shares[2] - 2.0 / 3.0).abs() < 1e-9);
        assert!(s.max_us >= 3000 && s.max_us < 3010, "{}", s.max_us);
        let del = LatencySummary::of(&m[&OpKind::Delete].latency);
        assert!((del.bucket_shares[7] - 1.0).abs() < 1e-9, "{del:?}");
        assert!(LatencySummary::of(&m[&OpKind::Delete].service).bucket_shares[3] > 0.99);
    }

    #[test]
    fn live_counters_swap_and_reset() {
        let mut r = OpRecorder::new(OpKind::PointQuery);
        r.record(Duration::from_micros(40), Duration::from_micros(40), 10);
        r.record(Duration::from_micros(70), Duration::from_micros(60), 9);
        let s = r.live.swap();
        assert_eq!(
            s,
            SecondCounts {
                ops: 2,
                rows: 19,
                max_latency_us: 70,
                cpu_us: None,
            }
        );
        assert_eq!(r.live.swap(), SecondCounts::default());
        assert_eq!(r.live.total_ops.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn empty_histogram_summary_is_zero_shares() {
        let s = LatencySummary::of(&new_histogram());
        assert_eq!(s.count, 0);
        assert_eq!(s.bucket_shares, [0.0; 10]);
    }

    #[test]
    fn rate_percentiles_pick_median_and_one_percent_low() {
        let series: Vec<u64> = (1..=100).collect();
        let (p50, low) = rate_percentiles(&series).unwrap();
        assert_eq!(p50, 51.0);
        assert_eq!(low, 2.0);
        assert!(rate_percentiles(&[]).is_none());
    }

    #[test]
    fn histogram_counts_round_trip_total() {
        let mut h = new_histogram();
        for v in [5u64, 5, 1000, 123_456] {
            h.record(v).unwrap();
        }
        let pairs = histogram_counts(&h);
        assert_eq!(pairs.iter().map(|p| p[1]).sum::<u64>(), 4);
    }
}
