//! Reading runs for a report: every problem becomes one clear line, and what can be read is
//! rendered.

use std::path::{Path, PathBuf};

use crate::results::{
    self, OLDEST_SCHEMA_VERSION, RUN_FILE, RunRecord, SCHEMA_VERSION, TimelineLine,
};

/// A run read from its results directory.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    /// The results directory.
    pub dir: PathBuf,
    /// The label shown in reports (the run's label, made unique among the runs compared).
    pub label: String,
    /// The record.
    pub record: RunRecord,
    /// The per-second timeline (empty when it could not be read).
    pub timeline: Vec<TimelineLine>,
    /// The sampler's time series (empty when the run has none).
    pub samples: Vec<crate::results::metrics::SampleLine>,
    /// The server's settings as the run recorded them (`server-settings.json`); `None` when
    /// the run has none.
    pub settings: Option<crate::results::settings::ServerSettings>,
}

/// The end of each path, as few components as tell them all apart (the whole path when
/// nothing shorter does).
pub fn distinct_tails(dirs: &[&Path]) -> Vec<String> {
    let tail = |d: &Path, k: usize| -> String {
        let parts: Vec<String> = d
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        parts[parts.len().saturating_sub(k)..].join("/")
    };
    let longest = dirs
        .iter()
        .map(|d| d.components().count())
        .max()
        .unwrap_or(1);
    (1..=longest.max(1))
        .map(|k| dirs.iter().map(|d| tail(d, k)).collect::<Vec<_>>())
        .find(|tails| {
            let mut sorted = tails.clone();
            sorted.sort_unstable();
            sorted.dedup();
            sorted.len() == tails.len()
        })
        .unwrap_or_else(|| dirs.iter().map(|d| d.display().to_string()).collect())
}

/// Why a directory could not be read as a run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No run.json in it: what it is instead, and what to give.
    #[error("skipping {}: {}", .0.display(), not_a_run_text(.0))]
    NotARun(PathBuf),
    /// run.json of another schema version.
    #[error(
        "skipping {dir}: its run.json has schema version {found}, this ibench reads version {SCHEMA_VERSION}; {hint}"
    )]
    Version {
        /// The directory.
        dir: PathBuf,
        /// The version found.
        found: u64,
        /// What to do.
        hint: &'static str,
    },
    /// Not valid JSON or not the shape of a run.
    #[error(
        "skipping {dir}: run.json is unreadable ({detail}); was the run cut off while writing, or the file edited?"
    )]
    Corrupt {
        /// The directory.
        dir: PathBuf,
        /// The parser's message.
        detail: String,
    },
}

/// Why `dir` is not a run, with what to give instead: it does not exist, it is a file, it is
/// a matrix's output (`ibench matrix report`), or it holds runs (give them).
fn not_a_run_text(dir: &Path) -> String {
    use crate::results::{MATRIX_PLAN_FILE as PLAN_FILE, MATRIX_STATE_FILE as STATE_FILE};
    if !dir.exists() {
        return "no such directory; give a results directory (`ibench run` ends with `results: DIR`)".into();
    }
    if !dir.is_dir() {
        return "a file, not a results directory; give the directory that holds run.json".into();
    }
    if dir.join(PLAN_FILE).exists() || dir.join(STATE_FILE).exists() {
        return format!(
            "the output of `ibench matrix run`, not a run; render it with `ibench matrix report {}`",
            dir.display()
        );
    }
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(RUN_FILE).is_file())
        .collect();
    runs.sort();
    match runs.first() {
        Some(first) => format!(
            "not a run, but it holds {} (e.g. {}); give them, e.g. `ibench report {}/*`",
            if runs.len() == 1 {
                "1 run".to_string()
            } else {
                format!("{} runs", runs.len())
            },
            first.display(),
            dir.display()
        ),
        None => "not a run (no run.json in it); give the directory `ibench run` printed as `results: DIR`".into(),
    }
}

/// Read one results directory.
pub fn load_run(dir: &Path) -> Result<(RunRecord, Vec<TimelineLine>, Option<String>), LoadError> {
    let path = dir.join(RUN_FILE);
    let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
            LoadError::NotARun(dir.to_path_buf())
        }
        _ => LoadError::Corrupt {
            dir: dir.to_path_buf(),
            detail: format!("cannot read it: {e}"),
        },
    })?;
    let text = String::from_utf8(bytes).map_err(|e| LoadError::Corrupt {
        dir: dir.to_path_buf(),
        detail: format!(
            "not UTF-8 text (byte {} is invalid): not a run.json ibench wrote",
            e.utf8_error().valid_up_to()
        ),
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| LoadError::Corrupt {
        dir: dir.to_path_buf(),
        detail: e.to_string(),
    })?;
    match value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(v) if (u64::from(OLDEST_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION)).contains(&v) => {}
        Some(v) => {
            return Err(LoadError::Version {
                dir: dir.to_path_buf(),
                found: v,
                hint: if v > u64::from(SCHEMA_VERSION) {
                    "upgrade ibench to read it"
                } else {
                    "it was written by an older ibench that this one cannot read"
                },
            });
        }
        None => {
            return Err(LoadError::Corrupt {
                dir: dir.to_path_buf(),
                detail: "no schema_version".into(),
            });
        }
    }
    let mut record: RunRecord = serde_json::from_value(value).map_err(|e| LoadError::Corrupt {
        dir: dir.to_path_buf(),
        detail: e.to_string(),
    })?;
    // A run.json left `running` by a process that is gone is a run that ended unfinished.
    if let Some(why) = results::dir::unfinished(dir, &record) {
        record.status = crate::results::Status::Failed;
        record.error = Some(why);
    }
    let (timeline, problem) = match results::read_timeline(dir) {
        Ok(t) => (t, None),
        Err(e) => (
            Vec::new(),
            Some(format!("{}: no charts for this run ({e:#})", dir.display())),
        ),
    };
    Ok((record, timeline, problem))
}

