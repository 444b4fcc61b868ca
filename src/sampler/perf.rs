//! `--perf`: `perf stat` on the server's processes during each step's measured part, in the
//! seven groups the published posts use, so that no counter is multiplexed with another
//! group's. The groups run in turn, each for an interval (`--perf-interval`), repeating while
//! the step lasts; each group's counts are divided by the operations done in its own
//! intervals (`count_ops`, from the per-second timeline).
//!
//! Where the machine exposes no hardware counters (most VMs), perf reports them
//! `<not supported>` and they are recorded as n/a with that reason, while the software events
//! (cpu-clock, context switches, migrations, faults) are counted.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::Metric;
pub use crate::results::metrics::{PerfGroupRecord, PerfRecord};
use crate::stats::convert::{count_f64, usize_f64};
use crate::workload::steps::StepName;

/// The counter groups, as the published posts run them: (1) clock and instructions, (2)
/// cache and stalls, (3) L1 data cache, (4) data TLB, (5) instruction TLB and L1
/// instruction cache, (6) last-level cache, (7) software events (counted on any machine).
pub const GROUPS: [&[&str]; 7] = [
    &[
        "cpu-clock",
        "cycles",
        "bus-cycles",
        "instructions",
        "branches",
        "branch-misses",
    ],
    &[
        "cache-references",
        "cache-misses",
        "stalled-cycles-backend",
        "stalled-cycles-frontend",
    ],
    &[
        "L1-dcache-loads",
        "L1-dcache-load-misses",
        "L1-dcache-stores",
    ],
    &[
        "dTLB-loads",
        "dTLB-load-misses",
        "dTLB-stores",
        "dTLB-store-misses",
    ],
    &[
        "iTLB-load-misses",
        "iTLB-loads",
        "L1-icache-load-misses",
        "L1-icache-loads",
    ],
    &[
        "LLC-loads",
        "LLC-load-misses",
        "LLC-stores",
        "LLC-store-misses",
        "LLC-prefetches",
    ],
    &[
        "alignment-faults",
        "context-switches",
        "migrations",
        "major-faults",
        "minor-faults",
        "faults",
    ],
];

/// The group a step starts with: steps take turns, so that a run of steps shorter than one
/// interval still counts every group in some step.
pub fn first_group(ordinal: u32) -> usize {
    usize::try_from(ordinal.saturating_sub(1)).unwrap_or(0) % GROUPS.len()
}

/// Sub-directory of the results dir holding perf's raw output.
pub const PERF_DIR: &str = "perf";

/// One count as perf printed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Counted {
    /// The event's name.
    pub event: String,
    /// The count (ms for cpu-clock and task-clock), or why there is none.
    pub value: Metric,
    /// The share of the interval the counter ran, %; below 100 it was multiplexed and perf
    /// scaled the count up.
    pub running_pct: Option<f64>,
}

/// Parse `perf stat -x,` output: `value,unit,event,run time,running %,metric,metric unit`
/// per line; `<not supported>` and `<not counted>` values become n/a with a reason.
pub fn parse_counts(text: &str) -> Vec<Counted> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let (Some(value), Some(event)) = (f.first(), f.get(2)) else {
            continue;
        };
        let event = event.split(':').next().unwrap_or(event).trim().to_string();
        let value = value.trim();
        let value = match value.parse::<f64>() {
            Ok(v) => Metric::Value(v),
            Err(_) if value == "<not supported>" => Metric::na(
                "perf: <not supported> (the machine exposes no such counter, as most VMs)",
            ),
            Err(_) if value == "<not counted>" => Metric::na(
                "perf: <not counted> (the counter could not be scheduled in the interval)",
            ),
            Err(_) => Metric::Na(format!("perf printed {value}")),
        };
        let running_pct = f.get(4).and_then(|p| p.trim().parse::<f64>().ok());
        out.push(Counted {
            event,
            value,
            running_pct,
        });
    }
    out
}

/// One interval of one group.
#[derive(Clone, Debug)]
pub struct GroupInterval {
    /// Index into [`GROUPS`].
    pub group: usize,
    /// Seconds since the step's measured part began.
    pub start_s: f64,
    /// Seconds since the step's measured part began.
    pub end_s: f64,
    /// perf's counts, or why perf did not count.
    pub counts: Result<Vec<Counted>, String>,
}

