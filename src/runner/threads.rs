//! A step's connections on their threads: the one client loop on each (paced or not), the
//! monitor's timeline and progress line beside them, the cancel of their statements on
//! Ctrl-C, and how the step ended.

use std::time::{Duration, Instant, SystemTime};

use crate::results::{Status, TimelineWriter};
use crate::run_part::{RunPart, StopWatch};
use crate::stats::{OpKind, OpRecorder};
use crate::workload::steps::StepName;

use super::client::{Worker, client_loop};
use super::connections::{Slot, StepConnections};
use super::index_progress;
use super::monitor::{self, Monitor, ProgressMode};
use super::pacer::Pacer;
use super::reconnect::Reconnecting;
use super::stop::{self, StopSignal};

/// One connection's work in a step, after it ran.
pub(super) struct Finished {
    pub(super) worker: Box<dyn Worker>,
    pub(super) table: String,
    pub(super) client: u32,
    pub(super) recorder: OpRecorder,
    /// `Ok(true)` when the connection reached its natural end (its work done, or the
    /// deadline), `Ok(false)` when it was stopped early.
    pub(super) result: Result<bool, crate::backend::BackendError>,
    pub(super) ended: Instant,
    /// With `--failover` or `--reconnect-for`: its failed statements, reconnects and gap.
    pub(super) outage: Option<super::reconnect::ClientOutage>,
}

/// A step's failover as it went: its set-up with what the controller saw, the step's start.
pub(super) struct DrivenFailover {
    pub(super) plan: super::failover::StepFailoverPlan,
    pub(super) start: Instant,
}

/// What the step's connections did.
pub(super) struct Driven {
    pub(super) finished: Vec<Finished>,
    /// With `--on-replica-loss stop`: why the step was stopped (the replica stopped answering).
    pub(super) replica_lost: Option<String>,
    pub(super) seen: monitor::Seconds,
    pub(super) timeline_error: Option<String>,
    pub(super) started_at: SystemTime,
    pub(super) ended_at: SystemTime,
    /// From the start to the end of the last operation.
    pub(super) seconds: f64,
    /// With `--failover` or `--reconnect-for`.
    pub(super) failover: Option<DrivenFailover>,
}

impl Driven {
    /// Whether ibench killed the primary during the step (`--failover`).
    pub(super) fn primary_lost(&self) -> bool {
        self.failover
            .as_ref()
            .is_some_and(|f| f.plan.event.lost_at.get().is_some())
    }

    /// The step's status and what went wrong, if anything. A statement cancelled because of
    /// Ctrl-C fails with the backend's "cancelled" error: that is the interruption, not a
    /// failure.
    pub(super) fn status(&self) -> (Status, Option<String>) {
        // The replica's loss first: the cancelled statements' errors follow from it.
        let error = self
            .replica_lost
            .clone()
            .or_else(|| {
                self.failover
                    .as_ref()
                    .and_then(|f| f.plan.event.error())
                    .map(|e| format!("failover: {e}"))
            })
            .or_else(|| {
                self.finished
                    .iter()
                    .find_map(|f| f.result.as_ref().err().map(ToString::to_string))
            })
            .or(self
                .timeline_error
                .clone()
                .map(|e| format!("timeline: {e}")));
        let all_reached_their_end = self.finished.iter().all(|f| matches!(f.result, Ok(true)));
        step_status(error, stop::interrupted(), all_reached_their_end)
    }
}

/// A step's status: completed when every connection reached its natural end (even if Ctrl-C
/// came during the last operation: l.x that built every index is complete); interrupted when
/// the run was interrupted and some connection was cut short (an error then is the cancelled
/// statement, so it is dropped); failed on any other error.
pub(super) fn step_status(
    error: Option<String>,
    interrupted: bool,
    all_reached_their_end: bool,
) -> (Status, Option<String>) {
    match error {
        Some(_) if interrupted => (Status::Interrupted, None),
        Some(e) => (Status::Failed, Some(e)),
        None if all_reached_their_end => (Status::Completed, None),
        None if interrupted => (Status::Interrupted, None),
        None => (Status::Completed, None),
    }
}

