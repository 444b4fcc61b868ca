//! Small, dependency-free SVG charts for the HTML report.

use crate::stats::convert::usize_f64;
use std::fmt::Write;

/// Colours of the runs' series, by the run's index in the report, so that a run keeps its
/// colour in every chart of the report (after 12, the colours repeat dashed, then dotted).
/// No red and no green: in the tables those say worse and better, and a run's bars must not
/// seem to. Each reads on the white chart and on the dark one of the HTML's dark mode.
pub const PALETTE: [&str; 12] = [
    "#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f", "#bcbd22",
    "#e7ba52", "#6b6ecf", "#a55194", "#c49c94",
];

/// The colour of run `run`'s series: the same in every chart of a report.
pub fn run_colour(run: usize) -> &'static str {
    PALETTE[run % PALETTE.len()]
}

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 40.0;

pub use super::escape::xml as esc;

/// A "nice" tick step for a range, so axes read 0, 250, 500 … rather than 0, 237, 474 ….
pub fn nice_step(range: f64, ticks: usize) -> f64 {
    if range <= 0.0 || !range.is_finite() {
        return 1.0;
    }
    let raw = range / usize_f64(ticks.max(1));
    let magnitude = 10f64.powf(raw.log10().floor());
    let f = raw / magnitude;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// A tick label: compact (1.5k, 2M) for large numbers.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Height of one legend entry.
const LEGEND_ROW: f64 = 16.0;

/// A chart's height: the plot's, or more when its legend (one row per series) is taller.
fn chart_height(series: usize) -> f64 {
    HEIGHT.max(TOP + 8.0 + usize_f64(series) * LEGEND_ROW)
}

/// The dash pattern of run `run`'s series: solid for the first 12 (one colour each), then
/// dashed and dotted, so that 36 runs stay apart.
fn dash(run: usize) -> &'static str {
    match (run / PALETTE.len()) % 3 {
        0 => "",
        1 => r#" stroke-dasharray="6 3""#,
        _ => r#" stroke-dasharray="2 2""#,
    }
}

/// One line of a line chart: its legend label, the index of its run in the report (its
/// colour and dash), whether it is its run's second curve in the chart (drawn as a wide,
/// pale band under the first: a database's size on disk beside its own count) and its
/// `(x, y)` points.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The legend's label.
    pub label: String,
    /// The run's index in the report: its colour.
    pub run: usize,
    /// Its run's second curve in this chart.
    pub second: bool,
    /// The points, `(x, y)`.
    pub points: Vec<(f64, f64)>,
}

/// Open an `<svg>` chart with its title; `series` sizes the legend.
fn open_svg(out: &mut String, title: &str, series: usize) {
    let h = chart_height(series);
    let _ = write!(
        out,
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {h}" width="{WIDTH}" height="{h}" role="img" aria-label="{t}"><title>{t}</title><rect x="0" y="0" width="{WIDTH}" height="{h}" fill="white" class="bg"/><text x="{LEFT}" y="18" font-size="13" font-weight="bold">{t}</text>"#,
        t = esc(title)
    );
}

/// Horizontal grid lines with their labels from 0 to `y_max`.
fn y_grid(out: &mut String, y_max: f64) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let step = nice_step(y_max, 5);
    let mut v = 0.0;
    while v <= y_max * 1.0001 {
        let y = TOP + plot_h - v / y_max * plot_h;
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd" class="grid"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 4.0,
            y + 3.0,
            tick_label(v)
        );
        v += step;
    }
}

/// The y range of a chart: the largest value rounded up to a tick.
fn y_range(y_top: f64) -> f64 {
    if y_top > 0.0 {
        let s = nice_step(y_top, 5);
        (y_top / s).ceil() * s
    } else {
        1.0
    }
}

/// A chart's frame: title, axes and their labels.
struct Frame<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    y_max: f64,
    x_max: f64,
    series: usize,
}

