//! The Replication section (docs/replication.md): for the runs that measured a replica
//! (`--replica-url`), how each followed its primary (the mode, the versions), each step's lag
//! as the heartbeat read it (max, p99), the seconds the replica took to catch up after the
//! step, the DBMS's own view and the replica's apply work per row written; in HTML, the lag per second over the run. Nothing when no
//! run had a replica.

use super::document::{Block, DocCell, DocRow, DocTable};
use super::lag_sla::format_ms;
use super::load::LoadedRun;
use super::model::Comparison;
use crate::results::StepRecord;
use crate::results::replication::{ReplicaMode, StepReplication};

/// The section's blocks; empty when no run measured a replica. Runs are named by their keys
/// in `cmp` (the run table above maps keys to labels).
pub fn blocks(cmp: &Comparison, runs: &[LoadedRun], charts: bool) -> Vec<Block> {
    if runs.iter().all(|r| r.record.replica.is_none()) {
        return Vec::new();
    }
    let mut b = vec![Block::Heading {
        level: 2,
        text: "Replication".to_string(),
        anchor: Some("replication".to_string()),
    }];
    b.push(Block::List(
        runs.iter()
            .map(|r| mode_line(cmp.key_of(&r.label), r))
            .collect(),
    ));
    b.extend(lag_tables(cmp, runs).into_iter().map(Block::Table));
    b.push(Block::Note(
        "Lag: how long the first heartbeat the replica had not applied had been committed on the primary, read every 100 ms during the step's measured part (0 when it had applied all). Catch-up: seconds from the step's end until the replica had applied every heartbeat written by then, to within 100 ms; \"lost\": the replica could not be read from that second of the step on. DBMS: PostgreSQL's largest pg_stat_replication.replay_lag, MariaDB's largest Seconds_Behind_Master (whole seconds), read once a second. Replica CPU µs/row and applied bytes/row: the replica's process tree's CPU (on this host only; n/a for a replica elsewhere; counted in 10 ms clock ticks, so shown to the digit one tick per row supports, \"<X\" under one tick) and how far its replay position moved (PostgreSQL's WAL replay LSN, MariaDB's Exec_Master_Log_Pos), from the step's start until it caught up, per row the step inserted or deleted on the primary. Slot WAL held (PostgreSQL, when read): the most WAL the standby's replication slot kept on the primary during the step (its pg_current_wal_lsn() less the slot's restart_lsn), \"slot lost\" once the primary invalidated it.".to_string(),
    ));
    if charts && let Some(chart) = lag_chart(runs) {
        b.push(Block::Chart(chart));
    }
    b
}

/// One run's replica in a line, the run named by `key`: its mode and versions, or none.
fn mode_line(key: &str, run: &LoadedRun) -> String {
    let Some(r) = &run.record.replica else {
        return format!("{key}: no replica");
    };
    let mode = match (r.mode, &r.synchronous_commit) {
        (ReplicaMode::Sync, Some(c)) => format!("synchronous replica (synchronous_commit = {c})"),
        (ReplicaMode::Sync, None) => "synchronous replica".to_string(),
        (ReplicaMode::Semisync, _) => "semi-synchronous replica".to_string(),
        (ReplicaMode::Async, _) => "asynchronous replica".to_string(),
    };
    let versions = if r.version == r.primary_version {
        format!("version {}", r.version)
    } else {
        format!("replica {}, primary {}", r.version, r.primary_version)
    };
    format!("{key}: {mode}, {versions}")
}

/// A step's figures, in the order of its cells (the slot's last, where one was read).
const FIGURES: [&str; 7] = [
    "max lag ms",
    "p99 lag ms",
    "catch-up s",
    "DBMS lag",
    "replica CPU µs/row",
    "applied bytes/row",
    "slot WAL held MB",
];

