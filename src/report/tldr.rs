//! The tl;dr a report opens with, in the seeds' style: per run against the base, the range of
//! its relative throughput per step family (writes, range queries, point queries), written
//! from the decided figures only (`report::paint`); the setup difference that explains it
//! (`report::differs`); and the host or noise caveat when there is one.

use super::host::HostFlag;
use super::model::{Comparison, Span, Tldr, TldrFamily, TldrLagLine, TldrLine};
use super::paint::{Paint, of_cell, paint_of_range, undecided};
use crate::stats::decision::{DUET_SAME_HOST, MIN_REPEATS_FOR_NOISE};

/// The tl;dr's family of a step family: the load steps count as writes.
fn tldr_family(family: &str) -> &str {
    if family == "load" { "writes" } else { family }
}

/// `1.20x-2.80x`, or `~1.20x` when both ends read the same.
pub fn range_x(lo: f64, hi: f64) -> String {
    let (a, b) = (format!("{lo:.2}x"), format!("{hi:.2}x"));
    if a == b {
        format!("~{a}")
    } else {
        format!("{a}-{b}")
    }
}

/// The tl;dr of `cmp` (its tables painted, its summary made): with one run, only the lag
/// SLA's failures and the failovers.
pub fn tldr(cmp: &Comparison) -> Tldr {
    let lag_sla = lag_lines(cmp);
    let failover = super::failover::tldr_lines(cmp);
    if cmp.runs.len() < 2 {
        return Tldr {
            lag_sla,
            failover,
            ..Tldr::default()
        };
    }
    let lines = cmp
        .relative
        .rows
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != cmp.base)
        .map(|(_, row)| run_line(cmp, &row.label))
        .collect();
    let caveat = Some(caveat(cmp));
    Tldr {
        lines,
        caveat,
        lag_sla,
        failover,
    }
}

/// How the relative figures are decided when both sides of a comparison hold repeats.
const REPEATS_RULE: &str = "A change is decided as `ibench check` decides it, and each relative figure is the ratio it used: the 90% interval of the ratio over the repeats (paired by round where they ran in rounds or as a duet, else Welch's) lies wholly beyond ±5%; no change, wholly inside; a step the host may have moved is not decided.";

/// How they are decided when a side holds one run.
const ONE_RUN_RULE: &str = "One run a side: a rate is decided only where the host probes show the host steady across both runs (every CPU and memory figure within ±10% of their median), and then when the 90% interval of the ratio, from each run's per-second rates, lies wholly beyond ±5%; otherwise it is not decided (one run a side: duet rounds, `ibench check --run FILE OUT --duet`, would decide it), nor is a step the host may have moved, or one shorter than 3 s.";

/// What holds for every line: the rule that decided the relative figures, by the repeats a
/// side (`Comparison::repeats`: the repeats' rule where both sides of a comparison hold
/// [`MIN_REPEATS_FOR_NOISE`] or more, one run's where a side holds fewer; both sentences when
/// the runs differ in that), then what the host's flags did to them: grey them (`~`), or
/// nothing for a duet's rates.
fn caveat(cmp: &Comparison) -> String {
    let repeats = |i: usize| cmp.repeats.get(i).copied().unwrap_or(1);
    let with_repeats: Vec<bool> = (0..cmp.runs.len())
        .filter(|&i| i != cmp.base)
        .map(|i| repeats(i).min(repeats(cmp.base)) >= MIN_REPEATS_FOR_NOISE)
        .collect();
    let mut parts = Vec::new();
    if with_repeats.contains(&true) {
        parts.push(REPEATS_RULE.to_string());
    }
    if with_repeats.contains(&false) {
        parts.push(ONE_RUN_RULE.to_string());
    }
    let flags = &cmp.host.flags;
    if flags.iter().any(|f| cmp.host.holds_rate(f)) {
        parts.push("A host-affected step (~) may measure the host rather than the DBMS: rerun it on a quiet host, or interleave the runs, before reading it (section Host).".to_string());
    }
    if flags.iter().any(|f| !cmp.host.holds_rate(f)) {
        parts.push(format!("A duet's relative throughput is not held to the host screening's flags: {DUET_SAME_HOST} (section Host lists the flags; its work per op still is)."));
    }
    parts.join(" ")
}

