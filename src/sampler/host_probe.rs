//! The host probe: four small fixed tasks timed before and after every step, so that a report
//! can tell a host that slowed down from a DBMS that did (`--host-probe-ms`,
//! docs/method.md "The host probe"). Each task runs for its share of the budget and its figure
//! is the wall time it took divided by the units it did: a host whose CPU, memory, scheduler
//! or disk got slower shows a larger figure.

use std::fs::{self, File, OpenOptions};
use std::hint::black_box;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::results::probe::{CpuTicks, HostProbe, RunHostProbe, StepHost};
use crate::stats::convert::{count_f64, u64_usize, usize_u64};

/// Entries (u32) of the memory task's buffer: 4 MiB, bigger than this machine's 1 MiB of L2
/// per core (and most servers' 1-2 MiB), smaller than its 32 MiB of L3. The task reads it once
/// in order before the timed walk, so the walk times the shared L3 and TLB (which neighbours
/// and the DBMS contend for) and not whether the step before evicted the buffer to DRAM.
pub const MEMORY_ENTRIES: usize = 1 << 20;

/// Iterations of the CPU loop between two looks at the clock.
const CPU_BATCH: u64 = 20_000;

/// Accesses of the memory walk between two looks at the clock.
const MEMORY_BATCH: u64 = 4_096;

/// Bytes written (and fsynced) per fsync.
const FSYNC_BYTES: usize = 4096;

/// The file the fsync task writes (and removes) in its directory.
pub const FSYNC_FILE: &str = ".ibench-host-probe";

/// Shares of the budget, in per cent: CPU, memory, loopback, fsync.
const SHARES_PCT: [u32; 4] = [30, 30, 20, 20];

/// A host probe ready to run: its budget, its memory buffer (built once) and where it fsyncs.
pub struct HostProber {
    budget_ms: u32,
    chain: Vec<u32>,
    fsync_dir: Option<PathBuf>,
}

impl HostProber {
    /// A probe with `budget_ms` split over its tasks, fsyncing in the first of `dirs` where it
    /// can create its file. `None` when `budget_ms` is 0 (the probe is off).
    pub fn new(budget_ms: u32, dirs: &[PathBuf]) -> Option<HostProber> {
        if budget_ms == 0 {
            return None;
        }
        let fsync_dir = dirs.iter().find(|d| writable(d)).cloned();
        Some(HostProber {
            budget_ms,
            chain: pointer_chain(MEMORY_ENTRIES, 0x9e37_79b9_7f4a_7c15),
            fsync_dir,
        })
    }

    /// The probe's setup as `run.json` records it (the median is filled in as probes run).
    pub fn record(&self) -> RunHostProbe {
        RunHostProbe {
            budget_ms: self.budget_ms,
            fsync_dir: self.fsync_dir.as_ref().map(|d| d.display().to_string()),
            memory_bytes: usize_u64(self.chain.len() * std::mem::size_of::<u32>()),
            median: None,
        }
    }

    /// The budget of task `i` (in [`SHARES_PCT`] order).
    fn share(&self, i: usize) -> Duration {
        Duration::from_micros(u64::from(self.budget_ms) * u64::from(SHARES_PCT[i]) * 10)
    }

    /// Run the four tasks once.
    pub fn run(&self) -> HostProbe {
        let started = Instant::now();
        let mut errors = Vec::new();
        let at = crate::results::now_rfc3339();
        let cpu = cpu_ns_per_iteration(self.share(0));
        let memory = memory_ns_per_access(&self.chain, self.share(1));
        let loopback = loopback_us_per_round_trip(self.share(2))
            .map_err(|e| errors.push(format!("loopback: {e}")))
            .ok();
        let fsync = match &self.fsync_dir {
            None => {
                errors.push("fsync: no writable directory on the data's filesystem".into());
                None
            }
            Some(dir) => fsync_us(dir, self.share(3))
                .map_err(|e| errors.push(format!("fsync in {}: {e}", dir.display())))
                .ok(),
        };
        HostProbe {
            at,
            cpu_ns_per_iteration: Some(cpu),
            memory_ns_per_access: Some(memory),
            loopback_us_per_round_trip: loopback,
            fsync_us: fsync,
            cpu_mhz: fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|t| mean_cpu_mhz(&t)),
            seconds: started.elapsed().as_secs_f64(),
            errors,
        }
    }
}

