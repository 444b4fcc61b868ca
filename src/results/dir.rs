//! A results directory's one writer and what its files' failures say: the lock a run (or a
//! matrix) takes on its directory before it writes anything, the liveness of a run whose
//! `run.json` still says `running`, and the fix a failed write names.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::json_file::write_json_atomic;
pub use super::json_file::{write_error, write_fix};
use super::{RunRecord, Status};

/// The lock file inside a results directory (a run's, or a matrix's `--out`): held by the
/// ibench writing there (an open file description lock, released when it exits however it
/// exits), and holding its pid and host.
pub const LOCK_FILE: &str = ".ibench.lock";

/// The lock on a results directory, held until dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// Who holds a directory's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// The directory has no lock file (nothing wrote there, or an ibench before locks).
    NoLockFile,
    /// Nobody holds it: the writer ended (or died).
    Free,
    /// An ibench holds it; what its lock file says (`pid N on HOST`).
    Held(String),
}

fn ofd_lock(file: &File, command: libc::c_int, kind: libc::c_int) -> io::Result<libc::flock> {
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = i16::try_from(kind).unwrap_or(0);
    lock.l_whence = i16::try_from(libc::SEEK_SET).unwrap_or(0);
    // SAFETY: the fd is open for the call's length; `lock` is a valid flock on the stack.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), command, &raw mut lock) };
    if r == 0 {
        Ok(lock)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn lock_text(path: &Path) -> String {
    let mut text = String::new();
    let _ = File::open(path).and_then(|f| f.take(200).read_to_string(&mut text));
    let text = text.trim();
    if text.is_empty() {
        "another ibench".into()
    } else {
        format!("ibench {text}")
    }
}

impl DirLock {
    /// Take the lock of `dir` (made if missing) for this process, or say who holds it:
    /// `DIR is in use by ibench pid N on HOST; …`. `flag` names the option that chose `dir`.
    pub fn take(dir: &Path, flag: &str) -> anyhow::Result<DirLock> {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the results directory {}: {e}; {}",
                dir.display(),
                write_fix(&e, flag)
            )
        })?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot write into the results directory {} ({}: {e}); {}",
                    dir.display(),
                    path.display(),
                    write_fix(&e, flag)
                )
            })?;
        if let Err(e) = ofd_lock(&file, libc::F_OFD_SETLK, libc::F_WRLCK) {
            if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) {
                anyhow::bail!(
                    "{} is in use by {}: one directory takes one writer; wait for that run to \
                     end, or choose another {flag}",
                    dir.display(),
                    lock_text(&path)
                );
            }
            // A filesystem without these locks (some network ones): the run goes on, unguarded.
            crate::say!(
                "warning: cannot lock {} ({e}): a second run into {} would not be refused",
                path.display(),
                dir.display()
            );
        }
        let host = super::host::HostInfo::read().hostname;
        let _ = file.set_len(0);
        let _ = writeln!(file, "pid {} on {host}", std::process::id());
        Ok(DirLock { _file: file })
    }
}

