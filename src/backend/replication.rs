//! What a run with a replica (`--replica-url`, docs/replication.md) asks of the primary and
//! the replica, behind one seam: [`ReplicaLink`], a connection to either opened from its
//! typed target (`ConnectTarget::replica_link`, never from URL text), whose family's SQL is
//! its [`ReplicationDialect`] (`postgres/replication.rs`, `mysql/replication.rs`). The heartbeat,
//! the apply figures and the slot watch (`src/replication/`) call these methods and write no
//! SQL of their own.

use super::link::SqlLink;
use crate::results::replication::{DbmsReplicationView, ReplayPosition, ReplicaMode, SlotReading};

/// The heartbeat's table, in `--url`'s database.
pub const HEARTBEAT_TABLE: &str = "ibench_heartbeat";

/// What the checks at a run's start found of the pair.
#[derive(Clone, Debug, PartialEq)]
pub struct PairFacts {
    /// The primary's version as it reports it.
    pub primary_version: String,
    /// The replica's version as it reports it.
    pub replica_version: String,
    /// How the primary waits for the replica.
    pub mode: ReplicaMode,
    /// PostgreSQL's `synchronous_commit` on the primary, when the mode is `sync`.
    pub synchronous_commit: Option<String>,
    /// The standby's `application_name` on a PostgreSQL primary, when known.
    pub application_name: Option<String>,
}

/// A replication slot a run watches on the primary: its name, the primary's major version
/// (read once, as the slot is found) and its `max_slot_wal_keep_size`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchedSlot {
    /// The slot's name.
    pub name: String,
    /// The primary's major version.
    pub major: u32,
    /// The primary's `max_slot_wal_keep_size` as it shows it (13 and later).
    pub keep: Option<String>,
}

/// One family's replication statements, each over a text-SQL link of that family. The
/// errors are one line.
pub trait ReplicationDialect: Sync {
    /// Check that `r` replicates from `p` (and that `p` is no replica itself); what the pair
    /// is. Errors name `--url` or `--replica-url`; `shown` is the replica's URL, masked.
    fn check_pair(
        &self,
        p: &mut SqlLink,
        r: &mut SqlLink,
        shown: &str,
    ) -> anyhow::Result<PairFacts>;

    /// Make the heartbeat's table and its one row at sequence number `first`.
    fn make_heartbeat(&self, p: &mut SqlLink, first: i64) -> Result<(), String>;

    /// Make the writer's commits local: the heartbeat measures the replica, it does not wait
    /// for it (PostgreSQL's `synchronous_commit = local`).
    fn commit_locally(&self, _p: &mut SqlLink) {}

    /// The family's current time, as the heartbeat's `ts` column takes it (`now()`,
    /// `NOW(6)`).
    fn now_sql(&self) -> &'static str;

    /// Write sequence number `seq` and the commit time into the heartbeat's row.
    fn write_heartbeat(&self, p: &mut SqlLink, seq: i64) -> Result<(), String> {
        p.query(&format!(
            "UPDATE {HEARTBEAT_TABLE} SET seq = {seq}, ts = {} WHERE id = 1",
            self.now_sql()
        ))
        .map(|_| ())
    }

    /// Drop the heartbeat's table (the run's end; a failure leaves it).
    fn drop_heartbeat(&self, p: &mut SqlLink) {
        let _ = p.query(&format!("DROP TABLE IF EXISTS {HEARTBEAT_TABLE}"));
    }

    /// The sequence number in the heartbeat's row (`None`: no row yet).
    fn read_heartbeat(&self, r: &mut SqlLink) -> Result<Option<i64>, String> {
        Ok(
            r.value(&format!("SELECT seq FROM {HEARTBEAT_TABLE} WHERE id = 1"))?
                .and_then(|v| v.parse().ok()),
        )
    }

    /// One reading of the DBMS's own view of the lag, folded into `view`; `standby` is the
    /// standby's `application_name` on a PostgreSQL primary.
    fn read_view(
        &self,
        p: &mut SqlLink,
        r: &mut SqlLink,
        standby: Option<&str>,
        view: &mut DbmsReplicationView,
    ) -> Result<(), String>;

    /// Where the replica has replayed to (`None`: it does not say).
    fn replay_position(&self, r: &mut SqlLink) -> Result<Option<ReplayPosition>, String>;

    /// The rows of `table` and the sum of a hash of each row's text.
    fn table_checksum(&self, link: &mut SqlLink, table: &str) -> Result<(u64, String), String>;

