//! One verdict per step and figure: regressed, improved, no change beyond noise, or cannot
//! tell (with the reason). The rules are pure ([`judge`]); [`pair_verdicts`] gathers each
//! step's per-repeat figures from the runs, holds a change on repeats the host screening flags to
//! the unflagged repeats (`with_host_flags`) and refuses to judge a failed or partial step.

use serde::Serialize;

use super::input::Pair;
use super::statistics::{self, UMethod};
use crate::report::host::{HostView, host_view};
use crate::report::shift;
use crate::results::probe::ProbeFigure;
use crate::results::{Status, StepRecord};
use crate::stats::convert::count_f64;
use crate::workload::steps::StepName;

/// Repeats a side needs for the rank test; with fewer, only a change beyond the wide
/// threshold counts.
pub const MIN_REPEATS: usize = 3;

/// What the check concludes for one figure of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Worse, significantly and beyond the threshold.
    Regressed,
    /// Better, significantly and beyond the threshold.
    Improved,
    /// Within the threshold.
    NoChange,
    /// Not decided; the reason says why.
    CannotTell,
}

impl Verdict {
    /// As the text and Markdown outputs write it.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Regressed => "REGRESSED",
            Verdict::Improved => "improved",
            Verdict::NoChange => "no change beyond noise",
            Verdict::CannotTell => "cannot tell",
        }
    }
}

/// Why a figure cannot tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The host screening flagged repeats of the step, leaving too few to judge.
    HostAffected,
    /// Fewer than [`MIN_REPEATS`] a side and a change between the threshold and the wide one.
    TooFewRepeats,
    /// The step failed, was cut short, failed a check, or is missing in a repeat.
    FailedOrPartial,
    /// A change beyond the threshold that the rank test does not find significant.
    NotSignificant,
}

impl Reason {
    /// As the outputs write it.
    pub fn text(self) -> &'static str {
        match self {
            Reason::HostAffected => "host-affected",
            Reason::TooFewRepeats => "too few repeats",
            Reason::FailedOrPartial => "failed or partial step",
            Reason::NotSignificant => "not significant",
        }
    }
}

/// The figure of a step a verdict is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The step's throughput (higher is better).
    Throughput,
    /// The 99th percentile latency of a query step's queries, µs (lower is better).
    P99Latency,
}

impl Figure {
    /// Whether a larger value is better.
    pub fn higher_is_better(self) -> bool {
        self == Figure::Throughput
    }

    /// As the outputs write it.
    pub fn text(self) -> &'static str {
        match self {
            Figure::Throughput => "throughput",
            Figure::P99Latency => "p99 latency",
        }
    }
}

/// The thresholds a verdict is held to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rules {
    /// Significance level of the one-sided rank test.
    pub alpha: f64,
    /// Smallest change that counts (0.05 = 5%), as `|r - 1|` of the median ratio `r`.
    pub threshold: f64,
    /// With fewer than [`MIN_REPEATS`] a side: the smallest change that counts.
    pub few_repeats_threshold: f64,
    /// Judge the repeats the host screening flags like the others (`--keep-host-affected`).
    pub keep_host_affected: bool,
}

/// What [`judge`] concludes from two samples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// Why it cannot tell.
    pub reason: Option<Reason>,
    /// Candidate median / base median.
    pub ratio: Option<f64>,
    /// The ratio's bootstrap interval at 1 - alpha (with the rank test only).
    pub ci: Option<(f64, f64)>,
    /// The one-sided p-value in the direction of the change (with the rank test only).
    pub p_value: Option<f64>,
    /// How the p-value was computed.
    pub method: Option<UMethod>,
    /// One sentence for people.
    pub detail: String,
}

/// Whether the change `ratio - 1` (the figure the outputs show) is beyond `threshold` either
/// way.
fn beyond(ratio: f64, threshold: f64) -> bool {
    (ratio - 1.0).abs() > threshold
}

