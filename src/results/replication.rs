//! What a run with a replica records (`--replica-url`, docs/replication.md): the replica it
//! measured (`run.json`'s `replica`), each step's lag as ibench's heartbeat saw it and as the
//! DBMS reports it (a step's `replication`), and the pure figures made from the heartbeat's
//! readings (maximum, 99th percentile, the seconds the replica was lost).

use serde::{Deserialize, Serialize};

/// How a replica follows its primary: the one list of the modes, written by
/// `ibench server start --replica-of` (`--sync`, `--semisync`), a matrix file's `replica`,
/// the run's check of its replica and `run.json`'s `replica.mode` (as `async`, `sync`,
/// `semisync`). No replica at all is `None` of an `Option<ReplicaMode>`, named
/// [`NO_REPLICA`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ReplicaMode {
    /// Asynchronous: the primary's commits do not wait for the replica.
    Async,
    /// PostgreSQL synchronous replication: `synchronous_standby_names` names the standby and
    /// `synchronous_commit = remote_apply`.
    Sync,
    /// MariaDB semi-synchronous replication: a commit waits until the replica has received
    /// (not applied) it, or `rpl_semi_sync_master_timeout` (10 s) passed.
    Semisync,
}

/// The name of "no replica" where the modes are listed (a matrix file's `replica` axis,
/// "what differs").
pub const NO_REPLICA: &str = "none";

impl ReplicaMode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [ReplicaMode; 3] =
        [ReplicaMode::Async, ReplicaMode::Sync, ReplicaMode::Semisync];

    /// The lowercase name, as in `run.json`, a matrix file and reports.
    pub fn name(self) -> &'static str {
        match self {
            ReplicaMode::Async => "async",
            ReplicaMode::Sync => "sync",
            ReplicaMode::Semisync => "semisync",
        }
    }

    /// The mode named `name` (`None` for another name).
    pub fn of_name(name: &str) -> Option<ReplicaMode> {
        ReplicaMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl std::fmt::Display for ReplicaMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The replica a run measured (`run.json`'s `replica`; absent without `--replica-url`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaInfo {
    /// The replica's URL, password masked.
    pub url: String,
    /// The replica's version as it reports it.
    pub version: String,
    /// The primary's version as it reports it.
    pub primary_version: String,
    /// How the primary waits for it, as the primary reports it at the start: `async`, `sync`
    /// (PostgreSQL: the standby is in `synchronous_standby_names`; then `synchronous_commit`
    /// says how far), `semisync` (MariaDB: `rpl_semi_sync_master_enabled`).
    pub mode: ReplicaMode,
    /// PostgreSQL's `synchronous_commit` on the primary, when the mode is `sync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synchronous_commit: Option<String>,
    /// Milliseconds between two heartbeat writes on the primary.
    pub heartbeat_interval_ms: u32,
    /// Why the replica's process is not sampled (its CPU and storage writes per step are then
    /// absent): it runs on another host, or could not be found. Absent when it is sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_na: Option<String>,
}

/// A step's replication figures (a step's `replication`; absent without a replica).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepReplication {
    /// Heartbeat readings on the replica during the step's measured part.
    pub samples: u32,
    /// The largest lag read, ms; `None` when no reading succeeded.
    pub lag_max_ms: Option<f64>,
    /// The lag at the 99th percentile of the readings, ms.
    pub lag_p99_ms: Option<f64>,
    /// The mean lag over the readings, ms.
    pub lag_mean_ms: Option<f64>,
    /// Seconds from the end of the step's measured part until the replica had applied every
    /// heartbeat written up to that end (to within one heartbeat interval); `None` when it
    /// had not within the wait's cap or the replica was lost.
    pub catch_up_seconds: Option<f64>,
    /// Seconds into the step from which the replica could not be read (stopped, killed,
    /// unreachable); the lag of that second on is lost. `None` while it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_from_second: Option<f64>,
    /// The DBMS's own view of the same lag over the step, read once a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dbms: Option<DbmsReplicationView>,
    /// After l.i2, once the replica caught up: do its tables hold what the primary's hold?
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<ReplicaIntegrity>,
    /// PostgreSQL: the WAL the standby's replication slot held back on the primary over the
    /// step. Absent on MariaDB and for a standby without a slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<SlotRetention>,
    /// Rows the step wrote on the primary: inserted plus deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_written: Option<u64>,
    /// CPU of the replica's process tree from the step's start until it caught up after it,
    /// seconds; absent for a replica on another host, and when it did not catch up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_cpu_seconds: Option<f64>,
    /// `replica_cpu_seconds` per row written, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_cpu_us_per_row: Option<f64>,
    /// Bytes the replica's processes wrote to storage over the same time (`/proc/PID/io`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_write_bytes: Option<u64>,
    /// How far the replica's replay position moved over the same time: bytes of WAL
    /// (PostgreSQL's `pg_last_wal_replay_lsn()`) or of the primary's binary log (MariaDB's
    /// `Exec_Master_Log_Pos`) it applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_bytes: Option<u64>,
    /// `applied_bytes` per row written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_bytes_per_row: Option<f64>,
}