/// Read every directory; returns the runs that could be read and one line per problem.
pub fn load_runs(dirs: &[PathBuf]) -> (Vec<LoadedRun>, Vec<String>) {
    let mut runs: Vec<LoadedRun> = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        match load_run(dir) {
            Ok((record, timeline, problem)) => {
                problems.extend(problem);
                let label = clean_label(&record.label);
                let samples = if dir.join(crate::results::metrics::METRICS_FILE).exists() {
                    match crate::results::metrics::read_metrics(dir) {
                        Ok(s) => s,
                        Err(e) => {
                            problems.push(format!("{}: no size charts ({e:#})", dir.display()));
                            Vec::new()
                        }
                    }
                } else {
                    Vec::new()
                };
                let settings = match crate::results::settings::ServerSettings::read(dir) {
                    Ok(s) => s,
                    Err(e) => {
                        problems.push(format!(
                            "{}: its server settings are not compared ({e:#})",
                            dir.display()
                        ));
                        None
                    }
                };
                runs.push(LoadedRun {
                    dir: dir.clone(),
                    label,
                    record,
                    timeline,
                    samples,
                    settings,
                });
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    // Labels must tell the runs apart: add to repeated ones the end of their directory's
    // path, as many components as it takes (`pg10.r1/run`, when every run dir is `run`).
    // Labels are compared as shown (cut to MAX_LABEL_CHARS), and the place is kept whole: a
    // long label cut after its place would read the same again.
    let shown: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
    for i in 0..runs.len() {
        let same: Vec<usize> = (0..runs.len()).filter(|&j| shown[j] == shown[i]).collect();
        if same.len() > 1 {
            let dirs: Vec<&Path> = same.iter().map(|&j| runs[j].dir.as_path()).collect();
            let at = same.iter().position(|&j| j == i).unwrap_or(0);
            let name = distinct_tails(&dirs).swap_remove(at);
            runs[i].label = label_with_place(&runs[i].record.label, &name);
        }
    }
    (runs, problems)
}

/// `LABEL (PLACE)`: the label cut so that the place, which tells the run apart, stays whole.
fn label_with_place(label: &str, place: &str) -> String {
    let place = format!(" ({})", clean_label(place));
    let room = MAX_LABEL_CHARS
        .saturating_sub(place.chars().count())
        .max(MIN_LABEL_CHARS);
    format!("{}{place}", cut_label(label, room))
}

/// The least of a label kept before a place that tells repeated labels apart.
const MIN_LABEL_CHARS: usize = 16;

/// Longest label a report shows, in characters; longer ones end in `…`.
pub const MAX_LABEL_CHARS: usize = 80;

/// A run's label as reports show it: control characters (a terminal's escape sequences, line
/// breaks) written out as `\u{1b}` and the like, and cut to [`MAX_LABEL_CHARS`] characters.
/// A label comes from whoever wrote the run.json, so nothing in it may steer the terminal.
pub fn clean_label(label: &str) -> String {
    cut_label(label, MAX_LABEL_CHARS)
}

/// [`clean_label`] cut to `max_chars` characters.
fn cut_label(label: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for c in label.chars() {
        let piece: String = if c.is_control() {
            c.escape_unicode().to_string()
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if chars + n > max_chars {
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        chars += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_labels_take_as_much_of_the_path_as_tells_the_runs_apart() {
        let p = |s: &'static str| Path::new(s);
        assert_eq!(
            distinct_tails(&[p("res/pg15"), p("res/pg17")]),
            ["pg15", "pg17"]
        );
        // A matrix's cells all hold a `run` directory.
        assert_eq!(
            distinct_tails(&[p("out/cells/pg10.r1/run"), p("out/cells/pg10.r2/run")]),
            ["pg10.r1/run", "pg10.r2/run"]
        );
        assert_eq!(distinct_tails(&[p("a/x"), p("x")]), ["a/x", "x"]);
    }

    /// Two repeats of one long label stay apart once cut: the place is kept whole and the
    /// label gives way (a 27-run report keyed two such runs alike before).
    #[test]
    fn a_long_repeated_label_keeps_its_place_whole() {
        let label = "PostgreSQL 15.18 (async replica) wal_compression-lz4 and a few more words";
        let a = label_with_place(label, "pg-async.wal_compression-lz4.small.r1/run");
        let b = label_with_place(label, "pg-async.wal_compression-lz4.small.r2/run");
        assert_ne!(a, b);
        assert!(
            a.ends_with("… (pg-async.wal_compression-lz4.small.r1/run)"),
            "{a}"
        );
        assert!(a.chars().count() <= MAX_LABEL_CHARS + 1, "{a}");
        assert_eq!(label_with_place("pg", "r1"), "pg (r1)");
    }
}
