//! The seconds both sides of a duet round ran a step. In a duet (`order = "duet"`) the base
//! and the candidate ran each step at the same time; the side that finished first then had
//! the host alone, and its last seconds would favour it. So each step of a round is cut to
//! the whole seconds where both sides ran it (their per-second timelines, aligned on the
//! steps' wall-clock starts), and the step's rate is taken over those seconds alone: the one
//! cut `ibench check` (`check::duet`) and `ibench matrix report` make.
//!
//! Only rates are cut: the p99 latency and the work per op stay those of the whole step. An
//! index build (`l.x`) is left whole: its operations are few and long, with no per-second rate.

use std::collections::BTreeMap;

use crate::report::load::LoadedRun;
use crate::results::{StepRecord, TimelineLine, rfc3339_seconds};
use crate::stats::OpKind;
use crate::stats::convert::count_f64;
use crate::workload::steps::StepName;

/// One second both sides ran: the base's and the candidate's count of the step's main op
/// (rows for inserts and deletes, operations otherwise) and each side's own second number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedSecond {
    /// The base's second (of its step's clock).
    pub base_second: u32,
    /// The candidate's second (of its step's clock).
    pub candidate_second: u32,
    /// The base's count in that second.
    pub base: f64,
    /// The candidate's count in that second.
    pub candidate: f64,
}

/// The whole seconds where both steps ran: each side's per-second counts (`(second, count)`,
/// second `k` covering `(k - 1, k]` of its step), its measured length and the candidate's
/// start minus the base's, seconds. A base second is paired with the candidate second that
/// covers most of it; seconds past either side's measured end are left out.
pub fn paired_seconds(
    base: (&[(u32, f64)], f64),
    candidate: (&[(u32, f64)], f64),
    candidate_start_minus_base_s: f64,
) -> Vec<PairedSecond> {
    let shift = candidate_start_minus_base_s.round();
    let cand: BTreeMap<u32, f64> = candidate
        .0
        .iter()
        .filter(|(s, _)| f64::from(*s) <= candidate.1)
        .copied()
        .collect();
    base.0
        .iter()
        .filter(|(s, _)| f64::from(*s) <= base.1)
        .filter_map(|&(s, b)| {
            let k = f64::from(s) - shift;
            if k < 1.0 || k > f64::from(u32::MAX) {
                return None;
            }
            let k = u32::try_from(crate::stats::convert::round_to_u64(k)).ok()?;
            cand.get(&k).map(|&c| PairedSecond {
                base_second: s,
                candidate_second: k,
                base: b,
                candidate: c,
            })
        })
        .collect()
}

/// The log of the candidate's rate over the base's on the paired seconds (the ratio of the
/// sums: a second of few operations weighs little); `None` without a second or with a side
/// that did nothing in them.
pub fn round_log_ratio(seconds: &[PairedSecond]) -> Option<f64> {
    let b: f64 = seconds.iter().map(|s| s.base).sum();
    let c: f64 = seconds.iter().map(|s| s.candidate).sum();
    (b > 0.0 && c > 0.0).then(|| (c / b).ln())
}

/// The per-second log ratios of the paired seconds where both sides did something: how the
/// two sides moved together within the step.
pub fn per_second_log_ratios(seconds: &[PairedSecond]) -> Vec<f64> {
    seconds
        .iter()
        .filter(|s| s.base > 0.0 && s.candidate > 0.0)
        .map(|s| (s.candidate / s.base).ln())
        .collect()
}

/// A step's per-second counts of its main op, from a run's timeline; empty for an index
/// build.
fn counts(timeline: &[TimelineLine], s: &StepRecord) -> Vec<(u32, f64)> {
    let op = s.main_op();
    if op == OpKind::CreateIndexes {
        return Vec::new();
    }
    timeline
        .iter()
        .filter(|l| l.step == s.name)
        .map(|l| {
            let n = l
                .ops
                .get(op.name())
                .map_or(0, |c| if op.rate_counts_rows() { c.rows } else { c.ops });
            (l.second, count_f64(n))
        })
        .collect()
}

/// The paired seconds of `step` in one round's two runs; `None` when either lacks the step,
/// its start or its per-second lines.
fn round_seconds(base: &LoadedRun, cand: &LoadedRun, step: StepName) -> Option<Vec<PairedSecond>> {
    let b = base.record.step(step)?;
    let c = cand.record.step(step)?;
    let shift = rfc3339_seconds(&c.started_at)? - rfc3339_seconds(&b.started_at)?;
    let (bc, cc) = (counts(&base.timeline, b), counts(&cand.timeline, c));
    if bc.is_empty() || cc.is_empty() {
        return None;
    }
    Some(paired_seconds((&bc, b.seconds), (&cc, c.seconds), shift))
}

/// Keep only `seconds` of the step in a run: its per-second lines cut to them, its rate and
/// measured length taken over them.
fn cut_to(run: &mut LoadedRun, step: StepName, seconds: &[u32], count: f64) {
    run.timeline
        .retain(|l| l.step != step || seconds.contains(&l.second));
    if let Some(s) = run.record.steps.iter_mut().find(|s| s.name == step) {
        let n = count_f64(u64::try_from(seconds.len()).unwrap_or(0));
        s.seconds = n;
        s.throughput = count / n;
    }
}

/// The per-second lines of `step` in the run's timeline (a duet's: those [`cut_round`] kept);
/// `None` when the run has no timeline. What `ibench check` and `matrix report` count against
/// the floor's samples.
pub fn step_samples(run: &LoadedRun, step: StepName) -> Option<usize> {
    if run.timeline.is_empty() {
        return None;
    }
    Some(run.timeline.iter().filter(|l| l.step == step).count())
}

