//! The setup in a report: the "What differs" section (first in every format) and the setup
//! named first in the diagnosis. (The throughput per client and the scaling efficiency, when
//! the runs' clients differ, are tables of `report::tables`, laid out by
//! `layout::throughput`.)
//!
//! What differs is computed by `report::differs`; this module only says it.

use super::diagnosis::{DIAGNOSIS_NAMES, diagnosis_differences};
use super::differs::{Area, Difference, SetupDifferences};
use super::differs::{RunSetup, names_text, row_name};
use super::document::{Block, DocCell, DocRow, DocTable};
use super::model::{Comparison, Table};

/// Most setting rows the text formats list; the rest are counted ("and N more") and every
/// one is in `--format json`.
pub const MAX_SETTING_ROWS: usize = 25;

/// Longest value a cell of the section shows, in characters (a configure line, a CPU model);
/// the whole value is in the cell's hover text and in `--format json`.
pub const MAX_VALUE_CHARS: usize = 40;

/// A setting's source as the section writes it, short.
fn source_text(source: &str) -> &str {
    match source {
        "configuration file" => "conf",
        "command line" => "cmdline",
        "set by ibench" => "ibench",
        other => other,
    }
}

/// A run's value as its cell shows it: the value, and for a setting where it came from.
fn run_value(d: &Difference) -> String {
    match &d.source {
        Some(s) if d.area == Area::Settings => format!("{} [{}]", d.run, source_text(s)),
        _ => d.run.clone(),
    }
}

fn value_cell(text: String) -> DocCell {
    let shown = super::text::truncate(&text, MAX_VALUE_CHARS);
    let mut c = DocCell::plain(shown.clone());
    if shown != text {
        c.title = Some(text);
    }
    c
}

/// A section's row: its area, the setting it follows from when it is a consequence in some
/// run (it is shown under that cause), and its name.
type RowKey = (Area, Option<String>, String);