/// A line per run whose replica failed the lag SLA: `maria: replica lag SLA (p99 ≤ 1,000
/// ms) failed in l.i1 (p99 lag 1,234 ms).`, the failure painted red.
fn lag_lines(cmp: &Comparison) -> Vec<TldrLagLine> {
    let Some(sla) = &cmp.lag_sla else {
        return Vec::new();
    };
    cmp.labels
        .iter()
        .filter_map(|label| {
            let failures = super::lag_sla::failures_text(sla, label)?;
            let spans = vec![
                Span::plain(format!("{}: ", cmp.key_of(label))),
                Span {
                    text: format!(
                        "replica lag SLA (p99 ≤ {} ms) failed in {failures}",
                        super::lag_sla::bound_text(sla.bound_ms)
                    ),
                    colour: super::paint::sla(true),
                },
                Span::plain("."),
            ];
            Some(TldrLagLine {
                run: label.clone(),
                text: spans.iter().map(|s| s.text.as_str()).collect(),
                spans,
            })
        })
        .collect()
}

/// One run's line.
fn run_line(cmp: &Comparison, label: &str) -> TldrLine {
    let key = cmp.key_of(label);
    let base = cmp.keys.get(cmp.base).map_or("", String::as_str);
    let families = families(cmp, label);
    let differs = cmp
        .differences
        .iter()
        .find(|d| d.run == label)
        .and_then(|d| {
            let named: Vec<&super::differs::Difference> = d
                .setup
                .causes()
                .filter(|x| x.area != super::differs::Area::Ibench && x.name != "--steps")
                .collect();
            (!named.is_empty()).then(|| super::differs::names_text(&named, 3))
        });
    let caveat = host_caveat(cmp, label);
    let mut head = format!("{key} against {base}");
    if let Some(d) = &differs {
        head.push_str(&format!(" ({d})"));
    }
    head.push_str(": relative throughput ");
    let mut spans = vec![Span::plain(head)];
    for (i, f) in families.iter().enumerate() {
        if i > 0 {
            spans.push(Span::plain("; "));
        }
        spans.push(Span {
            text: family_text(f),
            colour: f.colour,
        });
    }
    if families.is_empty() {
        spans.push(Span::plain("no step in common with the base"));
    }
    spans.push(Span::plain("."));
    if let Some(c) = &caveat {
        spans.push(Span::plain(format!(" {c}")));
    }
    TldrLine {
        run: label.to_string(),
        families,
        differs,
        caveat,
        text: spans.iter().map(|s| s.text.as_str()).collect(),
        spans,
    }
}

/// The run's families, in the order their steps ran.
fn families(cmp: &Comparison, label: &str) -> Vec<TldrFamily> {
    let Some(row) = cmp.relative.rows.iter().find(|r| r.label == label) else {
        return Vec::new();
    };
    let mut order: Vec<&str> = Vec::new();
    for step in &cmp.relative.columns {
        let f = tldr_family(step.family());
        if !order.contains(&f) {
            order.push(f);
        }
    }
    order
        .into_iter()
        .filter_map(|family| {
            let cells: Vec<&super::model::Cell> = row
                .cells
                .iter()
                .zip(&cmp.relative.columns)
                .filter(|(c, s)| tldr_family(s.family()) == family && c.value.is_some())
                .map(|(c, _)| c)
                .collect();
            if cells.is_empty() {
                return None;
            }
            let decided: Vec<f64> = cells
                .iter()
                .filter(|c| !undecided(c))
                .filter_map(|c| c.value)
                .collect();
            let all: Vec<f64> = cells.iter().filter_map(|c| c.value).collect();
            let paints: Vec<Paint> = cells.iter().map(|c| of_cell(c)).collect();
            let range = paint_of_range(&paints);
            Some(TldrFamily {
                family: family.to_string(),
                steps: cells.len(),
                decided: decided.len(),
                relative_min: decided.iter().copied().reduce(f64::min),
                relative_max: decided.iter().copied().reduce(f64::max),
                colour: range.colour,
                measured_min: all.iter().copied().fold(f64::INFINITY, f64::min),
                measured_max: all.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                undecided_reason: range.note.as_ref().map(|n| short_reason(&n.to_string())),
            })
        })
        .collect()
}

/// A note's reason, short: `host-affected` without its signals, `too short` without its
/// detail.
fn short_reason(note: &str) -> String {
    let note = note.strip_prefix("not decided: ").unwrap_or(note);
    note.split(':').next().unwrap_or(note).trim().to_string()
}

/// `writes 1.20x-2.80x`, `range queries ~1.00x (no change)`, `point queries not decided
/// (host-affected)`.
fn family_text(f: &TldrFamily) -> String {
    let (Some(lo), Some(hi)) = (f.relative_min, f.relative_max) else {
        return format!(
            "{} not decided ({}; {} as measured)",
            f.family,
            f.undecided_reason.as_deref().unwrap_or("no figure"),
            range_x(f.measured_min, f.measured_max)
        );
    };
    let mut t = format!("{} {}", f.family, range_x(lo, hi));
    let band = super::diagnosis::NoiseBand::default_band();
    if band.contains(lo) && band.contains(hi) {
        t.push_str(" (no change)");
    }
    if f.decided < f.steps {
        t.push_str(&format!(
            " ({} of {} steps not decided: {})",
            f.steps - f.decided,
            f.steps,
            f.undecided_reason.as_deref().unwrap_or("grey")
        ));
    }
    t
}

