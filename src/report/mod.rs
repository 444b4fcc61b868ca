//! Rendering results for people: the terminal summary of one run, and `ibench report`, which
//! renders one run or compares several as terminal text, Markdown, self-contained HTML or JSON.

pub mod compare;
pub mod details;
pub mod diagnosis;
pub mod differs;
pub mod document;
pub mod efficiency;
pub mod escape;
pub mod failover;
pub mod host;
pub mod html;
pub mod lag_sla;
pub mod layout;
pub mod load;
pub mod markdown;
pub mod model;
mod notes;
pub mod overlap;
pub mod paint;
pub mod replication;
pub mod run_table;
pub mod series;
pub mod setup;
pub mod shift;
pub mod svg;
pub mod tables;
pub mod text;
pub mod text_syntax;
pub mod tldr;
mod warnings;

use std::path::PathBuf;

pub use details::profile_line;
use load::LoadedRun;
use model::Comparison;

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

impl Format {
    /// Every format, in the order `--format` lists them.
    pub fn all() -> &'static [Format] {
        <Format as clap::ValueEnum>::value_variants()
    }

    /// The formats a comparison is written in (every format but the series): a matrix's
    /// group reports are written in each of them.
    pub fn comparisons() -> impl Iterator<Item = Format> {
        Format::all().iter().copied().filter(|f| !f.is_series())
    }

    /// Its name as `--format` takes it (`text`, `otava`).
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .map_or_else(String::new, |v| v.get_name().to_string())
    }

    /// The extension of a report file in this format, without the dot; a format that writes
    /// several files names its main one's (Otava's CSV).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json | Format::Nyrkio => "json",
            Format::Otava => "csv",
        }
    }

    /// The files it writes into `--output DIR` when it writes several (see
    /// [`render_files`]); empty for a format that writes one report.
    pub fn file_names(self) -> &'static [&'static str] {
        match self {
            Format::Otava => &[series::OTAVA_CSV, series::OTAVA_YAML],
            _ => &[],
        }
    }

    /// Whether it writes several files (into `--output DIR`, never to standard output).
    pub fn writes_several_files(self) -> bool {
        self.file_names().len() > 1
    }

    /// Whether it is a series of the runs for change detection over time (one result per
    /// run), not a comparison of them.
    pub fn is_series(self) -> bool {
        matches!(self, Format::Otava | Format::Nyrkio)
    }
}

/// The files of a format that writes several ([`Format::file_names`]), each with its text;
/// empty for a format that writes one report.
pub fn render_files(runs: &[LoadedRun], format: Format) -> Vec<(&'static str, String)> {
    match format {
        Format::Otava => {
            let (csv, yaml) = series::otava(runs);
            format
                .file_names()
                .iter()
                .copied()
                .zip([csv, yaml])
                .collect()
        }
        _ => Vec::new(),
    }
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
/// base), each step's detail in full. Fails when no run at all could be read, or when `base`
/// names none of them (an `OptionsError`: the command line is wrong).
pub fn render_dirs(
    dirs: &[PathBuf],
    base: Option<&str>,
    format: Format,
    colour: bool,
) -> anyhow::Result<Rendered> {
    render_dirs_with(
        dirs,
        base,
        format,
        colour,
        true,
        lag_sla::DEFAULT_LAG_SLA_MS,
    )
}

/// [`render_dirs`], with each step's detail in text and Markdown only when `details` (the
/// HTML report always has it, folded; `ibench report --details`), and the replica-lag SLA's
/// bound `lag_sla_ms` (`--lag-sla-ms`).
pub fn render_dirs_with(
    dirs: &[PathBuf],
    base: Option<&str>,
    format: Format,
    colour: bool,
    details: bool,
    lag_sla_ms: f64,
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
    if let Some(b) = base
        && !runs.iter().any(|r| r.label == b || r.record.label == b)
    {
        let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
        return Err(crate::results::options::OptionsError(format!(
            "no run is labelled {b:?}; the runs' labels are {}: give one of them to --base",
            labels
                .iter()
                .map(|l| format!("{l:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    }
    let mut cmp = compare::compare(&runs, base, problems);
    if lag_sla_ms != lag_sla::DEFAULT_LAG_SLA_MS {
        cmp.judge_lag(&runs, lag_sla_ms);
    }
    let text = render_with(&cmp, &runs, format, colour, Vec::new(), details)?;
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

/// Render a comparison in one format, each step's detail in full.
pub fn render(
    cmp: &Comparison,
    runs: &[LoadedRun],
    format: Format,
    colour: bool,
) -> anyhow::Result<String> {
    render_with(cmp, runs, format, colour, Vec::new(), true)
}

/// Render a comparison in one format with `extra` blocks before its notes (the matrix's
/// spread over repeats). Text, Markdown and HTML are the same document in three syntaxes;
/// text and Markdown show each step's detail only when `details`, HTML always, folded under
/// a table of contents.
pub fn render_with(
    cmp: &Comparison,
    runs: &[LoadedRun],
    format: Format,
    colour: bool,
    extra: Vec<document::Block>,
    details: bool,
) -> anyhow::Result<String> {
    let title = layout::title(cmp);
    let detail = if details {
        layout::step::Detail::Full
    } else {
        layout::step::Detail::Short
    };
    let doc = |charts, detail| layout::blocks(cmp, runs, charts, detail, extra.clone());
    Ok(match format {
        Format::Text => document::write(
            title,
            &doc(false, detail),
            &text_syntax::TextSyntax { colour },
        ),
        Format::Markdown => document::write(title, &doc(false, detail), &markdown::MarkdownSyntax),
        Format::Html => document::write(
            title,
            &doc(true, layout::step::Detail::Folded),
            &html::HtmlSyntax,
        ),
        Format::Json => serde_json::to_string_pretty(cmp)? + "\n",
        Format::Otava => series::otava(runs).0,
        Format::Nyrkio => serde_json::to_string_pretty(&series::nyrkio(runs))? + "\n",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_owns_its_extension_and_its_files() {
        let comparisons: Vec<Format> = Format::comparisons().collect();
        assert_eq!(
            comparisons,
            [Format::Text, Format::Markdown, Format::Html, Format::Json]
        );
        let exts: Vec<&str> = comparisons.iter().map(|f| f.extension()).collect();
        assert_eq!(exts, ["txt", "md", "html", "json"]);
        assert_eq!(Format::all().len(), 6);
        for &f in Format::all() {
            assert_eq!(f.writes_several_files(), f == Format::Otava, "{f:?}");
            assert!(!f.name().is_empty());
        }
        assert_eq!(Format::Otava.file_names(), ["ibench.csv", "otava.yaml"]);
        assert_eq!(Format::Otava.name(), "otava");
        assert!(render_files(&[], Format::Html).is_empty());
        let names: Vec<&str> = render_files(&[], Format::Otava)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, Format::Otava.file_names());
    }
}
