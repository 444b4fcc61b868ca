//! The run's tables between steps: what each should hold and each client's next id, and a
//! step's table setup.

use std::collections::HashMap;

use crate::backend::Conn;
use crate::results::options::TableOptions;
use crate::workload::plan::{StepPlan, TableShape};

use super::stop;

/// What the run knows about its tables between steps.
#[derive(Default)]
pub(super) struct TableState {
    /// Rows each table should hold, when known.
    pub(super) expected_rows: HashMap<String, u64>,
    /// Next client-assigned id per client.
    pub(super) next_client_id: HashMap<u32, i64>,
    /// Rows loaded by l.i0 in this run, all tables.
    pub(super) loaded_rows: u64,
}

/// Set up the tables a step needs, outside its measured time: a step that creates the tables
/// (re)creates them; other steps learn the row counts they do not know yet.
pub(super) fn prepare_tables(
    tables: &[String],
    table_options: &TableOptions,
    admin: &mut dyn Conn,
    state: &mut TableState,
    plan: &StepPlan,
) -> anyhow::Result<()> {
    if plan.creates_tables {
        for t in tables {
            stop::check_interrupted()?;
            match plan.table_shape {
                TableShape::InsertBenchmark => admin.create_table(t, table_options)?,
                TableShape::Sysbench => admin.create_micro_table(t, table_options)?,
            }
            state.expected_rows.insert(t.clone(), 0);
        }
        state.next_client_id.clear();
    } else {
        for t in tables {
            stop::check_interrupted()?;
            let entry = state.expected_rows.entry(t.clone());
            if let std::collections::hash_map::Entry::Vacant(e) = entry {
                let n = admin.count_rows(e.key())?;
                e.insert(n);
            }
        }
    }
    Ok(())
}
