//! A run that was one side of a duet (`order = "duet"` in a matrix, `ibench check --run
//! --duet`): the base and the candidate ran at the same time on one host, every step started
//! together on both sides. Its absolute rates are not those of a solo run (the other side
//! shared the host), so reports say so and `ibench check` refuses it against a solo run.

use serde::{Deserialize, Serialize};

/// `run.json`'s `duet`: which round, which slot, and the other side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DuetSide {
    /// The round (1-based): the repeat both sides ran together.
    pub round: u32,
    /// The slot this side had in the round (0 or 1): its instance dir and, when pinned, its
    /// CPU set. The slots swap sides every round.
    pub slot: u32,
    /// Whether this side's server was started first in the round (swapped every round).
    pub started_first: bool,
    /// The other side's matrix cell (`server.config.workload.rN`).
    pub partner_cell: String,
    /// The other side's label.
    pub partner_label: String,
    /// The CPUs this side's server and clients were pinned to (`0`, `0-1`); absent when not
    /// pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
}
