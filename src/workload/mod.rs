//! What the benchmark does: the table's rows, the generators, the steps and their plans as
//! plain data.

pub mod micro;
pub mod plan;
pub mod rng;
pub mod row;
pub mod steps;

pub use rng::Rng;
pub use row::{RowBatch, RowGenerator, RowShape};
