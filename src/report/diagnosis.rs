//! Diagnosis: for every relative throughput outside the noise band, which per-op figures moved
//! with it and by how much, ordered by how much of the change each could account for.
//!
//! A step's throughput falling to `r` of the base means each operation took `1/r` as long; a
//! per-op cost that grew by `k` (server CPU per op, KB written per inserted row, ...) could
//! account for `ln k / ln(1/r)` of that change (1 = all of it). A CPU time per op is weighed by
//! the time it adds: `(v - v_base) / (t - t_base)`, `t` being each connection's time per
//! operation (clients / throughput), and it is never named when it is a negligible share of
//! `t` in both runs (ibench's own CPU in an index build). Figures that moved by less than the
//! noise band, or against the change, are left out; when none is left, the diagnosis says
//! plainly that nothing measured explains it. When the runs' setups differ (clients, a
//! setting, the host), the diagnosis names that first (`report::setup`).

use serde::Serialize;

use super::differs::{Area, Difference, RunSetup, SetupDifferences, names_text};
use super::load::LoadedRun;
use crate::results::metrics::{METRICS, Metric};
use crate::results::{Status, StepRecord};
use crate::workload::steps::StepName;

/// The threshold of a change, percent: the reports' ±5% band (painting, the diagnoses) and
/// `ibench check`'s default `--threshold`, written here once.
pub const THRESHOLD_PCT: f64 = 5.0;

/// Default half-width of the noise band: relative throughputs within ±5% are not diagnosed,
/// and a per-op figure must move by more than 5% to be named ([`THRESHOLD_PCT`] as a
/// fraction).
pub const NOISE_BAND: f64 = THRESHOLD_PCT / 100.0;

/// The relative throughputs that are noise, not a change: `low ..= high`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NoiseBand {
    /// Lowest relative throughput that is still noise.
    pub low: f64,
    /// Highest relative throughput that is still noise.
    pub high: f64,
}

impl NoiseBand {
    /// `1 ± half_width`.
    pub fn around_one(half_width: f64) -> NoiseBand {
        NoiseBand {
            low: 1.0 - half_width,
            high: 1.0 + half_width,
        }
    }

    /// The default band, ±5%.
    pub fn default_band() -> NoiseBand {
        NoiseBand::around_one(NOISE_BAND)
    }

    /// Whether `relative` lies inside the band.
    pub fn contains(&self, relative: f64) -> bool {
        relative >= self.low && relative <= self.high
    }
}

/// A run's own noise band per step: its throughput's spread over its repeats (min / median
/// ..= max / median), in a matrix report. Empty: the run has no repeats, every step takes
/// the default band.
/// With it, each step's throughput over the repeats as the decision rule takes it
/// (`stats::decision::Evidence`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepBands(
    Vec<(StepName, NoiseBand)>,
    Vec<(StepName, crate::stats::decision::Evidence)>,
);

impl StepBands {
    /// The bands of the steps that have one.
    pub fn new(bands: Vec<(StepName, NoiseBand)>) -> StepBands {
        StepBands(bands, Vec::new())
    }

    /// With each step's throughput over the repeats.
    pub fn with_repeats(
        mut self,
        repeats: Vec<(StepName, crate::stats::decision::Evidence)>,
    ) -> StepBands {
        self.1 = repeats;
        self
    }

    /// The step's throughput over the repeats, when known.
    pub fn repeats(&self, step: StepName) -> Option<&crate::stats::decision::Evidence> {
        self.1.iter().find(|(n, _)| *n == step).map(|(_, e)| e)
    }

    /// The repeats behind the bands: the most values any step's throughput holds; 1 when
    /// no step has repeats.
    pub fn repeat_count(&self) -> usize {
        self.1
            .iter()
            .map(|(_, e)| e.values.len())
            .max()
            .unwrap_or(1)
    }

    /// The step's own band, when it has one.
    pub fn own(&self, step: StepName) -> Option<NoiseBand> {
        self.0.iter().find(|(n, _)| *n == step).map(|(_, b)| *b)
    }

    /// The step's band: its own, else the default.
    pub fn of(&self, step: StepName) -> NoiseBand {
        self.own(step).unwrap_or_else(NoiseBand::default_band)
    }
}

/// One figure that moved with the throughput.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Mover {
    /// The figure's name in run.json (`cpupq`, `wkbpi`, ...).
    pub figure: String,
    /// What it is, for people.
    pub meaning: String,
    /// Its value in the run divided by the base's.
    pub ratio: f64,
    /// How much of the throughput change it could account for (1 = all of it).
    pub share: f64,
}

