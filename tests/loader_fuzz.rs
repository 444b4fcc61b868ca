//! Fuzzing the result loader and the renderers with generated inputs: random bytes, every
//! cut of a real run.json, byte flips, and JSON trees with values swapped for hostile ones
//! (wrong types, huge and negative numbers, deep nesting, long strings), in run.json,
//! timeline.jsonl and metrics.jsonl. Whatever the input: no panic, every problem one line,
//! and every format renders what could be read.
//!
//! The generator is seeded, so a failure names the case that reproduces it.

mod common;

use ibench::stats::convert::{u64_usize, usize_u64};
use std::path::{Path, PathBuf};

use ibench::report::{Format, load::load_runs, render_dirs};

/// xorshift64*: small, seeded, good enough to pick mutations.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        u64_usize(self.next() % usize_u64(n.max(1)))
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next().to_le_bytes()[0]).collect()
    }
    /// A value that a field should not hold.
    fn hostile_value(&mut self, depth: usize) -> serde_json::Value {
        use serde_json::{Value, json};
        match self.below(14) {
            0 => Value::Null,
            1 => json!(-1),
            2 => json!(u64::MAX),
            3 => json!(1e308),
            4 => json!(-1e308),
            5 => json!(0),
            6 => json!(""),
            7 => json!("NaN"),
            8 => {
                let n = self.below(100_000);
                Value::String("x".repeat(n))
            }
            9 => json!(true),
            10 => json!([]),
            11 => json!({}),
            12 if depth < 64 => json!([self.hostile_value(depth + 1)]),
            12 => json!(0.5),
            _ => {
                let n = self.below(40);
                Value::String(String::from_utf8_lossy(&self.bytes(n)).into_owned())
            }
        }
    }
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Swap one randomly chosen value anywhere in the tree for a hostile one.
fn mutate(v: &mut serde_json::Value, g: &mut Gen) {
    use serde_json::Value;
    let mut node = v;
    loop {
        let len = match &*node {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if len == 0 || g.below(4) == 0 {
            *node = g.hostile_value(0);
            return;
        }
        let i = g.below(len);
        node = match node {
            Value::Object(m) => m.values_mut().nth(i).unwrap(),
            Value::Array(a) => &mut a[i],
            _ => unreachable!(),
        };
    }
}

/// Load and render `dir` in every format: must not panic; every problem is one line.
fn check(dir: &Path, case: &str) {
    let result = std::panic::catch_unwind(|| {
        let (_, problems) = load_runs(&[dir.to_path_buf()]);
        for p in &problems {
            assert!(!p.contains('\n'), "{case}: a problem of two lines: {p}");
        }
        for format in [Format::Text, Format::Markdown, Format::Html, Format::Json] {
            match render_dirs(&[dir.to_path_buf()], None, format, false) {
                Ok(r) => {
                    for p in &r.problems {
                        assert!(!p.contains('\n'), "{case}: {p}");
                    }
                }
                Err(e) => {
                    let line = format!("{e:#}");
                    assert!(!line.contains('\n'), "{case}: error of two lines: {line}");
                }
            }
        }
    });
    assert!(result.is_ok(), "{case}: the loader or a renderer panicked");
}

/// A fresh copy of the fixture run `name`.
fn copy_of(name: &str, tag: &str) -> PathBuf {
    let dir = common::fresh_dir(tag);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(fixture(name)).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    dir
}

#[test]
fn random_bytes_and_cut_files_never_panic() {
    let dir = copy_of("postgres", "fuzz-bytes");
    let run = std::fs::read(fixture("postgres").join("run.json")).unwrap();
    let mut g = Gen(0x1BE7C4);
    for case in 0..40 {
        let n = g.below(4096);
        std::fs::write(dir.join("run.json"), g.bytes(n)).unwrap();
        check(&dir, &format!("random run.json #{case} ({n} bytes)"));
    }
    // Cuts of a real run.json (a run that died mid-write), 60 of them spread over the file.
    let step = (run.len() / 60).max(1);
    for cut in (0..run.len()).step_by(step) {
        std::fs::write(dir.join("run.json"), &run[..cut]).unwrap();
        check(&dir, &format!("run.json cut at byte {cut}"));
    }
    // Flipped bytes.
    for case in 0..40 {
        let mut bytes = run.clone();
        for _ in 0..=g.below(8) {
            let i = g.below(bytes.len());
            bytes[i] = g.next().to_le_bytes()[0];
        }
        std::fs::write(dir.join("run.json"), &bytes).unwrap();
        check(&dir, &format!("run.json with flipped bytes #{case}"));
    }
}

#[test]
fn hostile_values_in_run_json_never_panic() {
    let dir = copy_of("postgres-commit-delay", "fuzz-run");
    let text = std::fs::read_to_string(fixture("postgres-commit-delay").join("run.json")).unwrap();
    let original: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut g = Gen(0xF00D);
    for case in 0..150 {
        let mut run = original.clone();
        for _ in 0..=g.below(3) {
            mutate(&mut run, &mut g);
        }
        std::fs::write(dir.join("run.json"), serde_json::to_vec(&run).unwrap()).unwrap();
        check(&dir, &format!("hostile run.json #{case} (seed 0xF00D)"));
    }
}

#[test]
fn hostile_timeline_and_metrics_lines_never_panic() {
    let dir = copy_of("postgres", "fuzz-lines");
    let mut g = Gen(0xBEEF);
    for file in ["timeline.jsonl", "metrics.jsonl"] {
        let text = std::fs::read_to_string(fixture("postgres").join(file)).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert!(!lines.is_empty(), "{file} fixture is empty");
        for case in 0..60 {
            let mut out = String::new();
            for l in &lines {
                let mut l = l.clone();
                if g.below(3) == 0 {
                    mutate(&mut l, &mut g);
                }
                out.push_str(&serde_json::to_string(&l).unwrap());
                out.push('\n');
            }
            // Now and then, garbage or a cut last line.
            match g.below(4) {
                0 => out.push_str(&String::from_utf8_lossy(&g.bytes(50))),
                1 => {
                    let mut cut = g.below(out.len());
                    while !out.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    out.truncate(cut);
                }
                _ => {}
            }
            std::fs::write(dir.join(file), out).unwrap();
            check(&dir, &format!("hostile {file} #{case}"));
        }
        // Restore it for the next file's cases.
        std::fs::copy(fixture("postgres").join(file), dir.join(file)).unwrap();
    }
}
