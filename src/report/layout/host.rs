//! The Host section (each run's host probe beside the base's, the warnings, the
//! host-affected and the unclear steps; the screening itself is `report::host`) and the
//! slowdowns inside steps (`report::shift`).

use crate::report::document::{Block, DocCell, DocRow, DocTable};
use crate::report::load::clean_label;
use crate::report::model::{Colour, Comparison};
use crate::report::{host, shift};

/// The host: each run's probe beside the base's, the warnings, and the host-affected steps.
pub fn host(b: &mut Vec<Block>, cmp: &Comparison) {
    let h = &cmp.host;
    if !h.probed()
        && h.flags.is_empty()
        && h.warnings.is_empty()
        && h.unclear.is_empty()
        && h.not_compared.is_empty()
    {
        return;
    }
    b.push(Block::heading(2, "Host"));
    for w in &h.warnings {
        b.push(Block::Warning(format!(
            "{}: {}",
            cmp.key_of(&w.run),
            w.text
        )));
    }
    if h.probed() {
        b.push(Block::Note(format!(
            "The host probe (--host-probe-ms) before and after every step: the median of each figure over the run's probes, a time per unit (larger = slower host), and ×its ratio to the base's. A run is warned about when a figure differs from the base's by more than the probe's own noise: CPU {:.0}%, memory {:.0}%, loopback {:.0}%; fsync is shown only (after a step it waits for the step's own writeback). Steal and iowait: the largest share of the host's CPU time in a step (/proc/stat).",
            h.thresholds.cpu * 100.0,
            h.thresholds.memory * 100.0,
            h.thresholds.loopback * 100.0,
        )));
        b.push(Block::Table(host_table(cmp)));
    }
    if !h.flags.is_empty() {
        let held = h.flags.iter().filter(|f| h.holds_rate(f)).count();
        let mut text = String::new();
        if held > 0 {
            text = format!(
                "{held} step(s) of runs are host-affected: their relative figures end in ~ and are not painted as a DBMS change."
            );
        }
        if held < h.flags.len() {
            text.push_str(&format!(
                "{}{} step(s) of a duet's runs are flagged: their relative throughput is not held to it ({}), their work per op still is.",
                if held > 0 { " " } else { "" },
                h.flags.len() - held,
                crate::stats::decision::DUET_SAME_HOST
            ));
        }
        b.push(Block::Paragraph(text));
        b.push(Block::Fold {
            summary: "Host-affected steps and why".into(),
            blocks: vec![Block::List(flag_lines(cmp, &h.flags))],
        });
    }
    host_notes(b, cmp);
}

/// One line per host flag: `step key: reasons`.
fn flag_lines(cmp: &Comparison, flags: &[host::HostFlag]) -> Vec<String> {
    flags
        .iter()
        .map(|f| {
            format!(
                "{} {}: {}",
                f.step,
                cmp.key_of(&f.run),
                f.reasons.join("; ")
            )
        })
        .collect()
}

/// The steps whose client CPU per op was unclear as a host signal, and those not compared on
/// it (another shape than the base's step), one line per run.
fn host_notes(b: &mut Vec<Block>, cmp: &Comparison) {
    let h = &cmp.host;
    if !h.unclear.is_empty() {
        b.push(Block::Paragraph(format!(
            "{} step(s) are unclear, not flagged: the client's CPU per op moved, but nothing else says the host did.",
            h.unclear.len()
        )));
        b.push(Block::List(flag_lines(cmp, &h.unclear)));
    }
    let mut lines: Vec<(String, String, Vec<String>)> = Vec::new();
    for f in &h.not_compared {
        let why = f.reasons.join("; ");
        match lines.iter_mut().find(|(r, w, _)| *r == f.run && *w == why) {
            Some((.., steps)) => steps.push(f.step.to_string()),
            None => lines.push((f.run.clone(), why, vec![f.step.to_string()])),
        }
    }
    // In the runs' order (stable: a run's reasons keep the order of its first step).
    lines.sort_by_key(|(run, ..)| cmp.labels.iter().position(|l| l == run));
    if !lines.is_empty() {
        b.push(Block::Note(
            "Not comparable on the client's CPU per op (a host signal only between steps of one shape: the client's work per op differs), so never a host verdict:".into(),
        ));
        b.push(Block::List(
            lines
                .iter()
                .map(|(run, why, steps)| format!("{} {}: {why}", cmp.key_of(run), steps.join(", ")))
                .collect(),
        ));
    }
}

