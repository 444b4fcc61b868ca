//! The metrics tests' own reading of a process tree from /proc: written apart from ibench's
//! sampler so the two can be compared.

#![allow(dead_code)]

use std::path::PathBuf;

use ibench::results::RunRecord;
use ibench::runner::RunOptions;
use ibench::stats::convert::count_f64;

use super::common::run_and_read;

/// A run read back, with the test's own reading of the server's process tree `pid` around
/// it: (record, directory, CPU seconds, bytes written).
pub fn run_between_own_readings(pid: u32, opts: RunOptions) -> (RunRecord, PathBuf, f64, f64) {
    let (cpu0, w0) = own_reading(pid);
    let (run, dir) = run_and_read(opts);
    let (cpu1, w1) = own_reading(pid);
    (run, dir, cpu1 - cpu0, count_f64(w1 - w0))
}

/// The test's own reading of the server's process tree: CPU ticks (utime + stime + cutime +
/// cstime of every process, reaped children included) and write_bytes.
pub fn own_reading(root: u32) -> (f64, u64) {
    let mut tree = vec![root];
    let mut i = 0;
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter_map(|p| {
            let s = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let ppid = s[s.rfind(')')? + 2..].split(' ').nth(1)?.parse().ok()?;
            Some((p, ppid))
        })
        .collect();
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(all.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        i += 1;
    }
    let ticks = 100.0; // USER_HZ on Linux
    let mut cpu = 0.0;
    let mut written = 0;
    for pid in tree {
        let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let f: Vec<u64> = s[s.rfind(')').unwrap() + 2..]
            .split(' ')
            .skip(11) // fields 14.. (utime, stime, cutime, cstime)
            .take(4)
            .map(|v| v.parse().unwrap())
            .collect();
        cpu += count_f64(f.iter().sum::<u64>()) / ticks;
        if let Ok(io) = std::fs::read_to_string(format!("/proc/{pid}/io")) {
            written += io
                .lines()
                .find_map(|l| l.strip_prefix("write_bytes: "))
                .map_or(0, |v| v.parse::<u64>().unwrap());
        }
    }
    (cpu, written)
}
