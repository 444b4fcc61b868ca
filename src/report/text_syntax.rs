//! The text format's writer ([`TextSyntax`]): a report for the terminal, tables in aligned
//! columns cut to the line width, prose wrapped, painted with ANSI colours on a terminal.

use std::fmt::Write;

use super::document::{DocCell, DocTable, Syntax, joined, wrap};
use super::model::{Colour, Span};
use super::text::{MAX_LINE_CHARS, truncate};

/// Widest row label of a text table (a microbenchmark's name); longer ones are cut.
const MAX_ROW_LABEL_CHARS: usize = 40;

/// Terminal text: tables in aligned columns (cut by columns to fit [`MAX_LINE_CHARS`]),
/// prose wrapped, charts left out; `colour` paints cells with ANSI colours.
pub struct TextSyntax {
    /// Paint cells with ANSI colours.
    pub colour: bool,
}

impl TextSyntax {
    /// A cell as shown: its text and marks (`*` an SLA failure when not painted grey, `!`
    /// a partial figure).
    fn shown(&self, c: &DocCell) -> String {
        let mut v = c.text.clone();
        if c.sla_failed && !self.colour {
            v.push('*');
        }
        if c.partial.is_some() {
            v.push('!');
        }
        v
    }

    fn one_table(&self, out: &mut String, t: &DocTable, label_w: usize) {
        let widths: Vec<usize> = (0..t.columns.len())
            .map(|j| self.column_width(t, j).min(MAX_LINE_CHARS - label_w - 2))
            .collect();
        let left = t.text_columns;
        let _ = write!(out, "{:<label_w$}", truncate(&t.corner, label_w));
        for (head, w) in t.columns.iter().zip(&widths) {
            let head = truncate(head, *w);
            let _ = if left {
                write!(out, "  {head:<w$}")
            } else {
                write!(out, "  {head:>w$}")
            };
        }
        trim_line(out);
        for row in t.rows.iter().chain(t.footer.iter()) {
            let _ = write!(out, "{:<label_w$}", truncate(&row.label, label_w));
            for (c, w) in row.cells.iter().zip(&widths) {
                let v = truncate(&self.shown(c), *w);
                let padded = if left {
                    format!("  {v:<w$}")
                } else {
                    format!("  {v:>w$}")
                };
                out.push_str(&ansi(&padded, c.colour, self.colour));
            }
            trim_line(out);
        }
    }

    fn column_width(&self, t: &DocTable, j: usize) -> usize {
        t.column_cells(j)
            .map(|c| self.shown(c).chars().count())
            .chain(t.columns.get(j).map(|h| h.chars().count()))
            .max()
            .unwrap_or(1)
    }
}

/// `spans` (whose texts joined are `text`) wrapped as a list item, each piece in its ANSI
/// colour. The wrapped lines keep the text's characters in order and drop only spaces, so
/// each character of a line is found in the text, and takes its piece's colour.
fn painted_lines(spans: &[Span], text: &str) -> Vec<String> {
    let colours: Vec<(char, Colour)> = spans
        .iter()
        .flat_map(|s| s.text.chars().map(move |c| (c, s.colour)))
        .collect();
    let mut at = 0;
    let mut lines = Vec::new();
    for line in wrap(text, MAX_LINE_CHARS, "- ", "  ") {
        let mut out: String = line.chars().take(2).collect();
        let mut run = (Colour::None, String::new());
        for c in line.chars().skip(2) {
            while colours.get(at).is_some_and(|&(t, _)| t != c) {
                at += 1;
            }
            let colour = colours.get(at).map_or(Colour::None, |&(_, k)| k);
            at += 1;
            if colour != run.0 {
                if !run.1.is_empty() {
                    out.push_str(&ansi(&run.1, run.0, true));
                }
                run = (colour, String::new());
            }
            run.1.push(c);
        }
        out.push_str(&ansi(&run.1, run.0, true));
        lines.push(out);
    }
    lines
}

/// End a line without trailing spaces.
fn trim_line(out: &mut String) {
    while out.ends_with(' ') {
        out.pop();
    }
    out.push('\n');
}

fn wrapped(out: &mut String, text: &str, first: &str, rest: &str) {
    for l in wrap(text, MAX_LINE_CHARS, first, rest) {
        out.push_str(&l);
        out.push('\n');
    }
}

impl Syntax for TextSyntax {
    fn heading(&self, out: &mut String, level: u8, text: &str, _anchor: Option<&str>) {
        let text = truncate(text, MAX_LINE_CHARS - 3);
        match level {
            1 => {
                let _ = writeln!(out, "{text}\n{}", "=".repeat(text.chars().count()));
            }
            2 => {
                let _ = writeln!(out, "\n== {text}");
            }
            _ => {
                let _ = writeln!(out, "-- {text}");
            }
        }
    }

    fn paragraph(&self, out: &mut String, text: &str) {
        wrapped(out, text, "", "");
    }

    fn warning(&self, out: &mut String, text: &str) {
        wrapped(out, text, "!! ", "   ");
    }

    fn list(&self, out: &mut String, items: &[String]) {
        for i in items {
            wrapped(out, i, "- ", "  ");
        }
    }

    /// With colour, each piece in its ANSI colour (wrapped as the plain text is); without,
    /// the plain list.
    fn painted_list(&self, out: &mut String, items: &[Vec<Span>]) {
        for i in items {
            let text = joined(i);
            if !self.colour {
                wrapped(out, &text, "- ", "  ");
                continue;
            }
            for line in painted_lines(i, &text) {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }

    fn table(&self, out: &mut String, t: &DocTable) {
        let label_w = t
            .labels()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(6)
            .clamp(3, MAX_ROW_LABEL_CHARS);
        let parts = t.split_to_width(MAX_LINE_CHARS, label_w, |j| self.column_width(t, j) + 2);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            self.one_table(out, part, label_w);
        }
    }
}

/// `s` in colour `c` as ANSI escapes when `colour`.
fn ansi(s: &str, c: Colour, colour: bool) -> String {
    if !colour {
        return s.to_string();
    }
    match c {
        Colour::Green => format!("\x1b[32m{s}\x1b[0m"),
        Colour::Red => format!("\x1b[31m{s}\x1b[0m"),
        Colour::Grey => format!("\x1b[90m{s}\x1b[0m"),
        Colour::None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_painted_item_wraps_as_the_plain_one_and_keeps_its_colours() {
        let spans = vec![
            Span::plain("r2 against r1: relative throughput "),
            Span {
                text: "writes 0.50x-0.70x".into(),
                colour: Colour::Red,
            },
            Span::plain("; "),
            Span {
                text: "point queries ~1.00x (no change) ".repeat(8),
                colour: Colour::Grey,
            },
            Span::plain("."),
        ];
        let text = joined(&spans);
        let plain = wrap(&text, MAX_LINE_CHARS, "- ", "  ");
        let painted = painted_lines(&spans, &text);
        assert!(plain.len() > 1);
        let strip = |l: &str| {
            let mut out = String::new();
            let mut chars = l.chars();
            while let Some(c) = chars.next() {
                if c == '\x1b' {
                    chars.by_ref().take_while(|&c| c != 'm').for_each(drop);
                } else {
                    out.push(c);
                }
            }
            out
        };
        let stripped: Vec<String> = painted.iter().map(|l| strip(l)).collect();
        assert_eq!(stripped, plain);
        assert!(
            painted[0].contains("\x1b[31mwrites 0.50x-0.70x\x1b[0m"),
            "{}",
            painted[0]
        );
        assert!(painted[1].contains("\x1b[90m"), "{}", painted[1]);
    }
}
