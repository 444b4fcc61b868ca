//! The replica-lag SLA (docs/replication.md), beside the background writers' rate SLA: how
//! far a replica may fall behind its primary during a step. Every step of a run that measured
//! a replica (`--replica-url`) is judged on its heartbeat readings (ten a second): it holds
//! when the step's 99th-percentile lag is at most the bound and the replica answered
//! throughout; a replica lost during the step fails it, from the second it was lost. The
//! bound is the reader's (`--lag-sla-ms` of `ibench report`, `ibench run` and `ibench matrix
//! report`; default [`DEFAULT_LAG_SLA_MS`]) and is not recorded in `run.json`: a report judges
//! the recorded lags against the bound it is given. Runs without a replica have no verdict,
//! and a comparison none of whose runs measured a replica shows nothing of it.

use super::document::{Block, DocCell, DocRow, DocTable};
use super::load::LoadedRun;
use super::model::{Comparison, LagSla, LagVerdict};
use crate::results::{StepRecord, TimelineLine};
use crate::stats::convert::round_to_u64;
use crate::stats::thousands::group;
use crate::workload::steps::StepName;

/// The default bound, ms. A second: well above the heartbeat's resolution (a reading every
/// 100 ms), the smallest lag MariaDB's own `Seconds_Behind_Master` can show, and where
/// replicas part in docs/replication.md's figures (a local PostgreSQL standby stayed under
/// 230 ms in every step; a MariaDB replica fell 2.7 to 14.6 s behind in the write steps). A
/// read on a replica a second stale is where users start to see it.
pub const DEFAULT_LAG_SLA_MS: f64 = 1000.0;

/// A lag in ms for people: grouped whole ms from 100 on, one decimal below.
pub fn format_ms(v: f64) -> String {
    if v >= 100.0 {
        group(round_to_u64(v))
    } else {
        format!("{v:.1}")
    }
}

/// The bound for people: whole ms grouped (`1,000`), a fraction as given (`0.5`).
pub fn bound_text(v: f64) -> String {
    if v.fract() == 0.0 {
        format_ms(v)
    } else {
        format!("{v}")
    }
}

/// The verdict of one step of the run labelled `run` against `bound_ms`, from its
/// replication figures and its lines of the timeline; `None` when the step measured no
/// replica, or neither read a lag nor lost the replica (nothing to judge).
pub fn verdict(
    run: &str,
    step: &StepRecord,
    timeline: &[TimelineLine],
    bound_ms: f64,
) -> Option<LagVerdict> {
    let rep = step.replication.as_ref()?;
    if rep.lag_p99_ms.is_none() && rep.lost_from_second.is_none() {
        return None;
    }
    let lines = timeline.iter().filter(|l| l.step == step.name);
    let read: Vec<f64> = lines.clone().filter_map(|l| l.replica_lag_ms).collect();
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let seconds_over = count(read.iter().filter(|&&v| v > bound_ms).count());
    let over = rep.lag_p99_ms.filter(|&p| p > bound_ms);
    let reason = match (rep.lost_from_second, over) {
        (Some(s), _) => Some(format!("replica lost from {s:.1} s")),
        (None, Some(p)) => Some(format!(
            "p99 lag {} ms over the {} ms bound",
            format_ms(p),
            bound_text(bound_ms)
        )),
        (None, None) => None,
    };
    Some(LagVerdict {
        run: run.to_string(),
        step: step.name,
        passed: reason.is_none(),
        lag_p99_ms: rep.lag_p99_ms,
        lag_max_ms: rep.lag_max_ms,
        seconds_over,
        seconds_read: count(read.len()),
        lost_from_second: rep.lost_from_second,
        reason,
    })
}

/// The lag SLA of `runs` against `bound_ms`; `None` when no run measured a replica.
pub fn judge(runs: &[LoadedRun], bound_ms: f64) -> Option<LagSla> {
    if runs.iter().all(|r| r.record.replica.is_none()) {
        return None;
    }
    let verdicts = runs
        .iter()
        .filter(|r| r.record.replica.is_some())
        .flat_map(|r| {
            r.record
                .steps
                .iter()
                .filter_map(|s| verdict(&r.label, s, &r.timeline, bound_ms))
        })
        .collect();
    Some(LagSla { bound_ms, verdicts })
}