/// The groups of a step, counted in turn on a thread of their own.
pub struct PerfRun {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<Vec<GroupInterval>>,
    rel: String,
    interval: Duration,
}

impl PerfRun {
    /// Start counting the groups in turn, from `first` (an index into [`GROUPS`]), each for
    /// `interval`, on the server's process tree as it is at each group's start.
    pub fn start(
        pid: &Result<u32, String>,
        dir: &Path,
        step: &StepName,
        first: usize,
        interval: Duration,
    ) -> PerfRun {
        let rel = format!("{PERF_DIR}/{step}.csv");
        let raw = dir.join(&rel);
        let scratch = dir.join(PERF_DIR).join(format!("{step}.part"));
        let _ = std::fs::create_dir_all(dir.join(PERF_DIR));
        let _ = std::fs::remove_file(&raw);
        let (stop, stopped) = mpsc::channel();
        let pid = pid.clone();
        let handle =
            std::thread::spawn(move || rotate(&pid, first, interval, &stopped, &scratch, &raw));
        PerfRun {
            stop,
            handle,
            rel,
            interval,
        }
    }

    /// Stop at the end of the step's measured part and sum each group's intervals. The
    /// operations per interval are counted later ([`PerfRecord::count_ops`]).
    pub fn finish(self) -> PerfRecord {
        let _ = self.stop.send(());
        let intervals = match self.handle.join() {
            Ok(i) => i,
            Err(_) => return PerfRecord::failed("the perf thread panicked".into()),
        };
        let groups = group_records(&intervals, self.interval);
        let mut record = PerfRecord {
            counters: BTreeMap::new(),
            per_op: BTreeMap::new(),
            file: Some(self.rel),
            error: None,
            groups,
        };
        if record.groups.iter().all(|g| g.error.is_some()) {
            record.error = record.groups.iter().find_map(|g| g.error.clone());
        }
        for g in &record.groups {
            for (e, v) in &g.counts {
                record.counters.insert(e.clone(), v.clone());
            }
        }
        record
    }
}

/// The thread: each group in turn for `interval` until the stop signal, its raw output
/// appended to `raw` under a line naming the group and interval.
fn rotate(
    pid: &Result<u32, String>,
    first: usize,
    interval: Duration,
    stopped: &mpsc::Receiver<()>,
    scratch: &Path,
    raw: &Path,
) -> Vec<GroupInterval> {
    let t0 = Instant::now();
    let mut out = Vec::new();
    let mut group = first;
    loop {
        let start_s = t0.elapsed().as_secs_f64();
        let (counts, text, stop) = count_group(pid, GROUPS[group], interval, stopped, scratch);
        let end_s = t0.elapsed().as_secs_f64();
        let mut block = format!(
            "# group {} from {start_s:.3} s to {end_s:.3} s\n",
            group + 1
        );
        match &counts {
            Ok(_) => block.push_str(&text),
            Err(e) => {
                let _ = writeln!(block, "# not counted: {e}");
            }
        }
        append(raw, &block);
        out.push(GroupInterval {
            group,
            start_s,
            end_s,
            counts,
        });
        if stop {
            break;
        }
        group = (group + 1) % GROUPS.len();
    }
    let _ = std::fs::remove_file(scratch);
    out
}

fn append(path: &Path, text: &str) {
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(text.as_bytes());
    }
}