/// When a step with `deadline_seconds` from `start` must stop (`None`: it runs to its end).
fn deadline_of(deadline_seconds: Option<f64>, start: Instant) -> Option<Instant> {
    deadline_seconds.map(|s| start + Duration::from_secs_f64(s))
}

/// The measured part's length: from `start` to the last connection's end (never 0).
fn measured_seconds(finished: &[Finished], start: Instant) -> f64 {
    finished
        .iter()
        .map(|f| f.ended)
        .max()
        .map_or(0.0, |e| (e - start).as_secs_f64())
        .max(1e-6)
}

/// Run every connection of the step on its own thread with the one client loop, while the
/// monitor writes the timeline and the progress line; returns when all have finished.
pub(super) fn drive(
    connections: StepConnections,
    step: StepName,
    timeline: &mut TimelineWriter,
    (mode, parts): (ProgressMode, &dyn RunPart),
) -> Driven {
    let (counters, cancellers) = side_handles(&connections.slots);
    let started_at = SystemTime::now();
    let start = Instant::now();
    let stop = StopSignal::new(deadline_of(connections.deadline_seconds, start));
    let step_over = std::sync::atomic::AtomicBool::new(false);
    let index_shared = std::sync::Arc::new(index_progress::Shared::default());
    // With --on-replica-loss stop: the replica's loss stops the step like Ctrl-C does.
    let watch = parts.stop_watch(start);
    let replica_lost = std::sync::Mutex::new(None);
    let failover = connections.failover;
    let (finished, seen, timeline_error) = std::thread::scope(|scope| {
        // ibench's kill, or the observed failover's watcher, on a thread of its own.
        if let Some(plan) = failover.as_ref() {
            let stop = &stop;
            scope.spawn(move || plan.control(start, stop));
        }
        let reconnect = failover.as_ref().map(|f| &f.reconnect);
        let step_over = &step_over;
        let cancellers = &cancellers;
        let lost = (&stop, &replica_lost);
        scope.spawn(move || stop_on_replica_loss(cancellers, step_over, watch.as_ref(), lost));
        if let Some(conn) = connections.index_progress {
            let shared = &*index_shared;
            scope.spawn(move || {
                index_progress::poll(conn, shared, step_over, mode == ProgressMode::Quiet)
            });
        }
        let handles: Vec<_> = connections
            .slots
            .into_iter()
            .map(|s| {
                let stop = &stop;
                scope.spawn(move || run_slot(s, start, stop, reconnect))
            })
            .collect();
        let mut monitor = Monitor::new(
            step,
            start,
            counters,
            timeline,
            mode,
            connections.goal,
            parts,
        );
        monitor.watch_index_builds(index_progress::Watch::new(std::sync::Arc::clone(
            &index_shared,
        )));
        while monitor.tick(&|| handles.iter().filter(|h| h.is_finished()).count()) {}
        let timeline_error = monitor.timeline_error.take();
        let finished: Vec<Finished> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        step_over.store(true, std::sync::atomic::Ordering::Relaxed);
        // The failover's controller, if still waiting for its moment, ends with the step.
        stop.stop();
        (finished, monitor.into_seconds(), timeline_error)
    });
    let seconds = measured_seconds(&finished, start);
    Driven {
        finished,
        replica_lost: replica_lost
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
        seen,
        timeline_error,
        started_at,
        ended_at: SystemTime::now(),
        seconds,
        failover: failover.map(|plan| DrivenFailover { plan, start }),
    }
}

