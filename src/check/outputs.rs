//! What `ibench check` writes: text on the terminal, Markdown for a pull request (also appended
//! to `$GITHUB_STEP_SUMMARY` when that is set), JSON, and JUnit XML for CI test reporters.

use std::io::Write;

use anyhow::{Context, Result};

use super::model::{CheckReport, PairReport};
use super::options::CheckOptions;
use super::verdicts::{Judge, Reason, StepVerdict, Verdict};
use crate::report::text::group_f;
use crate::report::{Format, escape};
use crate::stats::decision::{FigureKind, Method};

/// Print the report in the chosen format, write `--junit`, append the step summary.
pub fn write(report: &CheckReport, args: &CheckOptions) -> Result<()> {
    if let Some(path) = &args.junit {
        std::fs::write(path, junit(report))
            .with_context(|| format!("cannot write {}; choose another --junit", path.display()))?;
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .with_context(|| {
                format!(
                    "cannot append to GITHUB_STEP_SUMMARY ({}); unset it or fix the path",
                    std::path::Path::new(&summary).display()
                )
            })?;
        f.write_all(markdown(report).as_bytes())
            .context("cannot append to GITHUB_STEP_SUMMARY")?;
    }
    let text = match args.format {
        Format::Text => text(report),
        Format::Markdown => markdown(report),
        Format::Json => serde_json::to_string_pretty(report)? + "\n",
        other => anyhow::bail!(
            "ibench check writes text, markdown or json, not {}: choose one of them with --format",
            other.name()
        ),
    };
    match crate::console::print_out(&text) {
        // A reader that went away (`ibench check … | head`) leaves the verdict's exit code.
        Err(e) if crate::console::is_broken_pipe(&e) => Ok(()),
        other => other,
    }
}

fn figure(v: Option<f64>) -> String {
    v.map_or_else(
        || "-".into(),
        |v| {
            if v >= 100.0 {
                group_f(v)
            } else {
                format!("{v:.1}")
            }
        },
    )
}

/// The geometric mean of the values above 0, the figure the change divides.
fn geometric_mean(values: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| **v > 0.0 && v.is_finite())
        .map(|v| v.ln())
        .collect();
    (!logs.is_empty() && logs.len() == values.len())
        .then(|| (logs.iter().sum::<f64>() / crate::stats::usize_f64(logs.len())).exp())
}

/// A ratio as the reports write it: `0.89`.
fn ratio_text(r: f64) -> String {
    format!("{r:.2}")
}

/// The cells of a verdict's row: step, figure, kind, unit, base, candidate (each the
/// geometric mean of its repeats, whose ratio is the change), change (the ratio the verdict
/// used, candidate / base, as the reports write it), its interval, the method, verdict.
fn cells(p: &PairReport, v: &StepVerdict) -> Vec<String> {
    let j = &v.judgement;
    let verdict = match j.reason {
        Some(r) => format!("{}: {}", j.verdict.text(), r.text()),
        None => j.verdict.text().to_string(),
    };
    vec![
        v.step.to_string(),
        v.figure.text(),
        v.kind.text().to_string(),
        v.unit.clone(),
        format!("{} (n={})", figure(geometric_mean(&v.base)), v.base.len()),
        format!(
            "{} (n={})",
            figure(geometric_mean(&v.candidate)),
            v.candidate.len()
        ),
        j.ratio.map_or_else(|| "-".into(), ratio_text),
        j.interval.map_or_else(
            || "-".into(),
            |(lo, hi)| format!("{} .. {}", ratio_text(lo), ratio_text(hi)),
        ),
        method_text(p, v),
        verdict,
    ]
}

/// The method a verdict's interval came from, as the method column names it: `paired`,
/// `Welch`, `single run`; `duet, paired` for a duet's rounds (their rates over the seconds both
/// sides ran); `single run, steady host` for a rate one run a side decided.
pub(super) fn method_text(p: &PairReport, v: &StepVerdict) -> String {
    let Some(m) = v.judgement.method else {
        return "-".into();
    };
    match m {
        Method::Paired if p.duet => format!("duet, {}", m.text()),
        Method::PerSecond
            if v.kind == FigureKind::Rate && v.judgement.reason != Some(Reason::OneRun) =>
        {
            format!("{}, steady host", m.text())
        }
        _ => m.text().to_string(),
    }
}

fn header(report: &CheckReport) -> Vec<String> {
    let ci = format!("{:.0}% CI", (1.0 - 2.0 * report.rules.alpha) * 100.0);
    [
        "step",
        "figure",
        "kind",
        "unit",
        "base",
        "candidate",
        "change",
        &ci,
        "method",
        "verdict",
    ]
    .map(String::from)
    .to_vec()
}

