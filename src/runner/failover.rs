//! A failover during a step (`--failover STEP+SECONDS`): the moment comes, ibench sends
//! SIGKILL to the primary's server processes, promotes the replica with the DBMS's own means
//! and waits until it takes writes, while the clients (`super::reconnect`) reconnect to it
//! and go on; the audit of the inserted keys on the new primary (`super::ledger`) as soon as
//! it takes writes. Without `--failover`, the controller is an observed failover's watcher
//! (`super::observed`). Both are a `Controller`, which the step's plan holds with the event
//! it fills in; the step's record of it is `super::failover_record`'s, which each controller
//! concludes its way.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::backend::{Conn, Driver};
use crate::results::failover::{DrivenBy, FailoverAt, FailoverAudit, KillMethod, StepFailover};

use super::ledger::{SharedLedger, audit};
use super::reconnect::Reconnect;
use super::stop::StopSignal;

/// How often the controller asks the replica whether it takes writes yet.
const PROMOTION_POLL: Duration = Duration::from_millis(50);

/// ibench's own failover in a step: when, whom to kill, whom to promote.
pub(super) struct Kill {
    /// The moment asked.
    pub at: FailoverAt,
    /// The primary's server process (its descendants are killed with it).
    pub primary_pid: u32,
    /// The replica to promote.
    pub replica: Arc<dyn Driver>,
    /// Its URL, password masked.
    pub replica_url: String,
}

/// Without ibench's kill: an observed failover's watcher (`super::observed`).
pub(super) struct Observed {
    /// The server the step started on, when it could be read.
    pub before: Option<crate::backend::identity::ServerIdentity>,
}

/// What runs on a thread of its own beside a step whose clients reconnect: ibench's kill of
/// the primary and promotion of the replica ([`Kill`]), or an observed failover's watcher
/// ([`Observed`]).
pub(super) trait Controller: Send + Sync {
    /// From the step's start `start` until `stop` (or its own end): what it saw goes into
    /// the plan's event. `plan` is the step's set-up: its reconnect bound and target, its
    /// ledgers.
    fn control(&self, plan: &StepFailoverPlan, start: Instant, stop: &StopSignal);
    /// Whether this controller kills the primary (ibench's own failover).
    fn kills(&self) -> bool {
        false
    }
    /// After the step: what the controller adds to the step's failover record (`plan` as in
    /// [`Controller::control`]): who drove the failover, how, and the new primary.
    fn conclude(&self, plan: &StepFailoverPlan, record: &mut StepFailover);
}

/// A step's failover set-up: where the clients reconnect, what runs beside them, and what
/// it sees.
pub(super) struct StepFailoverPlan {
    pub reconnect: Reconnect,
    pub controller: Box<dyn Controller>,
    /// The inserters' ledgers (table, ledger) that the audit reads; empty with `--no-check`.
    pub ledgers: Vec<(String, SharedLedger)>,
    /// What the controller saw; its promotion is the moment the clients wait for.
    pub event: Event,
}

impl StepFailoverPlan {
    fn new(reconnect: Reconnect, controller: Box<dyn Controller>) -> StepFailoverPlan {
        let event = Event {
            promoted_at: reconnect.after.clone().unwrap_or_default(),
            ..Event::default()
        };
        StepFailoverPlan {
            reconnect,
            controller,
            ledgers: Vec::new(),
            event,
        }
    }

    /// The controller's thread, from the step's start `start` until `stop`.
    pub fn control(&self, start: Instant, stop: &StopSignal) {
        self.controller.control(self, start, stop);
    }
}