    /// The replication slot the replica at `r` streams from on the primary at `p`, when the
    /// family has slots and the primary has it.
    fn find_slot(
        &self,
        _p: &mut SqlLink,
        _r: &mut SqlLink,
        _standby: Option<&str>,
    ) -> Option<WatchedSlot> {
        None
    }

    /// The slot as the primary at `p` shows it now (`None`: gone, or no slots).
    fn read_slot(
        &self,
        _p: &mut SqlLink,
        _slot: &WatchedSlot,
    ) -> Result<Option<SlotReading>, String> {
        Ok(None)
    }
}

/// A connection to a primary or a replica for the replication's statements.
pub struct ReplicaLink {
    link: SqlLink,
    dialect: &'static dyn ReplicationDialect,
}

impl ReplicaLink {
    /// A link over `link`, whose family's statements are `dialect`'s.
    pub(crate) fn new(link: SqlLink, dialect: &'static dyn ReplicationDialect) -> ReplicaLink {
        ReplicaLink { link, dialect }
    }

    /// This link is to the primary: check that `replica` replicates from it; what the pair
    /// is.
    pub fn check_pair(
        &mut self,
        replica: &mut ReplicaLink,
        shown: &str,
    ) -> anyhow::Result<PairFacts> {
        self.dialect
            .check_pair(&mut self.link, &mut replica.link, shown)
    }

    /// See [`ReplicationDialect::make_heartbeat`].
    pub fn make_heartbeat(&mut self, first: i64) -> Result<(), String> {
        self.dialect.make_heartbeat(&mut self.link, first)
    }

    /// See [`ReplicationDialect::commit_locally`].
    pub fn commit_locally(&mut self) {
        self.dialect.commit_locally(&mut self.link);
    }

    /// See [`ReplicationDialect::write_heartbeat`].
    pub fn write_heartbeat(&mut self, seq: i64) -> Result<(), String> {
        self.dialect.write_heartbeat(&mut self.link, seq)
    }

    /// See [`ReplicationDialect::drop_heartbeat`].
    pub fn drop_heartbeat(&mut self) {
        self.dialect.drop_heartbeat(&mut self.link);
    }

    /// See [`ReplicationDialect::read_heartbeat`].
    pub fn read_heartbeat(&mut self) -> Result<Option<i64>, String> {
        self.dialect.read_heartbeat(&mut self.link)
    }

    /// This link is to the primary: one reading of the DBMS's view of `replica`'s lag.
    pub fn read_view(
        &mut self,
        replica: &mut ReplicaLink,
        standby: Option<&str>,
        view: &mut DbmsReplicationView,
    ) -> Result<(), String> {
        self.dialect
            .read_view(&mut self.link, &mut replica.link, standby, view)
    }

    /// See [`ReplicationDialect::replay_position`].
    pub fn replay_position(&mut self) -> Result<Option<ReplayPosition>, String> {
        self.dialect.replay_position(&mut self.link)
    }

    /// See [`ReplicationDialect::table_checksum`].
    pub fn table_checksum(&mut self, table: &str) -> Result<(u64, String), String> {
        self.dialect.table_checksum(&mut self.link, table)
    }

    /// This link is to the primary: the slot `replica` streams from, when there is one.
    pub fn find_slot(
        &mut self,
        replica: &mut ReplicaLink,
        standby: Option<&str>,
    ) -> Option<WatchedSlot> {
        self.dialect
            .find_slot(&mut self.link, &mut replica.link, standby)
    }

    /// This link is to the primary: `slot` as it shows it now.
    pub fn read_slot(&mut self, slot: &WatchedSlot) -> Result<Option<SlotReading>, String> {
        self.dialect.read_slot(&mut self.link, slot)
    }
}

/// The first column of the first row of `sql` on `link` (empty for NULL); the error names
/// `flag` and the statement.
pub(crate) fn one(link: &mut SqlLink, sql: &str, flag: &str) -> anyhow::Result<String> {
    link.value(sql)
        .map_err(|e| anyhow::anyhow!("{flag}: `{sql}` failed: {e}"))
        .map(Option::unwrap_or_default)
}

/// The larger of two optional figures (either when one is missing).
pub(crate) fn max_u64(old: Option<u64>, new: Option<u64>) -> Option<u64> {
    match (old, new) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The first row's two columns of `sql`: a count and a checksum's text.
pub(crate) fn count_and_sum(link: &mut SqlLink, sql: &str) -> Result<(u64, String), String> {
    let result = link.query(sql)?;
    let row = result.rows.first().ok_or("no row")?;
    let rows = row
        .first()
        .and_then(|v| v.as_deref())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let sum = row.get(1).and_then(|v| v.clone()).unwrap_or_default();
    Ok((rows, sum))
}
