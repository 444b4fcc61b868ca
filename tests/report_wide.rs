//! Reports at the size of a real comparison: 20 real SQLite runs (tiny sizes) with labels of
//! 40 characters, each with its own seed (so the What differs section is a table of 20 runs). Every line of the text and Markdown reports stays within 160 characters, and
//! the HTML report fits a 1400-pixel window in headless Chromium with no console errors. A
//! report of one run has no relative table or chart, and a sub-second step gets a note instead
//! of empty charts.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{chromium, console_lines, ok};

const RUNS: usize = 20;
const LABEL_CHARS: usize = 40;

/// The label of run `i`: 40 characters, the words that tell runs apart in the middle.
fn label(i: usize) -> String {
    let l = format!("SQLite 3.50 cfg{i:02}_wal_sync_normal cache");
    format!("{l:_<LABEL_CHARS$}")
}

/// One tiny real run of six steps (l.i0 to qp100) into `dir/rN`.
fn run(dir: &Path, i: usize) -> PathBuf {
    let out = dir.join(format!("r{i:02}"));
    let status = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("run")
        .arg(format!("--url=sqlite:{}/r{i:02}.db", dir.display()))
        .arg("--out")
        .arg(&out)
        .args(["--label", &label(i)])
        // Each run its own seed: the What differs section is a table of 20 runs.
        .args(["--seed", &(i + 1).to_string()])
        .args([
            "--load-rows",
            "1000",
            "--i1-rows",
            "200",
            "--i2-rows",
            "100",
        ])
        .args([
            "--query-seconds",
            "1",
            "--query-rates",
            "100",
            "--settle-seconds",
            "0",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "run {i}");
    out
}

/// The 20 runs, made two at a time (one per core).
fn twenty_runs(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut runs = Vec::new();
    for pair in (0..RUNS).collect::<Vec<_>>().chunks(2) {
        let made: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = pair.iter().map(|&i| s.spawn(move || run(dir, i))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        runs.extend(made);
    }
    runs
}

fn report(runs: &[PathBuf], format: &str, output: Option<&Path>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ibench"));
    cmd.arg("report").args(runs).args(["--format", format]);
    if let Some(o) = output {
        cmd.arg("--output").arg(o);
    }
    ok(&cmd.output().unwrap())
}

/// The page as Chromium lays it out in a window `width` pixels wide: (scrollWidth,
/// innerWidth, Chromium's stderr). A copy of the page gets a script that writes both into
/// the DOM (the report itself has no scripts).
fn layout_width(page: &Path, width: u32) -> (u64, u64, String) {
    let html = std::fs::read_to_string(page).unwrap();
    let probe = "<script>addEventListener('load',()=>{document.body.setAttribute('data-fit',document.documentElement.scrollWidth+' '+innerWidth)})</script>";
    let measured = page.with_extension("measure.html");
    std::fs::write(
        &measured,
        html.replace("</body>", &format!("{probe}</body>")),
    )
    .unwrap();
    let (dom, stderr) = chromium(
        &measured,
        &[
            &format!("--window-size={width},900"),
            "--virtual-time-budget=2000",
            "--dump-dom",
        ],
    );
    let fit = dom
        .split("data-fit=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the probe ran");
    let mut parts = fit.split(' ').map(|v| v.parse::<u64>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap(), stderr)
}

#[test]
fn twenty_runs_with_long_labels_fit_160_characters_and_a_1400_pixel_window() {
    let dir = common::fresh_dir("wide");
    let runs = twenty_runs(&dir);
    for format in ["text", "markdown"] {
        let s = report(&runs, format, None);
        let too_wide: Vec<&str> = s.lines().filter(|l| l.chars().count() > 160).collect();
        assert!(too_wide.is_empty(), "{format}: {too_wide:#?}");
        // Every run is named, by its short key, and the run table maps the key to its label.
        for i in 0..RUNS {
            let key = format!("cfg{i:02}_wal_sync_normal");
            let shown = if format == "markdown" {
                key.replace('_', "\\_")
            } else {
                key.clone()
            };
            assert!(s.contains(&shown), "{format}: no key {key}");
        }
        // What differs comes first: the seed, one column per run.
        let what = s.find("What differs").expect("the section");
        assert!(what < s.find("Absolute throughput").unwrap(), "{format}");
        assert!(s.contains("--seed"), "{format}: the seeds differ");
        let full = label(7);
        assert!(
            s.contains(&full) || s.contains(&full.replace('_', "\\_")),
            "{format}: the run table has no label {full}"
        );
    }
    let page = dir.join("report.html");
    report(&runs, "html", Some(&page));
    let (scroll, inner, stderr) = layout_width(&page, 1400);
    assert_eq!(inner, 1400, "the window is 1400 pixels wide");
    assert!(scroll <= inner, "scrollWidth {scroll} > innerWidth {inner}");
    assert!(
        console_lines(&stderr).is_empty(),
        "{:?}",
        console_lines(&stderr)
    );
    // The check is worth something: the same page in a narrow window does scroll sideways.
    let (scroll, inner, _) = layout_width(&page, 500);
    assert!(
        scroll > inner,
        "a 500-pixel window should scroll: {scroll} <= {inner}"
    );
    if let Some(keep) = std::env::var_os("IBENCH_WIDE_SCREENSHOT_OUT") {
        let shot = dir.join("wide.png");
        chromium(
            &page,
            &[
                &format!("--screenshot={}", shot.display()),
                "--window-size=1400,2400",
                "--hide-scrollbars",
            ],
        );
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn one_run_has_nothing_to_compare_and_no_empty_charts() {
    let dir = common::fresh_dir("one-run");
    std::fs::create_dir_all(&dir).unwrap();
    let one = [run(&dir, 1)];
    let record = ibench::results::read_run(&one[0]).unwrap();
    let li0 = record
        .steps
        .iter()
        .find(|s| s.name.to_string() == "l.i0")
        .unwrap();
    assert!(li0.seconds < 2.0, "l.i0 lasted {} s", li0.seconds);

    let page = dir.join("one.html");
    report(&one, "html", Some(&page));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("One run: nothing to compare"), "{html}");
    assert!(!html.contains("Relative to the base"), "{html}");
    assert!(!html.contains("relative to the base</title>"), "{html}");
    // l.i0 lasted under 2 s: a note, no chart of it; the 1-second query steps neither.
    assert!(!html.contains("<title>l.i0 "), "a chart of l.i0");
    assert!(
        html.contains("l.i0 lasted") && html.contains("too short for per-second charts"),
        "{html}"
    );
    // Every chart the page draws has data in it (a path or a bar), none is empty axes.
    for svg in html.split("<svg class=\"chart\"").skip(1) {
        let svg = svg.split("</svg>").next().unwrap();
        assert!(
            svg.contains("class=\"series\"") || svg.contains("class=\"bar\""),
            "an empty chart: {svg}"
        );
    }
    let (_, stderr) = chromium(&page, &["--dump-dom"]);
    assert!(
        console_lines(&stderr).is_empty(),
        "{:?}",
        console_lines(&stderr)
    );

    let text = report(&one, "text", None);
    assert!(text.contains("One run: nothing to compare"), "{text}");
    assert!(!text.contains("Relative to the base"), "{text}");
}
