//! A private MariaDB: `mariadb-install-db`, then `mariadbd` started detached on 127.0.0.1 with
//! the socket in the instance dir, the database `ibench` created, and MyRocks loaded at start
//! (`--plugin-load-add=ha_rocksdb.so`) when the engine is RocksDB. Stopped with
//! `mariadb-admin shutdown`, falling back to signals.
//!
//! Closed to other local users: as root, the server runs as the `mysql` OS user (never as
//! root, so `SELECT … INTO OUTFILE` cannot write root's files); the instance dir, with the
//! socket in it, is owner-only; the only accounts are `root@localhost` and `root@127.0.0.1`,
//! both with a random password (`mysql_native_password`), set by an `--init-file` the server
//! runs before it accepts connections and deleted right after. The init file holds only the
//! password's hash; the clear password is in `DIR/password` (mode 0600) alone, and reaches
//! the client tools through `MYSQL_PWD` in their environment, never their arguments.
//!
//! MyRocks is never loaded with `INSTALL SONAME`: that crashes MariaDB 10.11.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::{
    RunAs, START_TIMEOUT, ServerHandle, ServerKind, ServerSpec, choose_port, copy_config, find_in,
    first_line, generate_password, owner_only, path_dirs, pid_alive, pid_is, prepare_instance_dir,
    read_password, run_capture, tail, terminate, wait_pid_gone, write_password_file,
};
use crate::results::target::Engine;

/// The server's error log, in the instance dir.
pub(crate) const LOG_FILE: &str = "error.log";

/// The output of mariadb-install-db, in the instance dir.
const INSTALL_LOG: &str = "install-db.log";

/// The unix socket, in the instance dir.
const SOCKET: &str = "mysqld.sock";

/// The pid file, in the instance dir.
const PID_FILE: &str = "mysqld.pid";

/// The database ibench uses, created at start.
pub(crate) const DATABASE: &str = "ibench";

/// The MyRocks plugin library.
const ROCKSDB_PLUGIN: &str = "ha_rocksdb.so";

/// Process names of the server.
const PROCESS_NAMES: &[&str] = &["mariadbd", "mysqld"];

/// Lines of the error log quoted in errors.
const TAIL_LINES: usize = 15;

/// The OS user the server runs as when ibench runs as root.
const SERVER_USER: &str = "mysql";

/// The SQL the server runs at its first start, before it accepts connections (deleted once
/// it answers).
const INIT_FILE: &str = "init.sql";

/// The binaries a private MariaDB needs.
pub(crate) struct Binaries {
    /// The server.
    pub(crate) mariadbd: PathBuf,
    /// The data dir initialiser.
    install_db: PathBuf,
    /// The admin client (ping, shutdown).
    admin: PathBuf,
    /// The SQL client.
    client: PathBuf,
}

/// Start a private MariaDB as `spec` says.
pub(crate) fn start(spec: &ServerSpec) -> Result<ServerHandle> {
    start_with(spec, &[])
}

/// Start a private MariaDB as `spec` says, `server_args` added to mariadbd's (a binary log,
/// a replica's server id).
pub(crate) fn start_with(spec: &ServerSpec, server_args: &[String]) -> Result<ServerHandle> {
    let bins = find_binaries(spec.bindir.as_deref())?;
    let bindir = bins
        .mariadbd
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let version = version(&bins.mariadbd)?;
    let port = choose_port(spec)?;
    let run_as = super::server_user(SERVER_USER, no_server_user)?;

    let dir = prepare_instance_dir(spec, SOCKET, run_as.as_ref())?;
    let socket = dir.join(SOCKET);
    let password = generate_password()?;
    let password_file = write_password_file(&dir, &password, None)?;
    let data_dir = dir.join("data");
    let log = dir.join(LOG_FILE);
    let pid_file = dir.join(PID_FILE);

    let args = CommonArgs::new(spec, &dir, &data_dir, run_as.as_ref())?;
    install_db(&bins, &dir, &args, &spec.init_args)?;

    // The accounts, set before the server accepts its first connection.
    let init_file = write_init_file(&dir, &password, run_as.as_ref())?;
    let mut cmd = Command::new(&bins.mariadbd);
    cmd.current_dir(&dir);
    args.apply(&mut cmd);
    cmd.arg(format!("--init-file={}", init_file.display()))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--pid-file={}", pid_file.display()))
        .arg(format!("--log-error={}", log.display()))
        .args(server_args);
    let mut child = spawn_detached(cmd, &log, run_as.as_ref())
        .with_context(|| format!("cannot start {}", bins.mariadbd.display()))?;

    let ready = wait_ready(&mut child, &bins.admin, &socket, port, &log, &password);
    // Its work is done (or failed); it must not outlive the start either way.
    let _ = fs::remove_file(&init_file);
    ready?;
    let pid = crate::process::read_pid_file(&pid_file).unwrap_or(child.id());
    // The child is not waited for: it lives on after ibench exits. If it dies while we still
    // run, `pid_alive` reaps the zombie.
    drop(child);

    let handle = ServerHandle::private(
        (ServerKind::Mariadb, spec.engine),
        &dir,
        (port, pid),
        &password_file,
        (bindir, version),
        run_as.map(|u| u.name),
    );
    if let Err(e) = finish_setup(&handle, &bins) {
        let _ = stop(&handle);
        return Err(e);
    }
    Ok(handle)
}

