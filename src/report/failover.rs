//! The Failover section (docs/failover.md): for the runs whose step lost its primary (driven
//! by ibench with `--failover`, or observed with `--reconnect-for`), the figures of each
//! failover (how long writers and readers could not work, the statements that failed by
//! kind, the reconnects, how long until the rate was back, the latency around the event, and
//! the audit of acknowledged rows on the new primary); in HTML, the step's throughput per
//! second with the loss and the promotion marked; and a tl;dr line per failover. Nothing when
//! no run had one.

use super::document::{Block, DocCell, DocRow, DocTable};
use super::lag_sla::format_ms;
use super::load::LoadedRun;
use super::model::{Comparison, FailoverRow, Span, TldrLagLine};
use super::svg::Mark;
use crate::results::failover::{DrivenBy, KillMethod, StepFailover};
use crate::stats::convert::count_f64;
use crate::stats::thousands::group_f;

/// Every failover of `runs`, in run order then step order.
pub fn rows(runs: &[LoadedRun]) -> Vec<FailoverRow> {
    runs.iter()
        .flat_map(|r| {
            r.record.steps.iter().filter_map(|s| {
                Some(FailoverRow {
                    run: r.label.clone(),
                    step: s.name,
                    failover: s.failover.clone()?,
                })
            })
        })
        .collect()
}

/// The figures, in the order of the section's rows.
const FIGURES: [&str; 14] = [
    "driven by",
    "primary lost at s",
    "promoted at s",
    "writes unavailable s",
    "reads unavailable s",
    "failed: connection lost",
    "failed: read-only",
    "failed: timeout",
    "failed: other",
    "reconnects",
    "rate back after s",
    "p99 / max latency around it, ms",
    "acknowledged rows lost",
    "unacknowledged rows present",
];

/// The section's blocks; empty when no run had a failover. Runs are named by their keys.
pub fn blocks(cmp: &Comparison, runs: &[LoadedRun], charts: bool) -> Vec<Block> {
    if cmp.failovers.is_empty() {
        return Vec::new();
    }
    let mut b = vec![Block::Heading {
        level: 2,
        text: "Failover".to_string(),
        anchor: Some("failover".to_string()),
    }];
    let columns = cmp
        .failovers
        .iter()
        .map(|f| format!("{} ({})", cmp.key_of(&f.run), f.step))
        .collect();
    let cells: Vec<Vec<DocCell>> = cmp.failovers.iter().map(|f| cells(&f.failover)).collect();
    let rows = FIGURES
        .iter()
        .enumerate()
        .map(|(i, figure)| DocRow {
            label: (*figure).to_string(),
            cells: cells.iter().map(|c| c[i].clone()).collect(),
            ..DocRow::default()
        })
        .collect();
    b.push(Block::Table(DocTable::new("figure", columns, rows)));
    let errors: Vec<String> = cmp
        .failovers
        .iter()
        .filter_map(|f| {
            let e = f.failover.error.as_ref()?;
            Some(format!("{} ({}): {e}", cmp.key_of(&f.run), f.step))
        })
        .collect();
    if !errors.is_empty() {
        b.push(Block::List(errors));
    }
    b.push(Block::Note(NOTE.to_string()));
    if charts {
        for f in &cmp.failovers {
            if let Some(run) = runs.iter().find(|r| r.label == f.run) {
                b.extend(chart(cmp.key_of(&f.run), run, f).map(Block::Chart));
            }
        }
    }
    b
}

/// What the figures mean, under the table (docs/failover.md says more).
const NOTE: &str = "Seconds count from the start of the step's measured part. Driven by: ibench (it killed the primary with SIGKILL and promoted the replica, --failover) or observed (an HA manager such as Patroni did; ibench saw its connections break and reconnected, --reconnect-for). Unavailable: from the last statement acknowledged before the loss to the first acknowledged after it, the longest over the clients. Rate back after: from the loss to the first of 3 consecutive seconds each within 10% of the median rate of the (up to) 10 seconds before it. Latency: the step's main operation from 5 s before the loss to 5 s after the writers were back, measured from each operation's intended start. Acknowledged rows lost: keys whose insert the old primary acknowledged before the loss that the new primary does not hold (0 is a synchronous standby's promise); unacknowledged rows present: keys in flight when it died that the new primary holds.";

