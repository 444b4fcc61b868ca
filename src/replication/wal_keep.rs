//! How much WAL a private PostgreSQL primary may keep for its standbys' replication slots
//! (`ibench server start postgres --replica-of P [--slot-keep SIZE]`, docs/replication.md).
//!
//! A physical slot keeps every WAL file its standby has not received yet. A standby that
//! stops while the primary keeps writing would so fill the primary's disk; from PostgreSQL 13
//! on `max_slot_wal_keep_size` bounds what a slot may keep, and a slot further behind is
//! invalidated (`wal_status` `lost`: its standby cannot catch up and must be made again)
//! instead. ibench sets that bound on the primary as a standby attaches: by default a quarter
//! of the space free on the primary's data disk at that moment, at most 64 GB (the disk keeps
//! three quarters for the data and the WAL the primary needs itself); `--slot-keep SIZE` sets
//! another, `--slot-keep unlimited` none. A bound the primary's own config sets is kept unless
//! `--slot-keep` is given. Before 13 there is no bound, and the start says so. The bound is set
//! once the standby streams, so that a standby refused before (another major version) leaves
//! the primary as it was.
//!
//! `server list` and `server stop` read the slots too, and say where one holds back much WAL
//! or was lost ([`slot_notes`]).

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::backend::link::SqlLink;
use crate::backend::postgres::major_of_version;
use crate::backend::postgres::slot::{self, KEEP_SIZE_SINCE};
use crate::results::replication::SlotReading;
use crate::results::settings::pg_size_text;
use crate::server::{ServerHandle, ServerKind, size_text};

/// The default bound's share of the free space: one part in four.
const AUTO_SHARE: u64 = 4;

/// The default bound's cap, MB (64 GB).
const AUTO_CAP_MB: u64 = 64 * 1024;

/// What a slot holds back before `server list` and `server stop` mention it (1 GB).
pub const LARGE_RETAINED_BYTES: u64 = 1 << 30;

/// The login timeout of these short connections.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

const MB: u64 = 1 << 20;

/// `--slot-keep`: the bound on the WAL the primary's slots may keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlotKeep {
    /// A quarter of the free space on the primary's data disk, at most 64 GB; a bound the
    /// primary's config sets is kept.
    #[default]
    Auto,
    /// This many MB.
    Megabytes(u64),
    /// No bound (`max_slot_wal_keep_size = -1`, PostgreSQL's default).
    Unlimited,
}

impl FromStr for SlotKeep {
    type Err = String;

    /// `auto`, `unlimited`, or a size in MB, GB or TB (`512MB`, `4GB`; a bare number is MB).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "auto" => return Ok(SlotKeep::Auto),
            "unlimited" | "-1" => return Ok(SlotKeep::Unlimited),
            _ => {}
        }
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(digits);
        let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
            "" | "MB" => 1,
            "GB" => 1 << 10,
            "TB" => 1 << 20,
            _ => 0,
        };
        match number.parse::<u64>() {
            Ok(n) if scale > 0 && n > 0 => Ok(SlotKeep::Megabytes(n.saturating_mul(scale))),
            _ => Err(format!(
                "'{s}' is not a size: give auto, unlimited, or a size such as 512MB or 4GB"
            )),
        }
    }
}

/// The default bound for `free_bytes` free on the primary's data disk: a quarter, in whole MB,
/// at least 1 MB and at most 64 GB.
pub fn auto_megabytes(free_bytes: u64) -> u64 {
    (free_bytes / AUTO_SHARE / MB).clamp(1, AUTO_CAP_MB)
}

/// MB as PostgreSQL writes a size (`512MB`, `4GB`): the one writer of such a size,
/// [`pg_size_text`].
fn megabytes_text(mb: u64) -> String {
    pg_size_text(mb.saturating_mul(MB))
}

