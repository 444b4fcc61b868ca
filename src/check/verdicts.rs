//! One verdict per step and figure: regressed, improved, no change, or cannot tell (with the
//! reason). The rule itself is `crate::stats::decision` (pure, shared with the reports);
//! [`pair_verdicts`] gathers each step's figures per repeat from the runs (the rates and
//! latencies, and the work per op: server CPU, the DBMS's counters, perf's instructions and
//! cycles), holds a change on repeats the host screening flags to the unflagged repeats
//! (`with_host_flags`) and refuses to judge a failed or partial step.

use serde::{Serialize, Serializer};

use super::input::Pair;
use super::statistics;
use crate::report::host::{HostView, host_view};
use crate::report::shift;
use crate::results::metrics::METRICS;
use crate::results::probe::ProbeFigure;
use crate::results::{Status, StepRecord};
use crate::stats::OpKind;
use crate::stats::convert::count_f64;
use crate::stats::decision::{self, Decision, Evidence, FigureKind, Floor, Settings};
pub use crate::stats::decision::{Reason, Verdict};
use crate::workload::steps::StepName;

/// Unflagged repeats a side a change seen on repeats the host screening flags must hold on.
pub const MIN_REPEATS: usize = 3;

pub use crate::results::metrics::{PERF_EVENTS, WORK_METRICS};

pub use crate::stats::decision::Judge;

/// The figure of a step a verdict is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// The step's throughput (higher is better).
    Throughput,
    /// The 99th percentile latency of a query step's queries, µs (lower is better).
    P99Latency,
    /// A per-op figure of `results::metrics::METRICS`, by name (lower is better).
    Metric(&'static str),
    /// A perf counter per op (lower is better).
    Perf(&'static str),
    /// A failover's writers' unavailability, seconds (lower is better): the step's
    /// `failover.writers_unavailable_seconds` (docs/failover.md).
    WritesUnavailable,
    /// A failover's seconds until the rate was back (lower is better): the step's
    /// `failover.recovery_seconds`.
    RateBackAfter,
}

impl Serialize for Figure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl Figure {
    /// Whether a larger value is better.
    pub fn higher_is_better(self) -> bool {
        match self {
            Figure::Throughput => true,
            Figure::P99Latency
            | Figure::Perf(_)
            | Figure::WritesUnavailable
            | Figure::RateBackAfter => false,
            Figure::Metric(name) => METRICS
                .iter()
                .find(|m| m.name == name)
                .is_some_and(|m| !m.lower_is_better),
        }
    }

    /// Work per op or a rate/latency.
    pub fn kind(self) -> FigureKind {
        match self {
            Figure::Throughput
            | Figure::P99Latency
            | Figure::WritesUnavailable
            | Figure::RateBackAfter => FigureKind::Rate,
            Figure::Metric(_) | Figure::Perf(_) => FigureKind::Work,
        }
    }

    /// Whether the host (steal, a hog, a slower clock) can move it in `step`, so that the
    /// host screening's flags hold it: the rates, the server's CPU and cycles always; in a query
    /// step also a figure per op (not per row), because the paced background inserts beside
    /// the queries weigh more in each query when the host lets fewer queries run (buffer hits
    /// per query moved by 28% between identical repeats on a busy host, docs/method.md).
    pub fn host_moves_it(self, step: StepName) -> bool {
        match self {
            Figure::Throughput
            | Figure::P99Latency
            | Figure::WritesUnavailable
            | Figure::RateBackAfter => true,
            Figure::Perf(event) => event == "cycles" || matches!(step, StepName::Query { .. }),
            Figure::Metric(name) => WORK_METRICS.iter().any(|(n, unit, host)| {
                *n == name
                    && (*host || (matches!(step, StepName::Query { .. }) && unit.ends_with("/op")))
            }),
        }
    }

    /// As the outputs write it: `throughput`, `p99 latency`, `walbpi`, `instructions/op`.
    pub fn text(self) -> String {
        match self {
            Figure::Throughput => "throughput".into(),
            Figure::P99Latency => "p99 latency".into(),
            Figure::Metric(name) => name.into(),
            Figure::Perf(event) => format!("{event}/op"),
            Figure::WritesUnavailable => "writes unavailable".into(),
            Figure::RateBackAfter => "rate back after".into(),
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Figure::Throughput => "",
            Figure::P99Latency => "µs",
            Figure::Metric(name) => WORK_METRICS
                .iter()
                .find(|(n, _, _)| *n == name)
                .map_or("", |(_, u, _)| u),
            Figure::Perf(_) => "per op",
            Figure::WritesUnavailable | Figure::RateBackAfter => "s",
        }
    }
}

/// The thresholds a verdict is held to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rules {
    /// The level of each one-sided test; the interval is `1 - 2·alpha`.
    pub alpha: f64,
    /// Smallest change that counts (0.05 = ±5%).
    pub threshold: f64,
    /// Judge the repeats the host screening flags like the others (`--keep-host-affected`).
    pub keep_host_affected: bool,
    /// The runs are a duet's sides: a rate is not held to the host screening's flags (both
    /// sides met the same host in the same seconds), a figure the host moves otherwise (a
    /// query step's work per query, which moves with the queries each side got to run) still
    /// is. Not in the JSON's `rules` (the check's own): `pairs[].duet` says it per pair.
    #[serde(skip)]
    pub duet: bool,
    /// Which figures are judged and counted.
    pub judge: Judge,
    /// The shortest step judged.
    pub floor: Floor,
}

