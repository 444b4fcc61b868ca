//! Server-side efficiency: a sampler on its own thread reads the server's process tree, the
//! block device of its data, the host, and the database size once a second, off the client
//! loop's hot path. It streams `metrics.jsonl`, saves the DBMS's statistics at every step end
//! (`stats/<step>.json`) and its settings once (`server-settings.json`), and turns each step's
//! readings into the per-op metrics of spec section 5 ([`StepMetrics`]).
//!
//! Nothing here fails a run: a figure that cannot be measured is [`Metric::Na`] with the
//! reason.

pub mod build;
pub mod dbms;
pub mod host_probe;
pub mod locate;
pub mod part;
pub mod perf;
pub mod procfs;
pub mod profile;

use crate::stats::convert::{count_f64, round_to_u64};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::backend::{Conn, Driver};
use crate::results::StepRecord;
use crate::results::metrics::DbSize;
use crate::results::statistics::Statistics;
use crate::workload::steps::StepName;

pub use crate::results::metrics::{
    BYTES_PER_GB, METRICS_FILE, Metric, RunMetrics, SETTINGS_FILE, STATS_DIR, SampleLine,
    SavedFile, ServerLocation, StepMetrics, StorageLocation, Totals, read_metrics,
};
use procfs::{DiskStat, HostStat};

/// Seconds between two samples.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// Seconds between two size readings (database size and data-dir walk) in the time series.
pub const SIZE_INTERVAL: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------------
// Readings.

/// The server tree at one instant.
#[derive(Clone, Copy, Debug, Default)]
pub struct TreeReading {
    /// utime + stime + cutime + cstime summed over the tree, ticks.
    pub cpu_ticks: u64,
    /// (read_bytes, write_bytes) summed over the tree, when every process's io was readable.
    pub io: Option<(u64, u64)>,
    /// Resident memory of the tree, bytes: Σ `RssAnon` (private) + the largest `RssShmem`
    /// (shared memory such as Postgres shared buffers, counted once) + the largest `RssFile`
    /// (mapped files and libraries, shared by the processes of one server).
    pub memory: Option<u64>,
    /// Processes in the tree.
    pub processes: u32,
}

/// Cumulative counters at one instant.
#[derive(Clone, Debug)]
pub struct Reading {
    /// When.
    pub at: Instant,
    /// Host CPU and context switches.
    pub host: Result<HostStat, String>,
    /// ibench's CPU, seconds.
    pub client_cpu_seconds: f64,
    /// The server tree.
    pub server: Result<TreeReading, String>,
    /// The data's block device.
    pub disk: Result<DiskStat, String>,
}

/// What the sampler reads each second: the server's root pid and the device.
#[derive(Clone, Debug)]
pub struct Probe {
    /// Root of the server's process tree, or why there is none.
    pub pid: Result<u32, String>,
    /// The data's block device name, or why there is none.
    pub device: Result<String, String>,
    /// Host figures, or why they do not describe the server's host.
    pub host: Result<(), String>,
    /// CPU ticks per second.
    pub ticks_per_sec: f64,
}

impl Probe {
    /// What to read each second of the server `server` located, with its storage `storage`:
    /// its pid, its data's device and this host's figures, or why each is not there.
    fn of(server: &ServerLocation, storage: &StorageLocation) -> Probe {
        Probe {
            pid: server
                .pid
                .ok_or_else(|| server.na.clone().unwrap_or_default()),
            device: storage
                .device
                .as_ref()
                .map(|d| d.name.clone())
                .ok_or_else(|| storage.na.clone().unwrap_or_default()),
            host: if server.remote {
                Err(
                    "the server runs on another host: this host's figures would be the client's only"
                        .to_string(),
                )
            } else {
                Ok(())
            },
            ticks_per_sec: procfs::clock_ticks_per_sec(),
        }
    }

    /// Take one reading.
    pub fn read(&self) -> Reading {
        let at = Instant::now();
        let host = self.host.clone().and_then(|()| procfs::read_host_stat());
        let server = self.pid.clone().and_then(read_tree);
        let disk = self.device.clone().and_then(|d| procfs::read_diskstats(&d));
        Reading {
            at,
            host,
            client_cpu_seconds: procfs::process_cpu_seconds(),
            server,
            disk,
        }
    }
}

