//! What a comparison report says, in which order: the comparison turned into document blocks
//! once, for every format. This file is the page's skeleton (the title, the tl;dr, the run
//! table, then each section in its order, the notes and the table of contents); each
//! section that is only layout has a file of its own here: [`throughput`] (the throughput
//! tables and chart, the microbenchmarks, the background insert rate), [`host`] (the host and
//! the slowdowns inside steps), [`diagnosis`], [`step`] (each step's detail and the glossary)
//! and [`charts`] (a step's charts and flamegraphs, HTML only). The sections that come with
//! their own figures (setup, lag SLA, replication, failover) are `report`'s files. Runs are
//! named by their short keys in every table; the run table maps each key to its label, DBMS,
//! build and results dir.

pub mod charts;
pub mod diagnosis;
pub mod host;
pub mod step;
pub mod throughput;

use super::document::{Block, DocCell, DocRow, DocTable};
use super::load::LoadedRun;
use super::model::Comparison;
use super::text::fmt_binary;
use step::Detail;

/// The report's blocks. `charts` draws the SVG charts and flamegraphs (HTML only); `detail`
/// says how each step's detail is shown; `extra` goes before the notes (the matrix's spread
/// over repeats).
pub fn blocks(
    cmp: &Comparison,
    runs: &[LoadedRun],
    charts: bool,
    detail: Detail,
    extra: Vec<Block>,
) -> Vec<Block> {
    let mut b = head(cmp);
    b.extend(super::setup::blocks(cmp));
    if let Some(m) = &cmp.micro {
        throughput::micro(&mut b, cmp, m);
    } else {
        throughput::throughput(&mut b, cmp, charts);
    }
    b.extend(throughput::scaling_blocks(cmp));
    host::host(&mut b, cmp);
    host::shifts(&mut b, cmp);
    throughput::background(&mut b, cmp);
    b.extend(super::lag_sla::blocks(cmp));
    b.extend(super::replication::blocks(cmp, runs, charts));
    b.extend(super::failover::blocks(cmp, runs, charts));
    diagnosis::diagnosis(&mut b, cmp);
    step::details(&mut b, cmp, runs, detail, charts);
    b.extend(extra);
    if detail != Detail::Short {
        step::glossary(&mut b, cmp);
    }
    if !cmp.problems.is_empty() {
        b.push(Block::heading(2, "Notes"));
        b.push(Block::List(cmp.problems.clone()));
    }
    b.push(Block::Note(format!(
        "Written by ibench {}.",
        env!("CARGO_PKG_VERSION")
    )));
    if detail == Detail::Folded {
        with_contents(&mut b);
    }
    b
}

/// A table of contents of the report's sections, put after the tl;dr (after the title when
/// there is none).
fn with_contents(b: &mut Vec<Block>) {
    let entries = super::document::anchor_headings(b);
    let entries: Vec<(String, String)> = entries.into_iter().filter(|(_, a)| a != "tldr").collect();
    if entries.len() < 2 {
        return;
    }
    let after_tldr = b
        .iter()
        .position(|x| matches!(x, Block::Heading { anchor: Some(a), .. } if a == "tldr"))
        .map(|i| {
            i + 1
                + b[i + 1..]
                    .iter()
                    .take_while(|x| !matches!(x, Block::Heading { .. }))
                    .count()
        });
    let at = after_tldr.unwrap_or_else(|| b.len().min(1));
    b.insert(at, Block::Contents(entries));
}

/// The title, the run table and the build warning.
fn head(cmp: &Comparison) -> Vec<Block> {
    let base = cmp.keys.get(cmp.base).map_or("", String::as_str);
    let mut b = vec![Block::heading(1, title(cmp))];
    b.extend(tldr(cmp));
    b.extend([
        Block::Paragraph(if cmp.runs.len() == 1 {
            "One run: nothing to compare. Give `ibench report` two or more results dirs to compare them.".to_string()
        } else {
            let named = if labelled(cmp) {
                "The tables name each run by its key:"
            } else {
                "The runs:"
            };
            format!("{} runs; the base is {base}. {named}", cmp.runs.len())
        }),
    ]);
    b.push(Block::Table(run_table(cmp)));
    if let Some(w) = &cmp.build_warning {
        b.push(Block::Warning(w.clone()));
    }
    if let Some(w) = &cmp.tls_warning {
        b.push(Block::Warning(w.clone()));
    }
    b
}