/// One group for one interval: `(counts, perf's raw text, whether the stop signal came)`.
fn count_group(
    pid: &Result<u32, String>,
    events: &[&str],
    interval: Duration,
    stopped: &mpsc::Receiver<()>,
    scratch: &Path,
) -> (Result<Vec<Counted>, String>, String, bool) {
    let err_file = scratch.with_extension("err");
    let child = (|| -> Result<Child, String> {
        let pids = tree_pid_list(pid)?;
        let stderr = std::fs::File::create(&err_file).map_err(|e| e.to_string())?;
        Command::new("perf")
            .args(["stat", "-x,", "-e", &events.join(","), "-o"])
            .arg(scratch)
            .args(["-p", &pids])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot run perf (install linux-perf): {e}"))
    })();
    // Wait out the interval (or the step's end) whether or not perf started, so that a
    // machine without perf is not asked again at once.
    let stop = !matches!(
        stopped.recv_timeout(interval),
        Err(RecvTimeoutError::Timeout)
    );
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return (Err(e), String::new(), stop),
    };
    if let Err(e) = interrupt_and_wait(&mut child, Duration::from_secs(5), "perf stat") {
        return (Err(e), String::new(), stop);
    }
    let text = std::fs::read_to_string(scratch).unwrap_or_default();
    let counts = parse_counts(&text);
    if counts.is_empty() {
        let why = std::fs::read_to_string(&err_file).unwrap_or_default();
        let why = why
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        let _ = std::fs::remove_file(&err_file);
        return (Err(format!("perf stat counted nothing: {why}")), text, stop);
    }
    let _ = std::fs::remove_file(&err_file);
    (Ok(counts), text, stop)
}

/// Each group's intervals summed: counts added, the lowest running share kept. A group with
/// no interval (the step ended before its turn) gets every event n/a with that reason.
pub fn group_records(intervals: &[GroupInterval], interval: Duration) -> Vec<PerfGroupRecord> {
    GROUPS
        .iter()
        .enumerate()
        .map(|(g, events)| {
            let mine: Vec<&GroupInterval> = intervals.iter().filter(|i| i.group == g).collect();
            let mut rec = PerfGroupRecord {
                group: u32::try_from(g + 1).unwrap_or(0),
                events: events.iter().map(|e| (*e).to_string()).collect(),
                counts: BTreeMap::new(),
                running_pct: BTreeMap::new(),
                intervals: mine.iter().map(|i| [i.start_s, i.end_s]).collect(),
                seconds: mine.iter().map(|i| i.end_s - i.start_s).sum(),
                ops: 0.0,
                per_op: BTreeMap::new(),
                ipc: Metric::na("the step's operations are not counted yet"),
                ghz: Metric::na("the step's operations are not counted yet"),
                error: None,
            };
            if mine.is_empty() {
                let why = format!(
                    "not reached: the step ended before this group's turn (groups take turns of {} s; a longer step or a shorter --perf-interval counts them all)",
                    trim_seconds(interval.as_secs_f64())
                );
                for e in *events {
                    rec.counts.insert((*e).to_string(), Metric::Na(why.clone()));
                }
                rec.error = Some(why);
                return rec;
            }
            let errors: Vec<&String> = mine.iter().filter_map(|i| i.counts.as_ref().err()).collect();
            for e in *events {
                let mut sum: Option<f64> = None;
                let mut reason: Option<String> = None;
                for i in &mine {
                    let Ok(counts) = &i.counts else { continue };
                    let Some(c) = counts.iter().find(|c| c.event == *e) else {
                        continue;
                    };
                    match &c.value {
                        Metric::Value(v) => *sum.get_or_insert(0.0) += v,
                        Metric::Na(r) => reason = reason.or_else(|| Some(r.clone())),
                    }
                    if let Some(p) = c.running_pct {
                        let low = rec.running_pct.entry((*e).to_string()).or_insert(p);
                        *low = low.min(p);
                    }
                }
                let value = match (sum, reason, errors.first()) {
                    (Some(v), ..) => Metric::Value(v),
                    (None, Some(r), _) => Metric::Na(r),
                    (None, None, Some(err)) => Metric::Na((*err).clone()),
                    (None, None, None) => Metric::na("perf printed no count for it"),
                };
                rec.counts.insert((*e).to_string(), value);
            }
            if errors.len() == mine.len() {
                rec.error = errors.first().map(|e| (*e).clone());
            }
            rec
        })
        .collect()
}

fn trim_seconds(s: f64) -> String {
    let t = format!("{s:.1}");
    t.trim_end_matches(".0").to_string()
}

