//! Readers of `/proc` and `/sys`: a process tree's CPU, IO and memory, the host's CPU and
//! context switches, the block device holding a path, and the size of files on disk.
//!
//! Every reader returns `Result<_, String>` with a reason fit for an `n/a` in the results:
//! nothing here panics or fails a run.

use crate::stats::convert::i64_f64;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use crate::process::{ProcStat, parse_stat, read_stat};
pub use crate::results::metrics::{BlockDevice, MountInfo};

/// Clock ticks per second of the `/proc` CPU counters (`sysconf(_SC_CLK_TCK)`).
pub fn clock_ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { i64_f64(t) } else { 100.0 }
}

/// `pid` and all its live descendants, `pid` first. Scans every process's parent in `/proc`
/// (re-done at every sample: Postgres forks a backend per connection).
///
/// A child that is reaped while `/proc` is being scanned would be missed (gone from the scan,
/// not yet in the root's `cutime` as read before) or counted twice (scanned, then in the
/// `cutime` read after). So the root is read before and after the scan, and the scan is
/// repeated until no child was reaped in between: at the end of a step, when every
/// connection's backend exits at once, this is what keeps their CPU from going missing.
pub fn process_tree(pid: u32) -> Result<Vec<(u32, ProcStat)>, String> {
    let reaped = |st: &ProcStat| st.cutime + st.cstime;
    let mut before = read_stat(pid).ok_or_else(|| format!("process {pid} is gone"))?;
    let mut tree = Vec::new();
    for _ in 0..10 {
        tree = scan_tree(pid, before)?;
        let after = read_stat(pid).ok_or_else(|| format!("process {pid} is gone"))?;
        if reaped(&after) == reaped(&before) {
            break;
        }
        before = after;
    }
    Ok(tree)
}

fn scan_tree(pid: u32, root: ProcStat) -> Result<Vec<(u32, ProcStat)>, String> {
    let entries = fs::read_dir("/proc").map_err(|e| format!("cannot list /proc: {e}"))?;
    let mut children: HashMap<u32, Vec<(u32, ProcStat)>> = HashMap::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(p) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if p == pid {
            continue;
        }
        if let Some(st) = read_stat(p) {
            children.entry(st.ppid).or_default().push((p, st));
        }
    }
    let mut tree = vec![(pid, root)];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i].0;
        if let Some(kids) = children.remove(&parent) {
            tree.extend(kids);
        }
        i += 1;
    }
    Ok(tree)
}

/// `read_bytes` and `write_bytes` of `/proc/PID/io`: bytes the process (its threads and its
/// reaped children) caused to be read from and sent to the storage layer.
pub fn read_io(pid: u32) -> Result<(u64, u64), String> {
    let text = fs::read_to_string(format!("/proc/{pid}/io"))
        .map_err(|e| format!("cannot read /proc/{pid}/io: {e}"))?;
    parse_io(&text).ok_or_else(|| format!("/proc/{pid}/io lacks read_bytes/write_bytes"))
}

/// Parse `/proc/PID/io` into (read_bytes, write_bytes).
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let mut r = None;
    let mut w = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("read_bytes:") {
            r = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("write_bytes:") {
            w = v.trim().parse().ok();
        }
    }
    Some((r?, w?))
}

/// Resident memory of one process from `/proc/PID/status`, bytes: (`RssAnon`, `RssShmem`,
/// `RssFile`). Kernel counters: no page-table walk, so cheap even for a huge buffer pool.
pub fn read_memory(pid: u32) -> Result<(u64, u64, u64), String> {
    let text = fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("cannot read /proc/{pid}/status: {e}"))?;
    parse_status_memory(&text).ok_or_else(|| format!("/proc/{pid}/status lacks RssAnon"))
}

/// Parse `RssAnon`, `RssShmem` and `RssFile` (kB) of `/proc/PID/status` into bytes.
pub fn parse_status_memory(text: &str) -> Option<(u64, u64, u64)> {
    let kb = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .map(|v| v * 1024)
    };
    Some((
        kb("RssAnon:")?,
        kb("RssShmem:").unwrap_or(0),
        kb("RssFile:").unwrap_or(0),
    ))
}

/// Whole-host CPU and context switches from `/proc/stat`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostStat {
    /// Busy ticks over all CPUs: user + nice + system + irq + softirq (what vmstat shows as
    /// us + sy). Idle, iowait and steal are not busy.
    pub busy_ticks: u64,
    /// Context switches since boot (`ctxt`).
    pub context_switches: u64,
}