fn frame(out: &mut String, f: &Frame) {
    let Frame {
        title,
        x_label,
        y_label,
        y_max,
        x_max,
        series,
    } = *f;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    open_svg(out, title, series);
    y_grid(out, y_max);
    // X labels.
    let xstep = nice_step(x_max, 6);
    let mut x = 0.0;
    while x <= x_max * 1.0001 {
        let px = LEFT + x / x_max * plot_w;
        let _ = write!(
            out,
            r#"<text x="{px:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"#,
            TOP + plot_h + 14.0,
            tick_label(x)
        );
        x += xstep;
    }
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{b:.1}" stroke="#333" class="axis"/><line x1="{LEFT}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" stroke="#333" class="axis"/><text x="{cx:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text><text x="14" y="{cy:.1}" font-size="11" text-anchor="middle" transform="rotate(-90 14 {cy:.1})">{}</text>"##,
        HEIGHT - 6.0,
        esc(x_label),
        esc(y_label),
        b = TOP + plot_h,
        r = LEFT + plot_w,
        cx = LEFT + plot_w / 2.0,
        cy = TOP + plot_h / 2.0,
    );
}

/// The fill opacity of run `run`'s bars: full for the first 12 colours, lighter after.
fn opacity(run: usize) -> &'static str {
    match (run / PALETTE.len()) % 3 {
        0 => "1",
        1 => "0.6",
        _ => "0.3",
    }
}

/// The opacity of a second curve (a band) and of its legend swatch.
const BAND_OPACITY: &str = "0.45";

/// The legend: one swatch and label per entry, `(label, run, second curve)`.
fn legend(out: &mut String, entries: &[(&str, usize, bool)]) {
    for (i, &(l, run, second)) in entries.iter().enumerate() {
        let y = TOP + 8.0 + usize_f64(i) * LEGEND_ROW;
        let x = WIDTH - RIGHT + 10.0;
        let _ = write!(
            out,
            r#"<rect x="{x}" y="{:.1}" width="10" height="10" fill="{}" fill-opacity="{}"/><text x="{:.1}" y="{y:.1}" font-size="11" dominant-baseline="middle">{}</text>"#,
            y - 5.0,
            run_colour(run),
            if second { BAND_OPACITY } else { opacity(run) },
            x + 14.0,
            esc(l)
        );
    }
}

/// A series with fewer points than this gets a dot at each.
const MARKED_POINTS: usize = 3;

/// A line chart: one series per run, `(x, y)` points; the `i`th series takes run `i`'s colour.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(&str, Vec<(f64, f64)>)],
) -> String {
    line_chart_marked(title, (x_label, y_label), series, &[])
}

/// A moment marked on a line chart: a dashed vertical line at `x`, its label at the top (the
/// loss of a primary, the promotion of its replica).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// Where, in the x axis's units.
    pub x: f64,
    /// What happened then.
    pub label: String,
}

/// [`line_chart`] with `marks` drawn over it; `labels` are the x and y axes'.
pub fn line_chart_marked(
    title: &str,
    labels: (&str, &str),
    series: &[(&str, Vec<(f64, f64)>)],
    marks: &[Mark],
) -> String {
    let lines: Vec<Line> = series
        .iter()
        .enumerate()
        .map(|(run, (label, points))| Line {
            label: (*label).to_string(),
            run,
            second: false,
            points: points.clone(),
        })
        .collect();
    run_line_chart_marked(title, labels, &lines, marks)
}

