//! Private server instances: start a throw-away PostgreSQL or MariaDB in its own directory,
//! bound to 127.0.0.1 on a free port with a unix socket next to it, and stop it again.
//!
//! [`start`] initialises a fresh instance dir, applies an optional config overlay, starts the
//! server, waits until it answers and records a [`ServerHandle`] as JSON in
//! `DIR/ibench-server.json`, so that [`ServerHandle::stop`] works from another process (a
//! primary with replicas stops through `replication::pair::stop_pair`). [`instances`]
//! finds the running ones and says what stopping one leaves on disk.
//!
//! Layout of an instance dir (mode 0700, owned by the OS user the server runs as; nobody
//! else reaches the socket in it):
//! - `password`: the superuser's random password (mode 0600); the URL names this file with
//!   `?password_file=PATH`, so the password is in no URL, log or command line;
//! - `data/`: the data directory (mode 0700);
//! - `ibench-server.json`: the handle;
//! - `config-NAME`: a copy of the config overlay, for the record;
//! - PostgreSQL: `server.log`, `initdb.log`, the socket `.s.PGSQL.PORT`;
//! - MariaDB: `error.log`, `install-db.log`, `mysqld.sock`, `mysqld.pid`.

pub mod instances;
pub mod mariadb;
pub mod postgres;

use std::ffi::CString;
use std::fs;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::results::target::Engine;

/// Name of the handle file inside an instance dir.
pub const HANDLE_FILE: &str = "ibench-server.json";

/// Name of the file holding the instance's superuser password (mode 0600), inside the
/// instance dir. URLs reference it with `?password_file=PATH`; the password is in no URL,
/// log or command line.
pub const PASSWORD_FILE: &str = "password";

/// Characters of a generated password.
const PASSWORD_LEN: usize = 32;

/// How long to wait for a server to answer after starting it.
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest path a unix socket may have (`sun_path` is 108 bytes including the NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Which server to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// PostgreSQL (initdb + pg_ctl).
    Postgres,
    /// MariaDB (mariadb-install-db + mariadbd), with InnoDB or MyRocks.
    Mariadb,
}

impl ServerKind {
    /// The lowercase name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Postgres => "postgres",
            ServerKind::Mariadb => "mariadb",
        }
    }
}

impl std::fmt::Display for ServerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What to start.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    /// Which server.
    pub kind: ServerKind,
    /// Storage engine; [`Engine::Rocksdb`] is only meaningful for MariaDB (it loads MyRocks).
    pub engine: Engine,
    /// Where the server binaries are; found automatically when `None`.
    pub bindir: Option<PathBuf>,
    /// Config overlay: appended to `postgresql.conf` (PostgreSQL) or used as
    /// `--defaults-file` (MariaDB). A copy is kept in the instance dir.
    pub config: Option<PathBuf>,
    /// Instance dir; must not exist or be empty. Default: a fresh dir under
    /// [`std::env::temp_dir`].
    pub dir: Option<PathBuf>,
    /// TCP port on 127.0.0.1. Default: a free port.
    pub port: Option<u16>,
    /// Extra arguments for the initialisation tool: appended to `initdb` (PostgreSQL, e.g.
    /// `--wal-segsize=64`) or `mariadb-install-db` (MariaDB).
    pub init_args: Vec<String>,
}

impl Default for ServerSpec {
    fn default() -> Self {
        ServerSpec {
            kind: ServerKind::Postgres,
            engine: Engine::default(),
            bindir: None,
            config: None,
            dir: None,
            port: None,
            init_args: Vec::new(),
        }
    }
}

/// A started server; saved as JSON in `DIR/ibench-server.json` so `stop` works from another
/// process.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerHandle {
    /// Which server.
    pub kind: ServerKind,
    /// Storage engine the server was started for.
    pub engine: Engine,
    /// Instance dir (absolute).
    pub dir: PathBuf,
    /// Data directory, `DIR/data`.
    pub data_dir: PathBuf,
    /// Where the unix socket lives (the instance dir).
    pub socket_dir: PathBuf,
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// The server's main process (postmaster / mariadbd), read from its pid file.
    pub pid: u32,
    /// Connection URL, e.g. `postgres://postgres@127.0.0.1:PORT/postgres` or
    /// `mysql://root@127.0.0.1:PORT/ibench`.
    pub url: String,
    /// Directory of the server binaries that were used.
    pub bindir: PathBuf,
    /// The server's version line (`postgres --version` / `mariadbd --version`).
    pub version: String,
    /// `Some("postgres")` when the server runs as that OS user because ibench runs as root.
    pub run_as_user: Option<String>,
}

