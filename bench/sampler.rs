//! The sampler's own cost: CPU time per sample, and its share of one core at one sample per
//! second (target: under 1%).
//!
//! Run with `cargo bench --bench sampler`. Each sample reads what a real run reads: the
//! process tree rooted at `IBENCH_BENCH_PID` (default pid 1, i.e. every process on the host: a
//! worst case for the tree walk, with its `/proc/PID/io` and `smaps_rollup`), `/proc/stat`,
//! the block device's `/proc/diskstats` line, and writes one `metrics.jsonl` line. Every fifth
//! sample also walks a data directory of 1,000 files (about the size of a fresh Postgres data
//! dir), as the sampler does every 5 s. The database size query is not included: it costs the
//! server, not ibench, one catalog query per 5 s.

use ibench::stats::convert::i64_f64;
use std::io::Write;
use std::time::Instant;

use ibench::sampler::{Probe, procfs, sample_line};

fn thread_cpu_seconds() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a rusage into the pointer, which points to enough space.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
    assert_eq!(rc, 0);
    // SAFETY: getrusage returned 0, so it filled the struct.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| i64_f64(t.tv_sec) + i64_f64(t.tv_usec) / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn main() -> anyhow::Result<()> {
    let pid: u32 = std::env::var("IBENCH_BENCH_PID")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let samples: u32 = std::env::var("IBENCH_BENCH_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let dir = std::env::temp_dir().join(format!("ibench-bench-sampler-{}", std::process::id()));
    let data = dir.join("data");
    for d in 0..10 {
        let sub = data.join(format!("d{d}"));
        std::fs::create_dir_all(&sub)?;
        for f in 0..100 {
            std::fs::write(sub.join(format!("f{f}")), [0u8; 100])?;
        }
    }
    let device = procfs::block_device_of(&data).map(|d| d.name);
    let probe = Probe {
        pid: Ok(pid),
        device: device.clone(),
        host: Ok(()),
        ticks_per_sec: procfs::clock_ticks_per_sec(),
    };
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(dir.join("metrics.jsonl")).unwrap());
    let tree = procfs::process_tree(pid).map(|t| t.len()).unwrap_or(0);

    let mut last = probe.read();
    let wall = Instant::now();
    let cpu0 = thread_cpu_seconds();
    let paths = vec![data.clone()];
    for i in 0..samples {
        let now = probe.read();
        let mut line = sample_line(&last, &now, f64::from(i), probe.ticks_per_sec);
        if i % 5 == 0 {
            line.data_dir_bytes = procfs::disk_usage_bytes(&paths).ok();
        }
        serde_json::to_writer(&mut out, &line)?;
        out.write_all(b"\n")?;
        out.flush()?;
        last = now;
    }
    let cpu = thread_cpu_seconds() - cpu0;
    let elapsed = wall.elapsed().as_secs_f64();
    let per_sample_us = cpu * 1e6 / f64::from(samples);
    println!(
        "sampler: {samples} samples of a {tree}-process tree (root pid {pid}), device {}",
        device.unwrap_or_else(|e| format!("n/a ({e})"))
    );
    println!(
        "  CPU per sample: {per_sample_us:.0} µs (wall {:.0} µs); at 1 sample/s: {:.3}% of one core",
        elapsed * 1e6 / f64::from(samples),
        per_sample_us / 1e6 * 100.0
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