impl StepReplication {
    /// Record the rows the step wrote and the apply work per row (none when it wrote none).
    pub fn per_row(&mut self, rows_written: u64) {
        self.rows_written = Some(rows_written);
        let rows = crate::stats::convert::count_f64(rows_written);
        if rows_written > 0 {
            self.replica_cpu_us_per_row = self.replica_cpu_seconds.map(|s| s * 1e6 / rows);
            self.applied_bytes_per_row = self
                .applied_bytes
                .map(|b| crate::stats::convert::count_f64(b) / rows);
        }
    }
}

/// A PostgreSQL standby's replication slot as the primary kept it over a step
/// (`pg_replication_slots`, read once a second and as the step ends, on the primary: it is
/// read while the standby is down too).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SlotRetention {
    /// The slot's name (the standby's `primary_slot_name`).
    pub name: String,
    /// The most WAL the slot held back: bytes between the primary's `pg_current_wal_lsn()` and
    /// the slot's `restart_lsn`. `None` when every reading had no `restart_lsn` (a lost slot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retained_wal_max_bytes: Option<u64>,
    /// The worst `wal_status` read (PostgreSQL 13 and later), in the order `reserved`,
    /// `extended`, `unreserved`, `lost`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_status: Option<String>,
    /// The least `safe_wal_size` read, bytes: how much more WAL the primary could write before
    /// the slot is in danger of being lost (13 and later; absent with no bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safe_wal_size_min_bytes: Option<i64>,
    /// When the primary invalidated the slot (`wal_status` `lost`): why, one line. The
    /// standby can never catch up; the step's `lost_from_second` says from when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
}

/// One reading of a physical replication slot on a PostgreSQL primary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlotReading {
    /// `slot_name`.
    pub name: String,
    /// `wal_status` (13 and later).
    pub wal_status: Option<String>,
    /// `safe_wal_size`, bytes (13 and later).
    pub safe_wal_size_bytes: Option<i64>,
    /// `pg_current_wal_lsn()` less `restart_lsn`, bytes.
    pub retained_bytes: Option<u64>,
    /// `active`: a standby streams from it now.
    pub active: bool,
    /// `invalidation_reason` (17 and later), e.g. `wal_removed`.
    pub invalidation_reason: Option<String>,
}

impl SlotReading {
    /// The primary invalidated the slot: the WAL its standby needs is gone.
    pub fn is_lost(&self) -> bool {
        self.wal_status.as_deref() == Some("lost")
    }
}

/// How bad a `wal_status` is: `reserved` 0 … `lost` 3 (an unknown one counts as `reserved`).
fn wal_status_rank(status: &str) -> u8 {
    match status {
        "extended" => 1,
        "unreserved" => 2,
        "lost" => 3,
        _ => 0,
    }
}

