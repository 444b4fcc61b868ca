//! The private instances as a user sees them: which are running on this host (`ibench server
//! list`), and what stopping one leaves on disk (`ibench server stop`, `--remove`).
//!
//! The running instances are found from the processes, with no registry to go stale: a server
//! process (`postgres`, `mariadbd`, `mysqld`) whose working directory is a data directory
//! `DIR/data` beside an `ibench-server.json` handle that names that very process as its main
//! one. Both servers make their data directory their working directory. A process whose
//! working directory ibench may not read (another user's, when not root) is not listed.

use std::fmt;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{HANDLE_FILE, ServerHandle, size_text};

/// Names of the processes a private server's main process has.
const SERVER_PROCESS_NAMES: [&str; 3] = ["postgres", "mariadbd", "mysqld"];

/// A private server found running, with the disk its instance dir takes.
#[derive(Clone, Debug)]
pub struct RunningInstance {
    /// Its handle, as `ibench server start` saved it.
    pub handle: ServerHandle,
    /// Bytes its instance dir takes on disk.
    pub disk_bytes: u64,
}

/// The private servers running on this host that `ibench server start` (or a matrix, or the
/// tests) started, by instance dir.
pub fn running() -> Vec<RunningInstance> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<RunningInstance> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(instance_of_process)
        .map(|handle| RunningInstance {
            disk_bytes: disk_bytes(&handle.dir),
            handle,
        })
        .collect();
    found.sort_by(|a, b| a.handle.dir.cmp(&b.handle.dir));
    found
}

/// The instance whose main server process is `pid`, if it is one.
fn instance_of_process(pid: u32) -> Option<ServerHandle> {
    let name = crate::process::name(pid)?;
    if !SERVER_PROCESS_NAMES.contains(&name.as_str()) {
        return None;
    }
    let data_dir = fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    let dir = data_dir.parent()?;
    if !dir.join(HANDLE_FILE).is_file() {
        return None;
    }
    let handle = ServerHandle::load(dir).ok()?;
    (handle.pid == pid).then_some(handle)
}

/// The listing `ibench server list` prints: a header and a line per instance (its kind, pid,
/// port, disk, role, dir and URL), or nothing.
pub fn render(instances: &[RunningInstance]) -> String {
    if instances.is_empty() {
        return String::new();
    }
    let w = instances
        .iter()
        .map(|i| i.handle.dir.display().to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max("instance dir".len());
    let roles: Vec<String> = instances.iter().map(|i| role(&i.handle.dir)).collect();
    let rw = roles
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(0)
        .max("role".len());
    let mut text = format!(
        "{:<9} {:>8} {:>6} {:>9}  {:<rw$}  {:<w$}  {}\n",
        "server", "pid", "port", "disk", "role", "instance dir", "url"
    );
    for (i, role) in instances.iter().zip(&roles) {
        let h = &i.handle;
        text.push_str(&format!(
            "{:<9} {:>8} {:>6} {:>9}  {:<rw$}  {:<w$}  {}\n",
            h.kind.name(),
            h.pid,
            h.port,
            size_text(i.disk_bytes),
            role,
            h.dir.display(),
            h.url
        ));
    }
    text
}

/// The role of the instance in `dir`: `replica of DIR (async)`, `primary (1 replica)` or
/// `standalone`.
fn role(dir: &Path) -> String {
    if let Some(link) = super::replica::ReplicaLink::load(dir) {
        return format!(
            "replica of {} ({})",
            link.primary_dir.display(),
            link.mode.name()
        );
    }
    match super::replica::replicas_of(dir).len() {
        0 => "standalone".to_string(),
        1 => "primary (1 replica)".to_string(),
        n => format!("primary ({n} replicas)"),
    }
}

/// The lines `server list` says after its table: the replication slots of the running
/// PostgreSQL primaries that hold back much WAL or were lost (`wal_keep::slot_notes`).
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
    pub kind: super::ServerKind,
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
    /// before the stop (`wal_keep::slot_notes`): their WAL stays in its data dir.
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
    let listed = super::replica::replicas_of(dir);
    let replicas = super::replica::stop_pair(dir)?;
    let disk_bytes = disk_bytes(dir);
    if remove {
        // Its replicas' instance dirs go too (a replica of a primary that is gone is of no
        // use); each one still holds the link naming this dir, read before.
        for replica in listed.iter().filter(|r| {
            super::replica::ReplicaLink::load(r).is_some_and(|l| same_dir(&l.primary_dir, dir))
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

/// Bytes a directory tree takes on disk (its blocks), not following symbolic links; what
/// cannot be read counts nothing.
pub fn disk_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        total += meta.blocks() * 512;
        if meta.is_dir()
            && let Ok(entries) = fs::read_dir(&path)
        {
            pending.extend(entries.flatten().map(|e| e.path()));
        }
    }
    total
}

/// Whether the private server's dir lists standbys of its own.
fn has_standbys(handle: &ServerHandle) -> bool {
    !super::replica::replicas_of(&handle.dir).is_empty()
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
        fs::write(primary.join(super::super::replica::REPLICAS_FILE), list).unwrap();
        assert_eq!(role(&primary), "primary (1 replica)");
        let link = serde_json::json!({"primary_dir": primary, "mode": "sync", "name": "r"});
        fs::write(
            replica.join(super::super::replica::REPLICA_FILE),
            link.to_string(),
        )
        .unwrap();
        assert_eq!(
            role(&replica),
            format!("replica of {} (sync)", primary.display())
        );
        let _ = fs::remove_dir_all(&base);
    }

    #[test]
    fn sizes_read_in_the_unit_that_suits_them() {
        assert_eq!(size_text(4096), "4 KB");
        assert_eq!(size_text(165_300_000), "165 MB");
        assert_eq!(size_text(1_234_000_000), "1.2 GB");
    }

    #[test]
    fn a_dir_takes_its_files_blocks() {
        let dir = std::env::temp_dir().join(format!("ibench-disk-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/f"), vec![1u8; 100_000]).unwrap();
        let bytes = disk_bytes(&dir);
        assert!(bytes >= 100_000, "{bytes}");
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(disk_bytes(&dir), 0);
    }

    #[test]
    fn no_instance_lists_nothing() {
        assert_eq!(render(&[]), "");
        // This test process is no server.
        assert!(instance_of_process(std::process::id()).is_none());
    }
}
