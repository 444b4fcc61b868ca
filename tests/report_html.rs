//! The HTML report opens in headless Chromium (Debian's `chromium`, installed by
//! scripts/test.sh): no console errors, every chart present, and a screenshot renders.
//! Set IBENCH_SCREENSHOT_OUT=PATH to keep the screenshot (docs/report.png is made that way).

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use common::{chromium, console_lines, ok};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn the_html_report_opens_without_console_errors_and_shows_every_chart() {
    let dir = common::fresh_dir("html");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    let runs = [
        fixture("sqlite-base"),
        fixture("postgres"),
        fixture("postgres-commit-delay"),
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("report")
        .args(&runs)
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
    assert!(dom.contains("class=\"red\""));
    assert!(dom.contains("class=\"green\""));
    assert!(dom.contains("grey sla"));

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
