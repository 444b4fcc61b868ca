//! One self-contained HTML file: tables with the published colours, inline SVG charts, no
//! scripts and nothing fetched, so it opens offline. Tables fit a 1400-pixel window: a wide
//! one turns its runs into rows, or is cut by columns.

use std::fmt::Write;

use super::document::{DocCell, DocTable, Syntax};
use super::model::{Colour, Span};
use super::svg::esc;

/// The page's style: its colours as variables, set again for a dark screen
/// (`prefers-color-scheme: dark`) and for paper (`print`: light whatever the screen, the
/// painted cells' backgrounds kept, no table row or chart cut by a page break). The inline
/// charts draw their frame in the page's colours (`svg.chart`), their series in the runs'.
const STYLE: &str = ":root{color-scheme:light dark;--fg:#222;--bg:#fff;--muted:#666;--faint:#999;--line:#ccc;--head:#f3f3f3;--panel:#fafafa;--panel-line:#ddd;--green:#b7e4b0;--red:#f4b6b6;--grey:#e2e2e2;--grey-fg:#555;--warn:#8a1c1c;--link:#0645ad;--chart-bg:#fff;--chart-grid:#ddd;--chart-axis:#333;--hatch:#555}
@media (prefers-color-scheme:dark){:root{--fg:#ddd;--bg:#16181c;--muted:#a8a8a8;--faint:#8a8a8a;--line:#4a4d52;--head:#2a2d33;--panel:#1f2227;--panel-line:#3a3d42;--green:#1e5a2a;--red:#6e2424;--grey:#3a3c40;--grey-fg:#c4c4c4;--warn:#ff9c9c;--link:#8ab4f8;--chart-bg:#202329;--chart-grid:#3c4047;--chart-axis:#b0b0b0;--hatch:#d0d0d0}img.flame{filter:invert(0.88) hue-rotate(180deg)}}
img.flame{width:100%;border:1px solid var(--panel-line);margin:6px 0}body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:var(--fg);background:var(--bg);max-width:1340px;overflow-wrap:anywhere}a{color:var(--link)}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid var(--line)}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}td,th{border:1px solid var(--line);padding:3px 6px;text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:normal}
th{background:var(--head)}td.l,th.l{text-align:left;overflow-wrap:anywhere}
.green{background:var(--green)}.red{background:var(--red)}.grey{background:var(--grey);color:var(--grey-fg)}.missing{color:var(--faint);font-style:italic}
.sla{text-decoration:line-through}.note{color:var(--muted);font-size:13px}.warn{color:var(--warn)}.charts svg{margin:4px 8px 12px 0;border:1px solid var(--panel-line);max-width:100%;height:auto}
svg.chart text{fill:var(--fg)}svg.chart .bg{fill:var(--chart-bg)}svg.chart .grid{stroke:var(--chart-grid)}svg.chart .axis,svg.chart .interval{stroke:var(--chart-axis)}svg.chart .hatch-bg{fill:var(--chart-bg)}svg.chart .hatch-line{stroke:var(--hatch)}
summary{cursor:pointer;font-weight:600;margin:8px 0}
nav.toc{border:1px solid var(--panel-line);background:var(--panel);padding:6px 12px;margin:12px 0;font-size:13px;columns:2}nav.toc ul{margin:4px 0;padding-left:18px}
.tldr li{margin:4px 0}
@media print{:root{color-scheme:light;--fg:#000;--bg:#fff;--muted:#444;--faint:#777;--line:#999;--head:#eee;--panel:#fff;--panel-line:#999;--green:#b7e4b0;--red:#f4b6b6;--grey:#e2e2e2;--grey-fg:#444;--warn:#8a1c1c;--link:#000;--chart-bg:#fff;--chart-grid:#ddd;--chart-axis:#333;--hatch:#555}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}body{margin:0;max-width:none;font-size:11pt}img.flame{filter:none}table{font-size:9pt}tr,svg,img,li{break-inside:avoid}h2,h3,summary{break-after:avoid}.charts svg{border:none}nav.toc{columns:3}td.l,th.l{overflow-wrap:break-word}}";

/// Width a table may take in a 1400-pixel window, pixels (the page's margins and a scroll
/// bar off).
pub const TABLE_MAX_PX: usize = 1300;

/// A cell's estimated width in pixels: 13-pixel digits are about 7.5 pixels wide; padding
/// and borders add 14.
fn px(chars: usize) -> usize {
    chars * 15 / 2 + 14
}

fn class_of(c: &DocCell) -> &'static str {
    if c.missing {
        return "missing";
    }
    colour_class(c.colour)
}

/// The class that paints a colour (empty: none).
fn colour_class(c: Colour) -> &'static str {
    match c {
        Colour::Green => "green",
        Colour::Red => "red",
        Colour::Grey => "grey",
        Colour::None => "",
    }
}

