//! The diagnosis on two real Postgres runs, the second made slower on purpose: a private
//! server with `shared_buffers = 128kB` (16 pages) has to write back a dirty page for almost
//! every index leaf it touches in l.i1. The diagnosis must name the figures that really moved,
//! with the ratios the test reads itself: server CPU from /proc (its own reading of the
//! process tree, reaped children included) and the server's writes from `pg_stat_bgwriter`
//! and `pg_stat_wal`.

mod common;
mod proc_reading;

use common::*;
use ibench::report::diagnosis::Diagnosis;
use ibench::results::target::Engine;
use ibench::server::{self, ServerHandle, ServerKind, ServerSpec};
use ibench::workload::steps::parse_step_list;
use proc_reading::own_reading;

// The tests of this file run one at a time (`one_at_a_time`): the slowdown test reads the
// host's other processes' CPU, which the other test's servers would be.

/// Bytes the server wrote by its own count: WAL plus data pages written by backends, the
/// background writer and checkpoints.
fn pg_written_bytes(url: &str) -> f64 {
    let mut c = common::pg_connect(url);
    let rows = c
        .query(
            "SELECT (SELECT wal_bytes FROM pg_stat_wal)::float8, \
             (buffers_backend + buffers_clean + buffers_checkpoint)::float8 \
             * current_setting('block_size')::float8 FROM pg_stat_bgwriter",
        )
        .unwrap();
    let cell = |i: usize| -> f64 { rows.rows[0][i].as_deref().unwrap().parse().unwrap() };
    let (wal, pages): (f64, f64) = (cell(0), cell(1));
    wal + pages
}

/// What the test itself saw of one server during its l.i1: CPU seconds and bytes written.
struct OwnReading {
    cpu_seconds: f64,
    written_bytes: f64,
}

/// Load and index (one run), then l.i1 alone (a second run) with the test's own readings
/// taken around it; the l.i1 run's directory.
fn load_then_measure_li1(s: &ServerHandle, tag: &str) -> (std::path::PathBuf, OwnReading) {
    let mut opts = small_options(&s.url, &format!("{tag}-load"));
    opts.steps = parse_step_list("l.i0,l.x").unwrap();
    opts.load_rows = 20_000;
    run_and_read(opts);

    let mut opts = small_options(&s.url, tag);
    opts.steps = parse_step_list("l.i1").unwrap();
    opts.i1_rows = 10_000;
    opts.label = Some(tag.to_string());
    // The checks after the step would add the server's work to the test's reading only.
    opts.check = false;
    // Checkpoints and WAL flushes of the load step must not land in the l.i1 reading.
    common::pg_connect(&s.url).query("CHECKPOINT").unwrap();
    // Read around the step, not the run: the run's login and set-up are a fixed cost that a
    // busy host stretches, and diluted the test's ratio (x3.41 against ibench's x4.70 once).
    let mut around = AroundStep {
        pid: s.pid,
        url: &s.url,
        before: None,
        after: None,
    };
    let outcome = ibench::runner::run_observed(opts, vec!["test".into()], &mut around)
        .unwrap_or_else(|e| panic!("run failed: {e:#}"));
    let ((cpu0, w0), (cpu1, w1)) = (around.before.unwrap(), around.after.unwrap());
    let own = OwnReading {
        cpu_seconds: cpu1 - cpu0,
        written_bytes: w1 - w0,
    };
    (outcome.dir, own)
}

/// The test's own readings (server CPU seconds, bytes written) as the step starts and ends.
struct AroundStep<'a> {
    pid: u32,
    url: &'a str,
    before: Option<(f64, f64)>,
    after: Option<(f64, f64)>,
}

impl AroundStep<'_> {
    fn read(&self) -> (f64, f64) {
        (own_reading(self.pid).0, pg_written_bytes(self.url))
    }
}

impl ibench::runner::RunObserver for AroundStep<'_> {
    fn step_starts(&mut self, _: usize, _: &ibench::workload::plan::StepPlan) {
        self.before = Some(self.read());
    }

    fn step_ends(&mut self, record: &ibench::results::StepRecord) {
        assert_eq!(
            record.status,
            ibench::results::Status::Completed,
            "{:?}",
            record.error
        );
        self.after = Some(self.read());
    }
}

fn mover_ratio(d: &Diagnosis, figure: &str) -> f64 {
    d.movers
        .iter()
        .find(|m| m.figure == figure)
        .unwrap_or_else(|| panic!("{figure} should be named: {}", d.line()))
        .ratio
}