impl ServerHandle {
    /// The handle of a private instance in `dir` (its data in `DIR/data`, its socket in
    /// `DIR`), listening on 127.0.0.1:`port` with main process `pid`, its URL reading the
    /// superuser's password from `password_file`; started from `bindir`, which reports
    /// `version`. The one constructor of the private servers and the PostgreSQL standby.
    pub(crate) fn private(
        (kind, engine): (ServerKind, Engine),
        dir: &Path,
        (port, pid): (u16, u32),
        password_file: &Path,
        (bindir, version): (PathBuf, String),
        run_as_user: Option<String>,
    ) -> ServerHandle {
        let query = password_file_query(password_file);
        let url = match kind {
            ServerKind::Postgres => {
                format!("postgres://postgres@127.0.0.1:{port}/postgres?{query}")
            }
            ServerKind::Mariadb => {
                format!(
                    "mysql://root@127.0.0.1:{port}/{}?{query}",
                    mariadb::DATABASE
                )
            }
        };
        ServerHandle {
            kind,
            engine,
            dir: dir.to_path_buf(),
            data_dir: dir.join("data"),
            socket_dir: dir.to_path_buf(),
            port,
            pid,
            url,
            bindir,
            version,
            run_as_user,
        }
    }

    /// Stop the server (fast shutdown) and wait until its main process is gone. Stopping a
    /// server that is no longer running succeeds.
    pub fn stop(&self) -> Result<()> {
        match self.kind {
            ServerKind::Postgres => postgres::stop(self),
            ServerKind::Mariadb => mariadb::stop(self),
        }
        .with_context(|| {
            format!(
                "stopping the {} server in {}",
                self.kind,
                self.dir.display()
            )
        })
    }

    /// Read the handle that [`start`] saved in `DIR/ibench-server.json`.
    pub fn load(dir: &Path) -> Result<ServerHandle> {
        let path = dir.join(HANDLE_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => bail!(
                "no ibench server in {} ({} is missing); pass the --dir given to `ibench server start`",
                dir.display(),
                path.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a valid server handle", path.display()))
    }

    /// Write the handle to `DIR/ibench-server.json`.
    pub fn save(&self) -> Result<()> {
        let path = self.dir.join(HANDLE_FILE);
        let text =
            serde_json::to_string_pretty(self).context("cannot serialise the server handle")?;
        fs::write(&path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
    }

    /// Whether the server's main process is still alive (not gone, not a zombie).
    pub fn is_running(&self) -> bool {
        pid_alive(self.pid)
    }

    /// The server's main log file (`server.log` for PostgreSQL, `error.log` for MariaDB).
    pub fn log_path(&self) -> PathBuf {
        match self.kind {
            ServerKind::Postgres => self.dir.join(postgres::LOG_FILE),
            ServerKind::Mariadb => self.dir.join(mariadb::LOG_FILE),
        }
    }
}

/// Start a private server as `spec` says and return its handle (also saved in
/// `DIR/ibench-server.json`).
pub fn start(spec: &ServerSpec) -> Result<ServerHandle> {
    // Checks that create nothing come first.
    if let Some(dir) = &spec.dir {
        check_dir_usable(dir)?;
    }
    if let Some(config) = &spec.config
        && !config.is_file()
    {
        bail!(
            "config file {} does not exist; fix --config",
            config.display()
        );
    }
    if let Some(port) = spec.port {
        check_port_free(port)?;
    }
    match spec.kind {
        ServerKind::Postgres => postgres::start(spec),
        ServerKind::Mariadb => mariadb::start(spec),
    }
}

/// Whether process `pid` exists and is not a zombie. A zombie that is our own child is reaped.
pub fn pid_alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    match process_state(pid) {
        None => false,
        Some('Z') | Some('X') => {
            reap(pid);
            false
        }
        Some(_) => true,
    }
}

/// The state letter of a process, `None` when it does not exist.
fn process_state(pid: u32) -> Option<char> {
    crate::process::read_stat(pid).map(|s| s.state)
}

/// The command name of a process.
pub(crate) fn process_name(pid: u32) -> Option<String> {
    crate::process::name(pid)
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the two servers.

/// A random password of letters and digits from the kernel's random source.
pub(crate) fn generate_password() -> Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; PASSWORD_LEN * 2];
    let mut urandom = fs::File::open("/dev/urandom").context("cannot open /dev/urandom")?;
    urandom
        .read_exact(&mut bytes)
        .context("cannot read /dev/urandom")?;
    // Rejection sampling keeps every character equally likely (248 = 4 × 62).
    let password: String = bytes
        .iter()
        .filter(|&&b| usize::from(b) < ALPHABET.len() * 4)
        .take(PASSWORD_LEN)
        .map(|&b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
        .collect();
    if password.len() < PASSWORD_LEN {
        // 64 bytes with fewer than 32 below 248: about 1e-30; try again rather than shorten.
        return generate_password();
    }
    Ok(password)
}

/// Create `path` (it must not exist) readable by its owner only, write `text` into it, and
/// hand it to `owner` when given (the server's OS user, when it must read it).
pub(crate) fn write_private_file(path: &Path, text: &str, owner: Option<&RunAs>) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    if let Some(user) = owner {
        std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
            .with_context(|| format!("cannot hand {} to {}", path.display(), user.name))?;
    }
    Ok(())
}

/// Write `DIR/password` (mode 0600, a new file) holding `password` and a newline, owned by
/// `owner` when given (the server's OS user, when it must read it). Returns its path.
pub(crate) fn write_password_file(
    dir: &Path,
    password: &str,
    owner: Option<&RunAs>,
) -> Result<PathBuf> {
    let path = dir.join(PASSWORD_FILE);
    write_private_file(&path, &format!("{password}\n"), owner)?;
    Ok(path)
}

/// Read the password of the instance in `dir`, `None` when it has no password file (an
/// instance made by an older ibench).
pub(crate) fn read_password(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join(PASSWORD_FILE)).ok()?;
    text.lines().next().map(str::to_string)
}