impl Rules {
    /// Why a figure of `kind` is judged over every repeat, the host screening's flags
    /// aside: `--keep-host-affected`, or a duet's rate (both sides met the same host:
    /// `stats::decision::duet_waives_host_flags`, the rule the reports paint by too); `None`
    /// when it is held to them.
    fn flags_waived(&self, kind: FigureKind) -> Option<&'static str> {
        if self.duet
            && let Some(why) = decision::duet_waives_host_flags(kind)
        {
            return Some(why);
        }
        self.keep_host_affected.then_some("--keep-host-affected")
    }

    /// The decision's settings.
    pub fn settings(&self) -> Settings {
        Settings {
            threshold: self.threshold,
            alpha: self.alpha,
            floor: self.floor,
            steady_host: false,
        }
    }
}

/// What the check concludes for one figure: the decision of `crate::stats::decision`.
pub type Judgement = Decision;

/// The decision on a figure from its per-repeat values on each side (no floor: the caller
/// applies it).
pub fn judge(base: &[f64], candidate: &[f64], higher_is_better: bool, rules: &Rules) -> Judgement {
    let kind = FigureKind::Rate;
    decision::decide_with(
        &Evidence::repeats(base, kind),
        &Evidence::repeats(candidate, kind),
        &rules.settings(),
        !higher_is_better,
    )
}

/// One figure of one step, judged.
#[derive(Clone, Debug, Serialize)]
pub struct StepVerdict {
    /// The step.
    pub step: StepName,
    /// The figure.
    pub figure: Figure,
    /// Work per op or a rate/latency.
    pub kind: FigureKind,
    /// Its unit.
    pub unit: String,
    /// The base's values, one per repeat with the step complete (flagged ones included).
    pub base: Vec<f64>,
    /// The candidate's values, likewise.
    pub candidate: Vec<f64>,
    /// Median of `base`.
    pub base_median: Option<f64>,
    /// Median of `candidate`.
    pub candidate_median: Option<f64>,
    /// The judgement.
    #[serde(flatten)]
    pub judgement: Judgement,
    /// Repeats left out (a failed or partial step) or flagged by the host screening, and why
    /// (`candidate r2: host-affected: steal 12% of the CPU time`).
    pub repeat_notes: Vec<String>,
}

impl StepVerdict {
    /// `qr100 p99 latency`, `l.i1 throughput`.
    pub fn name(&self) -> String {
        format!("{} {}", self.step, self.figure.text())
    }
}