/// Read the tree rooted at `pid`: CPU, IO, memory.
pub fn read_tree(pid: u32) -> Result<TreeReading, String> {
    let tree = procfs::process_tree(pid)?;
    let mut r = TreeReading {
        processes: u32::try_from(tree.len()).unwrap_or(u32::MAX),
        ..TreeReading::default()
    };
    let mut io = Some((0u64, 0u64));
    let mut mem: Option<(u64, u64, u64)> = None;
    for (p, st) in &tree {
        r.cpu_ticks += st.total_ticks();
        match procfs::read_io(*p) {
            Ok((rb, wb)) => {
                io = io.map(|(a, b)| (a + rb, b + wb));
            }
            // A process that exited since the scan: its IO moves to its parent when reaped.
            Err(_) if *p != pid && procfs::read_stat(*p).is_none() => {}
            Err(_) => io = None,
        }
        if let Ok((anon, shmem, file)) = procfs::read_memory(*p) {
            let (a, s, f) = mem.unwrap_or((0, 0, 0));
            mem = Some((a + anon, s.max(shmem), f.max(file)));
        }
    }
    r.io = io;
    r.memory = mem.map(|(a, s, f)| a + s + f);
    Ok(r)
}

/// Deltas between two readings, with the largest memory seen in between.
pub fn totals(a: &Reading, b: &Reading, ticks_per_sec: f64, max_memory: Option<u64>) -> Totals {
    let seconds = b.at.duration_since(a.at).as_secs_f64();
    fn both<T>(x: &Result<T, String>, y: &Result<T, String>) -> Result<(), String> {
        match (x, y) {
            (Ok(_), Ok(_)) => Ok(()),
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        }
    }
    let host = |f: fn(&HostStat) -> u64, k: f64| -> Metric {
        match (&a.host, &b.host) {
            (Ok(x), Ok(y)) => Metric::Value(count_f64(f(y).saturating_sub(f(x))) * k),
            _ => Metric::Na(both(&a.host, &b.host).err().unwrap_or_default()),
        }
    };
    let disk = |f: fn(&DiskStat) -> u64| -> Metric {
        match (&a.disk, &b.disk) {
            (Ok(x), Ok(y)) => Metric::Value(count_f64(f(y).saturating_sub(f(x)))),
            _ => Metric::Na(both(&a.disk, &b.disk).err().unwrap_or_default()),
        }
    };
    let server_cpu = match (&a.server, &b.server) {
        (Ok(x), Ok(y)) => {
            Metric::Value(count_f64(y.cpu_ticks.saturating_sub(x.cpu_ticks)) / ticks_per_sec)
        }
        _ => Metric::Na(both(&a.server, &b.server).err().unwrap_or_default()),
    };
    let io = |f: fn((u64, u64)) -> u64| -> Metric {
        match (&a.server, &b.server) {
            (Ok(x), Ok(y)) => match (x.io, y.io) {
                (Some(p), Some(q)) => Metric::Value(count_f64(f(q).saturating_sub(f(p)))),
                _ => Metric::na("/proc/PID/io of the server's processes is not readable"),
            },
            _ => Metric::Na(both(&a.server, &b.server).err().unwrap_or_default()),
        }
    };
    let memory = match (&b.server, max_memory) {
        (_, Some(m)) => Metric::Value(count_f64(m)),
        (Err(e), None) => Metric::Na(e.clone()),
        (Ok(_), None) => Metric::na("the server's memory is not readable"),
    };
    Totals {
        seconds,
        server_cpu_seconds: server_cpu,
        host_cpu_seconds: host(|h| h.busy_ticks, 1.0 / ticks_per_sec),
        client_cpu_seconds: Metric::Value((b.client_cpu_seconds - a.client_cpu_seconds).max(0.0)),
        context_switches: host(|h| h.context_switches, 1.0),
        device_reads: disk(|d| d.reads),
        device_read_bytes: disk(|d| d.read_bytes),
        device_writes: disk(|d| d.writes),
        device_write_bytes: disk(|d| d.write_bytes),
        server_read_bytes: io(|(r, _)| r),
        server_write_bytes: io(|(_, w)| w),
        server_memory_max_bytes: memory,
    }
}