/// A private tmpdir: at start-up a MariaDB server deletes every `#sql*` file in its tmpdir,
/// so two instances sharing /tmp delete each other's temporary tables (seen here: a bootstrap
/// failing with "Could not remove temporary table" when two started at once).
fn private_tmpdir(dir: &Path, run_as: Option<&RunAs>) -> Result<PathBuf> {
    let tmp_dir = dir.join("tmp");
    std::fs::create_dir_all(&tmp_dir)
        .with_context(|| format!("cannot create {}", tmp_dir.display()))?;
    owner_only(&tmp_dir, run_as)?;
    Ok(tmp_dir)
}

/// The arguments `mariadb-install-db` and `mariadbd` share.
struct CommonArgs {
    /// `--defaults-file=COPY` or `--no-defaults` (must come first).
    defaults: String,
    /// `--user=NAME` when running as root.
    user: Option<String>,
    /// `--datadir=DIR`.
    datadir: String,
    /// `--tmpdir=DIR` (private, see `start`).
    tmpdir: String,
    /// Load the MyRocks plugin.
    rocksdb: bool,
}

impl CommonArgs {
    /// The instance's arguments: its config (or none), the user to run as, the data dir and a
    /// private tmpdir (made here), MyRocks when asked for.
    fn new(
        spec: &ServerSpec,
        dir: &Path,
        data_dir: &Path,
        run_as: Option<&RunAs>,
    ) -> Result<CommonArgs> {
        let tmp_dir = private_tmpdir(dir, run_as)?;
        Ok(CommonArgs {
            // --defaults-file or --no-defaults: always the first argument.
            defaults: match &spec.config {
                Some(config) => {
                    format!("--defaults-file={}", copy_config(config, dir)?.display())
                }
                None => "--no-defaults".to_string(),
            },
            user: run_as.map(|u| format!("--user={}", u.name)),
            datadir: format!("--datadir={}", data_dir.display()),
            tmpdir: format!("--tmpdir={}", tmp_dir.display()),
            rocksdb: spec.engine == Engine::Rocksdb,
        })
    }

    fn apply(&self, cmd: &mut Command) {
        cmd.arg(&self.defaults)
            .args(&self.user)
            .arg(&self.datadir)
            .arg(&self.tmpdir);
        if self.rocksdb {
            // So that rocksdb_* settings in the config are known, at bootstrap too.
            cmd.arg(format!("--plugin-load-add={ROCKSDB_PLUGIN}"));
        }
    }
}

/// `mariadb-install-db` into the data dir; its output kept in the instance dir.
fn install_db(bins: &Binaries, dir: &Path, args: &CommonArgs, init_args: &[String]) -> Result<()> {
    let install_log = dir.join(INSTALL_LOG);
    let mut cmd = Command::new(&bins.install_db);
    cmd.current_dir(dir);
    args.apply(&mut cmd);
    cmd.args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    cmd.args(init_args);
    let out = run_capture(&mut cmd, "mariadb-install-db", Some(&install_log))?;
    if !out.status.success() {
        bail!(
            "mariadb-install-db failed ({}): {}; see {}",
            out.status,
            first_line(&out),
            install_log.display()
        );
    }
    Ok(())
}

/// Spawn the server detached in its own session, its output appended to `log` (owned by the
/// server's OS user when running as root).
fn spawn_detached(
    mut cmd: Command,
    log: &Path,
    run_as: Option<&RunAs>,
) -> Result<std::process::Child> {
    let log_file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    if let Some(user) = run_as {
        std::os::unix::fs::chown(log, Some(user.uid), Some(user.gid))
            .with_context(|| format!("cannot hand {} to {}", log.display(), user.name))?;
    }
    let log_file2 = log_file
        .try_clone()
        .with_context(|| format!("cannot open {}", log.display()))?;
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
    Ok(cmd.spawn()?)
}