/// The verdict on a figure from its per-repeat values on each side.
pub fn judge(base: &[f64], candidate: &[f64], higher_is_better: bool, rules: &Rules) -> Judgement {
    let mut j = Judgement {
        verdict: Verdict::CannotTell,
        reason: Some(Reason::FailedOrPartial),
        ratio: None,
        ci: None,
        p_value: None,
        method: None,
        detail: String::new(),
    };
    let (Some(mb), Some(mc)) = (statistics::median(base), statistics::median(candidate)) else {
        j.detail = "no value on one side".into();
        return j;
    };
    if mb <= 0.0 || mc <= 0.0 {
        j.detail = "a median of 0: the step did no work on one side".into();
        return j;
    }
    let ratio = mc / mb;
    j.ratio = Some(ratio);
    let worse = if higher_is_better {
        ratio < 1.0
    } else {
        ratio > 1.0
    };
    let change = if worse {
        Verdict::Regressed
    } else {
        Verdict::Improved
    };
    let pct = (ratio - 1.0) * 100.0;
    if base.len() < MIN_REPEATS || candidate.len() < MIN_REPEATS {
        let n = format!("n={} vs {}", base.len(), candidate.len());
        (j.verdict, j.reason, j.detail) = if beyond(ratio, rules.few_repeats_threshold) {
            let d = format!(
                "{pct:+.1}% with {n}, beyond the ±{:.0}% few repeats need; {MIN_REPEATS} repeats a side would decide by the rank test",
                rules.few_repeats_threshold * 100.0
            );
            (change, None, d)
        } else if beyond(ratio, rules.threshold) {
            let d = format!("{pct:+.1}% with {n}; {MIN_REPEATS} repeats a side would decide");
            (Verdict::CannotTell, Some(Reason::TooFewRepeats), d)
        } else {
            let d = format!(
                "{pct:+.1}% with {n}, within ±{:.0}%",
                rules.threshold * 100.0
            );
            (Verdict::NoChange, None, d)
        };
        return j;
    }
    let Some(u) = statistics::mann_whitney(base, candidate) else {
        return j;
    };
    // "Candidate worse" is "candidate lower" for throughput, "higher" for latency.
    let p = match (worse, higher_is_better) {
        (true, true) | (false, false) => u.p_lower,
        _ => u.p_higher,
    };
    j.p_value = Some(p);
    j.method = Some(u.method);
    j.ci = statistics::bootstrap_ratio_ci(base, candidate, 1.0 - rules.alpha);
    let within = format!("within ±{:.0}%", rules.threshold * 100.0);
    (j.verdict, j.reason, j.detail) = match (beyond(ratio, rules.threshold), p <= rules.alpha) {
        (false, _) => (Verdict::NoChange, None, format!("{pct:+.1}%, {within}")),
        (true, true) => (change, None, format!("{pct:+.1}%, p={p:.3}")),
        (true, false) => (
            Verdict::CannotTell,
            Some(Reason::NotSignificant),
            format!(
                "{pct:+.1}% but p={p:.3} > {}; more repeats would decide",
                rules.alpha
            ),
        ),
    };
    j
}

/// One figure of one step, judged.
#[derive(Clone, Debug, Serialize)]
pub struct StepVerdict {
    /// The step.
    pub step: StepName,
    /// The figure.
    pub figure: Figure,
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
    }
}

