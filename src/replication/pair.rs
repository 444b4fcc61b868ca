//! Private replicas: `ibench server start KIND --dir R --replica-of P` makes a new instance in
//! R that replicates the private primary in P, and `ibench server stop` stops such a pair in
//! order (docs/replication.md).
//!
//! - PostgreSQL: a streaming standby. `pg_basebackup` copies P's data over a replication
//!   connection on loopback as `postgres` with P's password (initdb's `pg_hba.conf` allows
//!   replication from 127.0.0.1 with the password method every private instance uses) and
//!   creates a physical replication slot; a bindir without `pg_basebackup` (the registry
//!   builds) gets the slot and a file copy of P's data dir under the low-level backup API
//!   (`server::data_copy`); the standby's `primary_conninfo` reads the password
//!   from a pgpass file in R (mode 0600), never from the config. `--sync` names the standby in
//!   the primary's `synchronous_standby_names` and sets `synchronous_commit = remote_apply`, so
//!   a commit returns once the standby has applied it.
//! - MariaDB: GTID replication. The primary must write a binary log (`ibench server start
//!   mariadb --log-bin`: `log_bin`, `server_id = 1`, row format) and hold no tables yet (the
//!   replica is a fresh instance that starts at the primary's current GTID position, so it is
//!   attached before the run loads anything). A replication user of its own, made on the
//!   primary outside the binary log, with a random password; the replica runs read-only with
//!   `server_id` = its port. `--semisync` turns on semi-synchronous replication on both sides.
//!
//! The replica's instance dir is made and closed like any private server's (owner-only, its
//! own socket, the superuser's password in `R/password`: the primary's for PostgreSQL, whose
//! data it copies; a new one for MariaDB). `R/ibench-replica.json` names the primary;
//! `P/ibench-replicas.json` lists the replicas. Stopping a primary stops its live replicas
//! first; stopping a replica takes it off the primary (its slot or user dropped, the
//! synchronous setting reset), so the primary's commits never wait for a replica that is gone.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::wal_keep::SlotKeep;
use crate::backend::link::SqlLink;
use crate::backend::mysql::replica_setup;
use crate::backend::postgres::{major_of_version, standby};
use crate::results::replication::ReplicaMode;
use crate::server::{
    RunAs, ServerHandle, ServerKind, ServerSpec, choose_port, command, first_line, mariadb,
    postgres, prepare_instance_dir, read_password, run_capture, write_password_file,
    write_private_file,
};

/// The file in a replica's instance dir that names its primary.
pub const REPLICA_FILE: &str = "ibench-replica.json";

/// The file in a primary's instance dir that lists its replicas' dirs.
pub const REPLICAS_FILE: &str = "ibench-replicas.json";

/// The pgpass file a PostgreSQL standby reads its primary's password from.
const PGPASS_FILE: &str = "pgpass";

/// The output of pg_basebackup, in the replica's instance dir.
const BASEBACKUP_LOG: &str = "basebackup.log";

/// How long a new replica may take to stream (PostgreSQL) or run both replication threads
/// (MariaDB).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(30);

/// The login timeout of ibench's own connections to the pair.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Error unless `mode` is one `kind` has: `sync` is PostgreSQL's, `semisync` MariaDB's.
pub fn check_mode(mode: ReplicaMode, kind: ServerKind) -> Result<()> {
    match (mode, kind) {
        (ReplicaMode::Sync, ServerKind::Mariadb) => {
            bail!("MariaDB has no synchronous replication: use --semisync (or neither)")
        }
        (ReplicaMode::Semisync, ServerKind::Postgres) => {
            bail!("--semisync is MariaDB's: a PostgreSQL standby is made synchronous with --sync")
        }
        _ => Ok(()),
    }
}

/// What a replica's dir records about its primary (`R/ibench-replica.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplicaLink {
    /// The primary's instance dir.
    pub primary_dir: PathBuf,
    /// Asynchronous, synchronous or semi-synchronous.
    pub mode: ReplicaMode,
    /// PostgreSQL: the replication slot and the standby's `application_name`; MariaDB: the
    /// replication user.
    pub name: String,
}

