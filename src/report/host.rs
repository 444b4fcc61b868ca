//! The host screening: was it the DBMS or the host? The host's speed as the runs recorded
//! it, compared with the base's, and the steps whose figures the host may have moved.
//!
//! Four signals, each checked against a threshold above its own noise:
//! - **the host probe** (`--host-probe-ms`): a figure of a run's probes (the median over the
//!   run, or the best of a step's before and after) differs from the base's by more than the
//!   figure's [`HostThresholds`]; or it moved that much between the steps of one run. (Before
//!   against after within one step is not a verdict: the probe after a step also meets what
//!   the step left behind, such as its writeback.)
//! - **steal**: the hypervisor took more than [`STEAL_SHARE`] of the host's CPU time in a step;
//! - **the per-second rate jumped** within a query step or a timed microbenchmark, whose rate
//!   has no reason to move: it ran [`super::shift::SHIFT_FACTOR`] times slower for a stretch
//!   (`report::shift`), unless that module tells it was the DBMS (the server's CPU per op rose
//!   while the client's and the probe held);
//! - **the client's CPU per operation** moved by [`CLIENT_CPU_RATIO`] or more against the
//!   base's: ibench's client does the same work per operation for every server of one setup
//!   (not for SQLite, whose engine runs inside the client). Only between steps of one shape
//!   (the same clients, shared table and rows per insert: otherwise the step is "not
//!   compared" on this signal), and not alone: a client that waits longer for each commit
//!   spends more CPU per op waking up, so when the runs hold a probe, the verdict needs the
//!   probe, steal or the other processes' CPU to agree; otherwise it is "unclear", with the
//!   figures, and not flagged.
//!
//! The last two need nothing but what every run records, so runs made before the probe existed
//! are checked too.

use serde::Serialize;

use super::differs::Area;
use super::load::LoadedRun;
use super::shift::StepShift;
use crate::results::StepRecord;
use crate::results::probe::{HostProbe, ProbeFigure, StepHost, median_probe, run_probes};
use crate::results::target::TargetInfo;
use crate::workload::steps::StepName;

pub use crate::results::probe::{HostThresholds, THRESHOLDS};

/// A step whose steal share is above this is host-affected.
pub const STEAL_SHARE: f64 = 0.05;

/// Whether a step runs for a fixed time with every connection busy throughout (the query
/// steps and the timed microbenchmarks), so its rate has no reason to move: a load step's rate
/// falls as its tables grow and its tail thins out as clients finish.
fn steady(s: &StepRecord) -> bool {
    matches!(s.name, crate::workload::steps::StepName::Query { .. })
        || (s.name.is_micro() && s.main_op() == crate::stats::OpKind::Micro)
}

/// A client CPU per operation this many times the base's (or its inverse) is the host's.
pub const CLIENT_CPU_RATIO: f64 = 1.5;

/// One run's host, as the report's table shows it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostRow {
    /// The run's label.
    pub run: String,
    /// Median of each probe figure over the run's probes ([`ProbeFigure::ALL`] order); `None`
    /// without the probe.
    pub figures: Vec<Option<f64>>,
    /// Each figure divided by the base's.
    pub relative: Vec<Option<f64>>,
    /// Median CPU MHz of the probes.
    pub cpu_mhz: Option<f64>,
    /// Largest steal share of a step (0..1).
    pub steal_share_max: Option<f64>,
    /// Largest iowait share of a step (0..1).
    pub iowait_share_max: Option<f64>,
    /// Probes the run holds.
    pub probes: usize,
    /// Whether its probes and the base's show the host steady across both runs
    /// (`results::probe::steady_between`): only then does one run a side decide a rate.
    #[serde(skip)]
    pub steady_with_base: bool,
    /// Whether it and the base were both a duet's sides (run.json's `duet`): they met the
    /// same host in the same seconds, so its rates are not held to the host flags
    /// (`report::paint`).
    #[serde(skip)]
    pub duet_with_base: bool,
}

/// A step of a run whose figures the host may have moved.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostFlag {
    /// The step.
    pub step: StepName,
    /// The run's label.
    pub run: String,
    /// What says so, one short phrase each: `CPU ns/iter ×1.52 of the base's`.
    pub reasons: Vec<String>,
}

/// A warning about one run's host.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostWarning {
    /// The run's label.
    pub run: String,
    /// What differs, by how much.
    pub text: String,
}

