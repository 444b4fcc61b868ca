//! The throughput sections: the absolute and the relative throughput of the insert
//! benchmark's steps (and the relative chart, HTML only), or the microbenchmarks' tables in
//! their published groups; the throughput per client and the scaling efficiency when the
//! runs' clients differ; and the background insert rate of the query steps. The comparison's
//! tables become document tables here (a row per run named by its key, or a column per run),
//! each cell written with its column's decimals and as the comparison painted it, the marks
//! its cells carry explained once under it.

use crate::report::document::{Block, DocCell, DocRow, DocTable};
use crate::report::model::{Cell, CellNote, Comparison, MicroView, StepRows, Table, grouped};
use crate::report::paint::undecided;
use crate::report::svg;

/// What the colours of a relative throughput table mean (`report::paint`).
const RELATIVE_COLOURS: &str = "Throughput / the base's, painted by the rule of `ibench check`: red or green only when the 90% interval of the ratio (over the repeats, paired by round where they ran interleaved, or from each run's per-second rates where the host probes show the host steady) lies wholly below 0.95 or above 1.05; grey otherwise: no change, or not decided (marked).";

/// A comparison cell as a document cell; a rate or a count with its column's `decimals`.
fn doc_cell(c: &Cell, ratio: bool, decimals: usize) -> DocCell {
    DocCell {
        text: cell_text_with(c, ratio, decimals),
        colour: c.colour,
        sla_failed: c.value.is_some() && c.note == Some(CellNote::SlaFailed),
        partial: partial_note(c).map(ToString::to_string),
        missing: c.value.is_none(),
        title: c.note.as_ref().map(ToString::to_string),
        shade: None,
        links: Vec::new(),
    }
}

/// A table whose rows are runs: each row named by its key (the label on hover).
fn runs_as_rows(cmp: &Comparison, t: &Table, ratio: bool) -> DocTable {
    runs_as_rows_by(cmp, t, &|c, decimals| doc_cell(c, ratio, decimals))
}

/// A table whose columns are runs (microbenchmarks as rows): the columns named by key.
fn runs_as_columns(cmp: &Comparison, t: &StepRows, ratio: bool) -> DocTable {
    DocTable {
        corner: "microbenchmark".into(),
        columns: cmp.keys.clone(),
        columns_are: "run".into(),
        rows: t
            .rows
            .iter()
            .map(|r| DocRow {
                label: r.label.to_string(),
                title: None,
                link: None,
                cells: {
                    // A microbenchmark's row holds one figure over the runs: one precision.
                    let decimals = column_decimals(r.cells.iter().filter_map(|c| c.value));
                    r.cells
                        .iter()
                        .map(|c| doc_cell(c, ratio, decimals))
                        .collect()
                },
            })
            .collect(),
        footer: None,
        text_columns: false,
    }
}