/// The steps that slowed down inside themselves: when, how long, who, and the server's
/// evidence.
pub fn shifts(b: &mut Vec<Block>, cmp: &Comparison) {
    if cmp.shifts.is_empty() {
        return;
    }
    b.push(Block::heading(2, "Slowdowns inside steps"));
    b.push(Block::Note(format!(
        "A step whose per-second rate held at one level for a stretch while another stretch of it ran ×{:.1} or more faster (medians; a load step's tail, once its first connections are done, left out). Who slowed down: the DBMS when the server's CPU per op rose ×{:.1} or more in the slow stretch, and ×{:.1} more than ibench's own; the host when other processes took {:.2} more cores or {:.0}% of the CPUs, or ibench's CPU per op rose ×{:.1} and the server's no more than that (the same work costing both sides more: a slower CPU).",
        shift::SHIFT_FACTOR,
        shift::COST_RATIO,
        shift::COST_RATIO,
        shift::OTHERS_CORES,
        shift::OTHERS_SHARE * 100.0,
        shift::COST_RATIO,
    )));
    let items = cmp
        .shifts
        .iter()
        .map(|s| s.describe(Some(cmp.key_of(&s.run))))
        .collect();
    b.push(Block::List(items));
}

/// Rows: runs; columns: the probe's figures (with their ratio to the base's), MHz, steal and
/// iowait.
fn host_table(cmp: &Comparison) -> DocTable {
    use crate::results::probe::ProbeFigure;
    let mut columns: Vec<String> = ProbeFigure::ALL
        .iter()
        .map(|f| f.short().to_string())
        .collect();
    columns.extend(["MHz", "steal max", "iowait max"].map(String::from));
    let rows = cmp
        .host
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut cells: Vec<DocCell> = r
                .figures
                .iter()
                .zip(&r.relative)
                .zip(ProbeFigure::ALL)
                .map(|((v, rel), f)| {
                    let Some(v) = v else {
                        return DocCell::plain("n/a");
                    };
                    let mut c = match rel.filter(|_| i != cmp.base) {
                        Some(rel) => DocCell::plain(format!("{v:.2} ×{rel:.2}")),
                        None => DocCell::plain(format!("{v:.2}")),
                    };
                    if let Some(rel) = rel.filter(|_| i != cmp.base)
                        && let Some(t) = cmp.host.thresholds.of(f)
                        && host::beyond(rel, 1.0, t).is_some()
                    {
                        c.colour = Colour::Grey;
                    }
                    c
                })
                .collect();
            cells.push(DocCell::plain(
                r.cpu_mhz.map_or("n/a".into(), |m| format!("{m:.0}")),
            ));
            cells.push(DocCell::plain(host::pct(r.steal_share_max)));
            cells.push(DocCell::plain(host::pct(r.iowait_share_max)));
            DocRow {
                label: cmp.keys.get(i).cloned().unwrap_or_else(|| r.run.clone()),
                title: Some(clean_label(&r.run)),
                link: None,
                cells,
            }
        })
        .collect();
    DocTable::new("run", columns, rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::host::HostFlag;
    use crate::report::layout::tests::postgres_pair;

    fn flag(step: &str, run: &str, why: &str) -> HostFlag {
        HostFlag {
            step: step.parse().unwrap(),
            run: run.into(),
            reasons: vec![why.into()],
        }
    }

    #[test]
    fn a_flagged_step_is_named_by_its_runs_key_and_the_steps_not_compared_fold_by_reason() {
        let mut cmp = postgres_pair();
        cmp.keys = vec!["A".into(), "B".into()];
        let (base, other) = (cmp.labels[0].clone(), cmp.labels[1].clone());
        cmp.host.flags = vec![flag("l.i1", &other, "steal 12%")];
        assert_eq!(flag_lines(&cmp, &cmp.host.flags), ["l.i1 B: steal 12%"]);
        // The other run's steps first in their order, then the base's: one line per run and
        // reason, in the runs' order.
        cmp.host.not_compared = vec![
            flag("l.i1", &other, "another shape"),
            flag("l.i0", &base, "another shape"),
            flag("l.i2", &other, "another shape"),
        ];
        let mut b = Vec::new();
        host_notes(&mut b, &cmp);
        let Some(Block::List(lines)) = b.last() else {
            panic!("a list: {b:?}");
        };
        assert_eq!(
            lines,
            &["A l.i0: another shape", "B l.i1, l.i2: another shape"]
        );
    }

    #[test]
    fn a_host_affected_step_gets_the_section_and_a_fold_of_why() {
        let mut cmp = postgres_pair();
        cmp.host.flags = vec![flag("l.i1", &cmp.labels[1].clone(), "steal 12%")];
        let mut b = Vec::new();
        host(&mut b, &cmp);
        assert!(matches!(&b[0], Block::Heading { text, .. } if text == "Host"));
        assert!(
            b.iter()
                .any(|x| matches!(x, Block::Fold { summary, .. } if summary == "Host-affected steps and why")),
            "{b:?}"
        );
        let mut none = postgres_pair();
        none.shifts.clear();
        let mut b = Vec::new();
        shifts(&mut b, &none);
        assert!(b.is_empty());
    }
}
