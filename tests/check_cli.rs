//! `ibench check` from the command line: its verdicts and exit codes on runs whose figures are
//! known (copies of a recorded PostgreSQL run with their throughput set), and one clear line
//! with exit 2 for every kind of bad input. The fixture's write steps last under a second:
//! below the default floor (3 s) they are "too short", so the tests of the other paths lower
//! it with `--min-step-seconds 0`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{fresh_dir, ibench, ibench_with_env};

const FIXTURE: &str = "tests/fixtures/postgres";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A copy of the fixture run labelled `label`, every step's throughput times `factor` and
/// `edit` applied to its run.json.
fn run_copy(
    root: &Path,
    name: &str,
    label: &str,
    factor: f64,
    edit: impl Fn(&mut serde_json::Value),
) -> PathBuf {
    let dir = root.join(name);
    copy_dir(Path::new(FIXTURE), &dir);
    let path = dir.join("run.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["label"] = label.into();
    for s in v["steps"].as_array_mut().unwrap() {
        let t = s["throughput"].as_f64().unwrap();
        s["throughput"] = (t * factor).into();
    }
    edit(&mut v);
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    dir
}

fn step_mut<'a>(v: &'a mut serde_json::Value, name: &str) -> &'a mut serde_json::Value {
    v["steps"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["name"] == name)
        .unwrap()
}

/// Three base and three candidate copies; `candidate` edits the candidate's.
fn three_a_side(tag: &str, candidate: impl Fn(usize, &mut serde_json::Value)) -> Vec<String> {
    let root = fresh_dir(tag);
    let mut dirs = Vec::new();
    for (i, f) in [1.0, 1.01, 0.99].into_iter().enumerate() {
        dirs.push(run_copy(&root, &format!("b{i}"), "base", f, |_| {}));
        dirs.push(run_copy(&root, &format!("c{i}"), "patch", f * 1.005, |v| {
            candidate(i, v);
        }));
    }
    dirs.iter().map(|d| d.display().to_string()).collect()
}

fn args<'a>(dirs: &'a [String], more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["check", "--base", "base"];
    a.extend(dirs.iter().map(String::as_str));
    a.extend(more);
    a
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Exit 2 and one error line on stderr holding every needle.
fn assert_bad_input(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "'{n}' not in: {stderr}");
    }
}

#[test]
fn like_runs_within_noise_never_regress() {
    let dirs = three_a_side("check-same", |_, _| {});
    let out = ibench(&args(&dirs, &[]));
    let text = stdout(&out);
    // The write steps are too short at the default floor: exit 3, never 1.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("REGRESSED"), "{text}");
    assert!(text.contains("too short"), "{text}");
    assert!(
        text.contains("qr100") && text.contains("p99 latency"),
        "{text}"
    );
    // 1% apart with three repeats a side: every interval lies inside ±5%, so no change.
    let out = ibench(&args(&dirs, &["--min-step-seconds", "0"]));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("no change"), "{text}");
    assert!(text.contains("cpupq") && text.contains("work"), "{text}");
}

