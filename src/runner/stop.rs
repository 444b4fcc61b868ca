//! Stop conditions: Ctrl-C / SIGTERM for the whole run, a flag per step, a deadline.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::Canceller;
use crate::results::{RunRecord, Status};

/// [`StopSignal::sleep_until`] sleeps until this long before the due time and spins the rest:
/// the kernel's wake-up (timer slack plus the VM's vCPU wake-up, 85-170 µs at the median here)
/// then lands inside the window instead of after the due time. Measured in
/// docs/performance.md: p99 schedule error at 1000/s went from 708 to 76 µs; the cost is at
/// most 200 µs of spinning per paced operation.
const SPIN_WINDOW: Duration = Duration::from_micros(200);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The `run.json` of the run in progress: a second Ctrl-C marks it interrupted before exiting.
static RUN_FILE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// How many runs are in progress (between the start and the end of `runner::run`; two for
/// the sides of a duet): what the stop bound guards.
static RUN_ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Install the Ctrl-C / SIGTERM handler: the first signal asks the run to stop (the step in
/// progress ends within about a second, every wait for the server gives up at its next tick,
/// and run.json is marked interrupted); if the run is still going [`STOP_BOUND`] later, from
/// whatever moment (connect, setup, a step, the settle), run.json is marked interrupted and
/// ibench exits with status 130. A second signal does that at once.
pub fn install_interrupt_handler() {
    // Installing twice (e.g. run() called again in one process) is refused by ctrlc; the
    // first handler stays, which is what we want.
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            mark_run_file_interrupted("interrupted again");
            std::process::exit(130);
        }
        crate::backend::deadline::abandon_waits();
        crate::say!("\ninterrupted: stopping the run (Ctrl-C again to quit at once)");
        let _ = std::thread::Builder::new()
            .name("ibench-stop-bound".into())
            .spawn(|| {
                std::thread::sleep(STOP_BOUND);
                if RUN_ACTIVE.load(Ordering::SeqCst) > 0 {
                    abandon(&format!(
                        "the run did not stop within {} s of the interrupt",
                        STOP_BOUND.as_secs()
                    ));
                }
            });
    });
}

/// Mark a run in progress (`true` at the start of `runner::run`, `false` at its end; the two
/// sides of a duet each count): a run still in progress [`STOP_BOUND`] after Ctrl-C is given
/// up on.
pub fn set_run_active(active: bool) {
    if active {
        RUN_ACTIVE.fetch_add(1, Ordering::SeqCst);
    } else {
        let _ = RUN_ACTIVE.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }
}

/// Name the `run.json` a second Ctrl-C must mark interrupted (`None` once the run has
/// written its final status).
pub fn set_run_file(path: Option<PathBuf>) {
    if let Ok(mut slot) = RUN_FILE.lock() {
        *slot = path;
    }
}

/// Rewrite the run in progress's `run.json` with status `interrupted` (it says `running`
/// until the run ends), saying so after `why`. Runs on the signal-handling thread or the stop
/// bound's, not in a signal handler.
fn mark_run_file_interrupted(why: &str) {
    let Some(path) = RUN_FILE.lock().ok().and_then(|p| p.clone()) else {
        crate::say!("{why}: nothing was recorded yet");
        return;
    };
    match mark_interrupted(&path) {
        Ok(true) => crate::say!(
            "{why}: {} marked interrupted; the steps it records are kept",
            path.display()
        ),
        Ok(false) => {}
        Err(e) => crate::say!("{why}: cannot mark {} interrupted: {e:#}", path.display()),
    }
}

/// Mark the run record at `path` interrupted, now, when it still says `running`: the typed
/// record read, its status and end set, and written back as the runner writes it (atomically,
/// field for field). Whether it was marked.
fn mark_interrupted(path: &Path) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(path)?;
    let mut run: RunRecord = serde_json::from_str(&text)?;
    if run.status != Status::Running {
        return Ok(false);
    }
    run.status = Status::Interrupted;
    run.ended_at = Some(crate::results::now_rfc3339());
    crate::results::write_json_atomic(path, &run)?;
    Ok(true)
}

/// Give up on a stop the server does not honour: mark `run.json` interrupted (what the steps
/// before this one measured stays in it) and exit with status 130, saying why.
pub fn abandon(why: &str) -> ! {
    mark_run_file_interrupted(&format!("{why}; giving up on it"));
    std::process::exit(130);
}

/// Whether the run was interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Setup work (creating tables, opening connections) abandoned because the run was
/// interrupted.
#[derive(Debug, thiserror::Error)]
#[error("interrupted during setup")]
pub struct SetupInterrupted;

/// `Err` once the run is interrupted: called between setup statements so a stop is honoured
/// at once, not after thousands of tables or connections.
pub fn check_interrupted() -> Result<(), SetupInterrupted> {
    if interrupted() {
        Err(SetupInterrupted)
    } else {
        Ok(())
    }
}

/// How long Ctrl-C waits for the cancels of a step's statements, all sent at once: the
/// slowest allowed cancel (a MySQL `KILL QUERY`: a login, then the statement, each bounded by
/// `protocol::CANCEL_TIMEOUT`) fits in it.
pub const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// How long after Ctrl-C a step's connections may take to end, cancels included, at any
/// client count; past it the run is recorded interrupted and ibench exits.
pub const STOP_BOUND: Duration = Duration::from_secs(20);

/// At most this many cancels are in flight at once (threads with small stacks).
const CANCEL_THREADS: usize = 128;

