//! Markdown: tables pasteable into a blog post, colours as readable markers.
//!
//! Markers: `▲` green (good), `▼` red (bad), `~~value~~ (SLA)` an SLA failure, `⚠ (why)` a
//! figure that covers only part of its step or whose step failed a check; grey values carry
//! no marker. Tables are cut by columns so that no line is wider than
//! [`MAX_LINE_CHARS`](super::text::MAX_LINE_CHARS).

use std::fmt::Write;

use super::document::{DocCell, DocTable, Syntax, wrap};
use super::model::Colour;
use super::text::{MAX_LINE_CHARS, truncate};

pub use super::escape::markdown as escape_md;

/// `[text](href)`.
fn link_md(href: &str, text: &str) -> String {
    format!(
        "[{}]({})",
        escape_md(text),
        href.replace(' ', "%20")
            .replace('(', "%28")
            .replace(')', "%29")
    )
}

fn cell_md(c: &DocCell) -> String {
    if !c.links.is_empty() {
        let links: Vec<String> = c.links.iter().map(|l| link_md(&l.href, &l.text)).collect();
        return links.join(" ");
    }
    let v = escape_md(&c.text);
    if c.missing {
        return format!("_{v}_");
    }
    let v = if c.sla_failed {
        format!("~~{v}~~ (SLA)")
    } else if let Some(note) = &c.partial {
        format!("{v} ⚠ ({})", escape_md(note))
    } else {
        v
    };
    match c.colour {
        Colour::Green => format!("{v} ▲"),
        Colour::Red => format!("{v} ▼"),
        _ => v,
    }
}

/// Markdown for a blog post or a pull request.
pub struct MarkdownSyntax;

impl MarkdownSyntax {
    fn one_table(out: &mut String, t: &DocTable, room: usize) {
        let _ = write!(out, "| {} |", escape_md(&t.corner));
        for c in &t.columns {
            let _ = write!(out, " {} |", truncate(&escape_md(c), room));
        }
        out.push_str("\n|---|");
        for _ in &t.columns {
            out.push_str(if t.text_columns { "---|" } else { "---:|" });
        }
        out.push('\n');
        for row in &t.rows {
            let label = match &row.link {
                Some(href) => link_md(href, &row.label),
                None => escape_md(&row.label),
            };
            let _ = write!(out, "| {label} |");
            for c in &row.cells {
                let _ = write!(out, " {} |", truncate(&cell_md(c), room));
            }
            out.push('\n');
        }
        if let Some(f) = &t.footer {
            let _ = write!(out, "| **{}** |", escape_md(&f.label));
            for c in &f.cells {
                let _ = write!(out, " {} |", truncate(&cell_md(c), room));
            }
            out.push('\n');
        }
    }
}

fn wrapped(out: &mut String, text: &str, first: &str, rest: &str) {
    for l in wrap(text, MAX_LINE_CHARS, first, rest) {
        out.push_str(&l);
        out.push('\n');
    }
    out.push('\n');
}

impl Syntax for MarkdownSyntax {
    fn heading(&self, out: &mut String, level: u8, text: &str, _anchor: Option<&str>) {
        let hashes = "#".repeat(usize::from(level.clamp(1, 6)));
        let _ = writeln!(out, "{hashes} {}\n", truncate(text, MAX_LINE_CHARS - 7));
    }

    fn paragraph(&self, out: &mut String, text: &str) {
        wrapped(out, &escape_md(text), "", "");
    }

    fn note(&self, out: &mut String, text: &str) {
        wrapped(out, &escape_md(text), "", "");
    }

    fn warning(&self, out: &mut String, text: &str) {
        wrapped(out, &format!("**{}**", escape_md(text)), "", "");
    }

    fn list(&self, out: &mut String, items: &[String]) {
        for i in items {
            for l in wrap(&escape_md(i), MAX_LINE_CHARS, "- ", "  ") {
                out.push_str(&l);
                out.push('\n');
            }
        }
        out.push('\n');
    }

    fn table(&self, out: &mut String, t: &DocTable) {
        let label_w = t
            .labels()
            .map(|l| escape_md(l).chars().count() + 8)
            .max()
            .unwrap_or(8);
        let room = MAX_LINE_CHARS.saturating_sub(label_w + 4).max(8);
        let width = |j: usize| {
            t.column_cells(j)
                .map(|c| cell_md(c).chars().count())
                .chain(t.columns.get(j).map(|h| escape_md(h).chars().count()))
                .max()
                .unwrap_or(1)
                .min(room)
                + 3
        };
        for part in t.split_to_width(MAX_LINE_CHARS, label_w, width) {
            Self::one_table(out, &part, room);
            out.push('\n');
        }
    }
}
