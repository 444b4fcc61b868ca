//! The host probe as recorded: how fast the machine itself was before and after each step
//! (`--host-probe-ms`; the measuring is `sampler::probe`). Every figure is a time per unit, so
//! a larger figure is a slower host.

use serde::{Deserialize, Serialize};

use crate::stats::convert::count_f64;

/// One run of the host probe: four small fixed tasks, each timed per unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostProbe {
    /// When the probe started, UTC, RFC 3339.
    pub at: String,
    /// Single-thread CPU work: ns per iteration of a fixed deterministic integer loop.
    pub cpu_ns_per_iteration: Option<f64>,
    /// Memory: ns per access of a random pointer chase over a buffer bigger than L2.
    pub memory_ns_per_access: Option<f64>,
    /// Loopback: µs per one-byte round trip between two threads over a Unix socket pair.
    pub loopback_us_per_round_trip: Option<f64>,
    /// Storage: µs per write-and-fsync of a small file on the data directory's filesystem.
    pub fsync_us: Option<f64>,
    /// Mean `cpu MHz` over the CPUs of `/proc/cpuinfo`, when it shows one.
    pub cpu_mhz: Option<f64>,
    /// Wall time the whole probe took, seconds.
    pub seconds: f64,
    /// Why a figure is missing, one line each (empty when every figure was measured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// The figures of a probe, each a time per unit (larger = slower host).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeFigure {
    /// `cpu_ns_per_iteration`.
    Cpu,
    /// `memory_ns_per_access`.
    Memory,
    /// `loopback_us_per_round_trip`.
    Loopback,
    /// `fsync_us`.
    Fsync,
}

impl ProbeFigure {
    /// Every figure, in the order reports show them.
    pub const ALL: [ProbeFigure; 4] = [
        ProbeFigure::Cpu,
        ProbeFigure::Memory,
        ProbeFigure::Loopback,
        ProbeFigure::Fsync,
    ];

    /// Short name for tables and warnings: `CPU ns/iter`, `memory ns/access`, ...
    pub fn short(self) -> &'static str {
        match self {
            ProbeFigure::Cpu => "CPU ns/iter",
            ProbeFigure::Memory => "memory ns/access",
            ProbeFigure::Loopback => "loopback µs/round trip",
            ProbeFigure::Fsync => "fsync µs",
        }
    }

    /// The figure of `probe`, when measured.
    pub fn of(self, probe: &HostProbe) -> Option<f64> {
        match self {
            ProbeFigure::Cpu => probe.cpu_ns_per_iteration,
            ProbeFigure::Memory => probe.memory_ns_per_access,
            ProbeFigure::Loopback => probe.loopback_us_per_round_trip,
            ProbeFigure::Fsync => probe.fsync_us,
        }
        .filter(|v| v.is_finite() && *v > 0.0)
    }
}

/// The host around one step: the probe before and after it, and the share of the host's CPU
/// time that was steal and iowait during it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepHost {
    /// The probe right before the step's connections started.
    pub before: Option<HostProbe>,
    /// The probe right after the step's connections ended (before its checks).
    pub after: Option<HostProbe>,
    /// Share (0..1) of all CPUs' time in the step that the hypervisor gave to others
    /// (`/proc/stat` steal), `None` when `/proc/stat` could not be read.
    pub steal_share: Option<f64>,
    /// Share (0..1) of all CPUs' time in the step spent idle waiting for IO (`/proc/stat`
    /// iowait).
    pub iowait_share: Option<f64>,
}

impl StepHost {
    /// The probes of the step (before, after), those that ran.
    pub fn probes(&self) -> impl Iterator<Item = &HostProbe> {
        self.before.iter().chain(self.after.iter())
    }

    /// The smallest (fastest) `figure` of the step's probes.
    pub fn best(&self, figure: ProbeFigure) -> Option<f64> {
        self.probes().filter_map(|p| figure.of(p)).reduce(f64::min)
    }
}

/// The probe's setup for a run (`run.json`'s `host_probe`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunHostProbe {
    /// The probe's time budget, ms (`--host-probe-ms`), split over its four tasks.
    pub budget_ms: u32,
    /// The directory the fsync task wrote its file in (the data directory, its parent for a
    /// SQLite file, or the results directory when the data directory is unknown or not
    /// writable).
    pub fsync_dir: Option<String>,
    /// Bytes of the memory task's buffer.
    pub memory_bytes: u64,
    /// The run's typical host: the median of each figure over every probe of the run.
    pub median: Option<HostProbe>,
}

/// The median of the finite values (the mean of the two middle ones for an even count); NaN
/// and infinities are left out; `None` when no finite value is left. The project's one median.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// The median of each figure over `probes` (and of the CPU MHz), as one probe; `None` when
/// there is none.
pub fn median_probe(probes: &[&HostProbe]) -> Option<HostProbe> {
    let first = probes.first()?;
    let med =
        |get: &dyn Fn(&HostProbe) -> Option<f64>| median(probes.iter().filter_map(|p| get(p)));
    Some(HostProbe {
        at: first.at.clone(),
        cpu_ns_per_iteration: med(&|p| ProbeFigure::Cpu.of(p)),
        memory_ns_per_access: med(&|p| ProbeFigure::Memory.of(p)),
        loopback_us_per_round_trip: med(&|p| ProbeFigure::Loopback.of(p)),
        fsync_us: med(&|p| ProbeFigure::Fsync.of(p)),
        cpu_mhz: med(&|p| p.cpu_mhz),
        seconds: med(&|p| Some(p.seconds)).unwrap_or(0.0),
        errors: Vec::new(),
    })
}

