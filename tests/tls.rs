//! TLS against real servers: a private PostgreSQL with `ssl = on` and only `hostssl` rules,
//! and a private MariaDB with `require_secure_transport = ON`, both with a certificate for
//! `localhost` signed by a CA this test makes with `openssl`. Every mode connects or fails in
//! one clear line, and a run records what TLS negotiated.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::*;
use ibench::backend::mysql::config::MyConfig;
use ibench::backend::mysql::wire::MyWire;
use ibench::backend::postgres::config::PgConfig;
use ibench::backend::postgres::wire::PgWire;
use ibench::results::target::Engine;
use ibench::server::{self, ServerHandle, ServerKind, ServerSpec};
use ibench::workload::steps::parse_step_list;

/// The test's certificates: a CA, a server certificate for `localhost` signed by it, and a
/// second CA that signed nothing.
struct Certs {
    dir: PathBuf,
}

impl Certs {
    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    fn other_ca(&self) -> PathBuf {
        self.dir.join("other-ca.pem")
    }
    fn cert(&self) -> PathBuf {
        self.dir.join("server.pem")
    }
    fn key(&self) -> PathBuf {
        self.dir.join("server.key")
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl runs (apt-get install openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn certs() -> &'static Certs {
    static CERTS: OnceLock<Certs> = OnceLock::new();
    CERTS.get_or_init(|| {
        let dir = fresh_dir("tls-certs");
        std::fs::create_dir_all(&dir).unwrap();
        for (key, pem, cn) in [
            ("ca.key", "ca.pem", "ibench test CA"),
            ("other-ca.key", "other-ca.pem", "another CA"),
        ] {
            openssl(
                &dir,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "2",
                    "-keyout",
                    key,
                    "-out",
                    pem,
                    "-subj",
                    &format!("/CN={cn}"),
                ],
            );
        }
        openssl(
            &dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        );
        std::fs::write(
            dir.join("ext.cnf"),
            "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        openssl(
            &dir,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                "server.pem",
                "-extfile",
                "ext.cnf",
                // SHA-384: channel binding must hash with it, as the server does.
                "-sha384",
            ],
        );
        use std::os::unix::fs::PermissionsExt;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        Certs { dir }
    })
}