/// The host part of a comparison.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostView {
    /// Per run, in order.
    pub rows: Vec<HostRow>,
    /// Runs whose host differs from the base's, or moved within the run.
    pub warnings: Vec<HostWarning>,
    /// Host-affected steps of runs.
    pub flags: Vec<HostFlag>,
    /// Steps whose client CPU per op moved while nothing else said the host did: not
    /// flagged, the figures given (`reasons` holds one line).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unclear: Vec<HostFlag>,
    /// Steps whose client CPU per op was not compared with the base's: a different shape
    /// (clients, shared table, rows per insert), so the client's work per op differs
    /// (`reasons` holds why).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<HostFlag>,
    /// The thresholds used.
    pub thresholds: HostThresholds,
}

impl HostView {
    /// The reasons `step` of run `label` is host-affected, or `None` when it is not.
    pub fn flag(&self, step: StepName, label: &str) -> Option<&HostFlag> {
        self.flags.iter().find(|f| f.step == step && f.run == label)
    }

    /// Whether the host probes show the host steady between run `label` and the base.
    pub fn steady(&self, label: &str) -> bool {
        self.rows
            .iter()
            .any(|r| r.run == label && r.steady_with_base)
    }

    /// Whether run `label` and the base were both a duet's sides.
    pub fn duet(&self, label: &str) -> bool {
        self.rows.iter().any(|r| r.run == label && r.duet_with_base)
    }

    /// Whether flag `f` holds its run's relative throughput (grey, `~`): not when the run and
    /// the base were a duet's sides (`stats::decision::duet_waives_host_flags`, the rule of
    /// `ibench check`); work per op it holds all the same.
    pub fn holds_rate(&self, f: &HostFlag) -> bool {
        let rate = crate::stats::decision::FigureKind::Rate;
        !(self.duet(&f.run) && crate::stats::decision::duet_waives_host_flags(rate).is_some())
    }

    /// Whether any run holds a probe (the table is shown then).
    pub fn probed(&self) -> bool {
        self.rows.iter().any(|r| r.probes > 0)
    }
}

/// The ratio of `v` to `base` when it lies beyond `threshold` either way.
pub fn beyond(v: f64, base: f64, threshold: f64) -> Option<f64> {
    if !(v > 0.0 && base > 0.0) {
        return None;
    }
    let ratio = v / base;
    (ratio.max(1.0 / ratio) - 1.0 > threshold).then_some(ratio)
}

/// `CPU ns/iter ×1.52, memory ns/access ×1.31`: the figures of `probe` beyond the thresholds
/// against `base`.
fn probe_differences(probe: &HostProbe, base: &HostProbe, t: &HostThresholds) -> Vec<String> {
    ProbeFigure::ALL
        .iter()
        .filter_map(|&f| {
            let r = beyond(f.of(probe)?, f.of(base)?, t.of(f)?)?;
            Some(format!("{} ×{r:.2}", f.short()))
        })
        .collect()
}

/// The best (smallest) of each figure over a step's probes, as one probe: one probe that met
/// a passing hiccup (a single slow fsync) does not make the step's host slow; a host slow
/// before and after the step does.
fn step_best(h: &StepHost) -> HostProbe {
    HostProbe {
        cpu_ns_per_iteration: h.best(ProbeFigure::Cpu),
        memory_ns_per_access: h.best(ProbeFigure::Memory),
        loopback_us_per_round_trip: h.best(ProbeFigure::Loopback),
        fsync_us: h.best(ProbeFigure::Fsync),
        ..HostProbe::default()
    }
}

/// The client's CPU µs per operation of a step's main op: the connections' own CPU when
/// recorded, else ibench's whole CPU per op.
fn client_cpu_us_per_op(step: &StepRecord) -> Option<f64> {
    let op = step.ops.get(step.main_op().name())?;
    if op.connection_cpu_seconds > 0.0 && op.ops > 0 {
        return Some(op.connection_cpu_seconds * 1e6 / crate::stats::convert::count_f64(op.ops));
    }
    step.client_cpu_us_per_op
}

/// Whether the client's CPU per op says something about the host: not for SQLite, whose
/// engine runs inside the client.
fn client_is_only_the_client(run: &LoadedRun) -> bool {
    run.record
        .target
        .as_ref()
        .is_some_and(|t| !crate::backend::descriptor_of_kind(t.backend).embedded)
}