/// Make `path` reachable by its owner only (mode 0700 for a dir, 0600 for a file), owned by
/// `owner` when given.
pub(crate) fn owner_only(path: &Path, owner: Option<&RunAs>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if path.is_dir() { 0o700 } else { 0o600 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot make {} owner-only", path.display()))?;
    if let Some(user) = owner {
        std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid)).with_context(|| {
            format!(
                "cannot hand {} to the OS user {}",
                path.display(),
                user.name
            )
        })?;
    }
    Ok(())
}

/// The URL query parameter that points a client at the instance's password file.
pub(crate) fn password_file_query(path: &Path) -> String {
    let mut value = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '&' | '#' | '?' | '+' | '=' | ' ' => {
                value.push_str(&format!("%{:02X}", u32::from(c)))
            }
            c => value.push(c),
        }
    }
    format!("{}={value}", crate::url::PASSWORD_FILE_PARAM)
}

/// Error unless `dir` is absent or an empty directory.
pub(crate) fn check_dir_usable(dir: &Path) -> Result<()> {
    match fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "instance dir {} exists and is not empty; choose another --dir or remove it",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotADirectory => bail!(
            "instance dir {} exists and is not a directory; choose another --dir",
            dir.display()
        ),
        Err(e) => Err(e).with_context(|| {
            format!(
                "cannot read instance dir {}; choose another --dir",
                dir.display()
            )
        }),
    }
}

/// A new server's instance dir ([`create_instance_dir`]), with the path of its socket
/// `socket` inside it checked, reachable by the server's OS user `run_as`, and owner-only
/// (the socket lives there, and so does the password).
pub(crate) fn prepare_instance_dir(
    spec: &ServerSpec,
    socket: &str,
    run_as: Option<&RunAs>,
) -> Result<PathBuf> {
    let dir = create_instance_dir(spec)?;
    check_socket_path(&dir.join(socket))?;
    if let Some(user) = run_as {
        check_reachable(&dir, user)?;
    }
    owner_only(&dir, run_as)?;
    Ok(dir)
}

/// Create the instance dir (the one in the spec or a fresh one under the temp dir) and return
/// its absolute path.
fn create_instance_dir(spec: &ServerSpec) -> Result<PathBuf> {
    let dir = match &spec.dir {
        Some(dir) => {
            check_dir_usable(dir)?;
            fs::create_dir_all(dir).with_context(|| {
                format!(
                    "cannot create instance dir {}; choose another --dir",
                    dir.display()
                )
            })?;
            dir.clone()
        }
        None => fresh_temp_dir(spec.kind)?,
    };
    let dir = std::path::absolute(&dir)
        .with_context(|| format!("cannot make {} absolute", dir.display()))?;
    Ok(dir)
}

