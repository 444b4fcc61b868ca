//! A failover the run observes rather than drives (`--reconnect-for` without `--failover`;
//! an HA manager such as Patroni promotes the standby, docs/failover.md): the step reads
//! which server `--url` reached at its start ([`crate::backend::identity`]: the address and
//! port, PostgreSQL's timeline, MariaDB's `server_id`). When a client lost its connection,
//! after the step ibench connects as the clients reconnected (a multi-host URL with
//! `target_session_attrs=read-write` reaches the new primary) and reads it again: another
//! address, or the same address on a new timeline, is a failover, and its record names the
//! new primary; the audit of the keys acknowledged before the loss is read there. The same
//! server on the same timeline is a lost connection and no failover: the record says so.

use crate::backend::Conn;
use crate::backend::identity::ServerIdentity;
use crate::results::failover::StepFailover;

use super::failover::StepFailoverPlan;

/// Which server the step starts on; `None` when it cannot be read (the record then says the
/// failover could not be told from a lost connection).
pub(super) fn identity_at_start(admin: &mut dyn Conn) -> Option<ServerIdentity> {
    admin.server_identity().ok().flatten()
}

/// Complete an observed failover's record: the new primary, or why there was none; the
/// audit on the new primary when the inserters kept their keys.
pub(super) fn conclude(plan: &StepFailoverPlan, record: &mut StepFailover) {
    let after = plan
        .reconnect
        .driver
        .connect()
        .map_err(|e| e.to_string())
        .and_then(|mut c| {
            let id = c.server_identity().map_err(|e| e.to_string())?;
            Ok((c, id))
        });
    let (mut conn, after) = match after {
        Ok((conn, Some(after))) => (conn, after),
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
    match verdict(plan.observed_from.as_ref(), &after) {
        Ok(()) => {
            record.new_primary_url = Some(after.describe());
            if !plan.ledgers.is_empty() {
                record.audit = Some(super::failover::audit(conn.as_mut(), &plan.ledgers));
            }
        }
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