/// The marks a table's cells carry, explained once under it (only those it uses).
fn marks_note(t: &DocTable) -> Option<Block> {
    let cells = || t.rows.iter().flat_map(|r| &r.cells);
    let mut parts = Vec::new();
    if cells().any(|c| c.sla_failed) {
        parts.push("a struck figure (text: ending in *) failed its background-insert SLA: the background inserts missed 95% of the target");
    }
    if cells().any(|c| c.text.ends_with('~')) {
        parts.push("a relative figure ending in ~ is host-affected: the host probe or the run's own signals say the host's speed differed (section Host), so it is not painted as a DBMS change");
    }
    if cells().any(|c| c.text.ends_with('?')) {
        parts.push("a relative figure ending in ? is not decided: its interval reaches both inside and beyond ±5% (too noisy), its step is too short to judge (under 3 s or 3 per-second samples), or it is a rate of one run a side on a host nothing showed steady (one run a side: duet rounds, `ibench check --run FILE OUT --duet`, would decide it); the HTML's hover and the JSON say why");
    }
    if cells().any(|c| c.partial.is_some()) {
        parts.push("a figure marked ! or ⚠ covers only the part of its step that ran (the step failed or was interrupted), or a check after its step failed (the figure is as measured; the notes say why)");
    }
    (!parts.is_empty()).then(|| Block::Note(capitalised(&(parts.join("; ") + "."))))
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn push_table(b: &mut Vec<Block>, t: DocTable) {
    let note = marks_note(&t);
    b.push(Block::Table(t));
    b.extend(note);
}

/// The insert benchmark's absolute and relative throughput, and the relative chart.
pub fn throughput(b: &mut Vec<Block>, cmp: &Comparison, charts: bool) {
    b.push(Block::heading(2, "Absolute throughput"));
    b.push(Block::Note("Inserted rows/s for l.i0, l.i1, l.i2; indexed rows/s for l.x; queries/s for the query steps. Green: top quarter of the column; red: bottom quarter (none when min ≥ 0.8 × max).".into()));
    push_table(b, runs_as_rows(cmp, &cmp.absolute, false));
    if cmp.runs.len() < 2 {
        return;
    }
    b.push(Block::heading(2, "Relative to the base"));
    b.push(Block::Note(RELATIVE_COLOURS.into()));
    push_table(b, runs_as_rows(cmp, &cmp.relative, true));
    if charts {
        // Each bar as the relative table paints its figure: undecided ones hatched.
        let values: Vec<Vec<Option<svg::Bar>>> = cmp
            .relative
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                r.cells
                    .iter()
                    .map(|c| {
                        Some(svg::Bar {
                            value: c.value?,
                            undecided: i != cmp.base && undecided(c),
                            interval: c.interval,
                        })
                    })
                    .collect()
            })
            .collect();
        let keys: Vec<&str> = cmp.keys.iter().map(String::as_str).collect();
        let steps: Vec<String> = cmp.steps.iter().map(ToString::to_string).collect();
        b.push(Block::Chart(svg::bar_chart(
            "Throughput per step, relative to the base",
            "relative throughput",
            &steps,
            &keys,
            &values,
        )));
    }
}

/// The microbenchmark tables in their published groups.
pub fn micro(b: &mut Vec<Block>, cmp: &Comparison, m: &MicroView) {
    let by_group = |b: &mut Vec<Block>, t: &StepRows, ratio: bool| {
        for (group, part) in micro_groups(t) {
            b.push(Block::heading(3, group));
            push_table(b, runs_as_columns(cmp, &part, ratio));
        }
    };
    b.push(Block::heading(2, "Microbenchmarks: operations/s"));
    b.push(Block::Note(
        "A scan's figure is rows/s. Green: the top quarter of a microbenchmark's figures over the runs; red: the bottom quarter.".into(),
    ));
    by_group(b, &m.absolute, false);
    if cmp.runs.len() > 1 {
        b.push(Block::heading(2, "Relative to the base"));
        b.push(Block::Note(RELATIVE_COLOURS.into()));
        by_group(b, &m.relative, true);
    }
    for (name, meaning, t) in &m.per_op {
        b.push(Block::heading(2, &format!("{name}: {meaning}")));
        by_group(b, t, true);
    }
}

/// The background insert rates of the query steps, with the targets as the last row.
pub fn background(b: &mut Vec<Block>, cmp: &Comparison) {
    if cmp.background.columns.is_empty() {
        return;
    }
    b.push(Block::heading(2, "Background insert rate (rows/s)"));
    b.push(Block::Note(
        "Red: below 95% of the target (last row).".into(),
    ));
    // The targets share their column's decimals: the column's values and its target are
    // one kind of number.
    let decimals: Vec<usize> = (0..cmp.background.columns.len())
        .map(|j| {
            let target = cmp.background_targets.get(j).copied().flatten();
            column_decimals(
                cmp.background
                    .rows
                    .iter()
                    .filter_map(|r| r.cells.get(j).and_then(|c| c.value))
                    .chain(target),
            )
        })
        .collect();
    let mut t = runs_as_rows_with(cmp, &cmp.background, &decimals, &|c, d| {
        doc_cell(c, false, d)
    });
    t.footer = Some(DocRow {
        label: "target".into(),
        title: None,
        link: None,
        cells: cmp
            .background_targets
            .iter()
            .zip(&decimals)
            .map(|(v, &d)| DocCell::plain(v.map_or("-".into(), |v| grouped(v, d))))
            .collect(),
    });
    push_table(b, t);
}