#[test]
fn the_diagnosis_of_a_slower_config_names_what_the_tests_own_readings_saw_move() {
    let _one = one_at_a_time();
    // No commit waits for a WAL flush in either server: what separates them is the buffer
    // pool, not how long the shared disk takes to sync at that moment (a clean clone's build
    // leaves gigabytes of writeback behind, which once made the base's fsyncs slower than the
    // tiny-buffers server's whole l.i1).
    let start = |name: &str, settings: &str| {
        Guard(start_configured(
            ServerKind::Postgres,
            Engine::Innodb,
            name,
            settings,
        ))
    };
    let base = start("base.conf", "synchronous_commit = off\n");
    let slow = start(
        "tiny-buffers.conf",
        "synchronous_commit = off\nshared_buffers = 128kB\n",
    );

    let (base_dir, base_own) = load_then_measure_li1(&base.0, "base");
    let (slow_dir, slow_own) = load_then_measure_li1(&slow.0, "tiny-buffers");

    // The test's own ratios (both runs insert and delete the same number of rows).
    let own_cpu = slow_own.cpu_seconds / base_own.cpu_seconds;
    let own_written = slow_own.written_bytes / base_own.written_bytes;
    eprintln!(
        "own readings: cpu {:.2} s vs {:.2} s (x{own_cpu:.2}); written {:.1} MB vs {:.1} MB (x{own_written:.2})",
        slow_own.cpu_seconds,
        base_own.cpu_seconds,
        slow_own.written_bytes / 1e6,
        base_own.written_bytes / 1e6
    );
    assert!(
        own_written > 2.0,
        "with 16 buffers the server writes much more per row: {own_written:.2}"
    );

    let (runs, problems) = ibench::report::load::load_runs(&[base_dir, slow_dir]);
    assert!(problems.is_empty(), "{problems:?}");
    let cmp = ibench::report::compare::compare(&runs, None, Vec::new());
    let d = cmp
        .diagnoses
        .iter()
        .find(|d| d.step.to_string() == "l.i1")
        .unwrap_or_else(|| panic!("l.i1 should be diagnosed: {:?}", cmp.relative));
    eprintln!("{}", d.line());
    assert!(d.relative < 0.95, "{}", d.line());

    // Server CPU per op: ibench's figure moved the way the test's own /proc reading did, by a
    // factor of the same size. The readings differ by the step's set-up (its connections),
    // the background processes' work and 10 ms tick rounding; on a loaded host that part
    // grows (seen in a full suite beside other builds, read around the whole run then: x4.70
    // against an own x3.41; read around the step, quiet: x2.70 against x2.43), so only the
    // direction and the size within a factor of two compare.
    assert!(
        own_cpu > 1.2,
        "evicting pages costs the server CPU: x{own_cpu:.2}"
    );
    let cpu = mover_ratio(d, "cpupq");
    assert!(
        cpu > 1.2 && (0.5..2.0).contains(&(cpu / own_cpu)),
        "server CPU/op x{cpu:.2}, own reading x{own_cpu:.2}"
    );
    // Server bytes written per row: named, and moved the way pg_stat saw. Only the direction
    // and a lower bound compare: the server's write_bytes count every 8 KB write of a WAL page
    // (a commit rewrites its partly filled page), pg_stat_wal counts WAL bytes once, so the
    // base's figure is larger by /proc's count and the ratios differ (seen: x29 vs x32).
    let written = mover_ratio(d, "server_wkbpi");
    assert!(
        written > 2.0,
        "server KB written/row x{written:.2}, pg_stat x{own_written:.2}"
    );
    // A figure that moved the other way or not at all is not offered as an explanation.
    for m in &d.movers {
        assert!(m.ratio > 1.05 && m.share > 0.0, "{m:?}");
    }
    // And it is in every format's report.
    let text = ibench::report::render(&cmp, &runs, ibench::report::Format::Text, false).unwrap();
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let key = &cmp.keys[1];
    assert!(squash(&text).contains(&squash(&d.line_for(key))), "{text}");
}

/// Stops a server of this test when the test ends, passed or failed.
struct Guard(ServerHandle);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.stop();
        let _ = std::fs::remove_dir_all(&self.0.dir);
    }
}