/// Whether a file can be created (and removed) in `dir`.
fn writable(dir: &Path) -> bool {
    let path = dir.join(FSYNC_FILE);
    let ok = File::create(&path).is_ok();
    let _ = fs::remove_file(&path);
    ok
}

/// The directories the fsync task may use, best first: the data directory (its parent for a
/// SQLite file), then `fallback` (the results directory).
pub fn fsync_dirs(data_dir: Option<&str>, fallback: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = data_dir.map(Path::new) {
        if d.is_dir() {
            dirs.push(d.to_path_buf());
        } else if let Some(parent) = d.parent().filter(|p| p.is_dir()) {
            dirs.push(parent.to_path_buf());
        }
    }
    dirs.push(fallback.to_path_buf());
    dirs
}

/// The whole host's CPU counters now (`/proc/stat`), `None` when unreadable.
pub fn cpu_ticks() -> Option<CpuTicks> {
    CpuTicks::parse(&fs::read_to_string("/proc/stat").ok()?)
}

/// The step's host record from its probes and the `/proc/stat` readings around it.
pub fn step_host(
    before: Option<HostProbe>,
    after: Option<HostProbe>,
    ticks: (Option<CpuTicks>, Option<CpuTicks>),
) -> StepHost {
    let shares = match ticks {
        (Some(a), Some(b)) => a.shares_until(&b),
        _ => None,
    };
    StepHost {
        before,
        after,
        steal_share: shares.map(|s| s.0),
        iowait_share: shares.map(|s| s.1),
    }
}

/// Mean of the `cpu MHz` lines of `/proc/cpuinfo`; `None` when it shows none.
pub fn mean_cpu_mhz(cpuinfo: &str) -> Option<f64> {
    let mhz: Vec<f64> = cpuinfo
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
        .collect();
    (!mhz.is_empty()).then(|| mhz.iter().sum::<f64>() / count_f64(usize_u64(mhz.len())))
}

/// Run `batch` until `budget` has passed (at least once); the units done and the seconds.
fn timed(budget: Duration, mut batch: impl FnMut() -> u64) -> (u64, f64) {
    let start = Instant::now();
    let mut units = 0;
    loop {
        units += batch();
        let elapsed = start.elapsed();
        if elapsed >= budget {
            return (units, elapsed.as_secs_f64());
        }
    }
}

/// ns per iteration of a fixed integer loop (xorshift and a multiply-add per iteration).
fn cpu_ns_per_iteration(budget: Duration) -> f64 {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let (n, seconds) = timed(budget, || {
        for _ in 0..CPU_BATCH {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x = x.wrapping_mul(0x9e37_79b9).wrapping_add(1);
        }
        black_box(x);
        CPU_BATCH
    });
    seconds * 1e9 / count_f64(n)
}

/// A random cycle through `n` entries (Sattolo's shuffle, seeded): following `chain[i]` from
/// any entry visits every entry once before it returns.
fn pointer_chain(n: usize, seed: u64) -> Vec<u32> {
    let mut chain: Vec<u32> = (0..n).map(|i| u32::try_from(i).unwrap_or(0)).collect();
    let mut s = seed | 1;
    for i in (1..n).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let j = u64_usize(s % usize_u64(i));
        chain.swap(i, j);
    }
    chain
}

/// ns per dependent access of a walk along `chain`, after one read of it in order.
fn memory_ns_per_access(chain: &[u32], budget: Duration) -> f64 {
    black_box(chain.iter().fold(0u32, |a, &x| a.wrapping_add(x)));
    let mut at = 0usize;
    let (n, seconds) = timed(budget, || {
        for _ in 0..MEMORY_BATCH {
            at = chain.get(at).map_or(0, |&next| next as usize);
        }
        black_box(at);
        MEMORY_BATCH
    });
    seconds * 1e9 / count_f64(n)
}

/// Pin the calling thread to `cpu` (best effort: a failure leaves it where the kernel puts
/// it).
fn pin_to(cpu: usize) {
    // SAFETY: `set` is a plain bit set, zeroed and then filled by the libc macros;
    // sched_setaffinity only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set);
    }
}

/// The CPU the calling thread runs on (0 when unknown).
fn current_cpu() -> usize {
    // SAFETY: sched_getcpu has no arguments and returns -1 on error.
    usize::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(0)
}