/// Parse `/proc/stat`.
pub fn parse_host_stat(text: &str) -> Option<HostStat> {
    let mut busy = None;
    let mut ctxt = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("cpu ") {
            let v: Vec<u64> = rest
                .split_whitespace()
                .filter_map(|s| s.parse().ok())
                .collect();
            // user nice system idle iowait irq softirq steal ...
            if v.len() >= 7 {
                busy = Some(v[0] + v[1] + v[2] + v[5] + v[6]);
            }
        } else if let Some(rest) = line.strip_prefix("ctxt ") {
            ctxt = rest.trim().parse().ok();
        }
    }
    Some(HostStat {
        busy_ticks: busy?,
        context_switches: ctxt?,
    })
}

/// Read `/proc/stat`.
pub fn read_host_stat() -> Result<HostStat, String> {
    let text =
        fs::read_to_string("/proc/stat").map_err(|e| format!("cannot read /proc/stat: {e}"))?;
    parse_host_stat(&text).ok_or_else(|| "/proc/stat lacks the cpu or ctxt line".to_string())
}

/// Split a `st_dev` into (major, minor) the way glibc's `gnu_dev_major/minor` do.
pub fn dev_major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// The block device holding `path`: stat it, then `/sys/dev/block/MAJ:MIN`.
pub fn block_device_of(path: &Path) -> Result<BlockDevice, String> {
    let meta = fs::metadata(path).map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    let (major, minor) = dev_major_minor(meta.dev());
    let dev = format!("{major}:{minor}");
    if major == 0 {
        return Err(format!(
            "{} is on a filesystem with no block device (device {dev}, e.g. tmpfs or overlay)",
            path.display()
        ));
    }
    let sys = PathBuf::from(format!("/sys/dev/block/{dev}"));
    let target =
        fs::canonicalize(&sys).map_err(|e| format!("no {} for {}: {e}", sys.display(), dev))?;
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("cannot name the device of {}", sys.display()))?
        .to_string();
    Ok(BlockDevice {
        name,
        dev,
        partition: sys.join("partition").exists(),
    })
}

/// Counters of one `/proc/diskstats` line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    /// Reads completed.
    pub reads: u64,
    /// Bytes read (sectors × 512).
    pub read_bytes: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes written (sectors × 512).
    pub write_bytes: u64,
}

/// Find the device's line in the text of `/proc/diskstats`.
pub fn parse_diskstats(text: &str, name: &str) -> Option<DiskStat> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(2) != Some(&name) {
            return None;
        }
        let n = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
        Some(DiskStat {
            reads: n(3)?,
            read_bytes: n(5)? * 512,
            writes: n(7)?,
            write_bytes: n(9)? * 512,
        })
    })
}

/// Read the device's counters from `/proc/diskstats`.
pub fn read_diskstats(name: &str) -> Result<DiskStat, String> {
    let text = fs::read_to_string("/proc/diskstats")
        .map_err(|e| format!("cannot read /proc/diskstats: {e}"))?;
    parse_diskstats(&text, name).ok_or_else(|| format!("no line for {name} in /proc/diskstats"))
}

/// Bytes on disk (`st_blocks × 512`) of a directory tree, or of files (a missing file counts
/// 0). Symlinks are not followed; a file with several links counts once.
pub fn disk_usage_bytes(paths: &[PathBuf]) -> Result<u64, String> {
    let mut seen = HashSet::new();
    let mut total = 0u64;
    let mut stack: Vec<PathBuf> = Vec::new();
    for p in paths {
        match fs::symlink_metadata(p) {
            Ok(m) => {
                if m.is_dir() {
                    stack.push(p.clone());
                } else {
                    total += m.blocks() * 512;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot stat {}: {e}", p.display())),
        }
    }
    while let Some(dir) = stack.pop() {
        let entries =
            fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            // Files come and go while the server runs: skip what vanished.
            let Ok(m) = entry.metadata() else { continue };
            if m.is_dir() {
                stack.push(entry.path());
                total += m.blocks() * 512;
            } else if m.nlink() <= 1 || seen.insert((m.dev(), m.ino())) {
                total += m.blocks() * 512;
            }
        }
    }
    Ok(total)
}

/// Parse `/proc/self/mountinfo` and find the mount whose point is the longest prefix of `path`
/// (an absolute, canonical path).
pub fn parse_mountinfo(text: &str, path: &Path) -> Option<MountInfo> {
    let mut best: Option<MountInfo> = None;
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split_whitespace().collect();
        let r: Vec<&str> = right.split_whitespace().collect();
        let (Some(dev), Some(point), Some(fs_type), Some(source)) =
            (l.get(2), l.get(4), r.first(), r.get(1))
        else {
            continue;
        };
        let point = unescape_mount(point);
        if !path.starts_with(&point) {
            continue;
        }
        // Later lines over-mount earlier ones at the same point.
        if best
            .as_ref()
            .is_none_or(|b| point.len() >= b.mount_point.len())
        {
            best = Some(MountInfo {
                mount_point: point,
                fs_type: (*fs_type).to_string(),
                source: unescape_mount(source),
                dev: (*dev).to_string(),
            });
        }
    }
    best
}