/// Rounded to the microsecond (CPU figures come in ticks or µs).
fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

/// One `metrics.jsonl` line from two consecutive readings.
pub fn sample_line(a: &Reading, b: &Reading, t: f64, ticks_per_sec: f64) -> SampleLine {
    let tot = totals(a, b, ticks_per_sec, None);
    let u = |m: &Metric| m.value().map(|v| round_to_u64(v.round()));
    let server = b.server.as_ref().ok();
    SampleLine {
        t: (t * 1000.0).round() / 1000.0,
        step: None,
        interval_seconds: (tot.seconds * 1000.0).round() / 1000.0,
        server_cpu_seconds: tot.server_cpu_seconds.value().map(round6),
        host_cpu_seconds: tot.host_cpu_seconds.value().map(round6),
        client_cpu_seconds: round6(tot.client_cpu_seconds.value().unwrap_or(0.0)),
        context_switches: u(&tot.context_switches),
        device_reads: u(&tot.device_reads),
        device_read_bytes: u(&tot.device_read_bytes),
        device_writes: u(&tot.device_writes),
        device_write_bytes: u(&tot.device_write_bytes),
        server_read_bytes: u(&tot.server_read_bytes),
        server_write_bytes: u(&tot.server_write_bytes),
        server_memory_bytes: server.and_then(|s| s.memory),
        server_processes: server.map(|s| s.processes),
        db_size_bytes: None,
        data_dir_bytes: None,
    }
}

// ---------------------------------------------------------------------------------------------
// The sampler thread.

/// What a step's end hands back to the runner.
#[derive(Clone, Debug)]
pub struct StepRaw {
    /// Counter deltas over the step.
    pub totals: Totals,
    /// Logical size at step end.
    pub db_size: Result<DbSize, String>,
    /// Data-dir size on disk at step end, bytes.
    pub data_dir_bytes: Result<u64, String>,
    /// The statistics file, or why not.
    pub stats_file: Result<String, String>,
    /// Why the DBMS's statistics could not be read, when it has them (a failed check of the
    /// step); `None` when they were saved or the DBMS keeps none (SQLite).
    pub stats_failure: Option<String>,
    /// perf counters over the step.
    pub perf: Option<perf::PerfRecord>,
    /// The server's CPU profile over (part of) the step.
    pub profile: Option<profile::ProfileRecord>,
    /// The DBMS's statistics read before and after the step's measured part.
    pub dbms: dbms::StepStats,
}

enum Cmd {
    Begin(StepName, SyncSender<()>),
    End(StepName, u32, SyncSender<StepRaw>),
    Stop(SyncSender<(Option<Totals>, Vec<String>)>),
}

/// What the sampler measures, as a run asks for it: where the server is said to be, the
/// tables whose size it reads, and the perf counting and profile it runs.
#[derive(Clone, Debug, Default)]
pub struct Sampling {
    /// Where the run says its server is.
    pub server: locate::ServerClaim,
    /// The run's tables (the database size counts theirs).
    pub tables: Vec<String>,
    /// With `--perf`: each counter group's turn.
    pub perf_turn: Option<Duration>,
    /// With `--profile-server`: the seconds of each step the server's CPU is profiled.
    pub profile_seconds: Option<f64>,
    /// The engine of the run's tables (`--engine`): whose counters describe the run (the MySQL
    /// family).
    pub engine: Option<crate::results::target::Engine>,
}

impl Sampling {
    /// What the DBMS's counters need to know of the run.
    fn facts(&self) -> dbms::RunFacts {
        dbms::RunFacts {
            engine: self.engine,
            tables: self.tables.clone(),
        }
    }
}

/// The running sampler: a handle to its thread.
pub struct Sampler {
    tx: Option<Sender<Cmd>>,
    thread: Option<JoinHandle<()>>,
    info: RunMetrics,
    build: crate::results::target::BuildFacts,
}