impl SlotRetention {
    /// Fold one reading of the slot into the step's figures; `keep` is the primary's
    /// `max_slot_wal_keep_size` as it shows it, for the lost slot's reason.
    pub fn fold(&mut self, r: &SlotReading, keep: Option<&str>) {
        self.name.clone_from(&r.name);
        if let Some(b) = r.retained_bytes {
            self.retained_wal_max_bytes = Some(self.retained_wal_max_bytes.map_or(b, |m| m.max(b)));
        }
        if let Some(st) = &r.wal_status
            && self
                .wal_status
                .as_deref()
                .is_none_or(|old| wal_status_rank(st) > wal_status_rank(old))
        {
            self.wal_status = Some(st.clone());
        }
        if let Some(b) = r.safe_wal_size_bytes {
            self.safe_wal_size_min_bytes =
                Some(self.safe_wal_size_min_bytes.map_or(b, |m| m.min(b)));
        }
        if r.is_lost() && self.lost.is_none() {
            self.lost = Some(slot_lost_reason(r, keep));
        }
    }
}

/// Why a lost slot's standby is lost, one line.
pub fn slot_lost_reason(r: &SlotReading, keep: Option<&str>) -> String {
    let why = match r.invalidation_reason.as_deref() {
        Some(reason) if !reason.is_empty() => format!("wal_status lost, {reason}"),
        _ => "wal_status lost".to_string(),
    };
    let bound = keep.map_or(String::new(), |k| {
        format!(" by more than max_slot_wal_keep_size ({k})")
    });
    format!(
        "the primary invalidated the replication slot {} ({why}): its standby fell behind{bound} and the WAL it needs was removed, so it cannot catch up; make a new standby (ibench server start postgres --replica-of PRIMARY_DIR), or raise --slot-keep",
        r.name
    )
}

/// A PostgreSQL LSN (`16/B374D848`) as a byte position.
pub fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.trim().split_once('/')?;
    let hi = u64::from_str_radix(hi, 16).ok()?;
    let lo = u64::from_str_radix(lo, 16).ok()?;
    (lo <= u64::from(u32::MAX)).then_some((hi << 32) | lo)
}

/// The replica's tables against the primary's, after l.i2 once the replica caught up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaIntegrity {
    /// Every table's rows and checksum match.
    pub ok: bool,
    /// Per table, both sides.
    pub tables: Vec<TableMatch>,
    /// Why the check could not run (a side could not be read); `ok` is then false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One table on the primary and on the replica: its rows and a checksum of every row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableMatch {
    /// The table.
    pub table: String,
    /// `count(*)` on the primary.
    pub primary_rows: u64,
    /// `count(*)` on the replica.
    pub replica_rows: u64,
    /// The primary's checksum: the sum of a hash of each row's text (PostgreSQL's
    /// `hashtext(row::text)`, MariaDB's `CRC32` of its columns joined).
    pub primary_checksum: String,
    /// The replica's checksum, the same way.
    pub replica_checksum: String,
}

/// The DBMS's own view of the replica's lag over a step: the largest of its once-a-second
/// readings, and the positions at the end of the measured part.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbmsReplicationView {
    /// PostgreSQL: the most WAL bytes between the primary's `pg_current_wal_lsn()` and the
    /// replica's `pg_last_wal_replay_lsn()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_bytes_behind_max: Option<u64>,
    /// PostgreSQL: the largest `pg_stat_replication.replay_lag` on the primary, ms (the
    /// largest over its standbys when it has several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_lag_max_ms: Option<f64>,
    /// MariaDB: the largest `Seconds_Behind_Master` (whole seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_behind_master_max: Option<u64>,
    /// MariaDB: the most transactions between the primary's `gtid_binlog_pos` and the
    /// replica's `gtid_slave_pos` (sequence numbers, summed over replication domains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions_behind_max: Option<u64>,
    /// The primary's position at the end of the measured part (PostgreSQL's WAL LSN, MariaDB's
    /// `gtid_binlog_pos`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_position_at_end: Option<String>,
    /// The replica's position at the end of the measured part (PostgreSQL's replay LSN,
    /// MariaDB's `gtid_slave_pos`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_position_at_end: Option<String>,
}

