//! Everything about one step across the runs: the latency distribution of each op kind, the
//! step's figures and their ratios to the base, the hardware counters per operation
//! (`--perf`) and the server's CPU profile.

use super::load::LoadedRun;
use super::model::{LatencyRow, MetricRow, StepDetail};
use super::tables::has_background_writers;
use crate::results::StepRecord;
use crate::results::metrics::{METRICS, Metric, ProfileRecord, Source};
use crate::stats::OpKind;
use crate::stats::convert::count_f64;
use crate::workload::steps::StepName;

pub(super) fn step_detail(runs: &[LoadedRun], base: usize, name: StepName) -> StepDetail {
    let records: Vec<Option<&StepRecord>> = runs.iter().map(|r| r.record.step(name)).collect();
    let main = records
        .iter()
        .flatten()
        .next()
        .map_or_else(|| name.main_op(), |s| s.main_op());
    let mut kinds = vec![main];
    if records.iter().flatten().any(|s| has_background_writers(s)) {
        kinds.push(OpKind::Insert);
    }
    let latency = kinds
        .iter()
        .map(|k| (k.name().to_string(), latency_rows(runs, &records, *k)))
        .collect();

    let row =
        |name: &str, meaning: &str, lower: Option<bool>, f: &dyn Fn(&StepRecord) -> Option<f64>| {
            figure_row(&records, base, name, meaning, lower, f)
        };
    let metrics = step_figures(&records, &row);
    let profiles = runs
        .iter()
        .zip(&records)
        .filter_map(|(r, s)| {
            let p = (*s)?.metrics.as_ref()?.profile.as_ref()?;
            Some((r.label.clone(), p.clone()))
        })
        .collect();
    let (counters, counters_na) = counter_rows(&records, &row);
    StepDetail {
        step: name,
        unit: records
            .iter()
            .flatten()
            .next()
            .map(|s| s.throughput_unit.to_string())
            .unwrap_or_default(),
        latency,
        metrics,
        counters,
        counters_na,
        profiles,
    }
}

/// Makes a step's figure row from its name, meaning, direction and how to read it from a step.
type MakeRow<'a> =
    dyn Fn(&str, &str, Option<bool>, &dyn Fn(&StepRecord) -> Option<f64>) -> MetricRow + 'a;

/// One figure of a step in every run, and its ratio to the base's.
fn figure_row(
    records: &[Option<&StepRecord>],
    base: usize,
    name: &str,
    meaning: &str,
    lower_is_better: Option<bool>,
    f: &dyn Fn(&StepRecord) -> Option<f64>,
) -> MetricRow {
    let values: Vec<Option<f64>> = records.iter().map(|s| s.and_then(f)).collect();
    let base_value = values.get(base).copied().flatten();
    MetricRow {
        name: name.to_string(),
        meaning: meaning.to_string(),
        relative: values
            .iter()
            .map(|v| match (v, base_value) {
                (Some(v), Some(b)) if b != 0.0 => Some(v / b),
                _ => None,
            })
            .collect(),
        values,
        lower_is_better,
    }
}

/// A step's figures: from the step's record (throughput, client CPU, rates, latency, time),
/// then the server's figures of [`METRICS`] the reports show. Names, meanings and directions
/// come from [`METRICS`] where it has them.
fn step_figures(records: &[Option<&StepRecord>], row: &MakeRow) -> Vec<MetricRow> {
    let main = |s: &StepRecord| s.main_op().name();
    let def = |n: &str| {
        crate::results::metrics::metric_def(n)
            .map_or(("", None), |d| (d.meaning, Some(d.lower_is_better)))
    };
    let from_record = |n: &str, f: &dyn Fn(&StepRecord) -> Option<f64>| {
        let (meaning, lower) = def(n);
        row(n, meaning, lower, f)
    };
    let mut figures = vec![
        row(
            "throughput",
            "the step's throughput figure",
            Some(false),
            &|s| Some(s.throughput),
        ),
        from_record("ccpupq", &|s| s.client_cpu_us_per_op),
        from_record("p50", &|s| s.rate_p50),
        from_record("p1low", &|s| s.rate_p1low),
        from_record("maxop", &|s| {
            s.ops
                .get(main(s))
                .map(|o| count_f64(o.latency_us.max_us) / 1e6)
        }),
        row(
            "p99",
            "99th percentile latency of the step's op, µs",
            Some(true),
            &|s| s.ops.get(main(s)).map(|o| count_f64(o.latency_us.p99_us)),
        ),
        row("seconds", "measured seconds", None, &|s| Some(s.seconds)),
    ];
    if records.iter().flatten().any(|s| s.metrics.is_some()) {
        for d in METRICS.iter().filter(|d| d.shown.report) {
            let r = row(d.name, d.meaning, Some(d.lower_is_better), &|s| {
                s.metrics.as_ref().and_then(|m| (d.get)(m).value())
            });
            // The DBMS's counters: only those some run's server has.
            if d.source == Source::Host || r.values.iter().any(Option::is_some) {
                figures.push(r);
            }
        }
    }
    figures
}

