//! The run table: the short key that names each run in the report's tables, and each run's
//! row (label, DBMS, build, TLS, status, results dir). `layout::throughput` writes a table
//! whose rows are runs as a document table named by those keys.

use std::collections::BTreeSet;
use std::path::Path;

use super::load::LoadedRun;
use super::model::RunRow;

/// Longest short key; longer ones fall back to `r1..rN`.
pub const MAX_KEY_CHARS: usize = 24;

/// The shortest names that tell the runs apart: the words of each name that not every name
/// shares (`PostgreSQL 17.10 sync0` and `PostgreSQL 17.10 sync1` become `sync0` and
/// `sync1`). When that leaves a name empty, two alike, or one longer than
/// [`MAX_KEY_CHARS`], the runs are `r1` to `rN`.
pub fn short_keys(names: &[String]) -> Vec<String> {
    let numbered = || (1..=names.len()).map(|i| format!("r{i}")).collect();
    if names.len() == 1 {
        let n = super::load::clean_label(&names[0]);
        return if n.chars().count() <= MAX_KEY_CHARS && !n.is_empty() {
            vec![n]
        } else {
            numbered()
        };
    }
    let words: Vec<Vec<&str>> = names
        .iter()
        .map(|n| n.split_whitespace().collect())
        .collect();
    let shared = |w: &str| words.iter().all(|ws| ws.contains(&w));
    let keys: Vec<String> = words
        .iter()
        .map(|ws| {
            let own: Vec<&str> = ws.iter().copied().filter(|w| !shared(w)).collect();
            super::load::clean_label(&own.join(" "))
        })
        .collect();
    let distinct: BTreeSet<&String> = keys.iter().collect();
    if distinct.len() < keys.len()
        || keys
            .iter()
            .any(|k| k.is_empty() || k.chars().count() > MAX_KEY_CHARS)
    {
        numbered()
    } else {
        keys
    }
}

/// The keys of loaded runs: their [`short_keys`], or, where their labels give none (the runs
/// would be `r1` to `rN`) but the ends of their results directories' paths tell them apart
/// within [`MAX_KEY_CHARS`] (`pg15`, `maria`), those.
pub fn keys_of_runs(labels: &[String], runs: &[LoadedRun]) -> Vec<String> {
    let paths: Vec<&Path> = runs.iter().map(|r| r.dir.as_path()).collect();
    keys_or_dir_names(labels, &paths)
}

/// [`keys_of_runs`] of runs labelled `labels` in the directories `dirs`.
fn keys_or_dir_names(labels: &[String], dirs: &[&Path]) -> Vec<String> {
    let keys = short_keys(labels);
    let numbered = keys
        .iter()
        .enumerate()
        .all(|(i, k)| *k == format!("r{}", i + 1));
    if !numbered {
        return keys;
    }
    let names: Vec<String> = super::load::distinct_tails(dirs)
        .iter()
        .map(|d| super::load::clean_label(d))
        .collect();
    let distinct: BTreeSet<&String> = names.iter().collect();
    let usable = distinct.len() == names.len()
        && names
            .iter()
            .all(|d| !d.is_empty() && d != "." && d.chars().count() <= MAX_KEY_CHARS);
    if usable { names } else { keys }
}

/// The run table's rows.
pub(super) fn run_rows(runs: &[LoadedRun], keys: &[String]) -> Vec<RunRow> {
    runs.iter()
        .zip(keys)
        .map(|(r, key)| {
            let build = r.record.build.as_ref();
            RunRow {
                key: key.clone(),
                label: r.label.clone(),
                dbms: r
                    .record
                    .target
                    .as_ref()
                    .map(|t| format!("{} {}", t.dbms, t.version))
                    .unwrap_or_default(),
                build_flags: build.and_then(crate::results::target::BuildFacts::flags_summary),
                binary_bytes: build.and_then(|b| b.binary_bytes),
                tls: r
                    .record
                    .target
                    .as_ref()
                    .and_then(|t| t.tls.as_ref())
                    .map(ToString::to_string),
                status: format!("{:?}", r.record.status).to_lowercase(),
                dir: r.dir.display().to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_keys_keep_the_words_that_tell_runs_apart() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert_eq!(
            short_keys(&names(&[
                "PostgreSQL 17.10 sync0_comp0",
                "PostgreSQL 17.10 sync1_comp0"
            ])),
            ["sync0_comp0", "sync1_comp0"]
        );
        assert_eq!(
            short_keys(&names(&["pg10", "pg17 fpi0"])),
            ["pg10", "pg17 fpi0"]
        );
        // Alike, empty or too long: numbered.
        assert_eq!(short_keys(&names(&["a", "a"])), ["r1", "r2"]);
        assert_eq!(short_keys(&names(&["x y", "y x"])), ["r1", "r2"]);
        let long = "L".repeat(MAX_KEY_CHARS + 1);
        assert_eq!(short_keys(&names(&[&long, "b"])), ["r1", "r2"]);
        assert_eq!(short_keys(&names(&["SQLite base"])), ["SQLite base"]);
        assert_eq!(short_keys(&names(&[&long])), ["r1"]);
    }

    /// Runs whose labels tell them apart in no short key are named by their directories,
    /// when those are short and distinct; else they stay numbered.
    #[test]
    fn runs_without_short_keys_take_their_directories_names() {
        let long = |v: &str| format!("{}-{v}", "L".repeat(MAX_KEY_CHARS + 1));
        let labels = [long("a"), long("b")];
        fn dirs(v: &[&'static str]) -> Vec<&'static Path> {
            v.iter().map(|s| Path::new(*s)).collect()
        }
        assert_eq!(
            keys_or_dir_names(&labels, &dirs(&["results/pg15", "results/maria"])),
            ["pg15", "maria"]
        );
        assert_eq!(
            keys_or_dir_names(&labels, &dirs(&["a/run", "b/run"])),
            ["a/run", "b/run"]
        );
        // Labels that give keys keep them.
        let short = ["PostgreSQL 15 a".to_string(), "PostgreSQL 15 b".to_string()];
        assert_eq!(
            keys_or_dir_names(&short, &dirs(&["x/1", "x/2"])),
            ["a", "b"]
        );
        // The same directory twice, or a name too long: numbered.
        assert_eq!(keys_or_dir_names(&labels, &dirs(&["x", "x"])), ["r1", "r2"]);
        let deep = format!("{}/run", "d".repeat(MAX_KEY_CHARS));
        let deep2 = format!("{}/run", "e".repeat(MAX_KEY_CHARS));
        assert_eq!(
            keys_or_dir_names(&labels, &[Path::new(&deep), Path::new(&deep2)]),
            ["r1", "r2"]
        );
    }
}
