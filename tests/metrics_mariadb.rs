//! Server-side metrics against a private MariaDB: the sampler finds mariadbd from the server's
//! own `@@pid_file`, and its CPU and bytes written agree with the test's own /proc reading.

mod common;
mod proc_reading;

use common::*;
use ibench::results::target::Engine;
use ibench::sampler::Metric;
use ibench::server::ServerKind;
use ibench::stats::convert::count_f64;
use ibench::workload::steps::parse_step_list;
use proc_reading::own_reading;

fn value(m: &Metric, what: &str) -> f64 {
    m.value()
        .unwrap_or_else(|| panic!("{what} should be measured, is {m:?}"))
}

#[test]
fn mariadb_figures_match_the_tests_own_proc_reading() {
    let s = start_server(ServerKind::Mariadb, Engine::Rocksdb);
    let mut opts = small_options(&s.url, "maria-metrics");
    opts.steps = parse_step_list("l.i0,l.x,l.i1,qr100").unwrap();
    opts.load_rows = 20_000;
    opts.i1_rows = 4_000;
    let (cpu0, w0) = own_reading(s.pid);
    let (run, dir) = run_and_read(opts);
    let (cpu1, w1) = own_reading(s.pid);
    let (own_cpu, own_written) = (cpu1 - cpu0, count_f64(w1 - w0));

    let info = run.metrics.as_ref().expect("run.json has metrics");
    assert_eq!(info.server.pid, Some(s.pid), "{:?}", info.server);
    assert!(info.server.how.contains("pid file"), "{}", info.server.how);
    let totals = info.totals.as_ref().unwrap();
    let server_cpu = value(&totals.server_cpu_seconds, "server cpu");
    let client_cpu = value(&totals.client_cpu_seconds, "client cpu");
    let written = value(&totals.server_write_bytes, "server write_bytes");
    eprintln!(
        "server cpu {server_cpu:.3} s (own reading {own_cpu:.3}), client cpu {client_cpu:.3} s, \
         written {written} (own reading {own_written})"
    );
    assert!(
        (server_cpu - own_cpu).abs() <= 0.1 * own_cpu + 0.03,
        "server cpu {server_cpu} vs the test's own reading {own_cpu}"
    );
    assert!(
        (written - own_written).abs() <= 0.1 * own_written + 256.0 * 1024.0,
        "written {written} vs {own_written}"
    );
    assert!(
        client_cpu > 0.1 * own_cpu,
        "client {client_cpu} vs {own_cpu}"
    );

    for step in &run.steps {
        let m = step.metrics.as_ref().unwrap();
        assert!(value(&m.cpupq, "cpupq") > 0.0, "{}", step.name);
        value(&m.dbgb1, "dbgb1");
        assert!(value(&m.dbgb2, "dbgb2") > 0.0);
        assert!(value(&m.rss, "rss") > 0.01);
        let stats = m.stats_file.path().expect("stats saved");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(stats)).unwrap()).unwrap();
        assert!(v["global_status"]["Com_insert"].is_string(), "{stats}");
        assert!(v["innodb_status"].is_array(), "{stats}");
        assert!(v["rocksdb_status"].is_array(), "{stats}");
    }
    let settings = std::fs::read_to_string(dir.join(ibench::sampler::SETTINGS_FILE)).unwrap();
    assert!(settings.contains("innodb_buffer_pool_size"));
}
