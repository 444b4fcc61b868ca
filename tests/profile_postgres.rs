//! `--profile-server` on a private Postgres: the profile of l.i1 holds Postgres's own functions
//! (the executor's insert path), run.json names the top functions, and the flamegraph (on its
//! own, with inferno's scripts, and inside the HTML report with a differential flamegraph
//! against the base run) renders in headless Chromium with no console errors.

mod common;

use common::*;
use ibench::report::{Format, render_dirs};
use ibench::results::target::Engine;
use ibench::server::ServerKind;
use ibench::workload::steps::parse_step_list;

/// An l.i1 against the tables the load left, profiled for up to 5 s.
fn profiled_li1(url: &str, tag: &str) -> (ibench::results::RunRecord, std::path::PathBuf) {
    let mut opts = small_options(url, tag);
    opts.steps = parse_step_list("l.i1").unwrap();
    opts.i1_rows = 10_000;
    opts.label = Some(tag.to_string());
    opts.profile_seconds = Some(5.0);
    run_and_read(opts)
}

#[test]
fn a_profile_of_li1_holds_postgres_functions_and_its_flamegraphs_render() {
    let server = start_server(ServerKind::Postgres, Engine::Innodb);
    let mut load = small_options(&server.url, "profile-load");
    load.steps = parse_step_list("l.i0,l.x").unwrap();
    run_and_read(load);
    let (run, dir) = profiled_li1(&server.url, "first");
    let (second_run, second) = profiled_li1(&server.url, "second");
    let second_profile = second_run.steps[0]
        .metrics
        .as_ref()
        .and_then(|m| m.profile.clone());

    let p = run.steps[0]
        .metrics
        .as_ref()
        .and_then(|m| m.profile.as_ref())
        .expect("l.i1 has a profile");
    assert!(p.error.is_none(), "{:?}", p.error);
    assert!(p.samples > 0 && p.seconds > 0.0, "{p:?}");
    assert_eq!(p.frequency_hz, 499);
    assert!(!p.top_functions.is_empty());
    let shares: f64 = p.top_functions.iter().map(|f| f.self_share).sum();
    assert!(shares > 0.0 && shares <= 1.0 + 1e-9, "{shares}");
    for f in &p.top_functions {
        assert!(f.self_share <= f.total_share + 1e-9, "{f:?}");
    }

    // The folded stacks: one `frames weight` per line, Postgres's insert path among them.
    let folded = std::fs::read_to_string(dir.join(p.folded_file.as_ref().unwrap())).unwrap();
    assert!(folded.lines().all(|l| {
        l.rsplit_once(' ')
            .is_some_and(|(_, n)| n.parse::<u64>().is_ok())
    }));
    assert!(
        folded.contains("ExecInsert"),
        "no ExecInsert in the folded stacks:\n{}",
        &folded[..folded.len().min(2000)]
    );
    assert!(
        !dir.join("profile/l.i1.perf.data").exists(),
        "perf.data is removed once folded"
    );

    // The flamegraph on its own, scripts and all.
    let svg = dir.join(p.svg_file.as_ref().unwrap());
    let (dom, stderr) = chromium(&svg, &["--dump-dom"]);
    assert!(
        console_lines(&stderr).is_empty(),
        "{:?}",
        console_lines(&stderr)
    );
    assert!(
        dom.contains("ExecInsert"),
        "the flamegraph names ExecInsert"
    );

    // The HTML report of both runs: two flamegraphs and one differential flamegraph.
    let page = fresh_dir("profile-report");
    std::fs::create_dir_all(&page).unwrap();
    let page = page.join("report.html");
    let rendered = render_dirs(&[dir.clone(), second], None, Format::Html, false).unwrap();
    assert!(rendered.problems.is_empty(), "{:?}", rendered.problems);
    let html = rendered.text;
    std::fs::write(&page, &html).unwrap();
    assert_eq!(
        html.matches("alt=\"flamegraph\"").count(),
        2,
        "second: {second_profile:?}"
    );
    assert_eq!(html.matches("alt=\"differential flamegraph\"").count(), 1);
    let (_, stderr) = chromium(&page, &["--dump-dom"]);
    assert!(
        console_lines(&stderr).is_empty(),
        "{:?}",
        console_lines(&stderr)
    );

    // Text and Markdown list the top functions.
    let text = render_dirs(std::slice::from_ref(&dir), None, Format::Text, false)
        .unwrap()
        .text;
    assert!(text.contains("Server CPU profile"), "{text}");
    assert!(text.contains(&p.top_functions[0].function));
    let md = render_dirs(&[dir], None, Format::Markdown, false)
        .unwrap()
        .text;
    assert!(md.contains("Server CPU profile"), "{md}");
}