/// The diagnosis of one step of one run against the base.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Diagnosis {
    /// The step.
    pub step: StepName,
    /// The run's label.
    pub run: String,
    /// Its throughput relative to the base.
    pub relative: f64,
    /// The figures that moved with it, the one that accounts for most first.
    pub movers: Vec<Mover>,
    /// When the run and the base are the same DBMS major but their builds differ in flags:
    /// `-Os, no lz4 vs the base's -O2, lz4`. A cause in itself.
    #[serde(default)]
    pub build: Option<String>,
    /// When the step is host-affected (`report::host`): why (`host probe CPU ns/iter ×1.52 of
    /// the base's`). The host is then the first candidate explanation, before the per-op
    /// figures.
    #[serde(default)]
    pub host: Option<String>,
    /// When the run's setup differs from the base's outside the DBMS and its build (ibench's
    /// options, the server's settings, the host): what differs (`--clients 1 → 16: 8.00x in
    /// total is 0.50x per client`). The setup is then the first candidate explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
}

impl Diagnosis {
    /// One line: `l.i1 0.82 (PG 17): server CPU/op ×1.21, KB written/row ×1.40`.
    pub fn line(&self) -> String {
        self.line_for(&self.run)
    }

    /// The line with the run named `name` (its short key in a report).
    pub fn line_for(&self, name: &str) -> String {
        let mut head = format!("{} {:.2} ({name})", self.step, self.relative);
        if let Some(b) = &self.build {
            head.push_str(&format!(" [same major, other build flags: {b}]"));
        }
        if let Some(s) = &self.setup {
            // The diagnosis's lead names each run's setup once; a line only points to it,
            // with what is the step's own (its throughput per client).
            match s
                .rsplit_once(": ")
                .filter(|(_, p)| p.ends_with(" per client"))
            {
                Some((_, per_client)) => {
                    head.push_str(&format!(" [the setup above: {per_client}]"));
                }
                None => head.push_str(" [the setup above]"),
            }
        }
        if let Some(h) = &self.host {
            head.push_str(&format!(" [the host first: {h}]"));
        }
        if self.movers.is_empty() {
            if self.setup.is_some() {
                return format!(
                    "{head}: no per-op figure moved; the setup difference is the candidate"
                );
            }
            return format!("{head}: nothing measured explains it (no per-op figure moved)");
        }
        let parts: Vec<String> = self
            .movers
            .iter()
            .map(|m| format!("{} ×{:.2}", m.meaning, m.ratio))
            .collect();
        let most = self.movers.iter().map(|m| m.share).fold(0.0, f64::max);
        if most < 0.5 && self.setup.is_some() {
            return format!(
                "{head}: {}; the largest accounts for {:.0}% of the change: most of it is not work measured per op, and the setup difference is the candidate",
                parts.join(", "),
                most * 100.0
            );
        }
        if most < 0.5 {
            // Per-op work explains little: the time went to waiting (locks, fsync, a delay).
            return format!(
                "{head}: {}; the largest accounts for {:.0}% of the change: most of it is not work measured per op (waiting?)",
                parts.join(", "),
                most * 100.0
            );
        }
        format!("{head}: {}", parts.join(", "))
    }
}

/// Per-op figures that are CPU time in µs per op: their share of the change is the time they
/// add to each operation, against the time each operation took longer.
pub const CPU_TIME_FIGURES: &[&str] = &["cpupq", "ccpupq", "hcpupq"];

/// A CPU figure below this share of each connection's time per operation, in the run and in
/// the base, is never named as what moved: its ratio is noise (ibench's CPU per row of an
/// index build is a few system calls).
pub const NEGLIGIBLE_COST_SHARE: f64 = 0.05;

/// What one operation cost in the step and in the base's: enough to weigh a per-op figure's
/// change against the throughput's.
struct OpCost {
    /// ln(1/relative): the per-op cost change the throughput change implies.
    implied: f64,
    /// µs of one connection's time per operation, run and base (clients / throughput).
    time_us: Option<(f64, f64)>,
}

impl OpCost {
    fn of(step: &StepRecord, base: &StepRecord, relative: f64) -> OpCost {
        let per_op = |s: &StepRecord| f64::from(s.clients.max(1)) * 1e6 / s.throughput;
        OpCost {
            implied: -relative.ln(),
            time_us: Some((per_op(step), per_op(base)))
                .filter(|(t, bt)| t.is_finite() && bt.is_finite() && (t - bt).abs() > 0.0),
        }
    }

