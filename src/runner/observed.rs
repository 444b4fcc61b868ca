//! A failover the run observes rather than drives (`--reconnect-for` without `--failover`;
//! an HA manager such as Patroni promotes the standby, docs/failover.md): the step reads
//! which server `--url` reached at its start ([`crate::backend::identity`]: the address and
//! port, PostgreSQL's timeline, MariaDB's `server_id`). A watcher connects as the clients
//! do (a multi-host URL with `target_session_attrs=read-write` reaches whichever server
//! takes writes) and asks every [`WATCH_EVERY`]: the first time another address, or the same
//! address on a new timeline, answers, is the promotion as ibench sees it, and the audit
//! of the keys acknowledged before the loss is read there at once (the step's deleters
//! remove the oldest rows as it goes on). After the step, when a client lost its
//! connection, the record names the new primary; the same server on the same timeline is a
//! lost connection and no failover, and the record says so.

use std::time::{Duration, Instant};

use crate::backend::identity::ServerIdentity;
use crate::backend::{Conn, Driver};
use crate::results::failover::{FailoverAudit, StepFailover};

use super::ledger::{SharedLedger, audit};
use super::stop::StopSignal;

/// How often the watcher asks which server takes writes.
pub const WATCH_EVERY: Duration = Duration::from_millis(200);

/// The watcher's thread, for the step's length: ask `driver`'s server which server takes
/// writes every [`WATCH_EVERY`] (connecting again when its connection broke); the first time
/// it is another than `before`, the step started on: that moment, and the audit of the
/// acknowledged keys in `ledgers` made there (`None` without ledgers). `None` when the step
/// ended first.
pub(super) fn watch(
    driver: &dyn Driver,
    before: &ServerIdentity,
    ledgers: &[(String, SharedLedger)],
    stop: &StopSignal,
) -> Option<(Instant, Option<FailoverAudit>)> {
    let mut conn: Option<Box<dyn Conn>> = None;
    while stop.sleep_until(Instant::now() + WATCH_EVERY) {
        if conn.is_none() {
            conn = driver.connect().ok();
        }
        let Some(c) = conn.as_mut() else {
            continue;
        };
        match c.server_identity() {
            Ok(Some(now)) if now != *before => {
                let promoted_at = Instant::now();
                let audit = (!ledgers.is_empty()).then(|| audit(c.as_mut(), ledgers));
                return Some((promoted_at, audit));
            }
            Ok(_) => {}
            Err(_) => conn = None,
        }
    }
    None
}

/// Which server the step starts on; `None` when it cannot be read (the record then says the
/// failover could not be told from a lost connection).
pub(super) fn identity_at_start(admin: &mut dyn Conn) -> Option<ServerIdentity> {
    admin.server_identity().ok().flatten()
}

/// Complete an observed failover's record: the new primary as `driver` reaches it after the
/// step, against `before`, the server the step started on; or why there was none (the
/// audit is the watcher's).
pub(super) fn conclude(
    driver: &dyn Driver,
    before: Option<&ServerIdentity>,
    record: &mut StepFailover,
) {
    let after = driver
        .connect()
        .map_err(|e| e.to_string())
        .and_then(|mut c| {
            let id = c.server_identity().map_err(|e| e.to_string())?;
            Ok((c, id))
        });
    let after = match after {
        Ok((_, Some(after))) => after,
        Ok((_, None)) => {
            record.error = Some("this backend cannot tell which server it reached".into());
            return;
        }
        Err(e) => {
            record.error = Some(format!(
                "cannot tell which server the clients reconnected to: {e}"
            ));
            return;
        }
    };
    match verdict(before, &after) {
        Ok(()) => record.new_primary_url = Some(after.describe()),
        Err(why) => record.error = Some(why),
    }
}

/// Whether the server the clients reconnected to (`after`) is another one than the step
/// started on (`before`): `Err` says why it is not a failover, or why it cannot be told.
fn verdict(before: Option<&ServerIdentity>, after: &ServerIdentity) -> Result<(), String> {
    let Some(before) = before else {
        return Err(format!(
            "the clients reconnected to {}, and which server the step started on could not be read: a failover cannot be told from a lost connection",
            after.describe()
        ));
    };
    if before == after {
        return Err(format!(
            "no failover: the clients reconnected to the server they lost, {} (a lost connection or a restart, not a promotion)",
            after.describe()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(address: &str, epoch: &str) -> ServerIdentity {
        ServerIdentity {
            address: address.into(),
            epoch: epoch.into(),
        }
    }

    /// Another address, or a new timeline on the same one (a virtual IP, a proxy), is a
    /// failover; the same server on the same timeline is not.
    #[test]
    fn another_server_or_timeline_is_a_failover() {
        let before = id("127.0.0.1:5433", "timeline 1");
        assert!(verdict(Some(&before), &id("127.0.0.1:5434", "timeline 2")).is_ok());
        assert!(verdict(Some(&before), &id("127.0.0.1:5433", "timeline 2")).is_ok());
        let same = verdict(Some(&before), &before).unwrap_err();
        assert!(same.starts_with("no failover"), "{same}");
        let unknown = verdict(None, &before).unwrap_err();
        assert!(unknown.contains("cannot be told"), "{unknown}");
    }
}
