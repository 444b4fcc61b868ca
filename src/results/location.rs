//! Where the sampler looked: the server's process tree, its storage and block device, and
//! the mount holding a path (`run.json`'s `metrics.server` and `metrics.storage`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The server's process tree: where its root pid came from, or why there is none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerLocation {
    /// Root of the server's process tree (postmaster, mariadbd) on this host.
    pub pid: Option<u32>,
    /// How the pid was found (`--server-dir DIR`, `--server-pid`, `the server's pid file
    /// PATH`), or what was tried.
    pub how: String,
    /// Why the process figures (cpupq, rss, per-process IO) are n/a, when they are.
    pub na: Option<String>,
    /// The URL names a host other than this one: host-wide figures would describe the client
    /// only, so they are n/a too.
    pub remote: bool,
}

impl ServerLocation {
    /// One line for the terminal.
    pub fn describe(&self) -> String {
        match (&self.pid, &self.na) {
            (Some(p), _) => format!("pid {p} ({})", self.how),
            (None, Some(na)) => format!("n/a: {na}"),
            (None, None) => "n/a".to_string(),
        }
    }
}

/// The server's storage: the data paths and the block device holding them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageLocation {
    /// The data directory (or SQLite's files) on this host.
    pub data_paths: Vec<PathBuf>,
    /// The block device holding the first data path.
    pub device: Option<BlockDevice>,
    /// Why the storage figures are n/a, when they are.
    pub na: Option<String>,
}

impl StorageLocation {
    /// One line for the terminal.
    pub fn describe(&self) -> String {
        let paths = self
            .data_paths
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match (&self.device, &self.na) {
            (Some(d), _) => format!(
                "{paths} on /dev/{} ({}{})",
                d.name,
                d.dev,
                if d.partition { ", partition" } else { "" }
            ),
            (None, Some(na)) => format!("n/a: {na}"),
            (None, None) => "n/a".to_string(),
        }
    }
}

/// The block device that holds a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name, as in `/proc/diskstats` (`vda`, `nvme0n1p2`, `dm-0`).
    pub name: String,
    /// `MAJOR:MINOR`.
    pub dev: String,
    /// Whether it is a partition (its own counters are used, not the whole disk's).
    pub partition: bool,
}

/// The mount holding a path, from `/proc/self/mountinfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountInfo {
    /// Mount point.
    pub mount_point: String,
    /// Filesystem type (`ext4`, `xfs`, `tmpfs`, ...).
    pub fs_type: String,
    /// Mount source (`/dev/vda`, `tmpfs`, ...).
    pub source: String,
    /// `MAJOR:MINOR` of the filesystem.
    pub dev: String,
}
