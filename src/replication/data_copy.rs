//! A PostgreSQL standby's data made without `pg_basebackup`: a file copy of the private
//! primary's data dir on this host under PostgreSQL's low-level backup API ("Making a Base
//! Backup Using the Low Level API" in the PostgreSQL docs), for builds whose bindir has no
//! `pg_basebackup` (the registry builds ibench's version grids run hold only `initdb`,
//! `pg_ctl` and `postgres`).
//!
//! The physical slot is made first, reserving WAL from that moment; then, on ONE connection
//! kept open, `pg_backup_start` (`pg_start_backup`, non-exclusive, before 15), the data dir
//! copied file by file (what the docs say to omit left out: the files the running server
//! owns, the contents of `pg_wal/`, `pg_replslot/` and the other dirs the server empties at
//! start, `pgsql_tmp*`), then `pg_backup_stop`, whose label file becomes the copy's
//! `backup_label`. The standby reads the WAL from the backup's start on through the slot.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::backend::link::SqlLink;
use crate::backend::postgres::standby;
use crate::server::RunAs;

/// The files of a data dir never copied: the running server's own, and an earlier backup's.
const SKIPPED_FILES: &[&str] = &[
    "postmaster.pid",
    "postmaster.opts",
    "backup_label",
    "tablespace_map",
    "pg_internal.init",
];

/// The dirs at the top of a data dir copied empty: the server fills them as it runs (the WAL
/// comes to the standby from the slot).
const EMPTIED_DIRS: &[&str] = &[
    "pg_wal",
    "pg_xlog",
    "pg_replslot",
    "pg_dynshmem",
    "pg_notify",
    "pg_serial",
    "pg_snapshots",
    "pg_stat_tmp",
    "pg_subtrans",
];

/// The prefix of the temporary files and dirs a copy leaves out (their dirs are kept empty).
const TEMP_PREFIX: &str = "pgsql_tmp";