/// Every step's verdicts for one pair: throughput, and the p99 latency of query steps.
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
        let figures: &[Figure] = if matches!(step, StepName::Query { .. }) {
            &[Figure::Throughput, Figure::P99Latency]
        } else {
            &[Figure::Throughput]
        };
        for &figure in figures {
            out.push(step_verdict(pair, &host, step, figure, rules));
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

/// One side's repeats of a step: the values of those the host screening did not flag, of those
/// it flagged, and a line for each repeat left out or flagged.
#[derive(Default)]
struct Side {
    clean: Vec<f64>,
    flagged: Vec<f64>,
    partial: Vec<String>,
    host: Vec<String>,
}

impl Side {
    fn all(&self) -> Vec<f64> {
        self.clean.iter().chain(&self.flagged).copied().collect()
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
        let Some(v) = s.and_then(|s| figure_of(s, figure)) else {
            out.partial.push(format!("{name}: no {}", figure.text()));
            continue;
        };
        match host.flag(step, &run.label) {
            Some(flag) => {
                out.host.push(format!(
                    "{name}: host-affected: {}",
                    flag.reasons.join("; ")
                ));
                out.flagged.push(v);
            }
            None => out.clean.push(v),
        }
    }
    out
}

/// The verdict with the host screening's flags: over every repeat when none is flagged; else a
/// change (regressed or improved) stands only when the unflagged repeats alone, at least
/// [`MIN_REPEATS`] a side, reach it too, and is "cannot tell: host-affected" otherwise. A
/// verdict of no change or cannot tell over every repeat is kept unless the unflagged repeats
/// suffice to judge on their own.
fn with_host_flags(b: &Side, c: &Side, higher_is_better: bool, rules: &Rules) -> Judgement {
    let all = judge(&b.all(), &c.all(), higher_is_better, rules);
    if b.flagged.is_empty() && c.flagged.is_empty() {
        return all;
    }
    if rules.keep_host_affected {
        let flagged = b.flagged.len() + c.flagged.len();
        return Judgement {
            detail: format!(
                "{} (over every repeat, the {flagged} the host screening flagged included: --keep-host-affected)",
                all.detail
            ),
            ..all
        };
    }
    let enough = b.clean.len() >= MIN_REPEATS && c.clean.len() >= MIN_REPEATS;
    let clean = judge(&b.clean, &c.clean, higher_is_better, rules);
    let flagged = b.flagged.len() + c.flagged.len();
    let kept = format!(
        "{} of {} repeats unflagged by the host screening",
        b.clean.len() + c.clean.len(),
        flagged + b.clean.len() + c.clean.len()
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
                    "{} over every repeat, but the host moved {flagged} of them, leaving {} base and {} candidate repeats: fewer than {MIN_REPEATS} a side",
                    all.detail,
                    b.clean.len(),
                    c.clean.len()
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
        Figure::P99Latency => "µs".to_string(),
        Figure::Throughput => pair
            .runs
            .iter()
            .find_map(|r| r.record.step(step))
            .map_or_else(String::new, |s| s.throughput_unit.as_str().to_string()),
    };
    let mut judgement = with_host_flags(&b, &c, figure.higher_is_better(), rules);
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

    const RULES: Rules = Rules {
        alpha: 0.05,
        threshold: 0.05,
        few_repeats_threshold: 0.20,
        keep_host_affected: false,
    };

    #[test]
    fn a_separated_drop_beyond_the_threshold_is_a_regression() {
        let j = judge(&[100.0, 101.0, 99.0], &[80.0, 82.0, 81.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        assert!((j.p_value.expect("p") - 0.05).abs() < 1e-9);
        let (lo, hi) = j.ci.expect("ci");
        assert!(lo <= 0.81 && 0.81 <= hi);
        // The same rise is an improvement; for a latency it is the regression.
        let j = judge(&[80.0, 82.0, 81.0], &[100.0, 101.0, 99.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::Improved);
        let j = judge(&[80.0, 82.0, 81.0], &[100.0, 101.0, 99.0], false, &RULES);
        assert_eq!(j.verdict, Verdict::Regressed);
    }

    #[test]
    fn a_significant_drop_within_the_threshold_is_no_change() {
        let j = judge(&[100.0, 101.0, 102.0], &[97.0, 98.0, 97.5], true, &RULES);
        assert_eq!(j.verdict, Verdict::NoChange, "{j:?}");
    }

    #[test]
    fn one_slow_repeat_among_three_is_not_significant() {
        // A hog slowed one candidate repeat to half: the median falls 8%, but the ranks
        // overlap, so the test cannot tell.
        let j = judge(&[100.0, 104.0, 96.0], &[50.0, 92.0, 97.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::CannotTell, "{j:?}");
        assert_eq!(j.reason, Some(Reason::NotSignificant));
    }

    #[test]
    fn few_repeats_count_only_beyond_the_wide_threshold() {
        let j = judge(&[100.0], &[70.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::Regressed);
        assert!(j.detail.contains("would decide"), "{}", j.detail);
        let j = judge(&[100.0, 100.0], &[90.0, 88.0], true, &RULES);
        assert_eq!(
            (j.verdict, j.reason),
            (Verdict::CannotTell, Some(Reason::TooFewRepeats))
        );
        let j = judge(&[100.0], &[98.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::NoChange);
        assert_eq!(j.p_value, None);
    }

    #[test]
    fn an_empty_side_or_a_zero_median_cannot_tell() {
        let j = judge(&[], &[1.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::CannotTell);
        let j = judge(&[0.0, 0.0, 0.0], &[1.0, 1.0, 1.0], true, &RULES);
        assert_eq!(j.verdict, Verdict::CannotTell);
    }

    fn side_of(clean: &[f64], flagged: &[f64]) -> Side {
        Side {
            clean: clean.to_vec(),
            flagged: flagged.to_vec(),
            ..Side::default()
        }
    }

    #[test]
    fn a_change_on_flagged_repeats_stands_only_if_the_unflagged_show_it() {
        let base = side_of(&[100.0, 101.0, 99.0], &[]);
        // A hog slowed two candidate repeats: every repeat is lower, but only one is clean.
        let hogged = side_of(&[98.0], &[60.0, 62.0]);
        let j = with_host_flags(&base, &hogged, true, &RULES);
        assert_eq!(
            (j.verdict, j.reason),
            (Verdict::CannotTell, Some(Reason::HostAffected)),
            "{j:?}"
        );
        // Three clean candidate repeats that are lower decide, the flagged one aside.
        let slower = side_of(&[80.0, 81.0, 79.0], &[60.0]);
        let j = with_host_flags(&base, &slower, true, &RULES);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        assert!(
            j.detail.contains("3 of 4") || j.detail.contains("6 of 7"),
            "{}",
            j.detail
        );
        // No change over every repeat stays no change.
        let same = side_of(&[100.0], &[100.5, 99.5]);
        let j = with_host_flags(&base, &same, true, &RULES);
        assert_eq!(j.verdict, Verdict::NoChange, "{j:?}");
        // --keep-host-affected judges every repeat.
        let keep = Rules {
            keep_host_affected: true,
            ..RULES
        };
        let j = with_host_flags(&base, &hogged, true, &keep);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        assert!(j.detail.contains("--keep-host-affected"), "{}", j.detail);
    }
}
