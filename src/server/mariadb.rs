//! A private MariaDB: `mariadb-install-db`, then `mariadbd` started detached on 127.0.0.1 with
//! the socket in the instance dir, the database `ibench` created, and MyRocks loaded at start
//! (`--plugin-load-add=ha_rocksdb.so`) when the engine is RocksDB. Stopped with
//! `mariadb-admin shutdown`, falling back to signals.
//!
//! MyRocks is never loaded with `INSTALL SONAME`: that crashes MariaDB 10.11.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::{
    START_TIMEOUT, ServerHandle, ServerKind, ServerSpec, check_socket_path, choose_port,
    copy_config, create_instance_dir, find_in, first_line, is_root, path_dirs, pid_alive, pid_is,
    run_capture, tail, terminate, wait_pid_gone,
};
use crate::backend::Engine;

/// The server's error log, in the instance dir.
pub(crate) const LOG_FILE: &str = "error.log";

/// The output of mariadb-install-db, in the instance dir.
const INSTALL_LOG: &str = "install-db.log";

/// The unix socket, in the instance dir.
const SOCKET: &str = "mysqld.sock";

/// The pid file, in the instance dir.
const PID_FILE: &str = "mysqld.pid";

/// The database ibench uses, created at start.
const DATABASE: &str = "ibench";

/// The MyRocks plugin library.
const ROCKSDB_PLUGIN: &str = "ha_rocksdb.so";

/// Process names of the server.
const PROCESS_NAMES: &[&str] = &["mariadbd", "mysqld"];

/// Lines of the error log quoted in errors.
const TAIL_LINES: usize = 15;

/// The binaries a private MariaDB needs.
struct Binaries {
    /// The server.
    mariadbd: PathBuf,
    /// The data dir initialiser.
    install_db: PathBuf,
    /// The admin client (ping, shutdown).
    admin: PathBuf,
    /// The SQL client.
    client: PathBuf,
}

/// Start a private MariaDB as `spec` says.
pub(crate) fn start(spec: &ServerSpec) -> Result<ServerHandle> {
    let bins = find_binaries(spec.bindir.as_deref())?;
    let bindir = bins
        .mariadbd
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let version = version(&bins.mariadbd)?;
    let port = choose_port(spec)?;
    let root = is_root();

    let dir = create_instance_dir(spec)?;
    let socket = dir.join(SOCKET);
    check_socket_path(&socket)?;
    let data_dir = dir.join("data");
    let log = dir.join(LOG_FILE);
    let pid_file = dir.join(PID_FILE);

    // --defaults-file or --no-defaults: always the first argument.
    let defaults = match &spec.config {
        Some(config) => {
            let copy = copy_config(config, &dir)?;
            format!("--defaults-file={}", copy.display())
        }
        None => "--no-defaults".to_string(),
    };
    let rocksdb = spec.engine == Engine::Rocksdb;

    // A private tmpdir: at start-up a MariaDB server deletes every `#sql*` file in its tmpdir,
    // so two instances sharing /tmp delete each other's temporary tables (seen here: a
    // bootstrap failing with "Could not remove temporary table" when two started at once).
    let tmp_dir = dir.join("tmp");
    std::fs::create_dir_all(&tmp_dir)
        .with_context(|| format!("cannot create {}", tmp_dir.display()))?;
    let tmpdir_arg = format!("--tmpdir={}", tmp_dir.display());

    // mariadb-install-db
    let install_log = dir.join(INSTALL_LOG);
    let mut cmd = Command::new(&bins.install_db);
    cmd.current_dir(&dir).arg(&defaults);
    if root {
        cmd.arg("--user=root");
    }
    cmd.arg(format!("--datadir={}", data_dir.display()))
        .arg(&tmpdir_arg)
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    if rocksdb {
        // So that rocksdb_* settings in the config are known to the bootstrap server.
        cmd.arg(format!("--plugin-load-add={ROCKSDB_PLUGIN}"));
    }
    cmd.args(&spec.init_args);
    let out = run_capture(&mut cmd, "mariadb-install-db", Some(&install_log))?;
    if !out.status.success() {
        bail!(
            "mariadb-install-db failed ({}): {}; see {}",
            out.status,
            first_line(&out),
            install_log.display()
        );
    }

    // mariadbd, detached in its own session.
    let log_file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    let log_file2 = log_file
        .try_clone()
        .with_context(|| format!("cannot open {}", log.display()))?;
    let mut cmd = Command::new(&bins.mariadbd);
    cmd.current_dir(&dir).arg(&defaults);
    if root {
        cmd.arg("--user=root");
    }
    cmd.arg(format!("--datadir={}", data_dir.display()))
        .arg(&tmpdir_arg)
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--pid-file={}", pid_file.display()))
        .arg(format!("--log-error={}", log.display()));
    if rocksdb {
        cmd.arg(format!("--plugin-load-add={ROCKSDB_PLUGIN}"));
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(log_file))
        .stderr(Stdio::from(log_file2));
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", bins.mariadbd.display()))?;

    wait_ready(&mut child, &bins.admin, &socket, port, &log)?;
    let pid = read_pid(&pid_file).unwrap_or(child.id());
    // The child is not waited for: it lives on after ibench exits. If it dies while we still
    // run, `pid_alive` reaps the zombie.
    drop(child);

    let handle = ServerHandle {
        kind: ServerKind::Mariadb,
        engine: spec.engine,
        dir: dir.clone(),
        data_dir,
        socket_dir: dir.clone(),
        port,
        pid,
        url: format!("mysql://root@127.0.0.1:{port}/{DATABASE}"),
        bindir,
        version,
        run_as_user: None,
    };
    if let Err(e) = finish_setup(&handle, &bins) {
        let _ = stop(&handle);
        return Err(e);
    }
    Ok(handle)
}