/// The tl;dr, first: a line per run against the base, each family's range painted, then
/// the runs whose replica failed the lag SLA, the failovers, and the caveat.
fn tldr(cmp: &Comparison) -> Vec<Block> {
    if cmp.tldr.lines.is_empty() && cmp.tldr.lag_sla.is_empty() && cmp.tldr.failover.is_empty() {
        return Vec::new();
    }
    let mut b = vec![Block::Heading {
        level: 2,
        text: "tl;dr".into(),
        anchor: Some("tldr".into()),
    }];
    b.push(Block::PaintedList(cmp.tldr.painted_items()));
    if let Some(c) = &cmp.tldr.caveat {
        b.push(Block::Note(format!(
            "Run / base, from the decided figures only (the relative table below paints them). {c}"
        )));
    }
    b
}

/// Whether some run's key is not its whole label (the run table then maps keys to labels).
fn labelled(cmp: &Comparison) -> bool {
    cmp.runs
        .iter()
        .any(|r| r.key != super::load::clean_label(&r.label))
}

/// The run table: a row per run, its key first. The label column is left out when every key
/// is its run's whole label (a few short labels).
fn run_table(cmp: &Comparison) -> DocTable {
    let labelled = labelled(cmp);
    let mut columns = vec![
        "label",
        "DBMS",
        "build flags",
        "binary",
        "status",
        "results",
    ];
    let tls = cmp.runs.iter().any(|r| r.tls.is_some());
    if tls {
        columns.insert(columns.len() - 2, "TLS");
    }
    if !labelled {
        columns.remove(0);
    }
    DocTable {
        corner: "key".into(),
        columns: columns.into_iter().map(String::from).collect(),
        rows: cmp
            .runs
            .iter()
            .map(|r| {
                let mut cells = vec![
                    r.dbms.clone(),
                    r.build_flags.clone().unwrap_or_else(|| "n/a".into()),
                    fmt_binary(r.binary_bytes),
                    r.status.clone(),
                    r.dir.clone(),
                ];
                if tls {
                    cells.insert(3, r.tls.clone().unwrap_or_else(|| "none".into()));
                }
                if labelled {
                    cells.insert(0, super::load::clean_label(&r.label));
                }
                DocRow {
                    label: r.key.clone(),
                    title: None,
                    link: None,
                    cells: cells.into_iter().map(DocCell::plain).collect(),
                }
            })
            .collect(),
        footer: None,
        text_columns: true,
        columns_are: String::new(),
    }
}

/// The report's title: what the runs are.
pub fn title(cmp: &Comparison) -> &'static str {
    if cmp.micro.is_some() {
        "Microbenchmark results"
    } else {
        "Insert Benchmark results"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PostgreSQL fixture run.
    pub(super) fn postgres_fixture() -> Vec<LoadedRun> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let (runs, problems) = super::super::load::load_runs(&[dir]);
        assert!(problems.is_empty(), "{problems:?}");
        runs
    }

    /// The decimals a number is written with (`1,234.50*` has 2; `n/a` none).
    pub(super) fn decimals_of(text: &str) -> Option<usize> {
        let digits: String = text
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if digits.is_empty() {
            return None;
        }
        Some(digits.split_once('.').map_or(0, |(_, f)| f.len()))
    }

    /// The two PostgreSQL fixture runs compared, the first the base.
    pub(super) fn postgres_pair() -> Comparison {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let (runs, problems) = super::super::load::load_runs(&[
            dir.join("postgres"),
            dir.join("postgres-commit-delay"),
        ]);
        assert!(problems.is_empty(), "{problems:?}");
        super::super::compare::compare(&runs, None, Vec::new())
    }

    #[test]
    fn two_runs_fit_about_150_lines_by_default_and_details_add_the_steps() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let dirs = [
            fixtures.join("postgres"),
            fixtures.join("postgres-commit-delay"),
        ];
        let short = super::super::render_dirs_with(
            &dirs,
            None,
            super::super::Format::Text,
            false,
            false,
            super::super::lag_sla::DEFAULT_LAG_SLA_MS,
        )
        .unwrap()
        .text;
        let full = super::super::render_dirs(&dirs, None, super::super::Format::Text, false)
            .unwrap()
            .text;
        let lines = short.lines().count();
        assert!(lines <= 150, "{lines} lines:\n{short}");
        assert!(
            short.contains("== tl;dr") && short.contains("--details"),
            "{short}"
        );
        assert!(!short.contains("latency: % of operations per bucket"));
        assert!(full.contains("latency: % of operations per bucket"));
        assert!(full.lines().count() > 2 * lines);
    }
}