/// A table whose rows are runs, as a document table: each row named by the run's key (its
/// label on hover), each cell written by `cell`.
fn runs_as_rows_by(
    cmp: &Comparison,
    t: &Table,
    cell: &dyn Fn(&Cell, usize) -> DocCell,
) -> DocTable {
    let decimals: Vec<usize> = (0..t.columns.len())
        .map(|j| {
            column_decimals(
                t.rows
                    .iter()
                    .filter_map(|r| r.cells.get(j).and_then(|c| c.value)),
            )
        })
        .collect();
    runs_as_rows_with(cmp, t, &decimals, cell)
}

/// [`runs_as_rows_by`] with each column's decimals given (a column whose footer shares them).
fn runs_as_rows_with(
    cmp: &Comparison,
    t: &Table,
    decimals: &[usize],
    cell: &dyn Fn(&Cell, usize) -> DocCell,
) -> DocTable {
    DocTable {
        corner: "run".into(),
        columns: t.columns.iter().map(ToString::to_string).collect(),
        rows: t
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| DocRow {
                label: cmp.keys.get(i).cloned().unwrap_or_else(|| r.label.clone()),
                title: Some(crate::report::load::clean_label(&r.label)),
                link: None,
                cells: r
                    .cells
                    .iter()
                    .zip(decimals)
                    .map(|(c, &d)| cell(c, d))
                    .collect(),
            })
            .collect(),
        footer: None,
        text_columns: false,
        columns_are: String::new(),
    }
}

/// Blocks of the throughput per client and the scaling efficiency, after the relative table.
pub fn scaling_blocks(cmp: &Comparison) -> Vec<Block> {
    let Some(sc) = &cmp.scaling else {
        return Vec::new();
    };
    let rows = |t: &Table, ratio: bool| {
        runs_as_rows_by(cmp, t, &|c, decimals| {
            let mut d = DocCell::plain(cell_text_with(c, ratio, decimals));
            d.colour = c.colour;
            d
        })
    };
    vec![
        Block::Heading {
            level: 2,
            text: "Per client and scaling".into(),
            anchor: None,
        },
        Block::Note("The runs differ in --clients. Throughput per client: the step's throughput / its clients.".into()),
        Block::Table(rows(&sc.per_client, false)),
        Block::Note("Scaling efficiency: throughput / (the base's throughput × clients / the base's clients); 1.00 is perfect scaling. Painted as the relative table is: red below 0.95, green above 1.05, grey between or when not decided (~ host-affected).".into()),
        Block::Table(rows(&sc.efficiency, true)),
    ]
}

/// A cell's value as text with `decimals` for a rate or a count (a column's, from
/// [`column_decimals`], so that a column never mixes them); ratios always with 2.
fn cell_text_with(c: &Cell, ratio: bool, decimals: usize) -> String {
    let mark = c.note.as_ref().map_or("", CellNote::mark);
    match c.value {
        None => c
            .note
            .as_ref()
            .map_or_else(|| "-".into(), ToString::to_string),
        Some(v) if ratio => format!("{v:.2}{mark}"),
        Some(v) => grouped(v, decimals) + mark,
    }
}

/// The note of a cell whose figure needs a mark: it covers only part of its step (the step
/// failed, was interrupted, or was still running when the run ended), or a check after the
/// step failed (the figure is as measured).
fn partial_note(c: &Cell) -> Option<&CellNote> {
    c.note
        .as_ref()
        .filter(|n| c.value.is_some() && n.is_partial())
}

