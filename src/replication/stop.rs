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
    /// The dirs of its private replicas, stopped first.
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
            writeln!(f, "stopped its replica in {} first", replica.display())?;
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
    let replicas = super::pair::stop_pair(dir)?;
    let disk_bytes = disk_bytes(dir);
    if remove {
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

/// Whether the private server's dir lists standbys of its own.
fn has_standbys(handle: &ServerHandle) -> bool {
    !super::pair::replicas_of(&handle.dir).is_empty()
}