/// The steps of the runs, in the order they first appear.
fn steps_of(pair: &Pair) -> Vec<StepName> {
    let mut steps: Vec<StepName> = Vec::new();
    for r in &pair.runs {
        for s in &r.record.steps {
            if !steps.contains(&s.name) {
                steps.push(s.name);
            }
        }
    }
    steps
}

/// Why a repeat's step cannot be used as a measure of the whole step, if it cannot.
fn partial(s: Option<&StepRecord>) -> Option<String> {
    let Some(s) = s else {
        return Some("missing (its run ended before it)".into());
    };
    match s.status {
        Status::Completed if s.check_failed() => Some(format!(
            "a check failed ({})",
            crate::report::text::one_line(&s.check_failure_text())
        )),
        Status::Completed => None,
        Status::Failed => Some(format!(
            "failed ({})",
            crate::report::text::one_line(s.error.as_deref().unwrap_or("no error recorded"))
        )),
        Status::Interrupted => Some("interrupted".into()),
        Status::Running => Some("still running when the run ended".into()),
    }
}

/// A figure of a step, for one repeat.
fn figure_of(s: &StepRecord, figure: Figure) -> Option<f64> {
    match figure {
        Figure::Throughput => Some(s.throughput),
        Figure::P99Latency => s
            .ops
            .get(s.main_op().name())
            .filter(|o| o.latency_us.count > 0)
            .map(|o| count_f64(o.latency_us.p99_us)),
        Figure::Metric(name) => {
            let m = s.metrics.as_ref()?;
            METRICS
                .iter()
                .find(|d| d.name == name)
                .and_then(|d| (d.get)(m).value())
        }
        Figure::Perf(event) => s
            .metrics
            .as_ref()?
            .perf
            .as_ref()?
            .per_op
            .get(event)?
            .value(),
        Figure::WritesUnavailable => s.failover.as_ref()?.writers_unavailable_seconds,
        Figure::RateBackAfter => s.failover.as_ref()?.recovery_seconds,
    }
}

/// The step's main rate in each whole second of its measured part (rows for inserts and
/// deletes, operations otherwise); empty for an index build, whose operations are few.
fn per_second(run: &crate::report::load::LoadedRun, s: &StepRecord) -> Vec<f64> {
    let op = s.main_op();
    if op == OpKind::CreateIndexes {
        return Vec::new();
    }
    run.timeline
        .iter()
        .filter(|l| l.step == s.name && f64::from(l.second) <= s.seconds)
        .map(|l| {
            l.ops.get(op.name()).map_or(0.0, |c| {
                count_f64(if op.rate_counts_rows() { c.rows } else { c.ops })
            })
        })
        .collect()
}

/// The figures of a step: throughput (and the p99 latency of a query step), a failover's
/// writers' unavailability and seconds until the rate was back (where a run of the pair
/// had one), then the work per op any run of the pair measured.
fn figures(pair: &Pair, step: StepName) -> Vec<Figure> {
    let mut out = vec![Figure::Throughput];
    if matches!(step, StepName::Query { .. }) {
        out.push(Figure::P99Latency);
    }
    let measured = |f: Figure| {
        pair.runs
            .iter()
            .filter_map(|r| r.record.step(step))
            .any(|s| figure_of(s, f).is_some())
    };
    out.extend(
        [Figure::WritesUnavailable, Figure::RateBackAfter]
            .into_iter()
            .chain(WORK_METRICS.iter().map(|(n, _, _)| Figure::Metric(n)))
            .chain(PERF_EVENTS.iter().map(|e| Figure::Perf(e)))
            .filter(|f| measured(*f)),
    );
    out
}