    /// The figure as a mover when it moved beyond the noise in the direction that explains
    /// the change. A CPU time per op is weighed by the time it adds to each operation (and
    /// left out when it is a negligible share of it); any other figure by its ratio against
    /// the throughput's.
    fn mover(&self, name: &str, meaning: String, v: f64, bv: f64) -> Option<Mover> {
        if bv <= 0.0 || v <= 0.0 {
            return None;
        }
        let ratio = v / bv;
        let share = match self.time_us {
            Some((t, bt)) if CPU_TIME_FIGURES.contains(&name) => {
                if v / t < NEGLIGIBLE_COST_SHARE && bv / bt < NEGLIGIBLE_COST_SHARE {
                    return None;
                }
                (v - bv) / (t - bt)
            }
            _ => ratio.ln() / self.implied,
        };
        ((ratio - 1.0).abs() > NOISE_BAND && share > 0.0).then(|| Mover {
            figure: name.to_string(),
            meaning,
            ratio,
            share,
        })
    }
}

/// Diagnose one step of one run against the same step of the base, when its relative
/// throughput lies outside `band`; a per-op figure is named when it moved by more than 5%,
/// ranked by its share of the change (a CPU time by the time it adds to each operation).
pub fn diagnose(
    run_label: &str,
    step: &StepRecord,
    base: &StepRecord,
    band: NoiseBand,
) -> Option<Diagnosis> {
    if base.throughput <= 0.0 || step.throughput <= 0.0 {
        return None;
    }
    let relative = step.throughput / base.throughput;
    if band.contains(relative) {
        return None;
    }
    let (m, b) = (step.metrics.as_ref()?, base.metrics.as_ref()?);
    let cost = OpCost::of(step, base, relative);
    let mut movers: Vec<Mover> = METRICS
        .iter()
        .filter(|d| d.shown.diagnosis)
        .filter_map(|d| {
            cost.mover(
                d.name,
                d.short.to_string(),
                (d.get)(m).value()?,
                (d.get)(b).value()?,
            )
        })
        .collect();
    // perf's counters per op (`--perf`), ranked with the other per-op costs.
    if let (Some(p), Some(bp)) = (&m.perf, &b.perf) {
        for (event, v) in &p.per_op {
            if let (Some(v), Some(bv)) = (v.value(), bp.per_op.get(event).and_then(Metric::value)) {
                movers.extend(cost.mover(event, format!("{event}/op"), v, bv));
            }
        }
    }
    movers.sort_by(|a, b| b.share.total_cmp(&a.share));
    Some(Diagnosis {
        step: step.name,
        run: run_label.to_string(),
        relative,
        movers,
        build: None,
        host: None,
        setup: None,
    })
}

/// The DBMS and major version of a target (`PostgreSQL 15`, `MariaDB 10.11`): runs of one
/// family differ only by patch releases, builds and configs.
pub fn version_family(dbms: &str, version: &str) -> String {
    let parts: Vec<&str> = version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .collect();
    // PostgreSQL numbers its majors with one figure from 10 on; the MySQL family with two.
    let n = if dbms == "PostgreSQL" && parts.first().is_some_and(|p| p.len() > 1) {
        1
    } else {
        2
    };
    format!(
        "{dbms} {}",
        parts.iter().take(n).copied().collect::<Vec<_>>().join(".")
    )
}

/// The diagnosis of every step of every run against the base, where its relative throughput
/// lies outside the step's noise band (`noise`); steps that did not complete are left out.
pub(super) fn diagnoses(
    runs: &[LoadedRun],
    base: usize,
    steps: &[StepName],
    host: &super::host::HostView,
    noise: &StepBands,
    differences: &[RunSetup],
) -> Vec<super::diagnosis::Diagnosis> {
    let mut out = Vec::new();
    for &step in steps {
        let Some(b) = runs.get(base).and_then(|r| r.record.step(step)) else {
            continue;
        };
        for (i, run) in runs.iter().enumerate() {
            if i == base {
                continue;
            }
            if let Some(s) = run.record.step(step)
                && s.status == Status::Completed
                && b.status == Status::Completed
                && let Some(mut d) = super::diagnosis::diagnose(&run.label, s, b, noise.of(step))
            {
                d.build = build_difference(run, &runs[base]);
                d.host = host.flag(step, &run.label).map(|f| f.reasons.join("; "));
                d.setup = differences
                    .iter()
                    .find(|x| x.run == run.label)
                    .and_then(|x| diagnosis_note(&x.setup, s, b));
                out.push(d);
            }
        }
    }
    out
}

