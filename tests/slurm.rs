//! The Slurm recipe of docs/matrix.md on a real one-node Slurm (Debian's `slurm-wlm`, which
//! `./scripts/test.sh` installs): munged, slurmctld and slurmd are started by this test as
//! root with a private slurm.conf and stopped after. A two-task array runs a tiny SQLite
//! matrix in two shards; task 1 is then rerun alone (`--array=1`, the natural rerun of a failed
//! task) and must run shard 1 again, into its own dir. The union covers every cell once.
//! Skipped, with a line saying why, when not root or Slurm is not installed.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::fresh_dir;

/// The daemons this test started; killed when it ends, however it ends.
struct Daemons(Vec<Child>);

impl Drop for Daemons {
    fn drop(&mut self) {
        // SIGTERM first: slurmctld and slurmd then stop their helpers (slurmscriptd,
        // slurmstepd) too; SIGKILL after 10 s.
        for c in self.0.iter_mut().rev() {
            if let Ok(pid) = i32::try_from(c.id()) {
                // SAFETY: kill has no memory-safety preconditions; the pid is our child.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
            let start = Instant::now();
            while matches!(c.try_wait(), Ok(None)) && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn have(cmd: &str) -> bool {
    ["/usr/sbin", "/usr/bin"]
        .iter()
        .any(|d| Path::new(d).join(cmd).exists())
}

fn hostname() -> String {
    let out = Command::new("hostname").arg("-s").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn slurm_conf(dir: &Path) -> PathBuf {
    let host = hostname();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let d = dir.display();
    let conf = format!(
        "ClusterName=ibenchtest\nSlurmctldHost={host}\nAuthType=auth/munge\n\
         SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
         ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n\
         ReturnToService=2\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
         JobCompType=jobcomp/filetxt\nJobCompLoc={d}/jobcomp\n\
         NodeName={host} CPUs={cpus} State=UNKNOWN\n\
         PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"
    );
    std::fs::create_dir_all(dir.join("state")).unwrap();
    std::fs::create_dir_all(dir.join("spool")).unwrap();
    let path = dir.join("slurm.conf");
    std::fs::write(&path, conf).unwrap();
    path
}

/// Start munged (unless one answers), slurmctld and slurmd; wait until the node is idle.
fn start_slurm(dir: &Path, conf: &Path) -> Daemons {
    let mut daemons = Daemons(Vec::new());
    let munge_ok = || {
        Command::new("sh")
            .args(["-c", "munge -n | unmunge"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !munge_ok() {
        std::fs::create_dir_all("/run/munge").unwrap();
        Command::new("chown")
            .args(["munge:", "/run/munge"])
            .status()
            .unwrap();
        let log = std::fs::File::create(dir.join("munged.log")).unwrap();
        let id = |flag: &str| -> u32 {
            let out = Command::new("id").args([flag, "munge"]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        // munged itself as the munge user (not under runuser), so that killing it stops it.
        daemons.0.push(
            Command::new("munged")
                .arg("-F")
                .uid(id("-u"))
                .gid(id("-g"))
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
        wait_for("munged", Duration::from_secs(20), munge_ok);
    }
    for daemon in ["slurmctld", "slurmd"] {
        let log = std::fs::File::create(dir.join(format!("{daemon}.out"))).unwrap();
        daemons.0.push(
            Command::new(daemon)
                .arg("-D")
                .env("SLURM_CONF", conf)
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
    }
    wait_for("the Slurm node to be idle", Duration::from_secs(60), || {
        Command::new("sinfo")
            .args(["-h", "-o", "%t"])
            .env("SLURM_CONF", conf)
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
    });
    daemons
}

fn wait_for(what: &str, limit: Duration, ok: impl Fn() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Submit the recipe's array and wait until the queue is empty.
fn submit_and_wait(conf: &Path, work: &Path, array: &str) {
    let command = format!(
        "exec {} matrix run m.toml --shards 2 --quiet --out shard-$SLURM_ARRAY_TASK_ID",
        env!("CARGO_BIN_EXE_ibench")
    );
    let out = Command::new("sbatch")
        .args([
            "--parsable",
            "--array",
            array,
            "--exclusive",
            "--mem=0",
            "--time=10",
        ])
        .args(["--output", "slurm-%A_%a.out", "--wrap", &command])
        .current_dir(work)
        .env("SLURM_CONF", conf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sbatch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job = String::from_utf8_lossy(&out.stdout).trim().to_string();
    wait_for(
        &format!("job {job} to end"),
        Duration::from_secs(240),
        || {
            Command::new("squeue")
                .args(["-h", "-j", &job])
                .env("SLURM_CONF", conf)
                .output()
                .is_ok_and(|o| o.status.success() && o.stdout.iter().all(u8::is_ascii_whitespace))
        },
    );
}

fn cells_of(shard_dir: &Path) -> Vec<String> {
    let mut cells: Vec<String> = std::fs::read_dir(shard_dir.join("cells"))
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    cells.sort();
    cells
}

#[test]
fn a_slurm_array_runs_every_cell_once_and_a_rerun_runs_its_own_shard() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0
        || !["slurmctld", "slurmd", "sbatch", "munged"]
            .iter()
            .all(|c| have(c))
    {
        eprintln!("skipped: needs root and Debian's slurm-wlm (./scripts/test.sh installs it)");
        return;
    }
    let work = fresh_dir("slurm");
    std::fs::create_dir_all(&work).unwrap();
    let conf = slurm_conf(&work.join("slurm"));
    let _daemons = start_slurm(&work.join("slurm"), &conf);

    let dbs = work.join("dbs");
    std::fs::create_dir_all(&dbs).unwrap();
    let matrix = format!(
        "[servers.a]\nurl = \"sqlite:{d}/a-{{cell}}.db\"\n[servers.b]\nurl = \"sqlite:{d}/b-{{cell}}.db\"\n\
         [workloads.tiny]\nload_rows = 500\nsteps = [\"l.i0\", \"l.x\"]\n",
        d = dbs.display()
    );
    std::fs::write(work.join("m.toml"), matrix).unwrap();

    submit_and_wait(&conf, &work, "0-1");
    let (zero, one) = (
        cells_of(&work.join("shard-0")),
        cells_of(&work.join("shard-1")),
    );
    assert_eq!((zero.len(), one.len()), (1, 1), "{zero:?} {one:?}");
    let mut all: Vec<&String> = zero.iter().chain(&one).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 2, "every cell exactly once: {zero:?} {one:?}");

    // The natural rerun of task 1: it runs shard 1 again, into shard-1, and nothing else.
    std::fs::remove_dir_all(work.join("shard-1")).unwrap();
    submit_and_wait(&conf, &work, "1");
    assert_eq!(
        cells_of(&work.join("shard-1")),
        one,
        "the rerun ran its own shard"
    );
    let record = std::fs::read_to_string(work.join("shard-1/shard.json")).unwrap();
    assert!(record.contains("\"1/2\""), "{record}");
    assert_eq!(cells_of(&work.join("shard-0")), zero);
    for shard in ["shard-0", "shard-1"] {
        let cell = &cells_of(&work.join(shard))[0];
        let run = ibench::results::read_run(&work.join(shard).join("cells").join(cell).join("run"))
            .unwrap_or_else(|e| panic!("{shard}: {e:#}"));
        assert_eq!(run.status, ibench::results::Status::Completed, "{shard}");
    }
}