/// A new run's results directory `dir`, made and locked (the lock held as long as the
/// [`DirLock`] lives), refused when it holds a run already or another ibench writes there;
/// the directory as its canonical path. `flag` names the option that chose `dir`.
pub fn take_for_run(dir: &Path, flag: &str) -> anyhow::Result<(PathBuf, DirLock)> {
    let lock = DirLock::take(dir, flag)?;
    if dir.join(super::RUN_FILE).exists() {
        anyhow::bail!(
            "{} already holds a run (run.json); choose another {flag}",
            dir.display()
        );
    }
    let probe = dir.join(".ibench-write-test");
    std::fs::write(&probe, b"").map_err(|e| {
        anyhow::anyhow!(
            "cannot write into the results directory {}: {e}; {}",
            dir.display(),
            write_fix(&e, flag)
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok((
        dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
        lock,
    ))
}

/// Who holds `dir`'s lock, asked without taking it.
pub fn holder(dir: &Path) -> Holder {
    let path = dir.join(LOCK_FILE);
    let Ok(file) = File::open(&path) else {
        return Holder::NoLockFile;
    };
    match ofd_lock(&file, libc::F_OFD_GETLK, libc::F_RDLCK) {
        Ok(l) if l.l_type == i16::try_from(libc::F_UNLCK).unwrap_or(2) => Holder::Free,
        Ok(_) => Holder::Held(lock_text(&path)),
        // A filesystem without these locks: nothing to tell.
        Err(_) => Holder::NoLockFile,
    }
}

/// Why a run whose `run.json` in `dir` says `running` did not finish, when its writer is
/// gone (killed, crashed, a power cut): no ibench holds the directory's lock, or, for a run
/// without a lock file, its process on this host is gone. `None` for a run that ended, or one
/// still going.
pub fn unfinished(dir: &Path, record: &RunRecord) -> Option<String> {
    if record.status != Status::Running {
        return None;
    }
    let who = match record.pid {
        Some(pid) => format!("ibench pid {pid} on {}", record.host.hostname),
        None => "the ibench that wrote it".to_string(),
    };
    let gone = match holder(dir) {
        Holder::Held(_) => false,
        Holder::Free => true,
        Holder::NoLockFile => match record.pid {
            Some(pid) if record.host.hostname == super::host::HostInfo::read().hostname => {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .map_or(true, |comm| comm.trim() != "ibench")
            }
            Some(_) => false,
            None => true,
        },
    };
    gone.then(|| {
        let kept = match record.steps.last() {
            Some(s) => format!(
                "its {} step(s) up to {} are kept",
                record.steps.len(),
                s.name
            ),
            None => "no step had finished".to_string(),
        };
        format!(
            "ended without finishing: {who} is gone (killed, crashed or the machine stopped) \
             while run.json said running; {kept}"
        )
    })
}

/// Where a run's record goes when its results directory cannot take it any more (full,
/// read-only, deleted and not made again): a file in the temp dir, named by the pid.
pub fn rescue_path() -> PathBuf {
    std::env::temp_dir().join(format!("ibench-run-{}.json", std::process::id()))
}

/// Write the run's record into `path` (its results directory's `run.json`). A directory
/// deleted under the run is made again first, with a warning (on the terminal and in the
/// record's `warnings`) of what that lost.
pub fn write_run(path: &Path, record: &mut RunRecord) -> anyhow::Result<()> {
    let gone = || path.parent().filter(|d| !d.exists());
    if gone().is_none() {
        match write_json_atomic(path, record) {
            // Deleted while it was written: made again below.
            Err(_) if gone().is_some() => {}
            other => return other,
        }
    }
    let Some(dir) = gone() else {
        return write_json_atomic(path, record);
    };
    let warning = format!(
        "the results directory {} was deleted during the run and is made again: the \
         timeline, metrics, settings and statistics files written before are lost; run.json \
         keeps every step's figures",
        dir.display()
    );
    crate::say!("warning: {warning}");
    record.warnings.push(warning);
    std::fs::create_dir_all(dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot make the deleted results directory {} again: {e}; {}",
            dir.display(),
            write_fix(&e, "--out")
        )
    })?;
    write_json_atomic(path, record)
}

/// The run's final record into `path`, or, when the results directory cannot take it, into
/// [`rescue_path`]: the error then says where the record went.
pub fn write_final(path: &Path, record: &mut RunRecord) -> anyhow::Result<()> {
    let Err(e) = write_run(path, record) else {
        return Ok(());
    };
    let rescue = rescue_path();
    match write_json_atomic(&rescue, record) {
        Ok(()) => Err(anyhow::anyhow!(
            "{e:#}; the run's record ({} steps, status {}) is saved in {} instead",
            record.steps.len(),
            format!("{:?}", record.status).to_lowercase(),
            rescue.display()
        )),
        Err(_) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_naming_the_first_and_a_dead_one_frees_the_dir() {
        let dir = std::env::temp_dir().join(format!("ibench-lock-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(holder(&dir), Holder::NoLockFile);
        let first = DirLock::take(&dir, "--out").unwrap();
        let e = DirLock::take(&dir, "--out").unwrap_err().to_string();
        assert!(
            e.contains(&format!("is in use by ibench pid {}", std::process::id())),
            "{e}"
        );
        assert!(matches!(holder(&dir), Holder::Held(_)));
        drop(first);
        assert_eq!(holder(&dir), Holder::Free);
        let _again = DirLock::take(&dir, "--out").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_names_its_fix() {
        let full = io::Error::from_raw_os_error(libc::ENOSPC);
        let e = write_error(Path::new("/r/run.json"), &full).to_string();
        assert!(
            e.starts_with("cannot write /r/run.json: No space left on device"),
            "{e}"
        );
        assert!(
            e.contains("free space on it, or choose another --out"),
            "{e}"
        );
        let ro = io::Error::from_raw_os_error(libc::EROFS);
        assert!(write_fix(&ro, "--out").contains("read-only"));
    }
}
