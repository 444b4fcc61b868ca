//! The tl;dr a report opens with, in the seeds' style: per run against the base, the range of
//! its relative throughput per step family (writes, range queries, point queries), written
//! from the decided figures only (`report::paint`); the setup difference that explains it
//! (`report::differs`); and the host or noise caveat when there is one.

use super::model::{Comparison, Span, Tldr, TldrFamily, TldrLagLine, TldrLine};
use super::paint::{Paint, of_cell, paint_of_range, undecided};

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
    let spreads = cmp
        .relative
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| c.interval.is_some());
    let caveat = Some(if spreads {
        "A change is decided as `ibench check` decides it, and each relative figure is the ratio it used: the 90% interval of the ratio over the repeats (paired by round where they ran in rounds or as a duet, else Welch's) lies wholly beyond ±5%; no change, wholly inside; a step the host may have moved is not decided.".to_string()
    } else {
        "One run a side: a rate is decided only where the host probes show the host steady across both runs (every CPU and memory figure within ±10% of their median), and then when the 90% interval of the ratio, from each run's per-second rates, lies wholly beyond ±5%; otherwise it is not decided (one run a side: duet rounds, `ibench check --run FILE OUT --duet`, would decide it), nor is a step the host may have moved, or one shorter than 3 s.".to_string()
    });
    let caveat = caveat.map(|c| {
        if cmp.host.flags.is_empty() {
            c
        } else {
            format!("{c} A host-affected step (~) may measure the host rather than the DBMS: rerun it on a quiet host, or interleave the runs, before reading it (section Host).")
        }
    });
    Tldr {
        lines,
        caveat,
        lag_sla,
        failover,
    }
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

/// The run's host caveat: its host warning, or how many of its steps the host may have moved.
fn host_caveat(cmp: &Comparison, label: &str) -> Option<String> {
    let flagged = cmp.host.flags.iter().filter(|f| f.run == label).count();
    let warning = cmp.host.warnings.iter().find(|w| w.run == label);
    match (warning, flagged) {
        (None, 0) => None,
        (Some(w), 0) => Some(format!("Host: {}.", w.text.trim_end_matches('.'))),
        (_, n) => Some(format!("Host: {n} of its steps host-affected (~).")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Colour;

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
