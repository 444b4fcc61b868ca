//! Integration tests of `ibench::server`: start private PostgreSQL, MariaDB (InnoDB) and
//! MariaDB (MyRocks) instances in fresh temp dirs, talk to them with their own command-line
//! clients, and stop them again. The servers must be installed (see `scripts/test.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

use ibench::results::target::Engine;
use ibench::server::{self, ServerHandle, ServerKind, ServerSpec};

/// Stops the server when dropped, so a failed assertion leaves no server behind.
struct Guard(Option<ServerHandle>);

impl Guard {
    fn handle(&self) -> &ServerHandle {
        self.0.as_ref().unwrap()
    }

    /// Stop through the free function (as another process would) and disarm the guard.
    fn stop_by_dir(mut self) -> ServerHandle {
        let handle = self.0.take().unwrap();
        ibench::replication::pair::stop_pair(&handle.dir).unwrap();
        handle
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            let _ = handle.stop();
        }
    }
}

/// A path under the temp dir that does not exist yet.
fn fresh_path(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    std::env::temp_dir().join(format!(
        "ibench-test-{tag}-{}-{nanos:x}",
        std::process::id()
    ))
}

/// Whether the process is gone (a zombie counts as gone: it no longer serves).
/// Makes table `t` with `create` (which inserts one row) and reads its count back with `query`
/// (psql or the mariadb client).
fn check_one_row_table(h: &ServerHandle, query: fn(&ServerHandle, &str) -> String, create: &str) {
    query(h, create);
    assert_eq!(query(h, "SELECT count(*) FROM t"), "1");
}

/// Stops the server by its dir and asserts that its process (`what`) is gone; its handle.
fn stop_and_check_gone(guard: Guard, what: &str) -> ServerHandle {
    let pid = guard.handle().pid;
    let handle = guard.stop_by_dir();
    assert!(pid_gone(pid), "{what} {pid} still running after stop");
    handle
}

fn pid_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat[stat.rfind(')').unwrap() + 1..].trim_start();
            state.starts_with('Z') || state.starts_with('X')
        }
    }
}

/// Port number at the end of the URL's authority.
fn url_port(url: &str) -> u16 {
    let rest = &url[url.find('@').unwrap() + 1..];
    let hostport = &rest[..rest.find('/').unwrap()];
    hostport.rsplit(':').next().unwrap().parse().unwrap()
}

/// Run a client command and return its trimmed stdout; panic with its stderr if it fails.
fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// psql next to the server binaries, else on PATH.
fn psql(handle: &ServerHandle) -> PathBuf {
    let p = handle.bindir.join("psql");
    if p.exists() { p } else { PathBuf::from("psql") }
}

/// `psql -c SQL` over TCP on 127.0.0.1 to the handle's port.
fn psql_query(handle: &ServerHandle, sql: &str) -> String {
    let port = url_port(&handle.url);
    run(Command::new(psql(handle))
        .env("PGPASSWORD", password(handle))
        .args(["-X", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres"])
        .args(["-p", &port.to_string(), "-tAc", sql]))
}

/// `mariadb -e SQL` over TCP on 127.0.0.1 to the handle's port, database ibench.
fn mariadb_query(handle: &ServerHandle, sql: &str) -> String {
    let port = url_port(&handle.url);
    run(mariadb_as_root_over_tcp(port)
        .env("MYSQL_PWD", password(handle))
        .args(["--batch", "--skip-column-names", "ibench", "-e", sql]))
}

/// The `mariadb` client as root over TCP to 127.0.0.1:`port`, no option files read.
fn mariadb_as_root_over_tcp(port: impl std::fmt::Display) -> Command {
    let mut c = Command::new(mariadb_client());
    c.args([
        "--no-defaults",
        "--protocol=TCP",
        "-h",
        "127.0.0.1",
        "-uroot",
    ])
    .arg(format!("-P{port}"));
    c
}

/// The instance's password, from the file its URL names.
fn password(handle: &ServerHandle) -> String {
    let text = std::fs::read_to_string(handle.dir.join(server::PASSWORD_FILE)).unwrap();
    text.trim_end().to_string()
}

/// The MariaDB command-line client.
fn mariadb_client() -> PathBuf {
    ["mariadb", "mysql"]
        .iter()
        .map(|n| Path::new("/usr/bin").join(n))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("mariadb"))
}

/// Run `cmd` as the OS user `nobody` and return (success, stderr).
fn as_nobody(cmd: &mut Command) -> (bool, String) {
    use std::os::unix::process::CommandExt;
    let out = cmd
        .uid(NOBODY_UID)
        .gid(NOBODY_UID)
        .env_remove("PGPASSWORD")
        .env_remove("MYSQL_PWD")
        .current_dir("/")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// uid and gid of `nobody` on Debian.
const NOBODY_UID: u32 = 65534;

/// What a private instance shows to other local users: an owner-only dir (so no socket), a
/// password file only its owner reads, the password nowhere else, and a TCP port that wants
/// the password.
fn check_closed_to_others(h: &ServerHandle) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir_mode = std::fs::metadata(&h.dir).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o777, 0o700, "instance dir mode {dir_mode:o}");
    let file = h.dir.join(server::PASSWORD_FILE);
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let secret = password(h);
    assert!(
        secret.len() >= 32,
        "a weak password: {} chars",
        secret.len()
    );
    assert!(!h.url.contains(&secret));
    assert!(
        h.url.contains(&format!("password_file={}", file.display())),
        "{}",
        h.url
    );
    // The password is in no other file of the instance (logs, handle, config).
    for entry in walk(&h.dir) {
        if entry == file || entry.starts_with(&h.data_dir) {
            continue;
        }
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&secret),
            "the password is in {}",
            entry.display()
        );
    }
    // The server does not run as root.
    let status = std::fs::read_to_string(format!("/proc/{}/status", h.pid)).unwrap();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert!(
        uid_line.split_whitespace().nth(1) != Some("0"),
        "the server runs as root: {uid_line}"
    );
    if std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        != 0
    {
        eprintln!("not root: cannot try the connection as another OS user");
        return;
    }
    let port = h.port.to_string();
    let socket_dir = h.dir.display().to_string();
    match h.kind {
        ServerKind::Postgres => {
            let psql = psql(h);
            for host in ["127.0.0.1", socket_dir.as_str()] {
                let (ok, stderr) = as_nobody(
                    Command::new(&psql)
                        .args(["-X", "-w", "-h", host, "-p", &port, "-U", "postgres"])
                        .args(["-d", "postgres", "-tAc", "SELECT 1"]),
                );
                assert!(!ok, "nobody got in through {host}");
                assert!(
                    stderr.contains("password") || stderr.contains("Permission denied"),
                    "{host}: {stderr}"
                );
            }
        }
        ServerKind::Mariadb => {
            let (ok, stderr) = as_nobody(mariadb_as_root_over_tcp(port).args(["-e", "SELECT 1"]));
            assert!(!ok, "nobody got in over TCP");
            assert!(stderr.contains("Access denied"), "{stderr}");
            let (ok, stderr) = as_nobody(
                Command::new(mariadb_client())
                    .args(["--no-defaults", "-uroot"])
                    .arg(format!("--socket={}", h.dir.join("mysqld.sock").display()))
                    .args(["-e", "SELECT 1"]),
            );
            assert!(!ok, "nobody got in through the socket");
            assert!(
                stderr.contains("Permission denied") || stderr.contains("Can't connect"),
                "{stderr}"
            );
        }
    }
}

