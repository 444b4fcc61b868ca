//! Facts about the machine the client runs on.

use serde::{Deserialize, Serialize};

/// The client host.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// CPU model from /proc/cpuinfo.
    pub cpu_model: String,
    /// Online logical CPUs.
    pub cpus: usize,
    /// Total memory, GiB.
    pub memory_gib: f64,
    /// Kernel release.
    pub kernel: String,
    /// The server's data directory (or SQLite file), when known.
    #[serde(default)]
    pub data_dir: Option<String>,
    /// The mount holding the data directory: filesystem type, source, mount point.
    #[serde(default)]
    pub data_dir_mount: Option<super::location::MountInfo>,
    /// The block device holding the data directory.
    #[serde(default)]
    pub data_dir_device: Option<super::location::BlockDevice>,
}

impl HostInfo {
    /// Read them from /proc (fields that cannot be read stay empty or 0).
    pub fn read() -> HostInfo {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let memory_gib = read("/proc/meminfo")
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0 / 1024.0)
            .unwrap_or(0.0);
        HostInfo {
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            cpu_model,
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_gib: (memory_gib * 10.0).round() / 10.0,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            ..HostInfo::default()
        }
    }
}
