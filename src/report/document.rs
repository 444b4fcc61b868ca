//! The report as a document: a list of blocks (heading, paragraph, table, list, chart, fold)
//! built once from a comparison (see `report::layout`), and a [`Syntax`] per output format
//! that only says how each block is written. Layout rules that hold for every format (tables
//! no wider than the page, split by columns when they would be) live here, once.

use super::model::{Colour, Span};

/// One block of a report.
#[derive(Clone, Debug)]
pub enum Block {
    /// A heading; `anchor` is an HTML id.
    Heading {
        /// 1 (the title) to 3.
        level: u8,
        /// Its text.
        text: String,
        /// An id to link to, when it has one.
        anchor: Option<String>,
    },
    /// A paragraph of prose.
    Paragraph(String),
    /// Small print under a heading or table: what the colours or marks mean.
    Note(String),
    /// Something the reader must see before the tables (a build difference).
    Warning(String),
    /// A bullet list.
    List(Vec<String>),
    /// A bullet list whose items are painted pieces (the tl;dr: each step family's range in
    /// the colour `report::paint` decided); formats without colour write the texts joined, as
    /// a [`Block::List`].
    PaintedList(Vec<Vec<Span>>),
    /// A table.
    Table(DocTable),
    /// An SVG chart (HTML only; the other formats leave it out).
    Chart(String),
    /// An SVG picture shown as an image (a flamegraph; HTML only), with its alt text.
    Image {
        /// The SVG document.
        svg: String,
        /// What it shows.
        alt: String,
    },
    /// A table of contents: each entry's text and the anchor of its heading (HTML only; the
    /// other formats leave it out).
    Contents(Vec<(String, String)>),
    /// Blocks folded under a summary line (HTML `<details>`); the other formats show them
    /// under the summary as a small heading.
    Fold {
        /// The line shown when folded.
        summary: String,
        /// What unfolds.
        blocks: Vec<Block>,
    },
}

impl Block {
    /// A heading without an anchor.
    pub fn heading(level: u8, text: &str) -> Block {
        Block::Heading {
            level,
            text: text.to_string(),
            anchor: None,
        }
    }
}

/// A table: a label column (`corner` heads it), then one column per `columns`.
#[derive(Clone, Debug, Default)]
pub struct DocTable {
    /// Head of the label column.
    pub corner: String,
    /// Heads of the value columns.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<DocRow>,
    /// A last row set apart (the target rates), when there is one.
    pub footer: Option<DocRow>,
    /// Whether the value columns hold text to read left-aligned (a legend) rather than
    /// figures.
    pub text_columns: bool,
    /// What the value columns are (`run`): the corner's text when the table is transposed.
    /// Empty: the corner stays.
    pub columns_are: String,
}

/// One row: its label and a cell per column.
#[derive(Clone, Debug, Default)]
pub struct DocRow {
    /// The row's label.
    pub label: String,
    /// Shown on hover in HTML (the full label behind a short key, a figure's meaning).
    pub title: Option<String>,
    /// Where the label links to (a report of the matrix's index), when it does.
    pub link: Option<String>,
    /// One cell per column.
    pub cells: Vec<DocCell>,
}

/// A link: its text and where it points (a path relative to the document).
#[derive(Clone, Debug)]
pub struct Link {
    /// What the reader sees.
    pub text: String,
    /// Where it points.
    pub href: String,
}

/// One cell: its text and how it is marked.
#[derive(Clone, Debug)]
pub struct DocCell {
    /// The figure as text (`12,345`, `0.93`, `n/a`).
    pub text: String,
    /// Its highlight.
    pub colour: Colour,
    /// The step failed its background-insert SLA: the figure is struck through.
    pub sla_failed: bool,
    /// The figure covers only part of its step, or a check after it failed: why.
    pub partial: Option<String>,
    /// No figure: the text says why.
    pub missing: bool,
    /// Shown on hover in HTML.
    pub title: Option<String>,
    /// A share from 0 to 1 that shades the cell (latency buckets), HTML only.
    pub shade: Option<f64>,
    /// When not empty, the cell is these links, one space apart (`text` is their texts, as a
    /// format without links shows them).
    pub links: Vec<Link>,
}