/// Cancel the step's connections on Ctrl-C ([`cancel_on_interrupt`]); when the replica is
/// lost instead, keep the watch's line in `replica_lost`, stop the step and cancel.
fn stop_on_replica_loss(
    cancellers: &[CancellerOf],
    step_over: &std::sync::atomic::AtomicBool,
    watch: Option<&StopWatch>,
    (stop, replica_lost): (&StopSignal, &std::sync::Mutex<Option<String>>),
) {
    if let Some(line) = cancel_on_interrupt(cancellers, step_over, watch) {
        *replica_lost
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(line);
        stop.stop();
        stop::cancel_all(cancellers.to_vec());
    }
}

/// A slot's op kind and live counters.
type LiveOf = (OpKind, std::sync::Arc<crate::stats::LiveCounters>);

/// A slot's canceller, shared with the thread that cancels on Ctrl-C.
type CancellerOf = std::sync::Arc<dyn crate::backend::Canceller>;

/// Each slot's live counters (for the monitor) and its canceller: on Ctrl-C, the statements
/// in flight are cancelled on the server (an index build can run for minutes), so the
/// connections see the stop at once.
fn side_handles(slots: &[Slot]) -> (Vec<LiveOf>, Vec<CancellerOf>) {
    let counters = slots
        .iter()
        .map(|s| (s.recorder.kind, s.recorder.live.clone()))
        .collect();
    let cancellers = slots
        .iter()
        .filter_map(|s| s.conn.canceller())
        .map(std::sync::Arc::from)
        .collect();
    (counters, cancellers)
}

/// One connection's thread: its pacer, the client loop, and its record however it ended.
pub(super) fn run_slot(
    mut s: Slot,
    start: Instant,
    stop: &StopSignal,
    reconnect: Option<&super::reconnect::Reconnect>,
) -> Finished {
    // Paced inserts are due a quarter interval into each slot and deletes
    // half an interval later, so the insert a delete follows has normally
    // finished when the delete is due, and neither lands on the monitor's
    // one-second ticks (which would blur the per-second rates).
    let pacer = s.ops_per_sec.map(|r| {
        let slots = if s.recorder.kind == OpKind::Delete {
            0.75
        } else {
            0.25
        };
        Pacer::new(start + Duration::from_secs_f64(slots / r), r)
    });
    // A panic in a connection (a bug) fails the step with its message
    // instead of dropping the connection's figures silently.
    if let Some(clock) = crate::stats::current_thread_cpu_clock() {
        let _ = s.recorder.live.cpu_clock.set(clock);
    }
    let mut on_loss = reconnect.map(Reconnecting::new);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        client_loop(
            s.worker.as_mut(),
            s.conn.as_mut(),
            pacer,
            stop,
            &mut s.recorder,
            on_loss.as_mut(),
        )
    }));
    let panicked_loop = result.is_err();
    let result = result.unwrap_or_else(|panic| Err(panicked(s.client, panic.as_ref())));
    // A loop that panicked left no outage figures.
    let outage = on_loss
        .filter(|_| !panicked_loop)
        .map(Reconnecting::into_outage);
    if result.is_err() {
        stop.stop();
    }
    Finished {
        worker: s.worker,
        table: s.table,
        client: s.client,
        recorder: s.recorder,
        result,
        ended: Instant::now(),
        outage,
    }
}

