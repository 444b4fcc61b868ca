//! `--profile-server`: where the server's CPU went in each step.
//!
//! `perf record` samples the server's process tree (every process that exists when the step's
//! measured part begins: the postmaster or mariadbd and, for Postgres, the backends of the
//! step's connections) on the software `cpu-clock` event, which works on VMs without hardware
//! counters, with call graphs, for the first `--profile-seconds` of the step (or all of it
//! when shorter). At the step's end the samples are folded into stacks (`inferno`'s perf
//! collapser), written as `profile/<step>.folded`, drawn as a flamegraph `profile/<step>.svg`,
//! and the functions with the largest share of samples go into run.json. perf's own
//! `perf.data` is deleted once folded (the folded stacks hold everything the reports use).

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use inferno::collapse::Collapse;

pub use crate::results::metrics::{FunctionShare, ProfileRecord};
use crate::stats::count_f64;
use crate::workload::steps::StepName;

/// Sub-directory of the results dir holding the folded stacks and flamegraphs.
pub const PROFILE_DIR: &str = "profile";

/// Samples per second and process (a prime, so sampling does not lock step with periodic work).
pub const FREQUENCY_HZ: u32 = 499;

/// How long `perf record` may take to write its file and exit after SIGINT.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// How long the step waits for `perf record` to attach (its output file begun) before it
/// starts all the same.
const ATTACH_LIMIT: Duration = Duration::from_secs(5);

/// How many functions (by share of samples) go into run.json.
pub const TOP_FUNCTIONS: usize = 10;

/// A `perf record` running for one step.
pub struct ProfileRun {
    child: Result<Child, String>,
    data: PathBuf,
    dir: PathBuf,
    step: String,
    started: Instant,
    seconds: f64,
}

impl ProfileRun {
    /// Attach `perf record` to the server's current process tree for at most `seconds`, and
    /// return once it has (see [`attach`]), so that the profile covers the step from its
    /// start.
    pub fn start(pid: &Result<u32, String>, dir: &Path, step: &StepName, seconds: f64) -> Self {
        let data = dir.join(PROFILE_DIR).join(format!("{step}.perf.data"));
        let child = std::fs::create_dir_all(dir.join(PROFILE_DIR))
            .map_err(|e| e.to_string())
            .and_then(|()| attach(pid, &data, seconds));
        ProfileRun {
            child,
            data,
            dir: dir.to_path_buf(),
            step: step.to_string(),
            started: Instant::now(),
            seconds,
        }
    }

    /// Stop perf if it still runs, fold its samples, draw the flamegraph, and summarise.
    pub fn finish(self) -> ProfileRecord {
        let mut child = match self.child {
            Ok(c) => c,
            Err(e) => return ProfileRecord::failed(e),
        };
        let recorded = self.started.elapsed().as_secs_f64().min(self.seconds);
        if let Err(e) = super::perf::interrupt_and_wait(&mut child, STOP_LIMIT, "perf record") {
            let _ = std::fs::remove_file(&self.data);
            return ProfileRecord::failed(e);
        }
        let record = fold_and_draw(&self.data, &self.dir, &self.step, recorded);
        let _ = std::fs::remove_file(&self.data);
        record.unwrap_or_else(ProfileRecord::failed)
    }
}

/// How many times `perf record` is started on a fresh list of the server's processes when
/// it exits before it attached.
const ATTACH_TRIES: usize = 3;

