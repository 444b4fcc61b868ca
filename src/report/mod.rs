//! Rendering results for people: the terminal summary of one run, and `ibench report`, which
//! renders one run or compares several as terminal text, Markdown, self-contained HTML or JSON.

pub mod compare;
pub mod details;
pub mod diagnosis;
pub mod differs;
pub mod document;
pub mod efficiency;
pub mod host;
pub mod html;
pub mod layout;
pub mod load;
pub mod markdown;
pub mod model;
mod notes;
pub mod run_table;
pub mod series;
pub mod setup;
pub mod shift;
pub mod svg;
pub mod tables;
pub mod text;
mod warnings;

use std::path::PathBuf;

pub use details::profile_line;
use load::LoadedRun;
use model::{Cell, Comparison};

/// Output formats of `ibench report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Terminal text (colours on a terminal unless NO_COLOR is set).
    Text,
    /// Markdown, pasteable into a blog post.
    Markdown,
    /// One self-contained HTML file with inline SVG charts.
    Html,
    /// The comparison as JSON data.
    Json,
    /// Apache Otava's input for change detection over time: `ibench.csv` (one row per run)
    /// and `otava.yaml` (the test config), written into `--output DIR`.
    Otava,
    /// Nyrkiö's result JSON: one result per run with its metrics and attributes.
    Nyrkio,
}

/// A rendered report and the problems met on the way (one line each).
pub struct Rendered {
    /// The report.
    pub text: String,
    /// What was skipped or could not be compared.
    pub problems: Vec<String>,
    /// The slowdowns inside steps, one line each (`shift::StepShift::describe`; the run
    /// named when there are several).
    pub slowdowns: Vec<String>,
}

/// Read the runs in `dirs` and render them (the first, or the one labelled `base`, is the
/// base). Fails only when no run at all could be read.
pub fn render_dirs(
    dirs: &[PathBuf],
    base: Option<&str>,
    format: Format,
    colour: bool,
) -> anyhow::Result<Rendered> {
    let (runs, problems) = load::load_runs(dirs);
    if runs.is_empty() {
        anyhow::bail!(
            "no run could be read: {}",
            if problems.is_empty() {
                "give one or more results directories (each holds a run.json)".to_string()
            } else {
                problems.join("; ")
            }
        );
    }
    let cmp = compare::compare(&runs, base, problems);
    let text = render(&cmp, &runs, format, colour)?;
    let several = cmp.runs.len() > 1;
    Ok(Rendered {
        text,
        problems: cmp.problems.clone(),
        slowdowns: cmp
            .shifts
            .iter()
            .map(|s| s.describe(several.then(|| cmp.key_of(&s.run))))
            .collect(),
    })
}

/// Render a comparison in one format.
pub fn render(
    cmp: &Comparison,
    runs: &[LoadedRun],
    format: Format,
    colour: bool,
) -> anyhow::Result<String> {
    render_with(cmp, runs, format, colour, Vec::new())
}

/// Render a comparison in one format with `extra` blocks before its notes (the matrix's
/// spread over repeats). Text, Markdown and HTML are the same document in three syntaxes.
pub fn render_with(
    cmp: &Comparison,
    runs: &[LoadedRun],
    format: Format,
    colour: bool,
    extra: Vec<document::Block>,
) -> anyhow::Result<String> {
    let title = model::title(cmp);
    let doc = |charts| layout::blocks(cmp, runs, charts, extra.clone());
    Ok(match format {
        Format::Text => document::write(title, &doc(false), &text::TextSyntax { colour }),
        Format::Markdown => document::write(title, &doc(false), &markdown::MarkdownSyntax),
        Format::Html => document::write(title, &doc(true), &html::HtmlSyntax),
        Format::Json => serde_json::to_string_pretty(cmp)? + "\n",
        Format::Otava => series::otava(runs).0,
        Format::Nyrkio => serde_json::to_string_pretty(&series::nyrkio(runs))? + "\n",
    })
}

/// A cell's value as text: rates and counts without decimals, ratios with 2.
pub fn cell_text(c: &Cell, ratio: bool) -> String {
    match c.value {
        None => c
            .note
            .as_ref()
            .map_or_else(|| "-".into(), ToString::to_string),
        Some(v) if ratio && model::host_affected(c) => format!("{v:.2}~"),
        Some(v) if ratio => format!("{v:.2}"),
        Some(v) if v.abs() >= 100.0 => text::group_f(v),
        Some(v) => format!("{v:.1}"),
    }
}

/// Longest label a report shows, in characters; longer ones end in `…`.
pub const MAX_LABEL_CHARS: usize = 80;

/// A run's label as reports show it: control characters (a terminal's escape sequences, line
/// breaks) written out as `\u{1b}` and the like, and cut to [`MAX_LABEL_CHARS`] characters.
/// A label comes from whoever wrote the run.json, so nothing in it may steer the terminal.
pub fn clean_label(label: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for c in label.chars() {
        let piece: String = if c.is_control() {
            c.escape_unicode().to_string()
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if chars + n > MAX_LABEL_CHARS {
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        chars += n;
    }
    out
}

/// The note of a cell whose figure needs a mark: it covers only part of its step (the step
/// failed, was interrupted, or was still running when the run ended), or a check after the
/// step failed (the figure is as measured).
pub fn partial_note(c: &Cell) -> Option<&model::CellNote> {
    c.note
        .as_ref()
        .filter(|n| c.value.is_some() && n.is_partial())
}
