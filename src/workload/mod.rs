//! What the benchmark does: the table's rows, the generators and the steps as plain data.

pub mod rng;
pub mod row;
pub mod steps;

pub use rng::Rng;
pub use row::{RowBatch, RowGenerator, RowShape};
