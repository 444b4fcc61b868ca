//! The private instances as a user sees them: which are running on this host (`ibench server
//! list`) and the disk each takes (what stopping one does and leaves is the replication's
//! `stop.rs`: a primary's replicas stop first).
//!
//! The running instances are found from the processes, with no registry to go stale: a server
//! process (`postgres`, `mariadbd`, `mysqld`) whose working directory is a data directory
//! `DIR/data` beside an `ibench-server.json` handle that names that very process as its main
//! one. Both servers make their data directory their working directory. A process whose
//! working directory ibench may not read (another user's, when not root) is not listed.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

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
/// port, disk, role, dir and URL), or nothing. `roles[i]` is the role of `instances[i]`
/// (`replication::stop::role`: a server knows nothing of the pairs above it).
pub fn render(instances: &[RunningInstance], roles: &[String]) -> String {
    if instances.is_empty() {
        return String::new();
    }
    let w = instances
        .iter()
        .map(|i| i.handle.dir.display().to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max("instance dir".len());
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
    for (i, role) in instances.iter().zip(roles) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(render(&[], &[]), "");
        // This test process is no server.
        assert!(instance_of_process(std::process::id()).is_none());
    }
}