impl DocCell {
    /// A plain cell.
    pub fn plain(text: impl Into<String>) -> DocCell {
        DocCell {
            text: text.into(),
            colour: Colour::None,
            sla_failed: false,
            partial: None,
            missing: false,
            title: None,
            shade: None,
            links: Vec::new(),
        }
    }

    /// A cell of links, one space apart.
    pub fn links(links: Vec<Link>) -> DocCell {
        let texts: Vec<&str> = links.iter().map(|l| l.text.as_str()).collect();
        let text = texts.join(" ");
        DocCell {
            links,
            ..DocCell::plain(text)
        }
    }
}

impl DocTable {
    /// A table of figures: `corner` heads the label column; no footer.
    pub fn new(corner: &str, columns: Vec<String>, rows: Vec<DocRow>) -> DocTable {
        DocTable {
            corner: corner.to_string(),
            columns,
            rows,
            ..DocTable::default()
        }
    }

    /// The table with rows and columns swapped (the footer becomes the last column).
    pub fn transposed(&self) -> DocTable {
        let mut all_rows: Vec<&DocRow> = self.rows.iter().collect();
        if let Some(f) = &self.footer {
            all_rows.push(f);
        }
        DocTable {
            corner: if self.columns_are.is_empty() {
                self.corner.clone()
            } else {
                self.columns_are.clone()
            },
            columns: all_rows.iter().map(|r| r.label.clone()).collect(),
            rows: self
                .columns
                .iter()
                .enumerate()
                .map(|(j, head)| DocRow {
                    label: head.clone(),
                    title: None,
                    link: None,
                    cells: all_rows
                        .iter()
                        .map(|r| {
                            r.cells
                                .get(j)
                                .cloned()
                                .unwrap_or_else(|| DocCell::plain(""))
                        })
                        .collect(),
                })
                .collect(),
            footer: None,
            text_columns: self.text_columns,
            columns_are: self.corner.clone(),
        }
    }

    /// The table's columns `range` only (the label column kept).
    fn with_columns(&self, range: std::ops::Range<usize>) -> DocTable {
        let pick = |r: &DocRow| DocRow {
            label: r.label.clone(),
            title: r.title.clone(),
            link: r.link.clone(),
            cells: r
                .cells
                .get(range.clone())
                .map(<[DocCell]>::to_vec)
                .unwrap_or_default(),
        };
        DocTable {
            corner: self.corner.clone(),
            columns: self.columns[range.clone()].to_vec(),
            rows: self.rows.iter().map(pick).collect(),
            footer: self.footer.as_ref().map(pick),
            text_columns: self.text_columns,
            columns_are: self.columns_are.clone(),
        }
    }

    /// The table cut by columns into parts no wider than `max`, each with the label column;
    /// `label_width` and `column_width(j)` are the widths the format gives them. A column
    /// wider than `max` on its own gets a part to itself.
    pub fn split_to_width(
        &self,
        max: usize,
        label_width: usize,
        column_width: impl Fn(usize) -> usize,
    ) -> Vec<DocTable> {
        let mut parts = Vec::new();
        let mut start = 0;
        let mut used = label_width;
        for j in 0..self.columns.len() {
            let w = column_width(j);
            if j > start && used + w > max {
                parts.push(self.with_columns(start..j));
                start = j;
                used = label_width;
            }
            used += w;
        }
        if start < self.columns.len() || parts.is_empty() {
            parts.push(self.with_columns(start..self.columns.len()));
        }
        parts
    }

    /// Every row's label, the corner's and the footer's.
    pub fn labels(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.corner.as_str())
            .chain(self.rows.iter().map(|r| r.label.as_str()))
            .chain(self.footer.iter().map(|r| r.label.as_str()))
    }

    /// Column `j`'s head and cells.
    pub fn column_cells(&self, j: usize) -> impl Iterator<Item = &DocCell> {
        self.rows
            .iter()
            .chain(self.footer.iter())
            .filter_map(move |r| r.cells.get(j))
    }
}

