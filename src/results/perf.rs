//! What `perf` recorded of the server in one step: `perf stat`'s counters in groups and a
//! profile of where its CPU went (`run.json`'s `steps[].metrics.perf` and `.profile`). The
//! sampler (`crate::sampler::perf`, `crate::sampler::profile`) fills them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::metric::Metric;
use crate::stats::convert::count_f64;

/// `perf stat` counters of one step, counted in groups (see `sampler::perf::GROUPS`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerfRecord {
    /// Per event: the count over its group's intervals (cpu-clock and task-clock in ms), or
    /// why not.
    pub counters: BTreeMap<String, Metric>,
    /// Per event: the count per operation of its group's own intervals.
    pub per_op: BTreeMap<String, Metric>,
    /// perf's raw output, relative to the results dir.
    pub file: Option<String>,
    /// Why perf could not run, when it could not.
    pub error: Option<String>,
    /// The groups, in order (empty in run.json files written before groups; their counters
    /// cover the whole step).
    #[serde(default)]
    pub groups: Vec<PerfGroupRecord>,
}

/// One group of counters of a step: perf counted them together (never multiplexed with
/// another group) over its intervals, and each count is divided by the operations done in
/// those same intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerfGroupRecord {
    /// The group's number, 1 to 7.
    pub group: u32,
    /// Its events as given to `perf stat -e`.
    pub events: Vec<String>,
    /// Per event: the count summed over the group's intervals, or why not (perf's
    /// `<not supported>` or `<not counted>`, perf failing, the group not reached).
    pub counts: BTreeMap<String, Metric>,
    /// Per event: the lowest share of its intervals, in %, that the counter ran; below 100
    /// the kernel multiplexed it and perf scaled the count up.
    pub running_pct: BTreeMap<String, f64>,
    /// The group's intervals: `[start, end]` in seconds since the step's measured part
    /// began.
    pub intervals: Vec<[f64; 2]>,
    /// Their total length, seconds.
    pub seconds: f64,
    /// Operations (the step's throughput unit: rows, queries or operations) done in those
    /// intervals, from the per-second timeline.
    pub ops: f64,
    /// Per event: the count per operation.
    pub per_op: BTreeMap<String, Metric>,
    /// Instructions per cycle, where both are counted.
    pub ipc: Metric,
    /// The clock: cycles / cpu-clock, GHz, where both are counted.
    pub ghz: Metric,
    /// Why the group was not counted at all, when it was not.
    pub error: Option<String>,
}

impl PerfRecord {
    pub(crate) fn failed(error: String) -> PerfRecord {
        PerfRecord {
            counters: BTreeMap::new(),
            per_op: BTreeMap::new(),
            file: None,
            error: Some(error),
            groups: Vec::new(),
        }
    }

    /// Fill `per_op` from `counters` over the whole step (records without groups).
    pub fn per_op(mut self, ops: u64) -> PerfRecord {
        self.per_op = self
            .counters
            .iter()
            .map(|(k, v)| (k.clone(), v.per(count_f64(ops), "no ops in the step")))
            .collect();
        self
    }

    /// The clock of the step: cycles / cpu-clock of the group that counts both, GHz.
    pub fn ghz(&self) -> Option<f64> {
        self.groups.iter().find_map(|g| g.ghz.value())
    }
}

/// A profile of the server's CPU over (part of) one step: `perf record` on the `cpu-clock`
/// event with call graphs, folded into stacks.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProfileRecord {
    /// The folded stacks (`frame;frame;... weight` per line, the weight in ns of CPU), relative
    /// to the results dir.
    pub folded_file: Option<String>,
    /// The flamegraph, relative to the results dir.
    pub svg_file: Option<String>,
    /// Seconds recorded (the first part of the step's measured part).
    pub seconds: f64,
    /// Samples per second and process.
    pub frequency_hz: u32,
    /// Samples of the server's processes (each stands for 1/frequency_hz s of CPU).
    pub samples: u64,
    /// The functions with the largest share of samples of their own, largest first.
    pub top_functions: Vec<FunctionShare>,
    /// Why there is no profile, when there is none.
    pub error: Option<String>,
}

impl ProfileRecord {
    pub(crate) fn failed(error: String) -> ProfileRecord {
        ProfileRecord {
            folded_file: None,
            svg_file: None,
            seconds: 0.0,
            frequency_hz: 0,
            samples: 0,
            top_functions: Vec::new(),
            error: Some(error),
        }
    }
}

/// One function's share of a profile's samples.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FunctionShare {
    /// The function (with its module when perf could not name it, e.g. `[unknown]`).
    pub function: String,
    /// Share of all samples in which it is the leaf frame (its own time), 0..1.
    pub self_share: f64,
    /// Share of all samples in which it is on the stack at all (callees included), 0..1.
    pub total_share: f64,
}
