//! The checks after a step's measured part: the settle phase (after l.i2) and the integrity
//! check, each recorded beside the step's figures and a failure when it failed.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::backend::{Conn, Driver};
use crate::results::{CheckFailure, CheckKind, IntegrityRecord, SettleRecord, Status, TableCheck};
use crate::workload::plan::StepPlan;
use crate::workload::steps::settle_seconds;

use super::monitor::ProgressMode;
use super::shape::RunShape;
use super::stop::StopSignal;
use super::tables::TableState;

/// What the checks after a step's measured part need.
pub(super) struct Checks<'a> {
    pub(super) shape: &'a RunShape,
    pub(super) driver: &'a dyn Driver,
    pub(super) plan: &'a StepPlan,
    pub(super) status: Status,
    pub(super) rows_before: &'a HashMap<String, u64>,
}

impl Checks<'_> {
    /// The settle phase (after l.i2) and the integrity check: their records, and a failure
    /// for each that failed, recorded beside the step's figures, which stay as measured.
    pub(super) fn run(
        &self,
        admin: &mut dyn Conn,
        state: &mut TableState,
    ) -> (
        Option<SettleRecord>,
        Option<IntegrityRecord>,
        Vec<CheckFailure>,
    ) {
        let mut failures = Vec::new();
        let settle = if self.plan.settle && self.status == Status::Completed {
            match settle_phase(self.shape, self.driver, state) {
                Ok(settle) => {
                    failures.extend(settle_failures(&settle));
                    Some(settle)
                }
                Err(e) => {
                    failures.push(check_failure(CheckKind::Settle, format!("{e:#}")));
                    None
                }
            }
        } else {
            None
        };
        let checked = after_check(
            self.shape,
            admin,
            state,
            self.plan,
            self.status,
            self.rows_before,
        );
        let integrity = match checked {
            Ok(integrity) => integrity,
            Err(e) => {
                failures.push(check_failure(CheckKind::Integrity, format!("{e:#}")));
                None
            }
        };
        if let Some(i) = integrity.as_ref().filter(|i| !i.ok) {
            failures.push(check_failure(CheckKind::Integrity, integrity_mismatch(i)));
        }
        if super::stop::interrupted() {
            // Ctrl-C ended the waits of the checks: what they could not finish is not a
            // failure of the step (the run is recorded interrupted).
            failures.clear();
        }
        (settle, integrity, failures)
    }
}

/// The integrity check after a step that writes rows (unless `--no-integrity-check` or it
/// failed).
pub(super) fn after_check(
    shape: &RunShape,
    admin: &mut dyn Conn,
    state: &TableState,
    plan: &StepPlan,
    status: Status,
    rows_before: &HashMap<String, u64>,
) -> anyhow::Result<Option<IntegrityRecord>> {
    if !shape.check || !plan.writes_rows() || status == Status::Failed {
        return Ok(None);
    }
    let ran_to_end = status == Status::Completed;
    let checked = check_integrity(admin, &shape.tables, &state.expected_rows, &|table| {
        plan.intended_rows(rows_before.get(table).copied().unwrap_or(0), ran_to_end)
    });
    Ok(Some(checked?))
}

/// l.i2's settle phase: the engine's maintenance inside the settle time, then rest.
pub(super) fn settle_phase(
    shape: &RunShape,
    driver: &dyn Driver,
    state: &TableState,
) -> anyhow::Result<SettleRecord> {
    let mode = shape.progress;
    let loaded = if state.loaded_rows > 0 {
        state.loaded_rows
    } else {
        state.expected_rows.values().sum()
    };
    let planned = settle_seconds(loaded, shape.settle_max_seconds);
    if mode != ProgressMode::Quiet {
        crate::say!(
            "{}l.i2    settle phase: {planned:.0} s of maintenance and rest",
            crate::console::line_start()
        );
    }
    let t0 = Instant::now();
    let actions = driver.settle(&shape.tables, Duration::from_secs_f64(planned))?;
    let unsettled = SettleRecord::unsettled_of(&actions);
    if let Some(left) = unsettled.as_deref().filter(|_| mode != ProgressMode::Quiet) {
        crate::say!(
            "l.i2    settle: the {planned:.0} s budget ran out ({left}); recorded, the next \
             steps start from an unsettled server"
        );
    }
    StopSignal::new(None).sleep_until(t0 + Duration::from_secs_f64(planned));
    Ok(SettleRecord {
        planned_seconds: planned,
        seconds: t0.elapsed().as_secs_f64(),
        actions,
        unsettled,
    })
}

pub(super) fn check_failure(kind: CheckKind, message: String) -> CheckFailure {
    CheckFailure { kind, message }
}

/// The settle phase's maintenance actions that failed, as settle failures (an action the
/// budget cut short is recorded in `unsettled`, not failed).
pub(super) fn settle_failures(settle: &SettleRecord) -> impl Iterator<Item = CheckFailure> + '_ {
    settle.actions.iter().filter_map(|a| {
        a.error
            .as_ref()
            .map(|e| check_failure(CheckKind::Settle, format!("{}: {e}", a.action)))
    })
}

/// What disagreed in an integrity check, table by table:
/// `pi1 holds 39960 rows (expected 40000); pi1_pdc counts 39950`.
pub(super) fn integrity_mismatch(integrity: &IntegrityRecord) -> String {
    integrity
        .tables
        .iter()
        .filter(|t| !t.ok)
        .map(|t| {
            let mut parts = vec![format!(
                "{} holds {} rows (expected {}",
                t.table, t.pk_rows, t.expected_rows
            )];
            if let Some(want) = t.intended_rows {
                parts[0].push_str(&format!(
                    ", the step intends {want} within {}",
                    t.allowed_drift_rows
                ));
            }
            parts[0].push(')');
            parts.extend(
                t.index_rows
                    .iter()
                    .filter(|(_, n)| **n != t.expected_rows)
                    .map(|(ix, n)| format!("{ix} counts {n}")),
            );
            parts.join(", ")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Count every table through its primary key and each secondary index; a table is ok when all
/// counts equal what the run's inserts and deletes imply and the count lies within the allowed
/// drift of what the step intends (`intent` gives `(intended_rows, allowed_drift_rows)`).
pub(super) fn check_integrity(
    conn: &mut dyn Conn,
    tables: &[String],
    expected: &HashMap<String, u64>,
    intent: &dyn Fn(&str) -> (Option<u64>, u64),
) -> anyhow::Result<IntegrityRecord> {
    let mut checks = Vec::new();
    for t in tables {
        let expected_rows = expected.get(t).copied().unwrap_or(0);
        let (intended_rows, allowed_drift_rows) = intent(t);
        let pk_rows = conn.count_rows(t)?;
        let mut index_rows = BTreeMap::new();
        if conn.has_secondary_indexes(t)? {
            for ix in crate::backend::SecondaryIndex::ALL {
                index_rows.insert(ix.name(t), conn.count_rows_via_index(t, ix)?);
            }
        }
        let as_intended =
            intended_rows.is_none_or(|want| pk_rows.abs_diff(want) <= allowed_drift_rows);
        let ok = pk_rows == expected_rows
            && index_rows.values().all(|&n| n == expected_rows)
            && as_intended;
        checks.push(TableCheck {
            table: t.clone(),
            expected_rows,
            intended_rows,
            allowed_drift_rows,
            pk_rows,
            index_rows,
            ok,
        });
    }
    Ok(IntegrityRecord {
        ok: checks.iter().all(|c| c.ok),
        tables: checks,
    })
}
