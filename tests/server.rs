//! Integration tests of `ibench::server`: start private PostgreSQL, MariaDB (InnoDB) and
//! MariaDB (MyRocks) instances in fresh temp dirs, talk to them with their own command-line
//! clients, and stop them again. The servers must be installed (see `scripts/test.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

use ibench::backend::Engine;
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
        server::stop(&handle.dir).unwrap();
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
        .args(["-X", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres"])
        .args(["-p", &port.to_string(), "-tAc", sql]))
}

/// `mariadb -e SQL` over TCP on 127.0.0.1 to the handle's port, database ibench.
fn mariadb_query(handle: &ServerHandle, sql: &str) -> String {
    let port = url_port(&handle.url);
    let client = ["mariadb", "mysql"]
        .iter()
        .map(|n| Path::new("/usr/bin").join(n))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("mariadb"));
    run(Command::new(client)
        .args([
            "--no-defaults",
            "--protocol=TCP",
            "-h",
            "127.0.0.1",
            "-uroot",
        ])
        .arg(format!("-P{port}"))
        .args(["--batch", "--skip-column-names", "ibench", "-e", sql]))
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
    psql_query(
        h,
        "CREATE TABLE t (id bigint primary key); INSERT INTO t VALUES (1)",
    );
    assert_eq!(psql_query(h, "SELECT count(*) FROM t"), "1");

    let pid = h.pid;
    let handle = guard.stop_by_dir();
    assert!(pid_gone(pid), "postmaster {pid} still running after stop");
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
    assert!(h.url.ends_with("/ibench"));
    assert!(h.version.contains("MariaDB"), "{}", h.version);
    assert!(h.dir.join("mysqld.sock").exists());

    assert_eq!(mariadb_query(h, "SELECT 1"), "1");
    assert_eq!(mariadb_query(h, "SELECT DATABASE()"), "ibench");
    assert_eq!(mariadb_query(h, "SELECT @@max_connections"), "77");
    mariadb_query(
        h,
        "CREATE TABLE t (id BIGINT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO t VALUES (1)",
    );
    assert_eq!(mariadb_query(h, "SELECT count(*) FROM t"), "1");

    let pid = h.pid;
    let dir = h.dir.clone();
    let handle = guard.stop_by_dir();
    assert!(pid_gone(pid), "mariadbd {pid} still running after stop");
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

    let pid = h.pid;
    let dir = h.dir.clone();
    let handle = guard.stop_by_dir();
    assert!(pid_gone(pid), "mariadbd {pid} still running after stop");
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