/// The failover set-up of `step`: with `--failover` at this step, ibench's kill of the
/// primary (its pid read from its pid file, so it must run on this host) and the promoted
/// replica as the clients' reconnect target; in any other step with `--reconnect-for` (or
/// `--failover`), the clients reconnect to `--url`. `None` when clients do not reconnect
/// (no `reconnect`).
pub(super) fn step_plan(
    reconnect: Option<&super::shape::ReconnectShape>,
    admin: &mut dyn Conn,
    step: crate::workload::steps::StepName,
) -> anyhow::Result<Option<StepFailoverPlan>> {
    let Some(r) = reconnect else {
        return Ok(None);
    };
    if let Some((at, replica)) = r.failover.as_ref().filter(|(at, _)| at.step == step) {
        let primary_pid = primary_pid(admin)?;
        let driver: Arc<dyn Driver> = Arc::from(replica.driver());
        standby_before(driver.as_ref(), &replica.redacted_url)?;
        let reconnect = Reconnect {
            driver: Arc::clone(&driver),
            bound: r.bound,
            after: Some(Arc::new(OnceLock::new())),
        };
        let kill = Kill {
            at: *at,
            primary_pid,
            replica: driver,
            replica_url: replica.redacted_url.clone(),
        };
        return Ok(Some(StepFailoverPlan::new(reconnect, Box::new(kill))));
    }
    let reconnect = Reconnect {
        driver: Arc::from(r.primary.driver()),
        bound: r.bound,
        after: None,
    };
    let observed = Observed {
        before: super::observed::identity_at_start(admin),
    };
    Ok(Some(StepFailoverPlan::new(reconnect, Box::new(observed))))
}

/// Before anything is killed: the replica answers and is a replica (it refuses writes), so
/// a promotion can make it a primary.
fn standby_before(replica: &dyn Driver, url: &str) -> anyhow::Result<()> {
    let mut conn = replica
        .connect()
        .map_err(|e| anyhow::anyhow!("--failover: cannot reach the replica to promote: {e}"))?;
    if conn.accepts_writes()? {
        anyhow::bail!(
            "--failover: the server at --replica-url ({url}) takes writes, so it is no replica to promote; give a standby's URL (`ibench server start --replica-of` prints it)"
        );
    }
    Ok(())
}

/// The primary's server process, from the pid file it reports.
fn primary_pid(admin: &mut dyn Conn) -> anyhow::Result<u32> {
    let fix = "--failover kills the primary's server process, so --url must be a server on this host (a private one: `ibench server start`)";
    let file = admin
        .server_files()?
        .and_then(|f| f.pid_file)
        .ok_or_else(|| anyhow::anyhow!("the primary does not say where its pid file is; {fix}"))?;
    let text = std::fs::read_to_string(&file).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the primary's pid file {}: {e}; {fix}",
            file.display()
        )
    })?;
    let pid = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<u32>().ok())
        .ok_or_else(|| anyhow::anyhow!("no pid in {}; {fix}", file.display()))?;
    if crate::process::read_stat(pid).is_none() {
        anyhow::bail!(
            "process {pid} of {} is not running here; {fix}",
            file.display()
        );
    }
    Ok(pid)
}

/// What the controller saw, shared with the step.
#[derive(Default)]
pub(super) struct Event {
    pub lost_at: OnceLock<Instant>,
    /// When the replica took writes; the clients wait for it before they reconnect
    /// (the same cell as their [`Reconnect::after`]).
    pub promoted_at: Arc<OnceLock<Instant>>,
    pub error: Mutex<Option<String>>,
    /// The audit, made as soon as the replica took writes.
    pub audit: Mutex<Option<FailoverAudit>>,
}

impl Event {
    fn fail(&self, e: String) {
        *self
            .error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
    }

