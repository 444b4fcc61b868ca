//! PostgreSQL's replication statements for a run with a `--replica-url` standby
//! ([`crate::backend::replication`]): the pair's check (`pg_is_in_recovery()`, the system
//! identifier, `pg_stat_replication`'s `sync_state`), the heartbeat's table, the replay LSN and
//! `replay_lag`, the tables' checksums and the standby's replication slot (`slot.rs`).

use anyhow::bail;

use super::slot;
use crate::backend::link::{SqlLink, column};
use crate::backend::replication::{
    HEARTBEAT_TABLE, PairFacts, ReplicationDialect, WatchedSlot, count_and_sum, max_u64, one,
};
use crate::results::replication::{
    DbmsReplicationView, ReplayPosition, ReplicaMode, SlotReading, parse_lsn,
};

/// PostgreSQL's [`ReplicationDialect`].
pub struct PgReplication;

/// The one value of it.
pub static PG_REPLICATION: PgReplication = PgReplication;

/// A text literal, its quotes doubled.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

impl ReplicationDialect for PgReplication {
    /// The replica is a standby of the primary (in recovery, the same system identifier), the
    /// primary is not; the mode from `pg_stat_replication`.
    fn check_pair(
        &self,
        p: &mut SqlLink,
        r: &mut SqlLink,
        shown: &str,
    ) -> anyhow::Result<PairFacts> {
        if one(r, "SELECT pg_is_in_recovery()", "--replica-url")? != "t" {
            bail!(
                "--replica-url {shown} is not a standby (pg_is_in_recovery() is false there): it is a primary, perhaps --url's own server; give the standby's URL (`ibench server start postgres --replica-of` prints it)"
            );
        }
        if one(p, "SELECT pg_is_in_recovery()", "--url")? == "t" {
            bail!(
                "--url is a standby: give the primary's URL to --url and the standby's to --replica-url"
            );
        }
        // A user who may not read pg_control_system() skips this check.
        let id = "SELECT system_identifier::text FROM pg_control_system()";
        if let (Ok(Some(pid)), Ok(Some(rid))) = (p.value(id), r.value(id))
            && pid != rid
        {
            bail!(
                "--replica-url {shown} is a standby of another cluster (system identifier {rid}, --url's is {pid}): give a standby of --url's server"
            );
        }
        let primary_version = one(p, "SHOW server_version", "--url")?;
        let replica_version = one(r, "SHOW server_version", "--replica-url")?;
        let conninfo = one(r, "SHOW primary_conninfo", "--replica-url").unwrap_or_default();
        let application_name = conninfo
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("application_name="))
            .map(|v| v.trim_matches('\'').to_string());
        let state = match &application_name {
            Some(name) => p
                .value(&format!(
                    "SELECT sync_state FROM pg_stat_replication WHERE application_name = {}",
                    literal(name)
                ))
                .ok()
                .flatten(),
            None => None,
        };
        let names = one(p, "SHOW synchronous_standby_names", "--url")?;
        let sync = match state.as_deref() {
            Some(s) => s == "sync" || s == "quorum",
            None => !names.trim().is_empty(),
        };
        Ok(PairFacts {
            primary_version,
            replica_version,
            mode: if sync {
                ReplicaMode::Sync
            } else {
                ReplicaMode::Async
            },
            synchronous_commit: if sync {
                Some(one(p, "SHOW synchronous_commit", "--url")?)
            } else {
                None
            },
            application_name,
        })
    }

    fn make_heartbeat(&self, p: &mut SqlLink, first: i64) -> Result<(), String> {
        p.query(&format!(
            "CREATE TABLE IF NOT EXISTS {HEARTBEAT_TABLE} (id int PRIMARY KEY, seq bigint NOT NULL, ts timestamptz NOT NULL)"
        ))?;
        p.query(&format!(
            "INSERT INTO {HEARTBEAT_TABLE} VALUES (1, {first}, now()) ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, ts = EXCLUDED.ts"
        ))?;
        Ok(())
    }

    fn commit_locally(&self, p: &mut SqlLink) {
        let _ = p.query("SET synchronous_commit = local");
    }

    fn now_sql(&self) -> &'static str {
        "now()"
    }

    /// The replay LSN on the standby, the bytes the primary's current LSN is ahead of it, and
    /// `pg_stat_replication`'s `replay_lag` of the standby.
    fn read_view(
        &self,
        p: &mut SqlLink,
        r: &mut SqlLink,
        standby: Option<&str>,
        view: &mut DbmsReplicationView,
    ) -> Result<(), String> {
        let replayed = r.value("SELECT pg_last_wal_replay_lsn()::text")?;
        let Some(replayed) = replayed else {
            return Ok(());
        };
        let row = p.row(&format!(
            "SELECT pg_current_wal_lsn()::text AS current, pg_wal_lsn_diff(pg_current_wal_lsn(), '{}')::bigint AS behind",
            replayed.replace('\'', "")
        ))?;
        let behind = column(&row, "behind").and_then(|v| v.parse::<i64>().ok());
        let behind = behind.map(|b| u64::try_from(b).unwrap_or(0));
        view.replay_bytes_behind_max = max_u64(view.replay_bytes_behind_max, behind);
        view.primary_position_at_end = column(&row, "current").map(str::to_string);
        view.replica_position_at_end = Some(replayed);
        let filter = match standby {
            Some(name) => format!(" WHERE application_name = {}", literal(name)),
            None => String::new(),
        };
        let lag = p.value(&format!(
            "SELECT max(extract(epoch FROM replay_lag) * 1000)::float8 FROM pg_stat_replication{filter}"
        ))?;
        if let Some(ms) = lag.and_then(|v| v.parse::<f64>().ok()) {
            view.replay_lag_max_ms = Some(view.replay_lag_max_ms.map_or(ms, |m| m.max(ms)));
        }
        Ok(())
    }

    fn replay_position(&self, r: &mut SqlLink) -> Result<Option<ReplayPosition>, String> {
        Ok(r.value("SELECT pg_last_wal_replay_lsn()::text")?
            .as_deref()
            .and_then(parse_lsn)
            .map(ReplayPosition::Lsn))
    }

    fn table_checksum(&self, link: &mut SqlLink, table: &str) -> Result<(u64, String), String> {
        count_and_sum(
            link,
            &format!(
                "SELECT count(*)::text, coalesce(sum(hashtext(t::text)::bigint), 0)::text FROM {table} t"
            ),
        )
    }

    /// The standby's `primary_slot_name` (PostgreSQL 12 and later; before, the slot its WAL
    /// receiver streams from, else its `application_name`, which is the slot's name on a
    /// standby ibench made), when the primary has it.
    fn find_slot(
        &self,
        p: &mut SqlLink,
        r: &mut SqlLink,
        standby: Option<&str>,
    ) -> Option<WatchedSlot> {
        let mut ask = |sql: &str| r.value(sql).ok().flatten().filter(|n| !n.is_empty());
        let named = ask("SHOW primary_slot_name")
            // Before 12 the slot is in recovery.conf, which SHOW cannot read; the WAL
            // receiver names the slot it streams from (9.6 and later).
            .or_else(|| ask("SELECT slot_name FROM pg_stat_wal_receiver"))
            .or_else(|| standby.map(str::to_string));
        let (Some(name), Ok(major)) = (named, slot::major_version(p)) else {
            return None;
        };
        let there = slot::read_slots(p, major, Some(&name)).is_ok_and(|s| !s.is_empty());
        if !there {
            return None;
        }
        let keep = slot::keep_size(p, major);
        Some(WatchedSlot { name, major, keep })
    }

    fn read_slot(&self, p: &mut SqlLink, s: &WatchedSlot) -> Result<Option<SlotReading>, String> {
        Ok(slot::read_slots(p, s.major, Some(&s.name))?.pop())
    }
}
