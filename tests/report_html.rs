//! The HTML report opens in headless Chromium (Debian's `chromium`, installed by
//! scripts/test.sh): no console errors, every chart present, the tl;dr and the table of
//! contents first, undecided bars hatched, and a screenshot renders; the same for a matrix of
//! nine runs. Set IBENCH_SCREENSHOT_OUT=PATH (docs/report.png) and
//! IBENCH_MATRIX_SCREENSHOT_OUT=PATH (docs/matrix-report.png) to keep the screenshots.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{chromium, console_lines, ok};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of the directory `from` (and its subdirectories) as `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn the_html_report_opens_without_console_errors_and_shows_every_chart() {
    let dir = common::fresh_dir("html");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    // The fixtures copied into directories named as a user would name them, and reported
    // from beside them, so that the runs' keys and results column read as in a user's report
    // (the screenshot in docs/report.png).
    let results = dir.join("results");
    let names = ["sqlite", "pg15", "pg15-commit-delay"];
    for (name, fixture_name) in
        names
            .iter()
            .zip(["sqlite-base", "postgres", "postgres-commit-delay"])
    {
        copy_dir(&fixture(fixture_name), &results.join(name));
    }
    let runs = names.map(|n| results.join(n));
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .current_dir(&results)
        .arg("report")
        .args(names)
        .args(["--format", "html", "--output"])
        .arg(&page)
        .output()
        .unwrap();
    ok(&out);

    // Charts expected from the fixtures themselves: the throughput bar chart, and per step
    // one rate chart per op kind in any run's timeline, the max-latency chart, and the
    // database-size chart where a run sampled sizes during the step. A step that lasted
    // under 2 s in every run gets a note instead of charts.
    let mut longest: std::collections::BTreeMap<String, f64> = Default::default();
    for r in &runs {
        for s in ibench::results::read_run(r).unwrap().steps {
            let l = longest.entry(s.name.to_string()).or_default();
            *l = l.max(s.seconds);
        }
    }
    let charted = |step: &str| longest.get(step).is_some_and(|&s| s >= 2.0);
    let mut expected = 1;
    let mut steps = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    let mut sized = BTreeSet::new();
    for r in &runs {
        for line in ibench::results::read_timeline(r).unwrap() {
            steps.insert(line.step.to_string());
            for k in line.ops.keys() {
                kinds.insert((line.step.to_string(), k.clone()));
            }
        }
        for s in ibench::sampler::read_metrics(r).unwrap() {
            if let Some(step) = s.step
                && (s.db_size_bytes.is_some() || s.data_dir_bytes.is_some())
            {
                sized.insert(step);
            }
        }
    }
    assert!(!sized.is_empty(), "the fixtures have size samples");
    let short: Vec<&String> = steps.iter().filter(|s| !charted(s)).collect();
    assert!(
        !short.is_empty(),
        "the fixtures have a sub-2-second step (l.x)"
    );
    expected += kinds.iter().filter(|(s, _)| charted(s)).count()
        + steps.iter().filter(|s| charted(s)).count()
        + sized.iter().filter(|s| charted(s)).count();

    let (dom, stderr) = chromium(&page, &["--dump-dom"]);
    assert!(
        console_lines(&stderr).is_empty(),
        "{:?}",
        console_lines(&stderr)
    );
    assert_eq!(dom.matches("<svg class=\"chart\"").count(), expected);
    for s in &steps {
        assert!(
            dom.contains(&format!("id=\"step-{s}\"")),
            "no section for {s}"
        );
    }
    for s in &short {
        assert!(
            dom.contains(&format!("{s} lasted")) && !dom.contains(&format!("<title>{s} ")),
            "{s}: a note, no charts"
        );
    }
    // Single runs without a host probe decide no rate (one run a side, docs/method.md): the
    // relative figures are grey with the reason in their hover, and red is the failed SLAs'.
    assert!(dom.contains("class=\"red sla\""));
    assert!(!dom.contains("class=\"green\""));
    assert!(dom.contains("not decided: one run a side"));
    assert!(dom.contains("grey sla"));
    // The tl;dr first, then a table of contents linking every section, each step's section
    // folded; the load steps (under a second) are not decided: their bars are hatched.
    let tldr = dom.find("id=\"tldr\"").expect("a tl;dr");
    let toc = dom
        .find("<nav class=\"toc\">")
        .expect("a table of contents");
    let differs = dom.find("id=\"what-differs\"").expect("what differs");
    assert!(
        tldr < toc && toc < differs,
        "tl;dr, contents, then the sections"
    );
    for s in &steps {
        assert!(
            dom.contains(&format!("href=\"#step-{s}\"")),
            "no link to {s}"
        );
    }
    assert!(dom.matches("<details>").count() >= steps.len());
    // The tl;dr's families painted as the relative table paints them: pg15's range and point
    // queries are one run a side without a probe (grey); its writes are too short (grey).
    let tldr_list = &dom[tldr..toc];
    assert!(tldr_list.contains("<ul class=\"tldr\">"), "{tldr_list}");
    assert!(
        tldr_list.contains(
            "<span class=\"grey\">range queries not decided (one run a side; 0.12x-0.13x as measured)</span>"
        ),
        "{tldr_list}"
    );
    assert!(
        tldr_list.contains("<span class=\"grey\">writes not decided (too short;"),
        "{tldr_list}"
    );
    assert!(dom.contains("class=\"bar undecided\""), "hatched bars");
    assert!(dom.contains("fill=\"url(#hatch-"), "the hatch pattern");

    let shot = dir.join("report.png");
    chromium(
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
            "--hide-scrollbars",
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 10_000, "screenshot is {} bytes", png.len());
    if let Some(keep) = std::env::var_os("IBENCH_SCREENSHOT_OUT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn the_console_check_does_catch_errors() {
    // The check above is only worth something if it sees errors when there are some.
    let dir = common::fresh_dir("html-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("bad.html");
    std::fs::write(
        &page,
        "<html><body><script>console.error('boom'); notDefined();</script></body></html>",
    )
    .unwrap();
    let (_, stderr) = chromium(&page, &["--dump-dom"]);
    assert_eq!(console_lines(&stderr).len(), 2, "{stderr}");
}

/// A matrix of nine SQLite runs (one a server, a small load and 1 s query steps): its group
/// report opens with the tl;dr of eight runs against the base and a table of contents, its
/// chart hatches the figures the rule did not decide (every step here is under the 3 s
/// floor), the index page has the tl;dr per group, and both render in Chromium.
#[test]
fn a_nine_run_matrix_report_opens_with_its_tldr_and_contents() {
    let dir = common::fresh_dir("html-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    let mut toml = String::from(
        "[workloads.small]\nload_rows = 3000\nquery_seconds = 1\nsteps = [\"l.i0\", \"l.x\", \"qr100\", \"qp100\"]\n[groups.nine]\nbase = \"s1.base\"\n",
    );
    for i in 1..=9 {
        toml.push_str(&format!(
            "[servers.s{i}]\nurl = \"sqlite:{}\"\nlabel = \"sqlite-{i}\"\n",
            dir.join(format!("s{i}-{{cell}}.db")).display()
        ));
    }
    let file = dir.join("nine.toml");
    std::fs::write(&file, toml).unwrap();
    let out_dir = dir.join("out");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        ok(&out);
    };
    // Run and report from the matrix's directory with a relative --out, so that the run
    // table's results column reads as in a user's report (docs/matrix-report.png).
    run(&["matrix", "run", "nine.toml", "--out", "out", "--quiet"]);
    run(&["matrix", "report", "out"]);
    let report = out_dir.join("report");
    let page = report.join("nine.small.html");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("nine.small.json")).unwrap())
            .unwrap();
    let lines = json["comparison"]["tldr"]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 8, "{lines:?}");
    let (dom, stderr) = chromium(&page, &["--dump-dom"]);
    assert!(
        console_lines(&stderr).is_empty(),
        "{:?}",
        console_lines(&stderr)
    );
    let tldr = dom.find("id=\"tldr\"").expect("a tl;dr");
    let toc = dom
        .find("<nav class=\"toc\">")
        .expect("a table of contents");
    assert!(tldr < toc && toc < dom.find("id=\"what-differs\"").unwrap());
    assert!(
        dom.matches("class=\"bar undecided\"").count() >= 8 * 4,
        "hatched bars"
    );
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        index.contains("id=\"tldr\"") && index.contains("nine / small"),
        "{index}"
    );
    // The index page's tl;dr is painted like the group report's.
    assert!(index.contains("<ul class=\"tldr\"><li>"), "{index}");
    assert_eq!(
        index.matches("<span class=\"").count(),
        dom.matches("<span class=\"").count(),
        "{index}"
    );
    let shot = dir.join("matrix.png");
    chromium(
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,1800",
            "--hide-scrollbars",
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    if let Some(keep) = std::env::var_os("IBENCH_MATRIX_SCREENSHOT_OUT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