    /// Why the failover did not complete, if it did not.
    pub fn error(&self) -> Option<String> {
        self.error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Controller for Kill {
    /// At the moment asked, kill the primary, promote the replica and wait until it takes
    /// writes, within the clients' reconnect bound. A failure stops the step (what it
    /// measured is kept); Ctrl-C or the step's end before the moment ends it quietly.
    fn control(&self, plan: &StepFailoverPlan, start: Instant, stop: &StopSignal) {
        let ev = &plan.event;
        let bound = plan.reconnect.bound;
        let moment = start + Duration::from_secs_f64(self.at.seconds);
        if !stop.sleep_until(moment) {
            if !crate::runner::stop::interrupted() {
                ev.fail(format!(
                    "the step ended before the failover moment ({} s into it): ask for an earlier one",
                    self.at.seconds
                ));
            }
            return;
        }
        if let Err(e) = kill_tree(self.primary_pid) {
            ev.fail(format!("cannot kill the primary: {e:#}"));
            stop.stop();
            return;
        }
        let _ = ev.lost_at.set(Instant::now());
        crate::say!(
            "failover: sent SIGKILL to the primary (pid {}), promoting {}",
            self.primary_pid,
            self.replica_url
        );
        match promote(self, bound, stop) {
            Ok(Some(mut conn)) => {
                let _ = ev.promoted_at.set(Instant::now());
                if !plan.ledgers.is_empty() {
                    let a = audit(conn.as_mut(), &plan.ledgers);
                    *ev.audit
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(a);
                }
            }
            Ok(None) => {}
            Err(e) => {
                ev.fail(format!("the replica {}: {e}", self.replica_url));
                stop.stop();
            }
        }
    }

    fn kills(&self) -> bool {
        true
    }

    /// ibench's SIGKILL at the moment asked; the new primary is the replica it promoted.
    fn conclude(&self, _plan: &StepFailoverPlan, record: &mut StepFailover) {
        record.driven_by = DrivenBy::Ibench;
        record.at_second = Some(self.at.seconds);
        record.kill_method = KillMethod::Sigkill;
        record.new_primary_url = Some(self.replica_url.clone());
    }
}

impl Controller for Observed {
    /// The observed failover's watcher (`super::observed::watch`): the moment the promoted
    /// server answered, and the audit made there.
    fn control(&self, plan: &StepFailoverPlan, _start: Instant, stop: &StopSignal) {
        let ev = &plan.event;
        let Some(before) = self.before.as_ref() else {
            return;
        };
        let driver = plan.reconnect.driver.as_ref();
        if let Some((at, audit)) = super::observed::watch(driver, before, &plan.ledgers, stop) {
            let _ = ev.promoted_at.set(at);
            *ev.audit
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = audit;
        }
    }

    /// Observed, killed by whatever did it; the new primary as the clients reach it after the
    /// step, or why there was none.
    fn conclude(&self, plan: &StepFailoverPlan, record: &mut StepFailover) {
        let driver = plan.reconnect.driver.as_ref();
        super::observed::conclude(driver, self.before.as_ref(), record);
    }
}

/// SIGKILL `pid` and every process below it (PostgreSQL's backends would otherwise go on
/// serving their connections for a moment).
fn kill_tree(pid: u32) -> anyhow::Result<()> {
    let tree = crate::sampler::procfs::process_tree(pid).map_err(anyhow::Error::msg)?;
    for (p, _) in tree {
        crate::server::signal(p, libc::SIGKILL)?;
    }
    Ok(())
}

/// Promote the replica and wait until it takes writes: the connection to it, `Ok(None)` when
/// the step stopped first (Ctrl-C), an error when it cannot be promoted or did not within
/// `bound`.
fn promote(
    kill: &Kill,
    bound: Duration,
    stop: &StopSignal,
) -> Result<Option<Box<dyn Conn>>, String> {
    let since = Instant::now();
    let mut conn: Box<dyn Conn> = kill
        .replica
        .connect()
        .map_err(|e| format!("cannot connect to promote it: {e}"))?;
    let wait_seconds = u32::try_from(bound.as_secs().max(1)).unwrap_or(u32::MAX);
    conn.promote(wait_seconds)
        .map_err(|e| format!("cannot be promoted: {e}"))?;
    loop {
        if conn
            .accepts_writes()
            .map_err(|e| format!("stopped answering while promoted: {e}"))?
        {
            return Ok(Some(conn));
        }
        if since.elapsed() > bound {
            return Err(format!(
                "the promotion did not complete within {:.0} s (--reconnect-for)",
                bound.as_secs_f64()
            ));
        }
        if !stop.sleep_until(Instant::now() + PROMOTION_POLL) {
            return Ok(None);
        }
    }
}