/// A run's replication mode as "what differs" names it: `none`, `async`, `sync
/// (remote_apply)` (with PostgreSQL's `synchronous_commit`), `semisync`.
pub fn mode_name(replica: Option<&ReplicaInfo>) -> String {
    match replica {
        None => NO_REPLICA.to_string(),
        Some(r) => match &r.synchronous_commit {
            Some(c) => format!("{} ({c})", r.mode),
            None => r.mode.name().to_string(),
        },
    }
}

/// Where the replica has replayed to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayPosition {
    /// PostgreSQL: `pg_last_wal_replay_lsn()` as a byte position.
    Lsn(u64),
    /// MariaDB: `Relay_Master_Log_File` and `Exec_Master_Log_Pos` (a byte offset into the
    /// primary's binary log file).
    Binlog(String, u64),
}

/// Bytes replayed between two positions; `None` when they cannot be compared (a MariaDB
/// binary log that rotated to another file between them) or went backwards.
pub fn bytes_between(before: &ReplayPosition, after: &ReplayPosition) -> Option<u64> {
    match (before, after) {
        (ReplayPosition::Lsn(a), ReplayPosition::Lsn(b)) => b.checked_sub(*a),
        (ReplayPosition::Binlog(fa, a), ReplayPosition::Binlog(fb, b)) if fa == fb => {
            b.checked_sub(*a)
        }
        _ => None,
    }
}

/// The maximum, the 99th percentile (nearest rank) and the mean of the lags read.
pub fn lag_figures(lags_ms: &[f64]) -> (Option<f64>, Option<f64>, Option<f64>) {
    if lags_ms.is_empty() {
        return (None, None, None);
    }
    let mut sorted = lags_ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    // Nearest rank: the smallest value at or above 99% of the readings.
    let rank = (n * 99).div_ceil(100).max(1);
    let p99 = sorted[rank - 1];
    let max = sorted[n - 1];
    let sum: f64 = sorted.iter().sum();
    let mean = sum / crate::stats::convert::usize_f64(n);
    (Some(max), Some(p99), Some(mean))
}

/// The sequence number of each replication domain in a MariaDB GTID list
/// (`0-1-105,1-2-7`: domain 0 at 105, domain 1 at 7).
pub fn gtid_sequences(list: &str) -> Vec<(u64, u64)> {
    list.split(',')
        .filter_map(|gtid| {
            let mut parts = gtid.trim().split('-');
            let domain = parts.next()?.parse().ok()?;
            let _server = parts.next()?;
            let seq = parts.next()?.parse().ok()?;
            Some((domain, seq))
        })
        .collect()
}