/// One run with a replica: a row per step and a column per figure. More: a table per figure,
/// a row per run (by key) and a column per step, as the throughput tables are laid out, so
/// that nine runs read as nine rows, not 63 columns.
fn lag_tables(cmp: &Comparison, runs: &[LoadedRun]) -> Vec<DocTable> {
    let with: Vec<&LoadedRun> = runs.iter().filter(|r| r.record.replica.is_some()).collect();
    // The slot's column only where a PostgreSQL standby's slot was read.
    let slots = with.iter().any(|r| {
        r.record
            .steps
            .iter()
            .any(|s| s.replication.as_ref().is_some_and(|p| p.slot.is_some()))
    });
    let figures = &FIGURES[..6 + usize::from(slots)];
    let mut steps = Vec::new();
    for r in &with {
        for s in &r.record.steps {
            if !steps.contains(&s.name) {
                steps.push(s.name);
            }
        }
    }
    // cells[run][step][figure]
    let cells: Vec<Vec<Vec<DocCell>>> = with
        .iter()
        .map(|r| {
            steps
                .iter()
                .map(|name| step_cells(r.record.steps.iter().find(|s| s.name == *name), slots))
                .collect()
        })
        .collect();
    let step_names: Vec<String> = steps.iter().map(ToString::to_string).collect();
    if with.len() == 1 {
        let rows = step_names
            .iter()
            .zip(&cells[0])
            .map(|(name, c)| DocRow {
                label: name.clone(),
                cells: c.clone(),
                ..DocRow::default()
            })
            .collect();
        let columns = figures.iter().map(ToString::to_string).collect();
        return vec![DocTable::new("step", columns, rows)];
    }
    figures
        .iter()
        .enumerate()
        .map(|(i, figure)| {
            let rows = with
                .iter()
                .zip(&cells)
                .map(|(r, per_step)| DocRow {
                    label: cmp.key_of(&r.label).to_string(),
                    cells: per_step.iter().map(|c| c[i].clone()).collect(),
                    ..DocRow::default()
                })
                .collect();
            DocTable::new(&format!("{figure}, run"), step_names.clone(), rows)
        })
        .collect()
}

/// A step's six cells, and the slot's with `slots`.
fn step_cells(step: Option<&StepRecord>, slots: bool) -> Vec<DocCell> {
    let Some(rep) = step.and_then(|s| s.replication.as_ref()) else {
        return (0..6 + usize::from(slots))
            .map(|_| missing("n/a"))
            .collect();
    };
    let lost = rep.lost_from_second.map(|s| format!("lost from {s:.1} s"));
    let ms = |v: Option<f64>| match (v, &lost) {
        (Some(v), _) => DocCell::plain(format_ms(v)),
        (None, Some(l)) => missing(l),
        (None, None) => missing("n/a"),
    };
    let catch_up = match (rep.catch_up_seconds, &lost) {
        (Some(s), _) => DocCell::plain(format!("{s:.2}")),
        (None, Some(l)) => missing(l),
        (None, None) => missing("not caught up"),
    };
    let mut max = ms(rep.lag_max_ms);
    if rep.lag_max_ms.is_some()
        && let Some(l) = &lost
    {
        max.partial = Some(l.clone());
    }
    let per_row = |v: Option<f64>| match v {
        Some(v) => DocCell::plain(format_ms(v)),
        None => missing("n/a"),
    };
    let mut cells = vec![
        max,
        ms(rep.lag_p99_ms),
        catch_up,
        dbms_cell(rep),
        cpu_per_row_cell(rep),
        per_row(rep.applied_bytes_per_row),
    ];
    if slots {
        cells.push(slot_cell(rep));
    }
    cells
}

/// The resolution of the replica's CPU seconds: one clock tick of `/proc`'s CPU times
/// (`USER_HZ`, 100 a second on Linux).
pub const CPU_TICK_SECONDS: f64 = 0.01;

/// The replica's CPU per row written, µs, with only the digits one clock tick supports: a
/// tick is `CPU_TICK_SECONDS × 10⁶ / rows` µs per row, and the last digit shown is of the
/// power of ten at or above it (a tick of 0.5 µs/row: whole µs; of 5: tens; of 0.05: one
/// decimal). Under one tick (no tick counted): `<` one tick per row.
fn cpu_per_row_cell(rep: &StepReplication) -> DocCell {
    match (rep.replica_cpu_seconds, rep.rows_written) {
        (Some(cpu_s), Some(rows)) if rows > 0 => DocCell::plain(cpu_per_row_text(cpu_s, rows)),
        _ => match rep.replica_cpu_us_per_row {
            Some(v) => DocCell::plain(format_ms(v)),
            None => missing("n/a"),
        },
    }
}