/// What one step of one run says of its host against the base's same step.
#[derive(Default)]
struct StepVerdict {
    /// Why the step is host-affected (none: it is not).
    reasons: Vec<String>,
    /// The client's CPU per op moved but nothing else says the host did: the figures.
    unclear: Option<String>,
    /// Why the client's CPU per op was not compared: the step's shape differs.
    not_compared: Option<String>,
}

/// The other processes' CPU of a step, in cores: the host's CPU less the server's and
/// ibench's.
fn others_cores(s: &StepRecord) -> Option<f64> {
    let t = &s.metrics.as_ref()?.totals;
    let host = t.host_cpu_seconds.value()?;
    let own =
        t.server_cpu_seconds.value().unwrap_or(0.0) + t.client_cpu_seconds.value().unwrap_or(0.0);
    (t.seconds > 0.0).then(|| (host - own).max(0.0) / t.seconds)
}

/// `other processes 0.40 more cores than the base's` when the other processes' CPU moved
/// the way the client's CPU per op did (`slower`: the run's client took more per op) by
/// [`super::shift::OTHERS_CORES`] or more.
fn others_agree(s: &StepRecord, bs: &StepRecord, slower: bool) -> Option<String> {
    let (o, bo) = (others_cores(s)?, others_cores(bs)?);
    let more = if slower { o - bo } else { bo - o };
    (more >= super::shift::OTHERS_CORES).then(|| {
        let side = if slower { "the run's" } else { "the base's" };
        format!("other processes took {more:.2} more cores in {side} step")
    })
}

/// What the other signals of a step read against the base's, as an unclear verdict names
/// them: `the host probe read CPU ×1.01, memory ×1.03 (steal 0%); other processes 0.02 →
/// 0.03 cores`.
fn other_signals(s: &StepRecord, bs: &StepRecord) -> String {
    let mut parts = Vec::new();
    match (&s.host_probe, &bs.host_probe) {
        (Some(h), Some(bh)) => {
            let (p, bp) = (step_best(h), step_best(bh));
            let ratios: Vec<String> = [ProbeFigure::Cpu, ProbeFigure::Memory]
                .iter()
                .filter_map(|f| Some(format!("{} ×{:.2}", f.short(), f.of(&p)? / f.of(&bp)?)))
                .collect();
            let steal = h
                .steal_share
                .map_or(String::new(), |x| format!(" (steal {:.0}%)", x * 100.0));
            parts.push(format!("the host probe read {}{steal}", ratios.join(", ")));
        }
        _ => parts.push("the runs hold no host probe and their setups differ".into()),
    }
    if let (Some(o), Some(bo)) = (others_cores(s), others_cores(bs)) {
        parts.push(format!("other processes {bo:.2} → {o:.2} cores"));
    }
    parts.join("; ")
}

/// The verdict on one step of one run against the base's same step; `called` is what its
/// lines call the base's figures (`the base's`).
fn step_reasons(
    run: &LoadedRun,
    s: &StepRecord,
    base: Option<(&LoadedRun, &StepRecord)>,
    shifts: &[StepShift],
    alike: bool,
    called: &str,
) -> StepVerdict {
    let t = &THRESHOLDS;
    let mut v = StepVerdict::default();
    let reasons = &mut v.reasons;
    if let Some(h) = &s.host_probe {
        if let Some(steal) = h.steal_share.filter(|s| *s > STEAL_SHARE) {
            reasons.push(format!("steal {:.0}% of the CPU time", steal * 100.0));
        }
        if let Some(bh) = base.and_then(|(_, b)| b.host_probe.as_ref()) {
            let diff = probe_differences(&step_best(h), &step_best(bh), t);
            if !diff.is_empty() {
                reasons.push(format!("host probe {} of {called}", diff.join(", ")));
            }
        }
    }
    if steady(s)
        && let Some(shift) = shifts
            .iter()
            .find(|x| x.run == run.label && x.step == s.name)
        && shift.cause != super::shift::ShiftCause::Dbms
    {
        let second = if shift.slow_from_s == 0 {
            shift.slow_to_s
        } else {
            shift.slow_from_s
        };
        reasons.push(format!(
            "its per-second rate moved ×{:.1} around second {second}",
            shift.factor
        ));
    }
    if let Some((b, bs)) = base
        && client_is_only_the_client(run)
        && client_is_only_the_client(b)
        && let (Some(c), Some(bc)) = (client_cpu_us_per_op(s), client_cpu_us_per_op(bs))
        && let Some(r) = beyond(c, bc, CLIENT_CPU_RATIO - 1.0)
    {
        client_cpu_verdict(&mut v, (run, s), (b, bs), r, alike, called);
    }
    v
}