impl PerfRecord {
    /// Count the operations done in each group's intervals, and each event per operation,
    /// IPC and GHz. `per_second[i]` is the step's main figure (rows, queries or operations)
    /// in second `(i, i+1]` of the step; `total` is the whole step's and `seconds` its length:
    /// what the whole seconds leave over is spread evenly over the rest of the step (all of
    /// it when there is no per-second series, as for l.x).
    pub fn count_ops(&mut self, per_second: &[u64], total: u64, seconds: f64) {
        for g in &mut self.groups {
            if g.error.is_some() && g.intervals.is_empty() {
                continue;
            }
            g.ops = g
                .intervals
                .iter()
                .map(|&[a, b]| ops_in(per_second, total, seconds, a, b))
                .sum();
            let no_ops = "no operations in the group's intervals";
            g.per_op = g
                .counts
                .iter()
                .map(|(e, v)| (e.clone(), v.per(g.ops, no_ops)))
                .collect();
            let count = |e: &str| g.counts.get(e).and_then(Metric::value);
            g.ipc = match (count("instructions"), count("cycles")) {
                (Some(i), Some(c)) if c > 0.0 => Metric::Value(i / c),
                _ => Metric::na("instructions and cycles are not both counted"),
            };
            // cpu-clock is in ms: cycles per ns of CPU is GHz.
            g.ghz = match (count("cycles"), count("cpu-clock")) {
                (Some(c), Some(ms)) if ms > 0.0 => Metric::Value(c / (ms * 1e6)),
                _ => Metric::na("cycles and cpu-clock are not both counted"),
            };
        }
        self.per_op = self
            .groups
            .iter()
            .flat_map(|g| g.per_op.iter().map(|(e, v)| (e.clone(), v.clone())))
            .collect();
    }
}

/// Operations done between `a` and `b` seconds into the step: each whole second of
/// `per_second` counted by its overlap with `[a, b]`, and the rest of `total` spread evenly
/// over the part of the step after the whole seconds.
pub fn ops_in(per_second: &[u64], total: u64, seconds: f64, a: f64, b: f64) -> f64 {
    let overlap = |s: f64, e: f64| (b.min(e) - a.max(s)).max(0.0);
    let mut ops = 0.0;
    for (i, &n) in per_second.iter().enumerate() {
        let s = usize_f64(i);
        ops += count_f64(n) * overlap(s, s + 1.0);
    }
    let counted: u64 = per_second.iter().sum();
    let rest = count_f64(total.saturating_sub(counted));
    let tail_start = usize_f64(per_second.len());
    if rest > 0.0 {
        if seconds > tail_start {
            ops += rest * overlap(tail_start, seconds) / (seconds - tail_start);
        } else if let Some(last) = per_second.len().checked_sub(1) {
            // No time left after the whole seconds: the rest belongs to the last one.
            let s = usize_f64(last);
            ops += rest * overlap(s, s + 1.0);
        }
    }
    ops
}

/// The pids of the server's process tree as it is now, comma-separated for `perf -p`.
pub(super) fn tree_pid_list(pid: &Result<u32, String>) -> Result<String, String> {
    let tree = super::procfs::process_tree(pid.clone()?)?;
    Ok(tree
        .iter()
        .map(|(p, _)| p.to_string())
        .collect::<Vec<_>>()
        .join(","))
}