/// A query step that slows down on the server half way: the test drops the secondary indexes
/// while qr100 runs, so every range query becomes a scan and a sort of the whole table. The
/// report must find the slow stretch, from about when the test dropped them to the step's
/// end, and name the DBMS (the server's CPU per query rose; ibench's own did not), with the
/// server's vacuum counters as evidence.
#[test]
fn a_step_that_slows_down_on_the_server_is_named_a_dbms_slowdown() {
    let _one = one_at_a_time();
    let s = Guard(
        server::start(&ServerSpec {
            kind: ServerKind::Postgres,
            engine: Engine::Innodb,
            ..ServerSpec::default()
        })
        .unwrap_or_else(|e| panic!("a private Postgres starts: {e:#}")),
    );
    let mut opts = small_options(&s.0.url, "slowdown");
    opts.steps = parse_step_list("l.i0,l.x,qr100").unwrap();
    opts.load_rows = 50_000;
    opts.query_seconds = 12.0;
    // The dropped indexes would fail the index check after the step.
    opts.check = false;
    let timeline = opts.out_dir.join("timeline.jsonl");
    let url = s.0.url.clone();
    let dropper = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        loop {
            let qr_seconds = std::fs::read_to_string(&timeline)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains("\"qr100\""))
                .count();
            if qr_seconds >= 5 {
                break;
            }
            assert!(started.elapsed().as_secs() < 300, "qr100 never ran 5 s");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mut c = common::pg_connect(&url);
        let names = c
            .query("SELECT indexname FROM pg_indexes WHERE tablename = 'pi1' AND indexname <> 'pi1_pkey'")
            .unwrap();
        assert_eq!(names.rows.len(), 3, "{names:?}");
        for n in names.rows {
            c.query(&format!("DROP INDEX {}", n[0].as_deref().unwrap()))
                .unwrap();
        }
    });
    let (_, dir) = run_and_read(opts);
    dropper.join().unwrap();

    let (runs, problems) = ibench::report::load::load_runs(&[dir]);
    assert!(problems.is_empty(), "{problems:?}");
    let cmp = ibench::report::compare::compare(&runs, None, Vec::new());
    let shifts: Vec<_> = cmp.shifts.iter().map(|s| format!("{s:?}")).collect();
    // qr100 slowed down once. A burst of other processes on a shared host may move l.i0's
    // rate too: such a shift is never blamed on the DBMS, which did the same work per row.
    let (qr, others): (Vec<_>, Vec<_>) = cmp
        .shifts
        .iter()
        .partition(|s| s.step.to_string() == "qr100");
    assert_eq!(qr.len(), 1, "qr100 slowed down: {shifts:#?}");
    assert!(
        others
            .iter()
            .all(|s| s.cause != ibench::report::shift::ShiftCause::Dbms),
        "only qr100's server did more work per op: {shifts:#?}"
    );
    let shift = qr[0];
    eprintln!("{shift:#?}");
    assert!(
        (3..=8).contains(&shift.slow_from_s),
        "the slow stretch starts about when the indexes were dropped: {shift:?}"
    );
    assert!(shift.slow_to_s + 2 >= shift.seconds_looked_at, "{shift:?}");
    assert!(shift.factor >= 2.5, "{shift:?}");
    // On a quiet host the DBMS is named. When other processes really took the host in the
    // slow stretch (other builds and tests on a shared 2-core machine), the rule names the
    // host first, as it should: the server's cost per op must still have risen beyond ibench's.
    let host_busy = shift
        .others_cores
        .is_some_and(|c| c >= ibench::report::shift::OTHERS_CORES)
        || shift
            .others_share
            .is_some_and(|s| s >= ibench::report::shift::OTHERS_SHARE);
    let expected = if host_busy {
        ibench::report::shift::ShiftCause::Host
    } else {
        ibench::report::shift::ShiftCause::Dbms
    };
    assert_eq!(shift.cause, expected, "{}", shift.why);
    // ibench's own cost per query moves a little too (the server's scans evict the shared
    // caches): the server's must have moved far more.
    let (server, client) = (
        shift.server_cpu_ratio.unwrap(),
        shift.client_cpu_ratio.unwrap(),
    );
    assert!(server >= 1.5 * client.max(1.0), "{shift:?}");
    let evidence = shift.evidence.join(" | ");
    assert!(
        evidence.contains("pi1: ") && evidence.contains("dead rows beside"),
        "{evidence}"
    );
    assert!(evidence.contains("--profile-server"), "{evidence}");
    // The slowdown does not paint the step as the host's (steal on a busy VM still may; and
    // a slowdown the host explains leaves the rate jump to the host screening).
    assert!(
        host_busy
            || cmp.host.flags.iter().all(|f| f
                .reasons
                .iter()
                .all(|r| !r.contains("per-second rate moved"))),
        "{:?}",
        cmp.host.flags
    );
    // Every format shows it.
    let text = ibench::report::render(&cmp, &runs, ibench::report::Format::Text, false).unwrap();
    assert!(text.contains("Slowdowns inside steps"), "{text}");
    assert!(text.contains("qr100"), "{text}");
}
