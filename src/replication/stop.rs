//! Stopping a private server as `ibench server stop` does: a primary's live replicas first,
//! a replica taken off its primary ([`super::pair::stop_pair`]), then what the stop left on
//! disk (the instance dir, unless `--remove`; a primary's replication slots that still hold
//! WAL). `ibench server list` says the slots' notes too ([`slot_notes`]).

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::server::instances::{RunningInstance, disk_bytes};
use crate::server::{ServerHandle, ServerKind, size_text};

/// The lines `server list` says after its table: the replication slots of the running
/// PostgreSQL primaries that hold back much WAL or were lost ([`super::wal_keep::slot_notes`]).
pub fn slot_notes(instances: &[RunningInstance]) -> Vec<String> {
    instances
        .iter()
        .flat_map(|i| super::wal_keep::slot_notes(&i.handle, has_standbys(&i.handle), false))
        .collect()
}

/// What stopping an instance did and left.
#[derive(Clone, Debug)]
pub struct Stopped {
    /// The server's kind.
    pub kind: ServerKind,
    /// Its main process, as recorded.
    pub pid: u32,
    /// It was running when asked to stop.
    pub was_running: bool,
    /// The instance dir.
    pub dir: PathBuf,
    /// Bytes the instance dir took on disk.
    pub disk_bytes: u64,
    /// The instance dir was deleted (`--remove`).
    pub removed: bool,
    /// The dirs of its private replicas, stopped first (and removed with `--remove`).
    pub replicas: Vec<PathBuf>,
    /// A PostgreSQL primary's replication slots left holding back much WAL, or lost, as read
    /// before the stop ([`super::wal_keep::slot_notes`]): their WAL stays in its data dir.
    pub slot_notes: Vec<String>,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for note in &self.slot_notes {
            writeln!(f, "{note}")?;
        }
        for replica in &self.replicas {
            if self.removed {
                writeln!(
                    f,
                    "stopped its replica in {} first, and removed it",
                    replica.display()
                )?;
            } else {
                writeln!(f, "stopped its replica in {} first", replica.display())?;
            }
        }
        if self.was_running {
            write!(f, "stopped the {} server (pid {})", self.kind, self.pid)?;
        } else {
            write!(f, "the {} server was not running", self.kind)?;
        }
        let dir = self.dir.display();
        let size = size_text(self.disk_bytes);
        if self.removed {
            write!(f, "; removed its instance dir {dir} ({size})")
        } else {
            write!(
                f,
                "; its instance dir {dir} stays, {size} (data, logs, password): delete it with `ibench server stop --dir {dir} --remove`"
            )
        }
    }
}

/// Stop the instance in `dir` and, with `remove`, delete its instance dir once the server is
/// down. Says what it did and what it left.
pub fn stop(dir: &Path, remove: bool) -> Result<Stopped> {
    let handle = ServerHandle::load(dir)?;
    let was_running = handle.is_running();
    // The slots no live standby streams from stay (with their WAL) after the stop.
    let slot_notes = super::wal_keep::slot_notes(&handle, has_standbys(&handle), true);
    // A primary's live replicas stop first; a replica is taken off its primary.
    let listed = super::pair::replicas_of(dir);
    let replicas = super::pair::stop_pair(dir)?;
    let disk_bytes = disk_bytes(dir);
    if remove {
        // Its replicas' instance dirs go too (a replica of a primary that is gone is of no
        // use); each one still holds the link naming this dir, read before.
        for replica in listed.iter().filter(|r| {
            super::pair::ReplicaLink::load(r).is_some_and(|l| same_dir(&l.primary_dir, dir))
        }) {
            fs::remove_dir_all(replica).with_context(|| {
                format!(
                    "the servers are stopped, but the replica's instance dir {} could not be deleted; delete it by hand",
                    replica.display()
                )
            })?;
        }
        // The dir given, which holds the handle just read: never a path the handle names.
        fs::remove_dir_all(dir).with_context(|| {
            format!(
                "the server is stopped, but its instance dir {} could not be deleted; delete it by hand",
                dir.display()
            )
        })?;
    }
    Ok(Stopped {
        kind: handle.kind,
        pid: handle.pid,
        was_running,
        dir: std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
        disk_bytes,
        removed: remove,
        replicas,
        slot_notes,
    })
}

/// Whether `a` and `b` name the same directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The role of the instance in `dir` as `server list` shows it: `replica of DIR (async)`,
/// `primary (1 replica)` or `standalone`.
pub fn role(dir: &Path) -> String {
    if let Some(link) = super::pair::ReplicaLink::load(dir) {
        return format!(
            "replica of {} ({})",
            link.primary_dir.display(),
            link.mode.name()
        );
    }
    match super::pair::replicas_of(dir).len() {
        0 => "standalone".to_string(),
        1 => "primary (1 replica)".to_string(),
        n => format!("primary ({n} replicas)"),
    }
}

/// Whether the private server's dir lists standbys of its own.
fn has_standbys(handle: &ServerHandle) -> bool {
    !super::pair::replicas_of(&handle.dir).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_role_names_the_primary_of_a_replica() {
        let base = std::env::temp_dir().join(format!("ibench-role-{}", std::process::id()));
        let (primary, replica) = (base.join("p"), base.join("r"));
        fs::create_dir_all(&primary).unwrap();
        fs::create_dir_all(&replica).unwrap();
        assert_eq!(role(&primary), "standalone");
        let list = serde_json::to_string(&[&replica]).unwrap();
        fs::write(primary.join(super::super::pair::REPLICAS_FILE), list).unwrap();
        assert_eq!(role(&primary), "primary (1 replica)");
        let link = serde_json::json!({"primary_dir": primary, "mode": "sync", "name": "r"});
        fs::write(
            replica.join(super::super::pair::REPLICA_FILE),
            link.to_string(),
        )
        .unwrap();
        assert_eq!(
            role(&replica),
            format!("replica of {} (sync)", primary.display())
        );
        let _ = fs::remove_dir_all(&base);
    }
}