impl Sampler {
    /// Locate the server, save its settings, open `metrics.jsonl` and start the thread. Never
    /// fails: what cannot be measured is recorded as n/a. Also fills the host's facts about
    /// the data dir's filesystem.
    pub fn start(
        sampling: &Sampling,
        driver: Box<dyn Driver>,
        dir: &Path,
        host: &mut crate::results::host::HostInfo,
    ) -> Sampler {
        // A side connection: opened again once when the server closed it while idle.
        let mut conn = crate::backend::side::SideConn::owning(driver)
            .map(|c| Box::new(c) as Box<dyn Conn>)
            .map_err(|e| e.to_string());
        let (server, storage) = match &mut conn {
            Ok(c) => locate::locate(&sampling.server, c.as_mut()),
            Err(e) => locate::locate_without_conn(&sampling.server, e),
        };
        if let Some(first) = storage.data_paths.first() {
            host.data_dir = Some(first.display().to_string());
            host.data_dir_mount = procfs::mount_of(first).ok();
        }
        host.data_dir_device.clone_from(&storage.device);
        let settings_file = match &mut conn {
            Ok(c) => save_settings(c.as_mut(), dir),
            Err(e) => Err(format!("no connection for the sampler: {e}")),
        };
        let probe = Probe::of(&server, &storage);
        let build = build::collect(&mut conn, &server);
        let info = RunMetrics {
            metrics_file: METRICS_FILE.to_string(),
            sample_interval_seconds: SAMPLE_INTERVAL.as_secs_f64(),
            size_interval_seconds: SIZE_INTERVAL.as_secs_f64(),
            server,
            storage: storage.clone(),
            settings_file: settings_file.into(),
            perf: sampling.perf_turn.is_some(),
            profile_seconds: sampling.profile_seconds,
            totals: None,
            errors: Vec::new(),
        };
        let out = File::create(dir.join(METRICS_FILE)).map(BufWriter::new);
        let (tx, rx) = mpsc::channel();
        let state = SamplerState {
            probe,
            conn: conn.ok(),
            facts: sampling.facts(),
            data_paths: storage.data_paths.clone(),
            storage_na: storage.na.clone(),
            dir: dir.to_path_buf(),
            out: out.map_err(|e| e.to_string()),
            errors: Vec::new(),
            perf: sampling.perf_turn,
            profile_seconds: sampling.profile_seconds,
            steps_begun: 0,
        };
        let thread = std::thread::Builder::new()
            .name("ibench-sampler".into())
            .spawn(move || state.run(&rx))
            .ok();
        Sampler {
            tx: thread.as_ref().map(|_| tx),
            thread,
            info,
            build,
        }
    }

    /// What the sampler knows so far (for run.json).
    pub fn info(&self) -> RunMetrics {
        self.info.clone()
    }

    /// How the server was built (for run.json's `build`).
    pub fn build(&self) -> crate::results::target::BuildFacts {
        self.build.clone()
    }

    /// Mark the start of a step's measured part: takes a reading before returning. Its wait
    /// ends when the run is interrupted (the sampler may be waiting on a frozen server; its
    /// own wait ends at the stall limit).
    pub fn begin_step(&self, step: StepName) {
        if let Some(tx) = &self.tx {
            let (rtx, rrx) = mpsc::sync_channel(1);
            if tx.send(Cmd::Begin(step, rtx)).is_ok() {
                let _ = reply_of(&rrx);
            }
        }
    }

    /// Mark the end of a step's measured part: a reading, then the sizes and the DBMS's
    /// statistics. `None` when the sampler thread is gone, or the run was interrupted while
    /// it waited.
    pub fn end_step(&self, step: StepName, ordinal: u32) -> Option<StepRaw> {
        let tx = self.tx.as_ref()?;
        let (rtx, rrx) = mpsc::sync_channel(1);
        tx.send(Cmd::End(step, ordinal, rtx)).ok()?;
        reply_of(&rrx)
    }

