//! Server-side metrics on the embedded SQLite: there is no server process, so the server
//! figures are n/a with that reason while storage, sizes and ibench's own CPU are measured.

mod common;

use common::*;
use ibench::sampler::Metric;
use ibench::workload::steps::parse_step_list;

#[test]
fn sqlite_server_cpu_is_na_because_the_engine_runs_inside_ibench() {
    let dir = fresh_dir("sqlite-metrics-db");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("ibench.db").display());
    let mut opts = small_options(&url, "sqlite-metrics");
    opts.steps = parse_step_list("l.i0").unwrap();
    let (run, _) = run_and_read(opts);
    let info = run.metrics.as_ref().unwrap();
    assert_eq!(info.server.how, "embedded");
    assert_eq!(info.storage.data_paths[0], dir.join("ibench.db"));
    let m = run.steps[0].metrics.as_ref().unwrap();
    for metric in [&m.cpupq, &m.rss] {
        assert!(
            matches!(metric, Metric::Na(r) if r.contains("SQLite runs inside ibench")),
            "{metric:?}"
        );
    }
    assert!(m.ccpupq.value().unwrap() > 0.0);
    assert!(m.dbgb1.value().unwrap() > 0.0);
    assert!(m.dbgb2.value().unwrap() > 0.0);
    assert!(m.stats_file.path().is_none());
    // The terminal table says each reason once, naming every figure it holds for, and the
    // reason shared by cpupq and rss says nothing about CPU (the server line does).
    let table = ibench::report::efficiency::metrics_table(&run);
    let notes: Vec<&str> = table.lines().filter(|l| l.starts_with('[')).collect();
    let reasons: Vec<&str> = notes
        .iter()
        .filter_map(|l| l.split_once(": ").map(|(_, r)| r))
        .collect();
    let mut distinct = reasons.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), reasons.len(), "{table}");
    let embedded = notes
        .iter()
        .find(|l| l.contains("SQLite runs inside ibench"))
        .expect("the embedded footnote");
    assert!(
        embedded.contains("cpupq") && embedded.contains("rss") && !embedded.contains("CPU"),
        "{table}"
    );
    assert!(
        table.contains("server: none: SQLite runs inside ibench, so its CPU is counted in ccpupq"),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
