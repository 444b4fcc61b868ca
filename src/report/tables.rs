//! The comparison's tables: absolute throughput, throughput relative to the base, the
//! background insert rates of the query steps, the microbenchmark view, and the throughput per
//! client and scaling efficiency when the runs' clients differ; each cell's colour
//! (spec section 7) and note (SLA failed, unfinished, check failed, unsettled start,
//! host-affected, within the base's spread).

use super::diagnosis::StepBands;
use super::differs::RunSetup;
use super::host::HostView;

use super::load::LoadedRun;
use super::model::{Cell, CellNote, Colour, MicroView, Scaling, StepRows, Table, TableRow};
use super::paint::{Evidence, paint};
use crate::results::metrics::METRICS;
use crate::results::{CheckKind, Status, StepRecord};
use crate::stats::OpKind;
use crate::stats::convert::count_f64;
use crate::stats::decision::{Evidence as Measured, FigureKind};
use crate::workload::steps::StepName;

/// The absolute throughput table, and its cells per run (the relative table divides them).
pub(super) fn absolute_table(runs: &[LoadedRun], steps: &[StepName]) -> (Table, Vec<Vec<Cell>>) {
    // 1. Absolute throughput.
    let mut abs_cells: Vec<Vec<Cell>> = vec![Vec::new(); runs.len()];
    for &step in steps {
        let column: Vec<Option<&StepRecord>> = runs.iter().map(|r| r.record.step(step)).collect();
        let values: Vec<Option<(f64, bool)>> = column
            .iter()
            .map(|s| s.map(|s| (s.throughput, sla_failed(s))))
            .collect();
        let colours = absolute_colours(&values);
        for (i, s) in column.iter().enumerate() {
            abs_cells[i].push(match s {
                None => Cell::missing(CellNote::Missing),
                Some(s) => Cell {
                    value: Some(s.throughput),
                    colour: colours[i],
                    note: if sla_failed(s) {
                        Some(CellNote::SlaFailed)
                    } else {
                        status_note(s)
                            .or_else(|| check_note(s))
                            .or_else(|| unsettled_note(&runs[i], step))
                    },
                    interval: None,
                },
            });
        }
    }
    let absolute = Table {
        columns: steps.to_vec(),
        rows: runs
            .iter()
            .zip(abs_cells.iter())
            .map(|(r, cells)| TableRow {
                label: r.label.clone(),
                cells: cells.clone(),
            })
            .collect(),
    };
    (absolute, abs_cells)
}