/// The run's host caveat: its host warning, or how many of its steps the host may have moved
/// (those whose relative throughput the flag holds: not a duet's).
fn host_caveat(cmp: &Comparison, label: &str) -> Option<String> {
    let (held, waived): (Vec<&HostFlag>, Vec<&HostFlag>) = cmp
        .host
        .flags
        .iter()
        .filter(|f| f.run == label)
        .partition(|f| cmp.host.holds_rate(f));
    let warning = cmp.host.warnings.iter().find(|w| w.run == label);
    match (warning, held.len(), waived.len()) {
        (_, 0, w) if w > 0 => Some(format!(
            "Host: {w} of its steps flagged, its throughput not held to it: {DUET_SAME_HOST}."
        )),
        (None, 0, _) => None,
        (Some(w), 0, _) => Some(format!("Host: {}.", w.text.trim_end_matches('.'))),
        (_, n, _) => Some(format!("Host: {n} of its steps host-affected (~).")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::diagnosis::StepBands;
    use crate::report::model::{CellNote, Colour};
    use crate::results::duet::DuetSide;
    use crate::results::probe::StepHost;
    use crate::stats::decision::{Evidence as Measured, FigureKind};
    use crate::workload::steps::StepName;

    /// The PostgreSQL fixture as a base and a candidate of `repeats` rounds a side (each
    /// step's throughput: the base 100 ± 1, the candidate 80 ± 1, by round), every step of the
    /// candidate flagged by the host screening (steal 20%); `duet`: both are a duet's sides.
    fn rounds_with_every_step_flagged(repeats: usize, duet: bool) -> Comparison {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let (loaded, problems) = crate::report::load::load_runs(&[dir]);
        assert!(problems.is_empty(), "{problems:?}");
        let run = |label: &str, steal: Option<f64>| {
            let mut r = loaded[0].clone();
            r.label = label.into();
            r.record.label = label.into();
            for s in &mut r.record.steps {
                s.host_probe = steal.map(|share| StepHost {
                    before: None,
                    after: None,
                    steal_share: Some(share),
                    iowait_share: None,
                });
            }
            r.record.duet = duet.then(|| DuetSide {
                round: 1,
                slot: 0,
                started_first: true,
                partner_cell: "other".into(),
                partner_label: "other".into(),
                cpus: None,
            });
            r
        };
        let runs = vec![run("base", None), run("cand", Some(0.2))];
        let rounds: Vec<usize> = (1..=repeats).collect();
        let bands = |centre: f64| {
            let values: Vec<f64> = rounds
                .iter()
                .map(|r| centre + if r % 2 == 0 { 1.0 } else { -1.0 })
                .collect();
            let steps = runs[0].record.steps.iter().map(|s| {
                let e = Measured::repeats(&values, FigureKind::Rate).in_rounds(&rounds);
                (s.name, e.with_length(60.0, 60))
            });
            StepBands::default().with_repeats(steps.collect())
        };
        let spreads = if repeats > 1 {
            vec![bands(100.0), bands(80.0)]
        } else {
            Vec::new()
        };
        let cmp =
            crate::report::compare::compare_with_spreads(&runs, Some("base"), Vec::new(), &spreads);
        assert_eq!(cmp.host.flags.len(), cmp.steps.len(), "{:?}", cmp.host);
        cmp
    }

    fn caveat_of(cmp: &Comparison) -> String {
        cmp.tldr.caveat.clone().unwrap_or_default()
    }

    #[test]
    fn the_caveat_follows_the_repeats_a_side_not_the_intervals_shown() {
        // 60 interleaved rounds, every step host-affected: no cell shows an interval, and the
        // caveat is still the repeats' rule, never "one run a side".
        let cmp = rounds_with_every_step_flagged(60, false);
        let cells = &cmp.relative.rows[1].cells;
        assert!(
            cells
                .iter()
                .all(|c| c.interval.is_none() && matches!(c.note, Some(CellNote::HostAffected(_))))
        );
        let c = caveat_of(&cmp);
        assert!(c.starts_with(REPEATS_RULE), "{c}");
        assert!(!c.contains("One run a side"), "{c}");
        assert!(c.contains("A host-affected step (~)"), "{c}");
        // One run a side: the one-run rule.
        let c = caveat_of(&rounds_with_every_step_flagged(1, false));
        assert!(c.starts_with(ONE_RUN_RULE), "{c}");
        // A base of repeats against a single run is judged by the one-run rule too.
        let mut cmp = rounds_with_every_step_flagged(60, false);
        cmp.repeats[1] = 1;
        assert!(caveat(&cmp).starts_with(ONE_RUN_RULE));
    }

    #[test]
    fn a_duets_rates_are_not_held_to_the_host_flags_as_in_check() {
        let cmp = rounds_with_every_step_flagged(60, true);
        let j = cmp
            .relative
            .columns
            .iter()
            .position(|s| *s == "qr100".parse::<StepName>().expect("a step"))
            .expect("qr100");
        let cell = &cmp.relative.rows[1].cells[j];
        // 80 against 100 over 60 paired rounds: decided, red, with the check's words.
        assert_eq!(cell.colour, Colour::Red, "{cell:?}");
        assert!(cell.interval.is_some());
        let note = cell
            .note
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            note.starts_with("not held to the host screening's flag (steal")
                && note.ends_with(": a duet's sides met the same host"),
            "{note}"
        );
        // No ~ anywhere on the throughput: the absolute figure is painted too.
        assert!(
            cmp.relative.rows[1]
                .cells
                .iter()
                .all(|c| c.note.as_ref().is_none_or(|n| n.mark() != "~"))
        );
        let abs = &cmp.absolute.rows[1].cells[j];
        assert!(abs.note.is_none() && abs.colour != Colour::Grey, "{abs:?}");
        // The tl;dr and the summary say so, and carry no host-affected count.
        let c = caveat_of(&cmp);
        assert!(c.starts_with(REPEATS_RULE), "{c}");
        assert!(!c.contains("(~)"), "{c}");
        assert!(
            c.contains("not held to the host screening's flags: a duet's sides met the same host"),
            "{c}"
        );
        let line = &cmp.tldr.lines[0];
        assert!(
            line.text
                .contains("its throughput not held to it: a duet's sides met the same host"),
            "{}",
            line.text
        );
        assert!(cmp.summary.iter().all(|f| f.host_affected == 0));
        // The host flags themselves stay, for the work per op they still hold.
        assert_eq!(cmp.host.flags.len(), cmp.steps.len());
    }

    /// The marks of a step's relative figures that the host moves (every figure but the
    /// throughput, decided in the relative table, and the DBMS's work per op), by figure.
    fn host_moved_marks(cmp: &Comparison) -> Vec<(String, String)> {
        let mut marks = Vec::new();
        for d in &cmp.details {
            let t = crate::report::layout::step::figures_table(cmp, d.step, &d.metrics, true);
            for r in t.rows.iter().filter(|r| {
                r.label != "throughput" && !crate::results::metrics::judged_work(&r.label)
            }) {
                for c in r
                    .cells
                    .iter()
                    .filter(|c| c.text.parse::<f64>().is_ok() || c.text.ends_with('~'))
                {
                    marks.push((format!("{} {}", d.step, r.label), c.text.clone()));
                }
            }
        }
        marks
    }

    #[test]
    fn a_duets_step_figures_stay_held_to_the_host_flags() {
        // Every step of the candidate flagged (steal 20%). A duet's relative throughput is
        // judged all the same (above), from its paired rounds; a step's own figures are one
        // run a side, so its latencies and CPU per op stay held (~), duet or not.
        for duet in [false, true] {
            let marks = host_moved_marks(&rounds_with_every_step_flagged(60, duet));
            assert!(!marks.is_empty());
            assert!(
                marks.iter().all(|(_, t)| t.ends_with('~')),
                "duet {duet}: {marks:?}"
            );
        }
    }

    #[test]
    fn ranges_read_like_the_seeds() {
        assert_eq!(range_x(1.2, 2.8), "1.20x-2.80x");
        assert_eq!(range_x(1.201, 1.204), "~1.20x");
        let f = TldrFamily {
            family: "writes".into(),
            steps: 3,
            decided: 2,
            relative_min: Some(0.98),
            relative_max: Some(1.02),
            colour: Colour::Grey,
            measured_min: 0.5,
            measured_max: 1.02,
            undecided_reason: Some("host-affected".into()),
        };
        assert_eq!(
            family_text(&f),
            "writes 0.98x-1.02x (no change) (1 of 3 steps not decided: host-affected)"
        );
        let none = TldrFamily {
            decided: 0,
            relative_min: None,
            relative_max: None,
            ..f
        };
        assert_eq!(
            family_text(&none),
            "writes not decided (host-affected; 0.50x-1.02x as measured)"
        );
        assert_eq!(
            short_reason("host-affected: steal 12%; CPU ×1.6"),
            "host-affected"
        );
        assert_eq!(
            short_reason("not decided: too short: the measured part lasted 0.3 s"),
            "too short"
        );
    }
}