/// [`cpu_per_row_cell`]'s text: `cpu_s` seconds of CPU over `rows` rows (more than none).
fn cpu_per_row_text(cpu_s: f64, rows: u64) -> String {
    let rows = crate::stats::convert::count_f64(rows);
    let tick_us = CPU_TICK_SECONDS * 1e6 / rows;
    if cpu_s < CPU_TICK_SECONDS / 2.0 {
        // Two significant digits of one tick, rounded up: under it for sure.
        let place = 10f64.powf((tick_us.log10()).floor() - 1.0);
        let bound = (tick_us / place).ceil() * place;
        let text = trim_decimals(bound, place);
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        return format!("<{text}");
    }
    let us = cpu_s * 1e6 / rows;
    // The power of ten at or above one tick: the last digit shown.
    let place = 10f64.powf(tick_us.log10().ceil());
    let rounded = (us / place).round() * place;
    if place >= 1.0 {
        crate::stats::thousands::group_f(rounded)
    } else {
        trim_decimals(rounded, place)
    }
}

/// `v` with as many decimals as `place` (a power of ten under 1) has.
fn trim_decimals(v: f64, place: f64) -> String {
    let mut decimals = 0;
    let mut p = place;
    while p < 0.999 && decimals < 9 {
        p *= 10.0;
        decimals += 1;
    }
    format!("{v:.decimals$}")
}

/// The most WAL the standby's slot held back on the primary over the step, MB; "lost" when
/// the primary invalidated it.
fn slot_cell(rep: &StepReplication) -> DocCell {
    let Some(slot) = &rep.slot else {
        return missing("n/a");
    };
    let held = slot
        .retained_wal_max_bytes
        .map(|b| format!("{:.1}", crate::stats::convert::count_f64(b) / 1e6));
    match (held, &slot.lost) {
        (Some(h), None) => DocCell::plain(h),
        (Some(h), Some(_)) => DocCell {
            partial: Some("slot lost".to_string()),
            ..DocCell::plain(h)
        },
        (None, Some(_)) => missing("slot lost"),
        (None, None) => missing("n/a"),
    }
}

fn missing(text: &str) -> DocCell {
    DocCell {
        missing: true,
        ..DocCell::plain(text)
    }
}

/// The DBMS's own largest lag: PostgreSQL's replay_lag (ms), MariaDB's Seconds_Behind_Master.
fn dbms_cell(rep: &StepReplication) -> DocCell {
    let Some(v) = &rep.dbms else {
        return missing("n/a");
    };
    if let Some(ms) = v.replay_lag_max_ms {
        return DocCell::plain(format!("{} ms", format_ms(ms)));
    }
    if let Some(s) = v.seconds_behind_master_max {
        return DocCell::plain(format!("{s} s"));
    }
    missing("n/a")
}

