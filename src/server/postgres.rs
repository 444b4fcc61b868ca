//! A private PostgreSQL: `initdb`, the config overlay appended to `postgresql.conf`,
//! `pg_ctl start` on 127.0.0.1 with the socket in the instance dir, `pg_ctl stop -m fast`.
//!
//! The PostgreSQL binaries refuse to run as root, so as root they run as the `postgres` OS user
//! and the instance dir is handed to that user.

use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::{
    RunAs, START_TIMEOUT, ServerHandle, ServerKind, ServerSpec, choose_port, command, copy_config,
    find_in, first_line, generate_password, is_root, lookup_user, path_dirs, pid_alive, pid_is,
    prepare_instance_dir, run_capture, shell_quote, tail, terminate, wait_pid_gone,
    write_password_file,
};

/// The server log, in the instance dir.
pub(crate) const LOG_FILE: &str = "server.log";

/// The output of initdb, in the instance dir.
const INITDB_LOG: &str = "initdb.log";

/// The OS user the server runs as when ibench runs as root.
pub(crate) const SERVER_USER: &str = "postgres";

/// Process names of a postmaster.
const PROCESS_NAMES: &[&str] = &["postgres", "postmaster"];

/// Lines of the server log quoted in errors.
const TAIL_LINES: usize = 15;

/// Start a private PostgreSQL as `spec` says.
pub(crate) fn start(spec: &ServerSpec) -> Result<ServerHandle> {
    let bindir = find_bindir(spec.bindir.as_deref())?;
    let run_as = super::server_user(SERVER_USER, no_server_user)?;
    let port = choose_port(spec)?;
    let version = version(&bindir)?;

    let dir = prepare_instance_dir(spec, &format!(".s.PGSQL.{port}"), run_as.as_ref())?;
    let data_dir = dir.join("data");
    // initdb reads the superuser's password from the file (as the server's OS user).
    let password_file = write_password_file(&dir, &generate_password()?, run_as.as_ref())?;
    let auth = auth_method(&version);

    initdb(
        &bindir,
        run_as.as_ref(),
        &dir,
        &data_dir,
        auth,
        &password_file,
        spec,
    )?;

    if let Some(config) = &spec.config {
        apply_config_overlay(config, &dir, &data_dir)?;
    }

    let pid = pg_ctl_start(&bindir, run_as.as_ref(), &dir, &data_dir, port)?;

    let handle = ServerHandle::private(
        (ServerKind::Postgres, spec.engine),
        &dir,
        (port, pid),
        &password_file,
        (bindir, version),
        run_as.map(|u| u.name),
    );
    if let Err(e) = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(5),
    ) {
        let _ = stop(&handle);
        bail!(
            "postgres started but does not accept TCP connections on 127.0.0.1:{port} ({e}); see {}",
            handle.dir.join(LOG_FILE).display()
        );
    }
    if let Err(e) = handle.save() {
        let _ = stop(&handle);
        return Err(e);
    }
    Ok(handle)
}

/// `initdb` of the data dir, the superuser's password read from `password_file`.
fn initdb(
    bindir: &Path,
    run_as: Option<&RunAs>,
    dir: &Path,
    data_dir: &Path,
    auth: &str,
    password_file: &Path,
    spec: &ServerSpec,
) -> Result<()> {
    let initdb_log = dir.join(INITDB_LOG);
    let mut cmd = command(&bindir.join("initdb"), run_as);
    cmd.current_dir(dir)
        .arg("-D")
        .arg(data_dir)
        .args([
            "-U",
            "postgres",
            "-A",
            auth,
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ])
        .arg(format!("--pwfile={}", password_file.display()));
    cmd.args(&spec.init_args);
    let out = run_capture(&mut cmd, "initdb", Some(&initdb_log))?;
    if !out.status.success() {
        bail!(
            "initdb failed ({}): {}; see {}",
            out.status,
            first_line(&out),
            initdb_log.display()
        );
    }
    Ok(())
}

/// Append the user's config file (a copy kept in the instance dir) to `postgresql.conf`.
fn apply_config_overlay(config: &Path, dir: &Path, data_dir: &Path) -> Result<()> {
    let copy = copy_config(config, dir)?;
    let overlay = fs::read_to_string(&copy)
        .with_context(|| format!("cannot read config {}", config.display()))?;
    let conf = data_dir.join("postgresql.conf");
    let mut text =
        fs::read_to_string(&conf).with_context(|| format!("cannot read {}", conf.display()))?;
    text.push_str(&format!(
        "\n# ibench config overlay from {}\n{overlay}\n",
        config.display()
    ));
    fs::write(&conf, text).with_context(|| format!("cannot write {}", conf.display()))?;
    Ok(())
}

/// `pg_ctl start` on the loopback port and a private socket dir; the postmaster's pid.
pub(crate) fn pg_ctl_start(
    bindir: &Path,
    run_as: Option<&RunAs>,
    dir: &Path,
    data_dir: &Path,
    port: u16,
) -> Result<u32> {
    let log = dir.join(LOG_FILE);
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1",
        shell_quote(&dir.to_string_lossy())
    );
    let mut cmd = command(&bindir.join("pg_ctl"), run_as);
    // The server inherits this environment: a standby's walreceiver would send the caller's
    // PGPASSWORD to its primary instead of the password of its `primary_conninfo`'s passfile.
    cmd.current_dir(dir)
        .env_remove("PGPASSWORD")
        .arg("-D")
        .arg(data_dir)
        .arg("-l")
        .arg(&log)
        .args(["-w", "-t", &START_TIMEOUT.as_secs().to_string(), "-o"])
        .arg(&options)
        .arg("start");
    let out = run_capture(&mut cmd, "pg_ctl start", None)?;
    let pid = crate::process::read_pid_file(&data_dir.join("postmaster.pid")).ok();
    if !out.status.success() {
        // A server that is up but too slow to answer must not be left behind.
        if let Some(pid) = pid
            && pid_is(pid, PROCESS_NAMES)
        {
            let _ = terminate(pid, libc::SIGQUIT, Duration::from_secs(10));
        }
        bail!(
            "postgres did not start on 127.0.0.1:{port} ({}); see {}; its last lines:\n{}",
            first_line(&out),
            log.display(),
            tail(&log, TAIL_LINES)
        );
    }
    let Some(pid) = pid else {
        bail!(
            "postgres started but {} has no pid; see {}",
            data_dir.join("postmaster.pid").display(),
            log.display()
        );
    };
    Ok(pid)
}