/// How one output format writes each block. A format supplies syntax only: what a report
/// says and in which order is decided once, in `report::layout`.
pub trait Syntax {
    /// The document's start (an HTML head); `title` names it.
    fn begin(&self, _out: &mut String, _title: &str) {}
    /// The document's end.
    fn end(&self, _out: &mut String) {}
    /// A heading.
    fn heading(&self, out: &mut String, level: u8, text: &str, anchor: Option<&str>);
    /// A paragraph.
    fn paragraph(&self, out: &mut String, text: &str);
    /// Small print.
    fn note(&self, out: &mut String, text: &str) {
        self.paragraph(out, text);
    }
    /// A warning.
    fn warning(&self, out: &mut String, text: &str);
    /// A bullet list.
    fn list(&self, out: &mut String, items: &[String]);
    /// A bullet list of painted pieces; by default the pieces' texts joined, unpainted.
    fn painted_list(&self, out: &mut String, items: &[Vec<Span>]) {
        let plain: Vec<String> = items.iter().map(|i| joined(i)).collect();
        self.list(out, &plain);
    }
    /// A table.
    fn table(&self, out: &mut String, table: &DocTable);
    /// A chart; formats without pictures leave it out.
    fn chart(&self, _out: &mut String, _svg: &str) {}
    /// A picture; formats without pictures leave it out.
    fn image(&self, _out: &mut String, _svg: &str, _alt: &str) {}
    /// A table of contents; formats without links leave it out.
    fn contents(&self, _out: &mut String, _entries: &[(String, String)]) {}
    /// The start of a fold.
    fn fold_begin(&self, out: &mut String, summary: &str) {
        self.heading(out, 3, summary, None);
    }
    /// The end of a fold.
    fn fold_end(&self, _out: &mut String) {}
}

/// Write `blocks` in one format.
pub fn write(title: &str, blocks: &[Block], syntax: &dyn Syntax) -> String {
    let mut out = String::new();
    syntax.begin(&mut out, title);
    write_blocks(&mut out, blocks, syntax);
    syntax.end(&mut out);
    out
}

fn write_blocks(out: &mut String, blocks: &[Block], syntax: &dyn Syntax) {
    for b in blocks {
        match b {
            Block::Heading {
                level,
                text,
                anchor,
            } => syntax.heading(out, *level, text, anchor.as_deref()),
            Block::Paragraph(t) => syntax.paragraph(out, t),
            Block::Note(t) => syntax.note(out, t),
            Block::Warning(t) => syntax.warning(out, t),
            Block::List(items) => syntax.list(out, items),
            Block::PaintedList(items) => syntax.painted_list(out, items),
            Block::Table(t) => syntax.table(out, t),
            Block::Chart(svg) => syntax.chart(out, svg),
            Block::Image { svg, alt } => syntax.image(out, svg, alt),
            Block::Contents(entries) => syntax.contents(out, entries),
            Block::Fold { summary, blocks } => {
                syntax.fold_begin(out, summary);
                write_blocks(out, blocks, syntax);
                syntax.fold_end(out);
            }
        }
    }
}

/// The pieces' texts joined.
pub fn joined(spans: &[Span]) -> String {
    spans.iter().map(|s| s.text.as_str()).collect()
}

/// An anchor made from a heading's text: lower case, runs of other characters as one `-`
/// (`Relative to the base` is `relative-to-the-base`).
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Give every level-2 heading of `blocks` (folds included) an anchor, its [`slug`] unless
/// it has one, and return the table of contents: each such heading's text and anchor, in
/// order.
pub fn anchor_headings(blocks: &mut [Block]) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    for b in blocks {
        match b {
            Block::Heading {
                level: 2,
                text,
                anchor,
            } => {
                let a = anchor.get_or_insert_with(|| slug(text)).clone();
                entries.push((text.clone(), a));
            }
            Block::Fold { blocks, .. } => entries.extend(anchor_headings(blocks)),
            _ => {}
        }
    }
    entries
}

