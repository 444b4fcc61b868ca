//! Processes on this host, as `/proc` shows them: the one parser of `/proc/PID/stat`, the
//! one reader of pid files, a process's command name. Used by the private servers (is it
//! still running?) and the sampler (its CPU, its tree); the one search for an executable
//! (`find_in`, `program_on_path`), for the servers' binaries and the profiler.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Fields of `/proc/PID/stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// State letter (`R`, `S`, `Z` for a zombie, ...).
    pub state: char,
    /// Parent pid.
    pub ppid: u32,
    /// User CPU of the process (all its threads, live and exited), ticks.
    pub utime: u64,
    /// System CPU of the process, ticks.
    pub stime: u64,
    /// User CPU of its waited-for (reaped) children, ticks.
    pub cutime: u64,
    /// System CPU of its waited-for children, ticks.
    pub cstime: u64,
}

impl ProcStat {
    /// utime + stime + cutime + cstime: the process's CPU and that of every descendant it
    /// has reaped.
    pub fn total_ticks(&self) -> u64 {
        self.utime + self.stime + self.cutime + self.cstime
    }
}

/// Parse the text of `/proc/PID/stat`. The command name (field 2) may hold spaces and
/// parentheses: fields are counted after its last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let after = &text[text.rfind(')')? + 1..];
    // after[0] is field 3 (state).
    let f: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3).and_then(|s| s.parse::<u64>().ok());
    Some(ProcStat {
        state: f.first()?.chars().next()?,
        ppid: u32::try_from(field(4)?).ok()?,
        utime: field(14)?,
        stime: field(15)?,
        cutime: field(16)?,
        cstime: field(17)?,
    })
}

/// Read `/proc/PID/stat`.
pub fn read_stat(pid: u32) -> Option<ProcStat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The pid on the first line of a pid file (Postgres `postmaster.pid`, MySQL's `--pid-file`).
pub fn read_pid_file(path: &Path) -> Result<u32, String> {
    let text = fs::read_to_string(path)
        .map_err(|e| format!("cannot read the pid file {} ({e})", path.display()))?;
    text.lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("the pid file {} holds no pid", path.display()))
}

/// The command name of a process (`/proc/PID/comm`), `None` when it does not exist.
pub fn name(pid: u32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// First of `names` found as an executable file in `dirs`.
pub fn find_in(dirs: &[PathBuf], names: &[&str]) -> Option<PathBuf> {
    dirs.iter()
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|path| is_executable(path))
}

/// Whether `path` is an executable regular file (following symlinks).
fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The directories of `PATH`.
pub fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

/// Whether an executable `name` is on `PATH`.
pub fn program_on_path(name: &str) -> bool {
    find_in(&path_dirs(), &[name]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_count_after_the_last_parenthesis() {
        let text = "42 (post (gres) x) S 7 42 42 0 -1 4194560 1 2 3 4 11 12 13 14 20 0 1 0";
        let st = parse_stat(text).unwrap();
        assert_eq!(st.state, 'S');
        assert_eq!(st.ppid, 7);
        assert_eq!((st.utime, st.stime, st.cutime, st.cstime), (11, 12, 13, 14));
        let own = read_stat(std::process::id()).unwrap().state;
        assert!(own.is_ascii_uppercase(), "{own}");
    }

    #[test]
    fn pid_files_give_their_first_line() {
        let dir = std::env::temp_dir().join(format!("ibench-pidfile-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let f = dir.join("x.pid");
        fs::write(&f, "1234\n/data\n").unwrap();
        assert_eq!(read_pid_file(&f), Ok(1234));
        fs::write(&f, "nope\n").unwrap();
        assert!(read_pid_file(&f).unwrap_err().contains("holds no pid"));
        assert!(
            read_pid_file(&dir.join("none"))
                .unwrap_err()
                .contains("cannot read")
        );
        fs::remove_dir_all(&dir).unwrap();
        assert!(name(std::process::id()).is_some());
    }
}