/// Stop the server of `handle` (`pg_ctl stop -m fast`; signals if that fails).
pub(crate) fn stop(handle: &ServerHandle) -> Result<()> {
    let pid_file = handle.data_dir.join("postmaster.pid");
    if !pid_alive(handle.pid) && !pid_file.exists() {
        return Ok(());
    }
    let run_as = match &handle.run_as_user {
        Some(name) if is_root() => lookup_user(name)?,
        _ => None,
    };
    let pg_ctl = find_in(std::slice::from_ref(&handle.bindir), &["pg_ctl"])
        .or_else(|| find_bindir(None).ok().map(|d| d.join("pg_ctl")));
    let mut stopped = false;
    let mut detail = String::new();
    if let Some(pg_ctl) = pg_ctl {
        let mut cmd = command(&pg_ctl, run_as.as_ref());
        cmd.current_dir(&handle.dir)
            .arg("-D")
            .arg(&handle.data_dir)
            .args(["-m", "fast", "-w", "-t", "60", "stop"]);
        let out = run_capture(&mut cmd, "pg_ctl stop", None)?;
        stopped = out.status.success();
        if !stopped {
            detail = first_line(&out);
        }
    }
    if stopped && wait_pid_gone(handle.pid, Duration::from_secs(30)) {
        return Ok(());
    }
    if pid_is(handle.pid, PROCESS_NAMES) {
        // SIGINT is PostgreSQL's fast shutdown; SIGKILL follows if it does not help.
        terminate(handle.pid, libc::SIGINT, Duration::from_secs(30)).with_context(|| {
            format!(
                "pg_ctl stop failed ({detail}) and the postmaster {} did not die; see {}",
                handle.pid,
                handle.dir.join(LOG_FILE).display()
            )
        })?;
    }
    Ok(())
}

/// The password authentication of every connection, local socket and TCP alike:
/// `scram-sha-256` (PostgreSQL 10 and later; initdb then also sets `password_encryption`),
/// `md5` before that.
fn auth_method(version: &str) -> &'static str {
    match crate::backend::postgres::major_of_version(version) {
        Some(m) if m < 10 => "md5",
        _ => "scram-sha-256",
    }
}

/// The directory with initdb, pg_ctl and postgres: `bindir` when given, else
/// `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`, else `PATH`.
pub(crate) fn find_bindir(bindir: Option<&Path>) -> Result<PathBuf> {
    const TOOLS: [&str; 3] = ["initdb", "pg_ctl", "postgres"];
    let complete = |dir: &Path| {
        TOOLS
            .iter()
            .all(|t| find_in(&[dir.to_path_buf()], &[t]).is_some())
    };
    if let Some(dir) = bindir {
        if let Some(missing) = TOOLS
            .iter()
            .find(|t| find_in(&[dir.to_path_buf()], &[t]).is_none())
        {
            bail!(
                "cannot find {missing} in --bindir {}: pass --bindir DIR holding the PostgreSQL server binaries (initdb, pg_ctl, postgres)",
                dir.display()
            );
        }
        return std::path::absolute(dir)
            .with_context(|| format!("cannot make {} absolute", dir.display()));
    }
    let mut candidates = Vec::new();
    if let Some(pg_config) = find_in(&path_dirs(), &["pg_config"])
        && let Ok(out) = std::process::Command::new(pg_config)
            .arg("--bindir")
            .output()
        && out.status.success()
    {
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !dir.is_empty() {
            candidates.push(PathBuf::from(dir));
        }
    }
    candidates.extend(versioned_bindirs());
    candidates.extend(path_dirs());
    candidates
        .into_iter()
        .find(|d| complete(d))
        .context(
            "cannot find initdb: install the postgresql package (apt-get install postgresql) or pass --bindir DIR",
        )
}

/// `/usr/lib/postgresql/*/bin`, newest major version first.
fn versioned_bindirs() -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir("/usr/lib/postgresql") else {
        return Vec::new();
    };
    let mut versions: Vec<(Vec<u32>, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let key: Vec<u32> = name
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?;
            Some((key, e.path().join("bin")))
        })
        .collect();
    versions.sort();
    versions.into_iter().rev().map(|(_, dir)| dir).collect()
}

/// `postgres --version`, trimmed.
pub(crate) fn version(bindir: &Path) -> Result<String> {
    let postgres = bindir.join("postgres");
    let out = std::process::Command::new(&postgres)
        .arg("--version")
        .output()
        .with_context(|| format!("cannot run {} --version", postgres.display()))?;
    if !out.status.success() {
        bail!(
            "{} --version failed: {}; pass --bindir DIR holding a working PostgreSQL",
            postgres.display(),
            first_line(&out)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Why root cannot start the server: there is no OS user to run it as.
pub(crate) fn no_server_user() -> String {
    format!(
        "PostgreSQL refuses to run as root and there is no OS user {SERVER_USER} to run it as; install the postgresql package (apt-get install postgresql) or run ibench as an ordinary user"
    )
}
