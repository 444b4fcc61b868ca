//! The Diagnosis section: what moved with each relative throughput outside the noise band
//! (the diagnoses are `report::diagnosis`'s), a summary per step family and run, then every
//! line, folded.

use crate::report::document::{Block, DocCell, DocRow, DocTable};
use crate::report::load::clean_label;
use crate::report::model::Comparison;

/// The diagnosis: a summary per step family and run, then every line, folded.
pub fn diagnosis(b: &mut Vec<Block>, cmp: &Comparison) {
    if cmp.runs.len() < 2 {
        return;
    }
    b.push(Block::heading(2, "Diagnosis"));
    if !cmp.diagnosis_lead.is_empty() {
        b.push(Block::Paragraph(
            "The setup first: the runs differ in more than the DBMS.".into(),
        ));
        b.push(Block::List(cmp.diagnosis_lead.clone()));
    }
    if !cmp.host.warnings.is_empty() || !cmp.host.flags.is_empty() {
        let runs: Vec<&str> = cmp
            .labels
            .iter()
            .filter(|l| {
                cmp.host.warnings.iter().any(|w| w.run == **l)
                    || cmp.host.flags.iter().any(|f| f.run == **l)
            })
            .map(|l| cmp.key_of(l))
            .collect();
        b.push(Block::Paragraph(format!(
            "The host first: the host's speed differed for {} (section Host), a candidate explanation before any per-op figure below; rerun those steps on a quiet host, or interleave the runs, before blaming the DBMS.",
            runs.join(", ")
        )));
    }
    let mut families: Vec<&str> = Vec::new();
    for s in &cmp.summary {
        if !families.contains(&s.family.as_str()) {
            families.push(&s.family);
        }
    }
    if !families.is_empty() {
        b.push(Block::Note("Per step family and run: the range of relative throughput over the family's steps, and the per-op figure that moved with it most often (as run / base) in the steps outside the noise band (±5%, or the base's spread over repeats).".into()));
        b.push(Block::Table(summary_table(cmp, &families)));
        let mut named: Vec<String> = Vec::new();
        for (figure, ..) in cmp.summary.iter().filter_map(|s| s.mover.as_ref()) {
            let meaning = cmp
                .diagnoses
                .iter()
                .flat_map(|d| &d.movers)
                .find(|m| m.figure == *figure)
                .map_or("", |m| m.meaning.as_str());
            let line = format!("{figure}: {meaning}");
            if !named.contains(&line) {
                named.push(line);
            }
        }
        if !named.is_empty() {
            b.push(Block::Note(format!("Figures: {}.", named.join("; "))));
        }
    }
    if cmp.diagnoses.is_empty() {
        b.push(Block::Paragraph(
            "No relative throughput lies outside the noise band.".into(),
        ));
        return;
    }
    b.push(Block::Fold {
        summary: format!(
            "Details: {} step(s) outside the noise band, the figure that accounts for most of each change first",
            cmp.diagnoses.len()
        ),
        blocks: vec![Block::List(
            cmp.diagnoses
                .iter()
                .map(|d| {
                    let key = cmp
                        .labels
                        .iter()
                        .position(|l| *l == d.run)
                        .and_then(|i| cmp.keys.get(i))
                        .map_or(d.run.as_str(), String::as_str);
                    d.line_for(key)
                })
                .collect(),
        )],
    });
}

/// Rows: runs but the base; per family a column of relative range and one of the top mover.
fn summary_table(cmp: &Comparison, families: &[&str]) -> DocTable {
    let mut columns = Vec::new();
    for f in families {
        columns.push((*f).to_string());
        columns.push(format!("{f}: moved"));
    }
    let rows = (0..cmp.runs.len())
        .filter(|&i| i != cmp.base)
        .map(|i| {
            let label = &cmp.labels[i];
            let mut cells = Vec::new();
            for f in families {
                let s = cmp
                    .summary
                    .iter()
                    .find(|s| s.run == *label && s.family == *f);
                cells.push(s.map_or_else(
                    || DocCell::plain("-"),
                    |s| {
                        let mark = if s.host_affected > 0 { "~" } else { "" };
                        let mut c =
                            DocCell::plain(range_text(s.relative_min, s.relative_max, "") + mark);
                        c.colour = s.colour;
                        c
                    },
                ));
                cells.push(DocCell::plain(
                    s.and_then(|s| s.mover.as_ref())
                        .map_or("-".into(), |(f, lo, hi)| {
                            range_text(*lo, *hi, &format!("{f} ×"))
                        }),
                ));
            }
            DocRow {
                label: cmp.keys[i].clone(),
                title: Some(clean_label(label)),
                link: None,
                cells,
            }
        })
        .collect();
    DocTable::new("run", columns, rows)
}

/// `0.85-0.94`, or `0.91` when both ends are one figure.
fn range_text(lo: f64, hi: f64, prefix: &str) -> String {
    let (a, b) = (format!("{lo:.2}"), format!("{hi:.2}"));
    if a == b {
        format!("{prefix}{a}")
    } else {
        format!("{prefix}{a}-{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::layout::tests::postgres_pair;

    #[test]
    fn a_range_of_one_figure_is_written_once() {
        assert_eq!(range_text(0.85, 0.94, ""), "0.85-0.94");
        assert_eq!(range_text(0.911, 0.913, "cpupq ×"), "cpupq ×0.91");
    }

    #[test]
    fn the_diagnosis_needs_two_runs_and_summarises_every_run_but_the_base() {
        let cmp = postgres_pair();
        let mut b = Vec::new();
        diagnosis(&mut b, &cmp);
        assert!(matches!(&b[0], Block::Heading { text, .. } if text == "Diagnosis"));
        let Some(Block::Table(t)) = b.iter().find(|x| matches!(x, Block::Table(_))) else {
            panic!("a summary table: {b:?}");
        };
        assert_eq!(t.rows.len(), cmp.runs.len() - 1);
        assert!(t.rows.iter().all(|r| r.label != cmp.keys[cmp.base]));
        let mut one = cmp.clone();
        one.runs.truncate(1);
        let mut b = Vec::new();
        diagnosis(&mut b, &one);
        assert!(b.is_empty());
    }
}