#[test]
fn a_step_that_got_slower_is_named_with_exit_1_in_every_format() {
    let dirs = three_a_side("check-slower", |i, v| {
        let s = step_mut(v, "l.i1");
        let t = s["throughput"].as_f64().unwrap();
        s["throughput"] = (t * [0.6, 0.62, 0.58][i]).into();
    });
    let root = fresh_dir("check-slower-out");
    std::fs::create_dir_all(&root).unwrap();
    let junit = root.join("junit.xml");
    let summary = root.join("summary.md");
    let junit_arg = junit.display().to_string();
    let out = ibench_with_env(
        &args(&dirs, &["--junit", &junit_arg, "--min-step-seconds", "0"]),
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let last = text.lines().last().unwrap_or("");
    assert!(last.contains("regressed: l.i1 throughput"), "{last}");
    assert!(!last.contains("l.i0"), "{last}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(xml.contains("name=\"l.i1 throughput\"><failure"), "{xml}");
    assert!(xml.contains("(Welch)\" type=\"regression\""), "{xml}");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("## ibench check"), "{md}");
    assert!(md.contains("**REGRESSED**"), "{md}");
    let out = ibench(&args(
        &dirs,
        &["--format", "json", "--min-step-seconds", "0"],
    ));
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["exit_code"], 1);
    let verdicts = v["pairs"][0]["verdicts"].as_array().unwrap();
    let i1 = verdicts
        .iter()
        .find(|s| s["step"] == "l.i1" && s["figure"] == "throughput")
        .unwrap();
    assert_eq!(i1["verdict"], "regressed");
    assert_eq!(i1["method"], "repeats");
    assert_eq!(i1["kind"], "rate");
    assert!(i1["interval"][1].as_f64().unwrap() < 0.95, "{i1}");
    // Only work judged: the throughput is not, and nothing regressed.
    let out = ibench(&args(
        &dirs,
        &["--judge", "work", "--min-step-seconds", "0"],
    ));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("throughput"), "{text}");
}

#[test]
fn more_work_per_op_is_a_regression_where_the_rates_cannot_tell() {
    // The candidate's server CPU per op +10% in every repeat; its rates as noisy as can be.
    let dirs = three_a_side("check-work", |i, v| {
        for s in v["steps"].as_array_mut().unwrap() {
            if let Some(c) = s["metrics"]["cpupq"]["value"].as_f64() {
                s["metrics"]["cpupq"]["value"] = (c * 1.1).into();
            }
            let t = s["throughput"].as_f64().unwrap();
            s["throughput"] = (t * [0.7, 1.0, 1.3][i]).into();
        }
    });
    let out = ibench(&args(&dirs, &["--min-step-seconds", "0"]));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let last = text.lines().last().unwrap_or("");
    assert!(last.contains("l.i0 cpupq 1.10x"), "{last}");
    assert!(
        text.contains("l.i0: decided on work: cpupq 1.10x REGRESSED; rate/latency cannot tell: throughput (too noisy)"),
        "{text}"
    );
    // A check of the rates alone cannot tell, and says what would decide.
    let out = ibench(&args(
        &dirs,
        &["--min-step-seconds", "0", "--judge", "rates"],
    ));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("repeats a side would decide a ±5% change"),
        "{text}"
    );
    assert!(
        text.contains("the smallest regression these measures could decide is -"),
        "{text}"
    );
}

#[test]
fn one_repeat_a_side_is_never_no_change_without_a_measure_of_its_noise() {
    let root = fresh_dir("check-few");
    let b = run_copy(&root, "b", "base", 1.0, |_| {});
    let c = run_copy(&root, "c", "patch", 1.0, |_| {});
    let dirs = [b.display().to_string(), c.display().to_string()];
    let out = ibench(&args(&dirs, &["--min-step-seconds", "0"]));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("too few repeats"), "{text}");
    assert!(text.contains("2 repeats a side would"), "{text}");
    assert!(!text.contains("| no change"), "{text}");
    let out = ibench(&args(
        &dirs,
        &["--fail-on-inconclusive", "--min-step-seconds", "0"],
    ));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_failed_step_cannot_tell() {
    let dirs = three_a_side("check-failed", |i, v| {
        if i == 1 {
            let s = step_mut(v, "l.x");
            s["status"] = "failed".into();
            s["error"] = "server closed the connection".into();
        }
    });
    let out = ibench(&args(&dirs, &[]));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("failed or partial step"), "{text}");
    assert!(
        text.contains("candidate c1: failed (server closed the connection)"),
        "{text}"
    );
}