/// After the server answers: create the database, check MyRocks, save the handle.
fn finish_setup(handle: &ServerHandle, bins: &Binaries) -> Result<()> {
    let socket = handle.socket_dir.join(SOCKET);
    let password = read_password(&handle.dir).unwrap_or_default();
    let sql = |statement: &str| sql(&bins.client, &socket, &password, statement);
    sql(&format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"))
        .with_context(|| format!("cannot create the database {DATABASE}"))?;
    if handle.engine == Engine::Rocksdb {
        let support = sql("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='ROCKSDB'")?;
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
fn wait_ready(
    child: &mut Child,
    admin: &Path,
    socket: &Path,
    port: u16,
    log: &Path,
    password: &str,
) -> Result<()> {
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
                .env("MYSQL_PWD", password)
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
/// (`--batch --skip-column-names`). The password goes through `MYSQL_PWD`.
fn sql(client: &Path, socket: &Path, password: &str, statement: &str) -> Result<String> {
    let out = Command::new(client)
        .arg("--no-defaults")
        .arg(format!("--socket={}", socket.display()))
        .args(["-uroot", "--batch", "--skip-column-names", "-e", statement])
        .env("MYSQL_PWD", password)
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
        if let Some(password) = read_password(&handle.dir) {
            cmd.env("MYSQL_PWD", password);
        }
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

/// The `mysql_native_password` hash of a password: `*` and the upper-case hex of
/// SHA1(SHA1(password)).
fn native_password_hash(password: &str) -> String {
    use sha1::{Digest, Sha1};
    let inner = Sha1::digest(password.as_bytes());
    let outer = Sha1::digest(inner);
    let mut out = String::with_capacity(41);
    out.push('*');
    for b in outer {
        out.push_str(&format!("{b:02X}"));
    }
    out
}

/// Write the `--init-file` that leaves exactly two accounts, `root@localhost` (socket) and
/// `root@127.0.0.1` (TCP), both with the password (as its hash), and drops the others that
/// `mariadb-install-db` made (root at the host name and `::1`, anonymous users). Mode 0600,
/// owned by the server's OS user, who reads it.
fn write_init_file(dir: &Path, password: &str, owner: Option<&RunAs>) -> Result<PathBuf> {
    let hash = native_password_hash(password);
    let text = format!(
        "DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host NOT IN ('localhost', '127.0.0.1'));\n\
         FLUSH PRIVILEGES;\n\
         CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';\n\
         GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n\
         ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING '{hash}';\n\
         ALTER USER 'root'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING '{hash}';\n"
    );
    let path = dir.join(INIT_FILE);
    super::write_private_file(&path, &text, owner)?;
    Ok(path)
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
pub(crate) fn find_binaries(bindir: Option<&Path>) -> Result<Binaries> {
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
    // With --bindir, the server itself must be in that very dir: the siblings (`../bin`,
    // `../scripts` of a tarball) hold only the installer and the clients. Otherwise a
    // missing --bindir would fall back to `/sbin` and start the system's server.
    let server_dirs = match bindir {
        Some(_) => dirs[..1].to_vec(),
        None => dirs.clone(),
    };
    let mariadbd = find_in(&server_dirs, &["mariadbd", "mysqld"]).with_context(|| match bindir {
        Some(b) => format!(
            "cannot find mariadbd or mysqld in --bindir {}: pass --bindir DIR holding the MariaDB server binary",
            b.display()
        ),
        None => "cannot find mariadbd: install the mariadb-server package (apt-get install mariadb-server) or pass --bindir DIR".to_string(),
    })?;
    Ok(Binaries {
        mariadbd,
        install_db: find(&["mariadb-install-db", "mysql_install_db"])?,
        admin: find(&["mariadb-admin", "mysqladmin"])?,
        client: find(&["mariadb", "mysql"])?,
    })
}

/// `mariadbd --version`, trimmed.
pub(crate) fn version(mariadbd: &Path) -> Result<String> {
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

/// Why root cannot start the server: there is no OS user to run it as.
fn no_server_user() -> String {
    format!(
        "ibench will not run MariaDB as root and there is no OS user {SERVER_USER} to run it as; install the mariadb-server package (apt-get install mariadb-server) or run ibench as an ordinary user"
    )
}