/// Cancel every statement of `cancellers` in parallel, and wait until all cancels are done
/// or [`CANCEL_WAIT`] has passed, whichever is first: the time does not grow with the client
/// count (one after another, 8 stalled MySQL clients took 59 s, and 1024 would take hours).
/// A cancel still going after the wait is left to its own timeout, on its own thread.
/// How many cancels were done in time.
pub fn cancel_all(cancellers: Vec<Arc<dyn Canceller>>) -> usize {
    cancel_all_within(cancellers, CANCEL_WAIT)
}

fn cancel_all_within(cancellers: Vec<Arc<dyn Canceller>>, wait: Duration) -> usize {
    let until = Instant::now() + wait;
    let total = cancellers.len();
    let queue: Arc<[Arc<dyn Canceller>]> = cancellers.into();
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..total.min(CANCEL_THREADS) {
        let (queue, next, done) = (Arc::clone(&queue), Arc::clone(&next), Arc::clone(&done));
        let worker = move || {
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(c) = queue.get(i) else { return };
                // A statement that already ended cannot be cancelled; nothing to do.
                let _ = c.cancel();
                done.fetch_add(1, Ordering::SeqCst);
            }
        };
        let spawned = std::thread::Builder::new()
            .name("ibench-cancel".into())
            .stack_size(512 * 1024)
            .spawn(worker);
        if spawned.is_err() {
            break; // out of threads: the ones started do the rest
        }
    }
    while done.load(Ordering::SeqCst) < total && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    done.load(Ordering::SeqCst)
}

/// When the connections of one step stop.
#[derive(Debug)]
pub struct StopSignal {
    flag: AtomicBool,
    deadline: Option<Instant>,
}

impl StopSignal {
    /// Stop at `deadline` (if any), on [`StopSignal::stop`], or on interrupt.
    pub fn new(deadline: Option<Instant>) -> Self {
        StopSignal {
            flag: AtomicBool::new(false),
            deadline,
        }
    }

    /// Tell every connection of the step to stop (e.g. one of them failed).
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }

    /// Whether the step must stop now.
    pub fn should_stop(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
            || interrupted()
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Whether the step was told to stop before its end (a connection failed, or the run was
    /// interrupted), as opposed to reaching its deadline.
    pub fn stopped_early(&self) -> bool {
        self.flag.load(Ordering::Relaxed) || interrupted()
    }

    /// Whether the step has a deadline and it has passed.
    pub fn deadline_passed(&self) -> bool {
        self.past_deadline(Instant::now())
    }

    /// Whether `t` is at or past the deadline.
    pub fn past_deadline(&self, t: Instant) -> bool {
        self.deadline.is_some_and(|d| t >= d)
    }

    /// Sleep until `t`, waking at least every 100 ms to check the stop conditions. Returns
    /// false when the step must stop (at or after the deadline counts as stop only if `t` is
    /// past it).
    pub fn sleep_until(&self, t: Instant) -> bool {
        if self.past_deadline(t) {
            return false;
        }
        loop {
            if self.flag.load(Ordering::Relaxed) || interrupted() {
                return false;
            }
            let now = Instant::now();
            if now >= t {
                return true;
            }
            let left = t - now;
            if left > SPIN_WINDOW {
                std::thread::sleep((left - SPIN_WINDOW).min(Duration::from_millis(100)));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cancel that takes `0` to return (a server that never acknowledges), counting calls.
    struct Slow(Duration, Arc<AtomicUsize>);

    impl Canceller for Slow {
        fn cancel(&self) -> Result<(), String> {
            self.1.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(self.0);
            Ok(())
        }
    }

    /// 1000 cancels of 30 s each: one after another they would take 8 hours; all are started
    /// at once (as many as the threads allow), and the wait ends at its bound.
    #[test]
    fn cancels_run_in_parallel_and_the_wait_is_bounded_at_any_client_count() {
        let calls = Arc::new(AtomicUsize::new(0));
        let slow: Vec<Arc<dyn Canceller>> = (0..1000)
            .map(|_| Arc::new(Slow(Duration::from_secs(30), Arc::clone(&calls))) as _)
            .collect();
        let started = Instant::now();
        let done = cancel_all_within(slow, Duration::from_secs(1));
        assert!(started.elapsed() < Duration::from_secs(25), "not bounded");
        assert_eq!(done, 0, "none of them could finish");
        assert!(
            calls.load(Ordering::SeqCst) >= 2,
            "in parallel, not one by one"
        );
        let quick: Vec<Arc<dyn Canceller>> = (0..300)
            .map(|_| Arc::new(Slow(Duration::ZERO, Arc::clone(&calls))) as _)
            .collect();
        assert_eq!(cancel_all_within(quick, Duration::from_secs(60)), 300);
    }

    /// A second Ctrl-C edits the typed record: the run.json it writes holds the same bytes
    /// the runner writes for that record, status interrupted and an end time set; a record
    /// no longer running is left as it is.
    #[test]
    fn a_running_record_is_marked_interrupted_as_the_runner_writes_it() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let mut run = crate::results::read_run(&fixture).unwrap();
        run.status = Status::Running;
        run.ended_at = None;
        let dir = std::env::temp_dir().join(format!("ibench-stop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.json");
        crate::results::write_json_atomic(&path, &run).unwrap();
        assert!(mark_interrupted(&path).unwrap());
        let marked = std::fs::read_to_string(&path).unwrap();
        let back: RunRecord = serde_json::from_str(&marked).unwrap();
        assert_eq!(back.status, Status::Interrupted);
        run.status = Status::Interrupted;
        run.ended_at.clone_from(&back.ended_at);
        assert!(run.ended_at.is_some());
        let expected = dir.join("expected.json");
        crate::results::write_json_atomic(&expected, &run).unwrap();
        assert_eq!(marked, std::fs::read_to_string(&expected).unwrap());
        assert!(!mark_interrupted(&path).unwrap(), "marked once only");
        assert_eq!(marked, std::fs::read_to_string(&path).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