impl LagSla {
    /// The verdicts that failed, of the run labelled `run`.
    pub fn failures<'a>(&'a self, run: &'a str) -> impl Iterator<Item = &'a LagVerdict> {
        self.verdicts
            .iter()
            .filter(move |v| v.run == run && !v.passed)
    }
}

/// The failures of the run labelled `label`, for the tl;dr: `l.i1 (p99 lag 1,234 ms), qr100
/// (replica lost from 3.0 s)`; `None` when every step held.
pub fn failures_text(sla: &LagSla, label: &str) -> Option<String> {
    let parts: Vec<String> = sla
        .failures(label)
        .map(|v| match (v.lost_from_second, v.lag_p99_ms) {
            (Some(s), _) => format!("{} (replica lost from {s:.1} s)", v.step),
            (None, Some(p)) => format!("{} (p99 lag {} ms)", v.step, format_ms(p)),
            (None, None) => v.step.to_string(),
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The section beside the background insert rate: a row per run with a replica (by key), a
/// column per step judged, each cell the step's p99 lag, painted by `report::paint::sla`;
/// nothing when no run measured a replica.
pub fn blocks(cmp: &Comparison) -> Vec<Block> {
    let Some(sla) = &cmp.lag_sla else {
        return Vec::new();
    };
    let steps: Vec<StepName> = cmp
        .steps
        .iter()
        .copied()
        .filter(|s| sla.verdicts.iter().any(|v| v.step == *s))
        .collect();
    let mut runs: Vec<&str> = Vec::new();
    for v in &sla.verdicts {
        if !runs.contains(&v.run.as_str()) {
            runs.push(&v.run);
        }
    }
    if steps.is_empty() {
        return Vec::new();
    }
    let bound = bound_text(sla.bound_ms);
    let rows = runs
        .iter()
        .map(|&run| DocRow {
            label: cmp.key_of(run).to_string(),
            title: Some(run.to_string()),
            link: None,
            cells: steps
                .iter()
                .map(|&step| {
                    sla.verdicts
                        .iter()
                        .find(|v| v.run == run && v.step == step)
                        .map_or_else(
                            || DocCell {
                                missing: true,
                                ..DocCell::plain("n/a")
                            },
                            cell,
                        )
                })
                .collect(),
        })
        .collect();
    let mut table = DocTable::new("run", steps.iter().map(ToString::to_string).collect(), rows);
    table.footer = Some(DocRow {
        label: "bound".into(),
        cells: steps
            .iter()
            .map(|_| DocCell::plain(bound.clone()))
            .collect(),
        ..DocRow::default()
    });
    let failed = sla.verdicts.iter().filter(|v| !v.passed).count();
    let mut b = vec![
        Block::Heading {
            level: 2,
            text: format!("Replica lag SLA (p99 lag ≤ {bound} ms)"),
            anchor: Some("replica-lag-sla".into()),
        },
        Block::Note(format!(
            "Each step's 99th-percentile replica lag, ms, from the heartbeat's readings (ten a second; with fewer than 100 readings in a step, their largest). A step holds the SLA when it is at most the bound (last row; `--lag-sla-ms`, default {} ms) and the replica answered throughout. Red and struck (text: ending in *): over the bound, or the replica lost during the step (the cell says from which second). {failed} of {} step(s) failed.",
            format_ms(DEFAULT_LAG_SLA_MS),
            sla.verdicts.len()
        )),
    ];
    b.push(Block::Table(table));
    b
}

/// A verdict's cell: its p99 lag, or where the replica was lost.
fn cell(v: &LagVerdict) -> DocCell {
    let text = match (v.lost_from_second, v.lag_p99_ms) {
        (Some(s), _) => format!("lost from {s:.1} s"),
        (None, Some(p)) => format_ms(p),
        (None, None) => "n/a".to_string(),
    };
    let title = match &v.reason {
        Some(r) => format!("SLA failed: {r}"),
        None => format!(
            "max {} ms; {} of {} second(s) over the bound",
            v.lag_max_ms.map_or("n/a".into(), format_ms),
            v.seconds_over,
            v.seconds_read
        ),
    };
    DocCell {
        colour: super::paint::sla(!v.passed),
        sla_failed: !v.passed,
        title: Some(title),
        ..DocCell::plain(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Colour;
    use crate::results::replication::StepReplication;

    fn fixture() -> LoadedRun {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let (mut runs, problems) = super::super::load::load_runs(&[dir.join("mariadb-replica")]);
        assert!(problems.is_empty(), "{problems:?}");
        runs.remove(0)
    }

    #[test]
    fn a_step_holds_when_its_p99_is_within_the_bound() {
        let run = fixture();
        // The fixture's l.i1 read 998.3 ms at most (p99 = max: 16 readings).
        let l_i1 = run
            .record
            .step("l.i1".parse::<StepName>().unwrap())
            .unwrap();
        let ok = verdict(&run.label, l_i1, &run.timeline, 1000.0).unwrap();
        assert!(ok.passed, "{ok:?}");
        assert_eq!(ok.reason, None);
        assert_eq!(ok.seconds_over, 0);
        let tight = verdict(&run.label, l_i1, &run.timeline, 500.0).unwrap();
        assert!(!tight.passed);
        assert_eq!(
            tight.reason.as_deref(),
            Some("p99 lag 998 ms over the 500 ms bound")
        );
        // Its two seconds read 716 and 998 ms: both over 500.
        assert_eq!((tight.seconds_over, tight.seconds_read), (2, 2));
        // A bound exactly at the p99 holds.
        let p99 = l_i1.replication.as_ref().unwrap().lag_p99_ms.unwrap();
        assert!(
            verdict(&run.label, l_i1, &run.timeline, p99)
                .unwrap()
                .passed
        );
    }

    #[test]
    fn a_lost_replica_fails_whatever_the_lag_and_a_step_with_nothing_read_is_not_judged() {
        let run = fixture();
        let mut step = run.record.steps[0].clone();
        let rep = step.replication.as_mut().unwrap();
        rep.lost_from_second = Some(0.5);
        let v = verdict(&run.label, &step, &run.timeline, 1e9).unwrap();
        assert!(!v.passed);
        assert_eq!(v.reason.as_deref(), Some("replica lost from 0.5 s"));
        step.replication = Some(StepReplication::default());
        assert_eq!(verdict(&run.label, &step, &run.timeline, 1.0), None);
        step.replication = None;
        assert_eq!(verdict(&run.label, &step, &run.timeline, 1.0), None);
    }

    #[test]
    fn runs_without_a_replica_have_no_sla_and_the_section_paints_failures_red() {
        let mut run = fixture();
        assert!(judge(std::slice::from_ref(&run), 1000.0).is_some());
        let sla = judge(std::slice::from_ref(&run), 250.0).unwrap();
        assert_eq!(sla.verdicts.len(), run.record.steps.len());
        let failed: Vec<String> = sla
            .failures(&run.label)
            .map(|v| v.step.to_string())
            .collect();
        assert_eq!(failed, ["l.i1", "qr1000", "qp1000"]);
        assert_eq!(
            failures_text(&sla, &run.label).unwrap(),
            "l.i1 (p99 lag 998 ms), qr1000 (p99 lag 322 ms), qp1000 (p99 lag 343 ms)"
        );
        let c = cell(&sla.verdicts[2]);
        assert_eq!(
            (c.text.as_str(), c.colour, c.sla_failed),
            ("998", Colour::Red, true)
        );
        let c = cell(&sla.verdicts[0]);
        assert_eq!(
            (c.text.as_str(), c.colour, c.sla_failed),
            ("215", Colour::None, false)
        );
        run.record.replica = None;
        assert!(judge(std::slice::from_ref(&run), 250.0).is_none());
        assert_eq!(
            (bound_text(1000.0), bound_text(0.05), bound_text(250.0)),
            ("1,000".to_string(), "0.05".to_string(), "250".to_string())
        );
    }
}