/// `-Os, no lz4 vs the base's -O2, lz4` when `run` and `base` are one DBMS major whose
/// builds differ in flags.
fn build_difference(run: &LoadedRun, base: &LoadedRun) -> Option<String> {
    let family = |r: &LoadedRun| {
        r.record
            .target
            .as_ref()
            .map(|t| super::diagnosis::version_family(&t.dbms, &t.version))
    };
    let flags = |r: &LoadedRun| {
        r.record
            .build
            .as_ref()
            .and_then(crate::results::target::BuildFacts::flags_summary)
    };
    let (f, bf) = (flags(run)?, flags(base)?);
    (f != bf && family(run)? == family(base)?).then(|| format!("{f} vs the base's {bf}"))
}

/// Most differences a diagnosis line names before "and N more".
pub(super) const DIAGNOSIS_NAMES: usize = 3;

/// The differences a diagnosis names before any per-op figure: ibench's options, the host and
/// the server's settings (the DBMS and its build are what a comparison of versions or builds
/// means to vary; the build has its own note). The steps a run ran are not among them: they
/// do not change a step's figures; nor a setting that follows from another named (its cause
/// says it).
pub(super) fn diagnosis_differences(s: &SetupDifferences) -> Vec<&Difference> {
    s.causes()
        .filter(|d| matches!(d.area, Area::Options | Area::Host | Area::Settings))
        .filter(|d| d.name != "--steps")
        .collect()
}

/// The ratio of a step's clients to the base step's, when they differ.
fn clients_ratio(s: &StepRecord, b: &StepRecord) -> Option<f64> {
    (s.clients != b.clients && s.clients > 0 && b.clients > 0)
        .then(|| f64::from(s.clients) / f64::from(b.clients))
}

