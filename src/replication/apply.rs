//! The replica's apply work over a step (`--replica-url`, docs/replication.md): its process
//! tree's CPU and storage writes, when it runs on this host (found as the sampler finds the
//! primary's: `sampler::locate`), and how far its replay position moved (PostgreSQL's
//! `pg_last_wal_replay_lsn()`, MariaDB's `Exec_Master_Log_Pos`), from a step's start until
//! the replica caught up after it.

use std::time::Duration;

use crate::backend::replication::ReplicaLink;
use crate::backend::target::ConnectTarget;
use crate::results::replication::{ReplayPosition, StepReplication, bytes_between};
use crate::sampler::locate::{ServerClaim, locate};
use crate::sampler::{TreeReading, procfs, read_tree};

/// The login timeout of the link that reads the replay position.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The replica at one moment: its process tree and its replay position, each when readable.
#[derive(Clone, Debug, Default)]
pub struct ApplyMark {
    tree: Option<TreeReading>,
    position: Option<ReplayPosition>,
}

/// Reads the replica's process and replay position.
pub struct ApplyProbe {
    /// The replica's main process on this host, or why it cannot be read here.
    pid: Result<u32, String>,
    /// The replica (`--replica-url` read once, by the run's shape).
    target: ConnectTarget,
    link: Option<ReplicaLink>,
}

impl ApplyProbe {
    /// Find the replica `target`'s process as the sampler finds a server's: a replica on
    /// another host has none (the reason kept for `run.json`).
    pub fn locate(target: &ConnectTarget) -> ApplyProbe {
        let pid = (|| -> Result<u32, String> {
            let claim = ServerClaim {
                host: target.host.clone(),
                server_dir: None,
                server_pid: None,
            };
            let mut conn = target.driver().connect().map_err(|e| e.to_string())?;
            let (location, _) = locate(&claim, conn.as_mut());
            location
                .pid
                .ok_or_else(|| location.na.unwrap_or_else(|| "not found".into()))
        })();
        ApplyProbe {
            pid,
            target: target.clone(),
            link: None,
        }
    }

    /// Why the replica's process cannot be read here; `None` when it can.
    pub fn process_na(&self) -> Option<String> {
        self.pid.as_ref().err().cloned()
    }

    /// Read the replica now.
    pub fn mark(&mut self) -> ApplyMark {
        let tree = self.pid.clone().and_then(read_tree).ok();
        if self.link.is_none() {
            self.link = self.target.replica_link(CONNECT_TIMEOUT).ok();
        }
        let position = self
            .link
            .as_mut()
            .and_then(|l| l.replay_position().ok().flatten());
        if position.is_none() {
            self.link = None;
        }
        ApplyMark { tree, position }
    }
}

/// Fill `rep`'s apply work from the marks before and after: the replica's CPU seconds and
/// storage writes, and the bytes it replayed.
pub fn record(rep: &mut StepReplication, before: &ApplyMark, after: &ApplyMark) {
    if let (Some(a), Some(b)) = (&before.tree, &after.tree) {
        let ticks = b.cpu_ticks.saturating_sub(a.cpu_ticks);
        rep.replica_cpu_seconds =
            Some(crate::stats::convert::count_f64(ticks) / procfs::clock_ticks_per_sec());
        rep.replica_write_bytes = a.io.zip(b.io).map(|(x, y)| y.1.saturating_sub(x.1));
    }
    if let (Some(a), Some(b)) = (&before.position, &after.position) {
        rep.applied_bytes = bytes_between(a, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replayed_bytes_are_the_distance_in_one_log() {
        assert_eq!(
            bytes_between(&ReplayPosition::Lsn(100), &ReplayPosition::Lsn(4196)),
            Some(4096)
        );
        let pos = |f: &str, p| ReplayPosition::Binlog(f.into(), p);
        assert_eq!(
            bytes_between(&pos("binlog.000001", 10), &pos("binlog.000001", 30)),
            Some(20)
        );
        // A rotated binary log cannot be measured from two offsets.
        assert_eq!(
            bytes_between(&pos("binlog.000001", 10), &pos("binlog.000002", 30)),
            None
        );
        assert_eq!(bytes_between(&ReplayPosition::Lsn(5), &pos("b", 9)), None);
        assert_eq!(
            bytes_between(&ReplayPosition::Lsn(9), &ReplayPosition::Lsn(5)),
            None
        );
    }

    #[test]
    fn the_work_is_the_difference_of_two_marks() {
        let tree = |cpu_ticks, written| TreeReading {
            cpu_ticks,
            io: Some((0, written)),
            ..TreeReading::default()
        };
        let before = ApplyMark {
            tree: Some(tree(100, 1000)),
            position: Some(ReplayPosition::Lsn(0)),
        };
        let after = ApplyMark {
            tree: Some(tree(100 + 2 * 100, 9000)),
            position: Some(ReplayPosition::Lsn(50_000)),
        };
        let mut rep = StepReplication::default();
        record(&mut rep, &before, &after);
        let seconds = 200.0 / procfs::clock_ticks_per_sec();
        assert_eq!(rep.replica_cpu_seconds, Some(seconds));
        assert_eq!(rep.replica_write_bytes, Some(8000));
        assert_eq!(rep.applied_bytes, Some(50_000));
        // A remote replica: no tree, the positions only.
        let mut rep = StepReplication::default();
        record(&mut rep, &ApplyMark::default(), &after);
        assert_eq!(rep.replica_cpu_seconds, None);
    }
}