/// A failover's cells, in the order of [`FIGURES`].
fn cells(f: &StepFailover) -> Vec<DocCell> {
    let secs = |v: Option<f64>, none: &str| match v {
        Some(v) => DocCell::plain(format!("{v:.1}")),
        None => missing(none),
    };
    let count = |n: u64| DocCell::plain(group_f(count_f64(n)));
    let driven = match (f.driven_by, f.kill_method) {
        (DrivenBy::Ibench, KillMethod::Sigkill) => "ibench (SIGKILL)",
        (DrivenBy::Ibench, KillMethod::Unknown) => "ibench",
        (DrivenBy::Observed, _) => "observed",
    };
    let promoted_none = match f.driven_by {
        DrivenBy::Observed => "not seen",
        DrivenBy::Ibench => "never",
    };
    let latency = match (f.latency_p99_us, f.latency_max_us) {
        (Some(p), Some(m)) => DocCell::plain(format!(
            "{} / {}",
            format_ms(p / 1000.0),
            format_ms(m / 1000.0)
        )),
        _ => missing("n/a"),
    };
    let failed = &f.failed_statements;
    let mut out = vec![
        DocCell::plain(driven),
        secs(f.loss_at_second, "no loss"),
        secs(f.promoted_at_second, promoted_none),
        secs(f.writers_unavailable_seconds, "never back"),
        secs(f.readers_unavailable_seconds, "n/a"),
        count(failed.connection_lost),
        count(failed.read_only),
        count(failed.timeout),
        count(failed.other),
        count(f.reconnects),
        secs(f.recovery_seconds, "not back"),
        latency,
    ];
    out.extend(audit_cells(f));
    out
}

/// The audit's two cells: the lost acknowledged rows (red when some were) and the
/// unacknowledged rows found; "not audited" when the audit was not made.
fn audit_cells(f: &StepFailover) -> [DocCell; 2] {
    match &f.audit {
        Some(a) if a.error.is_none() => {
            let mut lost = DocCell::plain(group_f(count_f64(a.acknowledged_rows_lost)));
            lost.colour = super::paint::sla(a.acknowledged_rows_lost > 0);
            lost.title = Some(format!(
                "of {} acknowledged keys audited",
                a.acknowledged_keys_audited
            ));
            let mut present = DocCell::plain(group_f(count_f64(a.unacknowledged_rows_present)));
            present.title = Some(format!(
                "of {} keys in flight",
                a.unacknowledged_keys_audited
            ));
            [lost, present]
        }
        Some(_) => [missing("audit failed"), missing("audit failed")],
        None => [missing("not audited"), missing("not audited")],
    }
}

fn missing(text: &str) -> DocCell {
    DocCell {
        missing: true,
        ..DocCell::plain(text)
    }
}

