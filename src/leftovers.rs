//! What `ibench run` creates before its first step, removed again when the run fails before
//! it: the results directory and the SQLite file (with its `-wal`, `-shm` and `-journal`), each
//! only when the run made it. A run that measured nothing leaves nothing behind.

use std::path::{Path, PathBuf};

/// The SQLite file's companions that SQLite makes beside it.
const SQLITE_SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// What did not exist before the run, so that a run that failed before its first step can
/// remove it.
#[derive(Debug, Default)]
pub struct Leftovers {
    /// The results directory, when the run will create it.
    dir: Option<PathBuf>,
    /// The SQLite file, when the run will create it.
    sqlite: Option<PathBuf>,
}

/// The outermost directory of `dir`'s path that does not exist yet (`ibench-results` for
/// `ibench-results/20261128-121703-583` on a first run), `None` when `dir` exists.
fn first_missing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .last()
        .map(Path::to_path_buf)
}

impl Leftovers {
    /// Note which of the results directory `out_dir` and the SQLite file of `url` (when it is
    /// a `sqlite:` URL) do not exist yet.
    pub fn before(out_dir: &Path, url: &str) -> Leftovers {
        Leftovers {
            dir: first_missing(out_dir),
            sqlite: crate::backend::sqlite::path_of_url(url).filter(|p| !p.exists()),
        }
    }

    /// Whether the run that failed left a record of a step in `out_dir` (then everything is
    /// kept: the failed run.json says what it measured and why it stopped).
    fn measured(out_dir: &Path) -> bool {
        crate::results::read_run(out_dir).is_ok_and(|r| !r.steps.is_empty())
    }

    /// The run failed: remove what it created when it measured no step. Returns whether
    /// anything of the run is left to report on.
    pub fn failed(&self, out_dir: &Path) -> bool {
        if Leftovers::measured(out_dir) {
            return true;
        }
        if let Some(file) = &self.sqlite {
            let _ = std::fs::remove_file(file);
            for side in SQLITE_SIDE_FILES {
                let mut name = file.clone().into_os_string();
                name.push(side);
                let _ = std::fs::remove_file(PathBuf::from(name));
            }
        }
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_measured_nothing_removes_only_what_it_made() {
        let base = std::env::temp_dir().join(format!("ibench-leftovers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("base dir");
        let kept = base.join("kept.db");
        std::fs::write(&kept, b"x").expect("a file there before");
        let out = base.join("out").join("run");
        let fresh = base.join("fresh.db");
        let made = Leftovers::before(&out, &format!("sqlite:{}", fresh.display()));
        std::fs::create_dir_all(&out).expect("out dir");
        let old = Leftovers::before(&out, &format!("sqlite:{}", kept.display()));
        std::fs::write(&fresh, b"x").expect("the run's file");
        std::fs::write(base.join("fresh.db-wal"), b"x").expect("its WAL");
        assert!(!old.failed(&out));
        assert!(kept.exists() && out.exists());
        assert!(!made.failed(&out));
        assert!(!fresh.exists() && !base.join("fresh.db-wal").exists());
        assert!(
            !base.join("out").exists(),
            "the parent the run made goes too"
        );
        assert!(kept.exists());
        let _ = std::fs::remove_dir_all(&base);
    }
}