/// `PostgreSQL 15.14 on (candidate) against PostgreSQL 15.14 base (base) (group / workload)`.
fn pair_title(p: &PairReport) -> String {
    let within = if p.title.is_empty() {
        String::new()
    } else {
        format!(" ({})", p.title)
    };
    format!(
        "{} (candidate) against {} (base){within}",
        p.candidate, p.base
    )
}

/// The lines under a pair's table: what the server differs in, the notes of verdicts that
/// need one, the repeats left out or flagged by the host screening, the problems.
fn pair_notes(p: &PairReport) -> Vec<String> {
    let mut notes = Vec::new();
    let diffs: Vec<String> = p.differences.iter().map(|d| d.text()).collect();
    notes.push(if diffs.is_empty() {
        "the server does not differ (same DBMS, build and settings)".to_string()
    } else {
        format!("the server differs in: {}", diffs.join(", "))
    });
    notes.extend(decided_by(p));
    // A note is said once, naming every figure it holds for (a step too short once for all
    // its figures).
    let mut said: Vec<(String, Vec<String>)> = Vec::new();
    let mut say = |name: String, text: String| match said.iter_mut().find(|(t, _)| *t == text) {
        Some((_, names)) => {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        None => said.push((text, vec![name])),
    };
    for v in &p.verdicts {
        if v.judgement.reason == Some(Reason::TooShort) {
            say(
                v.step.to_string(),
                format!("too short: {}", v.judgement.detail),
            );
        } else if v.judgement.verdict != Verdict::NoChange || !v.repeat_notes.is_empty() {
            say(v.name(), v.judgement.detail.clone());
        }
        for l in &v.repeat_notes {
            say(v.name(), l.clone());
        }
    }
    notes.extend(
        said.into_iter()
            .map(|(text, names)| format!("{}: {text}", names.join(", "))),
    );
    notes.extend(p.problems.iter().cloned());
    notes.extend(p.next_step.iter().cloned());
    notes
}

fn rules_line(report: &CheckReport) -> String {
    let r = &report.rules;
    format!(
        "Base and candidate: the geometric mean of the repeats; change: the ratio candidate / base the verdict used. No change: its {level:.0}% interval inside ±{t:.0}%, by the method named: paired (a t interval of the per-round ratios, where the repeats ran interleaved), duet, paired (the same, on duet rounds whose rates are taken over the seconds both sides ran), Welch (Welch's t over the repeats' logs), single run (a run's per-second samples by batch means; for a rate only where the host probes showed the host steady between the runs, named single run, steady host; else cannot tell: one run a side). A regression: the whole interval beyond -{t:.0}% (+{t:.0}% for a latency or a cost). Anything else cannot tell. Steps shorter than {s} s are too short. Judged: {judge}.",
        level = (1.0 - 2.0 * r.alpha) * 100.0,
        t = r.threshold * 100.0,
        s = r.floor.seconds,
        judge = match r.judge {
            Judge::All => "rates and work per op",
            Judge::Rates => "rates and latencies only (--judge rates)",
            Judge::Work => "work per op only (--judge work)",
        }
    )
}

/// Per step whose figures of one kind decided while those of the other could not: which kind
/// decided (`l.i0: decided on work: walbpi +3.1% REGRESSED; rate/latency cannot tell:
/// throughput (too noisy)`).
fn decided_by(p: &PairReport) -> Vec<String> {
    let mut out = Vec::new();
    let mut steps: Vec<_> = p.verdicts.iter().map(|v| v.step).collect();
    steps.dedup();
    for step in steps {
        let of = |kind: FigureKind| -> Vec<&StepVerdict> {
            p.verdicts
                .iter()
                .filter(|v| v.step == step && v.kind == kind)
                .collect()
        };
        let (work, rate) = (of(FigureKind::Work), of(FigureKind::Rate));
        let decided = |vs: &[&StepVerdict]| vs.iter().any(|v| v.judgement.decided());
        let open = |vs: &[&StepVerdict]| vs.iter().any(|v| !v.judgement.decided());
        let (by, not) = if decided(&work) && open(&rate) {
            (work, rate)
        } else if decided(&rate) && open(&work) {
            (rate, work)
        } else {
            continue;
        };
        let said: Vec<String> = by
            .iter()
            .filter(|v| v.judgement.decided())
            .map(|v| {
                let change = v
                    .judgement
                    .ratio
                    .map_or_else(String::new, |r| format!(" {r:.2}x"));
                format!("{}{change} {}", v.figure.text(), v.judgement.verdict.text())
            })
            .collect();
        let unsaid: Vec<String> = not
            .iter()
            .filter(|v| !v.judgement.decided())
            .map(|v| {
                format!(
                    "{} ({})",
                    v.figure.text(),
                    v.judgement.reason.map_or("", |r| r.text())
                )
            })
            .collect();
        out.push(format!(
            "{step}: decided on {}: {}; {} cannot tell: {}",
            by[0].kind.text(),
            said.join(", "),
            not[0].kind.text(),
            unsaid.join(", ")
        ));
    }
    out
}

/// Terminal text: per pair a table, then its notes; the summary and exit code last.
pub fn text(report: &CheckReport) -> String {
    let mut out = String::new();
    for p in &report.pairs {
        out.push_str(&format!(
            "ibench check: {}\n{} base run(s), {} candidate run(s)\n\n",
            pair_title(p),
            p.base_repeats,
            p.candidate_repeats
        ));
        let mut rows = vec![header(report)];
        rows.extend(p.verdicts.iter().map(|v| cells(p, v)));
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        out.push('\n');
        for n in pair_notes(p) {
            out.push_str(&format!("- {n}\n"));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "{}\nresult: {} (exit {})\n",
        rules_line(report),
        report.summary,
        report.exit_code
    ));
    out
}

/// Markdown: a heading with the result, then per pair a table and its notes.
pub fn markdown(report: &CheckReport) -> String {
    let mark = match report.exit_code {
        0 => "✅",
        1 => "❌",
        _ => "⚠️",
    };
    let mut out = format!(
        "## ibench check {mark} {}\n\n",
        escape::markdown(&report.summary)
    );
    for p in &report.pairs {
        out.push_str(&format!(
            "### {}\n\n{} base run(s), {} candidate run(s).\n\n",
            escape::markdown(&pair_title(p)),
            p.base_repeats,
            p.candidate_repeats
        ));
        let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let escaped = |cells: Vec<String>| {
            cells
                .iter()
                .map(|c| escape::markdown(c))
                .collect::<Vec<_>>()
        };
        out.push_str(&row(escaped(header(report))));
        out.push_str(&format!("|{}\n", "---|".repeat(header(report).len())));
        for v in &p.verdicts {
            let mut c = escaped(cells(p, v));
            if v.judgement.verdict == Verdict::Regressed
                && let Some(last) = c.last_mut()
            {
                *last = format!("**{last}**");
            }
            out.push_str(&row(c));
        }
        out.push('\n');
        for n in pair_notes(p) {
            out.push_str(&format!("- {}\n", escape::markdown(&n)));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "{}\n\nExit code {}.\n",
        escape::markdown(&rules_line(report)),
        report.exit_code
    ));
    out
}

/// JUnit XML: a test suite per pair, a test case per step and figure; a regression is a
/// failure, a step that cannot tell is skipped.
pub fn junit(report: &CheckReport) -> String {
    let count = |p: &PairReport, v: Verdict| {
        p.verdicts
            .iter()
            .filter(|s| s.judgement.verdict == v)
            .count()
    };
    let total: usize = report.pairs.iter().map(|p| p.verdicts.len()).sum();
    let failures: usize = report
        .pairs
        .iter()
        .map(|p| count(p, Verdict::Regressed))
        .sum();
    let skipped: usize = report
        .pairs
        .iter()
        .map(|p| count(p, Verdict::CannotTell))
        .sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ibench check\" tests=\"{total}\" failures=\"{failures}\" skipped=\"{skipped}\">\n"
    );
    for p in &report.pairs {
        let suite = escape::xml(&pair_title(p));
        out.push_str(&format!(
            "  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
            p.verdicts.len(),
            count(p, Verdict::Regressed),
            count(p, Verdict::CannotTell)
        ));
        for v in &p.verdicts {
            let c = cells(p, v);
            let message = escape::xml(&format!(
                "{}: {} -> {} {}, ratio {} ({})",
                c[9], c[4], c[5], v.unit, c[6], c[8]
            ));
            let detail = escape::xml(&v.judgement.detail);
            out.push_str(&format!(
                "    <testcase classname=\"{suite}\" name=\"{}\">",
                escape::xml(&v.name())
            ));
            match v.judgement.verdict {
                Verdict::Regressed => out.push_str(&format!(
                    "<failure message=\"{message}\" type=\"regression\">{detail}</failure>"
                )),
                Verdict::CannotTell => {
                    out.push_str(&format!("<skipped message=\"{message}: {detail}\"/>"));
                }
                _ => out.push_str(&format!("<system-out>{message}: {detail}</system-out>")),
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