/// A step's perf record when it was counted in groups.
fn perf_groups(s: &StepRecord) -> Option<&crate::results::metrics::PerfRecord> {
    s.metrics
        .as_ref()?
        .perf
        .as_ref()
        .filter(|p| !p.groups.is_empty())
}

/// Group `index` (into `sampler::perf::GROUPS`) of a step's perf record.
fn group_of(s: &StepRecord, index: usize) -> Option<&crate::results::metrics::PerfGroupRecord> {
    perf_groups(s)?
        .groups
        .iter()
        .find(|g| usize::try_from(g.group).ok() == Some(index + 1))
}

/// The counters-per-operation rows of a step (clock, IPC, then every event counted in some
/// run, in group order) and the events n/a in every run, grouped by reason.
fn counter_rows(records: &[Option<&StepRecord>], row: &MakeRow) -> (Vec<MetricRow>, Vec<String>) {
    use crate::sampler::perf::GROUPS;
    if !records.iter().flatten().any(|s| perf_groups(s).is_some()) {
        return (Vec::new(), Vec::new());
    }
    let mut rows = vec![
        row(
            "GHz",
            "the clock: cycles / cpu-clock (a different clock changes every other ratio)",
            None,
            &|s| perf_groups(s)?.ghz(),
        ),
        row("IPC", "instructions per cycle", Some(false), &|s| {
            perf_groups(s)?.groups.iter().find_map(|g| g.ipc.value())
        }),
    ];
    let mut na: Vec<(String, Vec<&str>)> = Vec::new();
    for (g, events) in GROUPS.iter().enumerate() {
        for &e in *events {
            let unit = if e == "cpu-clock" { ", ms" } else { "" };
            // Every counter per op is a cost: fewer instructions, misses or faults per op.
            let counted = row(
                e,
                &format!("{e} per op{unit} (group {})", g + 1),
                Some(true),
                &|s| group_of(s, g)?.per_op.get(e)?.value(),
            );
            if counted.values.iter().any(Option::is_some) {
                rows.push(counted);
                continue;
            }
            let why = records
                .iter()
                .flatten()
                .find_map(|s| match group_of(s, g)?.counts.get(e)? {
                    Metric::Na(r) => Some(r.clone()),
                    Metric::Value(_) => None,
                })
                .unwrap_or_else(|| "not recorded".into());
            match na.iter_mut().find(|(r, _)| *r == why) {
                Some((_, events)) => events.push(e),
                None => na.push((why, vec![e])),
            }
        }
    }
    rows.retain(|r| r.values.iter().any(Option::is_some));
    let na = na
        .into_iter()
        .map(|(why, events)| format!("{}: {why}", events.join(", ")))
        .collect();
    (rows, na)
}

/// The latency row of every run that has ops of `kind` in the step.
fn latency_rows(
    runs: &[LoadedRun],
    records: &[Option<&StepRecord>],
    kind: OpKind,
) -> Vec<LatencyRow> {
    runs.iter()
        .zip(records)
        .filter_map(|(r, s)| {
            let l = &(*s)?.ops.get(kind.name())?.latency_us;
            Some(LatencyRow {
                label: r.label.clone(),
                bucket_shares: l.bucket_shares,
                p50_us: l.p50_us,
                p90_us: l.p90_us,
                p99_us: l.p99_us,
                p99_9_us: l.p99_9_us,
                max_us: l.max_us,
            })
        })
        .collect()
}

/// One line of a profile: its top functions by own share (`ExecInsert 12.3%, ...`), or why
/// there is none.
pub fn profile_line(p: &ProfileRecord, functions: usize) -> String {
    if let Some(e) = &p.error {
        return format!("n/a ({e})");
    }
    let top: Vec<String> = p
        .top_functions
        .iter()
        .take(functions)
        .map(|f| format!("{} {:.1}%", f.function, f.self_share * 100.0))
        .collect();
    format!(
        "{} ({} samples in {:.1} s)",
        top.join(", "),
        p.samples,
        p.seconds
    )
}