/// Every step's verdicts for one pair: throughput, the p99 latency of query steps, and the
/// work per op measured; those `--judge` takes.
pub fn pair_verdicts(pair: &Pair, rules: &Rules) -> Vec<StepVerdict> {
    let steps = steps_of(pair);
    let shifts = shift::shifts(&pair.runs);
    let mut out = Vec::new();
    for &step in &steps {
        // The host screening holds every repeat against the typical one: its lines name it, so
        // a base repeat is not said to differ from the base.
        let typical = typical_run(pair, step);
        let called = format!(
            "the typical repeat's ({} {})",
            if typical >= pair.base_count {
                "candidate"
            } else {
                "base"
            },
            pair.names.get(typical).map_or("", String::as_str)
        );
        let host = host_view(&pair.runs, typical, &[step], &shifts, &called);
        for figure in figures(pair, step) {
            if rules.judge.takes(figure.kind()) {
                out.push(step_verdict(pair, &host, step, figure, rules));
            }
        }
    }
    out
}

/// The run the host screening compares the others with for `step`: the one whose host probe
/// around the step (its best CPU figure) is the median of all the runs', so each repeat is
/// held against a typical host rather than one that may itself be the odd one; the base's
/// first run when no run has a probe.
fn typical_run(pair: &Pair, step: StepName) -> usize {
    let mut cpu: Vec<(f64, usize)> = pair
        .runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let s = r.record.step(step)?;
            let best = s.host_probe.as_ref()?.best(ProbeFigure::Cpu)?;
            Some((best, i))
        })
        .collect();
    cpu.sort_by(|a, b| a.0.total_cmp(&b.0));
    cpu.get(cpu.len() / 2).map_or(0, |&(_, i)| i)
}

/// One repeat's figure: its value, its per-second samples, whether the host screening flagged
/// it.
#[derive(Clone, Debug, Default)]
struct Repeat {
    value: f64,
    per_second: Vec<f64>,
    flagged: bool,
    /// The round it ran in, when the pair ran in rounds.
    round: Option<usize>,
}

/// One side's repeats of a step, the lines for each repeat left out or flagged, and each
/// repeat's measured part (seconds and per-second samples).
#[derive(Default)]
struct Side {
    repeats: Vec<Repeat>,
    partial: Vec<String>,
    host: Vec<String>,
    lengths: Vec<(f64, Option<usize>)>,
}

impl Side {
    fn all(&self) -> Vec<f64> {
        self.repeats.iter().map(|r| r.value).collect()
    }

    /// The measured part of the typical repeat: the median seconds and per-second samples
    /// of the repeats (the lower middle one for an even count), so that one repeat a busy
    /// host made fast or slow does not decide whether the step is long enough.
    /// (`stats::decision::typical_length`, the rule `matrix report` holds a step to as well).
    fn typical_length(&self) -> (Option<f64>, Option<usize>) {
        let seconds: Vec<f64> = self.lengths.iter().map(|l| l.0).collect();
        let samples: Vec<usize> = self.lengths.iter().filter_map(|l| l.1).collect();
        decision::typical_length(&seconds, &samples)
    }

    fn clean_count(&self) -> usize {
        self.repeats.iter().filter(|r| !r.flagged).count()
    }

    fn flagged_count(&self) -> usize {
        self.repeats.len() - self.clean_count()
    }

    /// The evidence of the repeats kept (all, or the unflagged).
    fn evidence(&self, kind: FigureKind, unflagged_only: bool) -> Evidence {
        let kept: Vec<&Repeat> = self
            .repeats
            .iter()
            .filter(|r| !(unflagged_only && r.flagged))
            .collect();
        let values: Vec<f64> = kept.iter().map(|r| r.value).collect();
        let mut e = match kept.as_slice() {
            [one] => Evidence::single_run(one.value, &one.per_second, kind),
            _ => Evidence::repeats(&values, kind),
        };
        let rounds: Option<Vec<usize>> = kept.iter().map(|r| r.round).collect();
        if let Some(rounds) = rounds.filter(|r| r.len() >= 2) {
            e = e.in_rounds(&rounds);
        }
        let (seconds, samples) = self.typical_length();
        e.seconds = seconds;
        e.samples = samples;
        e
    }
}