/// A line chart of lines that each name their run, so that a run keeps its colour when
/// another run has no line in the chart.
pub fn run_line_chart(title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> String {
    run_line_chart_marked(title, (x_label, y_label), lines, &[])
}

/// [`run_line_chart`] with `marks` drawn over it; `labels` are the x and y axes'.
fn run_line_chart_marked(
    title: &str,
    labels: (&str, &str),
    lines: &[Line],
    marks: &[Mark],
) -> String {
    let (x_label, y_label) = labels;
    let points = || lines.iter().flat_map(|l| l.points.iter());
    let x_max = points()
        .map(|p| p.0)
        .chain(marks.iter().map(|m| m.x))
        .fold(1.0_f64, f64::max);
    let y_top = points().map(|p| p.1).fold(0.0_f64, f64::max);
    let y_max = y_range(y_top);
    let mut out = String::new();
    frame(
        &mut out,
        &Frame {
            title,
            x_label,
            y_label,
            y_max,
            x_max,
            series: lines.len(),
        },
    );
    for line in lines.iter().filter(|l| !l.points.is_empty()) {
        write_line(&mut out, line, x_max, y_max);
    }
    draw_marks(&mut out, marks, x_max);
    let entries: Vec<(&str, usize, bool)> = lines
        .iter()
        .map(|l| (l.label.as_str(), l.run, l.second))
        .collect();
    legend(&mut out, &entries);
    out.push_str("</svg>");
    out
}

/// Each mark as a dashed vertical line over the plot, its label above it (alternately
/// higher and lower, so that two marks a second apart stay readable).
fn draw_marks(out: &mut String, marks: &[Mark], x_max: f64) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    for (i, m) in marks.iter().enumerate() {
        let px = LEFT + m.x / x_max * plot_w;
        let ty = TOP + 10.0 + if i % 2 == 0 { 0.0 } else { 12.0 };
        let _ = write!(
            out,
            r##"<g class="mark"><line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="currentColor" stroke-width="1" stroke-dasharray="4 3"/><text x="{:.1}" y="{ty:.1}" font-size="10" fill="currentColor">{}</text><title>{}</title></g>"##,
            TOP + plot_h,
            px + 3.0,
            esc(&m.label),
            esc(&m.label)
        );
    }
}

/// One line of a line chart scaled to `x_max` and `y_max`.
fn write_line(out: &mut String, line: &Line, x_max: f64, y_max: f64) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let at = |(x, y): (f64, f64)| (LEFT + x / x_max * plot_w, TOP + plot_h - y / y_max * plot_h);
    let mut d = String::new();
    for (j, p) in line.points.iter().enumerate() {
        let (px, py) = at(*p);
        let _ = write!(d, "{}{px:.1},{py:.1}", if j == 0 { "M" } else { " L" });
    }
    let colour = run_colour(line.run);
    let (class, width) = if line.second {
        (
            format!(r#"series second" stroke-opacity="{BAND_OPACITY}"#),
            "4",
        )
    } else {
        ("series".to_string(), "1.5")
    };
    let _ = write!(
        out,
        r#"<path class="{class}" d="{d}" fill="none" stroke="{colour}" stroke-width="{width}"{}><title>{}</title></path>"#,
        dash(line.run),
        esc(&line.label)
    );
    // A line needs two points: a series of one or two (a database size sampled every few
    // seconds in a short step) gets a dot at each, or it would not show.
    if line.points.len() < MARKED_POINTS {
        for p in &line.points {
            let (cx, cy) = at(*p);
            let _ = write!(
                out,
                r#"<circle class="point" cx="{cx:.1}" cy="{cy:.1}" r="3" fill="{colour}"><title>{}: {}</title></circle>"#,
                esc(&line.label),
                trim(p.1)
            );
        }
    }
}

/// One bar of a bar chart: its value, whether the comparison left it undecided (drawn
/// hatched and faded: host-affected, partial, within the base's spread), and the repeats'
/// interval (drawn as an error bar) where there are repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    /// Its height.
    pub value: f64,
    /// Not decided as a change (`report::paint`): hatched and faded.
    pub undecided: bool,
    /// Low and high ends of its interval over repeats, when there are repeats.
    pub interval: Option<[f64; 2]>,
}

impl Bar {
    /// A plain bar: decided (or nothing to decide), no interval.
    pub fn plain(value: f64) -> Bar {
        Bar {
            value,
            undecided: false,
            interval: None,
        }
    }
}

