//! Replication: a private primary and its replica (`ibench server start --replica-of`), and
//! what a run with `--replica-url` measures of them (docs/replication.md).

pub mod apply;
pub(crate) mod data_copy;
pub mod heartbeat;
pub mod pair;
pub mod slot_watch;
pub mod stop;
pub mod wal_keep;

pub use crate::results::replication::ReplicaMode;

#[cfg(test)]
mod tests {
    /// "All SQL lives in the backend": `scripts/sql-outside-backend.py` finds no SQL text and
    /// no match on a backend family in `src/runner/` and the run's replication files.
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
