//! Benchmark: the schedule error of ibench's pacing.
//!
//! A paced connection (the background inserter and deleter of the query steps) asks its
//! [`Pacer`] when the next operation is due and sleeps until then with
//! [`StopSignal::sleep_until`], exactly as `src/runner/client.rs` does. This benchmark runs
//! that loop with no work per operation and records, for every operation, how late the loop
//! woke up: `actual_wake - due`. It prints p50, p99, p99.9 and the max of that schedule error
//! per rate, plus the achieved rate against the target and the whole-host CPU use while it
//! ran (from `/proc/stat`, every process: 200% means both cores of a 2-core box were busy),
//! which tells whether the machine was idle, and the CPU time the hypervisor stole.
//!
//! Target: p99 under 1 ms on an idle machine.
//!
//! Run with `cargo bench --bench pacer`. Environment:
//! - `IBENCH_PACER_SECONDS`: seconds per rate (default 5); a rate runs longer when needed to
//!   reach at least 2000 operations.
//! - `IBENCH_PACER_RATES`: comma-separated rates in operations/s (default `100,500,1000,10000`).

use ibench::stats::convert::{count_f64, round_to_usize, usize_f64};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use ibench::runner::pacer::Pacer;
use ibench::runner::stop::StopSignal;

/// Operations a rate runs for at least, whatever the duration.
const MIN_OPS: f64 = 2000.0;

/// The p99 schedule error the pacing must stay under, microseconds.
const TARGET_P99_US: f64 = 1000.0;

/// What one rate measured.
struct RateResult {
    /// Target operations per second.
    rate: f64,
    /// Planned duration, seconds.
    seconds: f64,
    /// Operations done.
    ops: u64,
    /// Operations per second achieved (ops / time from start to the last wake-up).
    achieved: f64,
    /// Schedule errors, nanoseconds, sorted ascending.
    errors_ns: Vec<u64>,
    /// Whole-host CPU use while the rate ran, % of one core (200% = both cores of this box),
    /// every process included: shows whether the machine was idle.
    host_cpu_pct: f64,
    /// CPU time stolen by the hypervisor while the rate ran, % of one core.
    steal_pct: f64,
}

impl RateResult {
    /// The `p`-th percentile (0..=100) of the schedule error, microseconds (nearest rank).
    fn pct_us(&self, p: f64) -> f64 {
        count_f64(percentile(&self.errors_ns, p)) / 1000.0
    }

    /// Share of operations that woke more than 1 ms late.
    fn share_over_1ms(&self) -> f64 {
        let late = self.errors_ns.iter().filter(|&&e| e > 1_000_000).count();
        usize_f64(late) / usize_f64(self.errors_ns.len().max(1))
    }
}

/// Nearest-rank percentile of a sorted slice; 0 when empty.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = round_to_usize(((p / 100.0) * usize_f64(sorted.len())).ceil());
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Run the paced loop at `rate` operations/s for `seconds`, the way the client loop does:
/// check the stop signal, take the next due time, sleep until it, then (instead of an
/// operation) note how late the wake-up was.
fn run_rate(rate: f64, seconds: f64) -> RateResult {
    let cpu0 = host_cpu_us();
    let t0 = Instant::now();
    let mut result = std::thread::scope(|scope| {
        // A fresh thread, like each connection of a step.
        let handle = scope.spawn(move || {
            let start = Instant::now();
            let stop = StopSignal::new(Some(start + Duration::from_secs_f64(seconds)));
            let mut pacer = Pacer::new(start, rate);
            let capacity = round_to_usize(rate * seconds * 1.1) + 16;
            let mut errors_ns: Vec<u64> = Vec::with_capacity(capacity);
            let mut last_wake = start;
            loop {
                if stop.should_stop() {
                    break;
                }
                let due = pacer.next_due();
                if !stop.sleep_until(due) {
                    break;
                }
                let woke = Instant::now();
                // sleep_until returns only at or after `due`, so this never saturates.
                let late = woke.saturating_duration_since(due);
                errors_ns.push(u64::try_from(late.as_nanos()).unwrap_or(u64::MAX));
                last_wake = woke;
            }
            let elapsed = (last_wake - start).as_secs_f64().max(1e-9);
            (errors_ns, elapsed)
        });
        let (mut errors_ns, elapsed) = handle.join().unwrap_or_default();
        errors_ns.sort_unstable();
        let ops = errors_ns.len() as u64;
        RateResult {
            rate,
            seconds,
            ops,
            // Operation i is due at i / rate, so ops - 1 intervals fit in the elapsed time.
            achieved: if ops > 1 {
                count_f64(ops - 1) / elapsed
            } else {
                0.0
            },
            errors_ns,
            host_cpu_pct: f64::NAN,
            steal_pct: f64::NAN,
        }
    });
    if let (Some(before), Some(after)) = (cpu0, host_cpu_us()) {
        let wall_us = t0.elapsed().as_secs_f64() * 1e6;
        result.host_cpu_pct = (after.0 - before.0) / wall_us * 100.0;
        result.steal_pct = (after.1 - before.1) / wall_us * 100.0;
    }
    result
}