/// A step that may hold its host probes (the result model's `StepRecord`): what
/// [`run_probes`] and [`steady_between`] read of it, so that this file imports nothing of the
/// record that holds it.
pub trait ProbedStep {
    /// The step's host probes, when it was probed.
    fn step_host(&self) -> Option<&StepHost>;
}

/// Every probe of a run's steps, in order.
pub fn run_probes<S: ProbedStep>(steps: &[S]) -> Vec<&HostProbe> {
    steps
        .iter()
        .filter_map(ProbedStep::step_host)
        .flat_map(StepHost::probes)
        .collect()
}

/// CPU time counters of the whole host from the `cpu` line of `/proc/stat`, in ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Every field of the line summed (user … steal; guest time is inside user).
    pub total: u64,
    /// Idle waiting for IO.
    pub iowait: u64,
    /// Taken by the hypervisor for other guests.
    pub steal: u64,
}

impl CpuTicks {
    /// Parse the `cpu ` line of `/proc/stat` (user nice system idle iowait irq softirq steal
    /// guest guest_nice; older kernels have fewer fields).
    pub fn parse(stat: &str) -> Option<CpuTicks> {
        let line = stat.lines().find_map(|l| l.strip_prefix("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        if v.len() < 5 {
            return None;
        }
        // guest and guest_nice are already counted in user and nice.
        let total = v.iter().take(8).sum();
        Some(CpuTicks {
            total,
            iowait: v[4],
            steal: v.get(7).copied().unwrap_or(0),
        })
    }

    /// The (steal, iowait) shares of the host's CPU time between `self` and a later reading;
    /// `None` when no time passed (or the counters went back).
    pub fn shares_until(&self, later: &CpuTicks) -> Option<(f64, f64)> {
        let total = later.total.checked_sub(self.total).filter(|t| *t > 0)?;
        let share = |a: u64, b: u64| count_f64(b.saturating_sub(a)) / count_f64(total);
        Some((
            share(self.steal, later.steal),
            share(self.iowait, later.iowait),
        ))
    }
}

/// How far a probe figure may lie from another before the host counts as different: the
/// ratio `larger / smaller - 1`, per figure; `None`: shown, never a verdict. Chosen above the
/// probe's own spread: over 20 back to back probes on an idle host, and between the steps of
/// quiet SQLite runs (docs/performance.md, "The host probe").
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HostThresholds {
    /// `cpu_ns_per_iteration`.
    pub cpu: f64,
    /// `memory_ns_per_access`.
    pub memory: f64,
    /// `loopback_us_per_round_trip`.
    pub loopback: f64,
    /// `fsync_us`: `None`, as right after a step the fsync waits for the writeback of the
    /// step's own data (74 µs to 3.5 ms around quiet SQLite steps here): it tells the DBMS's
    /// IO more than the host's.
    pub fsync: Option<f64>,
}

/// The thresholds reports use.
pub const THRESHOLDS: HostThresholds = HostThresholds {
    cpu: 0.25,
    memory: 1.0,
    loopback: 1.0,
    fsync: None,
};

impl HostThresholds {
    /// The threshold of `figure`, `None` when it makes no verdict.
    pub fn of(&self, figure: ProbeFigure) -> Option<f64> {
        match figure {
            ProbeFigure::Cpu => Some(self.cpu),
            ProbeFigure::Memory => Some(self.memory),
            ProbeFigure::Loopback => Some(self.loopback),
            ProbeFigure::Fsync => self.fsync,
        }
    }
}

/// How far every probe of two runs may lie from their common median, per figure (CPU and
/// memory), for the runs to count as measured on a steady host: ±10%. On an idle host the
/// probes lay within 2.4% (CPU) and 2.6% (memory) of their median (docs/performance.md
/// section 7); a neighbour that takes a core moves them far beyond (×4 on the noisy fixture).
pub const STEADY_BOUND: f64 = 0.10;

/// The figures steadiness is read from: loopback's own noise reaches 26% on an idle host and
/// fsync waits for the step's writeback, so neither can vouch for the host.
const STEADY_FIGURES: [ProbeFigure; 2] = [ProbeFigure::Cpu, ProbeFigure::Memory];

/// Whether the host probes of two runs show a host that held steady across both: each run
/// probed every one of its steps before and after, and every CPU and memory figure of every
/// probe of both runs lies within ±[`STEADY_BOUND`] of their common median. Only then may one
/// run a side decide a rate (`stats::decision::Settings::steady_host`).
pub fn steady_between<S: ProbedStep>(a: &[S], b: &[S]) -> bool {
    let hosts = |steps: &[S]| -> Vec<Option<StepHost>> {
        steps.iter().map(|s| s.step_host().cloned()).collect()
    };
    steady_hosts(&hosts(a), &hosts(b))
}

/// [`steady_between`] on the steps' probes (`None`: a step without one).
fn steady_hosts(a: &[Option<StepHost>], b: &[Option<StepHost>]) -> bool {
    let probed = |steps: &[Option<StepHost>]| {
        !steps.is_empty()
            && steps.iter().all(|h| {
                h.as_ref()
                    .is_some_and(|h| h.before.is_some() && h.after.is_some())
            })
    };
    if !probed(a) || !probed(b) {
        return false;
    }
    let probes: Vec<&HostProbe> = a
        .iter()
        .chain(b)
        .flatten()
        .flat_map(StepHost::probes)
        .collect();
    STEADY_FIGURES.iter().all(|f| {
        let values: Vec<f64> = probes.iter().filter_map(|p| f.of(p)).collect();
        values.len() == probes.len()
            && median(values.iter().copied())
                .is_some_and(|m| values.iter().all(|v| (v / m - 1.0).abs() <= STEADY_BOUND))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(cpu: [f64; 2], memory: f64) -> Option<StepHost> {
        let probe = |cpu: f64| HostProbe {
            cpu_ns_per_iteration: Some(cpu),
            memory_ns_per_access: Some(memory),
            ..HostProbe::default()
        };
        Some(StepHost {
            before: Some(probe(cpu[0])),
            after: Some(probe(cpu[1])),
            ..StepHost::default()
        })
    }

    #[test]
    fn a_host_is_steady_only_with_every_probe_within_the_bound() {
        let quiet = vec![step([2.73, 2.75], 14.6), step([2.74, 2.72], 14.4)];
        assert!(steady_hosts(&quiet, &quiet));
        // One probe of the other run 15% slower: not steady.
        let busy = vec![step([2.73, 3.15], 14.6), step([2.74, 2.72], 14.4)];
        assert!(!steady_hosts(&quiet, &busy));
        // Memory moved: not steady.
        let mem = vec![step([2.73, 2.75], 20.0), step([2.74, 2.72], 14.4)];
        assert!(!steady_hosts(&quiet, &mem));
        // A step without its probe after, or a run without probes: no evidence.
        let mut half = quiet.clone();
        if let Some(h) = half[1].as_mut() {
            h.after = None;
        }
        assert!(!steady_hosts(&quiet, &half));
        assert!(!steady_hosts(&quiet, &[None, None]));
        assert!(!steady_hosts(&[], &[]));
    }

    #[test]
    fn proc_stat_cpu_line_parses_and_its_delta_gives_the_shares() {
        let a = CpuTicks::parse(
            "cpu  683 0 750 22795 126 0 14 7 0 0\ncpu0 213 0 332 11634 5 0 3 3 0 0\n",
        )
        .unwrap();
        assert_eq!(
            a,
            CpuTicks {
                total: 683 + 750 + 22795 + 126 + 14 + 7,
                iowait: 126,
                steal: 7
            }
        );
        // 1000 ticks later: 100 of them steal, 50 iowait.
        let b = CpuTicks::parse("cpu  1183 0 850 23045 176 0 14 107 0 0\n").unwrap();
        let (steal, iowait) = a.shares_until(&b).unwrap();
        assert!((steal - 0.1).abs() < 1e-12, "{steal}");
        assert!((iowait - 0.05).abs() < 1e-12, "{iowait}");
        assert_eq!(a.shares_until(&a), None);
        // An old kernel without steal; a broken line.
        assert_eq!(CpuTicks::parse("cpu  1 2 3 4 5\n").unwrap().steal, 0);
        assert_eq!(CpuTicks::parse("cpu  1 2 x 4 5\n"), None);
        assert_eq!(CpuTicks::parse("intr 5\n"), None);
    }

    #[test]
    fn the_median_of_odd_and_even_counts_leaves_out_what_is_not_finite() {
        assert_eq!(median([3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median([f64::NAN, 4.0, f64::INFINITY, 2.0]), Some(3.0));
        assert_eq!(median([f64::NAN]), None);
        assert_eq!(median(Vec::new()), None);
    }

    #[test]
    fn the_median_probe_takes_each_figure_apart_and_skips_missing_ones() {
        let p = |cpu: f64, fsync: Option<f64>| HostProbe {
            cpu_ns_per_iteration: Some(cpu),
            fsync_us: fsync,
            ..HostProbe::default()
        };
        let probes = [p(1.0, None), p(3.0, Some(100.0)), p(2.0, Some(300.0))];
        let m = median_probe(&probes.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(m.cpu_ns_per_iteration, Some(2.0));
        assert_eq!(m.fsync_us, Some(200.0));
        assert_eq!(m.memory_ns_per_access, None);
        assert_eq!(median_probe(&[]), None);
        let step = StepHost {
            before: Some(p(1.0, None)),
            after: Some(p(3.0, None)),
            ..StepHost::default()
        };
        assert_eq!(step.best(ProbeFigure::Cpu), Some(1.0));
        assert_eq!(step.best(ProbeFigure::Fsync), None);
    }
}