/// `text` broken at spaces into lines of at most `width` characters, the first starting with
/// `first`, the others with `rest`; a word longer than a line is cut.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let line_chars = line.chars().count();
        let word_chars = word.chars().count();
        if !empty && line_chars + 1 + word_chars > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        let room = width.saturating_sub(line.chars().count()).max(1);
        if word_chars > room {
            // A word longer than a line (a path): cut it over as many lines as it takes.
            let mut chars: Vec<char> = word.chars().collect();
            while chars.len() > width.saturating_sub(line.chars().count()).max(1) {
                let take = width.saturating_sub(line.chars().count()).max(1);
                line.extend(chars.drain(..take));
                lines.push(std::mem::replace(&mut line, rest.to_string()));
            }
            line.extend(chars);
        } else {
            line.push_str(word);
        }
        empty = false;
    }
    if !empty || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(columns: usize) -> DocTable {
        DocTable {
            corner: "run".into(),
            columns: (0..columns).map(|j| format!("c{j}")).collect(),
            rows: vec![DocRow {
                label: "a".into(),
                title: None,
                link: None,
                cells: (0..columns)
                    .map(|j| DocCell::plain(j.to_string()))
                    .collect(),
            }],
            footer: Some(DocRow {
                label: "target".into(),
                title: None,
                link: None,
                cells: (0..columns).map(|_| DocCell::plain("t")).collect(),
            }),
            text_columns: false,
            columns_are: "run".into(),
        }
    }

    #[test]
    fn a_wide_table_splits_into_parts_that_fit_each_with_the_labels() {
        let t = table(10);
        // Label 10 wide, columns 10 wide, page 45: three columns per part.
        let parts = t.split_to_width(45, 10, |_| 10);
        assert_eq!(parts.len(), 4);
        assert_eq!(parts[0].columns, ["c0", "c1", "c2"]);
        assert_eq!(parts[3].columns, ["c9"]);
        for p in &parts {
            assert_eq!(p.rows[0].label, "a");
            assert_eq!(p.rows[0].cells.len(), p.columns.len());
            assert_eq!(
                p.footer.as_ref().map(|f| f.cells.len()),
                Some(p.columns.len())
            );
        }
        // A column wider than the page gets a part of its own.
        let parts = t.split_to_width(15, 10, |j| if j == 1 { 50 } else { 5 });
        assert_eq!(parts[1].columns, ["c1"]);
        // A table that fits is one part.
        assert_eq!(t.split_to_width(1000, 10, |_| 10).len(), 1);
    }

    #[test]
    fn transposing_swaps_rows_and_columns_and_keeps_the_footer_as_a_column() {
        let t = table(3).transposed();
        // The corner now heads what the columns were; transposing back restores it.
        assert_eq!(t.corner, "run");
        assert_eq!(t.transposed().corner, "run");
        assert_eq!(t.columns, ["a", "target"]);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[2].label, "c2");
        assert_eq!(t.rows[2].cells[0].text, "2");
        assert_eq!(t.rows[2].cells[1].text, "t");
    }

    #[test]
    fn headings_get_anchors_for_the_table_of_contents() {
        assert_eq!(slug("Relative to the base"), "relative-to-the-base");
        assert_eq!(slug("l.i1 (inserted rows/s)"), "l.i1-inserted-rows-s");
        assert_eq!(slug("tl;dr"), "tl-dr");
        let mut blocks = vec![
            Block::Heading {
                level: 2,
                text: "What differs".into(),
                anchor: None,
            },
            Block::Fold {
                summary: "l.i0".into(),
                blocks: vec![Block::Heading {
                    level: 2,
                    text: "l.i0 (rows/s)".into(),
                    anchor: Some("step-l.i0".into()),
                }],
            },
            Block::Heading {
                level: 3,
                text: "Figures".into(),
                anchor: None,
            },
        ];
        let toc = anchor_headings(&mut blocks);
        assert_eq!(
            toc,
            [
                ("What differs".to_string(), "what-differs".to_string()),
                ("l.i0 (rows/s)".to_string(), "step-l.i0".to_string())
            ]
        );
    }

    #[test]
    fn wrapping_keeps_every_line_within_the_width() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        let lines = wrap(text, 20, "- ", "  ");
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert_eq!(lines[0], "- one two three four");
        assert!(lines[1].starts_with("  five"));
        assert_eq!(lines.join(" ").split_whitespace().count(), 13);
        let long = format!("path: /{}", "x".repeat(50));
        let lines = wrap(&long, 20, "", "");
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), long.replace(' ', ""));
        assert_eq!(wrap("", 10, "", ""), [""]);
    }
}