/// A grouped bar chart: one group per category, one bar per run. `values[run][category]`.
/// An undecided bar is hatched and faded; a bar with an interval gets an error bar.
pub fn bar_chart(
    title: &str,
    y_label: &str,
    categories: &[String],
    runs: &[&str],
    values: &[Vec<Option<Bar>>],
) -> String {
    let y_top = values
        .iter()
        .flatten()
        .flatten()
        .map(|b| b.interval.map_or(b.value, |[_, hi]| hi.max(b.value)))
        .fold(0.0_f64, f64::max);
    let y_max = y_range(y_top);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let mut out = String::new();
    open_svg(&mut out, title, runs.len());
    let hatch = format!("hatch-{:x}", fnv(title));
    hatch_pattern(&mut out, &hatch);
    y_grid(&mut out, y_max);
    let group_w = plot_w / usize_f64(categories.len().max(1));
    let bar_w = (group_w * 0.8) / usize_f64(runs.len().max(1));
    for (c, cat) in categories.iter().enumerate() {
        let gx = LEFT + usize_f64(c) * group_w + group_w * 0.1;
        for (r, run) in runs.iter().enumerate() {
            let Some(Some(bar)) = values.get(r).and_then(|row| row.get(c)) else {
                continue;
            };
            let slot = BarSlot {
                x: gx + usize_f64(r) * bar_w,
                w: bar_w.max(1.0) - 1.0,
                run: r,
                y_max,
                plot_h,
            };
            write_bar(&mut out, &slot, bar, (run, cat), &hatch);
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"#,
            gx + group_w * 0.4,
            TOP + plot_h + 14.0,
            esc(cat)
        );
    }
    // The line at 1 (the base) when the chart is of ratios reaching it.
    let cy = TOP + plot_h / 2.0;
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" stroke="#333" class="axis"/><text x="14" y="{cy:.1}" font-size="11" text-anchor="middle" transform="rotate(-90 14 {cy:.1})">{}</text>"##,
        esc(y_label),
        b = TOP + plot_h,
        r = LEFT + plot_w,
    );
    let entries: Vec<(&str, usize, bool)> = runs
        .iter()
        .enumerate()
        .map(|(run, l)| (*l, run, false))
        .collect();
    legend(&mut out, &entries);
    if values.iter().flatten().flatten().any(|b| b.undecided) {
        hatch_legend(&mut out, runs.len(), &hatch);
    }
    out.push_str("</svg>");
    out
}

/// The pattern that hatches an undecided bar, under the id `hatch`.
fn hatch_pattern(out: &mut String, hatch: &str) {
    let _ = write!(
        out,
        r##"<defs><pattern id="{hatch}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="white" fill-opacity="0.55" class="hatch-bg"/><line x1="0" y1="0" x2="0" y2="6" stroke="#555" stroke-width="2" class="hatch-line"/></pattern></defs>"##
    );
}

/// Where one bar of a bar chart stands: its left edge and width, its run's index (its colour)
/// and the plot's vertical scale.
struct BarSlot {
    x: f64,
    w: f64,
    run: usize,
    y_max: f64,
    plot_h: f64,
}

impl BarSlot {
    /// The vertical position of value `v` on the plot.
    fn y_of(&self, v: f64) -> f64 {
        TOP + self.plot_h - v / self.y_max * self.plot_h
    }
}

/// One bar at `slot`, named by its run and category: the bar, its hatching when it is
/// undecided, and its error bar when it has an interval.
fn write_bar(out: &mut String, slot: &BarSlot, bar: &Bar, (run, cat): (&str, &str), hatch: &str) {
    let (x, w, r) = (slot.x, slot.w, slot.run);
    let h = bar.value / slot.y_max * slot.plot_h;
    let (class, faded, why) = if bar.undecided {
        (
            "bar undecided",
            "0.35",
            " (not decided: grey in the tables)",
        )
    } else {
        ("bar", opacity(r), "")
    };
    let interval = bar
        .interval
        .map(|[lo, hi]| format!(", {}-{} over the repeats", trim(lo), trim(hi)))
        .unwrap_or_default();
    let _ = write!(
        out,
        r#"<rect class="{class}" x="{x:.1}" y="{:.1}" width="{w:.1}" height="{h:.1}" fill="{}" fill-opacity="{faded}"><title>{}: {} = {}{interval}{why}</title></rect>"#,
        slot.y_of(bar.value),
        run_colour(r),
        esc(run),
        esc(cat),
        trim(bar.value)
    );
    if bar.undecided {
        let _ = write!(
            out,
            r#"<rect class="hatch" x="{x:.1}" y="{:.1}" width="{w:.1}" height="{h:.1}" fill="url(#{hatch})"/>"#,
            slot.y_of(bar.value)
        );
    }
    if let Some([lo, hi]) = bar.interval {
        let cx = x + w / 2.0;
        let (y_lo, y_hi) = (slot.y_of(lo), slot.y_of(hi));
        let _ = write!(
            out,
            r##"<path class="interval" d="M{cx:.1},{y_lo:.1} L{cx:.1},{y_hi:.1} M{:.1},{y_lo:.1} L{:.1},{y_lo:.1} M{:.1},{y_hi:.1} L{:.1},{y_hi:.1}" stroke="#222" stroke-width="1" fill="none"/>"##,
            cx - 3.0,
            cx + 3.0,
            cx - 3.0,
            cx + 3.0
        );
    }
}