/// After the server answers: create the database, check MyRocks, save the handle.
fn finish_setup(handle: &ServerHandle, bins: &Binaries) -> Result<()> {
    let socket = handle.socket_dir.join(SOCKET);
    sql(
        &bins.client,
        &socket,
        &format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"),
    )
    .with_context(|| format!("cannot create the database {DATABASE}"))?;
    if handle.engine == Engine::Rocksdb {
        let support = sql(
            &bins.client,
            &socket,
            "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='ROCKSDB'",
        )?;
        let support = support.trim();
        if !matches!(support, "YES" | "DEFAULT") {
            let shown = if support.is_empty() {
                "not loaded"
            } else {
                support
            };
            let log = handle.dir.join(LOG_FILE);
            let lines: Vec<String> = fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.to_ascii_lowercase().contains("rocksdb"))
                .map(|l| format!("    {l}"))
                .collect();
            let quoted = lines[lines.len().saturating_sub(5)..].join("\n");
            bail!(
                "the RocksDB engine is not available in this MariaDB ({shown}): install mariadb-plugin-rocksdb (apt-get install mariadb-plugin-rocksdb); see {}{}{quoted}",
                log.display(),
                if quoted.is_empty() {
                    ""
                } else {
                    "; its lines about RocksDB:\n"
                }
            );
        }
    }
    handle.save()
}