/// The section's rows: every (area, name) some run differs in, in area then name order, a
/// consequence right under its cause ([`Difference::follows`]).
fn rows_of(diffs: &[&RunSetup]) -> Vec<RowKey> {
    let mut rows: Vec<RowKey> = diffs
        .iter()
        .flat_map(|r| r.setup.differences.iter())
        .map(|d| (d.area, d.follows.clone(), d.name.clone()))
        .collect();
    // A setting that follows from its cause in one run and differs on its own in another is
    // shown once, under its cause.
    rows.sort_by_key(|r| std::cmp::Reverse(r.1.is_some()));
    let mut seen: Vec<(Area, String)> = Vec::new();
    rows.retain(|(a, _, n)| {
        let key = (*a, n.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    rows.sort_by(|x, y| {
        let group = |r: &RowKey| (r.0, r.1.clone().unwrap_or_else(|| r.2.clone()));
        (group(x), x.1.is_some(), &x.2).cmp(&(group(y), y.1.is_some(), &y.2))
    });
    rows
}

/// "What differs": each run's setup against the base's, first in every report.
pub fn blocks(cmp: &Comparison) -> Vec<Block> {
    if cmp.runs.len() < 2 {
        return Vec::new();
    }
    let mut b = vec![Block::Heading {
        level: 2,
        text: "What differs".into(),
        anchor: Some("what-differs".into()),
    }];
    if let Some(axis) = &cmp.axis {
        b.push(Block::Paragraph(format!(
            "This matrix group varies {}; its cells must differ in nothing else.",
            axis.varies
        )));
        if axis.warnings.is_empty() {
            b.push(Block::Paragraph(
                "No cell differs beyond the group's axis.".into(),
            ));
        }
        for w in &axis.warnings {
            b.push(Block::Warning(w.clone()));
        }
    }
    let all: Vec<&RunSetup> = cmp.differences.iter().collect();
    if all
        .iter()
        .all(|r| r.setup.is_empty() && !r.setup.settings_unknown)
    {
        b.push(Block::Paragraph(format!(
            "No difference: every run's setup is the base's ({}): the DBMS, its build, ibench's options, the server's settings, the host and ibench's version (ports, paths, data directories and pids are left out: they always differ).",
            cmp.keys.get(cmp.base).map_or("", String::as_str)
        )));
        return b;
    }
    b.push(Block::Note(format!(
        "Each run's setup against the base's ({}): the DBMS, its build, ibench's options (by their flags), the server's settings that differ (with where the run's value came from: [conf] the configuration file, [default], [cmdline], [ibench] set per session), the host's kind and ibench's version; a cell of = holds the base's value, n/a a value not known for that run or not comparable (another product's settings). Left out as always different: ports, paths, data directories, pids, the host's name and the replication slot's WAL bound ibench sets from the free disk space.",
        cmp.keys.get(cmp.base).map_or("", String::as_str)
    )));
    if cmp.axis.is_none() {
        b.extend(unlike_warning(cmp));
    }
    b.extend(table(cmp, &all));
    let mut notes = Vec::new();
    for r in &all {
        let key = cmp.key_of(&r.run);
        notes.extend(counted_line(key, &r.setup));
        if r.setup.is_empty() && !r.setup.settings_unknown {
            notes.push(format!("{key} differs from the base in nothing."));
        }
    }
    if !notes.is_empty() {
        b.push(Block::List(notes));
    }
    b
}

/// A warning naming the runs that differ from the base outside the server (options, host):
/// their figures measure that difference too.
fn unlike_warning(cmp: &Comparison) -> Option<Block> {
    let parts: Vec<String> = cmp
        .differences
        .iter()
        .filter_map(|r| {
            let unlike = r.setup.unlike();
            if unlike.is_empty() {
                return None;
            }
            Some(format!(
                "{} ({})",
                cmp.key_of(&r.run),
                names_text(&unlike, DIAGNOSIS_NAMES)
            ))
        })
        .collect();
    let (verb, their) = if parts.len() == 1 {
        ("differs", "Its")
    } else {
        ("differ", "Their")
    };
    (!parts.is_empty()).then(|| {
        Block::Warning(format!(
            "Not like for like: {} {verb} from the base outside the server. {their} figures measure that difference as well as the DBMS's; the diagnosis names it first.",
            parts.join(", ")
        ))
    })
}

/// The line saying what was counted rather than listed, or could not be compared.
fn counted_line(key: &str, s: &SetupDifferences) -> Option<String> {
    if s.settings_unknown {
        return Some(format!(
            "{key}: one of the two runs recorded no server settings (server-settings.json): its settings are not compared."
        ));
    }
    let mut parts = Vec::new();
    if s.default_settings_differing > 0 {
        parts.push(format!(
            "{} setting(s) at their built-in default differ between the versions",
            s.default_settings_differing
        ));
    }
    if s.settings_on_one_side > 0 {
        let side = if s.named("version").is_some() {
            "version only"
        } else {
            "of the two runs only (a plugin or extension loaded on one side)"
        };
        parts.push(format!(
            "{} settings exist in one {side}",
            s.settings_on_one_side
        ));
    }
    (!parts.is_empty()).then(|| format!("{key}: {} (counted, not listed).", parts.join("; ")))
}

/// True when a row's field is not known for a run, or not comparable with the base's: a
/// build fact one side could not tell, the settings of another product or of a run that
/// recorded none. Its cell says `n/a`, not `=`.
fn not_compared(s: &SetupDifferences, area: Area, name: &str) -> bool {
    match area {
        Area::Settings => s.settings_of_another_product || s.settings_unknown,
        Area::Build => s.unknown_build_facts.iter().any(|f| f == name),
        _ => false,
    }
}

/// The table of the fields that differ: a row per field, a column per run (the base's first).
fn table(cmp: &Comparison, all: &[&RunSetup]) -> Vec<Block> {
    let rows = rows_of(all);
    let settings = rows.iter().filter(|(a, _, _)| *a == Area::Settings).count();
    let mut shown_settings = 0;
    let mut out_rows = Vec::new();
    for (area, cause, name) in &rows {
        if *area == Area::Settings {
            shown_settings += 1;
            if shown_settings > MAX_SETTING_ROWS {
                continue;
            }
        }
        let found = |r: &RunSetup| {
            r.setup
                .differences
                .iter()
                .find(|d| d.area == *area && d.name == *name)
                .cloned()
        };
        let Some(any) = all.iter().find_map(|r| found(r)) else {
            continue;
        };
        let mut cells = vec![value_cell(any.base.clone())];
        cells.extend(all.iter().map(|r| match found(r) {
            Some(d) => value_cell(run_value(&d)),
            None if not_compared(&r.setup, *area, name) => DocCell::plain("n/a"),
            None => DocCell::plain("="),
        }));
        let (label, title) = match cause {
            Some(c) => (
                format!("↳ {}", row_name(&any)),
                format!("{}, follows from {c}", area.name()),
            ),
            None => (row_name(&any), area.name().to_string()),
        };
        out_rows.push(DocRow {
            label,
            title: Some(title),
            link: None,
            cells,
        });
    }
    let mut columns = vec![cmp.keys.get(cmp.base).cloned().unwrap_or_default()];
    columns.extend(all.iter().map(|r| cmp.key_of(&r.run).to_string()));
    let mut b = Vec::new();
    if !out_rows.is_empty() {
        b.push(Block::Table(DocTable {
            corner: "differs".into(),
            columns,
            rows: out_rows,
            footer: None,
            text_columns: true,
            columns_are: "run".into(),
        }));
    }
    if settings > MAX_SETTING_ROWS {
        b.push(Block::Note(format!(
            "And {} more settings that differ (every one is in --format json).",
            settings - MAX_SETTING_ROWS
        )));
    }
    b
}

/// The diagnosis's lead, a line per run that differs from the base in its setup, named with
/// what differs, and for a difference in clients the throughput per client
/// ([`Comparison::diagnosis_lead`]).
pub fn diagnosis_lead(cmp: &Comparison) -> Vec<String> {
    let mut lines = Vec::new();
    for r in &cmp.differences {
        let diffs = diagnosis_differences(&r.setup);
        if diffs.is_empty() {
            continue;
        }
        let key = cmp.key_of(&r.run);
        // The run's row in the scaling table.
        let i = cmp.labels.iter().position(|l| *l == r.run);
        let mut line = format!(
            "{key} differs from the base in {}",
            names_text(&diffs, DIAGNOSIS_NAMES)
        );
        if let Some(sc) = &cmp.scaling
            && let Some(i) = i
            && r.setup.named("--clients").is_some()
        {
            let range = |t: &Table| {
                let v: Vec<f64> = t
                    .rows
                    .get(i)?
                    .cells
                    .iter()
                    .filter_map(|c| c.value)
                    .collect();
                let lo = v.iter().copied().reduce(f64::min)?;
                let hi = v.iter().copied().reduce(f64::max)?;
                Some(range_x(lo, hi))
            };
            if let (Some(total), Some(per)) = (range(&cmp.relative), range(&sc.efficiency)) {
                line.push_str(&format!(
                    ": {total} in total is {per} per client (scaling efficiency, table Per client and scaling)"
                ));
            }
        }
        line.push_str(": the candidate explanation before any per-op figure below.");
        lines.push(line);
    }
    lines
}

/// `0.50x`, or `0.06x-0.50x`.
fn range_x(lo: f64, hi: f64) -> String {
    let (a, b) = (format!("{lo:.2}x"), format!("{hi:.2}x"));
    if a == b { a } else { format!("{a}-{b}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(area: Area, name: &str, base: &str, run: &str) -> Difference {
        Difference {
            area,
            name: name.into(),
            base: base.into(),
            run: run.into(),
            source: None,
            follows: None,
        }
    }

    /// Two runs that differ in shared_buffers only: "What differs" has one row of its own,
    /// the settings the server computes from it under it; the diagnosis and the tl;dr name
    /// shared_buffers alone, and the diagnosis's step lines point to the lead.
    #[test]
    fn shared_buffers_alone_is_one_difference_with_its_consequences_under_it() {
        let (base, run) = super::super::differs::tests::smaller_shared_buffers();
        let runs = [base, run];
        let cmp = super::super::compare::compare(&runs, None, Vec::new());
        let blocks = blocks(&cmp);
        let Some(Block::Table(t)) = blocks.iter().find(|b| matches!(b, Block::Table(_))) else {
            panic!("a table: {blocks:?}");
        };
        let rows: Vec<(&str, &str)> = t
            .rows
            .iter()
            .map(|r| (r.label.as_str(), r.cells[1].text.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("shared_buffers", "16MB [conf]"),
                ("↳ shared_memory_size", "33MB [default]"),
                ("↳ shared_memory_size_in_huge_pages", "17 [default]"),
                ("↳ wal_buffers", "512kB [default]"),
            ]
        );
        assert_eq!(
            t.rows[1].title.as_deref(),
            Some("setting, follows from shared_buffers")
        );
        assert_eq!(
            cmp.diagnosis_lead,
            [
                "sb16 differs from the base in shared_buffers 128MB → 16MB: the candidate explanation before any per-op figure below."
            ]
        );
        assert_eq!(
            cmp.tldr.lines[0].differs.as_deref(),
            Some("shared_buffers 128MB → 16MB")
        );
        for d in &cmp.diagnoses {
            let line = d.line_for("sb16");
            assert!(line.contains("[the setup above]"), "{line}");
            assert!(!line.contains("shared_memory_size"), "{line}");
        }
    }

    #[test]
    fn names_are_capped_and_rows_named_by_area() {
        let d = [
            diff(Area::Options, "--clients", "1", "16"),
            diff(Area::Settings, "shared_buffers", "128MB", "1GB"),
            diff(Area::Host, "CPUs", "2", "16"),
        ];
        let refs: Vec<&Difference> = d.iter().collect();
        assert_eq!(
            names_text(&refs, 2),
            "--clients 1 → 16, shared_buffers 128MB → 1GB and 1 more"
        );
        assert_eq!(row_name(&d[2]), "host CPUs");
        assert_eq!(
            row_name(&diff(Area::Ibench, "version", "a", "b")),
            "ibench version"
        );
        let mut s = d[1].clone();
        s.source = Some("configuration file".into());
        assert_eq!(run_value(&s), "1GB [conf]");
        assert_eq!(range_x(0.5, 0.5), "0.50x");
        let mut other = SetupDifferences::default();
        assert!(!not_compared(&other, Area::Settings, "shared_buffers"));
        other.settings_of_another_product = true;
        other.unknown_build_facts.push("binary size".into());
        assert!(not_compared(&other, Area::Settings, "shared_buffers"));
        assert!(not_compared(&other, Area::Build, "binary size"));
        assert!(!not_compared(&other, Area::Build, "CC"));
        assert!(!not_compared(&other, Area::Options, "--clients"));
        assert_eq!(range_x(0.06, 0.5), "0.06x-0.50x");
    }
}