fn side(pair: &Pair, host: &HostView, step: StepName, figure: Figure, candidate: bool) -> Side {
    let mut out = Side::default();
    let which = if candidate { "candidate" } else { "base" };
    for (i, run) in pair.runs.iter().enumerate() {
        if (i >= pair.base_count) != candidate {
            continue;
        }
        let name = format!("{which} {}", pair.names[i]);
        let s = run.record.step(step);
        if let Some(why) = partial(s) {
            out.partial.push(format!("{name}: {why}"));
            continue;
        }
        let Some((s, v)) = s.and_then(|s| Some((s, figure_of(s, figure)?))) else {
            out.partial.push(format!("{name}: no {}", figure.text()));
            continue;
        };
        out.lengths
            .push((s.seconds, crate::report::overlap::step_samples(run, step)));
        let flag = host
            .flag(step, &run.label)
            .filter(|_| figure.host_moves_it(step));
        if let Some(flag) = flag {
            out.host.push(format!(
                "{name}: host-affected: {}",
                flag.reasons.join("; ")
            ));
        }
        out.repeats.push(Repeat {
            value: v,
            per_second: if figure == Figure::Throughput {
                per_second(run, s)
            } else {
                Vec::new()
            },
            flagged: flag.is_some(),
            round: pair.round(i),
        });
    }
    out
}

/// The decision with the host screening's flags: over every repeat when none is flagged; else a
/// change (regressed or improved) stands only when the unflagged repeats alone, at least
/// [`MIN_REPEATS`] a side, reach it too, and is "cannot tell: host-affected" otherwise. A
/// decision of no change or cannot tell over every repeat is kept unless the unflagged
/// repeats suffice to judge on their own.
fn with_host_flags(
    b: &Side,
    c: &Side,
    (step, figure): (StepName, Figure),
    rules: &Rules,
    steady_host: bool,
) -> Judgement {
    let settings = Settings {
        steady_host,
        ..rules.settings()
    };
    let (kind, lower) = (figure.kind(), !figure.higher_is_better());
    let decide = |unflagged_only: bool| {
        decision::decide_paired(
            &b.evidence(kind, unflagged_only),
            &c.evidence(kind, unflagged_only),
            &settings,
            lower,
        )
    };
    let all = decide(false);
    let flagged = b.flagged_count() + c.flagged_count();
    if flagged == 0 || !figure.host_moves_it(step) || all.reason == Some(Reason::TooShort) {
        return all;
    }
    if let Some(why) = rules.flags_waived(kind) {
        return Judgement {
            detail: format!(
                "{} (over every repeat, the {flagged} the host screening flagged included: {why})",
                all.detail
            ),
            ..all
        };
    }
    let (bc, cc) = (b.clean_count(), c.clean_count());
    let enough = bc >= MIN_REPEATS && cc >= MIN_REPEATS;
    let clean = decide(true);
    let kept = format!(
        "{} of {} repeats unflagged by the host screening",
        bc + cc,
        flagged + bc + cc
    );
    match all.verdict {
        Verdict::Regressed | Verdict::Improved if enough && clean.verdict == all.verdict => {
            Judgement {
                detail: format!("{} (over the {kept})", clean.detail),
                ..clean
            }
        }
        Verdict::Regressed | Verdict::Improved => Judgement {
            verdict: Verdict::CannotTell,
            reason: Some(Reason::HostAffected),
            detail: if enough {
                format!(
                    "{} over every repeat, but the host moved {flagged} of them and the {kept} do not show it",
                    all.detail
                )
            } else {
                format!(
                    "{} over every repeat, but the host moved {flagged} of them, leaving {bc} base and {cc} candidate repeats: fewer than {MIN_REPEATS} a side",
                    all.detail
                )
            },
            ..all
        },
        _ if enough => Judgement {
            detail: format!("{} (over the {kept})", clean.detail),
            ..clean
        },
        _ => Judgement {
            detail: format!(
                "{} (over every repeat; the host screening flagged {flagged})",
                all.detail
            ),
            ..all
        },
    }
}

