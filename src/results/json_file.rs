//! The results' JSON files: written atomically (a temp file beside, fsync, rename) and read
//! line by line (`timeline.jsonl`, `metrics.jsonl`), and what a failed write says (the file
//! and its fix). It imports nothing of the results, so every file of them may use it.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::Context;
use serde::Serialize;

/// What fixes a failed write into the results: a full filesystem, a read-only or immutable
/// one, a directory deleted under the run. `flag` names the option that chose the place.
pub fn write_fix(e: &io::Error, flag: &str) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => {
            format!("the filesystem is full: free space on it, or choose another {flag}")
        }
        Some(libc::EROFS) => {
            format!("the filesystem is read-only: remount it read-write, or choose another {flag}")
        }
        Some(libc::EACCES | libc::EPERM) => format!(
            "ibench may not write there: make the directory writable (and not immutable: \
             chattr -i), or choose another {flag}"
        ),
        Some(libc::ENOENT) => {
            format!("the directory is gone (deleted during the run?): choose another {flag}")
        }
        _ => format!("choose another {flag}"),
    }
}

/// The error of a write of `path` that failed with `e`, naming the file and its fix.
pub fn write_error(path: &Path, e: &io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot write {}: {e}; {}",
        path.display(),
        write_fix(e, "--out")
    )
}

/// Write `value` as pretty JSON to `path` atomically: a temp file beside it, fsync, rename.
/// The JSON goes through a buffer: serde writes it in many small pieces (a run.json of a
/// long run is thousands of them), which straight to the file would be one `write` each.
/// A failure names the file and its fix (a full or read-only filesystem, a deleted
/// directory); the temp file is removed.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let written = (|| -> std::io::Result<()> {
        let f = File::create(&tmp)?;
        let mut out = BufWriter::new(f);
        serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        let f = out.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(write_error(path, &e));
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        write_error(path, &e)
    })
}

/// Read a JSON-lines file: one value per non-empty line.
pub fn read_json_lines<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("bad line in {}", path.display())))
        .collect()
}
