//! Replication: a private primary and its replica (`ibench server start --replica-of`), and
//! what a run with `--replica-url` measures of them (docs/replication.md).

pub mod apply;
pub(crate) mod data_copy;
pub mod heartbeat;
pub mod pair;
pub mod slot_watch;
pub mod stop;
pub mod wal_keep;

pub use crate::results::replication::ReplicaMode;
