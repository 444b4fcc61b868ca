//! What differs, on real runs against private PostgreSQL servers started with ibench's own
//! server code: `--clients 1` against `--clients 4`, two runs of one setup, a server whose
//! `synchronous_commit` was turned off (`ALTER SYSTEM`, so its source is the configuration
//! file), and a second server that differs only in `shared_buffers` (what the server computes
//! from it shown under it). Each report names the difference first, and none blames the host
//! for the client's CPU per op alone.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::*;
use ibench::report::differs::Area;
use ibench::report::load::load_runs;
use ibench::report::model::Comparison;
use ibench::results::target::Engine;
use ibench::server::{ServerHandle, ServerKind};
use ibench::workload::steps::parse_step_list;

/// The runs every test reads, made once, one at a time (the host is shared).
struct Runs {
    c1: PathBuf,
    c1_again: PathBuf,
    c4: PathBuf,
    sync_off: PathBuf,
    small_buffers: PathBuf,
}

/// A small run of four steps on `url` with `clients` clients, labelled `label`.
fn small_run(server: &ServerHandle, label: &str, clients: u32) -> PathBuf {
    let url = new_database(server, &label.replace('-', "_"));
    let mut opts = small_options(&url, label);
    opts.steps = parse_step_list("l.i0,l.x,l.i1,qr100").unwrap();
    opts.load_rows = 4000;
    opts.i1_rows = 1000;
    opts.query_seconds = 1.0;
    opts.clients = clients;
    opts.label = Some(label.to_string());
    run_and_read(opts).1
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let server = start_server(ServerKind::Postgres, Engine::Innodb);
        let c1 = small_run(&server, "c1", 1);
        let c1_again = small_run(&server, "c1-again", 1);
        let c4 = small_run(&server, "c4", 4);
        let mut admin = pg_connect(&server.url);
        admin
            .query("ALTER SYSTEM SET synchronous_commit = off")
            .unwrap();
        admin.query("SELECT pg_reload_conf()").unwrap();
        let sync_off = small_run(&server, "sync-off", 1);
        admin
            .query("ALTER SYSTEM RESET synchronous_commit")
            .unwrap();
        admin.query("SELECT pg_reload_conf()").unwrap();
        // A second private server whose only difference is shared_buffers (the first runs
        // at initdb's 128MB).
        let other = start_configured(
            ServerKind::Postgres,
            Engine::Innodb,
            "sb.conf",
            "shared_buffers = 32MB\n",
        );
        register_server(other.clone());
        let small_buffers = small_run(&other, "sb32", 1);
        Runs {
            c1,
            c1_again,
            c4,
            sync_off,
            small_buffers,
        }
    })
}

fn compare(dirs: &[&PathBuf]) -> (Comparison, Vec<ibench::report::load::LoadedRun>) {
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| (*d).clone()).collect();
    let (runs, problems) = load_runs(&dirs);
    assert_eq!(runs.len(), dirs.len(), "{problems:?}");
    (
        ibench::report::compare::compare(&runs, None, problems),
        runs,
    )
}

fn text(cmp: &Comparison, runs: &[ibench::report::load::LoadedRun]) -> String {
    ibench::report::render(cmp, runs, ibench::report::Format::Text, false).unwrap()
}

/// No step is host-affected on the client's CPU per op alone. A busy host may still flag a
/// step: the client's reason then carries the other processes' CPU (`...; other processes
/// took 0.43 more cores in the base's step`), or another reason (steal, the probe) stands
/// beside it. That is evidence of the host, not the client's figure alone.
fn no_client_only_verdict(cmp: &Comparison) {
    for f in &cmp.host.flags {
        let client_only = f
            .reasons
            .iter()
            .all(|r| r.starts_with("client CPU/op") && !r.contains("other processes took"));
        assert!(!client_only, "{} {}: {:?}", f.step, f.run, f.reasons);
    }
}