/// The estimated width of a table in pixels: the label column and each value column.
fn table_px(t: &DocTable) -> (usize, Vec<usize>) {
    let label = px(t.labels().map(|l| l.chars().count()).max().unwrap_or(4));
    let columns = (0..t.columns.len())
        .map(|j| {
            let widest = t
                .column_cells(j)
                .map(|c| c.text.chars().count() + 2)
                .chain(t.columns.get(j).map(|h| h.chars().count()))
                .max()
                .unwrap_or(1);
            // Text columns wrap (a results dir): they need no more than a line's share.
            px(if t.text_columns {
                widest.min(60)
            } else {
                widest
            })
        })
        .collect();
    (label, columns)
}

/// HTML: one self-contained page.
pub struct HtmlSyntax;

impl HtmlSyntax {
    fn one_table(out: &mut String, t: &DocTable) {
        let _ = write!(out, "<table><tr><th class=\"l\">{}</th>", esc(&t.corner));
        let align = if t.text_columns { " class=\"l\"" } else { "" };
        for c in &t.columns {
            let _ = write!(out, "<th{align}>{}</th>", esc(c));
        }
        out.push_str("</tr>");
        for row in &t.rows {
            let title = row
                .title
                .as_deref()
                .map(|t| format!(" title=\"{}\"", esc(t)))
                .unwrap_or_default();
            let label = match &row.link {
                Some(href) => link(href, &row.label),
                None => esc(&row.label),
            };
            let _ = write!(out, "<tr><td class=\"l\"{title}>{label}</td>");
            for c in &row.cells {
                Self::cell(out, c, t.text_columns);
            }
            out.push_str("</tr>");
        }
        if let Some(f) = &t.footer {
            let _ = write!(out, "<tr><th class=\"l\">{}</th>", esc(&f.label));
            for c in &f.cells {
                let _ = write!(out, "<th>{}</th>", esc(&c.text));
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
    }

    fn cell(out: &mut String, c: &DocCell, text: bool) {
        let mut class = class_of(c).to_string();
        if c.sla_failed {
            class.push_str(" sla");
        }
        if text {
            class.push_str(" l");
        }
        let title = c
            .title
            .as_deref()
            .map(|n| format!(" title=\"{}\"", esc(n)))
            .unwrap_or_default();
        let style = c
            .shade
            .map(|s| {
                let alpha = (s.sqrt() * 0.85).clamp(0.0, 0.85);
                format!(" style=\"background:rgba(31,119,180,{alpha:.2})\"")
            })
            .unwrap_or_default();
        let mark = if c.partial.is_some() { " !" } else { "" };
        let text = if !c.links.is_empty() {
            let links: Vec<String> = c.links.iter().map(|l| link(&l.href, &l.text)).collect();
            links.join(" ")
        } else if c.shade.is_some() && c.text == "." {
            String::new()
        } else {
            esc(&c.text)
        };
        let _ = write!(
            out,
            "<td class=\"{}\"{title}{style}>{text}{mark}</td>",
            class.trim()
        );
    }
}

impl Syntax for HtmlSyntax {
    fn begin(&self, out: &mut String, title: &str) {
        let _ = write!(
            out,
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ibench: {}</title><style>{STYLE}</style></head><body>",
            esc(title)
        );
    }

    fn end(&self, out: &mut String) {
        out.push_str("</body></html>\n");
    }

    fn heading(&self, out: &mut String, level: u8, text: &str, anchor: Option<&str>) {
        let level = level.clamp(1, 6);
        let id = anchor
            .map(|a| format!(" id=\"{}\"", esc(a)))
            .unwrap_or_default();
        let _ = write!(out, "<h{level}{id}>{}</h{level}>", esc(text));
    }

    fn paragraph(&self, out: &mut String, text: &str) {
        let _ = write!(out, "<p>{}</p>", esc(text));
    }

    fn note(&self, out: &mut String, text: &str) {
        let _ = write!(out, "<p class=\"note\">{}</p>", esc(text));
    }

    fn warning(&self, out: &mut String, text: &str) {
        let _ = write!(out, "<p class=\"warn\"><b>{}</b></p>", esc(text));
    }

    fn list(&self, out: &mut String, items: &[String]) {
        out.push_str("<ul>");
        for i in items {
            let _ = write!(out, "<li>{}</li>", esc(i));
        }
        out.push_str("</ul>");
    }

    /// Each painted piece in a `<span>` of its colour's class, as the tables paint cells.
    fn painted_list(&self, out: &mut String, items: &[Vec<Span>]) {
        out.push_str("<ul class=\"tldr\">");
        for i in items {
            out.push_str("<li>");
            for s in i {
                match colour_class(s.colour) {
                    "" => out.push_str(&esc(&s.text)),
                    class => {
                        let _ = write!(out, "<span class=\"{class}\">{}</span>", esc(&s.text));
                    }
                }
            }
            out.push_str("</li>");
        }
        out.push_str("</ul>");
    }

    /// A table wider than the window turns runs into rows when that makes it narrower (more
    /// runs than columns of figures), and is cut by columns when it is still too wide.
    fn table(&self, out: &mut String, t: &DocTable) {
        let width = |t: &DocTable| {
            let (l, c) = table_px(t);
            l + c.iter().sum::<usize>()
        };
        let transposed;
        let t = if width(t) > TABLE_MAX_PX && !t.text_columns {
            transposed = t.transposed();
            if width(&transposed) < width(t) {
                &transposed
            } else {
                t
            }
        } else {
            t
        };
        let (label, columns) = table_px(t);
        for part in t.split_to_width(TABLE_MAX_PX, label, |j| columns[j]) {
            Self::one_table(out, &part);
        }
    }

    fn chart(&self, out: &mut String, svg: &str) {
        let _ = write!(out, "<div class=\"charts\">{svg}</div>");
    }

    fn image(&self, out: &mut String, svg: &str, alt: &str) {
        out.push_str(&svg_img(svg, alt));
    }

    fn contents(&self, out: &mut String, entries: &[(String, String)]) {
        out.push_str("<nav class=\"toc\"><b>Contents</b><ul>");
        for (text, anchor) in entries {
            let _ = write!(out, "<li>{}</li>", link(&format!("#{anchor}"), text));
        }
        out.push_str("</ul></nav>");
    }

    fn fold_begin(&self, out: &mut String, summary: &str) {
        let _ = write!(out, "<details><summary>{}</summary>", esc(summary));
    }

    fn fold_end(&self, out: &mut String) {
        out.push_str("</details>");
    }
}

/// `text` linking to `href`.
fn link(href: &str, text: &str) -> String {
    format!("<a href=\"{}\">{}</a>", esc(href), esc(text))
}

/// An SVG as an image embedded in the page (its scripts do not run there: a static picture
/// that works offline).
fn svg_img(svg: &str, alt: &str) -> String {
    use base64::Engine as _;
    format!(
        "<img class=\"flame\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">",
        esc(alt),
        base64::engine::general_purpose::STANDARD.encode(svg)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{DocRow, Link};

    #[test]
    fn a_linked_label_and_a_cell_of_links_are_anchors() {
        let t = DocTable {
            corner: "report".into(),
            columns: vec!["formats".into()],
            rows: vec![DocRow {
                label: "g / w".into(),
                title: None,
                link: Some("g.w.html".into()),
                cells: vec![DocCell::links(
                    ["txt", "html"]
                        .map(|e| Link {
                            text: e.into(),
                            href: format!("g.w.{e}"),
                        })
                        .to_vec(),
                )],
            }],
            text_columns: true,
            ..DocTable::default()
        };
        let mut out = String::new();
        HtmlSyntax.table(&mut out, &t);
        assert!(
            out.contains(
                "<td class=\"l\"><a href=\"g.w.html\">g / w</a></td><td class=\"l\"><a href=\"g.w.txt\">txt</a> <a href=\"g.w.html\">html</a></td>"
            ),
            "{out}"
        );
    }
}