/// `perf record` on the server's process tree as it is now, attached (see
/// [`wait_attached`]). perf refuses a list holding a process that ended before it attached
/// (exit 244, no file): PostgreSQL 10's backends of the step before were still ending as
/// l.x began, and every l.x profile of two runs was lost ("perf script failed"). So the list
/// is made again and perf started again, [`ATTACH_TRIES`] times in all.
fn attach(pid: &Result<u32, String>, data: &Path, seconds: f64) -> Result<Child, String> {
    let mut exited = None;
    for _ in 0..ATTACH_TRIES {
        let pids = super::perf::tree_pid_list(pid)?;
        let mut child = Command::new("perf")
            .args(["record", "-e", "cpu-clock", "-F", &FREQUENCY_HZ.to_string()])
            .args(["-g", "--quiet", "-o"])
            .arg(data)
            .args(["-p", &pids])
            .args(["--", "sleep", &format!("{seconds:.3}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run perf (install linux-perf): {e}"))?;
        match wait_attached(&mut child, data, ATTACH_LIMIT) {
            None => return Ok(child),
            Some(status) => exited = Some(status),
        }
    }
    Err(format!(
        "perf record exited before it attached to the server's processes, {ATTACH_TRIES} times (last: {})",
        exited.map_or_else(|| "unknown".to_string(), |s| s.to_string())
    ))
}

/// Wait until `perf record` has attached: it opens its events on the processes before it
/// writes anything to `data`, so a begun file says it samples. Measured here: about 0.11 s
/// after the spawn. A step shorter than that used to end before perf was listening, and its
/// SIGINT killed perf with no file to read ("perf script failed"), at random. `None` once
/// attached or at `limit` (perf still running: `finish` reports what it left); perf's exit
/// status when it exited before its file was begun.
fn wait_attached(
    child: &mut Child,
    data: &Path,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if std::fs::metadata(data).is_ok_and(|m| m.len() > 0) {
            return None;
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// `perf script` of the data, folded into `<step>.folded`, drawn into `<step>.svg`.
fn fold_and_draw(
    data: &Path,
    dir: &Path,
    step: &str,
    seconds: f64,
) -> Result<ProfileRecord, String> {
    let script = Command::new("perf")
        .args(["script", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run perf script: {e}"))?;
    if !script.status.success() {
        return Err(format!("perf script failed ({})", script.status));
    }
    // One event header per sample (`comm pid time: period cpu-clock:`), then its stack lines.
    let samples = script
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| l.first().is_some_and(|c| !c.is_ascii_whitespace()))
        .count();
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::default()
        .collapse(BufReader::new(script.stdout.as_slice()), &mut folded)
        .map_err(|e| format!("cannot fold perf's stacks: {e}"))?;
    let folded = String::from_utf8_lossy(&folded).into_owned();
    let folded_rel = format!("{PROFILE_DIR}/{step}.folded");
    std::fs::write(dir.join(&folded_rel), &folded)
        .map_err(|e| format!("cannot write {folded_rel}: {e}"))?;
    let stacks = parse_folded(&folded);
    if samples == 0 || stacks.is_empty() {
        return Err(format!(
            "perf recorded no samples of the server in {seconds:.1} s (was it idle?)"
        ));
    }
    let svg_rel = format!("{PROFILE_DIR}/{step}.svg");
    let svg = crate::flame::flamegraph_svg(&folded, &format!("server CPU, {step}"), false)?;
    std::fs::write(dir.join(&svg_rel), svg).map_err(|e| format!("cannot write {svg_rel}: {e}"))?;
    Ok(ProfileRecord {
        folded_file: Some(folded_rel),
        svg_file: Some(svg_rel),
        seconds,
        frequency_hz: FREQUENCY_HZ,
        samples: crate::stats::usize_u64(samples),
        top_functions: top_functions(&stacks, TOP_FUNCTIONS),
        error: None,
    })
}

/// Folded lines (`a;b;c 12`) as (frames, weight): for `cpu-clock` the weight is nanoseconds
/// of CPU (each sample counts its period).
pub fn parse_folded(folded: &str) -> Vec<(Vec<&str>, u64)> {
    folded
        .lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((stack.split(';').collect(), n.trim().parse().ok()?))
        })
        .collect()
}

/// The functions with the most samples of their own (the leaf frame), with their share of all
/// samples and of the samples they appear in at all (their callees included).
pub fn top_functions(stacks: &[(Vec<&str>, u64)], n: usize) -> Vec<FunctionShare> {
    let total: u64 = stacks.iter().map(|(_, c)| c).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut own: BTreeMap<&str, u64> = BTreeMap::new();
    let mut inclusive: BTreeMap<&str, u64> = BTreeMap::new();
    for (frames, count) in stacks {
        if let Some(leaf) = frames.last() {
            *own.entry(leaf).or_default() += count;
        }
        let mut seen: Vec<&str> = Vec::new();
        for f in frames {
            if !seen.contains(f) {
                seen.push(f);
                *inclusive.entry(f).or_default() += count;
            }
        }
    }
    let mut ranked: Vec<(&str, u64)> = own.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let share = |c: u64| count_f64(c) / count_f64(total);
    ranked
        .into_iter()
        .take(n)
        .map(|(f, c)| FunctionShare {
            function: f.to_string(),
            self_share: share(c),
            total_share: share(inclusive.get(f).copied().unwrap_or(c)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step that ends at once still gets a readable profile: `start` returns once perf is
    /// attached, so the step's end does not kill perf before it wrote its file.
    #[test]
    fn a_profile_stopped_at_once_is_read_not_lost() {
        let mut busy = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("sh runs");
        let dir = std::env::temp_dir().join(format!("ibench-profile-{}", std::process::id()));
        let step: StepName = "l.i1".parse().expect("a step");
        let run = ProfileRun::start(&Ok(busy.id()), &dir, &step, 5.0);
        let record = run.finish();
        let _ = busy.kill();
        let _ = busy.wait();
        let _ = std::fs::remove_dir_all(&dir);
        let error = record.error.unwrap_or_default();
        assert!(
            error.is_empty() || error.starts_with("perf recorded no samples"),
            "{error}"
        );
    }

    /// A process of the server's tree that ends as perf starts (a backend of the step before)
    /// does not lose the profile: perf is started again on the processes still there.
    #[test]
    fn a_process_that_ends_as_perf_starts_does_not_lose_the_profile() {
        let mut busy = Command::new("sh")
            .args(["-c", "sleep 0.02 & while :; do :; done"])
            .spawn()
            .expect("sh runs");
        let dir = std::env::temp_dir().join(format!("ibench-profile-ends-{}", std::process::id()));
        let step: StepName = "l.x".parse().expect("a step");
        let run = ProfileRun::start(&Ok(busy.id()), &dir, &step, 5.0);
        std::thread::sleep(Duration::from_millis(300));
        let record = run.finish();
        let _ = busy.kill();
        let _ = busy.wait();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(record.error, None, "{record:?}");
        assert!(record.samples > 0, "{record:?}");
    }
}