/// Every regular file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

/// The handle saved in the dir equals the one returned.
fn check_round_trip(handle: &ServerHandle) {
    let loaded = ServerHandle::load(&handle.dir).unwrap();
    assert_eq!(
        serde_json::to_value(&loaded).unwrap(),
        serde_json::to_value(handle).unwrap()
    );
}

/// Common checks on a fresh handle.
fn check_handle(handle: &ServerHandle, kind: ServerKind) {
    assert_eq!(handle.kind, kind);
    assert!(handle.dir.is_absolute());
    assert_eq!(handle.data_dir, handle.dir.join("data"));
    assert_eq!(handle.socket_dir, handle.dir);
    assert_eq!(url_port(&handle.url), handle.port);
    assert!(handle.url.contains("127.0.0.1"));
    assert!(!handle.version.is_empty());
    assert!(
        !pid_gone(handle.pid),
        "server pid {} not running",
        handle.pid
    );
    assert!(handle.is_running());
    assert!(handle.dir.join("ibench-server.json").is_file());
    check_round_trip(handle);
}

#[test]
fn postgres_starts_answers_and_stops() {
    use std::os::unix::fs::PermissionsExt;
    let dir = fresh_path("pg");
    let config = fresh_path("pg-conf");
    std::fs::write(&config, "shared_buffers = 48MB\nmax_connections = 57\n").unwrap();
    let spec = ServerSpec {
        kind: ServerKind::Postgres,
        config: Some(config.clone()),
        dir: Some(dir.clone()),
        ..ServerSpec::default()
    };
    let guard = Guard(Some(server::start(&spec).unwrap()));
    let h = guard.handle();
    check_handle(h, ServerKind::Postgres);
    assert!(h.url.starts_with("postgres://postgres@127.0.0.1:"));
    assert!(h.version.contains("PostgreSQL"), "{}", h.version);
    let mode = std::fs::metadata(&h.data_dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    assert!(dir.join(format!(".s.PGSQL.{}", h.port)).exists());
    check_closed_to_others(h);
    assert!(
        dir.join(format!(
            "config-{}",
            config.file_name().unwrap().to_string_lossy()
        ))
        .is_file()
    );

    assert_eq!(psql_query(h, "SELECT 1"), "1");
    assert_eq!(psql_query(h, "SHOW shared_buffers"), "48MB");
    assert_eq!(psql_query(h, "SHOW max_connections"), "57");
    check_one_row_table(
        h,
        psql_query,
        "CREATE TABLE t (id bigint primary key); INSERT INTO t VALUES (1)",
    );

    let handle = stop_and_check_gone(guard, "postmaster");
    // Stopping again is harmless.
    handle.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&config).unwrap();
}

