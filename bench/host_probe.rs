//! The host probe's own noise: run it `ROUNDS` times (default 20) back to back on this host and
//! print each figure's median, range and largest distance from the median, the figures the
//! report's host-speed thresholds are chosen from (docs/performance.md, "The host probe").
//!
//! Run with `cargo bench --bench host_probe [-- ROUNDS [BUDGET_MS [DIR]]]` on an idle host;
//! DIR is where the fsync task writes (default: the temp dir). Two series: the probes back to
//! back, then each after writing 64 MiB of other memory (as a step between two probes evicts
//! the probe's buffer from the caches).

use std::path::PathBuf;

use ibench::results::options::DEFAULT_HOST_PROBE_MS;
use ibench::results::probe::{ProbeFigure, median};
use ibench::sampler::host_probe::{HostProber, fsync_dirs};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let rounds: usize = args.first().map_or(Ok(20), |a| a.parse())?;
    let budget_ms: u32 = args
        .get(1)
        .map_or(Ok(DEFAULT_HOST_PROBE_MS), |a| a.parse())?;
    let dir = args.get(2).map_or_else(std::env::temp_dir, PathBuf::from);
    let prober = HostProber::new(budget_ms, &fsync_dirs(None, &dir))
        .ok_or_else(|| anyhow::anyhow!("a budget of 0 ms turns the probe off"))?;
    println!(
        "{rounds} probes of {budget_ms} ms, fsync in {}",
        dir.display()
    );
    let probes: Vec<_> = (0..rounds).map(|_| prober.run()).collect();
    summary("back to back", &probes);
    let mut other = vec![0u8; 64 << 20];
    let probes: Vec<_> = (0..rounds)
        .map(|i| {
            other.fill(u8::try_from(i % 200).unwrap_or(0));
            std::hint::black_box(&other);
            prober.run()
        })
        .collect();
    summary("after 64 MiB of other writes", &probes);
    Ok(())
}

fn summary(series: &str, probes: &[ibench::results::probe::HostProbe]) {
    println!("== {series}");
    for (i, p) in probes.iter().enumerate() {
        let f = |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("{v:.3}"));
        println!(
            "round {i:2}: cpu {} ns/iter, memory {} ns/access, loopback {} us, fsync {} us, {:.3} s{}",
            f(p.cpu_ns_per_iteration),
            f(p.memory_ns_per_access),
            f(p.loopback_us_per_round_trip),
            f(p.fsync_us),
            p.seconds,
            if p.errors.is_empty() {
                String::new()
            } else {
                format!(" {:?}", p.errors)
            }
        );
    }
    println!("figure: median, min, max, largest |value / median - 1|, 90th percentile of it");
    for figure in ProbeFigure::ALL {
        let v: Vec<f64> = probes.iter().filter_map(|p| figure.of(p)).collect();
        let Some(med) = median(v.clone()) else {
            println!("{}: n/a", figure.short());
            continue;
        };
        let mut dev: Vec<f64> = v.iter().map(|x| (x / med - 1.0).abs()).collect();
        dev.sort_by(f64::total_cmp);
        let p90 = dev[(dev.len() * 9 / 10).min(dev.len() - 1)];
        println!(
            "{}: {med:.3}, {:.3}, {:.3}, {:.1}%, {:.1}%",
            figure.short(),
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            dev.last().copied().unwrap_or(0.0) * 100.0,
            p90 * 100.0
        );
    }
}