/// For a step too short: the size that would reach the floor, at the rate measured
/// (`about 15,000 inserted rows would reach it`), for the notes.
fn size_to_reach(pair: &Pair, step: StepName, floor: &Floor) -> Option<String> {
    let s = pair
        .runs
        .iter()
        .filter_map(|r| r.record.step(step))
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))?;
    Some(size_text(s, floor))
}

fn size_text(s: &StepRecord, floor: &Floor) -> String {
    if matches!(s.name, StepName::Query { .. }) || s.main_op() == OpKind::Micro {
        return format!("a step of {:.0} s or more would reach it", floor.seconds);
    }
    let unit = s.throughput_unit.as_str();
    let what = unit.strip_suffix("/s").unwrap_or(unit);
    let needed = s.throughput * floor.seconds;
    format!(
        "about {} {what} would reach it",
        crate::report::text::group_f(needed.ceil())
    )
}

/// The one line `ibench run` ends with when completed steps lasted less than the check's
/// default floor (so `ibench check` could not judge them): which steps, how long, and the
/// flags that lengthen them; `None` when every step is long enough.
pub fn too_short_line(steps: &[StepRecord]) -> Option<String> {
    let floor = decision::DEFAULT_FLOOR;
    let short: Vec<&StepRecord> = steps
        .iter()
        .filter(|s| s.status == Status::Completed && s.seconds < floor.seconds)
        .collect();
    if short.is_empty() {
        return None;
    }
    let named: Vec<String> = short
        .iter()
        .map(|s| format!("{} ({:.2} s)", s.name, s.seconds))
        .collect();
    let timed = short
        .iter()
        .any(|s| matches!(s.name, StepName::Query { .. }) || s.main_op() == OpKind::Micro);
    let sized = short
        .iter()
        .any(|s| !matches!(s.name, StepName::Query { .. }) && s.main_op() != OpKind::Micro);
    let flags = match (sized, timed) {
        (true, true) => "a larger --profile, or --load-rows and --query-seconds",
        (true, false) => "a larger --profile or --load-rows",
        _ => "a larger --profile or --query-seconds",
    };
    let (what, them) = match named.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            (format!("{} and {last} are", rest.join(", ")), "them")
        }
        _ => (format!("{} is", named.join("")), "it"),
    };
    Some(format!(
        "note: {what} shorter than the {:.0} s `ibench check` needs to judge a step; {flags} lengthen{} {them}",
        floor.seconds,
        if flags.contains(" and ") { "" } else { "s" }
    ))
}