/// The step's rate per second in `run`, the loss and the promotion marked; `None` when the
/// timeline has no second of the step.
fn chart(key: &str, run: &LoadedRun, f: &FailoverRow) -> Option<String> {
    let step = run.record.steps.iter().find(|s| s.name == f.step)?;
    let op = step.main_op();
    let points: Vec<(f64, f64)> = run
        .timeline
        .iter()
        .filter(|l| l.step == f.step)
        .map(|l| {
            let n = l
                .ops
                .get(op.name())
                .map_or(0, |c| if op.rate_counts_rows() { c.rows } else { c.ops });
            (f64::from(l.second), count_f64(n))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let mut marks = Vec::new();
    if let Some(at) = f.failover.loss_at_second {
        marks.push(Mark {
            x: at,
            label: format!("primary lost, {at:.1} s"),
        });
    }
    if let Some(at) = f.failover.promoted_at_second {
        marks.push(Mark {
            x: at,
            label: format!("promoted, {at:.1} s"),
        });
    }
    let unit = if op.rate_counts_rows() {
        "rows/s"
    } else {
        "ops/s"
    };
    Some(super::svg::line_chart_marked(
        &format!("{key}: {} per second through the failover", f.step),
        ("seconds into the step", unit),
        &[(key, points)],
        &marks,
    ))
}

/// A tl;dr line per failover: `r2: failover in l.i1: 4.2 s without writes, 0 acknowledged
/// rows lost, rate back after 9.0 s.`, painted red when acknowledged rows were lost or the
/// failover did not complete.
pub fn tldr_lines(cmp: &Comparison) -> Vec<TldrLagLine> {
    cmp.failovers
        .iter()
        .map(|row| {
            let f = &row.failover;
            let writes = match f.writers_unavailable_seconds {
                Some(s) => format!("{s:.1} s without writes"),
                None => "writes never came back".to_string(),
            };
            let audit = match &f.audit {
                Some(a) if a.error.is_none() => format!(
                    "{} acknowledged rows lost",
                    group_f(count_f64(a.acknowledged_rows_lost))
                ),
                Some(_) => "the audit failed".to_string(),
                None => "not audited".to_string(),
            };
            let rate = match f.recovery_seconds {
                Some(s) => format!("rate back after {s:.1} s"),
                None => "rate not back by the step's end".to_string(),
            };
            let failed = f.error.is_some()
                || f.writers_unavailable_seconds.is_none()
                || f.audit
                    .as_ref()
                    .is_some_and(|a| a.acknowledged_rows_lost > 0 || a.error.is_some());
            let spans = vec![
                Span::plain(format!("{}: ", cmp.key_of(&row.run))),
                Span {
                    text: format!("failover in {}: {writes}, {audit}, {rate}", row.step),
                    colour: super::paint::sla(failed),
                },
                Span::plain("."),
            ];
            TldrLagLine {
                run: row.run.clone(),
                text: spans.iter().map(|s| s.text.as_str()).collect(),
                spans,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::Block;

    /// A results dir whose run.json has a failover on its l.i1 step. HAND-MADE FOR
    /// RENDERING: the figures are invented to exercise every cell; real figures come from the
    /// integration tests that fail a primary over (tests/failover*.rs).
    fn fixture_with_failover() -> LoadedRun {
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let mut runs = crate::report::load::load_runs(&[fixture]).0;
        let mut run = runs.remove(0);
        let text = include_str!("../../tests/fixtures/failover/step_failover.json");
        let failover: StepFailover = serde_json::from_str(text).expect("the hand-made fixture");
        let step = run
            .record
            .steps
            .iter_mut()
            .find(|s| s.name.to_string() == "l.i1")
            .expect("the fixture's l.i1");
        step.failover = Some(failover);
        run
    }

    #[test]
    fn the_section_shows_every_figure_and_marks_the_chart() {
        let run = fixture_with_failover();
        let runs = vec![run];
        let cmp = crate::report::compare::compare(&runs, None, Vec::new());
        assert_eq!(cmp.failovers.len(), 1);
        let b = blocks(&cmp, &runs, true);
        assert!(matches!(&b[0], Block::Heading { text, .. } if text == "Failover"));
        let Block::Table(t) = &b[1] else {
            panic!("no table: {b:?}")
        };
        assert_eq!(t.rows.len(), FIGURES.len());
        let cell = |label: &str| {
            t.rows
                .iter()
                .find(|r| r.label == label)
                .map(|r| r.cells[0].text.clone())
                .unwrap()
        };
        assert_eq!(cell("driven by"), "ibench (SIGKILL)");
        assert_eq!(cell("writes unavailable s"), "4.2");
        assert_eq!(cell("reads unavailable s"), "n/a");
        assert_eq!(cell("failed: connection lost"), "12");
        assert_eq!(cell("rate back after s"), "9.0");
        assert_eq!(cell("p99 / max latency around it, ms"), "4,300 / 4,410");
        assert_eq!(cell("acknowledged rows lost"), "3");
        assert_eq!(cell("unacknowledged rows present"), "1");
        let lost = t
            .rows
            .iter()
            .find(|r| r.label == "acknowledged rows lost")
            .unwrap();
        assert_eq!(lost.cells[0].colour, crate::report::model::Colour::Red);
        assert!(t.columns[0].contains("(l.i1)"), "{:?}", t.columns);
        let chart = b.iter().find_map(|x| match x {
            Block::Chart(c) => Some(c.clone()),
            _ => None,
        });
        let chart = chart.expect("the throughput chart");
        assert!(chart.contains("primary lost, 1.0 s"), "{chart}");
        assert!(chart.contains("promoted, 1.5 s"), "{chart}");
        assert_eq!(chart.matches("class=\"mark\"").count(), 2);
    }

    #[test]
    fn the_tldr_names_the_gap_the_loss_and_the_recovery() {
        let runs = vec![fixture_with_failover()];
        let cmp = crate::report::compare::compare(&runs, None, Vec::new());
        let lines = tldr_lines(&cmp);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].text.ends_with(
                "4.2 s without writes, 3 acknowledged rows lost, rate back after 9.0 s."
            ),
            "{}",
            lines[0].text
        );
        assert_eq!(lines[0].spans[1].colour, crate::report::model::Colour::Red);
        assert_eq!(cmp.tldr.failover.len(), 1, "the tl;dr carries it");
    }

    /// Every format shows the section: text, Markdown and HTML through the blocks, JSON
    /// through the comparison.
    #[test]
    fn every_format_carries_the_failover() {
        let runs = vec![fixture_with_failover()];
        let cmp = crate::report::compare::compare(&runs, None, Vec::new());
        for format in [
            crate::report::Format::Text,
            crate::report::Format::Markdown,
            crate::report::Format::Html,
            crate::report::Format::Json,
        ] {
            let out = crate::report::render(&cmp, &runs, format, false).unwrap();
            assert!(out.contains("acknowledged"), "{format:?}");
            if format != crate::report::Format::Json {
                assert!(out.contains("Failover"), "{format:?}");
            }
        }
        let json = serde_json::to_value(&cmp).unwrap();
        assert_eq!(
            json["failovers"][0]["failover"]["audit"]["acknowledged_rows_lost"],
            3
        );
    }

    #[test]
    fn no_failover_no_section() {
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let runs = crate::report::load::load_runs(&[fixture]).0;
        let cmp = crate::report::compare::compare(&runs, None, Vec::new());
        assert!(blocks(&cmp, &runs, true).is_empty());
        assert!(tldr_lines(&cmp).is_empty());
    }
}