#[test]
fn one_client_against_four_names_the_clients_and_shows_scaling() {
    let r = runs();
    let (cmp, loaded) = compare(&[&r.c1, &r.c4]);
    let d = &cmp.differences[0].setup;
    let clients = d.named("--clients").expect("the clients differ");
    assert_eq!((clients.base.as_str(), clients.run.as_str()), ("1", "4"));
    // Nothing else of the setup differs: the same server, host and ibench.
    let names: Vec<&str> = d.differences.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["--clients"], "{d:?}");
    // The client's CPU per op is not a host signal between 1 and 4 clients.
    assert!(
        cmp.host
            .flags
            .iter()
            .all(|f| f.reasons.iter().all(|r| !r.contains("client CPU/op"))),
        "{:?}",
        cmp.host.flags
    );
    let sc = cmp.scaling.as_ref().expect("scaling is shown");
    let i1 = cmp
        .steps
        .iter()
        .position(|s| s.to_string() == "l.i1")
        .unwrap();
    let (base, run) = (
        cmp.absolute.rows[0].cells[i1].value.unwrap(),
        cmp.absolute.rows[1].cells[i1].value.unwrap(),
    );
    let eff = sc.efficiency.rows[1].cells[i1].value.unwrap();
    assert!((eff - run / (base * 4.0)).abs() < 1e-9, "{eff}");
    let per_client = sc.per_client.rows[1].cells[i1].value.unwrap();
    assert!((per_client - run / 4.0).abs() < 1e-9);
    let t = text(&cmp, &loaded);
    let what = t.find("== What differs").expect("the section");
    assert!(
        what < t.find("== Absolute throughput").unwrap(),
        "first: {t}"
    );
    assert!(t.contains("--clients"), "{t}");
    assert!(t.contains("Scaling efficiency"), "{t}");
    assert!(
        t.contains("c4 differs from the base in --clients 1 → 4"),
        "{t}"
    );
    for l in t.lines() {
        assert!(l.chars().count() <= 160, "{l}");
    }
}

#[test]
fn two_runs_of_one_setup_differ_in_nothing() {
    let r = runs();
    let (cmp, loaded) = compare(&[&r.c1, &r.c1_again]);
    let d = &cmp.differences[0].setup;
    assert!(d.is_empty() && !d.settings_unknown, "{d:?}");
    let t = text(&cmp, &loaded);
    assert!(
        t.contains("No difference: every run's setup is the base's"),
        "{t}"
    );
    let md =
        ibench::report::render(&cmp, &loaded, ibench::report::Format::Markdown, false).unwrap();
    assert!(md.contains("No difference"), "{md}");
}

#[test]
fn synchronous_commit_off_is_named_and_the_host_is_not_blamed() {
    let r = runs();
    let (cmp, loaded) = compare(&[&r.c1, &r.sync_off]);
    let d = &cmp.differences[0].setup;
    let s = d.named("synchronous_commit").expect("the setting is named");
    assert_eq!(s.area, Area::Settings);
    assert_eq!((s.base.as_str(), s.run.as_str()), ("on", "off"));
    assert_eq!(s.source.as_deref(), Some("configuration file"));
    assert!(d.unlike().is_empty(), "{d:?}");
    no_client_only_verdict(&cmp);
    let t = text(&cmp, &loaded);
    assert!(t.contains("synchronous_commit"), "{t}");
    assert!(t.contains("off [conf]"), "{t}");
    let json: serde_json::Value = serde_json::from_str(
        &ibench::report::render(&cmp, &loaded, ibench::report::Format::Json, false).unwrap(),
    )
    .unwrap();
    assert_eq!(
        json["differences"][0]["differences"][0]["name"], "synchronous_commit",
        "{}",
        json["differences"]
    );
}

#[test]
fn two_servers_that_differ_in_shared_buffers_name_it_with_both_values() {
    let r = runs();
    let (cmp, loaded) = compare(&[&r.c1, &r.small_buffers]);
    let d = &cmp.differences[0].setup;
    let sb = d.named("shared_buffers").expect("shared_buffers is named");
    assert_eq!(
        (sb.base.as_str(), sb.run.as_str()),
        ("128MB", "32MB"),
        "{d:?}"
    );
    assert_eq!(sb.source.as_deref(), Some("configuration file"));
    // Any other setting that differs is derived from it (the server's own default or
    // override), never one set by hand; ports, paths and directories are left out.
    for x in d
        .in_area(Area::Settings)
        .filter(|x| x.name != "shared_buffers")
    {
        assert!(
            matches!(x.source.as_deref(), Some("default" | "override")),
            "{x:?}"
        );
        // And shown as such: under shared_buffers, not as a difference of its own.
        assert_eq!(x.follows.as_deref(), Some("shared_buffers"), "{x:?}");
    }
    assert!(
        d.named("shared_memory_size").is_some(),
        "the server computes it: {d:?}"
    );
    let causes: Vec<&str> = d.causes().map(|x| x.name.as_str()).collect();
    assert_eq!(causes, ["shared_buffers"], "{d:?}");
    assert!(d.unlike().is_empty(), "{d:?}");
    let t = text(&cmp, &loaded);
    assert!(t.contains("shared_buffers"), "{t}");
    assert!(t.contains("128MB") && t.contains("32MB [conf]"), "{t}");
    assert!(t.contains("↳ shared_memory_size"), "{t}");
    assert!(
        t.contains("differs from the base in shared_buffers 128MB → 32MB: the candidate"),
        "{t}"
    );
}