/// The legend's last line, under the runs of a chart of `runs` runs: a hatched swatch,
/// "hatched: not decided".
fn hatch_legend(out: &mut String, runs: usize, hatch: &str) {
    let y = chart_height(runs) - 10.0;
    let _ = write!(
        out,
        r##"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="#999" fill-opacity="0.35"/><rect x="{:.1}" y="{:.1}" width="10" height="10" fill="url(#{hatch})"/><text x="{:.1}" y="{y:.1}" font-size="10" dominant-baseline="middle">hatched: not decided</text>"##,
        WIDTH - RIGHT + 10.0,
        y - 5.0,
        WIDTH - RIGHT + 10.0,
        y - 5.0,
        WIDTH - RIGHT + 24.0,
    );
}

/// A small stable hash of a chart's title, for ids that stay apart within one page.
fn fnv(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undecided_bar_is_hatched_and_faded_and_an_interval_is_an_error_bar() {
        let undecided = Bar {
            value: 0.5,
            undecided: true,
            interval: None,
        };
        let spread = Bar {
            value: 1.3,
            undecided: false,
            interval: Some([1.1, 1.6]),
        };
        let b = bar_chart(
            "t",
            "x",
            &["l.i0".into()],
            &["a", "b"],
            &[vec![Some(undecided)], vec![Some(spread)]],
        );
        assert_eq!(b.matches("class=\"bar undecided\"").count(), 1);
        assert_eq!(b.matches("class=\"hatch\"").count(), 1);
        assert!(b.contains("fill-opacity=\"0.35\""));
        assert!(b.contains("hatched: not decided"));
        assert_eq!(b.matches("class=\"interval\"").count(), 1);
        assert!(b.contains("1.1-1.6 over the repeats"));
        // The top of the axis reaches the interval's end.
        assert!(b.contains(">1.6<") || b.contains(">2<"), "{b}");
    }

    #[test]
    fn nice_steps_and_labels() {
        assert_eq!(nice_step(1000.0, 5), 200.0);
        assert_eq!(nice_step(1300.0, 5), 500.0);
        assert_eq!(nice_step(0.9, 5), 0.2);
        assert_eq!(tick_label(1500.0), "1.5k");
        assert_eq!(tick_label(2_000_000.0), "2M");
        assert_eq!(tick_label(0.25), "0.25");
    }

    #[test]
    fn charts_are_svg_with_one_path_or_bar_per_series() {
        let s = line_chart(
            "rate <&>",
            "s",
            "rows/s",
            &[("a", vec![(1.0, 5.0), (2.0, 7.0)]), ("b", vec![(1.0, 1.0)])],
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert_eq!(s.matches("class=\"series\"").count(), 2);
        // b's one point, and a's two, each a dot: a line of one point would not show.
        assert_eq!(s.matches("class=\"point\"").count(), 3);
        assert!(s.contains("rate &lt;&amp;&gt;"));
        let b = bar_chart(
            "t",
            "x",
            &["l.i0".into(), "l.x".into()],
            &["a", "b"],
            &[
                vec![Some(Bar::plain(1.0)), Some(Bar::plain(2.0))],
                vec![Some(Bar::plain(1.5)), None],
            ],
        );
        assert_eq!(b.matches("class=\"bar\"").count(), 3);
        assert!(!b.contains("class=\"hatch\"") && !b.contains("not decided"));
    }
}