/// The client's CPU per op moved ×`r` against the base's: a host signal only between steps of
/// one shape (the same clients, shared table and rows per insert), and a verdict only when
/// the probe, steal or the other processes' CPU agree; or when the runs hold no probe and
/// their setups are `alike` (the same options, settings and host: runs recorded before the
/// probe existed, for which it is the only signal).
fn client_cpu_verdict(
    v: &mut StepVerdict,
    (run, s): (&LoadedRun, &StepRecord),
    (b, bs): (&LoadedRun, &StepRecord),
    r: f64,
    alike: bool,
    called: &str,
) {
    if let Some(why) = shape_difference(run, s, b, bs) {
        v.not_compared = Some(why);
        return;
    }
    let client = format!("client CPU/op ×{r:.2} of {called} (same client work per op)");
    let probed = s.host_probe.is_some() && bs.host_probe.is_some();
    if !v.reasons.is_empty() || (!probed && alike) {
        v.reasons.push(client);
    } else if let Some(others) = others_agree(s, bs, r > 1.0) {
        v.reasons.push(format!("{client}; {others}"));
    } else {
        v.unclear = Some(format!(
            "client CPU/op ×{r:.2} of {called}, but {}: unclear (the client's CPU per op also moves with the server's latency), not flagged",
            other_signals(s, bs)
        ));
    }
}

/// One run's row of the host table.
fn host_row(run: &LoadedRun, base: Option<&LoadedRun>, base_median: Option<&HostProbe>) -> HostRow {
    let probes = run_probes(&run.record.steps);
    let med = median_probe(&probes);
    let hosts = || {
        run.record
            .steps
            .iter()
            .filter_map(|s| s.host_probe.as_ref())
    };
    let max = |v: Vec<f64>| v.into_iter().reduce(f64::max);
    HostRow {
        run: run.label.clone(),
        figures: ProbeFigure::ALL
            .iter()
            .map(|f| med.as_ref().and_then(|m| f.of(m)))
            .collect(),
        relative: ProbeFigure::ALL
            .iter()
            .map(|f| Some(f.of(med.as_ref()?)? / f.of(base_median?)?))
            .collect(),
        cpu_mhz: med.as_ref().and_then(|m| m.cpu_mhz),
        steal_share_max: max(hosts().filter_map(|h| h.steal_share).collect()),
        iowait_share_max: max(hosts().filter_map(|h| h.iowait_share).collect()),
        probes: probes.len(),
        steady_with_base: base.is_some_and(|b| {
            crate::results::probe::steady_between(&b.record.steps, &run.record.steps)
        }),
        duet_with_base: base.is_some_and(|b| b.record.duet.is_some()) && run.record.duet.is_some(),
    }
}

/// The figures that moved beyond the thresholds between a run's steps, each step taken at its
/// best probe: `CPU ns/iter 2.10-3.40 (×1.62)`.
fn moved_within(run: &LoadedRun) -> Vec<String> {
    let best: Vec<HostProbe> = run
        .record
        .steps
        .iter()
        .filter_map(|s| s.host_probe.as_ref())
        .map(step_best)
        .collect();
    ProbeFigure::ALL
        .iter()
        .filter_map(|&f| {
            let v: Vec<f64> = best.iter().filter_map(|p| f.of(p)).collect();
            let lo = v.iter().copied().reduce(f64::min)?;
            let hi = v.iter().copied().reduce(f64::max)?;
            beyond(hi, lo, THRESHOLDS.of(f)?)
                .map(|r| format!("{} {lo:.2}-{hi:.2} (×{r:.2})", f.short()))
        })
        .collect()
}