/// Undo mountinfo's octal escapes (`\040` for a space).
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount holding `path`.
pub fn mount_of(path: &Path) -> Result<MountInfo, String> {
    let canon =
        fs::canonicalize(path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
    let text = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    parse_mountinfo(&text, &canon).ok_or_else(|| format!("no mount holds {}", canon.display()))
}

/// This process's CPU time (user + sys, all threads), seconds.
pub fn process_cpu_seconds() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a rusage into the pointer we pass, which points to enough space.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return 0.0;
    }
    // SAFETY: getrusage returned 0, so it filled the struct.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| i64_f64(t.tv_sec) + i64_f64(t.tv_usec) / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command_name() {
        let text = "1234 (post (gres) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 \
                    250 75 30 12 20 0 1 0 100 1000 10 18446744073709551615";
        let s = parse_stat(text).unwrap();
        assert_eq!(s.ppid, 1);
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (250, 75, 30, 12));
        assert_eq!(s.total_ticks(), 367);
    }

    #[test]
    fn own_tree_has_self_first() {
        let me = std::process::id();
        let t = process_tree(me).unwrap();
        assert_eq!(t[0].0, me);
        assert!(process_tree(u32::MAX - 1).is_err());
    }

    #[test]
    fn io_and_host_stat_parse() {
        let io = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(io), Some((4096, 8192)));
        let st = "cpu  10 2 30 400 5 6 7 8 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\nintr 1\nctxt 999\n";
        assert_eq!(
            parse_host_stat(st),
            Some(HostStat {
                busy_ticks: 10 + 2 + 30 + 6 + 7,
                context_switches: 999
            })
        );
    }

    #[test]
    fn status_memory() {
        let text = "Name:\tpostgres\nVmRSS:\t  300 kB\nRssAnon:\t  100 kB\nRssFile:\t  150 kB\nRssShmem:\t  50 kB\n";
        assert_eq!(parse_status_memory(text), Some((102_400, 51_200, 153_600)));
        assert!(read_memory(std::process::id()).unwrap().0 > 0);
    }

    #[test]
    fn diskstats_line() {
        let text =
            " 254       0 vda 268278 21158 26668010 1426841 446482 62264 42563960 480845 0 1 2\n";
        let d = parse_diskstats(text, "vda").unwrap();
        assert_eq!(d.reads, 268_278);
        assert_eq!(d.read_bytes, 26_668_010 * 512);
        assert_eq!(d.writes, 446_482);
        assert_eq!(d.write_bytes, 42_563_960 * 512);
        assert!(parse_diskstats(text, "vdb").is_none());
    }

    #[test]
    fn major_minor_split() {
        assert_eq!(dev_major_minor(0xfe00), (254, 0));
        assert_eq!(dev_major_minor(0x0803), (8, 3));
    }

    #[test]
    fn mountinfo_longest_prefix_wins() {
        let text = "22 1 254:0 / / rw - ext4 /dev/vda rw\n\
                    30 22 0:40 / /tmp/my\\040dir rw - tmpfs tmpfs rw\n";
        let m = parse_mountinfo(text, Path::new("/tmp/my dir/data")).unwrap();
        assert_eq!(
            (m.fs_type.as_str(), m.mount_point.as_str()),
            ("tmpfs", "/tmp/my dir")
        );
        let m = parse_mountinfo(text, Path::new("/var/lib")).unwrap();
        assert_eq!((m.fs_type.as_str(), m.dev.as_str()), ("ext4", "254:0"));
    }

    #[test]
    fn disk_usage_counts_files() {
        let dir = std::env::temp_dir().join(format!("ibench-du-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/a"), vec![1u8; 100_000]).unwrap();
        let n = disk_usage_bytes(std::slice::from_ref(&dir)).unwrap();
        assert!(n >= 100_000, "{n}");
        let missing = disk_usage_bytes(&[dir.join("nope")]).unwrap();
        assert_eq!(missing, 0);
        fs::remove_dir_all(&dir).unwrap();
    }
}