/// A private PostgreSQL with TLS on and every TCP rule `hostssl`.
fn postgres() -> &'static ServerHandle {
    static SERVER: OnceLock<ServerHandle> = OnceLock::new();
    SERVER.get_or_init(|| {
        let c = certs();
        // PostgreSQL refuses a key others can read, or one its OS user does not own.
        let key = c.dir.join("pg-server.key");
        std::fs::copy(c.key(), &key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        if unsafe { libc::geteuid() } == 0 {
            let out = Command::new("chown")
                .arg("postgres:")
                .arg(&key)
                .output()
                .unwrap();
            ok(&out);
        }
        let dir = fresh_dir("tls-pg");
        std::fs::create_dir_all(&dir).unwrap();
        let overlay = dir.join("tls.conf");
        std::fs::write(
            &overlay,
            format!(
                "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n",
                c.cert().display(),
                key.display()
            ),
        )
        .unwrap();
        let handle = server::start(&ServerSpec {
            kind: ServerKind::Postgres,
            config: Some(overlay),
            ..ServerSpec::default()
        })
        .unwrap_or_else(|e| panic!("cannot start a private PostgreSQL with TLS: {e:#}"));
        register_server(handle.clone());
        // Every TCP rule becomes hostssl: a plain TCP login is refused by the server.
        let mut admin = pg_connect(&handle.url);
        let hba = admin.query_value("SHOW hba_file").unwrap().unwrap();
        let rules = std::fs::read_to_string(&hba).unwrap();
        let ssl_only: String = rules
            .lines()
            .map(|l| match l.strip_prefix("host ") {
                Some(rest) => format!("hostssl {rest}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&hba, ssl_only).unwrap();
        admin.query("SELECT pg_reload_conf()").unwrap();
        handle
    })
}

/// `postgres://` to the server with `host` and extra parameters.
fn pg_url(host: &str, params: &str) -> String {
    let s = postgres();
    let url = client_url(&s.url);
    let url = url.replace("127.0.0.1", host);
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// Connect, retrying while the hba reload settles; the connection or the last error.
fn pg_try(url: &str) -> Result<PgWire, String> {
    let config = PgConfig::from_url(url)?;
    let mut last = String::new();
    for _ in 0..30 {
        match PgWire::connect(&config) {
            Ok(c) => return Ok(c),
            Err(e) => last = e.to_string(),
        }
        if !last.contains("no pg_hba.conf entry") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(last)
}

#[test]
fn postgres_verify_full_passes_with_the_right_ca_and_host_and_fails_in_one_line_otherwise() {
    let ca = certs().ca();
    let good = format!("sslmode=verify-full&sslrootcert={}", ca.display());
    let mut c = pg_try(&pg_url("localhost", &good)).unwrap();
    let tls = c.tls_info().expect("a verify-full connection is TLS");
    assert!(tls.version.starts_with("TLSv1."), "{tls}");
    assert_eq!(
        c.query_value("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .unwrap()
            .as_deref(),
        Some("true")
    );

    let e = pg_try(&pg_url("127.0.0.1", &good)).err().unwrap();
    assert!(e.contains("not for this host name"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let wrong_ca = format!(
        "sslmode=verify-full&sslrootcert={}",
        certs().other_ca().display()
    );
    let e = pg_try(&pg_url("localhost", &wrong_ca)).err().unwrap();
    assert!(e.contains("not signed by the given CA"), "{e}");
    // verify-ca checks the chain, not the name.
    let ca_only = format!("sslmode=verify-ca&sslrootcert={}", ca.display());
    assert!(pg_try(&pg_url("127.0.0.1", &ca_only)).is_ok());
}

#[test]
fn postgres_require_and_prefer_use_tls_and_disable_is_refused_by_the_server() {
    let mut c = pg_try(&pg_url("127.0.0.1", "sslmode=require")).unwrap();
    assert!(c.tls_info().is_some());
    assert_eq!(c.query_value("SELECT 1").unwrap().as_deref(), Some("1"));
    // libpq's default, prefer, takes TLS when the server offers it.
    assert!(
        pg_try(&pg_url("127.0.0.1", "connect_timeout=5"))
            .unwrap()
            .tls_info()
            .is_some()
    );
    let e = pg_try(&pg_url("127.0.0.1", "sslmode=disable"))
        .err()
        .unwrap();
    assert!(
        e.contains("no encryption") || e.contains("pg_hba.conf"),
        "{e}"
    );
}

/// SCRAM channel binding against the real server (scram-sha-256 on `hostssl` lines, TLS on,
/// so it offers SCRAM-SHA-256-PLUS), whose certificate is signed with SHA-384 (so the binding
/// is its SHA-384 hash, as PostgreSQL computes it): `channel_binding=require` logs in over TLS, checked
/// certificate or not, and the server sees the binding; over the Unix socket (no TLS) it is
/// refused before the password is answered.
#[test]
fn postgres_channel_binding_require_passes_over_tls_and_is_refused_without() {
    for params in [
        "sslmode=require&channel_binding=require".to_string(),
        format!(
            "sslmode=verify-full&sslrootcert={}&channel_binding=require",
            certs().ca().display()
        ),
    ] {
        let mut c = pg_try(&pg_url("localhost", &params)).unwrap();
        assert!(c.tls_info().is_some());
        assert_eq!(c.query_value("SELECT 1").unwrap().as_deref(), Some("1"));
    }
    // The same through the socket: SCRAM without TLS cannot bind.
    let s = postgres();
    let password = std::fs::read_to_string(s.dir.join("password")).unwrap();
    let url = format!(
        "postgres://postgres:{}@/postgres?host={}&port={}&channel_binding=require",
        password.trim(),
        s.socket_dir.display(),
        s.port
    );
    let e = pg_try(&url).err().unwrap();
    assert!(e.contains("channel_binding=require needs TLS"), "{e}");
    // prefer (the default) binds too where it can, and plain SCRAM still logs in over the
    // socket.
    let url = url.replace("channel_binding=require", "channel_binding=prefer");
    assert!(pg_try(&url).is_ok());
}

#[test]
fn a_run_over_tls_records_its_version_and_cipher() {
    let url = pg_url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", certs().ca().display()),
    );
    let mut opts = small_options(&url, "tls-run");
    opts.steps = parse_step_list("l.i0").unwrap();
    opts.load_rows = 1000;
    let (run, _) = run_and_read(opts);
    let tls = run
        .target
        .as_ref()
        .unwrap()
        .tls
        .as_ref()
        .expect("run.json records TLS");
    assert!(tls.version.starts_with("TLSv1."), "{tls}");
    assert!(!tls.cipher.is_empty());
}

/// A private MariaDB that refuses plain TCP.
fn mariadb() -> &'static ServerHandle {
    static SERVER: OnceLock<ServerHandle> = OnceLock::new();
    SERVER.get_or_init(|| {
        let c = certs();
        let dir = fresh_dir("tls-maria");
        std::fs::create_dir_all(&dir).unwrap();
        let overlay = dir.join("tls.cnf");
        std::fs::write(
            &overlay,
            format!(
                "[mysqld]\nssl_cert = {}\nssl_key = {}\nssl_ca = {}\nrequire_secure_transport = ON\n",
                c.cert().display(),
                c.key().display(),
                c.ca().display()
            ),
        )
        .unwrap();
        let handle = server::start(&ServerSpec {
            kind: ServerKind::Mariadb,
            engine: Engine::Innodb,
            config: Some(overlay),
            ..ServerSpec::default()
        })
        .unwrap_or_else(|e| panic!("cannot start a private MariaDB with TLS: {e:#}"));
        register_server(handle.clone());
        handle
    })
}

fn my_try(host: &str, params: &str) -> Result<MyWire, String> {
    let url = client_url(&mariadb().url).replace("127.0.0.1", host);
    let sep = if url.contains('?') { '&' } else { '?' };
    let config = MyConfig::from_url(&format!("{url}{sep}{params}"))?;
    MyWire::connect(&config).map_err(|e| e.to_string())
}

#[test]
fn mariadb_verify_identity_passes_with_the_right_ca_and_host_and_fails_in_one_line_otherwise() {
    let ca = certs().ca();
    let good = format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca.display());
    let mut c = my_try("localhost", &good).unwrap();
    let tls = c.tls_info().expect("TLS");
    assert!(tls.version.starts_with("TLSv1."), "{tls}");
    let cipher = c.query("SHOW STATUS LIKE 'Ssl_cipher'").unwrap();
    assert!(
        cipher.rows[0][1].as_deref().is_some_and(|v| !v.is_empty()),
        "the server sees TLS"
    );
    let e = my_try("127.0.0.1", &good).err().unwrap();
    assert!(e.contains("not for this host name"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let wrong = format!(
        "ssl-mode=VERIFY_IDENTITY&ssl-ca={}",
        certs().other_ca().display()
    );
    let e = my_try("localhost", &wrong).err().unwrap();
    assert!(e.contains("not signed by the given CA"), "{e}");
    let ca_only = format!("ssl-mode=VERIFY_CA&ssl-ca={}", ca.display());
    assert!(my_try("127.0.0.1", &ca_only).is_ok());
}

#[test]
fn mariadb_required_connects_and_disabled_is_refused_by_the_server() {
    let mut c = my_try("127.0.0.1", "ssl-mode=REQUIRED").unwrap();
    assert!(c.tls_info().is_some());
    assert_eq!(c.query("SELECT 1").unwrap().first(), Some("1"));
    let e = my_try("127.0.0.1", "ssl-mode=DISABLED").err().unwrap();
    assert!(
        e.contains("secure transport") || e.contains("3159") || e.contains("1045"),
        "{e}"
    );
}

#[test]
fn postgres_allow_retries_with_tls_when_the_server_refuses_plain() {
    let mut c = pg_try(&pg_url("127.0.0.1", "sslmode=allow")).unwrap();
    assert!(
        c.tls_info().is_some(),
        "hostssl-only: the retry is over TLS"
    );
    assert_eq!(c.query_value("SELECT 1").unwrap().as_deref(), Some("1"));
}

/// `PGSSLMODE` and `PGSSLROOTCERT` in the environment are read as libpq reads them: the
/// command line run verifies the server and records TLS.
#[test]
fn the_cli_reads_pgsslmode_and_pgsslrootcert_from_the_environment() {
    let out_dir = fresh_dir("tls-cli");
    let url = postgres().url.replace("127.0.0.1", "localhost");
    let run = |root: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
            .args([
                "run",
                "--quiet",
                "--url",
                &url,
                "--steps",
                "l.i0",
                "--load-rows",
                "500",
            ])
            .arg("--out")
            .arg(&out_dir)
            .env("PGSSLMODE", "verify-full")
            .env("PGSSLROOTCERT", root)
            .output()
            .unwrap()
    };
    let wrong = run(&certs().other_ca());
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success());
    assert!(stderr.contains("not signed by the given CA"), "{stderr}");
    let ok = run(&certs().ca());
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let record = ibench::results::read_run(&out_dir).unwrap();
    assert!(record.target.unwrap().tls.is_some());
}

/// A statement on a TLS connection is cancelled, the cancel request itself over TLS (an
/// `SSLRequest` first, as libpq 17 does): the server takes it and the statement ends with
/// SQLSTATE 57014.
#[test]
fn postgres_a_statement_on_a_tls_connection_is_cancelled_over_tls() {
    let mut c = pg_try(&pg_url("localhost", "sslmode=require")).unwrap();
    let key = c.cancel_key();
    assert!(key.over_tls());
    let e = cancelled_after_300ms(
        move || key.cancel().expect("the cancel was sent"),
        || c.query("SELECT pg_sleep(60)").expect_err("cancelled"),
    );
    assert_eq!(
        e.server().map(|s| s.sqlstate.as_str()),
        Some("57014"),
        "{e}"
    );
}