/// The warnings about each run's host: slower or faster than the base's, or moving between
/// its steps.
fn host_warnings(
    runs: &[LoadedRun],
    base: usize,
    base_median: Option<&HostProbe>,
) -> Vec<HostWarning> {
    let mut warnings = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let own = median_probe(&run_probes(&run.record.steps));
        if i != base
            && let (Some(m), Some(bm)) = (&own, base_median)
        {
            let diff = probe_differences(m, bm, &THRESHOLDS);
            if !diff.is_empty() {
                let slower = ProbeFigure::Cpu.of(m).zip(ProbeFigure::Cpu.of(bm));
                let word = match slower {
                    Some((v, b)) if v > b => "slower than",
                    Some(_) => "faster than",
                    None => "different from",
                };
                warnings.push(HostWarning {
                    run: run.label.clone(),
                    text: format!(
                        "its host was {word} the base's: host probe {} (run median / base's); its relative figures may measure the host, not the DBMS",
                        diff.join(", ")
                    ),
                });
            }
        }
        let moved = moved_within(run);
        if !moved.is_empty() {
            warnings.push(HostWarning {
                run: run.label.clone(),
                text: format!(
                    "its host's speed moved between its steps: {} over its probes",
                    moved.join(", ")
                ),
            });
        }
    }
    warnings
}

/// The host view of `runs` against `runs[base]`, over `steps`; `shifts` are the runs'
/// slowdowns inside steps (`shift::shifts`), whose cause says whether a rate jump is the
/// host's. `called` is what the step lines call the figures of `runs[base]`: `the base's` in
/// a report; `ibench check` names the typical repeat it holds the others against.
pub fn host_view(
    runs: &[LoadedRun],
    base: usize,
    steps: &[StepName],
    shifts: &[StepShift],
    called: &str,
) -> HostView {
    let base_run = runs.get(base);
    let base_median = base_run.and_then(|b| median_probe(&run_probes(&b.record.steps)));
    let rows: Vec<HostRow> = runs
        .iter()
        .map(|r| host_row(r, base_run, base_median.as_ref()))
        .collect();
    let warnings = host_warnings(runs, base, base_median.as_ref());
    let mut flags = Vec::new();
    let (mut unclear, mut not_compared) = (Vec::new(), Vec::new());
    // Runs whose setup is the base's but for the DBMS, its build and ibench's version.
    let alike: Vec<bool> = runs
        .iter()
        .map(|r| {
            base_run.is_none_or(|b| {
                super::differs::setup_differences(b, r)
                    .differences
                    .iter()
                    .all(|d| matches!(d.area, Area::Dbms | Area::Build | Area::Ibench))
            })
        })
        .collect();
    for &step in steps {
        let base_step = base_run.and_then(|b| Some((b, b.record.step(step)?)));
        let base_reasons = base_step
            .map(|(b, s)| step_reasons(b, s, None, shifts, true, called).reasons)
            .unwrap_or_default();
        for (i, run) in runs.iter().enumerate() {
            let Some(s) = run.record.step(step) else {
                continue;
            };
            let mut reasons = if i == base {
                base_reasons.clone()
            } else {
                let v = step_reasons(run, s, base_step, shifts, alike[i], called);
                let note = |text: String| HostFlag {
                    step,
                    run: run.label.clone(),
                    reasons: vec![text],
                };
                unclear.extend(v.unclear.map(note));
                not_compared.extend(v.not_compared.map(note));
                v.reasons
            };
            if i != base && !base_reasons.is_empty() {
                reasons.push(format!("the base's step: {}", base_reasons.join("; ")));
            }
            if !reasons.is_empty() {
                flags.push(HostFlag {
                    step,
                    run: run.label.clone(),
                    reasons,
                });
            }
        }
    }
    HostView {
        rows,
        warnings,
        flags,
        unclear,
        not_compared,
        thresholds: THRESHOLDS,
    }
}

/// Share (0..1) as a percentage text, `n/a` when missing.
pub fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{:.1}%", v * 100.0))
}