/// Until the step is over: on Ctrl-C, or when `watch` finds the replica lost
/// (`--on-replica-loss stop`), cancel every statement in flight on the server (an index build
/// can run for minutes; a commit can wait for a synchronous standby that is gone), all at
/// once, so the connections see the stop at once. The whole stop is bounded by
/// [`stop::STOP_BOUND`] at any client count (the interrupt handler's own bound, from the
/// signal on, whatever the run was doing). Returns the watch's line, without cancelling,
/// when the replica is lost: the caller records it, stops the step and cancels.
pub(super) fn cancel_on_interrupt(
    cancellers: &[std::sync::Arc<dyn crate::backend::Canceller>],
    step_over: &std::sync::atomic::AtomicBool,
    watch: Option<&StopWatch>,
) -> Option<String> {
    let over = || step_over.load(std::sync::atomic::Ordering::Relaxed);
    while !over() {
        if stop::interrupted() {
            stop::cancel_all(cancellers.to_vec());
            return None;
        }
        if let Some(line) = watch.and_then(|w| w()) {
            return Some(line);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// The error of a connection thread that panicked, with the panic's message.
pub(super) fn panicked(
    client: u32,
    panic: &(dyn std::any::Any + Send),
) -> crate::backend::BackendError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    crate::backend::BackendError::sql(
        format!("connection of client {client}"),
        format!("panicked: {message} (a bug in ibench; please report it)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Conn;
    use crate::runner::monitor::Goal;

    /// A worker whose operation panics (a bug).
    struct Panicking;

    impl Worker for Panicking {
        fn kind(&self) -> OpKind {
            OpKind::Insert
        }
        fn op(&mut self, _: &mut dyn Conn) -> Result<Option<u64>, crate::backend::BackendError> {
            panic!("index out of bounds")
        }
    }

    /// A connection thread that panics used to be dropped silently with its figures; now it
    /// fails the step with the panic's message.
    #[test]
    fn a_panicking_connection_fails_the_step_with_its_message() {
        let dir = std::env::temp_dir().join(format!("ibench-panic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut timeline = TimelineWriter::open(&dir).unwrap();
        let connections = StepConnections {
            slots: vec![Slot {
                worker: Box::new(Panicking),
                conn: Box::new(crate::backend::mock::Ids::with_rows(10)),
                ops_per_sec: None,
                table: "pi1".into(),
                client: 3,
                recorder: OpRecorder::new(OpKind::Insert),
            }],
            goal: Goal::None,
            deadline_seconds: None,
            index_progress: None,
            failover: None,
        };
        let driven = drive(
            connections,
            StepName::LoadInitial,
            &mut timeline,
            (ProgressMode::Quiet, &crate::run_part::RunParts::default()),
        );
        assert_eq!(driven.finished.len(), 1, "the connection's record is kept");
        let err = driven.finished[0].result.as_ref().unwrap_err().to_string();
        assert!(
            err.contains("client 3") && err.contains("panicked: index out of bounds"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `--on-replica-loss stop`: the replica's line fails the step, before the errors of the
    /// statements its stop cancelled.
    #[test]
    fn a_lost_replica_s_line_is_the_step_s_error() {
        let line = "the replica stopped answering at second 2 of qr100; --on-replica-loss continue measures on without it";
        let driven = Driven {
            finished: vec![Finished {
                worker: Box::new(Panicking),
                table: "pi1".into(),
                client: 0,
                recorder: OpRecorder::new(OpKind::Insert),
                result: Err(crate::backend::BackendError::sql(
                    "insert",
                    "canceling statement due to user request",
                )),
                ended: Instant::now(),
                outage: None,
            }],
            replica_lost: Some(line.into()),
            seen: monitor::Seconds::default(),
            timeline_error: None,
            started_at: SystemTime::now(),
            ended_at: SystemTime::now(),
            seconds: 2.0,
            failover: None,
        };
        assert_eq!(driven.status(), (Status::Failed, Some(line.to_string())));
    }

    #[test]
    fn a_step_that_did_all_its_work_is_complete_even_when_interrupted() {
        // l.x built every index, then Ctrl-C: complete.
        assert_eq!(step_status(None, true, true), (Status::Completed, None));
        // Cut short by Ctrl-C; the cancelled statement's error is the interruption.
        assert_eq!(step_status(None, true, false), (Status::Interrupted, None));
        assert_eq!(
            step_status(
                Some("canceling statement due to user request".into()),
                true,
                false
            ),
            (Status::Interrupted, None)
        );
        // Any other error fails the step.
        assert_eq!(
            step_status(Some("disk full".into()), false, false),
            (Status::Failed, Some("disk full".into()))
        );
        assert_eq!(step_status(None, false, true), (Status::Completed, None));
    }
}