/// Stop a perf child with SIGINT (it then writes its output and exits) and wait up to
/// `limit` for it; past that it is killed and `what` did not stop.
pub(super) fn interrupt_and_wait(
    child: &mut Child,
    limit: Duration,
    what: &str,
) -> Result<(), String> {
    if matches!(child.try_wait(), Ok(None))
        && let Ok(pid) = libc::pid_t::try_from(child.id())
    {
        // SAFETY: kill has no memory-safety preconditions; the pid is our own child.
        unsafe {
            libc::kill(pid, libc::SIGINT);
        }
    }
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return Ok(()),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{what} did not stop within {} s", limit.as_secs()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_not_supported_not_counted_and_multiplexed_lines() {
        let text = "# started on x\n\n\
            0.78,msec,cpu-clock,784755,100.00,0.051,CPUs utilized\n\
            12,,context-switches,784755,100.00,,\n\
            <not supported>,,instructions,0,100.00,,\n\
            <not counted>,,LLC-loads,0,0.00,,\n\
            4521,,cache-misses:u,392000,49.95,,\n";
        let c = parse_counts(text);
        assert_eq!(c.len(), 5);
        assert_eq!(c[0].value, Metric::Value(0.78));
        assert_eq!(c[0].running_pct, Some(100.0));
        assert_eq!(c[1].event, "context-switches");
        assert!(matches!(&c[2].value, Metric::Na(r) if r.contains("<not supported>")));
        assert!(matches!(&c[3].value, Metric::Na(r) if r.contains("<not counted>")));
        // A multiplexed counter: perf's scaled count, and the share of time it ran.
        assert_eq!(c[4].event, "cache-misses");
        assert_eq!(c[4].value, Metric::Value(4521.0));
        assert_eq!(c[4].running_pct, Some(49.95));
    }

    #[test]
    fn ops_are_counted_in_the_groups_own_interval() {
        // A synthetic timeline: 100 ops in second 1, 200 in 2, 300 in 3, 400 in 4, and 50
        // more in the 0.5 s after the last whole second (total 1,050 over 4.5 s).
        let per_second = [100, 200, 300, 400];
        let (total, seconds) = (1050, 4.5);
        assert!((ops_in(&per_second, total, seconds, 0.0, 4.5) - 1050.0).abs() < 1e-9);
        assert!((ops_in(&per_second, total, seconds, 1.0, 2.0) - 200.0).abs() < 1e-9);
        // Half of second 1, all of 2, a quarter of 3.
        assert!(
            (ops_in(&per_second, total, seconds, 0.5, 2.25) - (50.0 + 200.0 + 75.0)).abs() < 1e-9
        );
        // The tail: 50 ops spread over 4.0..4.5.
        assert!((ops_in(&per_second, total, seconds, 4.0, 4.25) - 25.0).abs() < 1e-9);
        // No series (l.x): the total spread over the step.
        assert!((ops_in(&[], 1000, 2.0, 0.5, 1.0) - 250.0).abs() < 1e-9);

        // Two groups on that timeline: each count divided by its own interval's ops.
        let counted = |event: &str, v: f64| Counted {
            event: event.into(),
            value: Metric::Value(v),
            running_pct: Some(100.0),
        };
        let intervals = [
            GroupInterval {
                group: 0,
                start_s: 0.0,
                end_s: 1.0,
                counts: Ok(vec![
                    counted("cpu-clock", 500.0),
                    counted("cycles", 1.0e9),
                    counted("instructions", 2.0e9),
                ]),
            },
            GroupInterval {
                group: 6,
                start_s: 1.0,
                end_s: 3.0,
                counts: Ok(vec![counted("context-switches", 1000.0)]),
            },
        ];
        let mut rec = PerfRecord {
            counters: BTreeMap::new(),
            per_op: BTreeMap::new(),
            file: None,
            error: None,
            groups: group_records(&intervals, Duration::from_secs(1)),
        };
        rec.count_ops(&per_second, total, seconds);
        let g1 = &rec.groups[0];
        assert_eq!(g1.ops, 100.0);
        assert_eq!(g1.per_op["instructions"], Metric::Value(2.0e7));
        assert_eq!(g1.ipc, Metric::Value(2.0));
        assert_eq!(g1.ghz, Metric::Value(2.0));
        let g7 = &rec.groups[6];
        assert_eq!(g7.ops, 500.0);
        assert_eq!(g7.per_op["context-switches"], Metric::Value(2.0));
        // Events the group asked for but perf did not print are n/a, not 0.
        assert!(g7.counts["faults"].value().is_none());
        // A group that never had its turn says so for each event.
        let g3 = &rec.groups[2];
        assert!(g3.intervals.is_empty());
        assert!(
            matches!(&g3.counts["L1-dcache-loads"], Metric::Na(r) if r.contains("not reached"))
        );
        assert_eq!(rec.per_op["context-switches"], Metric::Value(2.0));
        assert_eq!(rec.ghz(), Some(2.0));
    }

    #[test]
    fn steps_take_turns_at_the_first_group() {
        assert_eq!(first_group(1), 0);
        assert_eq!(first_group(7), 6);
        assert_eq!(first_group(8), 0);
        assert_eq!(first_group(0), 0);
    }
}