/// How a step of a run differs in shape from the base's same step, as far as the client's
/// work per operation goes: the protocol its client speaks (the backend, TLS), its clients,
/// whether they share one table, and the rows each of its inserts writes. `None`: the same
/// shape (like for like).
pub fn shape_difference(
    run: &LoadedRun,
    step: &StepRecord,
    base: &LoadedRun,
    base_step: &StepRecord,
) -> Option<String> {
    let (o, bo) = (&run.record.options, &base.record.options);
    let mut parts = Vec::new();
    // The client's work per op is its protocol's: another wire client (PostgreSQL against
    // MySQL, or SQLite inside ibench) or TLS on one side only costs the client other CPU.
    let (t, bt) = (run.record.target.as_ref(), base.record.target.as_ref());
    let kind = |t: Option<&TargetInfo>| t.map(|t| t.backend);
    if kind(t) != kind(bt) {
        let name = |t: Option<&TargetInfo>| t.map_or("-".to_string(), |t| t.dbms.clone());
        parts.push(format!("the client's protocol {} → {}", name(bt), name(t)));
    }
    let tls = |t: Option<&TargetInfo>| t.and_then(|t| t.tls.as_ref()).is_some();
    if kind(t) == kind(bt) && tls(t) != tls(bt) {
        let on = |b: bool| if b { "on" } else { "off" };
        parts.push(format!("TLS {} → {}", on(tls(bt)), on(tls(t))));
    }
    if step.clients != base_step.clients {
        parts.push(format!(
            "--clients {} → {}",
            base_step.clients, step.clients
        ));
    }
    if o.shared_table != bo.shared_table {
        parts.push(format!(
            "--shared-table {} → {}",
            bo.shared_table, o.shared_table
        ));
    }
    let batch = |o: &crate::results::options::RunOptions| match step.name {
        StepName::LoadInitial => Some(("--load-batch", o.load_rows_per_insert)),
        StepName::InsertDelete1 => Some(("--i1-batch", o.i1_rows_per_insert)),
        StepName::InsertDelete2 => Some(("--i2-batch", o.i2_rows_per_insert)),
        StepName::Query { .. } => Some(("--query-batch", o.query_rows_per_insert)),
        _ => None,
    };
    if let (Some((flag, v)), Some((_, bv))) = (batch(o), batch(bo))
        && v != bv
    {
        parts.push(format!("{flag} {bv} → {v}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 12-run report of MariaDB, PostgreSQL 10-18 and SQLite read the client's CPU per op
    /// of a PostgreSQL step against the MariaDB base's as "same client work per op".
    #[test]
    fn another_protocol_or_tls_on_one_side_is_another_shape() {
        let dir =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let base = super::super::load::load_runs(&[dir]).0.remove(0);
        let step = &base.record.steps[0];
        assert_eq!(shape_difference(&base, step, &base, step), None);
        let mut sqlite = base.clone();
        if let Some(t) = sqlite.record.target.as_mut() {
            t.backend = crate::results::target::BackendKind::Sqlite;
            t.dbms = "SQLite".into();
        }
        let why = shape_difference(&sqlite, step, &base, step).unwrap_or_default();
        assert_eq!(why, "the client's protocol PostgreSQL → SQLite");
        let mut tls = base.clone();
        if let Some(t) = tls.record.target.as_mut() {
            t.tls = Some(crate::results::target::TlsInfo {
                version: "TLSv1.3".into(),
                cipher: "TLS13_AES_256_GCM_SHA384".into(),
            });
        }
        let why = shape_difference(&tls, step, &base, step).unwrap_or_default();
        assert_eq!(why, "TLS off → on");
    }

    #[test]
    fn a_figure_is_beyond_its_threshold_either_way() {
        assert_eq!(beyond(1.2, 1.0, 0.15), Some(1.2));
        assert_eq!(THRESHOLDS.of(ProbeFigure::Fsync), None);
        assert_eq!(beyond(1.0, 1.2, 0.15), Some(1.0 / 1.2));
        assert_eq!(beyond(1.1, 1.0, 0.15), None);
        assert_eq!(beyond(1.0 / 1.1, 1.0, 0.15), None);
        assert_eq!(beyond(0.0, 1.0, 0.15), None);
        let base = HostProbe {
            cpu_ns_per_iteration: Some(2.0),
            fsync_us: Some(100.0),
            ..HostProbe::default()
        };
        // CPU 1.5x slower is named; fsync makes no verdict.
        let slow = HostProbe {
            cpu_ns_per_iteration: Some(3.0),
            fsync_us: Some(200.0),
            ..HostProbe::default()
        };
        assert_eq!(
            probe_differences(&slow, &base, &THRESHOLDS),
            vec!["CPU ns/iter ×1.50".to_string()]
        );
        assert!(probe_differences(&base, &base, &THRESHOLDS).is_empty());
    }
}