/// Poll `mariadb-admin ping` until the server answers, it exits, or the timeout passes.
fn wait_ready(child: &mut Child, admin: &Path, socket: &Path, port: u16, log: &Path) -> Result<()> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().context("cannot check on mariadbd")? {
            bail!(
                "mariadbd exited during startup on 127.0.0.1:{port} ({status}); see {}; its last lines:\n{}",
                log.display(),
                tail(log, TAIL_LINES)
            );
        }
        if socket.exists() {
            let ok = Command::new(admin)
                .arg("--no-defaults")
                .arg(format!("--socket={}", socket.display()))
                .args(["-uroot", "--connect-timeout=2", "ping"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ok {
                return Ok(());
            }
        }
        if Instant::now() >= deadline {
            let _ = terminate(child.id(), libc::SIGTERM, Duration::from_secs(20));
            let _ = child.try_wait();
            bail!(
                "mariadbd did not answer on 127.0.0.1:{port} within {} s; see {}; its last lines:\n{}",
                START_TIMEOUT.as_secs(),
                log.display(),
                tail(log, TAIL_LINES)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Run one statement with the client over the socket as root; returns its output
/// (`--batch --skip-column-names`).
fn sql(client: &Path, socket: &Path, statement: &str) -> Result<String> {
    let out = Command::new(client)
        .arg("--no-defaults")
        .arg(format!("--socket={}", socket.display()))
        .args(["-uroot", "--batch", "--skip-column-names", "-e", statement])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", client.display()))?;
    if !out.status.success() {
        bail!("`{statement}` failed: {}", first_line(&out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Stop the server of `handle`: `mariadb-admin shutdown`, then SIGTERM, then SIGKILL.
pub(crate) fn stop(handle: &ServerHandle) -> Result<()> {
    if !pid_alive(handle.pid) {
        return Ok(());
    }
    if !pid_is(handle.pid, PROCESS_NAMES) {
        // The pid was reused by another process: our server is gone.
        return Ok(());
    }
    let socket = handle.socket_dir.join(SOCKET);
    let admin = find_in(
        &sibling_dirs(&handle.bindir),
        &["mariadb-admin", "mysqladmin"],
    )
    .or_else(|| find_in(&default_dirs(), &["mariadb-admin", "mysqladmin"]));
    let mut detail = "no mariadb-admin found".to_string();
    if let Some(admin) = admin {
        let mut cmd = Command::new(&admin);
        cmd.arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .args([
                "-uroot",
                "--connect-timeout=10",
                "--shutdown-timeout=60",
                "shutdown",
            ]);
        let out = run_capture(&mut cmd, "mariadb-admin shutdown", None)?;
        if out.status.success() && wait_pid_gone(handle.pid, Duration::from_secs(60)) {
            return Ok(());
        }
        detail = if out.status.success() {
            "mariadbd still runs after shutdown".to_string()
        } else {
            first_line(&out)
        };
    }
    terminate(handle.pid, libc::SIGTERM, Duration::from_secs(60)).with_context(|| {
        format!(
            "mariadb-admin shutdown failed ({detail}) and mariadbd {} did not die; see {}",
            handle.pid,
            handle.dir.join(LOG_FILE).display()
        )
    })
}

/// `dir` and its siblings where MariaDB installs keep binaries (`../sbin`, `../bin`,
/// `../scripts`).
fn sibling_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(parent) = dir.parent() {
        for sub in ["sbin", "bin", "scripts"] {
            let d = parent.join(sub);
            if d != dir {
                dirs.push(d);
            }
        }
    }
    dirs
}

/// Where to look without --bindir: PATH, then the usual install locations.
fn default_dirs() -> Vec<PathBuf> {
    let mut dirs = path_dirs();
    for d in [
        "/usr/sbin",
        "/usr/bin",
        "/usr/local/mysql/bin",
        "/usr/local/mysql/scripts",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

/// Find the server, installer and clients, in --bindir (and its siblings) or the defaults.
fn find_binaries(bindir: Option<&Path>) -> Result<Binaries> {
    let dirs = match bindir {
        Some(b) => sibling_dirs(
            &std::path::absolute(b)
                .with_context(|| format!("cannot make {} absolute", b.display()))?,
        ),
        None => default_dirs(),
    };
    let find = |names: &[&str]| -> Result<PathBuf> {
        find_in(&dirs, names).with_context(|| match bindir {
            Some(b) => format!(
                "cannot find {} in --bindir {}: pass --bindir DIR holding the MariaDB binaries (mariadbd, mariadb-install-db, mariadb-admin, mariadb)",
                names.join(" or "),
                b.display()
            ),
            None => format!(
                "cannot find {}: install the mariadb-server package (apt-get install mariadb-server) or pass --bindir DIR",
                names[0]
            ),
        })
    };
    Ok(Binaries {
        mariadbd: find(&["mariadbd", "mysqld"])?,
        install_db: find(&["mariadb-install-db", "mysql_install_db"])?,
        admin: find(&["mariadb-admin", "mysqladmin"])?,
        client: find(&["mariadb", "mysql"])?,
    })
}

/// `mariadbd --version`, trimmed.
fn version(mariadbd: &Path) -> Result<String> {
    let out = Command::new(mariadbd)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {} --version", mariadbd.display()))?;
    if !out.status.success() {
        bail!(
            "{} --version failed: {}; pass --bindir DIR holding a working MariaDB",
            mariadbd.display(),
            first_line(&out)
        );
    }
    // "/usr/sbin/mariadbd  Ver 10.11..." -> "mariadbd Ver 10.11...".
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(match text.split_once(char::is_whitespace) {
        Some((program, rest)) => {
            let name = Path::new(program)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| program.to_string());
            format!("{name} {}", rest.trim_start())
        }
        None => text,
    })
}

/// The server's pid from its pid file.
fn read_pid(pid_file: &Path) -> Option<u32> {
    fs::read_to_string(pid_file).ok()?.trim().parse().ok()
}