/// Before a standby of a primary of major version `major` is made: an error when `keep` asks
/// for a bound it cannot set (a size or `unlimited` before PostgreSQL 13), and before 13 the
/// warning that its slot is unbounded.
pub fn check(major: u32, keep: SlotKeep) -> Result<Option<String>> {
    if major >= KEEP_SIZE_SINCE {
        return Ok(None);
    }
    if keep != SlotKeep::Auto {
        bail!(
            "--slot-keep needs PostgreSQL {KEEP_SIZE_SINCE} or later (max_slot_wal_keep_size); the primary runs {major}: drop --slot-keep"
        );
    }
    Ok(Some(format!(
        "warning: PostgreSQL {major} cannot bound the WAL a replication slot keeps (max_slot_wal_keep_size came in {KEEP_SIZE_SINCE}): while this standby is stopped or behind, its slot keeps every WAL file and can fill the primary's disk; `ibench server stop --dir` on the standby drops its slot"
    )))
}

/// Set the bound `keep` on the PostgreSQL primary `primary` once a standby attached to it;
/// the line that says what was done. Nothing before PostgreSQL 13 ([`check`] warned).
pub fn bound(primary: &ServerHandle, keep: SlotKeep) -> Result<Option<String>> {
    let major = major_of_version(&primary.version).unwrap_or(0);
    if major < KEEP_SIZE_SINCE {
        return Ok(None);
    }
    let mut p = SqlLink::connect(&primary.url, CONNECT_TIMEOUT).map_err(anyhow::Error::msg)?;
    let (setting, source) = slot::keep_size_setting(&mut p).map_err(anyhow::Error::msg)?;
    let (value, said) = match keep {
        SlotKeep::Auto if setting != "-1" && !source.ends_with("postgresql.auto.conf") => {
            return Ok(Some(format!(
                "the primary keeps at most {}MB of WAL for its standbys' slots (max_slot_wal_keep_size, from {source}; --slot-keep sets another)",
                setting
            )));
        }
        SlotKeep::Auto => {
            let free = crate::filesystem::free_bytes(&primary.data_dir).with_context(|| {
                format!(
                    "cannot read the free space of {}: give --slot-keep SIZE",
                    primary.data_dir.display()
                )
            })?;
            let mb = auto_megabytes(free);
            (
                megabytes_text(mb),
                format!(
                    "the primary keeps at most {} of WAL for its standbys' slots (max_slot_wal_keep_size: a quarter of the {} free on its data disk, at most 64GB; --slot-keep sets another); a standby further behind loses its slot and must be made again",
                    megabytes_text(mb),
                    size_text(free)
                ),
            )
        }
        SlotKeep::Megabytes(mb) => (
            megabytes_text(mb),
            format!(
                "the primary keeps at most {} of WAL for its standbys' slots (max_slot_wal_keep_size, --slot-keep); a standby further behind loses its slot and must be made again",
                megabytes_text(mb)
            ),
        ),
        SlotKeep::Unlimited => (
            "-1".to_string(),
            "warning: the primary keeps every WAL file its standbys' slots need (max_slot_wal_keep_size = -1, --slot-keep unlimited): a standby that stops can fill the primary's disk".to_string(),
        ),
    };
    slot::set_keep_size(&mut p, &value)
        .map_err(|e| anyhow::anyhow!("cannot set the primary's max_slot_wal_keep_size: {e}"))?;
    Ok(Some(said))
}

/// What `server list` and `server stop` say about the slots of the private primary `handle`
/// (running, PostgreSQL, `has_standbys`: its dir lists standbys): one line per slot that holds back at least
/// [`LARGE_RETAINED_BYTES`] or was lost; with `inactive_only`, only the slots no standby streams
/// from. Nothing when the server cannot be asked.
pub fn slot_notes(handle: &ServerHandle, has_standbys: bool, inactive_only: bool) -> Vec<String> {
    // Only a primary that lists standbys: no connection to every other server.
    if handle.kind != ServerKind::Postgres || !handle.is_running() || !has_standbys {
        return Vec::new();
    }
    let Ok(mut p) = SqlLink::connect(&handle.url, CONNECT_TIMEOUT) else {
        return Vec::new();
    };
    let Some(major) = major_of_version(&handle.version) else {
        return Vec::new();
    };
    // A standby cannot read pg_current_wal_lsn(): it has no slots of its own to show here.
    let slots = slot::read_slots(&mut p, major, None).unwrap_or_default();
    slots
        .iter()
        .filter(|s| !inactive_only || !s.active)
        .filter_map(|s| slot_note(&handle.dir, s))
        .collect()
}