/// A new, empty directory under the temp dir.
fn fresh_temp_dir(kind: ServerKind) -> Result<PathBuf> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!(
            "ibench-{}-{}-{n}-{nanos:x}",
            kind.name(),
            std::process::id()
        ));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "cannot create an instance dir under {}; pass --dir",
                        base.display()
                    )
                });
            }
        }
    }
    bail!(
        "cannot create a fresh instance dir under {}; pass --dir",
        base.display()
    )
}

/// Copy the config overlay into the instance dir, for the record. Returns the copy's path.
pub(crate) fn copy_config(config: &Path, dir: &Path) -> Result<PathBuf> {
    let name = config
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "overlay".to_string());
    let copy = dir.join(format!("config-{name}"));
    fs::copy(config, &copy).with_context(|| {
        format!(
            "cannot copy config {} to {}",
            config.display(),
            copy.display()
        )
    })?;
    Ok(copy)
}

/// Error unless `port` can be bound on 127.0.0.1.
pub(crate) fn check_port_free(port: u16) -> Result<()> {
    match TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => Ok(()),
        Err(e) => bail!(
            "port {port} on 127.0.0.1 is not available ({e}); choose another --port or omit --port to pick a free one"
        ),
    }
}

/// The port from the spec, or a free loopback port.
pub(crate) fn choose_port(spec: &ServerSpec) -> Result<u16> {
    if let Some(port) = spec.port {
        return Ok(port);
    }
    let listener =
        TcpListener::bind(("127.0.0.1", 0)).context("cannot find a free port on 127.0.0.1")?;
    let port = listener
        .local_addr()
        .context("cannot read the free port")?
        .port();
    Ok(port)
}

/// Error when a unix socket at `path` would be too long.
fn check_socket_path(path: &Path) -> Result<()> {
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        bail!(
            "the unix socket path {} is {len} bytes, more than the {MAX_SOCKET_PATH} allowed; choose a shorter --dir",
            path.display()
        );
    }
    Ok(())
}

/// Whether ibench runs as root.
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The OS user a server runs as: `name` when ibench runs as root (a server never runs as
/// root), none otherwise (it runs as ibench's user). `missing` is the error when root finds
/// no such user: what refuses and the package that makes the user.
pub(crate) fn server_user(name: &str, missing: impl FnOnce() -> String) -> Result<Option<RunAs>> {
    if !is_root() {
        return Ok(None);
    }
    match lookup_user(name)? {
        Some(user) => Ok(Some(user)),
        None => bail!("{}", missing()),
    }
}

/// An OS user a server runs as.
#[derive(Clone, Debug)]
pub(crate) struct RunAs {
    /// User name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
}

/// Look up an OS user by name.
pub(crate) fn lookup_user(name: &str) -> Result<Option<RunAs>> {
    let cname = CString::new(name).context("user name contains a NUL byte")?;
    let mut buf = vec![0 as libc::c_char; 64 * 1024];
    // SAFETY: passwd is a plain C struct; all-zero is a valid value for it.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer points to live, correctly sized memory owned by this frame.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 {
        bail!(
            "cannot look up OS user {name}: {}",
            std::io::Error::from_raw_os_error(rc)
        );
    }
    if result.is_null() {
        return Ok(None);
    }
    Ok(Some(RunAs {
        name: name.to_string(),
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    }))
}