/// The lag per second over each run's steps, one after another, each run in its colour of
/// the report's other charts; `None` when no second has a reading.
fn lag_chart(runs: &[LoadedRun]) -> Option<String> {
    let series: Vec<super::svg::Line> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.record.replica.is_some())
        .map(|(run, r)| {
            let mut offset = 0.0;
            let mut last_step = None;
            let mut last_second = 0.0;
            let mut points = Vec::new();
            for line in &r.timeline {
                if last_step != Some(line.step) {
                    offset += last_second;
                    last_step = Some(line.step);
                }
                last_second = f64::from(line.second);
                if let Some(lag) = line.replica_lag_ms {
                    points.push((offset + last_second, lag));
                }
            }
            super::svg::Line {
                label: r.label.clone(),
                run,
                second: false,
                points,
            }
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(super::svg::run_line_chart(
        "Replica lag per second (the largest heartbeat reading in each second)",
        "seconds of measured steps",
        "lag, ms",
        &series,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replica_s_cpu_per_row_shows_only_the_digits_a_tick_supports() {
        // 20,000 rows: a tick is 0.5 µs/row; 0.25 s of CPU is 12.5 µs/row: whole µs.
        assert_eq!(cpu_per_row_text(0.25, 20_000), "13");
        // 2,000 rows: a tick is 5 µs/row; 0.25 s is 125 µs/row: tens.
        assert_eq!(cpu_per_row_text(0.25, 2_000), "130");
        // 1,000,000 rows: a tick is 0.01 µs/row: two decimals.
        assert_eq!(cpu_per_row_text(1.234, 1_000_000), "1.23");
        // 200,000 rows: a tick is 0.05 µs/row: one decimal.
        assert_eq!(cpu_per_row_text(0.37, 200_000), "1.9");
        // 10,000 rows: a tick is 1 µs/row: whole µs; 3 ticks, 3 µs/row.
        assert_eq!(cpu_per_row_text(0.03, 10_000), "3");
        // 30 s over 10,000 rows: 3,000 µs/row, grouped.
        assert_eq!(cpu_per_row_text(30.0, 10_000), "3,000");
        // No tick counted: under one tick per row.
        assert_eq!(cpu_per_row_text(0.0, 20_000), "<0.5");
        assert_eq!(cpu_per_row_text(0.0, 30_000), "<0.34");
        assert_eq!(cpu_per_row_text(0.0, 3_000), "<3.4");
        assert_eq!(cpu_per_row_text(0.0, 700), "<15");
    }

    fn step(rep: StepReplication) -> StepRecord {
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let mut s = crate::results::read_run(&fixture).unwrap().steps.remove(0);
        s.replication = Some(rep);
        s
    }

    /// The apply work per row where the replica was sampled; n/a for a remote one.
    #[test]
    fn apply_work_per_row_or_na() {
        let mut rep = StepReplication {
            replica_cpu_seconds: Some(0.25),
            applied_bytes: Some(1_500_000),
            ..StepReplication::default()
        };
        rep.per_row(5000);
        let cells = step_cells(Some(&step(rep)), false);
        assert_eq!(cells.len(), 6);
        // 0.25 s over 5,000 rows: 50 µs/row, a tick being 2 µs/row: tens, no decimal.
        assert_eq!((cells[4].text.as_str(), cells[4].missing), ("50", false));
        assert_eq!(cells[5].text, "300");
        let mut remote = StepReplication {
            applied_bytes: Some(1_500_000),
            ..StepReplication::default()
        };
        remote.per_row(5000);
        let cells = step_cells(Some(&step(remote)), false);
        assert_eq!((cells[4].text.as_str(), cells[4].missing), ("n/a", true));
        assert_eq!(cells[5].text, "300");
    }

    /// The slot's column: the most WAL it held, in MB, marked when the primary invalidated it.
    #[test]
    fn the_slot_column_holds_the_wal_kept_or_lost() {
        use crate::results::replication::SlotRetention;
        let with_slot = |retained: Option<u64>, lost: Option<&str>| StepReplication {
            slot: Some(SlotRetention {
                name: "ibench_replica_1".to_string(),
                retained_wal_max_bytes: retained,
                lost: lost.map(str::to_string),
                ..SlotRetention::default()
            }),
            ..StepReplication::default()
        };
        let cells = step_cells(Some(&step(with_slot(Some(16_777_216), None))), true);
        assert_eq!(cells.len(), 7);
        assert_eq!(
            (cells[6].text.as_str(), cells[6].partial.as_deref()),
            ("16.8", None)
        );
        let cells = step_cells(Some(&step(with_slot(Some(3_000_000), Some("gone")))), true);
        assert_eq!(cells[6].partial.as_deref(), Some("slot lost"));
        let cells = step_cells(Some(&step(with_slot(None, Some("gone")))), true);
        assert_eq!(
            (cells[6].text.as_str(), cells[6].missing),
            ("slot lost", true)
        );
        let cells = step_cells(Some(&step(StepReplication::default())), true);
        assert_eq!((cells[6].text.as_str(), cells[6].missing), ("n/a", true));
        assert_eq!(step_cells(None, true).len(), 7);
    }
}