/// Transactions the replica at `replica` is behind the primary at `primary` (two MariaDB
/// GTID lists), summed over the primary's domains.
pub fn transactions_behind(primary: &str, replica: &str) -> u64 {
    let replica = gtid_sequences(replica);
    gtid_sequences(primary)
        .into_iter()
        .map(|(domain, seq)| {
            let applied = replica
                .iter()
                .find(|(d, _)| *d == domain)
                .map_or(0, |(_, s)| *s);
            seq.saturating_sub(applied)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run.json`'s `replica.mode` reads and writes as the text it always was, and a
    /// recorded run loads with it.
    #[test]
    fn the_mode_is_written_as_before_and_old_runs_load() {
        for name in ["async", "sync", "semisync"] {
            let json = format!(
                r#"{{"url":"u","version":"v","primary_version":"p","mode":"{name}","heartbeat_interval_ms":100}}"#
            );
            let info: ReplicaInfo = serde_json::from_str(&json).unwrap();
            assert_eq!(info.mode.name(), name);
            assert_eq!(ReplicaMode::of_name(name), Some(info.mode));
            assert_eq!(serde_json::to_string(&info).unwrap(), json);
        }
        let bad = r#"{"url":"u","version":"v","primary_version":"p","mode":"other","heartbeat_interval_ms":1}"#;
        assert!(serde_json::from_str::<ReplicaInfo>(bad).is_err());
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mariadb-replica");
        let run = crate::results::read_run(&fixture).unwrap();
        assert_eq!(run.replica.map(|r| r.mode), Some(ReplicaMode::Async));
        assert_eq!(mode_name(None), NO_REPLICA);
    }

    #[test]
    fn lag_figures_take_the_nearest_rank() {
        assert_eq!(lag_figures(&[]), (None, None, None));
        let lags: Vec<f64> = (1..=200).map(f64::from).collect();
        let (max, p99, mean) = lag_figures(&lags);
        assert_eq!(max, Some(200.0));
        assert_eq!(p99, Some(198.0));
        assert_eq!(mean, Some(100.5));
        assert_eq!(lag_figures(&[5.0]), (Some(5.0), Some(5.0), Some(5.0)));
    }

    #[test]
    fn a_slot_keeps_its_worst_status_and_largest_retention() {
        let reading = |status: &str, retained: u64, safe: i64| SlotReading {
            name: "ibench_replica_1".to_string(),
            wal_status: Some(status.to_string()),
            safe_wal_size_bytes: Some(safe),
            retained_bytes: Some(retained),
            active: false,
            invalidation_reason: None,
        };
        let mut slot = SlotRetention::default();
        slot.fold(&reading("reserved", 100, 900), Some("1MB"));
        slot.fold(&reading("unreserved", 5000, -10), Some("1MB"));
        slot.fold(&reading("extended", 300, 700), Some("1MB"));
        assert_eq!(slot.retained_wal_max_bytes, Some(5000));
        assert_eq!(slot.wal_status.as_deref(), Some("unreserved"));
        assert_eq!(slot.safe_wal_size_min_bytes, Some(-10));
        assert_eq!(slot.lost, None);
        let mut lost = reading("lost", 0, 0);
        lost.retained_bytes = None;
        lost.invalidation_reason = Some("wal_removed".to_string());
        slot.fold(&lost, Some("1MB"));
        assert_eq!(slot.wal_status.as_deref(), Some("lost"));
        assert_eq!(slot.retained_wal_max_bytes, Some(5000));
        let why = slot.lost.expect("lost");
        assert!(
            why.starts_with(
                "the primary invalidated the replication slot ibench_replica_1 (wal_status lost, wal_removed): its standby fell behind by more than max_slot_wal_keep_size (1MB)"
            ),
            "{why}"
        );
        assert_eq!(why.lines().count(), 1);
    }

    #[test]
    fn lsns_and_work_per_row() {
        assert_eq!(parse_lsn("0/3000060"), Some(0x300_0060));
        assert_eq!(parse_lsn("16/B374D848"), Some((0x16 << 32) | 0xB374_D848));
        assert_eq!(parse_lsn("x"), None);
        assert_eq!(parse_lsn("1/100000000"), None);
        let mut rep = StepReplication {
            replica_cpu_seconds: Some(0.5),
            applied_bytes: Some(2_000_000),
            ..StepReplication::default()
        };
        rep.per_row(10_000);
        assert_eq!(rep.replica_cpu_us_per_row, Some(50.0));
        assert_eq!(rep.applied_bytes_per_row, Some(200.0));
        let mut none = StepReplication {
            replica_cpu_seconds: Some(0.5),
            ..StepReplication::default()
        };
        none.per_row(0);
        assert_eq!(
            (none.rows_written, none.replica_cpu_us_per_row),
            (Some(0), None)
        );
    }

    #[test]
    fn gtid_lists_give_transactions_behind() {
        assert_eq!(gtid_sequences("0-1-105,1-2-7"), vec![(0, 105), (1, 7)]);
        assert_eq!(gtid_sequences(""), vec![]);
        assert_eq!(transactions_behind("0-1-105", "0-1-100"), 5);
        assert_eq!(transactions_behind("0-1-105,1-1-3", "0-1-105"), 3);
        assert_eq!(transactions_behind("0-1-5", "0-1-9"), 0);
    }
}