/// A command for `program`, run as `run_as` when given (only possible as root).
pub(crate) fn command(program: &Path, run_as: Option<&RunAs>) -> Command {
    let mut cmd = Command::new(program);
    if let Some(user) = run_as {
        cmd.uid(user.uid).gid(user.gid);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Run a command to completion, capturing its output; append stdout and stderr to `log`.
pub(crate) fn run_capture(cmd: &mut Command, what: &str, log: Option<&Path>) -> Result<Output> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    if let Some(log) = log {
        let mut text = Vec::new();
        // The program and its arguments only: `{cmd:?}` would also show the environment set
        // for it (e.g. a password in MYSQL_PWD).
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        text.extend_from_slice(
            format!(
                "$ {} {}\n",
                cmd.get_program().to_string_lossy(),
                args.join(" ")
            )
            .as_bytes(),
        );
        text.extend_from_slice(&out.stdout);
        text.extend_from_slice(&out.stderr);
        append(log, &text)?;
    }
    Ok(out)
}

/// Append bytes to a file, creating it.
fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// First non-empty line of a command's stderr (else stdout), for one-line errors.
pub(crate) fn first_line(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no output")
        .to_string()
}

/// The last `n` lines of a log file, indented, or a note that it cannot be read.
pub(crate) fn tail(path: &Path, n: usize) -> String {
    let mut text = String::new();
    let read = (|| -> std::io::Result<()> {
        let mut file = fs::File::open(path)?;
        let len = file.metadata()?.len();
        let start = len.saturating_sub(16 * 1024);
        file.seek(SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(())
    })();
    if let Err(e) = read {
        return format!("    (cannot read {}: {e})", path.display());
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "    (the log is empty)".to_string();
    }
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reap `pid` if it is a zombie child of ours; harmless otherwise.
fn reap(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG on a specific pid only reaps that pid if it is our child.
    unsafe {
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}

/// Wait until `pid` is gone (or a zombie); true if it went within `timeout`.
pub(crate) fn wait_pid_gone(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if !pid_alive(pid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Send a signal to `pid`.
pub(crate) fn signal(pid: u32, sig: libc::c_int) -> Result<()> {
    let p = libc::pid_t::try_from(pid).with_context(|| format!("bad pid {pid}"))?;
    // SAFETY: kill has no memory-safety preconditions.
    let rc = unsafe { libc::kill(p, sig) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ESRCH) {
            return Ok(());
        }
        return Err(e).with_context(|| format!("cannot signal process {pid}"));
    }
    Ok(())
}

/// Stop `pid` with `first` (a graceful signal), then SIGKILL if it is still there after
/// `grace`. Errors if it survives even that.
pub(crate) fn terminate(pid: u32, first: libc::c_int, grace: Duration) -> Result<()> {
    if !pid_alive(pid) {
        return Ok(());
    }
    signal(pid, first)?;
    if wait_pid_gone(pid, grace) {
        return Ok(());
    }
    signal(pid, libc::SIGKILL)?;
    if wait_pid_gone(pid, Duration::from_secs(10)) {
        return Ok(());
    }
    bail!("process {pid} survived SIGKILL")
}

/// Whether process `pid` is alive and its command name is one of `names`. Guards against
/// signalling an unrelated process that reused a stale pid.
pub(crate) fn pid_is(pid: u32, names: &[&str]) -> bool {
    pid_alive(pid)
        && process_name(pid)
            .map(|n| names.iter().any(|want| n == *want))
            .unwrap_or(false)
}

pub(crate) use crate::process::{find_in, path_dirs};

/// Quote a string for `/bin/sh`.
pub(crate) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Error unless `user` can traverse every ancestor of `dir` (a server running as another OS
/// user must reach its data dir).
fn check_reachable(dir: &Path, user: &RunAs) -> Result<()> {
    for ancestor in dir.ancestors().skip(1) {
        let Ok(meta) = fs::metadata(ancestor) else {
            continue;
        };
        let mode = meta.mode();
        let ok = meta.uid() == user.uid && mode & 0o100 != 0
            || meta.gid() == user.gid && mode & 0o010 != 0
            || mode & 0o001 != 0
            || user.uid == 0;
        if !ok {
            bail!(
                "the OS user {} cannot reach {}: {} is mode {:o}; choose a --dir outside it (e.g. under /tmp)",
                user.name,
                dir.display(),
                ancestor.display(),
                mode & 0o7777
            );
        }
    }
    Ok(())
}

/// A size on disk for people: `165 MB`, `820 KB`, `1.2 GB` (powers of 1000).
pub fn size_text(bytes: u64) -> String {
    // A size, shown to two or three digits.
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} KB", b / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_empty_dir_is_refused() {
        let dir = std::env::temp_dir().join(format!("ibench-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("x"), "x").unwrap();
        let err = check_dir_usable(&dir).unwrap_err().to_string();
        assert!(err.contains("--dir"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
        check_dir_usable(&dir).unwrap();
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn own_process_is_alive() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
    }

    #[test]
    fn kind_names() {
        assert_eq!(ServerKind::Mariadb.to_string(), "mariadb");
        assert_eq!(
            serde_json::to_string(&ServerKind::Postgres).unwrap(),
            "\"postgres\""
        );
    }
}
