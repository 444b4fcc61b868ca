//! Which server a connection reached, as the server itself says (docs/failover.md, "An
//! observed failover"): its address and port, and what changes when a standby is promoted
//! (PostgreSQL's timeline: the promotion starts a new one) or names the server among its
//! peers (MariaDB's `server_id`, which each member of a replication set has of its own).
//! A run with `--reconnect-for` reads it at the step's start and again after a lost
//! connection: another address or a new timeline is a failover the run observed.

use serde::{Deserialize, Serialize};

use super::text_sql::TextSql;
use super::{BackendError, BackendResult};

/// What a server says it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// The address and port it answered on (`127.0.0.1:5433`; `socket:5433` over a Unix
    /// socket, where PostgreSQL reports no address).
    pub address: String,
    /// PostgreSQL: the timeline of its current WAL (`timeline 1`, then `timeline 2` after a
    /// promotion; `timeline standby` on a standby). MariaDB: its `server_id` (`server_id 7`).
    pub epoch: String,
}

impl ServerIdentity {
    /// `127.0.0.1:5433 (timeline 2)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.address, self.epoch)
    }
}

/// PostgreSQL: the address, the port and the timeline (the first 8 hex digits of the
/// current WAL file's name); `standby` on a standby, where `pg_walfile_name()` cannot run.
pub(crate) const PG_IDENTITY_SQL: &str = "SELECT coalesce(host(inet_server_addr()), 'socket'), \
     inet_server_port(), \
     CASE WHEN pg_is_in_recovery() THEN 'standby' \
     ELSE substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) END";

/// MariaDB: the host name, the port and the server id.
pub(crate) const MARIADB_IDENTITY_SQL: &str = "SELECT @@hostname, @@port, @@server_id";

/// Read the identity row of `sql` (address, port, epoch), the epoch named `epoch_name`
/// (`timeline`, `server_id`); PostgreSQL's timeline comes as 8 hex digits and is given in
/// decimal (any other text as it is).
pub(crate) fn read(
    c: &mut impl TextSql,
    sql: &str,
    epoch_name: &str,
) -> BackendResult<Option<ServerIdentity>> {
    let context = "ask the server which it is";
    let result = c.query_text(sql, context)?;
    let Some(row) = result.rows.into_iter().next() else {
        return Ok(None);
    };
    Ok(Some(of_row(&row, epoch_name).ok_or_else(|| {
        BackendError::sql(
            context,
            "unexpected answer: not an address, a port and an epoch",
        )
    })?))
}

/// The identity in a row of three texts.
fn of_row(row: &[Option<String>], epoch_name: &str) -> Option<ServerIdentity> {
    let [Some(host), Some(port), Some(epoch)] = row else {
        return None;
    };
    let hex_timeline = epoch_name == "timeline" && epoch.trim().len() == 8;
    let epoch = match u32::from_str_radix(epoch.trim(), 16) {
        Ok(n) if hex_timeline => format!("{epoch_name} {n}"),
        _ => format!("{epoch_name} {}", epoch.trim()),
    };
    Some(ServerIdentity {
        address: format!("{}:{}", host.trim(), port.trim()),
        epoch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_as_an_address_and_an_epoch() {
        let row = |a: &str, b: &str, c: &str| vec![Some(a.into()), Some(b.into()), Some(c.into())];
        let pg = of_row(&row("127.0.0.1", "5433", "00000002"), "timeline").unwrap();
        assert_eq!(pg.describe(), "127.0.0.1:5433 (timeline 2)");
        let pg = of_row(&row("socket", "5433", "0000000A"), "timeline").unwrap();
        assert_eq!(pg.epoch, "timeline 10");
        let my = of_row(&row("db1", "3306", "7"), "server_id").unwrap();
        assert_eq!(my.describe(), "db1:3306 (server_id 7)");
        let standby = of_row(&row("h", "1", "standby"), "timeline").unwrap();
        assert_eq!(standby.epoch, "timeline standby");
        assert_eq!(of_row(&[None, None, None], "timeline"), None);
    }
}
