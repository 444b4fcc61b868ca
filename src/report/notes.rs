//! The report's notes about the runs' steps: those that did not complete or whose checks
//! failed, and the settle phases that ran out of their budget.

use super::load::LoadedRun;
use super::model::{CHECK_FAILED, CellNote};
use super::tables::status_note;

/// One line per step that did not complete or whose checks failed, for the report's notes.
pub(super) fn check_failure_lines(runs: &[LoadedRun]) -> Vec<String> {
    runs.iter()
        .flat_map(|r| {
            r.record.steps.iter().flat_map(|s| {
                let unfinished = status_note(s).map(|status| {
                    format!(
                        "{} {}: {status}{} (its figures cover only the part that ran, marked !)",
                        r.label,
                        s.name,
                        s.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
                    )
                });
                let check = s.check_failed().then(|| {
                    format!(
                        "{} {}: {CHECK_FAILED}: {} (the step's figures are kept as measured, marked !)",
                        r.label,
                        s.name,
                        s.check_failure_text()
                    )
                });
                unfinished.into_iter().chain(check)
            })
        })
        .collect()
}

/// One line per settle phase that ran out of its budget, naming what it left and the steps
/// that started from the unsettled server, for the report's notes.
pub(super) fn unsettled_lines(runs: &[LoadedRun]) -> Vec<String> {
    let mut lines = Vec::new();
    for r in runs {
        let steps = &r.record.steps;
        for (i, s) in steps.iter().enumerate() {
            let Some(settle) = &s.settle else { continue };
            let Some(left) = &settle.unsettled else {
                continue;
            };
            let after: Vec<String> = steps[i + 1..]
                .iter()
                .take_while(|n| n.settle.is_none())
                .map(|n| n.name.to_string())
                .collect();
            let started = if after.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} started from an unsettled server (their figures are as measured, noted {})",
                    after.join(", "),
                    CellNote::UnsettledStart
                )
            };
            lines.push(format!(
                "{} {}: the settle phase ran out of its {:.0} s budget with work left ({left}){started}",
                r.label, s.name, settle.planned_seconds
            ));
        }
    }
    lines
}

/// One line when any run was one side of a duet, naming them: their absolute rates are not
/// those of a solo run.
pub(super) fn duet_lines(runs: &[LoadedRun]) -> Vec<String> {
    let sides: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            let d = r.record.duet.as_ref()?;
            Some(format!(
                "{} (round {}, beside {})",
                r.label, d.round, d.partner_label
            ))
        })
        .collect();
    if sides.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "duet: {} ran as one side of a duet (the base and the candidate at the same time on one host): their absolute rates are not those of a solo run, and only seconds both sides ran compare them fairly (ibench check does that)",
        sides.join(", ")
    )]
}