#[test]
fn mariadb_innodb_starts_answers_and_stops() {
    let config = fresh_path("my-cnf");
    std::fs::write(&config, "[mysqld]\nmax_connections = 77\n").unwrap();
    let spec = ServerSpec {
        kind: ServerKind::Mariadb,
        engine: Engine::Innodb,
        config: Some(config.clone()),
        ..ServerSpec::default()
    };
    let guard = Guard(Some(server::start(&spec).unwrap()));
    let h = guard.handle();
    check_handle(h, ServerKind::Mariadb);
    assert!(h.url.starts_with("mysql://root@127.0.0.1:"));
    assert!(h.url.contains("/ibench?password_file="), "{}", h.url);
    assert!(h.version.contains("MariaDB"), "{}", h.version);
    assert!(h.dir.join("mysqld.sock").exists());
    check_closed_to_others(h);
    // The start-up SQL (it held the password's hash) is gone.
    assert!(!h.dir.join("init.sql").exists());

    assert_eq!(mariadb_query(h, "SELECT 1"), "1");
    assert_eq!(mariadb_query(h, "SELECT DATABASE()"), "ibench");
    assert_eq!(mariadb_query(h, "SELECT @@max_connections"), "77");
    check_one_row_table(
        h,
        mariadb_query,
        "CREATE TABLE t (id BIGINT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO t VALUES (1)",
    );

    let (pid, dir) = (h.pid, h.dir.clone());
    let handle = stop_and_check_gone(guard, "mariadbd");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "mariadbd {pid} was not reaped"
    );
    handle.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&config).unwrap();
}

#[test]
fn mariadb_rocksdb_starts_answers_and_stops() {
    let spec = ServerSpec {
        kind: ServerKind::Mariadb,
        engine: Engine::Rocksdb,
        ..ServerSpec::default()
    };
    let guard = Guard(Some(server::start(&spec).unwrap()));
    let h = guard.handle();
    check_handle(h, ServerKind::Mariadb);
    assert_eq!(h.engine, Engine::Rocksdb);

    let support = mariadb_query(
        h,
        "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE='ROCKSDB'",
    );
    assert!(support == "YES" || support == "DEFAULT", "{support}");
    mariadb_query(
        h,
        "CREATE TABLE r (id BIGINT PRIMARY KEY, v INT) ENGINE=ROCKSDB; INSERT INTO r VALUES (1, 2), (3, 4)",
    );
    assert_eq!(mariadb_query(h, "SELECT sum(v) FROM r"), "6");
    assert_eq!(
        mariadb_query(
            h,
            "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA='ibench' AND TABLE_NAME='r'"
        ),
        "ROCKSDB"
    );

    let dir = h.dir.clone();
    let handle = stop_and_check_gone(guard, "mariadbd");
    assert!(!handle.is_running());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn non_empty_dir_is_refused() {
    let dir = fresh_path("busy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("something"), "x").unwrap();
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        let spec = ServerSpec {
            kind,
            dir: Some(dir.clone()),
            ..ServerSpec::default()
        };
        let err = server::start(&spec).unwrap_err().to_string();
        assert!(err.contains("--dir"), "{err}");
        assert!(err.contains(&dir.display().to_string()), "{err}");
    }
    // Nothing was added to the dir.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bogus_bindir_is_refused() {
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        let dir = fresh_path("bogus");
        let spec = ServerSpec {
            kind,
            bindir: Some(PathBuf::from("/nonexistent/ibench-bogus/bin")),
            dir: Some(dir.clone()),
            ..ServerSpec::default()
        };
        let err = format!("{:#}", server::start(&spec).unwrap_err());
        assert!(err.contains("--bindir"), "{err}");
        assert!(
            !dir.exists(),
            "start created {} before failing",
            dir.display()
        );
    }
    // A bindir that lacks the server must not fall back to a sibling `../sbin`: with
    // `--bindir /nonexistent` MariaDB used to start the system's /sbin/mariadbd, and
    // /usr/bin has the clients but not the server (it is in /usr/sbin).
    for bindir in ["/nonexistent", "/usr/bin"] {
        let dir = fresh_path("bogus-sibling");
        let spec = ServerSpec {
            kind: ServerKind::Mariadb,
            bindir: Some(PathBuf::from(bindir)),
            dir: Some(dir.clone()),
            ..ServerSpec::default()
        };
        let err = format!("{:#}", server::start(&spec).unwrap_err());
        assert!(
            err.contains("--bindir") && err.contains("mariadbd"),
            "{err}"
        );
        assert!(!dir.exists());
    }
}

#[test]
fn busy_port_is_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let spec = ServerSpec {
        kind: ServerKind::Postgres,
        port: Some(port),
        ..ServerSpec::default()
    };
    let err = server::start(&spec).unwrap_err().to_string();
    assert!(err.contains("--port"), "{err}");
}

#[test]
fn load_from_empty_dir_names_the_fix() {
    let dir = fresh_path("nohandle");
    let err = ServerHandle::load(&dir).unwrap_err().to_string();
    assert!(err.contains("--dir"), "{err}");
}