/// The setup a diagnosis names first: `--clients 1 → 16: 8.00x in total is 0.50x per client`,
/// or the settings and options that differ; `None` when the runs are alike.
pub fn diagnosis_note(
    s: &SetupDifferences,
    step: &StepRecord,
    base: &StepRecord,
) -> Option<String> {
    let diffs = diagnosis_differences(s);
    if diffs.is_empty() {
        return None;
    }
    let mut text = names_text(&diffs, DIAGNOSIS_NAMES);
    if let Some(ratio) = clients_ratio(step, base)
        && base.throughput > 0.0
    {
        let rel = step.throughput / base.throughput;
        text.push_str(&format!(
            ": {rel:.2}x in total is {:.2}x per client",
            rel / ratio
        ));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(throughput: f64, cpupq: f64, wkbpi: f64, cspq: f64) -> StepRecord {
        let mut s: StepRecord = serde_json::from_value(serde_json::json!({
            "name": "l.i1", "status": "completed", "error": null,
            "started_at": "x", "ended_at": "x", "seconds": 1.0, "clients": 1,
            "throughput": throughput, "throughput_unit": "inserted rows/s", "ops": {},
            "rate_p50": null, "rate_p1low": null, "client_cpu_seconds": 0.0,
            "client_cpu_us_per_op": null, "sla": null, "settle": null, "integrity": null,
            "metrics": null
        }))
        .unwrap();
        let na = || serde_json::json!({"na": "x"});
        let v = |x: f64| serde_json::json!({"value": x});
        let totals = serde_json::json!({
            "seconds": 1.0, "server_cpu_seconds": na(), "host_cpu_seconds": na(),
            "client_cpu_seconds": na(), "context_switches": na(), "device_reads": na(),
            "device_read_bytes": na(), "device_writes": na(), "device_write_bytes": na(),
            "server_read_bytes": na(), "server_write_bytes": na(), "server_memory_max_bytes": na()
        });
        s.metrics = Some(
            serde_json::from_value(serde_json::json!({
                "op": "inserted row", "ops": 1, "inserted_rows": 1,
                "cpupq": v(cpupq), "ccpupq": na(), "hcpupq": na(), "rpq": na(), "rkbpq": na(),
                "wpi": na(), "wkbpi": v(wkbpi), "csps": na(), "cspq": v(cspq), "dbgb1": na(),
                "dbgb2": na(), "rss": na(), "maxop": na(), "p50": na(), "p1low": na(),
                "totals": totals, "db_size": null, "stats_file": {"na": "x"}, "perf": null
            }))
            .unwrap(),
        );
        s
    }

    #[test]
    fn the_figure_that_accounts_for_the_change_comes_first() {
        // 1,000 µs of server CPU per op at 1,000 ops/s on one client: all of the time.
        let base = step(1000.0, 1000.0, 2.0, 1.0);
        // 0.80 of the base: 1.25× the time per op. CPU ×1.25 explains all of it, KB written
        // ×1.10 some, context switches ×0.9 moved the other way and are left out.
        let run = step(800.0, 1250.0, 2.2, 0.9);
        let d = diagnose("slow", &run, &base, NoiseBand::default_band()).unwrap();
        assert!((d.relative - 0.8).abs() < 1e-9);
        let names: Vec<&str> = d.movers.iter().map(|m| m.figure.as_str()).collect();
        assert_eq!(names, ["cpupq", "wkbpi"]);
        assert!((d.movers[0].share - 1.0).abs() < 1e-9);
        assert_eq!(
            d.line(),
            "l.i1 0.80 (slow): server CPU/op ×1.25, KB written/row ×1.10"
        );
    }

    #[test]
    fn a_cpu_time_is_weighed_by_the_time_it_adds_and_a_negligible_one_is_never_named() {
        // Server CPU 100 µs of a 1,000 µs op, up ×1.5 as the op took twice as long: it adds 50
        // µs of the 1,000, 5% of the change, behind KB written ×1.4 (ln 1.4 / ln 2 = 49%).
        let base = step(1000.0, 100.0, 2.0, 1.0);
        let d = diagnose(
            "r",
            &step(500.0, 150.0, 2.8, 1.0),
            &base,
            NoiseBand::default_band(),
        )
        .unwrap();
        let names: Vec<&str> = d.movers.iter().map(|m| m.figure.as_str()).collect();
        assert_eq!(names, ["wkbpi", "cpupq"], "{d:?}");
        assert!((d.movers[1].share - 0.05).abs() < 1e-9, "{d:?}");
        // 1 µs of a 1,000 µs op (0.1%) that doubled: never named, whatever its ratio.
        let base = step(1000.0, 1.0, 2.0, 1.0);
        let d = diagnose(
            "r",
            &step(500.0, 2.0, 2.0, 1.0),
            &base,
            NoiseBand::default_band(),
        )
        .unwrap();
        assert!(d.movers.is_empty(), "{d:?}");
    }

    #[test]
    fn within_the_noise_band_nothing_is_diagnosed_and_unexplained_changes_say_so() {
        let base = step(1000.0, 100.0, 2.0, 1.0);
        assert!(
            diagnose(
                "same",
                &step(1030.0, 140.0, 2.0, 1.0),
                &base,
                NoiseBand::default_band()
            )
            .is_none()
        );
        let d = diagnose(
            "waits",
            &step(500.0, 101.0, 2.01, 1.0),
            &base,
            NoiseBand::default_band(),
        )
        .unwrap();
        assert!(d.movers.is_empty());
        assert!(
            d.line().contains("nothing measured explains it"),
            "{}",
            d.line()
        );
        let d = diagnose(
            "partly",
            &step(500.0, 110.0, 2.0, 1.0),
            &base,
            NoiseBand::default_band(),
        )
        .unwrap();
        assert!(
            d.line().contains("most of it is not work measured per op"),
            "{}",
            d.line()
        );
    }

    #[test]
    fn the_dbms_counters_are_candidates_and_wal_per_row_can_come_first() {
        let with_wal = |throughput: f64, cpupq: f64, walbpi: f64| {
            let mut s = step(throughput, cpupq, 2.0, 1.0);
            if let Some(m) = s.metrics.as_mut() {
                m.dbms.walbpi = Metric::Value(walbpi);
            }
            s
        };
        // wal_compression off against on: 0.8 of the throughput, WAL bytes per row ×2, the
        // server's CPU per op ×1.1.
        let base = with_wal(1000.0, 100.0, 300.0);
        let run = with_wal(800.0, 110.0, 600.0);
        let d = diagnose("off", &run, &base, NoiseBand::default_band()).unwrap();
        let names: Vec<&str> = d.movers.iter().map(|m| m.figure.as_str()).collect();
        assert_eq!(names, ["walbpi", "cpupq"]);
        assert!(d.line().contains("WAL bytes/row ×2.00"), "{}", d.line());
    }

    #[test]
    fn a_band_from_the_spread_of_repeats_replaces_the_default() {
        let base = step(1000.0, 100.0, 2.0, 1.0);
        let run = step(900.0, 112.0, 2.0, 1.0);
        assert!(diagnose("r", &run, &base, NoiseBand::default_band()).is_some());
        let wide = NoiseBand {
            low: 0.85,
            high: 1.10,
        };
        assert!(diagnose("r", &run, &base, wide).is_none());
        let narrow = NoiseBand {
            low: 0.99,
            high: 1.01,
        };
        let d = diagnose("r", &step(970.0, 103.2, 2.0, 1.0), &base, narrow).unwrap();
        // 3% slower with a 1% spread is a change; CPU moved by 3.2%, under the 5% a figure
        // must move to be named, so nothing measured explains it.
        assert!(d.movers.is_empty(), "{d:?}");
    }
}
