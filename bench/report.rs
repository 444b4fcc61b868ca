//! How long `ibench report` takes to compare 50 runs, per output format.
//!
//! Makes 50 results directories by copying the recorded fixtures (tests/fixtures/) under new
//! labels, then times reading + comparing + rendering them (what `ibench report DIR…` does,
//! minus printing) 5 times per format and prints the median and the slowest.
//! Run: `cargo bench --bench report`. Target: under 1 s for 50 runs.

use ibench::stats::convert::{count_f64, usize_f64};
use std::path::PathBuf;
use std::time::Instant;

use ibench::report::{Format, render_dirs};

fn main() -> anyhow::Result<()> {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let names = ["sqlite-base", "postgres", "postgres-commit-delay"];
    let root = std::env::temp_dir().join(format!("ibench-bench-report-{}", std::process::id()));
    let mut dirs = Vec::new();
    for i in 0..50 {
        let src = fixtures.join(names[i % names.len()]);
        let dst = root.join(format!("run{i:02}"));
        std::fs::create_dir_all(&dst)?;
        let run = std::fs::read_to_string(src.join("run.json"))?;
        let mut v: serde_json::Value = serde_json::from_str(&run)?;
        v["label"] = serde_json::Value::from(format!("run {i:02}"));
        std::fs::write(dst.join("run.json"), v.to_string())?;
        std::fs::copy(src.join("timeline.jsonl"), dst.join("timeline.jsonl"))?;
        dirs.push(dst);
    }
    let bytes: u64 = dirs
        .iter()
        .flat_map(|d| ["run.json", "timeline.jsonl"].map(|f| d.join(f)))
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "50 runs, {:.1} MB of run.json + timeline.jsonl",
        count_f64(bytes) / 1e6
    );
    println!(
        "{:<10} {:>10} {:>10} {:>12}",
        "format", "median", "max", "output"
    );
    for (name, format) in [
        ("text", Format::Text),
        ("markdown", Format::Markdown),
        ("html", Format::Html),
        ("json", Format::Json),
    ] {
        let mut times = Vec::new();
        let mut size = 0;
        for _ in 0..5 {
            let t0 = Instant::now();
            let r = render_dirs(&dirs, None, format, false)?;
            times.push(t0.elapsed().as_secs_f64());
            size = r.text.len();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{name:<10} {:>8.0}ms {:>8.0}ms {:>10.1}kB",
            times[2] * 1e3,
            times[4] * 1e3,
            usize_f64(size) / 1e3
        );
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}
