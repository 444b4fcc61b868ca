//! `--perf`: `perf stat` attached to the server's processes for each step's measured part.
//!
//! Hardware counters are asked for along with the software events; where the machine exposes
//! none (most VMs) perf reports them `<not supported>` and they are recorded as n/a with that
//! reason, while the software events (task-clock, context switches, CPU migrations, page
//! faults) are kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::Metric;
pub use crate::results::metrics::PerfRecord;
use crate::workload::steps::StepName;

/// The events asked for.
pub const EVENTS: &str =
    "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,cache-misses";

/// Sub-directory of the results dir holding perf's raw output.
pub const PERF_DIR: &str = "perf";

/// A `perf stat` running for one step.
pub struct PerfRun {
    child: Result<Child, String>,
    out: PathBuf,
    rel: String,
}

impl PerfRun {
    /// Attach `perf stat` to the server's current process tree.
    pub fn start(pid: &Result<u32, String>, dir: &Path, step: &StepName) -> PerfRun {
        let rel = format!("{PERF_DIR}/{step}.csv");
        let out = dir.join(&rel);
        let child = (|| -> Result<Child, String> {
            let pids = tree_pid_list(pid)?;
            std::fs::create_dir_all(dir.join(PERF_DIR)).map_err(|e| e.to_string())?;
            Command::new("perf")
                .args(["stat", "-x,", "-e", EVENTS, "-o"])
                .arg(&out)
                .args(["-p", &pids])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run perf (install linux-perf): {e}"))
        })();
        PerfRun { child, out, rel }
    }

    /// Stop perf (SIGINT makes it print its counts) and read them.
    pub fn finish(self) -> PerfRecord {
        let mut child = match self.child {
            Ok(c) => c,
            Err(e) => return PerfRecord::failed(e),
        };
        if let Err(e) = interrupt_and_wait(&mut child, Duration::from_secs(5), "perf stat") {
            return PerfRecord::failed(e);
        }
        match std::fs::read_to_string(&self.out) {
            Ok(text) => PerfRecord {
                counters: parse_perf_csv(&text),
                per_op: BTreeMap::new(),
                file: Some(self.rel),
                error: None,
            },
            Err(e) => PerfRecord::failed(format!("cannot read {}: {e}", self.out.display())),
        }
    }
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

/// Parse `perf stat -x,` output: `value,unit,event,...` per line.
pub fn parse_perf_csv(text: &str) -> BTreeMap<String, Metric> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let (Some(value), Some(event)) = (f.first(), f.get(2)) else {
            continue;
        };
        let event = event.split(':').next().unwrap_or(event).to_string();
        let m = match value.trim().parse::<f64>() {
            Ok(v) => Metric::Value(v),
            Err(_) => Metric::Na(format!(
                "perf says {} (no hardware counters on this machine?)",
                value.trim()
            )),
        };
        out.insert(event, m);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_unsupported_counters() {
        let text = "# started on x\n\n0.78,msec,task-clock,784755,100.00,0.051,CPUs utilized\n\
                    12,,context-switches,784755,100.00,,\n<not supported>,,instructions,0,100.00,,\n";
        let m = parse_perf_csv(text);
        assert_eq!(m["task-clock"], Metric::Value(0.78));
        assert_eq!(m["context-switches"], Metric::Value(12.0));
        assert!(matches!(&m["instructions"], Metric::Na(r) if r.contains("not supported")));
    }
}
