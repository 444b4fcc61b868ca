//! The pacer against a real server: latency counts from the due time (a frozen server shows
//! up in the latency of every insert that was due during the freeze, not just one), the rate
//! catches up, and the rows the server counted match rate × seconds.
//!
//! Each test has its own private Postgres: one freezes its server, the other needs it idle.

mod common;

use ibench::stats::convert::{count_f64, i64_f64};
use std::time::{Duration, Instant};

use common::*;
use ibench::results::target::Engine;
use ibench::server::{ServerHandle, ServerKind};
use ibench::workload::steps::parse_step_list;

/// The server's main process and all its descendants.
fn process_tree(root: u32) -> Vec<i32> {
    let mut tree = vec![i32::try_from(root).unwrap()];
    let mut grew = true;
    while grew {
        grew = false;
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            let ppid: i32 = after.split(' ').nth(1).unwrap().parse().unwrap();
            if tree.contains(&ppid) && !tree.contains(&pid) {
                tree.push(pid);
                grew = true;
            }
        }
    }
    tree
}

fn signal_all(pids: &[i32], sig: i32) {
    for &p in pids {
        // SAFETY: signalling processes of our own private server.
        unsafe {
            libc::kill(p, sig);
        }
    }
}

fn load(server: &ServerHandle, tag: &str) {
    let mut opts = small_options(&server.url, tag);
    opts.steps = parse_step_list("l.i0,l.x").unwrap();
    let (run, _) = run_and_read(opts);
    assert_eq!(run.status, ibench::results::Status::Completed);
}

#[test]
fn a_frozen_server_shows_in_the_latency_of_every_insert_due_during_the_freeze() {
    let server = start_server(ServerKind::Postgres, Engine::Innodb);
    load(&server, "freeze-load");

    // 1000 rows/s in 10-row inserts: 100 inserts due per second.
    let mut opts = small_options(&server.url, "freeze");
    opts.steps = parse_step_list("qp1000").unwrap();
    opts.query_rows_per_insert = 10;
    // Long enough after the freeze for the catch-up to finish on a busy machine.
    opts.query_seconds = 12.0;
    opts.check = false;
    let timeline = opts.out_dir.join("timeline.jsonl");
    let runner = std::thread::spawn(move || run_and_read(opts));

    // Freeze the whole server for about 2 s, 3 s into the step.
    let t0 = Instant::now();
    while !std::fs::read_to_string(&timeline).is_ok_and(|s| s.contains("\"second\":3")) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the step never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pids = process_tree(server.pid);
    signal_all(&pids, libc::SIGSTOP);
    // The freeze as a lower bound: from every process stopped to the first one continued (a
    // test thread preempted around the signals would overstate it).
    let frozen_at = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    let freeze = frozen_at.elapsed().as_secs_f64();
    signal_all(&pids, libc::SIGCONT);

    let (run, _) = runner.join().unwrap();
    let step = &run.steps[0];
    let ins = &step.ops["insert"];
    // The worst insert waited for the whole freeze.
    assert!(
        count_f64(ins.latency_us.max_us) >= freeze * 0.95e6,
        "max {} us, freeze {freeze} s",
        ins.latency_us.max_us
    );
    // Every insert due in the first (freeze - 1 s) of the freeze waited at least 1 s: about
    // 100/s × (freeze - 1 s) of them, not one.
    let late: u64 = ins
        .latency_histogram_us
        .iter()
        .filter(|p| p[0] >= 1_000_000)
        .map(|p| p[1])
        .sum();
    // The catch-up after the freeze adds some (each overdue insert also waits for the ones
    // sent before it); bounded by what was due during the freeze and a 2 s catch-up.
    let expected = 100.0 * (freeze - 1.0);
    let at_most = 100.0 * (freeze + 2.0);
    assert!(
        count_f64(late) >= expected * 0.6 && count_f64(late) <= at_most,
        "{late} inserts with latency >= 1 s, expected about {expected:.0} (at most {at_most:.0})"
    );
    // Measured from the send instead, only the statements in flight during the freeze are slow.
    assert!(ins.service_us.max_us >= 1_000_000);
    assert!(
        count_f64(ins.service_us.count)
            * (1.0 - ins.service_us.bucket_shares[..7].iter().sum::<f64>())
            < 5.0,
        "service time hides the freeze: {:?}",
        ins.service_us
    );
    // The inserter caught up: the step still reports the target rate over its duration.
    let sla = step.sla.as_ref().unwrap();
    assert!(
        sla.passed,
        "achieved {} of {} rows/s",
        sla.achieved_rows_per_sec, sla.target_rows_per_sec
    );
    assert!(
        sla.share_of_seconds_below_95pct > 0.0,
        "the freeze seconds are below target"
    );
}

/// Rows the server counted as inserted into pi1 (pg_stat_user_tables), once the counter is
/// stable (backends flush their statistics when they exit).
fn server_inserted_rows(url: &str) -> i64 {
    let mut last = -1;
    for _ in 0..50 {
        let mut c = common::pg_connect(url);
        let n = common::pg_number(
            &mut c,
            "SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'pi1'",
        );
        if n == last {
            return n;
        }
        last = n;
        std::thread::sleep(Duration::from_millis(300));
    }
    last
}

#[test]
fn the_server_counts_rate_times_seconds_inserted_rows_in_a_paced_step() {
    let server = start_server(ServerKind::Postgres, Engine::Innodb);
    load(&server, "rate-load");
    let before = server_inserted_rows(&server.url);

    let mut opts = small_options(&server.url, "rate");
    opts.steps = parse_step_list("qr100").unwrap();
    opts.query_seconds = 20.0;
    let batch = f64::from(opts.query_rows_per_insert);
    let (run, _) = run_and_read(opts);
    let after = server_inserted_rows(&server.url);

    let counted = i64_f64(after - before);
    let expected = 100.0 * 20.0;
    // Never more than was due (40 inserts of 50 rows); a few fewer only when a stall on a
    // busy host left the inserter behind at the deadline (the last insert is due at 19.5 s).
    assert!(
        counted <= expected && counted >= expected - 4.0 * batch,
        "server counted {counted} rows inserted, expected {expected} (at most 4 inserts fewer)"
    );
    // ibench's own count is the server's count.
    assert_eq!(count_f64(run.steps[0].ops["insert"].rows), counted);
}