impl ReplicaLink {
    /// The link saved in `dir`, `None` when `dir` is not a replica's.
    pub fn load(dir: &Path) -> Option<ReplicaLink> {
        let text = fs::read_to_string(dir.join(REPLICA_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join(REPLICA_FILE);
        let text = serde_json::to_string_pretty(self).context("cannot serialise the link")?;
        fs::write(&path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
    }
}

/// The MariaDB server arguments of a primary that replicas can attach to (`server start
/// mariadb --log-bin`): a binary log in the data dir, `server_id` 1, row format.
pub fn log_bin_args() -> Vec<String> {
    ["--log-bin=binlog", "--server-id=1", "--binlog-format=ROW"]
        .map(str::to_string)
        .to_vec()
}

/// Start a private MariaDB that writes a binary log ([`log_bin_args`]), so that replicas can
/// attach (`ibench server start mariadb --log-bin`). PostgreSQL needs no such flag: its
/// defaults (`wal_level = replica`, ten WAL senders and slots) serve standbys.
pub fn start_logging_primary(spec: &ServerSpec) -> Result<ServerHandle> {
    if spec.kind != ServerKind::Mariadb {
        bail!(
            "--log-bin is MariaDB's: a private PostgreSQL serves standbys as it is (drop --log-bin)"
        );
    }
    if let Some(dir) = &spec.dir {
        crate::server::check_dir_usable(dir)?;
    }
    if let Some(port) = spec.port {
        crate::server::check_port_free(port)?;
    }
    mariadb::start_with(spec, &log_bin_args())
}

/// Start a replica of the private primary in `primary_dir`, as `spec` says (its dir, port,
/// bindir, config), following it in `mode`; a PostgreSQL primary's slots get the default
/// bound on the WAL they keep ([`start_replica_keeping`]). Returns the replica's handle
/// (saved in its dir).
pub fn start_replica(
    spec: &ServerSpec,
    primary_dir: &Path,
    mode: ReplicaMode,
) -> Result<ServerHandle> {
    start_replica_keeping(spec, primary_dir, mode, SlotKeep::Auto)
}

/// [`start_replica`], with `keep` the bound on the WAL a PostgreSQL primary's slots may keep
/// (`--slot-keep`, set as the standby attaches: `server::wal_keep`).
pub fn start_replica_keeping(
    spec: &ServerSpec,
    primary_dir: &Path,
    mode: ReplicaMode,
    keep: SlotKeep,
) -> Result<ServerHandle> {
    if spec.kind == ServerKind::Mariadb && keep != SlotKeep::Auto {
        bail!("--slot-keep is PostgreSQL's (a MariaDB replica has no slot): drop it");
    }
    let primary = ServerHandle::load(primary_dir).context(
        "--replica-of must name the --dir of a server started with `ibench server start`",
    )?;
    if primary.kind != spec.kind {
        bail!(
            "--replica-of {} holds a {} server, not {}: a replica is the same server as its primary",
            primary_dir.display(),
            primary.kind,
            spec.kind
        );
    }
    if !primary.is_running() {
        bail!(
            "the primary in {} is not running (pid {}): start a new one with `ibench server start`, then its replica (--replica-of)",
            primary_dir.display(),
            primary.pid
        );
    }
    if ReplicaLink::load(primary_dir).is_some() {
        bail!(
            "{} is itself a replica: pass the primary's dir to --replica-of (cascading replicas are not supported)",
            primary_dir.display()
        );
    }
    check_mode(mode, spec.kind)?;
    if spec.kind == ServerKind::Postgres
        && let Some(warning) =
            super::wal_keep::check(major_of_version(&primary.version).unwrap_or(u32::MAX), keep)?
    {
        crate::say!("{warning}");
    }
    if let Some(dir) = &spec.dir {
        crate::server::check_dir_usable(dir)?;
    }
    if let Some(port) = spec.port {
        crate::server::check_port_free(port)?;
    }
    let (handle, name) = match spec.kind {
        ServerKind::Postgres => start_postgres(spec, &primary, mode)?,
        ServerKind::Mariadb => start_mariadb(spec, &primary, mode)?,
    };
    let link = ReplicaLink {
        primary_dir: primary.dir.clone(),
        mode,
        name,
    };
    let saved = link
        .save(&handle.dir)
        .and_then(|()| add_replica(&primary.dir, &handle.dir))
        .and_then(|()| bound_slots(&primary, keep));
    if let Err(e) = saved {
        let _ = stop_replica(&handle, &link);
        return Err(e);
    }
    Ok(handle)
}

/// A PostgreSQL primary's slots get the bound `keep` once its standby is attached; said on the
/// terminal (`server::wal_keep`).
fn bound_slots(primary: &ServerHandle, keep: SlotKeep) -> Result<()> {
    if primary.kind == ServerKind::Postgres
        && let Some(said) = super::wal_keep::bound(primary, keep)?
    {
        crate::say!("{said}");
    }
    Ok(())
}

/// Stop the server in `dir` and, first, its live replicas when it is a primary; a replica is
/// taken off its primary as it stops. Returns the replicas' dirs stopped first.
pub fn stop_pair(dir: &Path) -> Result<Vec<PathBuf>> {
    let handle = ServerHandle::load(dir)?;
    let mut stopped = Vec::new();
    for replica_dir in replicas_of(dir) {
        let Ok(replica) = ServerHandle::load(&replica_dir) else {
            continue;
        };
        if !replica.is_running() {
            continue;
        }
        match ReplicaLink::load(&replica_dir) {
            Some(link) => stop_replica(&replica, &link)?,
            None => replica.stop()?,
        }
        stopped.push(replica_dir);
    }
    match ReplicaLink::load(dir) {
        Some(link) => stop_replica(&handle, &link)?,
        None => handle.stop()?,
    }
    Ok(stopped)
}

/// The replicas' dirs a primary's dir lists (none when it lists none).
pub fn replicas_of(dir: &Path) -> Vec<PathBuf> {
    fs::read_to_string(dir.join(REPLICAS_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn write_replicas(dir: &Path, replicas: &[PathBuf]) -> Result<()> {
    let path = dir.join(REPLICAS_FILE);
    let text = serde_json::to_string_pretty(replicas).context("cannot serialise the list")?;
    fs::write(&path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}

fn add_replica(primary_dir: &Path, replica_dir: &Path) -> Result<()> {
    let mut list = replicas_of(primary_dir);
    if !list.iter().any(|d| d == replica_dir) {
        list.push(replica_dir.to_path_buf());
    }
    write_replicas(primary_dir, &list)
}

/// Stop a replica, then take it off its primary (when that still runs).
fn stop_replica(handle: &ServerHandle, link: &ReplicaLink) -> Result<()> {
    handle.stop()?;
    let mut list = replicas_of(&link.primary_dir);
    list.retain(|d| d != &handle.dir);
    let _ = write_replicas(&link.primary_dir, &list);
    let Ok(primary) = ServerHandle::load(&link.primary_dir) else {
        return Ok(());
    };
    if !primary.is_running() {
        return Ok(());
    }
    detach(&primary, link).with_context(|| {
        format!(
            "the replica in {} stopped, but the primary in {} still lists it",
            handle.dir.display(),
            primary.dir.display()
        )
    })
}

/// Take a stopped replica off its running primary.
fn detach(primary: &ServerHandle, link: &ReplicaLink) -> Result<()> {
    let mut p = SqlLink::connect(&primary.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    match primary.kind {
        ServerKind::Postgres => {
            if link.mode == ReplicaMode::Sync {
                standby::reset_synchronous(&mut p).map_err(anyhow::Error::msg)?;
            }
            // The walsender may take a moment to notice its standby is gone.
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match standby::drop_slot(&mut p, &link.name) {
                    Ok(()) => break,
                    Err(e) if Instant::now() >= deadline => bail!("cannot drop the slot: {e}"),
                    Err(_) => std::thread::sleep(Duration::from_millis(200)),
                }
            }
        }
        ServerKind::Mariadb => {
            if link.mode == ReplicaMode::Semisync {
                replica_setup::set_semisync_primary(&mut p, false).map_err(anyhow::Error::msg)?;
            }
            replica_setup::drop_replication_user(&mut p, &link.name).map_err(anyhow::Error::msg)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/// A streaming standby of `primary`; its handle and its slot's name.
fn start_postgres(
    spec: &ServerSpec,
    primary: &ServerHandle,
    mode: ReplicaMode,
) -> Result<(ServerHandle, String)> {
    let bindir = postgres::find_bindir(Some(spec.bindir.as_deref().unwrap_or(&primary.bindir)))?;
    let version = postgres::version(&bindir)?;
    let major = major_of_version(&version).unwrap_or(0);
    let primary_major = major_of_version(&primary.version).unwrap_or(0);
    if major != primary_major {
        bail!(
            "the replica's PostgreSQL ({version}, --bindir {}) is not the primary's major version ({}): a standby streams from its own major only; pass the primary's --bindir {} (or omit --bindir)",
            bindir.display(),
            primary.version,
            primary.bindir.display()
        );
    }
    let run_as = crate::server::server_user(postgres::SERVER_USER, postgres::no_server_user)?;
    let port = choose_port(spec)?;
    let dir = prepare_instance_dir(spec, &format!(".s.PGSQL.{port}"), run_as.as_ref())?;
    let data_dir = dir.join("data");
    let name = format!("ibench_replica_{port}");
    let cleanup_slot = || drop_slot_quietly(primary, &name);
    let password_file = copy_primary(&bindir, run_as.as_ref(), &dir, primary, &name, major)
        .inspect_err(|_| cleanup_slot())?;
    let pid = postgres::pg_ctl_start(&bindir, run_as.as_ref(), &dir, &data_dir, port)
        .inspect_err(|_| cleanup_slot())?;
    let handle = ServerHandle::private(
        (ServerKind::Postgres, primary.engine),
        &dir,
        (port, pid),
        &password_file,
        (bindir, version),
        run_as.map(|u| u.name),
    );
    let attached = wait_streaming(primary, &name)
        .and_then(|()| match mode {
            ReplicaMode::Sync => make_synchronous(primary, &name),
            _ => Ok(()),
        })
        .and_then(|()| handle.save());
    if let Err(e) = attached {
        let _ = handle.stop();
        cleanup_slot();
        return Err(e);
    }
    Ok((handle, name))
}

/// The standby's data: the primary's password (its own file and the pgpass file the standby
/// reads), `pg_basebackup` creating the slot `name` (or, when `bindir` has none, a file copy
/// under the low-level backup API: `server::data_copy`), the standby's settings. Returns the
/// password file's path.
fn copy_primary(
    bindir: &Path,
    run_as: Option<&RunAs>,
    dir: &Path,
    primary: &ServerHandle,
    name: &str,
    major: u32,
) -> Result<PathBuf> {
    let password = read_password(&primary.dir).with_context(|| {
        format!(
            "the primary in {} has no password file: start a new primary with this ibench",
            primary.dir.display()
        )
    })?;
    let password_file = write_password_file(dir, &password, run_as)?;
    let passfile = dir.join(PGPASS_FILE);
    write_private_file(
        &passfile,
        &format!("127.0.0.1:{}:*:postgres:{password}\n", primary.port),
        run_as,
    )?;
    if bindir.join("pg_basebackup").is_file() {
        base_backup(bindir, run_as, dir, primary.port, name, &passfile)?;
    } else {
        super::data_copy::copy(
            &primary.url,
            &primary.data_dir,
            &dir.join("data"),
            name,
            major,
            run_as,
        )
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot copy the primary's data without pg_basebackup ({} has none): {e:#}; pass --bindir DIR of a PostgreSQL {major} build that has pg_basebackup",
                bindir.display()
            )
        })?;
        crate::say!(
            "copied the primary's data dir file by file under PostgreSQL's low-level backup API ({} has no pg_basebackup)",
            bindir.display()
        );
    }
    write_standby_config(
        major,
        &dir.join("data"),
        &[
            format!(
                "primary_conninfo = 'host=127.0.0.1 port={} user=postgres passfile={} application_name={name}'",
                primary.port,
                passfile.display()
            ),
            format!("primary_slot_name = '{name}'"),
        ],
        run_as,
    )?;
    Ok(password_file)
}

/// `pg_basebackup` of the primary into `DIR/data`, creating the replication slot `slot`.
fn base_backup(
    bindir: &Path,
    run_as: Option<&RunAs>,
    dir: &Path,
    primary_port: u16,
    slot: &str,
    passfile: &Path,
) -> Result<()> {
    let log = dir.join(BASEBACKUP_LOG);
    let tool = bindir.join("pg_basebackup");
    let mut cmd = command(&tool, run_as);
    cmd.current_dir(dir)
        .env("PGPASSFILE", passfile)
        .env_remove("PGPASSWORD")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &primary_port.to_string(),
            "-U",
            "postgres",
        ])
        .arg("-D")
        .arg(dir.join("data"))
        .args([
            "-X",
            "stream",
            "-C",
            "-S",
            slot,
            "--checkpoint=fast",
            "--no-sync",
            "-w",
        ]);
    let out = run_capture(&mut cmd, "pg_basebackup", Some(&log))?;
    if !out.status.success() {
        bail!(
            "pg_basebackup from the primary on 127.0.0.1:{primary_port} failed: {}; see {}",
            first_line(&out),
            log.display()
        );
    }
    Ok(())
}

/// Make the copied data dir a standby: the recovery settings `lines` appended to
/// `postgresql.conf` with `standby.signal` (PostgreSQL 12 and later), or in `recovery.conf`
/// with `standby_mode` before; `hot_standby = on` in `postgresql.conf` (before 12 it is no
/// recovery setting: `recovery.conf` may not hold it).
fn write_standby_config(
    major: u32,
    data_dir: &Path,
    lines: &[String],
    run_as: Option<&RunAs>,
) -> Result<()> {
    let header = "\n# ibench: a standby of its primary\n";
    let postgresql_conf = data_dir.join("postgresql.conf");
    let mut conf = fs::read_to_string(&postgresql_conf).unwrap_or_default();
    conf.push_str(header);
    conf.push_str("hot_standby = on\n");
    let mut owned = vec![postgresql_conf.clone()];
    let signal = if major >= 12 {
        conf.push_str(&format!("{}\n", lines.join("\n")));
        Some(data_dir.join("standby.signal"))
    } else {
        let path = data_dir.join("recovery.conf");
        let text = format!("{header}{}\nstandby_mode = 'on'\n", lines.join("\n"));
        fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        owned.push(path);
        None
    };
    fs::write(&postgresql_conf, conf)
        .with_context(|| format!("cannot write {}", postgresql_conf.display()))?;
    if let Some(signal) = signal {
        fs::write(&signal, "").with_context(|| format!("cannot write {}", signal.display()))?;
        owned.push(signal);
    }
    if let Some(user) = run_as {
        for p in owned {
            std::os::unix::fs::chown(&p, Some(user.uid), Some(user.gid))
                .with_context(|| format!("cannot hand {} to {}", p.display(), user.name))?;
        }
    }
    Ok(())
}

/// Wait until the primary shows the standby `name` streaming.
fn wait_streaming(primary: &ServerHandle, name: &str) -> Result<()> {
    let mut p = SqlLink::connect(&primary.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    loop {
        let state = standby::stream_state(&mut p, name).map_err(anyhow::Error::msg)?;
        if state.as_deref() == Some("streaming") {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "the standby {name} did not stream from the primary within {} s (state: {}); see its server.log",
                ATTACH_TIMEOUT.as_secs(),
                state.as_deref().unwrap_or("not connected")
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Name the standby in the primary's `synchronous_standby_names`, with `synchronous_commit =
/// remote_apply`, and wait until the primary reports it `sync`.
fn make_synchronous(primary: &ServerHandle, name: &str) -> Result<()> {
    let mut p = SqlLink::connect(&primary.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    let current = standby::synchronous_standby_names(&mut p).map_err(anyhow::Error::msg)?;
    if !current.trim().is_empty() {
        bail!(
            "the primary in {} already has a synchronous standby ({current}): add this one without --sync",
            primary.dir.display()
        );
    }
    standby::make_synchronous(&mut p, name).map_err(anyhow::Error::msg)?;
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    loop {
        let state = standby::sync_state(&mut p, name).map_err(anyhow::Error::msg)?;
        if state.as_deref() == Some("sync") {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "the primary did not make {name} its synchronous standby within {} s (sync_state: {})",
                ATTACH_TIMEOUT.as_secs(),
                state.as_deref().unwrap_or("none")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Drop the slot `name` on the primary, when it is there; errors are ignored (a clean-up).
fn drop_slot_quietly(primary: &ServerHandle, name: &str) {
    let link = ReplicaLink {
        primary_dir: primary.dir.clone(),
        mode: ReplicaMode::Async,
        name: name.to_string(),
    };
    let _ = detach(primary, &link);
}

// ---------------------------------------------------------------------------------------------
// MariaDB

/// A GTID replica of `primary`; its handle and its replication user's name.
fn start_mariadb(
    spec: &ServerSpec,
    primary: &ServerHandle,
    mode: ReplicaMode,
) -> Result<(ServerHandle, String)> {
    let bindir = spec
        .bindir
        .clone()
        .unwrap_or_else(|| primary.bindir.clone());
    let bins = mariadb::find_binaries(Some(&bindir))?;
    let version = mariadb::version(&bins.mariadbd)?;
    if mariadb_version(&version) < mariadb_version(&primary.version) {
        bail!(
            "the replica's MariaDB ({version}) is older than the primary's ({}): a replica must run the primary's version or a newer one; pass --bindir {} (or omit --bindir)",
            primary.version,
            primary.bindir.display()
        );
    }
    let mut p = SqlLink::connect(&primary.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    if !replica_setup::logs_binary(&mut p).map_err(anyhow::Error::msg)? {
        bail!(
            "the MariaDB primary in {} writes no binary log, which a replica reads: start the primary with `ibench server start mariadb --log-bin`",
            primary.dir.display()
        );
    }
    if let Some(t) = replica_setup::user_tables(&mut p).map_err(anyhow::Error::msg)? {
        bail!(
            "the MariaDB primary in {} holds tables already ({t}): a replica starts empty at the primary's position, so attach it before the run loads (a new primary, then --replica-of, then ibench run)",
            primary.dir.display()
        );
    }
    let position = replica_setup::binlog_position(&mut p).map_err(anyhow::Error::msg)?;
    let port = choose_port(spec)?;
    let user = format!("ibench_repl_{port}");
    let password = crate::server::generate_password()?;
    replica_setup::create_replication_user(&mut p, &user, &password).map_err(anyhow::Error::msg)?;
    let link = ReplicaLink {
        primary_dir: primary.dir.clone(),
        mode,
        name: user.clone(),
    };
    let config = spec.config.clone().or_else(|| primary_config(&primary.dir));
    let replica_spec = ServerSpec {
        port: Some(port),
        bindir: Some(bindir),
        engine: primary.engine,
        config,
        ..spec.clone()
    };
    let mut args = vec![
        format!("--server-id={port}"),
        "--relay-log=relay-bin".to_string(),
        "--read-only=ON".to_string(),
    ];
    if mode == ReplicaMode::Semisync {
        args.push("--rpl-semi-sync-slave-enabled=ON".to_string());
    }
    let handle = mariadb::start_with(&replica_spec, &args).inspect_err(|_| {
        let _ = detach(primary, &link);
    })?;
    let attached = follow(&handle, primary, &user, &password, &position, mode);
    if let Err(e) = attached {
        let _ = handle.stop();
        let _ = detach(primary, &link);
        return Err(e);
    }
    Ok((handle, user))
}

/// The `config-NAME` copy the primary was started with, if any.
fn primary_config(dir: &Path) -> Option<PathBuf> {
    fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("config-"))
        })
}

/// `(major, minor, patch)` of a MariaDB version line (`mariadbd Ver 10.11.14-MariaDB…`).
fn mariadb_version(version: &str) -> (u32, u32, u32) {
    let word = version
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or("");
    let mut parts = word
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// Point the new replica at the primary from `position`, start it, and wait until both its
/// replication threads run (and, semi-synchronous, until the primary counts it).
fn follow(
    replica: &ServerHandle,
    primary: &ServerHandle,
    user: &str,
    password: &str,
    position: &str,
    mode: ReplicaMode,
) -> Result<()> {
    let mut r = SqlLink::connect(&replica.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    replica_setup::follow(&mut r, primary.port, (user, password), position)
        .map_err(anyhow::Error::msg)?;
    if mode == ReplicaMode::Semisync {
        let mut p = SqlLink::connect(&primary.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
        replica_setup::set_semisync_primary(&mut p, true).map_err(anyhow::Error::msg)?;
    }
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    loop {
        let threads = replica_setup::replica_threads(&mut r).map_err(anyhow::Error::msg)?;
        if threads.running {
            break;
        }
        if Instant::now() >= deadline {
            let error = threads.error.as_deref().unwrap_or("no error reported");
            bail!(
                "the MariaDB replica did not start replicating within {} s: {error}; see {}",
                ATTACH_TIMEOUT.as_secs(),
                replica.log_path().display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    if mode == ReplicaMode::Semisync {
        wait_semisync_client(primary)?;
    }
    Ok(())
}

/// Wait until the primary counts a semi-synchronous replica.
fn wait_semisync_client(primary: &ServerHandle) -> Result<()> {
    let mut p = SqlLink::connect(&primary.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    loop {
        let clients = replica_setup::semisync_clients(&mut p).map_err(anyhow::Error::msg)?;
        if clients > 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "the MariaDB primary counts no semi-synchronous replica after {} s (Rpl_semi_sync_master_clients = 0)",
                ATTACH_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_the_version_lines() {
        assert_eq!(
            major_of_version("postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"),
            Some(15)
        );
        assert_eq!(major_of_version("postgres (PostgreSQL) 10.23"), Some(10));
        assert_eq!(
            mariadb_version("mariadbd Ver 10.11.14-MariaDB-0+deb12u2 for debian-linux-gnu"),
            (10, 11, 14)
        );
        assert!(
            mariadb_version("mariadbd Ver 10.6.2-MariaDB")
                < mariadb_version("mariadbd Ver 10.11.1")
        );
    }

    #[test]
    fn each_server_has_its_own_synchronous_mode() {
        assert!(check_mode(ReplicaMode::Sync, ServerKind::Postgres).is_ok());
        assert!(check_mode(ReplicaMode::Semisync, ServerKind::Mariadb).is_ok());
        let e = check_mode(ReplicaMode::Sync, ServerKind::Mariadb).unwrap_err();
        assert!(e.to_string().contains("--semisync"), "{e}");
        let e = check_mode(ReplicaMode::Semisync, ServerKind::Postgres).unwrap_err();
        assert!(e.to_string().contains("--sync"), "{e}");
        assert!(check_mode(ReplicaMode::Async, ServerKind::Mariadb).is_ok());
    }
}