/// µs per one-byte round trip between two threads over a Unix socket pair, both pinned to the
/// CPU the probe runs on: each round trip is two wake-ups and two context switches on one
/// CPU. (Unpinned, the figure doubled or halved with where the scheduler put the two threads:
/// a wake-up across CPUs costs more than on one.)
fn loopback_us_per_round_trip(budget: Duration) -> std::io::Result<f64> {
    let cpu = current_cpu();
    let ping_thread = std::thread::Builder::new()
        .name("ibench-probe-ping".into())
        .spawn(move || {
            pin_to(cpu);
            ping_pong(budget)
        })?;
    ping_thread
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the probe's ping thread panicked")))
}

/// The ping side of [`loopback_us_per_round_trip`], on its own (pinned) thread.
fn ping_pong(budget: Duration) -> std::io::Result<f64> {
    let cpu = current_cpu();
    let (mut ping, mut pong) = UnixStream::pair()?;
    let echo = std::thread::Builder::new()
        .name("ibench-probe-echo".into())
        .spawn(move || {
            pin_to(cpu);
            let mut b = [0u8; 1];
            while pong.read_exact(&mut b).is_ok() {
                if pong.write_all(&b).is_err() {
                    break;
                }
            }
        })?;
    let mut b = [7u8; 1];
    let mut failed = None;
    let (n, seconds) = timed(budget, || {
        if failed.is_none()
            && let Err(e) = ping.write_all(&b).and_then(|()| ping.read_exact(&mut b))
        {
            failed = Some(e);
        }
        1
    });
    drop(ping);
    let _ = echo.join();
    match failed {
        Some(e) => Err(e),
        None => Ok(seconds * 1e6 / count_f64(n)),
    }
}

/// µs per 4 KiB write and fsync of a file in `dir` (the file is removed afterwards).
fn fsync_us(dir: &Path, budget: Duration) -> std::io::Result<f64> {
    let path = dir.join(FSYNC_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)?;
    let block = [0x5au8; FSYNC_BYTES];
    let mut failed = None;
    let (n, seconds) = timed(budget, || {
        if failed.is_none()
            && let Err(e) = file.write_all_at(&block, 0).and_then(|()| file.sync_all())
        {
            failed = Some(e);
        }
        1
    });
    drop(file);
    let removed = fs::remove_file(&path);
    if let Some(e) = failed {
        return Err(e);
    }
    removed?;
    Ok(seconds * 1e6 / count_f64(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_chain_is_one_cycle_through_every_entry() {
        let chain = pointer_chain(1000, 42);
        let mut at = 0usize;
        let mut seen = vec![false; 1000];
        for _ in 0..1000 {
            assert!(!seen[at], "entry {at} visited twice");
            seen[at] = true;
            at = chain[at] as usize;
        }
        assert_eq!(at, 0);
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn cpu_mhz_is_the_mean_of_the_cpus_lines() {
        let text = "processor\t: 0\ncpu MHz\t\t: 2000.0\nprocessor\t: 1\ncpu MHz\t\t: 3000.5\n";
        assert_eq!(mean_cpu_mhz(text), Some(2500.25));
        assert_eq!(mean_cpu_mhz("processor\t: 0\n"), None);
    }

    #[test]
    fn a_probe_measures_every_figure_within_its_budget() {
        let dir =
            std::env::temp_dir().join(format!("ibench-host-probe-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let prober = HostProber::new(40, &fsync_dirs(None, &dir)).unwrap();
        let p = prober.run();
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        for v in [
            p.cpu_ns_per_iteration,
            p.memory_ns_per_access,
            p.loopback_us_per_round_trip,
            p.fsync_us,
        ] {
            assert!(v.is_some_and(|v| v > 0.0 && v.is_finite()), "{p:?}");
        }
        // Each task stops at the first look at the clock after its share: only a task whose
        // single unit took longer than the whole budget (a stalled fsync) goes far past it.
        assert!(p.seconds >= 0.04, "{p:?}");
        assert!(!dir.join(FSYNC_FILE).exists());
        assert_eq!(prober.record().fsync_dir, Some(dir.display().to_string()));
        assert!(HostProber::new(0, std::slice::from_ref(&dir)).is_none());
        fs::remove_dir_all(&dir).unwrap();
    }
}
