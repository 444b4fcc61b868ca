//! MariaDB's (and MySQL's) replication statements for a run with a `--replica-url` replica
//! ([`crate::backend::replication`]): the pair's check (`@@server_id`, `SHOW SLAVE STATUS`,
//! `rpl_semi_sync_master_enabled`), the heartbeat's table, the GTID positions and
//! `Seconds_Behind_Master`, the replay position in the primary's binary log and the tables'
//! checksums.

use anyhow::bail;

use crate::backend::link::{SqlLink, column};
use crate::backend::replication::{
    HEARTBEAT_TABLE, PairFacts, ReplicationDialect, count_and_sum, max_u64, one,
};
use crate::results::replication::{
    DbmsReplicationView, ReplayPosition, ReplicaMode, transactions_behind,
};

/// MariaDB's [`ReplicationDialect`].
pub struct MyReplication;

/// The one value of it.
pub static MY_REPLICATION: MyReplication = MyReplication;

impl ReplicationDialect for MyReplication {
    /// The replica replicates (SHOW SLAVE STATUS has a row) and is not the primary (another
    /// server_id); the mode from `rpl_semi_sync_master_enabled`.
    fn check_pair(
        &self,
        p: &mut SqlLink,
        r: &mut SqlLink,
        shown: &str,
    ) -> anyhow::Result<PairFacts> {
        let pid = one(p, "SELECT @@server_id", "--url")?;
        let rid = one(r, "SELECT @@server_id", "--replica-url")?;
        let status = r
            .row("SHOW SLAVE STATUS")
            .map_err(|e| anyhow::anyhow!("--replica-url: SHOW SLAVE STATUS failed: {e}"))?;
        if status.is_empty() || pid == rid {
            bail!(
                "--replica-url {shown} replicates from no primary{}: give the replica's URL (`ibench server start mariadb --replica-of` prints it)",
                if pid == rid {
                    format!(" and has --url's server_id {pid}; it is --url's own server")
                } else {
                    " (SHOW SLAVE STATUS is empty)".to_string()
                }
            );
        }
        let semisync = p
            .value("SELECT @@rpl_semi_sync_master_enabled")
            .ok()
            .flatten()
            .is_some_and(|v| v == "1");
        Ok(PairFacts {
            primary_version: one(p, "SELECT @@version", "--url")?,
            replica_version: one(r, "SELECT @@version", "--replica-url")?,
            mode: if semisync {
                ReplicaMode::Semisync
            } else {
                ReplicaMode::Async
            },
            synchronous_commit: None,
            application_name: None,
        })
    }

    fn make_heartbeat(&self, p: &mut SqlLink, first: i64) -> Result<(), String> {
        p.query(&format!(
            "CREATE TABLE IF NOT EXISTS {HEARTBEAT_TABLE} (id INT PRIMARY KEY, seq BIGINT NOT NULL, ts DATETIME(6) NOT NULL) ENGINE=InnoDB"
        ))?;
        p.query(&format!(
            "REPLACE INTO {HEARTBEAT_TABLE} VALUES (1, {first}, NOW(6))"
        ))?;
        Ok(())
    }

    fn now_sql(&self) -> &'static str {
        "NOW(6)"
    }

    /// `Seconds_Behind_Master` on the replica, and the transactions its `gtid_slave_pos` is
    /// behind the primary's `gtid_binlog_pos`.
    fn read_view(
        &self,
        p: &mut SqlLink,
        r: &mut SqlLink,
        _standby: Option<&str>,
        view: &mut DbmsReplicationView,
    ) -> Result<(), String> {
        let status = r.row("SHOW SLAVE STATUS")?;
        let seconds = column(&status, "Seconds_Behind_Master").and_then(|v| v.parse().ok());
        view.seconds_behind_master_max = max_u64(view.seconds_behind_master_max, seconds);
        let replica_pos = r.value("SELECT @@gtid_slave_pos")?.unwrap_or_default();
        let primary_pos = p.value("SELECT @@gtid_binlog_pos")?.unwrap_or_default();
        let behind = transactions_behind(&primary_pos, &replica_pos);
        view.transactions_behind_max = max_u64(view.transactions_behind_max, Some(behind));
        view.primary_position_at_end = Some(primary_pos);
        view.replica_position_at_end = Some(replica_pos);
        Ok(())
    }

    /// `Relay_Master_Log_File` and `Exec_Master_Log_Pos`.
    fn replay_position(&self, r: &mut SqlLink) -> Result<Option<ReplayPosition>, String> {
        let status = r.row("SHOW SLAVE STATUS")?;
        let file = column(&status, "Relay_Master_Log_File");
        let pos = column(&status, "Exec_Master_Log_Pos").and_then(|p| p.parse().ok());
        Ok(file
            .zip(pos)
            .map(|(f, p)| ReplayPosition::Binlog(f.to_string(), p)))
    }

    fn table_checksum(&self, link: &mut SqlLink, table: &str) -> Result<(u64, String), String> {
        count_and_sum(
            link,
            &format!(
                "SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS('|', transactionid, dateandtime, cashregisterid, \
                 customerid, productid, price, data))), 0) FROM {table}"
            ),
        )
    }
}