/// Each run's throughput divided by the base's, per step.
pub(super) fn relative_table(
    runs: &[LoadedRun],
    steps: &[StepName],
    abs_cells: &[Vec<Cell>],
    base_index: usize,
) -> Table {
    // 2. Relative to the base.
    Table {
        columns: steps.to_vec(),
        rows: abs_cells
            .iter()
            .zip(runs)
            .map(|(cells, r)| TableRow {
                label: r.label.clone(),
                cells: cells
                    .iter()
                    .zip(&abs_cells[base_index])
                    .map(|(c, b)| match (c.value, b.value) {
                        (Some(v), Some(bv)) if bv > 0.0 => {
                            let rel = v / bv;
                            let p = paint(&Evidence {
                                note: c.note.as_ref(),
                                ..Evidence::of_rate(rel)
                            });
                            Cell {
                                value: Some(rel),
                                colour: p.colour,
                                note: p.note,
                                interval: None,
                            }
                        }
                        (None, _) => Cell::missing(CellNote::Missing),
                        _ => Cell::missing(CellNote::NoBase),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The background insert rates of the query steps, and their targets.
pub(super) fn background_table(
    runs: &[LoadedRun],
    steps: &[StepName],
) -> (Table, Vec<Option<f64>>) {
    // 3. Background insert rates of the steps with background writers (the query steps).
    let query_steps: Vec<StepName> = steps
        .iter()
        .copied()
        .filter(|&n| {
            runs.iter()
                .filter_map(|r| r.record.step(n))
                .any(has_background_writers)
        })
        .collect();
    let mut targets = vec![None; query_steps.len()];
    let background = Table {
        columns: query_steps.clone(),
        rows: runs
            .iter()
            .map(|r| TableRow {
                label: r.label.clone(),
                cells: query_steps
                    .iter()
                    .enumerate()
                    .map(
                        |(j, &step)| match r.record.step(step).and_then(|s| s.sla.as_ref()) {
                            None => Cell::missing(CellNote::Missing),
                            Some(sla) => {
                                targets[j] = Some(sla.target_rows_per_sec);
                                Cell {
                                    value: Some(sla.achieved_rows_per_sec),
                                    colour: background_colour(
                                        sla.achieved_rows_per_sec,
                                        sla.target_rows_per_sec,
                                    ),
                                    note: (!sla.passed).then_some(CellNote::SlaFailed),
                                    interval: None,
                                }
                            }
                        },
                    )
                    .collect(),
            })
            .collect(),
    };
    (background, targets)
}

/// The microbenchmark view of a comparison whose steps are all microbenchmark steps.
pub(super) fn micro_view(
    runs: &[LoadedRun],
    names: &[StepName],
    labels: &[String],
    absolute: &Table,
    relative: &Table,
) -> Option<MicroView> {
    if names.is_empty() || !names.iter().all(|n| n.is_micro()) {
        return None;
    }
    let per_op = METRICS
        .iter()
        .filter_map(|d| Some((d.shown.micro?, d.meaning, d.get)))
        .map(|(name, meaning, f)| {
            let rows = names
                .iter()
                .map(|&step| TableRow {
                    label: step,
                    cells: runs
                        .iter()
                        .map(|r| {
                            let value = r
                                .record
                                .step(step)
                                .and_then(|s| s.metrics.as_ref())
                                .and_then(|m| f(m).value());
                            Cell {
                                value,
                                colour: Colour::None,
                                note: value.is_none().then_some(CellNote::NotMeasured),
                                interval: None,
                            }
                        })
                        .collect(),
                })
                .collect();
            let table = Table {
                columns: labels.to_vec(),
                rows,
            };
            ((*name).to_string(), (*meaning).to_string(), table)
        })
        .collect();
    Some(MicroView {
        absolute: transpose(absolute, labels),
        relative: transpose(relative, labels),
        per_op,
    })
}

/// Colours of the absolute-throughput column (spec section 7): top quarter of the column's
/// range green, bottom quarter red (no red when min ≥ 0.8 × max); SLA failures grey and left
/// out of the range. `values[i]` is `(value, sla_failed)`.
pub fn absolute_colours(values: &[Option<(f64, bool)>]) -> Vec<Colour> {
    let ok: Vec<f64> = values
        .iter()
        .flatten()
        .filter(|(_, failed)| !failed)
        .map(|(v, _)| *v)
        .collect();
    let max = ok.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = ok.iter().copied().fold(f64::INFINITY, f64::min);
    values
        .iter()
        .map(|v| match v {
            None => Colour::None,
            Some((_, true)) => Colour::Grey,
            Some((v, false)) => {
                if ok.len() < 2 || max <= min {
                    Colour::None
                } else {
                    let quarter = (max - min) / 4.0;
                    if *v >= max - quarter {
                        Colour::Green
                    } else if *v <= min + quarter && min < 0.8 * max {
                        Colour::Red
                    } else {
                        Colour::None
                    }
                }
            }
        })
        .collect()
}

/// Colour of a background insert rate: red below 95% of the target (`report::paint::sla`).
pub fn background_colour(achieved: f64, target: f64) -> Colour {
    super::paint::sla(achieved < 0.95 * target)
}

/// Paint the relative cells again now that the host view (`host`) and the runs' spreads over
/// their repeats (`spreads[i]`, run `i`'s steps' own bands; empty outside a matrix) are known:
/// every cell's paint is [`paint`]'s, with what its run's step says against it, and the
/// base's spread as the noise band. A run with a spread gets its interval: the figure times
/// its band.
pub(super) fn paint_relative(
    relative: &mut Table,
    abs_cells: &[Vec<Cell>],
    base: usize,
    host: &super::host::HostView,
    spreads: &[StepBands],
    measures: Option<&[Vec<Option<Measured>>]>,
) {
    let no_spread = StepBands::default();
    let noise = spreads.get(base).unwrap_or(&no_spread);
    let measure = |i: usize, j: usize| measures?.get(i)?.get(j)?.as_ref();
    for (i, row) in relative.rows.iter_mut().enumerate() {
        for (j, (cell, step)) in row.cells.iter_mut().zip(&relative.columns).enumerate() {
            let Some(ratio) = cell.value else {
                continue;
            };
            let flag = host.flag(*step, &row.label).filter(|_| i != base);
            let note = abs_cells
                .get(i)
                .and_then(|r| r.get(j))
                .and_then(|c| c.note.as_ref());
            let measured = measure(base, j).zip(measure(i, j)).filter(|_| i != base);
            let p = paint(&Evidence {
                host: flag.map(|f| f.reasons.as_slice()),
                note,
                spread: noise.own(*step).filter(|_| i != base),
                measured,
                // One duet round a side counts as the steady host, as in `ibench check`.
                steady_host: i == base || host.steady(&row.label) || host.duet(&row.label),
                duet: i != base && host.duet(&row.label),
                ..Evidence::of_rate(ratio)
            });
            cell.colour = p.colour;
            cell.note = p.note;
            cell.interval = p.interval;
            // The ratio the rule used (paired, Welch, one run), not the ratio of medians.
            if i != base
                && let Some(used) = p.ratio
            {
                cell.value = Some(used);
            }
        }
    }
}

/// What each run measured of each step's throughput, for the decision rule: its repeats when
/// `spreads[i]` holds them (a matrix report), else the run's own per-second rates of the
/// step's main operation (whole seconds only), with the step's length. `[run][step]`.
pub(super) fn measures(
    runs: &[LoadedRun],
    steps: &[StepName],
    spreads: &[StepBands],
) -> Vec<Vec<Option<Measured>>> {
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            steps
                .iter()
                .map(|&step| match spreads.get(i).and_then(|b| b.repeats(step)) {
                    Some(m) => Some(m.clone()),
                    None => single_run(run, step),
                })
                .collect()
        })
        .collect()
}

/// A single run's measure of a step's throughput: the figure, its rate in each whole second
/// of the step, and the step's length.
fn single_run(run: &LoadedRun, step: StepName) -> Option<Measured> {
    let s = run.record.step(step)?;
    let kind = s.main_op();
    let per_second: Vec<f64> = run
        .timeline
        .iter()
        .filter(|l| l.step == step && whole_second(l.second, s.seconds))
        .filter_map(|l| l.ops.get(kind.name()).map(|c| count_f64(c.rate(kind))))
        .collect();
    let samples = per_second.len();
    Some(
        Measured::single_run(s.throughput, &per_second, FigureKind::Rate)
            .with_length(s.seconds, samples),
    )
}

/// Whether the timeline line of `second` (covering `(second - 1, second]`) is a whole second
/// of a step that lasted `length` seconds (a millisecond of slack for the clock): the last
/// line of a step that ended inside a second covers only part of it.
pub(super) fn whole_second(second: u32, length: f64) -> bool {
    f64::from(second) <= length + 1e-3
}

/// Paint the absolute table by the relative one's decisions: a figure whose relative figure
/// is not decided (host-affected, partial, too noisy, too short, within the base's spread) is
/// grey and left out of its column's range, as a failed SLA is (a host-affected one noted
/// so, marked ~); the others are coloured by the quarters of what is left
/// ([`absolute_colours`]).
pub(super) fn paint_absolute(absolute: &mut Table, relative: &Table) {
    for j in 0..absolute.columns.len() {
        let undecided = |i: usize| {
            relative
                .rows
                .get(i)
                .and_then(|r| r.cells.get(j))
                .is_some_and(super::paint::undecided)
        };
        let values: Vec<Option<(f64, bool)>> = absolute
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let c = r.cells.get(j)?;
                Some((
                    c.value?,
                    c.note == Some(CellNote::SlaFailed) || undecided(i),
                ))
            })
            .collect();
        let colours = absolute_colours(&values);
        for (i, row) in absolute.rows.iter_mut().enumerate() {
            let Some(cell) = row.cells.get_mut(j) else {
                continue;
            };
            cell.colour = colours[i];
            // A figure that may measure the host says so here too; one the rule could not
            // decide is only left unpainted (the figure itself is as measured).
            let host = relative.rows[i].cells[j].note.as_ref();
            if cell.note.is_none() && matches!(host, Some(CellNote::HostAffected(_))) {
                cell.note = host.cloned();
            }
        }
    }
}

/// Whether a step ran writers in the background of its main operation (a query step's
/// inserts and deletes): it recorded inserts while its throughput counts another op kind.
pub(super) fn has_background_writers(s: &StepRecord) -> bool {
    s.main_op() != OpKind::Insert && s.ops.contains_key(OpKind::Insert.name())
}

fn sla_failed(s: &StepRecord) -> bool {
    s.sla.as_ref().is_some_and(|x| !x.passed)
}

pub(super) fn status_note(s: &StepRecord) -> Option<CellNote> {
    (s.status != Status::Completed).then_some(CellNote::Unfinished(s.status))
}

/// The note of a figure whose step's checks failed: `check failed: integrity`.
fn check_note(s: &StepRecord) -> Option<CellNote> {
    let mut kinds: Vec<CheckKind> = s.check_failures.iter().map(|f| f.kind).collect();
    kinds.sort_by_key(ToString::to_string);
    kinds.dedup();
    (!kinds.is_empty()).then_some(CellNote::CheckFailed(kinds))
}

/// [`CellNote::UnsettledStart`] when the run's `step` started from an unsettled server.
fn unsettled_note(run: &LoadedRun, step: StepName) -> Option<CellNote> {
    let i = run.record.steps.iter().position(|s| s.name == step)?;
    run.record
        .unsettled_before(i)
        .map(|_| CellNote::UnsettledStart)
}

/// The absolute and the relative tables, painted (the relative against the base, `host` and
/// the base's spread), and the absolute cells that the other relative tables divide.
pub(super) fn painted_tables(
    runs: &[LoadedRun],
    steps: &[StepName],
    base_index: usize,
    (host, spreads): (&HostView, &[StepBands]),
    measured: &[Vec<Option<Measured>>],
) -> (Table, Table, Vec<Vec<Cell>>) {
    let (mut absolute, abs_cells) = absolute_table(runs, steps);
    let mut relative = relative_table(runs, steps, &abs_cells, base_index);
    paint_relative(
        &mut relative,
        &abs_cells,
        base_index,
        host,
        spreads,
        Some(measured),
    );
    paint_absolute(&mut absolute, &relative);
    (absolute, relative, abs_cells)
}

/// What each run measured of each step's throughput per the base's clients: its measures
/// times the base's clients / its own, so that the decision rule judges the scaling
/// efficiency as it judges the throughput. `[run][step]`.
pub(super) fn per_client_measures(
    runs: &[LoadedRun],
    steps: &[StepName],
    base_index: usize,
    measured: &[Vec<Option<Measured>>],
) -> Vec<Vec<Option<Measured>>> {
    runs.iter()
        .zip(measured)
        .map(|(run, row)| {
            steps
                .iter()
                .zip(row)
                .map(|(&step, m)| {
                    let s = run.record.step(step)?;
                    let b = runs.get(base_index)?.record.step(step)?;
                    if s.clients == 0 {
                        return None;
                    }
                    let factor = f64::from(b.clients) / f64::from(s.clients);
                    let mut m = m.clone()?;
                    m.values.iter_mut().for_each(|v| *v *= factor);
                    m.per_second.iter_mut().for_each(|v| *v *= factor);
                    Some(m)
                })
                .collect()
        })
        .collect()
}

/// A table with its rows and columns swapped: steps become rows, runs columns.
fn transpose(t: &Table, labels: &[String]) -> StepRows {
    Table {
        columns: labels.to_vec(),
        rows: t
            .columns
            .iter()
            .enumerate()
            .map(|(j, step)| TableRow {
                label: *step,
                cells: t
                    .rows
                    .iter()
                    .map(|r| {
                        r.cells
                            .get(j)
                            .cloned()
                            .unwrap_or_else(|| Cell::missing(CellNote::Missing))
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Throughput per client and scaling efficiency, when some run's clients differ from the
/// base's (`--clients`).
pub fn scaling(
    runs: &[LoadedRun],
    base: usize,
    steps: &[StepName],
    differences: &[RunSetup],
) -> Option<Scaling> {
    if !differences
        .iter()
        .any(|d| d.setup.named("--clients").is_some())
    {
        return None;
    }
    let cell = |value: Option<f64>, colour: Colour| Cell {
        value,
        colour,
        note: None,
        interval: None,
    };
    let table = |f: &dyn Fn(&LoadedRun, StepName) -> Option<f64>,
                 colour: &dyn Fn(f64) -> Colour| Table {
        columns: steps.to_vec(),
        rows: runs
            .iter()
            .map(|r| TableRow {
                label: r.label.clone(),
                cells: steps
                    .iter()
                    .map(|&step| {
                        let v = f(r, step);
                        cell(v, v.map_or(Colour::None, colour))
                    })
                    .collect(),
            })
            .collect(),
    };
    let per_client = table(
        &|r, step| {
            let s = r.record.step(step)?;
            (s.clients > 0).then(|| s.throughput / f64::from(s.clients))
        },
        &|_| Colour::None,
    );
    let base_run = runs.get(base)?;
    let efficiency = table(
        &|r, step| {
            let (s, b) = (r.record.step(step)?, base_run.record.step(step)?);
            if b.throughput <= 0.0 || b.clients == 0 || s.clients == 0 {
                return None;
            }
            let ratio = f64::from(s.clients) / f64::from(b.clients);
            Some(s.throughput / (b.throughput * ratio))
        },
        &|r| super::paint::paint(&super::paint::Evidence::of_rate(r)).colour,
    );
    Some(Scaling {
        per_client,
        efficiency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_colours_follow_the_quarters() {
        // Range 100..200: top quarter >= 175 green, bottom quarter <= 125 red.
        let v = [
            Some((200.0, false)),
            Some((180.0, false)),
            Some((150.0, false)),
            Some((120.0, false)),
            Some((100.0, false)),
        ];
        assert_eq!(
            absolute_colours(&v),
            [
                Colour::Green,
                Colour::Green,
                Colour::None,
                Colour::Red,
                Colour::Red
            ]
        );
    }

    #[test]
    fn no_red_when_the_spread_is_small_and_sla_failures_are_grey_and_ignored() {
        // min 85 >= 0.8 * 100: no red.
        let v = [Some((100.0, false)), Some((85.0, false))];
        assert_eq!(absolute_colours(&v), [Colour::Green, Colour::None]);
        // The 500 failed its SLA: grey, and the max is 100, not 500.
        let v = [
            Some((500.0, true)),
            Some((100.0, false)),
            Some((50.0, false)),
            None,
        ];
        assert_eq!(
            absolute_colours(&v),
            [Colour::Grey, Colour::Green, Colour::Red, Colour::None]
        );
        // One run: nothing to compare against.
        assert_eq!(absolute_colours(&[Some((1.0, false))]), [Colour::None]);
    }

    /// Three interleaved rounds whose host moved the medians apart: the ratio of the medians
    /// (150 / 200 = 0.75) is not the ratio the paired rule used (the geometric mean of the
    /// per-round ratios 1.1, 0.75, 1.1: 0.968). The relative table and the step's own table
    /// show the paired one, as `ibench check`'s change column does.
    #[test]
    fn every_table_shows_the_ratio_the_verdict_used() {
        let (loaded, problems) =
            super::super::load::load_runs(&[std::path::PathBuf::from("tests/fixtures/postgres")]);
        assert!(problems.is_empty(), "{problems:?}");
        let qr100: StepName = "qr100".parse().expect("a step");
        let run = |label: &str, median: f64| {
            let mut r = loaded[0].clone();
            r.label = label.into();
            r.record.label = label.into();
            for s in r.record.steps.iter_mut().filter(|s| s.name == qr100) {
                s.throughput = median;
            }
            r
        };
        let runs = vec![run("base", 200.0), run("cand", 150.0)];
        let rounds = [1, 2, 3];
        let bands = |values: &[f64]| {
            StepBands::default().with_repeats(vec![(
                qr100,
                Measured::repeats(values, FigureKind::Rate).in_rounds(&rounds),
            )])
        };
        let spreads = [bands(&[100.0, 200.0, 300.0]), bands(&[110.0, 150.0, 330.0])];
        let cmp =
            super::super::compare::compare_with_spreads(&runs, Some("base"), Vec::new(), &spreads);
        let j = cmp
            .relative
            .columns
            .iter()
            .position(|c| *c == qr100)
            .expect("qr100");
        let paired = (1.1_f64 * 0.75 * 1.1).powf(1.0 / 3.0);
        let shown = cmp.relative.rows[1].cells[j].value.expect("a ratio");
        assert!((shown - paired).abs() < 1e-9, "{shown} against {paired}");
        let detail = cmp
            .details
            .iter()
            .find(|d| d.step == qr100)
            .expect("qr100's table");
        let row = detail
            .metrics
            .iter()
            .find(|m| m.name == "throughput")
            .expect("its throughput row");
        let in_step = row.relative[1].expect("a ratio");
        assert!((in_step - paired).abs() < 1e-9, "{in_step}");
        // The base's own figure stays 1.
        assert_eq!(cmp.relative.rows[0].cells[j].value, Some(1.0));
    }

    #[test]
    fn background_thresholds() {
        assert_eq!(background_colour(94.9, 100.0), Colour::Red);
        assert_eq!(background_colour(95.0, 100.0), Colour::None);
    }
}