/// The login timeout of the backup's connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Copy the data dir `source` of the running PostgreSQL `major` reached at `primary_url` into
/// `target` (made here, owned by `owner` when given), creating the physical replication slot
/// `slot` first. The errors say what failed; the caller names the fix.
pub(crate) fn copy(
    primary_url: &str,
    source: &Path,
    target: &Path,
    slot: &str,
    major: u32,
    owner: Option<&RunAs>,
) -> Result<()> {
    let tablespaces: Vec<String> = fs::read_dir(source.join("pg_tblspc"))
        .map(|dir| {
            dir.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if !tablespaces.is_empty() {
        bail!(
            "the primary has tablespaces (OIDs {}), which a file copy on this host would share with it",
            tablespaces.join(", ")
        );
    }
    let mut link = SqlLink::connect(primary_url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    standby::create_slot(&mut link, slot)
        .map_err(|e| anyhow::anyhow!("cannot create the replication slot {slot}: {e}"))?;
    standby::backup_start(&mut link, major, &format!("ibench standby {slot}"))
        .map_err(|e| anyhow::anyhow!("cannot start the backup: {e}"))?;
    // A failure from here closes the connection as `link` drops, which ends the backup.
    copy_dir(source, target, owner, true)?;
    let (label, map) = standby::backup_stop(&mut link, major)
        .map_err(|e| anyhow::anyhow!("cannot stop the backup: {e}"))?;
    let Some(label) = label else {
        bail!("the primary's backup stop returned no label file");
    };
    crate::server::write_private_file(&target.join("backup_label"), &label, owner)?;
    if let Some(map) = map {
        crate::server::write_private_file(&target.join("tablespace_map"), &map, owner)?;
    }
    Ok(())
}

/// Make the dir `target` with the mode of `source`, owned by `owner` when given.
fn make_dir(source: &Path, target: &Path, owner: Option<&RunAs>) -> Result<()> {
    match fs::create_dir(target) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists && target.is_dir() => {}
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", target.display())),
    }
    let mode = fs::metadata(source).map(|m| m.permissions()).ok();
    if let Some(mode) = mode {
        fs::set_permissions(target, mode)
            .with_context(|| format!("cannot set the mode of {}", target.display()))?;
    }
    chown(target, owner)
}

fn chown(path: &Path, owner: Option<&RunAs>) -> Result<()> {
    if let Some(user) = owner {
        std::os::unix::fs::lchown(path, Some(user.uid), Some(user.gid))
            .with_context(|| format!("cannot hand {} to {}", path.display(), user.name))?;
    }
    Ok(())
}

/// Copy the dir `source` into `target`, file by file; `top` when `source` is the data dir
/// itself (where [`EMPTIED_DIRS`] are). A file that vanishes while it is copied is left out
/// (the server dropped it; the WAL replay agrees).
fn copy_dir(source: &Path, target: &Path, owner: Option<&RunAs>, top: bool) -> Result<()> {
    make_dir(source, target, owner)?;
    let entries = match fs::read_dir(source) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound && !top => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", source.display())),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", source.display())),
        };
        let name = entry.file_name();
        let name_text = name.to_string_lossy();
        let (from, to) = (entry.path(), target.join(&name));
        let kind = match entry.file_type() {
            Ok(kind) => kind,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", from.display())),
        };
        if SKIPPED_FILES.contains(&name_text.as_ref()) && !kind.is_dir() {
            continue;
        }
        let emptied = (top && EMPTIED_DIRS.contains(&name_text.as_ref()))
            || name_text.starts_with(TEMP_PREFIX);
        if emptied {
            if kind.is_file() {
                continue;
            }
            // pg_wal may be a link to a dir elsewhere: the copy has a dir of its own.
            make_dir(&from, &to, owner)?;
            if name_text == "pg_wal" || name_text == "pg_xlog" {
                make_dir(&from, &to.join("archive_status"), owner)?;
            }
        } else if kind.is_dir() {
            copy_dir(&from, &to, owner, false)?;
        } else if kind.is_symlink() {
            let points_to = match fs::read_link(&from) {
                Ok(p) => p,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(e).with_context(|| format!("cannot read {}", from.display())),
            };
            std::os::unix::fs::symlink(&points_to, &to)
                .with_context(|| format!("cannot create {}", to.display()))?;
            chown(&to, owner)?;
        } else if kind.is_file() {
            match fs::copy(&from, &to) {
                Ok(_) => chown(&to, owner)?,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot copy {} to {}", from.display(), to.display())
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_leaves_out_what_the_server_owns_and_keeps_the_dirs() {
        let root = std::env::temp_dir().join(format!("ibench-data-copy-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let source = root.join("src");
        for dir in [
            "base/1",
            "base/pgsql_tmp",
            "pg_wal/archive_status",
            "pg_replslot/s",
        ] {
            fs::create_dir_all(source.join(dir)).unwrap();
        }
        for file in [
            "PG_VERSION",
            "postmaster.pid",
            "postmaster.opts",
            "base/1/1259",
            "base/1/pg_internal.init",
            "base/pgsql_tmp/pgsql_tmp1.0",
            "pg_wal/000000010000000000000001",
            "pg_replslot/s/state",
        ] {
            fs::write(source.join(file), "x").unwrap();
        }
        let target = root.join("dst");
        copy_dir(&source, &target, None, true).unwrap();
        for kept in ["PG_VERSION", "base/1/1259"] {
            assert!(target.join(kept).is_file(), "{kept}");
        }
        for dir in ["base/pgsql_tmp", "pg_wal/archive_status", "pg_replslot"] {
            assert!(target.join(dir).is_dir(), "{dir}");
        }
        for left_out in [
            "postmaster.pid",
            "postmaster.opts",
            "base/1/pg_internal.init",
            "base/pgsql_tmp/pgsql_tmp1.0",
            "pg_wal/000000010000000000000001",
            "pg_replslot/s",
        ] {
            assert!(!target.join(left_out).exists(), "{left_out}");
        }
        fs::remove_dir_all(&root).unwrap();
    }
}