#[test]
fn runs_at_different_clients_are_refused_naming_the_difference() {
    let root = fresh_dir("check-unlike");
    let b = run_copy(&root, "b", "base", 1.0, |_| {});
    let c = run_copy(&root, "c", "patch", 1.0, |v| {
        v["options"]["clients"] = 4.into()
    });
    let dirs = [b.display().to_string(), c.display().to_string()];
    let out = ibench(&args(&dirs, &[]));
    assert_bad_input(
        &out,
        &["not like for like", "--clients (base 1, candidate 4)"],
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let root = fresh_dir("check-bad");
    let b = run_copy(&root, "b", "base", 1.0, |_| {});
    let c = run_copy(&root, "c", "patch", 1.0, |_| {});
    let d = run_copy(&root, "d", "other", 1.0, |_| {});
    let (b, c, d) = (
        b.display().to_string(),
        c.display().to_string(),
        d.display().to_string(),
    );
    let out = ibench(&["check", &b, &c]);
    assert_bad_input(&out, &["--base"]);
    let out = ibench(&["check", "--base", "nope", &b, &c]);
    assert_bad_input(
        &out,
        &[
            "no run is labelled \"nope\"",
            "\"base\", \"patch\"",
            "--base",
        ],
    );
    let out = ibench(&["check", "--base", "base", &b, &c, &d]);
    assert_bad_input(&out, &["2 labels", "one candidate at a time"]);
    let out = ibench(&["check", "--base", "base", &b]);
    assert_bad_input(
        &out,
        &[
            "every run is labelled \"base\"",
            "--base ",
            "ibench run --label",
        ],
    );
    let out = ibench(&["check", "--base", &b, &b]);
    assert_bad_input(
        &out,
        &["only directory given", "give the candidate's runs too"],
    );
    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = empty.display().to_string();
    let out = ibench(&["check", "--base", "base", &b, &e]);
    assert_bad_input(&out, &["holds no run.json", &e]);
    let out = ibench(&["check", "--base", "base", "--group", "g", &b, &c]);
    assert_bad_input(&out, &["--group is for a matrix"]);
    for (flag, value, needle) in [
        ("--alpha", "0.7", "between 0 and 0.5"),
        ("--threshold", "150", "percentage"),
        ("--min-step-seconds", "100000", "number of seconds"),
    ] {
        let out = ibench(&["check", "--base", "base", flag, value, &b, &c]);
        assert_bad_input(&out, &[flag, needle]);
    }
    // --run: one output dir, no --base, a matrix file that exists.
    let out = ibench(&["check", "--run", "m.toml", &b, &c]);
    assert_bad_input(&out, &["--run takes one output dir"]);
    let out = ibench(&["check", "--run", "m.toml", "--base", "base", &e]);
    assert_bad_input(&out, &["--base is for run directories"]);
    let missing = root.join("missing.toml").display().to_string();
    let out = ibench(&["check", "--run", &missing, &e]);
    assert_bad_input(&out, &["missing.toml"]);
    let out = ibench(&["check", "--base", "base", "--junit", &e, &b, &c]);
    assert_bad_input(&out, &["--junit", "is a directory"]);
    let corrupt = run_copy(&root, "x", "patch", 1.0, |_| {});
    std::fs::write(corrupt.join("run.json"), "{").unwrap();
    let out = ibench(&[
        "check",
        "--base",
        "base",
        &b,
        &corrupt.display().to_string(),
    ]);
    assert_bad_input(&out, &["run.json is unreadable"]);
}

/// A matrix output dir: its groups and its base come from its plan.
#[test]
fn a_matrix_dir_needs_its_group_named_when_it_has_several() {
    let root = fresh_dir("check-matrix");
    std::fs::create_dir_all(&root).unwrap();
    let file = root.join("m.toml");
    std::fs::write(
        &file,
        "[servers.a]\nurl = \"sqlite:/tmp/x-{cell}.db\"\n[servers.b]\nurl = \"sqlite:/tmp/y-{cell}.db\"\n[workloads.w]\nload_rows = 10\n[groups.one]\nservers = [\"a\", \"b\"]\n[groups.two]\nservers = [\"a\"]\n",
    )
    .unwrap();
    // The plan alone (what `matrix run` writes first) is enough to read the groups.
    let plan = ibench(&["matrix", "plan", file.to_str().unwrap()]);
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let out_dir = root.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let (_, plan) = ibench::matrix::load(&file).unwrap();
    std::fs::write(
        out_dir.join("plan.json"),
        serde_json::to_string(&plan).unwrap(),
    )
    .unwrap();
    let o = out_dir.display().to_string();
    let out = ibench(&["check", &o]);
    assert_bad_input(&out, &["2 groups (one, two)", "--group"]);
    let out = ibench(&["check", &o, "--group", "three"]);
    assert_bad_input(&out, &["no group \"three\"", "--group"]);
    let out = ibench(&["check", &o, "--group", "two"]);
    assert_bad_input(&out, &["one member", "add a server or config"]);
    let out = ibench(&["check", &o, "--group", "one"]);
    assert_bad_input(&out, &["has no run", "ibench matrix run"]);
    let out = ibench(&["check", &o, "--base", "x"]);
    assert_bad_input(&out, &["--base is for run directories"]);
    // Each cell's run where `matrix run` puts it: the group's base against its other member.
    for cell in &plan.cells {
        let run = out_dir.join("cells").join(&cell.name);
        let factor = if cell.server == "b" { 0.5 } else { 1.0 };
        run_copy(&run, "run", &cell.server, factor, |_| {});
    }
    let out = ibench(&["check", &o, "--group", "one", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["pairs"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["pairs"][0]["title"], "one / w");
    assert_eq!(
        (
            v["pairs"][0]["base"].as_str(),
            v["pairs"][0]["candidate"].as_str()
        ),
        (Some("a"), Some("b"))
    );
    // One repeat a side and no host probe to show the host steady: the halved query steps
    // cannot tell (one run a side), and the check names the command that would decide;
    // l.i0 lasted 0.28 s: too short to judge, and the check says how many rows would reach
    // the floor.
    assert_eq!(v["exit_code"], 3, "{v}");
    let summary = v["summary"].as_str().unwrap();
    assert!(summary.contains("l.x throughput 0.50x"), "{summary}");
    let qr = v["pairs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "qr100" && s["figure"] == "throughput")
        .unwrap();
    assert_eq!(qr["reason"], "one_run", "{qr}");
    assert_eq!(qr["method"], "per_second", "{qr}");
    let next = v["pairs"][0]["next_step"].as_str().unwrap();
    assert!(
        next.contains(&format!(
            "ibench check --run MATRIX.toml {o} --max-repeats 10"
        )),
        "{next}"
    );
    let i0 = v["pairs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "l.i0" && s["figure"] == "throughput")
        .unwrap();
    assert_eq!(i0["reason"], "too_short", "{i0}");
    assert!(
        i0["detail"].as_str().unwrap().contains("would reach it"),
        "{i0}"
    );
}

/// An interleaved matrix of 3 rounds whose host drifts ±30% from round to round while the
/// candidate is 10% slower in every round: paired by round, the check decides the regression
/// that Welch's t over the same repeats (a sequential matrix) cannot, and every output names
/// the method.
#[test]
fn interleaved_rounds_are_paired() {
    let root = fresh_dir("check-paired");
    let o = |order: &str| {
        let dir = root.join(order);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.toml");
        std::fs::write(
            &file,
            format!("repeats = 3\norder = \"{order}\"\n[servers.a]\nurl = \"sqlite:/tmp/x-{{cell}}.db\"\n[servers.b]\nurl = \"sqlite:/tmp/y-{{cell}}.db\"\n[workloads.w]\nload_rows = 10\n[groups.one]\nservers = [\"a\", \"b\"]\n"),
        )
        .unwrap();
        let (_, plan) = ibench::matrix::load(&file).unwrap();
        let out = dir.join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("plan.json"), serde_json::to_string(&plan).unwrap()).unwrap();
        for cell in &plan.cells {
            let round: usize = cell.name.rsplit(".r").next().unwrap().parse().unwrap();
            let drift = [1.0, 1.3, 0.7][round - 1];
            let factor = if cell.server == "b" { 0.9 } else { 1.0 };
            run_copy(
                &out.join("cells").join(&cell.name),
                "run",
                &cell.server,
                drift * factor,
                |_| {},
            );
        }
        out.display().to_string()
    };
    let (interleaved, sequential) = (o("interleaved"), o("sequential"));
    let json = |dir: &str| {
        let out = ibench(&[
            "check",
            dir,
            "--min-step-seconds",
            "0",
            "--judge",
            "rates",
            "--format",
            "json",
        ]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["pairs"][0]["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "qr100" && s["figure"] == "throughput")
            .unwrap()
            .clone()
    };
    let paired = json(&interleaved);
    assert_eq!(
        (paired["verdict"].as_str(), paired["method"].as_str()),
        (Some("regressed"), Some("paired")),
        "{paired}"
    );
    assert!(
        (paired["ratio"].as_f64().unwrap() - 0.9).abs() < 1e-6,
        "{paired}"
    );
    let welch = json(&sequential);
    assert_eq!(
        (welch["verdict"].as_str(), welch["method"].as_str()),
        (Some("cannot_tell"), Some("repeats")),
        "{welch}"
    );
    let text = stdout(&ibench(&[
        "check",
        &interleaved,
        "--min-step-seconds",
        "0",
        "--judge",
        "rates",
    ]));
    assert!(text.contains("paired"), "{text}");
    assert!(text.contains("0.90"), "{text}");
}

/// The hand-made failover of tests/fixtures/failover (figures invented for the check's rule,
/// not measured) on `v`'s l.i1, its writers' unavailability `unavailable_s`.
fn with_failover(v: &mut serde_json::Value, unavailable_s: f64) {
    let text = std::fs::read_to_string("tests/fixtures/failover/step_failover.json").unwrap();
    let mut f: serde_json::Value = serde_json::from_str(&text).unwrap();
    f["writers_unavailable_seconds"] = unavailable_s.into();
    step_mut(v, "l.i1")["failover"] = f;
}

/// Two sets of failover runs compare like any other figure: the writers' unavailability is a
/// cost, so twice as long is a regression.
#[test]
fn a_longer_unavailability_is_a_regression() {
    let root = fresh_dir("check-failover");
    let mut dirs = Vec::new();
    for (i, s) in [4.2, 4.3, 4.1].into_iter().enumerate() {
        dirs.push(run_copy(&root, &format!("b{i}"), "base", 1.0, |v| {
            with_failover(v, s)
        }));
        dirs.push(run_copy(&root, &format!("c{i}"), "patch", 1.0, |v| {
            with_failover(v, s * 2.0)
        }));
    }
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let out = ibench(&args(&dirs, &["--min-step-seconds", "0"]));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("l.i1 writes unavailable"), "{text}");
    let last = text.lines().last().unwrap_or("");
    assert!(last.contains("l.i1 writes unavailable"), "{last}");
}

/// A failover run and one without are refused in one line naming why and the fix.
#[test]
fn a_failover_run_is_not_compared_with_one_without() {
    let root = fresh_dir("check-failover-mixed");
    let b = run_copy(&root, "b", "base", 1.0, |_| {});
    let c = run_copy(&root, "c", "patch", 1.0, |v| with_failover(v, 4.2));
    let dirs = [b.display().to_string(), c.display().to_string()];
    let out = ibench(&args(&dirs, &["--min-step-seconds", "0"]));
    assert_bad_input(
        &out,
        &[
            "cannot compare a failover run with one without",
            "l.i1",
            "--failover",
        ],
    );
}