/// A microbenchmark table cut into its published groups (`load`, `point queries`, `range
/// queries`, `writes`), each with the rows of its microbenchmarks.
fn micro_groups(t: &StepRows) -> Vec<(&'static str, StepRows)> {
    let mut out: Vec<(&'static str, StepRows)> = Vec::new();
    for row in &t.rows {
        let g = row.label.family();
        match out.last_mut() {
            Some((last, table)) if *last == g => table.rows.push(row.clone()),
            _ => out.push((
                g,
                Table {
                    columns: t.columns.clone(),
                    rows: vec![row.clone()],
                },
            )),
        }
    }
    out
}

/// Significant digits the smallest number of a column shows ([`column_decimals`]).
pub const COLUMN_SIGNIFICANT_DIGITS: usize = 3;

/// Most decimals a column of rates, counts or figures is written with.
pub const COLUMN_MAX_DECIMALS: usize = 3;

/// The decimals a column of like numbers (rates, counts, one figure over the runs) is written
/// with, one for all of them, chosen from its values: none when every value is whole (a count)
/// or none is non-zero; else as many as the smallest non-zero magnitude needs to show
/// [`COLUMN_SIGNIFICANT_DIGITS`] significant digits (none from 100 up, one from 10, two from 1,
/// three below), at most [`COLUMN_MAX_DECIMALS`]. So `100.0` never stands beside `500`: the
/// column is `99.8 · 500.0`, or `100 · 500` when its smallest is 100 or more.
pub fn column_decimals(values: impl IntoIterator<Item = f64>) -> usize {
    let mut whole = true;
    let mut smallest = f64::INFINITY;
    for v in values.into_iter().filter(|v| v.is_finite()) {
        whole &= v.fract() == 0.0;
        if v != 0.0 {
            smallest = smallest.min(v.abs());
        }
    }
    if whole || !smallest.is_finite() {
        return 0;
    }
    let enough = 10f64.powi(i32::try_from(COLUMN_SIGNIFICANT_DIGITS - 1).unwrap_or(2));
    let mut decimals = 0;
    let mut shown = smallest;
    while decimals < COLUMN_MAX_DECIMALS && shown < enough {
        shown *= 10.0;
        decimals += 1;
    }
    decimals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::layout::tests::{decimals_of, postgres_pair};

    /// A cell's value as text: rates and counts without decimals (one under 100), ratios with 2.
    fn cell_text(c: &Cell, ratio: bool) -> String {
        let decimals = c.value.map_or(0, |v| column_decimals([v]));
        cell_text_with(c, ratio, decimals)
    }

    #[test]
    fn a_column_shares_its_decimals() {
        assert_eq!(column_decimals([12_345.0, 150.0, 0.0]), 0);
        assert_eq!(column_decimals([12_345.0, 98.7]), 1);
        // The smallest non-zero magnitude decides: 3 significant digits, at most 3 decimals.
        assert_eq!(column_decimals([12_345.5, 150.5]), 0);
        assert_eq!(column_decimals([99.98, 1_000.0]), 1);
        assert_eq!(column_decimals([5.29, 14.7]), 2);
        assert_eq!(column_decimals([0.0, 0.09, 4.742]), 3);
        assert_eq!(column_decimals([0.000_4, 2.0]), 3);
        // Counts are whole: no decimals, however small (checkpoints 0 and 3, not 0.000).
        assert_eq!(column_decimals([0.0, 3.0, 12.0]), 0);
        assert_eq!(column_decimals([0.0, 0.0]), 0);
        assert_eq!(column_decimals(std::iter::empty()), 0);
        assert_eq!(column_decimals([f64::NAN, 2.5]), 2);
    }

    #[test]
    fn a_cell_is_written_with_its_columns_decimals_and_a_ratio_with_two() {
        let cell = |v| Cell {
            value: Some(v),
            colour: crate::report::model::Colour::None,
            note: None,
            interval: None,
        };
        assert_eq!(cell_text_with(&cell(12_345.0), false, 1), "12,345.0");
        assert_eq!(cell_text(&cell(12_345.4), false), "12,345");
        assert_eq!(cell_text(&cell(98.66), false), "98.7");
        assert_eq!(cell_text(&cell(5.296), false), "5.30");
        assert_eq!(cell_text(&cell(0.5), true), "0.50");
    }

    #[test]
    fn the_background_tables_numbers_share_one_precision_its_footer_too() {
        let cmp = postgres_pair();
        let mut b = Vec::new();
        background(&mut b, &cmp);
        let Some(Block::Table(t)) = b.iter().find(|b| matches!(b, Block::Table(_))) else {
            panic!("a background table: {b:?}");
        };
        let footer = t.footer.as_ref().expect("the targets");
        for j in 0..t.columns.len() {
            let column: Vec<usize> = t
                .rows
                .iter()
                .chain([footer])
                .filter_map(|r| decimals_of(&r.cells[j].text))
                .collect();
            assert!(column.windows(2).all(|w| w[0] == w[1]), "{j}: {column:?}");
        }
        // The qr100 column: its rates just under 100/s and its target of 100, one precision.
        assert_eq!(footer.cells[0].text, "100.0");
    }
}