    /// Stop the thread and return the run's metrics with their totals.
    pub fn finish(mut self) -> RunMetrics {
        if let Some(tx) = self.tx.take() {
            let (rtx, rrx) = mpsc::sync_channel(1);
            if tx.send(Cmd::Stop(rtx)).is_ok()
                && let Ok((totals, errors)) = rrx.recv()
            {
                self.info.totals = totals;
                self.info.errors = errors;
            }
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.info.clone()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // Dropping the sender ends the thread's loop.
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The sampler thread's reply, or `None` once the thread is gone or the run was interrupted.
fn reply_of<T>(rx: &Receiver<T>) -> Option<T> {
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(v) => return Some(v),
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) if crate::backend::deadline::waits_abandoned() => {
                return None;
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

fn save_settings(conn: &mut dyn Conn, dir: &Path) -> Result<String, String> {
    let settings = conn
        .server_settings()
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "the backend has no settings to save".to_string())?;
    write_json(&dir.join(SETTINGS_FILE), &settings)?;
    Ok(SETTINGS_FILE.to_string())
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), String> {
    crate::results::write_json_atomic(path, value).map_err(|e| format!("{e:#}"))
}

/// What the sampler thread holds: what it reads each second, its connection to the database,
/// where its files go, and the errors it met.
struct SamplerState {
    probe: Probe,
    conn: Option<Box<dyn Conn>>,
    /// The run's engine and tables (the database size counts the tables').
    facts: dbms::RunFacts,
    data_paths: Vec<PathBuf>,
    storage_na: Option<String>,
    dir: PathBuf,
    out: Result<BufWriter<File>, String>,
    errors: Vec<String>,
    /// With `--perf`: each counter group's turn.
    perf: Option<Duration>,
    profile_seconds: Option<f64>,
    /// Steps begun so far (which group a step's counting starts with).
    steps_begun: u32,
}

/// State of the step being measured.
struct Current {
    step: StepName,
    start: Reading,
    /// The DBMS's statistics just before the measured part.
    stats_before: Result<Statistics, String>,
    max_memory: Option<u64>,
    perf: Option<perf::PerfRun>,
    profile: Option<profile::ProfileRun>,
}

impl SamplerState {
    fn note(&mut self, e: String) {
        if self.errors.len() < 20 && !self.errors.contains(&e) {
            self.errors.push(e);
        }
    }

    fn db_size(&mut self) -> Result<DbSize, String> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| "the sampler has no connection to the database".to_string())?;
        conn.database_size_bytes(&self.facts.tables)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the backend cannot tell the database size".to_string())
    }

    fn dir_size(&self) -> Result<u64, String> {
        if let Some(na) = &self.storage_na
            && self.data_paths.is_empty()
        {
            return Err(na.clone());
        }
        procfs::disk_usage_bytes(&self.data_paths)
    }

    /// One sample interval: the per-second line, and the sizes every few seconds.
    fn tick(
        &mut self,
        last: &Reading,
        now: &Reading,
        t0: Instant,
        step: Option<String>,
        next_size: &mut Instant,
    ) {
        let mut line = sample_line(
            last,
            now,
            t0.elapsed().as_secs_f64(),
            self.probe.ticks_per_sec,
        );
        if let Err(e) = &now.server {
            self.note(format!("server processes: {e}"));
        }
        line.step = step;
        if Instant::now() >= *next_size {
            *next_size = Instant::now() + SIZE_INTERVAL;
            match self.db_size() {
                Ok(s) => line.db_size_bytes = Some(s.total_bytes),
                Err(e) => self.note(format!("database size: {e}")),
            }
            match self.dir_size() {
                Ok(b) => line.data_dir_bytes = Some(b),
                Err(e) => self.note(format!("data dir size: {e}")),
            }
        }
        self.write_line(&line);
    }

    /// A step begins: the DBMS's statistics, the profile when asked for (once `perf record`
    /// is attached), then its first reading (so the host's window leaves the statistics query
    /// and perf's start out), and `perf stat` when asked for.
    fn begin(&mut self, step: StepName) -> Current {
        let stats_before = self.read_stats().map_err(|(e, _)| e);
        let profile = self
            .profile_seconds
            .map(|seconds| profile::ProfileRun::start(&self.probe.pid, &self.dir, &step, seconds));
        let start = self.probe.read();
        let max_memory = start.server.as_ref().ok().and_then(|s| s.memory);
        self.steps_begun += 1;
        let first = perf::first_group(self.steps_begun);
        let perf = self
            .perf
            .map(|turn| perf::PerfRun::start(&self.probe.pid, &self.dir, &step, first, turn));
        Current {
            step,
            start,
            stats_before,
            max_memory,
            perf,
            profile,
        }
    }

    /// A step ends: its totals, sizes, saved statistics and perf counters.
    fn end(&mut self, mut c: Current, step: StepName, ordinal: u32) -> StepRaw {
        let end = self.probe.read();
        let perf = c.perf.take().map(perf::PerfRun::finish);
        let profile = c.profile.take().map(profile::ProfileRun::finish);
        let end_memory = end.server.as_ref().ok().and_then(|s| s.memory);
        let max_memory = match (c.max_memory, end_memory) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let (stats_file, stats_failure, stats_after) = self.save_stats(step, ordinal);
        StepRaw {
            totals: totals(&c.start, &end, self.probe.ticks_per_sec, max_memory),
            db_size: self.db_size(),
            data_dir_bytes: self.dir_size(),
            stats_file,
            stats_failure,
            perf,
            profile,
            dbms: dbms::StepStats {
                before: c.stats_before,
                after: stats_after,
                facts: self.facts.clone(),
            },
        }
    }

    fn run(mut self, rx: &Receiver<Cmd>) {
        let t0 = Instant::now();
        let mut last = self.probe.read();
        let first = last.clone();
        let mut run_max_memory: Option<u64> = None;
        let mut current: Option<Current> = None;
        let mut next = t0 + SAMPLE_INTERVAL;
        let mut next_size = t0;
        loop {
            let wait = next.saturating_duration_since(Instant::now());
            let cmd = match rx.recv_timeout(wait) {
                Ok(cmd) => Some(cmd),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            match cmd {
                None => {
                    next += SAMPLE_INTERVAL;
                    // After a stall, do not burst to catch up.
                    if next < Instant::now() {
                        next = Instant::now() + SAMPLE_INTERVAL;
                    }
                    let now = self.probe.read();
                    if let Ok(s) = &now.server
                        && let Some(m) = s.memory
                    {
                        run_max_memory = Some(run_max_memory.unwrap_or(0).max(m));
                        if let Some(c) = current.as_mut() {
                            c.max_memory = Some(c.max_memory.unwrap_or(0).max(m));
                        }
                    }
                    let step = current.as_ref().map(|c| c.step.to_string());
                    self.tick(&last, &now, t0, step, &mut next_size);
                    last = now;
                }
                Some(Cmd::Begin(step, reply)) => {
                    current = Some(self.begin(step));
                    let _ = reply.send(());
                }
                Some(Cmd::End(step, ordinal, reply)) => {
                    let Some(c) = current.take() else {
                        continue;
                    };
                    let _ = reply.send(self.end(c, step, ordinal));
                }
                Some(Cmd::Stop(reply)) => {
                    let end = self.probe.read();
                    let line = sample_line(
                        &last,
                        &end,
                        t0.elapsed().as_secs_f64(),
                        self.probe.ticks_per_sec,
                    );
                    self.write_line(&line);
                    let t = totals(&first, &end, self.probe.ticks_per_sec, run_max_memory);
                    let _ = reply.send((Some(t), self.errors.clone()));
                    return;
                }
            }
        }
    }

    fn write_line(&mut self, line: &SampleLine) {
        use std::os::unix::fs::MetadataExt;
        // Deleted under the run (its directory removed): made again, saying what was lost.
        if let Ok(out) = &self.out
            && out.get_ref().metadata().is_ok_and(|m| m.nlink() == 0)
        {
            let _ = fs::create_dir_all(&self.dir);
            self.out = File::create(self.dir.join(METRICS_FILE))
                .map(BufWriter::new)
                .map_err(|e| e.to_string());
            self.note(format!(
                "{METRICS_FILE} was deleted during the run and made again at {:.0} s: the \
                 samples before are lost",
                line.t
            ));
        }
        let result = match &mut self.out {
            Ok(out) => serde_json::to_writer(&mut *out, line)
                .map_err(|e| e.to_string())
                .and_then(|()| out.write_all(b"\n").map_err(|e| e.to_string()))
                .and_then(|()| out.flush().map_err(|e| e.to_string())),
            Err(e) => Err(e.clone()),
        };
        if let Err(e) = result {
            self.note(format!("cannot write {METRICS_FILE}: {e}"));
        }
    }

    /// The DBMS's statistics now, or why not: the reason, and whether it is a failure (the
    /// DBMS has statistics but they could not be read) rather than their absence.
    fn read_stats(&mut self) -> Result<Statistics, (String, bool)> {
        let conn = self.conn.as_mut().ok_or((
            "the sampler has no connection to the database".to_string(),
            false,
        ))?;
        match conn.server_statistics() {
            Ok(Some(stats)) => Ok(stats),
            Ok(None) => Err((
                "the DBMS keeps no server statistics (SQLite)".to_string(),
                false,
            )),
            Err(e) => Err((e.to_string(), true)),
        }
    }

    /// Save the DBMS's statistics of the step's end: the file's path (or why there is none),
    /// when the DBMS has statistics but they could not all be read, the failure, and the
    /// statistics themselves.
    fn save_stats(
        &mut self,
        step: StepName,
        ordinal: u32,
    ) -> (
        Result<String, String>,
        Option<String>,
        Result<Statistics, String>,
    ) {
        let stats = match self.read_stats() {
            Ok(stats) => stats,
            Err((e, failed)) => return (Err(e.clone()), failed.then(|| e.clone()), Err(e)),
        };
        let failure = stats.failures();
        let saved = self.write_stats(step, ordinal, &stats);
        let failure = match (&saved, failure) {
            (Err(e), _) => Some(e.clone()),
            (Ok(_), failure) => failure,
        };
        (saved, failure, Ok(stats))
    }

    fn write_stats(
        &self,
        step: StepName,
        ordinal: u32,
        stats: &Statistics,
    ) -> Result<String, String> {
        let stats_dir = self.dir.join(STATS_DIR);
        fs::create_dir_all(&stats_dir)
            .map_err(|e| format!("cannot create {}: {e}", stats_dir.display()))?;
        let mut name = format!("{step}.json");
        if stats_dir.join(&name).exists() {
            name = format!("{step}-{ordinal}.json");
        }
        write_json(&stats_dir.join(&name), stats)?;
        Ok(format!("{STATS_DIR}/{name}"))
    }
}

// ---------------------------------------------------------------------------------------------
// Per-step metrics.

/// The step's op: its name, count, the op kind whose latency is `maxop`.
fn step_op(record: &StepRecord) -> (&'static str, u64, Option<&'static str>) {
    use crate::stats::OpKind;
    let kind = record.main_op();
    let op = record.ops.get(kind.name());
    match kind {
        OpKind::CreateIndexes => ("indexed row", op.map_or(0, |o| o.rows), Some(kind.name())),
        OpKind::RangeQuery | OpKind::PointQuery => {
            ("query", op.map_or(0, |o| o.ops), Some(kind.name()))
        }
        OpKind::Micro => ("operation", op.map_or(0, |o| o.ops), Some(kind.name())),
        OpKind::Insert | OpKind::Delete => {
            ("inserted row", op.map_or(0, |o| o.rows), Some(kind.name()))
        }
    }
}

impl StepRaw {
    /// The readings of a step whose sampler was gone: every figure says so.
    fn unavailable(seconds: f64) -> StepRaw {
        let na = Metric::na("the sampler thread is not running");
        StepRaw {
            totals: Totals {
                seconds,
                server_cpu_seconds: na.clone(),
                host_cpu_seconds: na.clone(),
                client_cpu_seconds: na.clone(),
                context_switches: na.clone(),
                device_reads: na.clone(),
                device_read_bytes: na.clone(),
                device_writes: na.clone(),
                device_write_bytes: na.clone(),
                server_read_bytes: na.clone(),
                server_write_bytes: na.clone(),
                server_memory_max_bytes: na,
            },
            db_size: Err("the sampler thread is not running".into()),
            data_dir_bytes: Err("the sampler thread is not running".into()),
            stats_file: Err("the sampler thread is not running".into()),
            stats_failure: None,
            perf: None,
            profile: None,
            dbms: dbms::StepStats {
                before: Err("the sampler thread is not running".into()),
                after: Err("the sampler thread is not running".into()),
                facts: dbms::RunFacts::default(),
            },
        }
    }
}

/// The spec's per-op metrics of a finished step from the sampler's readings. `raw` is `None`
/// when the sampler was gone; every figure then says so.
pub fn step_metrics(record: &StepRecord, raw: Option<StepRaw>) -> StepMetrics {
    let (op, ops, kind) = step_op(record);
    let inserted_rows = record
        .ops
        .get(crate::stats::OpKind::Insert.name())
        .map_or(0, |o| o.rows);
    let raw = raw.unwrap_or_else(|| StepRaw::unavailable(record.seconds));
    let t = &raw.totals;
    let ops_f = count_f64(ops);
    let no_ops = format!("no {op}s in the step");
    let no_rows = "no rows inserted in this step";
    let per_op = |m: &Metric, k: f64| m.per(ops_f, &no_ops).scale(k);
    let per_ins = |m: &Metric, k: f64| m.per(count_f64(inserted_rows), no_rows).scale(k);
    let ccpu = Metric::Value(record.client_cpu_seconds);
    let maxop = kind
        .and_then(|k| record.ops.get(k))
        .filter(|o| o.ops > 0)
        .map_or_else(
            || Metric::na(no_ops.clone()),
            |o| Metric::Value(count_f64(o.latency_us.max_us) / 1e6),
        );
    let opt = |v: Option<f64>, why: &str| v.map_or_else(|| Metric::na(why), Metric::Value);
    StepMetrics {
        op: op.to_string(),
        ops,
        inserted_rows,
        cpupq: per_op(&t.server_cpu_seconds, 1e6),
        ccpupq: per_op(&ccpu, 1e6),
        hcpupq: per_op(&t.host_cpu_seconds, 1e6),
        rpq: per_op(&t.device_reads, 1.0),
        rkbpq: per_op(&t.device_read_bytes, 1.0 / 1024.0),
        wpi: per_ins(&t.device_writes, 1.0),
        wkbpi: per_ins(&t.device_write_bytes, 1.0 / 1024.0),
        csps: t
            .context_switches
            .per(t.seconds, "the step lasted no measurable time"),
        cspq: per_op(&t.context_switches, 1.0),
        dbgb1: Metric::from(
            &raw.db_size
                .as_ref()
                .map(|s| count_f64(s.total_bytes) / BYTES_PER_GB)
                .map_err(Clone::clone),
        ),
        dbgb2: Metric::from(
            &raw.data_dir_bytes
                .as_ref()
                .map(|b| count_f64(*b) / BYTES_PER_GB)
                .map_err(Clone::clone),
        ),
        rss: t.server_memory_max_bytes.scale(1.0 / BYTES_PER_GB),
        maxop,
        p50: opt(
            record.rate_p50,
            "the step lasted under a second, or has no per-second rate",
        ),
        p1low: opt(
            record.rate_p1low,
            "the step lasted under a second, or has no per-second rate",
        ),
        totals: raw.totals.clone(),
        db_size: raw.db_size.ok(),
        stats_file: raw.stats_file.into(),
        // Counted per group by the runner (`PerfRecord::count_ops`); without groups, over
        // the whole step.
        perf: raw.perf.map(|p| {
            if p.groups.is_empty() {
                p.per_op(ops)
            } else {
                p
            }
        }),
        profile: raw.profile,
        dbms: raw.dbms.figures(op, ops, inserted_rows),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_serialises_as_value_or_na() {
        assert_eq!(
            serde_json::to_string(&Metric::Value(1.5)).unwrap(),
            r#"{"value":1.5}"#
        );
        assert_eq!(
            serde_json::to_string(&Metric::na("remote")).unwrap(),
            r#"{"na":"remote"}"#
        );
        assert_eq!(Metric::Value(3.0).per(0.0, "none"), Metric::na("none"));
        assert_eq!(
            Metric::Value(3.0).per(2.0, "none").scale(2.0),
            Metric::Value(3.0)
        );
    }

    #[test]
    fn own_process_reads_as_a_tree() {
        let probe = Probe {
            pid: Ok(std::process::id()),
            device: Err("none".into()),
            host: Ok(()),
            ticks_per_sec: procfs::clock_ticks_per_sec(),
        };
        let a = probe.read();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = probe.read();
        let t = totals(&a, &b, probe.ticks_per_sec, None);
        assert!(t.server_cpu_seconds.value().is_some());
        assert!(t.host_cpu_seconds.value().is_some());
        assert_eq!(t.device_reads, Metric::na("none"));
        let line = sample_line(&a, &b, 1.0, probe.ticks_per_sec);
        assert!(line.server_processes.unwrap_or(0) >= 1);
        let json = serde_json::to_string(&line).unwrap();
        assert!(!json.contains("device_reads"), "{json}");
    }
}
