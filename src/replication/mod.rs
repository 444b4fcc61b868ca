//! Replication: a private primary and its replica (`ibench server start --replica-of`), and
//! what a run with `--replica-url` measures of them (docs/replication.md).
//!
//! The pair's life cycle: `pair.rs` (making a replica, stopping a pair in order),
//! `data_copy.rs` (a standby's data without `pg_basebackup`), `wal_keep.rs` (the bound on the
//! WAL a primary's slots keep) and `stop.rs` (`ibench server stop`). What a run measures:
//! `heartbeat.rs` (the lag, the catch-up, the replica's tables), `apply.rs` (the replica's
//! apply work) and `slot_watch.rs` (the standby's slot). The mode, [`ReplicaMode`], and the
//! figures' model are `results::replication`'s: `run.json` holds them, and `results` stands
//! below every room that reaches a server. The statements are the backend's: a run's through
//! `backend::replication::ReplicaLink`, the pair's set-up through `backend::postgres::standby`
//! and `backend::mysql::replica_setup`; no file here writes SQL.

pub mod apply;
pub(crate) mod data_copy;
pub mod heartbeat;
pub mod pair;
pub mod part;
pub mod slot_watch;
pub mod stop;
pub mod wal_keep;

pub use crate::results::replication::ReplicaMode;

#[cfg(test)]
mod tests {
    /// "All SQL lives in the backend": `scripts/sql-outside-backend.py` finds no SQL text and
    /// no match on a backend family in src/ outside `src/backend/` (but the few files it
    /// exempts, each with its reason).
    #[test]
    fn no_sql_outside_the_backend() {
        let root = env!("CARGO_MANIFEST_DIR");
        let out = std::process::Command::new("python3")
            .arg(format!("{root}/scripts/sql-outside-backend.py"))
            .arg(root)
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