/// Cut every step of one duet round's two runs to the whole seconds both sides ran it: each
/// side's per-second lines cut to them, its rate and measured length taken over them. The
/// problem lines of the steps with no whole second in common (left whole). The one cut
/// `ibench check` and `ibench matrix report` make.
pub fn cut_round(base: &mut LoadedRun, cand: &mut LoadedRun, round: u32) -> Vec<String> {
    let mut problems = Vec::new();
    let steps: Vec<StepName> = base.record.steps.iter().map(|s| s.name).collect();
    for step in steps {
        let Some(seconds) = round_seconds(base, cand, step) else {
            continue;
        };
        if seconds.is_empty() {
            problems.push(format!(
                "round {round} {step}: no whole second both sides ran: judged on its whole steps"
            ));
            continue;
        }
        let bs: Vec<u32> = seconds.iter().map(|s| s.base_second).collect();
        let cs: Vec<u32> = seconds.iter().map(|s| s.candidate_second).collect();
        let bsum: f64 = seconds.iter().map(|s| s.base).sum();
        let csum: f64 = seconds.iter().map(|s| s.candidate).sum();
        cut_to(base, step, &bs, bsum);
        cut_to(cand, step, &cs, csum);
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steady(n: u32, rate: f64) -> Vec<(u32, f64)> {
        (1..=n).map(|s| (s, rate)).collect()
    }

    /// Both sides started together: every second pairs with the same second of the other.
    #[test]
    fn sides_started_together_pair_second_for_second() {
        let p = paired_seconds((&steady(5, 10.0), 5.0), (&steady(5, 20.0), 5.0), 0.004);
        assert_eq!(p.len(), 5);
        assert!(p.iter().all(|s| s.base_second == s.candidate_second));
        let r = round_log_ratio(&p).unwrap();
        assert!((r - 2f64.ln()).abs() < 1e-12);
    }

    /// The base finished its step (a load of so many rows) after 4 s and the candidate ran
    /// 8: only the 4 seconds they shared count, not the candidate's 4 seconds alone with the
    /// host, which ran faster.
    #[test]
    fn the_seconds_a_side_ran_alone_are_left_out() {
        let mut cand = steady(4, 10.0);
        cand.extend((5..=8).map(|s| (s, 30.0)));
        let p = paired_seconds((&steady(4, 10.0), 4.0), (&cand, 8.0), 0.0);
        assert_eq!(p.len(), 4);
        assert_eq!(round_log_ratio(&p), Some(0.0));
    }

    /// The candidate started 2 s after the base: its second 1 is the base's second 3.
    #[test]
    fn a_late_start_shifts_the_pairing() {
        let base: Vec<(u32, f64)> = (1..=6).map(|s| (s, f64::from(s))).collect();
        let p = paired_seconds((&base, 6.0), (&steady(6, 1.0), 6.0), 2.1);
        let pairs: Vec<(u32, u32)> = p
            .iter()
            .map(|s| (s.base_second, s.candidate_second))
            .collect();
        assert_eq!(pairs, [(3, 1), (4, 2), (5, 3), (6, 4)]);
    }

    /// A second past a side's measured end (the tail line of a step) is not a whole second.
    #[test]
    fn seconds_past_the_measured_end_are_left_out() {
        let p = paired_seconds((&steady(5, 1.0), 4.5), (&steady(5, 1.0), 5.0), 0.0);
        assert_eq!(p.len(), 4);
    }

    #[test]
    fn per_second_ratios_skip_idle_seconds_and_no_seconds_give_no_ratio() {
        let p = paired_seconds(
            (&[(1, 0.0), (2, 4.0)], 2.0),
            (&[(1, 3.0), (2, 2.0)], 2.0),
            0.0,
        );
        assert_eq!(per_second_log_ratios(&p), [(0.5f64).ln()]);
        assert_eq!(round_log_ratio(&[]), None);
    }

    /// One round's two runs (the fixture's, qr100 3 s a side): the candidate ran the step a
    /// second longer, alone and at ten times the rate. The cut leaves out that second, so both
    /// sides' rates are taken over the same 3 seconds and come out equal.
    #[test]
    fn a_round_is_cut_to_the_seconds_both_sides_ran() {
        let (runs, problems) =
            crate::report::load::load_runs(&[std::path::PathBuf::from("tests/fixtures/postgres")]);
        assert!(problems.is_empty(), "{problems:?}");
        let qr100: StepName = "qr100".parse().expect("a step");
        let mut base = runs[0].clone();
        let mut cand = runs[0].clone();
        let mut extra = cand
            .timeline
            .iter()
            .rfind(|l| l.step == qr100)
            .expect("a qr100 second")
            .clone();
        extra.second += 1;
        for c in extra.ops.values_mut() {
            c.ops *= 10;
            c.rows *= 10;
        }
        cand.timeline.push(extra);
        if let Some(s) = cand.record.steps.iter_mut().find(|s| s.name == qr100) {
            s.seconds += 1.0;
            s.throughput *= 3.0;
        }
        // The fixture's load steps last under a second: left whole, and said so.
        let problems = cut_round(&mut base, &mut cand, 1);
        assert!(
            !problems.iter().any(|p| p.contains("qr100")),
            "{problems:?}"
        );
        assert!(problems.iter().any(|p| p.contains("l.i0")), "{problems:?}");
        let rate = |r: &LoadedRun| r.record.step(qr100).map(|s| (s.throughput, s.seconds));
        let (b, c) = (rate(&base).expect("qr100"), rate(&cand).expect("qr100"));
        assert_eq!(b, c);
        assert_eq!(b.1, 3.0);
        assert!(
            !cand
                .timeline
                .iter()
                .any(|l| l.step == qr100 && l.second == 4)
        );
    }
}