/// Busy and stolen CPU time of the whole host so far, µs: busy = user + nice + system + irq +
/// softirq, stolen = steal (time the hypervisor ran something else while this VM wanted to
/// run), from the first line of `/proc/stat` (`USER_HZ` is 100 on Linux).
fn host_cpu_us() -> Option<(f64, f64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let v: Vec<f64> = text
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    (v.len() >= 8).then(|| ((v[0] + v[1] + v[2] + v[5] + v[6]) * 1e4, v[7] * 1e4))
}

/// `IBENCH_PACER_RATES`, or the default rates.
fn rates() -> Result<Vec<f64>> {
    let Ok(text) = std::env::var("IBENCH_PACER_RATES") else {
        return Ok(vec![100.0, 500.0, 1000.0, 10000.0]);
    };
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let r: f64 = part
            .parse()
            .with_context(|| format!("IBENCH_PACER_RATES: '{part}' is not a number"))?;
        if !(r.is_finite() && r > 0.0) {
            bail!("IBENCH_PACER_RATES: rates must be above 0, not {part}");
        }
        out.push(r);
    }
    Ok(out)
}

/// `IBENCH_PACER_SECONDS`, or 5.
fn seconds() -> Result<f64> {
    match std::env::var("IBENCH_PACER_SECONDS") {
        Ok(s) => {
            let v: f64 = s
                .trim()
                .parse()
                .with_context(|| format!("IBENCH_PACER_SECONDS: '{s}' is not a number"))?;
            if !(v.is_finite() && v > 0.0) {
                bail!("IBENCH_PACER_SECONDS must be above 0, not {s}");
            }
            Ok(v)
        }
        Err(_) => Ok(5.0),
    }
}

/// The 1-minute load average, from `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "n/a".to_string())
}

fn main() -> Result<()> {
    let rates = rates()?;
    let base_seconds = seconds()?;
    println!(
        "pacer schedule error (actual wake - due), no work per op; load average at start {}",
        load_average()
    );
    let mut results = Vec::new();
    for &rate in &rates {
        let secs = base_seconds.max(MIN_OPS / rate);
        let r = run_rate(rate, secs);
        eprintln!(
            "  rate {:>7.0}/s: {} ops in {:.1} s",
            r.rate, r.ops, r.seconds
        );
        results.push(r);
    }
    println!();
    println!(
        "{:>9} {:>7} {:>8} {:>11} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7} {:>7}",
        "target/s",
        "seconds",
        "ops",
        "achieved/s",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "max us",
        ">1ms %",
        "host %",
        "steal %"
    );
    for r in &results {
        println!(
            "{:>9.0} {:>7.1} {:>8} {:>11.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8.3} {:>7.0} {:>7.1}",
            r.rate,
            r.seconds,
            r.ops,
            r.achieved,
            r.pct_us(50.0),
            r.pct_us(99.0),
            r.pct_us(99.9),
            r.pct_us(100.0),
            r.share_over_1ms() * 100.0,
            r.host_cpu_pct,
            r.steal_pct
        );
    }
    println!();
    let worst = results
        .iter()
        .map(|r| r.pct_us(99.0))
        .fold(0.0_f64, f64::max);
    println!(
        "target: p99 schedule error < {TARGET_P99_US:.0} us: {} (worst p99 {worst:.1} us); load average at end {}",
        if worst < TARGET_P99_US {
            "met"
        } else {
            "MISSED"
        },
        load_average()
    );
    Ok(())
}