/// The line about one slot of the primary in `dir`, when it holds back much WAL or was lost.
pub fn slot_note(dir: &Path, s: &SlotReading) -> Option<String> {
    let dir = dir.display();
    let standby = if s.active {
        "its standby streams from it"
    } else {
        "no standby streams from it"
    };
    if s.is_lost() {
        return Some(format!(
            "the replication slot {} of the primary in {dir} was invalidated (wal_status lost; {standby}): its standby cannot catch up; stop it with `ibench server stop --dir` on the standby, which drops the slot",
            s.name
        ));
    }
    let bytes = s.retained_bytes.filter(|b| *b >= LARGE_RETAINED_BYTES)?;
    Some(format!(
        "the replication slot {} of the primary in {dir} holds back {} of WAL ({standby}): {}",
        s.name,
        size_text(bytes),
        if s.active {
            "the standby is behind"
        } else {
            "start the standby again, or stop it with `ibench server stop --dir` on the standby, which drops the slot"
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_keep_reads_sizes_and_words() {
        assert_eq!("auto".parse(), Ok(SlotKeep::Auto));
        assert_eq!("unlimited".parse(), Ok(SlotKeep::Unlimited));
        assert_eq!("-1".parse(), Ok(SlotKeep::Unlimited));
        assert_eq!("1MB".parse(), Ok(SlotKeep::Megabytes(1)));
        assert_eq!("512".parse(), Ok(SlotKeep::Megabytes(512)));
        assert_eq!("4GB".parse(), Ok(SlotKeep::Megabytes(4096)));
        assert_eq!("2 gb".parse(), Ok(SlotKeep::Megabytes(2048)));
        for bad in ["", "0", "1kB", "x", "1.5GB", "-2"] {
            let e = bad.parse::<SlotKeep>().unwrap_err();
            assert!(e.contains("512MB"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_size_before_postgres_13_is_refused() {
        let warned = check(12, SlotKeep::Auto).unwrap().unwrap();
        assert!(
            warned.starts_with("warning: PostgreSQL 12 cannot bound"),
            "{warned}"
        );
        assert_eq!(check(13, SlotKeep::Megabytes(1)).unwrap(), None);
        let e = check(12, SlotKeep::Unlimited).unwrap_err().to_string();
        assert!(e.contains("runs 12: drop --slot-keep"), "{e}");
    }

    #[test]
    fn sizes_read_as_postgresql_writes_them() {
        assert_eq!(megabytes_text(1), "1MB");
        assert_eq!(megabytes_text(1536), "1536MB");
        assert_eq!(megabytes_text(65536), "64GB");
    }

    #[test]
    fn the_default_bound_is_a_quarter_of_the_free_space_capped() {
        assert_eq!(auto_megabytes(400 * MB), 100);
        assert_eq!(auto_megabytes(0), 1);
        assert_eq!(auto_megabytes(1 << 50), AUTO_CAP_MB);
    }

    #[test]
    fn a_slot_is_mentioned_when_large_or_lost() {
        let dir = Path::new("/tmp/p");
        let mut s = SlotReading {
            name: "ibench_replica_1".to_string(),
            retained_bytes: Some(LARGE_RETAINED_BYTES - 1),
            ..SlotReading::default()
        };
        assert_eq!(slot_note(dir, &s), None);
        s.retained_bytes = Some(3 * LARGE_RETAINED_BYTES);
        let note = slot_note(dir, &s).unwrap();
        assert!(
            note.starts_with("the replication slot ibench_replica_1 of the primary in /tmp/p holds back 3.2 GB of WAL (no standby streams from it)"),
            "{note}"
        );
        s.wal_status = Some("lost".to_string());
        s.retained_bytes = None;
        let note = slot_note(dir, &s).unwrap();
        assert!(note.contains("was invalidated (wal_status lost"), "{note}");
    }
}