fn step_verdict(
    pair: &Pair,
    host: &HostView,
    step: StepName,
    figure: Figure,
    rules: &Rules,
) -> StepVerdict {
    let (b, c) = (
        side(pair, host, step, figure, false),
        side(pair, host, step, figure, true),
    );
    let unit = match figure {
        Figure::Throughput => pair
            .runs
            .iter()
            .find_map(|r| r.record.step(step))
            .map_or_else(String::new, |s| s.throughput_unit.as_str().to_string()),
        f => f.unit().to_string(),
    };
    let mut judgement = with_host_flags(&b, &c, (step, figure), rules, pair.steady_host());
    if judgement.reason == Some(Reason::TooShort)
        && let Some(size) = size_to_reach(pair, step, &rules.floor)
    {
        judgement.detail = format!("{}; {size}", judgement.detail);
    }
    let partial: Vec<String> = b.partial.iter().chain(&c.partial).cloned().collect();
    if !partial.is_empty() {
        judgement.verdict = Verdict::CannotTell;
        judgement.reason = Some(Reason::FailedOrPartial);
        judgement.detail = partial.join("; ");
    }
    let mut notes = partial;
    notes.extend(b.host.iter().chain(&c.host).cloned());
    let (base, candidate) = (b.all(), c.all());
    StepVerdict {
        step,
        figure,
        kind: figure.kind(),
        unit,
        base_median: statistics::median(&base),
        candidate_median: statistics::median(&candidate),
        base,
        candidate,
        judgement,
        repeat_notes: notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const I0: StepName = StepName::LoadInitial;

    const RULES: Rules = Rules {
        alpha: 0.05,
        threshold: 0.05,
        keep_host_affected: false,
        duet: false,
        judge: Judge::All,
        floor: decision::DEFAULT_FLOOR,
    };

    #[test]
    fn a_separated_drop_beyond_the_threshold_is_a_regression() {
        let j = judge(&[100.0, 101.0, 99.0], &[80.0, 82.0, 81.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        let (lo, hi) = j.interval.expect("ci");
        assert!(lo <= 0.81 && (0.81..0.95).contains(&hi));
        // The same rise is an improvement; for a latency it is the regression.
        let j = judge(&[80.0, 82.0, 81.0], &[100.0, 101.0, 99.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::Improved);
        let j = judge(&[80.0, 82.0, 81.0], &[100.0, 101.0, 99.0], false, &RULES);
        assert_eq!(j.verdict, Verdict::Regressed);
    }

    #[test]
    fn a_median_within_the_threshold_with_a_wide_interval_cannot_tell() {
        // The b against a: +3.7% with an interval of about ±20% is not "no change".
        let j = judge(&[100.0, 80.0, 125.0], &[104.0, 82.0, 128.0], true, &RULES);
        assert_eq!(
            (j.verdict, j.reason),
            (Verdict::CannotTell, Some(Reason::TooNoisy)),
            "{j:?}"
        );
        assert!(
            j.detail.contains("repeats a side would decide"),
            "{}",
            j.detail
        );
    }

    #[test]
    fn one_slow_repeat_among_three_cannot_tell() {
        let j = judge(&[100.0, 104.0, 96.0], &[50.0, 92.0, 97.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::CannotTell, "{j:?}");
    }

    #[test]
    fn one_repeat_a_side_without_samples_cannot_tell() {
        // A rate: one run a side, whatever it measured.
        let j = judge(&[100.0], &[70.0], true, &RULES);
        assert_eq!(
            (j.verdict, j.reason),
            (Verdict::CannotTell, Some(Reason::OneRun))
        );
        let j = judge(&[100.0], &[100.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::CannotTell);
    }

    #[test]
    fn an_empty_side_or_a_zero_median_cannot_tell() {
        let j = judge(&[], &[1.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::CannotTell);
        let j = judge(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::CannotTell);
    }

    fn side_of(clean: &[f64], flagged: &[f64]) -> Side {
        let rep = |flagged: bool| {
            move |v: &f64| Repeat {
                value: *v,
                per_second: Vec::new(),
                flagged,
                round: None,
            }
        };
        Side {
            repeats: clean
                .iter()
                .map(rep(false))
                .chain(flagged.iter().map(rep(true)))
                .collect(),
            ..Side::default()
        }
    }

    #[test]
    fn a_change_on_flagged_repeats_stands_only_if_the_unflagged_show_it() {
        let base = side_of(&[100.0, 101.0, 99.0], &[]);
        // A hog slowed two candidate repeats: every repeat is lower, but only one is clean.
        let hogged = side_of(&[80.0], &[79.0, 81.0]);
        let j = with_host_flags(&base, &hogged, (I0, Figure::Throughput), &RULES, false);
        assert_eq!(
            (j.verdict, j.reason),
            (Verdict::CannotTell, Some(Reason::HostAffected)),
            "{j:?}"
        );
        // Three clean candidate repeats that are lower decide, the flagged one aside.
        let slower = side_of(&[80.0, 81.0, 79.0], &[80.5]);
        let j = with_host_flags(&base, &slower, (I0, Figure::Throughput), &RULES, false);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        assert!(j.detail.contains("6 of 7"), "{}", j.detail);
        // --keep-host-affected judges every repeat.
        let keep = Rules {
            keep_host_affected: true,
            ..RULES
        };
        let j = with_host_flags(&base, &hogged, (I0, Figure::Throughput), &keep, false);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        assert!(j.detail.contains("--keep-host-affected"), "{}", j.detail);
        // The DBMS's counters are not held to the host screening's flags.
        let j = with_host_flags(
            &base,
            &hogged,
            (I0, Figure::Metric("walbpi")),
            &RULES,
            false,
        );
        assert_eq!(j.verdict, Verdict::Improved, "{j:?}");
        // But a figure per query is, in a query step: the background inserts weigh more in
        // each query when the host lets fewer queries run.
        let qr100: StepName = "qr100".parse().expect("a step");
        let j = with_host_flags(
            &base,
            &hogged,
            (qr100, Figure::Metric("shhpq")),
            &RULES,
            false,
        );
        assert_eq!(j.reason, Some(Reason::HostAffected), "{j:?}");
        let j = with_host_flags(
            &base,
            &hogged,
            (qr100, Figure::Metric("walbpi")),
            &RULES,
            false,
        );
        assert_eq!(j.verdict, Verdict::Improved, "{j:?}");
    }

    #[test]
    fn a_duet_holds_its_work_per_query_to_the_host_flags_but_not_its_rates() {
        let duet = Rules {
            duet: true,
            ..RULES
        };
        let qr100: StepName = "qr100".parse().expect("a step");
        let base = side_of(&[100.0, 101.0, 99.0], &[]);
        let hogged = side_of(&[80.0], &[79.0, 81.0]);
        // The rate: both sides met the same host, so the flagged repeats count.
        let j = with_host_flags(&base, &hogged, (I0, Figure::Throughput), &duet, false);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        assert!(j.detail.contains("a duet's sides"), "{}", j.detail);
        // Work per query in a query step moves with the queries the host let each side run:
        // held to the flags as in any check.
        let j = with_host_flags(
            &base,
            &hogged,
            (qr100, Figure::Metric("cpupq")),
            &duet,
            false,
        );
        assert_eq!(
            (j.verdict, j.reason),
            (Verdict::CannotTell, Some(Reason::HostAffected)),
            "{j:?}"
        );
    }

    #[test]
    fn a_work_figure_with_zero_noise_decides_where_the_rate_cannot() {
        let b = side_of(&[1000.0, 1000.0], &[]);
        let c = side_of(&[1031.0, 1031.0], &[]);
        let j = with_host_flags(&b, &c, (I0, Figure::Metric("walbpi")), &RULES, false);
        assert_eq!(j.verdict, Verdict::NoChange, "+3.1% is inside ±5%: {j:?}");
        let strict = Rules {
            threshold: 0.02,
            ..RULES
        };
        let j = with_host_flags(&b, &c, (I0, Figure::Metric("walbpi")), &strict, false);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        let rb = side_of(&[1000.0, 900.0], &[]);
        let rc = side_of(&[950.0, 1010.0], &[]);
        let j = with_host_flags(&rb, &rc, (I0, Figure::Throughput), &strict, false);
        assert_eq!(j.verdict, Verdict::CannotTell, "{j:?}");
    }

    #[test]
    fn a_run_says_once_which_steps_are_below_the_floor() {
        let run: crate::results::RunRecord =
            serde_json::from_str(include_str!("../../tests/fixtures/postgres/run.json"))
                .expect("the fixture run");
        let w = too_short_line(&run.steps).expect("l.i0 lasted 0.28 s");
        assert!(w.contains("l.i0 (0.28 s)"), "{w}");
        assert!(!w.contains('\n'), "{w}");
        let qr100: StepName = "qr100".parse().expect("a step");
        let long: Vec<StepRecord> = run
            .steps
            .iter()
            .filter(|s| s.name == qr100)
            .cloned()
            .collect();
        assert_eq!(too_short_line(&long), None);
    }

    #[test]
    fn every_work_metric_is_a_metric_of_the_contract() {
        for (name, _, _) in WORK_METRICS {
            assert!(METRICS.iter().any(|m| m.name == name), "{name}");
            assert!(!Figure::Metric(name).higher_is_better(), "{name}");
            assert_eq!(Figure::Metric(name).kind(), FigureKind::Work);
        }
    }
}
