//! `ibench matrix report`: per group and workload, the comparison of `ibench report` in every
//! format that writes a comparison (`report::Format::comparisons`: the series formats are
//! left out), and an index page linking them. Reads the union of one or more output dirs (the
//! shards of one matrix).
//!
//! With repeats, a combination's throughput is the median over its completed repeats; the
//! spread (min-max) is shown, and a relative value is marked as a change only when it lies
//! outside the base's spread (else it is grey, noted "within base spread"). Latency
//! distributions, charts and server metrics come from the repeat closest to the medians.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::cell::{CellStatus, cell_dir, read_state};
use super::plan::{Cell, Plan, PlanGroup};
use super::run::PLAN_FILE;
use crate::report::diagnosis::{NoiseBand, StepBands};
use crate::report::document::{self, Block, DocCell, DocRow, DocTable, Link};
use crate::report::load::{self, LoadedRun};
use crate::report::{Format, text::group_f};
use crate::report::{compare, model, run_table};
use crate::results::probe::median;
use crate::stats::decision::{Evidence, FigureKind};
use crate::workload::steps::StepName;

/// One combination's spread over its repeats, per step.
#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    /// The combination's label.
    pub label: String,
    /// The group member it stands for (`SERVER.CONFIG`).
    pub member: String,
    /// Completed repeats the figures come from.
    pub repeats: usize,
    /// The repeat whose details (latency, charts, metrics) are shown.
    pub details_from: String,
    /// Per step: (step, median, min, max) throughput.
    pub steps: Vec<(StepName, f64, f64, f64)>,
    /// Per step: the throughput of each repeat with the shortest repeat's length and fewest
    /// per-second samples, as the decision rule takes them (`stats::decision`).
    #[serde(skip)]
    pub measures: Vec<(StepName, Evidence)>,
}

impl Spread {
    /// Each step's spread as a band around its median (min / median ..= max / median), for
    /// the steps with a median above 0.
    fn bands(&self) -> StepBands {
        StepBands::new(
            self.steps
                .iter()
                .filter(|(_, med, ..)| *med > 0.0)
                .map(|&(step, med, min, max)| {
                    let band = NoiseBand {
                        low: min / med,
                        high: max / med,
                    };
                    (step, band)
                })
                .collect(),
        )
        .with_repeats(self.measures.clone())
    }
}

/// What `matrix report` wrote.
#[derive(Debug)]
pub struct Written {
    /// The index page.
    pub index: PathBuf,
    /// Reports written (one per group and workload, in each format).
    pub reports: Vec<PathBuf>,
    /// Problems, one line each.
    pub problems: Vec<String>,
}

/// Read the plans of the dirs: one matrix, or an error naming the odd dir.
pub fn read_plan(dirs: &[PathBuf]) -> Result<Plan> {
    let mut plan: Option<Plan> = None;
    for d in dirs {
        let path = d.join(PLAN_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a matrix output dir ({} cannot be read: {e}); give the --out dirs of `ibench matrix run`",
                d.display(),
                path.display()
            )
        })?;
        let p: Plan = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is unreadable; rerun `ibench matrix run` into that dir",
                path.display()
            )
        })?;
        match &plan {
            None => plan = Some(p),
            Some(first) => {
                let names = |p: &Plan| p.cells.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
                if names(first) != names(&p) {
                    bail!(
                        "{} holds results of another matrix than {} (their cells differ); report each matrix on its own",
                        d.display(),
                        dirs[0].display()
                    );
                }
            }
        }
    }
    plan.context("give at least one matrix output dir")
}

/// How the group reports are written: each step's detail in text and Markdown
/// (`--details`), and the replica-lag SLA's bound (`--lag-sla-ms`).
#[derive(Clone, Copy, Debug)]
pub struct Choices {
    /// Each step's detail in the text and Markdown reports (HTML always has it, folded).
    pub details: bool,
    /// The bound on a step's p99 replica lag, ms (`report::lag_sla`).
    pub lag_sla_ms: f64,
}

impl Default for Choices {
    /// Short text and Markdown reports, the default lag bound.
    fn default() -> Choices {
        Choices {
            details: false,
            lag_sla_ms: crate::report::lag_sla::DEFAULT_LAG_SLA_MS,
        }
    }
}

/// Where and how the group reports are written.
struct Destination<'a> {
    /// The report directory.
    out: &'a Path,
    /// What the reports show.
    choices: Choices,
}

/// Render every group's report into `out`, short, with the default lag bound.
pub fn write(dirs: &[PathBuf], out: &Path) -> Result<Written> {
    write_with(dirs, out, Choices::default())
}

/// Render every group's report into `out` as `choices` say.
pub fn write_with(dirs: &[PathBuf], out: &Path, choices: Choices) -> Result<Written> {
    let plan = read_plan(dirs)?;
    let (runs, mut problems) = completed_runs(&plan, dirs);
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create {}; choose another --out", out.display()))?;
    let mut reports = Vec::new();
    let mut index_rows: Vec<IndexRow> = Vec::new();
    for g in &plan.groups {
        for w in &g.workloads {
            let dest = Destination { out, choices };
            if let Some(row) = group_report(&plan, g, w, &runs, &dest, &mut reports, &mut problems)?
            {
                index_rows.push(row);
            }
        }
    }
    let index = out.join("index.html");
    std::fs::write(&index, index_html(&plan, &index_rows, &problems))
        .with_context(|| format!("cannot write {}", index.display()))?;
    std::fs::write(
        out.join("index.md"),
        index_md(&plan, &index_rows, &problems),
    )
    .with_context(|| format!("cannot write {}", out.join("index.md").display()))?;
    Ok(Written {
        index,
        reports,
        problems,
    })
}

/// The completed run dir of every cell (by cell name), from whichever of `dirs` (the shards'
/// output dirs) ran it; a problem line for each cell that is not (yet) completed. With
/// [`combo_runs`], the one rule for which runs a group's member has.
pub fn completed_runs(plan: &Plan, dirs: &[PathBuf]) -> (BTreeMap<String, PathBuf>, Vec<String>) {
    let mut problems = Vec::new();
    // Completed run dirs per cell, from whichever shard ran them.
    let mut runs: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut states: BTreeMap<String, (CellStatus, Option<String>)> = BTreeMap::new();
    for cell in &plan.cells {
        let mut found = Vec::new();
        for d in dirs {
            let cd = cell_dir(d, &cell.name);
            if let Some(s) = read_state(&cd) {
                if s.status == CellStatus::Completed {
                    found.push(cd.join("run"));
                }
                states
                    .entry(cell.name.clone())
                    .and_modify(|e| {
                        if s.status == CellStatus::Completed {
                            *e = (s.status, None);
                        }
                    })
                    .or_insert((s.status, s.error.clone()));
            }
        }
        if found.len() > 1 {
            problems.push(format!(
                "{} was completed in {} dirs; using {}",
                cell.name,
                found.len(),
                found[0].display()
            ));
        }
        if let Some(f) = found.into_iter().next() {
            runs.insert(cell.name.clone(), f);
        }
    }
    for cell in &plan.cells {
        match states.get(&cell.name) {
            None => problems.push(format!("{}: not run yet", cell.name)),
            Some((CellStatus::Completed, _)) => {}
            Some((s, e)) => problems.push(format!(
                "{}: {:?}{}",
                cell.name,
                s,
                e.as_deref()
                    .map(|e| format!(": {}", e.lines().next().unwrap_or("")))
                    .unwrap_or_default()
            )),
        }
    }

    (runs, problems)
}

/// Every cell's run that recorded something, for `ibench check`, which reads failed cells too
/// (the steps before the failure count; docs/check.md): the completed one by
/// [`completed_runs`]'s rule, else the first of `dirs` whose cell holds a `run.json`. With
/// [`combo_runs`], a group's member's runs as the check sees them.
pub fn recorded_runs(plan: &Plan, dirs: &[PathBuf]) -> BTreeMap<String, PathBuf> {
    let (mut runs, _) = completed_runs(plan, dirs);
    for cell in &plan.cells {
        if runs.contains_key(&cell.name) {
            continue;
        }
        let recorded = dirs
            .iter()
            .map(|d| cell_dir(d, &cell.name).join("run"))
            .find(|r| r.join(crate::results::RUN_FILE).is_file());
        if let Some(run) = recorded {
            runs.insert(cell.name.clone(), run);
        }
    }
    runs
}

/// The completed runs of one combination (`SERVER.CONFIG.WORKLOAD`, a group member's cells
/// for one workload), in plan order, each with its repeat's name (`r1`): `runs` are
/// [`completed_runs`]'s.
pub fn combo_runs(
    plan: &Plan,
    runs: &BTreeMap<String, PathBuf>,
    combo: &str,
) -> Vec<(PathBuf, String)> {
    plan.cells
        .iter()
        .filter(|c| c.combo == combo)
        .filter_map(|c| {
            let run = runs.get(&c.name)?.clone();
            let repeat = c.name.rsplit('.').next().unwrap_or(&c.name).to_string();
            Some((run, repeat))
        })
        .collect()
}

/// The runs one report of group `g` compares for workload `w`: `(member, combo)` per group
/// member, or per member and variant when `w` is a workload with axes (`pg15.base.clients-4`,
/// `pg15.base.w_clients-4`); and the base member (for a workload with axes: the group's base
/// with the first variant).
fn report_members(plan: &Plan, g: &PlanGroup, w: &str) -> (Vec<(String, String)>, String) {
    let variants: Vec<(&str, &str)> = plan
        .workloads
        .iter()
        .filter(|pw| pw.family.as_deref() == Some(w))
        .filter_map(|pw| Some((pw.variant.as_deref()?, pw.name.as_str())))
        .collect();
    if variants.is_empty() {
        let units = g
            .members
            .iter()
            .map(|m| (m.clone(), format!("{m}.{w}")))
            .collect();
        return (units, g.base.clone());
    }
    let units = g
        .members
        .iter()
        .flat_map(|m| {
            variants
                .iter()
                .map(move |(v, name)| (format!("{m}.{v}"), format!("{m}.{name}")))
        })
        .collect();
    (units, format!("{}.{}", g.base, variants[0].0))
}

/// One group's report for one workload, in every format; its row of the index, or `None`
/// when none of its members has a completed run.
fn group_report(
    plan: &Plan,
    g: &PlanGroup,
    w: &str,
    runs: &BTreeMap<String, PathBuf>,
    dest: &Destination,
    reports: &mut Vec<PathBuf>,
    problems: &mut Vec<String>,
) -> Result<Option<IndexRow>> {
    let title = format!("{} / {}", g.name, w);
    let (units, base) = report_members(plan, g, w);
    let mut members: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for (m, combo) in &units {
        let dirs: Vec<PathBuf> = combo_runs(plan, runs, combo)
            .into_iter()
            .map(|(dir, _)| dir)
            .collect();
        if dirs.is_empty() {
            problems.push(format!("{title}: {m} has no completed run (left out)"));
        } else {
            members.push((m.clone(), dirs));
        }
    }
    if members.is_empty() {
        problems.push(format!("{title}: no completed run; no report"));
        return Ok(None);
    }
    let order = plan.order;
    let (synth, spreads, mut group_problems) = combine(&members, order);
    let host = host_blocks(&members);
    let base_index = members.iter().position(|(m, _)| *m == base);
    if base_index.is_none() {
        group_problems.push(format!(
            "the base {base} has no completed run; comparing against {}",
            members[0].0
        ));
    }
    let base_label = synth[base_index.unwrap_or(0)].label.clone();
    // With repeats, the base's spread is the noise band: a relative value is a change only
    // outside it.
    let bands: Vec<StepBands> = if plan.repeats > 1 {
        spreads.iter().map(Spread::bands).collect()
    } else {
        Vec::new()
    };
    let mut cmp = compare::compare_with_spreads(&synth, Some(&base_label), group_problems, &bands);
    cmp.judge_lag(&synth, dest.choices.lag_sla_ms);
    let base_member = base_index.map_or(members[0].0.as_str(), |i| members[i].0.as_str());
    cmp.axis = Some(axis_check(plan, &units, &members, base_member));
    // Name the runs by their server and config names, less what they all share.
    let members: Vec<String> = spreads.iter().map(|s| s.member.replace('.', " ")).collect();
    cmp.set_keys(run_table::short_keys(&members));
    let stem = format!("{}.{}", g.name, w);
    let files = write_formats(
        (&cmp, &synth),
        (&spreads, &host),
        plan.repeats,
        (dest, &stem),
        reports,
    )?;
    let row = IndexRow {
        title,
        base: synth[base_index.unwrap_or(0)].label.clone(),
        labels: synth
            .iter()
            .map(|r| r.label.clone())
            .collect::<Vec<_>>()
            .join(", "),
        files,
        tldr: cmp.tldr.painted_items(),
    };
    problems.extend(cmp.problems.iter().map(|p| format!("{}/{w}: {p}", g.name)));
    Ok(Some(row))
}

/// Write a group's report in every format of a comparison, as `dest` says, each named
/// `STEM.EXT` (added to `reports`); the files' names.
fn write_formats(
    (cmp, synth): (&model::Comparison, &[LoadedRun]),
    extra: (&[Spread], &[Block]),
    repeats: u32,
    (dest, stem): (&Destination, &str),
    reports: &mut Vec<PathBuf>,
) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for format in Format::comparisons() {
        let ext = format.extension();
        let text = render(cmp, synth, extra, format, (repeats, dest.choices.details))?;
        let path = dest.out.join(format!("{stem}.{ext}"));
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        files.push(format!("{stem}.{ext}"));
        reports.push(path);
    }
    Ok(files)
}

/// The plan's cell of a member of a report (`units`: member and combo).
fn member_cell<'a>(plan: &'a Plan, units: &[(String, String)], member: &str) -> Option<&'a Cell> {
    let (_, combo) = units.iter().find(|(m, _)| m == member)?;
    plan.cells.iter().find(|c| c.combo == *combo)
}

/// The options of a plan workload as JSON fields (the `ibench run` flags, `_` for `-`).
fn workload_fields(plan: &Plan, name: &str) -> serde_json::Map<String, serde_json::Value> {
    plan.workload(name)
        .and_then(|w| serde_json::to_value(&w.options).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

/// The flags whose values differ between two plan workloads (`--clients`), each with the
/// two values.
fn axis_flags(plan: &Plan, a: &str, b: &str) -> Vec<(String, String, String)> {
    let (fa, fb) = (workload_fields(plan, a), workload_fields(plan, b));
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    let text = |v: Option<&serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    };
    keys.into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| {
            let flag = format!("--{}", k.replace('_', "-"));
            (flag, text(fa.get(k)), text(fb.get(k)))
        })
        .collect()
}

/// The setting names a config's text sets (`name = value` lines; `#` comments and `[section]`
/// heads skipped), lower case with `_` for `-`.
fn config_keys(text: Option<&str>) -> Vec<String> {
    text.unwrap_or("")
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with('['))
        .filter_map(|l| l.split('=').next())
        .map(|k| {
            k.trim()
                .trim_start_matches("loose-")
                .replace('-', "_")
                .to_lowercase()
        })
        .collect()
}

/// The config text of a server's config.
fn config_text<'a>(plan: &'a Plan, server: &str, config: &str) -> Option<&'a str> {
    plan.server(server)?
        .configs
        .iter()
        .find(|c| c.name == config)?
        .text
        .as_deref()
}

/// What a group's report varies (its servers, configs and workload axes), and every cell
/// (each repeat of each member) whose setup differs from the base's beyond that, by name.
fn axis_check(
    plan: &Plan,
    units: &[(String, String)],
    members: &[(String, Vec<PathBuf>)],
    base_member: &str,
) -> model::AxisCheck {
    let cells: Vec<&Cell> = members
        .iter()
        .filter_map(|(m, _)| member_cell(plan, units, m))
        .collect();
    let Some(base_cell) = member_cell(plan, units, base_member) else {
        return model::AxisCheck::default();
    };
    let mut varies = Vec::new();
    let distinct = |f: fn(&Cell) -> &str| {
        let mut names: Vec<&str> = Vec::new();
        for c in &cells {
            if !names.contains(&f(c)) {
                names.push(f(c));
            }
        }
        names
    };
    for (what, names) in [
        ("the server", distinct(|c| &c.server)),
        ("the config", distinct(|c| &c.config)),
    ] {
        if names.len() > 1 {
            varies.push(format!("{what} ({})", names.join(", ")));
        }
    }
    let mut flags: Vec<(String, Vec<String>)> = Vec::new();
    for c in &cells {
        for (flag, base_value, value) in axis_flags(plan, &base_cell.workload, &c.workload) {
            let entry = match flags.iter_mut().find(|(f, _)| *f == flag) {
                Some(e) => e,
                None => {
                    flags.push((flag, vec![base_value]));
                    flags.last_mut().expect("just pushed")
                }
            };
            if !entry.1.contains(&value) {
                entry.1.push(value);
            }
        }
    }
    flags.sort();
    varies.extend(flags.iter().map(|(f, v)| format!("{f} ({})", v.join(", "))));
    let warnings = beyond_axis(plan, units, members, base_member, base_cell);
    model::AxisCheck {
        varies: if varies.is_empty() {
            "nothing (its cells are one setup)".into()
        } else {
            varies.join(", ")
        },
        warnings,
    }
}

/// A run's record and server settings, all its setup is (its timeline and samples are not
/// read); `None` when it cannot be read (`combine` reports that).
fn setup_of(dir: &Path) -> Option<LoadedRun> {
    let record = crate::results::read_run(dir).ok()?;
    let settings = crate::results::settings::ServerSettings::read(dir).ok()?;
    Some(LoadedRun {
        dir: dir.to_path_buf(),
        label: record.label.clone(),
        record,
        timeline: Vec::new(),
        samples: Vec::new(),
        settings,
    })
}

/// One line per cell whose setup differs from the base member's first repeat beyond the
/// group's axis.
fn beyond_axis(
    plan: &Plan,
    units: &[(String, String)],
    members: &[(String, Vec<PathBuf>)],
    base_member: &str,
    base_cell: &Cell,
) -> Vec<String> {
    use crate::report::differs::{Area, setup_differences};
    let Some((_, base_dirs)) = members.iter().find(|(m, _)| m == base_member) else {
        return Vec::new();
    };
    let Some(base_run) = base_dirs.first().and_then(|d| setup_of(d)) else {
        return Vec::new();
    };
    let by_hand = |src: Option<&str>| !matches!(src, Some(s) if s != "configuration file" && s != "command line");
    let mut out = Vec::new();
    for (m, dirs) in members {
        let Some(cell) = member_cell(plan, units, m) else {
            continue;
        };
        let same_server = cell.server == base_cell.server;
        let mut keys = Vec::new();
        if same_server && cell.config != base_cell.config {
            keys.extend(config_keys(config_text(plan, &cell.server, &cell.config)));
            keys.extend(config_keys(config_text(
                plan,
                &base_cell.server,
                &base_cell.config,
            )));
        }
        let flags: Vec<String> = axis_flags(plan, &base_cell.workload, &cell.workload)
            .into_iter()
            .map(|(f, ..)| f)
            .collect();
        for run in dirs.iter().filter_map(|d| setup_of(d)) {
            let d = setup_differences(&base_run, &run);
            let beyond: Vec<String> = d
                .differences
                .iter()
                .filter(|x| match x.area {
                    Area::Dbms | Area::Build => same_server,
                    Area::Settings => {
                        let base_source = base_run
                            .settings
                            .as_ref()
                            .and_then(|s| s.values.get(&x.name))
                            .and_then(|v| v.source.as_deref());
                        same_server
                            && !keys.contains(&x.name.to_lowercase())
                            && (by_hand(x.source.as_deref()) || by_hand(base_source))
                    }
                    Area::Options => !flags.contains(&x.name),
                    Area::Host | Area::Ibench => true,
                })
                .map(|x| format!("{} {}", x.area.name(), x.text()))
                .collect();
            if !beyond.is_empty() {
                let name = run.dir.parent().and_then(Path::file_name).map_or_else(
                    || run.dir.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                out.push(format!(
                    "{name} differs from the base {base_member} beyond the group's axis: {}",
                    beyond.join("; ")
                ));
            }
        }
    }
    out
}

/// One synthetic run per member: the repeat closest to the medians, its throughput replaced
/// by the medians; and the spread of each member. With `order = "interleaved"` or `"duet"`
/// the repeats ran in rounds, so each measure carries its repeats' rounds and the members'
/// repeats are judged in pairs (`stats::decision::decide_paired`); a duet's rounds are first
/// cut to the seconds both sides ran each step (`report::overlap::cut_round`), as `ibench check`
/// cuts them, so the report's ratio is the check's.
fn combine(
    members: &[(String, Vec<PathBuf>)],
    order: crate::matrix::file::Order,
) -> (Vec<LoadedRun>, Vec<Spread>, Vec<String>) {
    use crate::matrix::file::Order;
    let mut synth = Vec::new();
    let mut spreads = Vec::new();
    let mut problems = Vec::new();
    let loaded = load_members(members, order, &mut problems);
    let in_rounds = matches!(order, Order::Interleaved | Order::Duet);
    for ((member, _), repeats) in members.iter().zip(loaded) {
        if repeats.is_empty() {
            continue;
        }
        let steps = steps_of(&repeats);
        let mut per_step = Vec::new();
        let mut measures = Vec::new();
        for &step in &steps {
            let v: Vec<f64> = repeats
                .iter()
                .filter_map(|r| r.record.step(step))
                .map(|s| s.throughput)
                .collect();
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            // Never empty (the step is some repeat's); a throughput read back is finite.
            let med = median(v.clone()).unwrap_or(0.0);
            per_step.push((step, med, min, max));
            measures.push((step, step_measure(&repeats, step, v, in_rounds)));
        }
        // The repeat closest to the medians (sum of |log ratio|).
        let distance = |r: &LoadedRun| -> f64 {
            per_step
                .iter()
                .map(|(step, med, _, _)| {
                    r.record
                        .step(*step)
                        .map(|s| {
                            if s.throughput > 0.0 && *med > 0.0 {
                                (s.throughput / med).ln().abs()
                            } else {
                                0.0
                            }
                        })
                        .unwrap_or(10.0)
                })
                .sum()
        };
        let best = repeats
            .iter()
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .unwrap_or(&repeats[0]);
        let mut run = best.clone();
        run.label = run.record.label.clone();
        for s in &mut run.record.steps {
            if let Some((_, med, _, _)) = per_step.iter().find(|(n, ..)| *n == s.name) {
                s.throughput = *med;
            }
        }
        spreads.push(Spread {
            label: run.label.clone(),
            member: member.clone(),
            repeats: repeats.len(),
            details_from: best
                .dir
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            steps: per_step,
            measures,
        });
        synth.push(run);
    }
    (synth, spreads, problems)
}

/// Each member's repeats, a duet's cut to the seconds both sides ran (`cut_duet_rounds`);
/// the problems met go to `problems`.
fn load_members(
    members: &[(String, Vec<PathBuf>)],
    order: crate::matrix::file::Order,
    problems: &mut Vec<String>,
) -> Vec<Vec<LoadedRun>> {
    let mut loaded: Vec<Vec<LoadedRun>> = members
        .iter()
        .map(|(_, dirs)| {
            let (repeats, p) = load::load_runs(dirs);
            problems.extend(p);
            repeats
        })
        .collect();
    if order == crate::matrix::file::Order::Duet {
        problems.extend(cut_duet_rounds(&mut loaded));
    }
    loaded
}

/// A duet's two members' repeats, each round's two runs cut to the seconds both sides ran
/// each step; the problem lines of the steps left whole.
fn cut_duet_rounds(loaded: &mut [Vec<LoadedRun>]) -> Vec<String> {
    let [a, b] = loaded else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    for run in a.iter_mut() {
        let Some(round) = run.record.duet.as_ref().map(|d| d.round) else {
            continue;
        };
        let partner = b
            .iter_mut()
            .find(|r| r.record.duet.as_ref().is_some_and(|d| d.round == round));
        if let Some(partner) = partner {
            problems.extend(crate::report::overlap::cut_round(run, partner, round));
        }
    }
    problems
}

/// The steps of the repeats, in the order they first appear.
fn steps_of(repeats: &[LoadedRun]) -> Vec<StepName> {
    let mut steps: Vec<StepName> = Vec::new();
    for s in repeats.iter().flat_map(|r| &r.record.steps) {
        if !steps.contains(&s.name) {
            steps.push(s.name);
        }
    }
    steps
}

/// The round a repeat ran in: the number of its cell's repeat name (`….r3` → 3).
fn round_of(run: &LoadedRun) -> Option<usize> {
    let cell = run.dir.parent()?.file_name()?.to_str()?;
    cell.rsplit('.').next()?.strip_prefix('r')?.parse().ok()
}

/// A step's throughput over the repeats (`values`, one a repeat that has the step), with the
/// typical repeat's length and per-second samples, for the floor, as `ibench check` takes
/// them (`stats::decision::typical_length` of each repeat's seconds and
/// `report::overlap::step_samples`: a duet's after its cut). `interleaved`: with the round
/// each value ran in, for the paired rule.
fn step_measure(
    repeats: &[LoadedRun],
    step: StepName,
    values: Vec<f64>,
    interleaved: bool,
) -> Evidence {
    let mut seconds = Vec::new();
    let mut samples = Vec::new();
    for r in repeats {
        if let Some(s) = r.record.step(step) {
            seconds.push(s.seconds);
            samples.extend(crate::report::overlap::step_samples(r, step));
        }
    }
    let mut e = Evidence::repeats(&values, FigureKind::Rate);
    let rounds: Option<Vec<usize>> = repeats
        .iter()
        .filter(|r| r.record.step(step).is_some())
        .map(round_of)
        .collect();
    if let Some(r) = rounds.filter(|_| interleaved) {
        e = e.in_rounds(&r);
    }
    (e.seconds, e.samples) = crate::stats::decision::typical_length(&seconds, &samples);
    e
}

/// The method the relative throughput was judged by, named for the report; `duet`: the
/// runs were a duet's sides.
fn method_note(spreads: &[Spread], duet: bool) -> &'static str {
    let paired = spreads
        .iter()
        .flat_map(|s| &s.measures)
        .any(|(_, m)| !m.rounds.is_empty());
    if paired && duet {
        "Method: duet, paired (the base and the candidate ran each round at the same time: each round's rates are taken over the whole seconds both sides ran the step, and each relative throughput is judged on the per-round ratios, a paired t interval; the relative value is their geometric mean, the ratio `ibench check` uses)."
    } else if paired {
        "Method: paired (the repeats ran interleaved, so each relative throughput is judged on the per-round ratios, a paired t interval, and shown as their geometric mean; Welch's t, and the ratio of the geometric means, where a step's rounds cannot be paired)."
    } else {
        "Method: Welch (the repeats ran one cell after another, so they cannot be paired by round: Welch's t interval over the repeats; the relative value is the ratio of the geometric means)."
    }
}

/// The spread of each combination's throughput over its repeats, as report blocks: a table
/// with a row per combination (by its key) and a column per step.
fn spread_blocks(cmp: &model::Comparison, spreads: &[Spread], duet: bool) -> Vec<Block> {
    let mut columns: Vec<StepName> = Vec::new();
    for s in spreads {
        for (n, ..) in &s.steps {
            if !columns.contains(n) {
                columns.push(*n);
            }
        }
    }
    let rows = spreads
        .iter()
        .map(|s| DocRow {
            label: cmp.key_of(&s.label).to_string(),
            title: Some(format!(
                "{} (n={}, details from {})",
                s.label, s.repeats, s.details_from
            )),
            link: None,
            cells: columns
                .iter()
                .map(|c| {
                    DocCell::plain(
                        s.steps
                            .iter()
                            .find(|(n, ..)| n == c)
                            .map(|(_, _, min, max)| format!("{}-{}", group_f(*min), group_f(*max)))
                            .unwrap_or_else(|| "-".into()),
                    )
                })
                .collect(),
        })
        .collect();
    let repeats: Vec<String> = spreads
        .iter()
        .map(|s| {
            format!(
                "{}: n={}, details from {}",
                cmp.key_of(&s.label),
                s.repeats,
                s.details_from
            )
        })
        .collect();
    vec![
        Block::Heading {
            level: 2,
            text: "Spread of throughput over the repeats (min-max)".into(),
            anchor: None,
        },
        Block::Note(format!(
            "Throughput figures are medians over the repeats; a relative value is the ratio the verdict used, marked as a change only outside the base's spread (min-max). Latency, charts and server metrics come from the repeat closest to the medians. {}",
            method_note(spreads, duet)
        )),
        Block::Table(DocTable::new(
            "run",
            columns.iter().map(ToString::to_string).collect(),
            rows,
        )),
        Block::List(repeats),
    ]
}

fn render(
    cmp: &model::Comparison,
    runs: &[LoadedRun],
    (spreads, host): (&[Spread], &[Block]),
    format: Format,
    (repeats, details): (u32, bool),
) -> Result<String> {
    if format == Format::Json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "repeats": repeats,
            "comparison": cmp,
            "spread": spreads,
        }))? + "\n");
    }
    let mut extra = if repeats > 1 {
        spread_blocks(cmp, spreads, runs.iter().any(|r| r.record.duet.is_some()))
    } else {
        Vec::new()
    };
    extra.extend(host.iter().cloned());
    crate::report::render_with(cmp, runs, format, false, extra, details)
}

/// The host probe over the matrix's wall time, one point per cell (every repeat of every
/// member): each figure of the cell's median probe divided by the median over the cells, so
/// the three share an axis and 1 is the matrix's typical host. A chart (HTML) and the same
/// points as a folded list; nothing when no cell has a probe.
fn host_blocks(members: &[(String, Vec<PathBuf>)]) -> Vec<Block> {
    use crate::results::probe::ProbeFigure;
    let mut cells: Vec<(f64, String, crate::results::probe::HostProbe)> = members
        .iter()
        .flat_map(|(m, dirs)| dirs.iter().map(move |d| (m, d)))
        .filter_map(|(m, d)| {
            let run = crate::results::read_run(d).ok()?;
            let at = crate::results::rfc3339_seconds(&run.started_at)?;
            let probe = run.host_probe?.median?;
            Some((at, m.replace('.', " "), probe))
        })
        .collect();
    if cells.is_empty() {
        return Vec::new();
    }
    cells.sort_by(|a, b| a.0.total_cmp(&b.0));
    let start = cells[0].0;
    let figures = [ProbeFigure::Cpu, ProbeFigure::Memory, ProbeFigure::Loopback];
    let mut series = Vec::new();
    for f in figures {
        let Some(mid) = median(cells.iter().filter_map(|c| f.of(&c.2))) else {
            continue;
        };
        let points: Vec<(f64, f64)> = cells
            .iter()
            .filter_map(|(at, _, p)| Some(((at - start) / 60.0, f.of(p)? / mid)))
            .collect();
        series.push((f.short(), points));
    }
    let lines: Vec<String> = cells
        .iter()
        .map(|(at, m, p)| {
            let v = |f: ProbeFigure| f.of(p).map_or("n/a".into(), |v| format!("{v:.2}"));
            format!(
                "{:.1} min: {m}: CPU {} ns/iter, memory {} ns/access, loopback {} µs",
                (at - start) / 60.0,
                v(ProbeFigure::Cpu),
                v(ProbeFigure::Memory),
                v(ProbeFigure::Loopback)
            )
        })
        .collect();
    vec![
        Block::Heading {
            level: 2,
            text: "The host over the matrix's wall time".into(),
            anchor: None,
        },
        Block::Note("One point per cell at its start: each figure of the cell's median host probe divided by the median over the cells (1 = the matrix's typical host; above 1 = a slower host). A cell far above the others ran on a slower host.".into()),
        Block::Chart(crate::report::svg::line_chart(
            "Host probe per cell, relative to the matrix's median",
            "minutes since the first cell started",
            "probe / median",
            &series,
        )),
        Block::Fold {
            summary: format!("The probe of each of the {} cells", cells.len()),
            blocks: vec![Block::List(lines)],
        },
    ]
}

/// One group and workload on the index page.
struct IndexRow {
    /// `group / workload`.
    title: String,
    /// The base run's label.
    base: String,
    /// The compared runs' labels.
    labels: String,
    /// Its report files.
    files: Vec<String>,
    /// Its tl;dr, a line per run but the base and one per run whose replica failed the lag
    /// SLA (`report::tldr`), each in its painted pieces.
    tldr: Vec<Vec<model::Span>>,
}

/// The index page as a document: the matrix, then a row per group and workload linking its
/// reports, then the problems.
fn index_blocks(plan: &Plan, rows: &[IndexRow], problems: &[String]) -> Vec<Block> {
    let file = plan.file.display().to_string();
    let table_rows = rows
        .iter()
        .map(
            |IndexRow {
                 title,
                 base,
                 labels,
                 files,
                 ..
             }| DocRow {
                label: title.clone(),
                title: None,
                link: files.iter().find(|f| f.ends_with(".html")).cloned(),
                cells: vec![
                    DocCell::plain(base),
                    DocCell::plain(labels),
                    DocCell::links(
                        files
                            .iter()
                            .map(|f| Link {
                                text: f.rsplit('.').next().unwrap_or("").to_string(),
                                href: f.clone(),
                            })
                            .collect(),
                    ),
                ],
            },
        )
        .collect();
    let mut blocks = vec![
        Block::Heading {
            level: 1,
            text: format!("ibench matrix: {file}"),
            anchor: None,
        },
        Block::Paragraph(format!(
            "{} cells, {} repeat(s), order {:?}.",
            plan.cells.len(),
            plan.repeats,
            plan.order
        )),
        Block::Table(DocTable {
            corner: "group / workload".into(),
            columns: ["base", "compared", "reports"].map(String::from).to_vec(),
            rows: table_rows,
            text_columns: true,
            ..DocTable::default()
        }),
    ];
    if rows.iter().any(|r| !r.tldr.is_empty()) {
        blocks.push(Block::Heading {
            level: 2,
            text: "tl;dr".into(),
            anchor: Some("tldr".into()),
        });
        blocks.push(Block::Note("Per group, each run against its base: relative throughput per step family from the decided figures, painted by the rule of `ibench check` (each report says more).".into()));
        for r in rows.iter().filter(|r| !r.tldr.is_empty()) {
            blocks.push(Block::Heading {
                level: 3,
                text: r.title.clone(),
                anchor: None,
            });
            blocks.push(Block::PaintedList(r.tldr.clone()));
        }
    }
    if !problems.is_empty() {
        blocks.push(Block::Heading {
            level: 2,
            text: "Problems".into(),
            anchor: None,
        });
        blocks.push(Block::List(problems.to_vec()));
    }
    blocks
}

fn index_html(plan: &Plan, rows: &[IndexRow], problems: &[String]) -> String {
    let title = format!("matrix: {}", plan.file.display());
    document::write(
        &title,
        &index_blocks(plan, rows, problems),
        &crate::report::html::HtmlSyntax,
    )
}

fn index_md(plan: &Plan, rows: &[IndexRow], problems: &[String]) -> String {
    let mut t = format!(
        "# ibench matrix: {}\n\n{} cells, {} repeat(s).\n\n| group / workload | base | compared | reports |\n|---|---|---|---|\n",
        plan.file.display(),
        plan.cells.len(),
        plan.repeats
    );
    for IndexRow {
        title,
        base,
        labels,
        files,
        ..
    } in rows
    {
        let links: Vec<String> = files.iter().map(|f| format!("[{f}]({f})")).collect();
        t.push_str(&format!(
            "| {title} | {base} | {labels} | {} |\n",
            links.join(" ")
        ));
    }
    if rows.iter().any(|r| !r.tldr.is_empty()) {
        t.push_str("\n## tl;dr\n");
        for r in rows.iter().filter(|r| !r.tldr.is_empty()) {
            t.push_str(&format!("\n### {}\n\n", r.title));
            for line in &r.tldr {
                t.push_str(&format!("- {}\n", document::joined(line)));
            }
        }
    }
    if !problems.is_empty() {
        t.push_str("\n## Problems\n\n");
        for p in problems {
            t.push_str(&format!("- {p}\n"));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::cell::{CellState, STATE_FILE};
    use crate::matrix::plan::Shard;

    /// A repeat whose `l.i0` measured `seconds`, its timeline holding `lines` (seconds since
    /// the step started).
    fn repeat_of(seconds: f64, lines: &[u32]) -> LoadedRun {
        let (mut loaded, problems) = load::load_runs(&[PathBuf::from("tests/fixtures/postgres")]);
        assert!(problems.is_empty(), "{problems:?}");
        let mut r = loaded.remove(0);
        let step = StepName::LoadInitial;
        for s in r.record.steps.iter_mut().filter(|s| s.name == step) {
            s.seconds = seconds;
        }
        let mut line = r.timeline.iter().find(|l| l.step == step).cloned();
        r.timeline.retain(|l| l.step != step);
        for &second in lines {
            if let Some(l) = line.as_mut() {
                l.second = second;
                r.timeline.push(l.clone());
            }
        }
        r
    }

    /// The floor holds the typical repeat, as `ibench check` does: the median seconds and
    /// per-second lines over the repeats (a duet's cut keeps seconds that need not start at
    /// 1: seconds 2, 3 and 4 of a step cut to 3 s are 3 samples), not the shortest repeat.
    #[test]
    fn the_floor_holds_the_typical_repeat_as_the_check_does() {
        let repeats = [
            repeat_of(1.0, &[1]),
            repeat_of(3.0, &[2, 3, 4]),
            repeat_of(5.0, &[1, 2, 3, 4, 5]),
        ];
        let e = step_measure(&repeats, StepName::LoadInitial, vec![1.0; 3], false);
        assert_eq!((e.seconds, e.samples), (Some(3.0), Some(3)));
    }

    /// Two servers (SQLite URLs: nothing to start), one config each, a plain workload and
    /// one with a clients axis, two repeats; its plan as `matrix plan` resolves it.
    fn plan(root: &Path) -> Plan {
        std::fs::create_dir_all(root).unwrap();
        let file = root.join("m.toml");
        std::fs::write(
            &file,
            "repeats = 2\n\
             [servers.a]\nurl = \"sqlite:/tmp/a-{cell}.db\"\n\
             [servers.b]\nurl = \"sqlite:/tmp/b-{cell}.db\"\n\
             [workloads.w]\nload_rows = 10\n\
             [workloads.x]\nload_rows = 10\n\
             [[workloads.x.axes]]\noption = \"clients\"\nvalues = [1, 4]\nnames = [\"c1\", \"c4\"]\n",
        )
        .unwrap();
        crate::matrix::load(&file).unwrap().1
    }

    fn fresh(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ibench-unit-matrix-report-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn set_state(out: &Path, cell: &str, status: CellStatus, error: Option<&str>) {
        let dir = cell_dir(out, cell);
        std::fs::create_dir_all(&dir).unwrap();
        let state = CellState {
            cell: cell.into(),
            status,
            error: error.map(String::from),
            label: cell.into(),
            definition: serde_json::Value::Null,
            shard: Shard::ALL,
            started_at: None,
            ended_at: None,
            instance_dir: None,
        };
        std::fs::write(dir.join(STATE_FILE), serde_json::to_string(&state).unwrap()).unwrap();
    }

    #[test]
    fn a_groups_members_are_its_combinations_and_a_workload_with_axes_its_variants() {
        let root = fresh("members");
        let plan = plan(&root);
        let g = &plan.groups[0];
        assert_eq!(g.members, ["a.base", "b.base"]);
        let (units, base) = report_members(&plan, g, "w");
        assert_eq!(
            units,
            [
                ("a.base".to_string(), "a.base.w".to_string()),
                ("b.base".to_string(), "b.base.w".to_string())
            ]
        );
        assert_eq!(base, "a.base");
        // With axes: every member at every variant, against the base at the first variant.
        let (units, base) = report_members(&plan, g, "x");
        let names: Vec<&str> = units.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(names, ["a.base.c1", "a.base.c4", "b.base.c1", "b.base.c4"]);
        assert_eq!(units[1].1, "a.base.x_c4");
        assert_eq!(base, "a.base.c1");
        let cell = member_cell(&plan, &units, "b.base.c4").unwrap();
        assert_eq!((cell.server.as_str(), cell.repeat), ("b", 1));
        assert!(member_cell(&plan, &units, "c.base").is_none());
        // What the variants differ in, flag by flag.
        assert_eq!(
            axis_flags(&plan, "x_c1", "x_c4"),
            [("--clients".to_string(), "1".to_string(), "4".to_string())]
        );
        assert!(axis_flags(&plan, "x_c1", "x_c1").is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_combinations_runs_are_its_completed_cells_from_any_shard() {
        let root = fresh("runs");
        let plan = plan(&root);
        let (one, two) = (root.join("shard1"), root.join("shard2"));
        set_state(&one, "a.base.w.r1", CellStatus::Completed, None);
        set_state(&two, "a.base.w.r2", CellStatus::Completed, None);
        set_state(
            &one,
            "b.base.w.r1",
            CellStatus::Failed,
            Some("server gone\nmore"),
        );
        // Completed in both dirs: the first dir's, and a problem says so.
        set_state(&one, "b.base.w.r2", CellStatus::Completed, None);
        set_state(&two, "b.base.w.r2", CellStatus::Completed, None);
        let (runs, problems) = completed_runs(&plan, &[one.clone(), two.clone()]);
        assert_eq!(
            combo_runs(&plan, &runs, "a.base.w"),
            [
                (cell_dir(&one, "a.base.w.r1").join("run"), "r1".to_string()),
                (cell_dir(&two, "a.base.w.r2").join("run"), "r2".to_string())
            ]
        );
        assert_eq!(
            combo_runs(&plan, &runs, "b.base.w"),
            [(cell_dir(&one, "b.base.w.r2").join("run"), "r2".to_string())]
        );
        assert!(combo_runs(&plan, &runs, "a.base.x_c1").is_empty());
        assert!(
            problems.contains(&"b.base.w.r1: Failed: server gone".to_string()),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("b.base.w.r2 was completed in 2 dirs"))
        );
        assert!(problems.contains(&"a.base.x_c1.r1: not run yet".to_string()));
        // Every cell is a run or a problem.
        let not_run = problems
            .iter()
            .filter(|p| p.ends_with("not run yet"))
            .count();
        assert_eq!(runs.len() + not_run + 1, plan.cells.len());
        // The check's runs: the same, and the failed cell's run once it wrote a run.json.
        let check = |dirs: &[PathBuf]| combo_runs(&plan, &recorded_runs(&plan, dirs), "b.base.w");
        assert_eq!(check(&[one.clone(), two.clone()]).len(), 1);
        let failed = cell_dir(&one, "b.base.w.r1").join("run");
        std::fs::create_dir_all(&failed).unwrap();
        std::fs::write(failed.join(crate::results::RUN_FILE), "{}").unwrap();
        assert_eq!(
            check(&[one.clone(), two.clone()]),
            [
                (failed, "r1".to_string()),
                (cell_dir(&one, "b.base.w.r2").join("run"), "r2".to_string())
            ]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_configs_setting_names_are_read_as_the_server_reads_them() {
        let text = "# a comment\n[mysqld]\nloose-innodb-buffer-pool-size = 1G # why\nSync_Binlog=1\n\n  shared_buffers = '1GB'\n";
        assert_eq!(
            config_keys(Some(text)),
            ["innodb_buffer_pool_size", "sync_binlog", "shared_buffers"]
        );
        assert!(config_keys(None).is_empty());
    }

    #[test]
    fn the_index_in_markdown_links_each_report_and_lists_the_problems() {
        let root = fresh("index");
        let plan = plan(&root);
        let rows = [IndexRow {
            title: "all / w".into(),
            base: "A".into(),
            labels: "A, B".into(),
            files: vec!["all.w.html".into(), "all.w.md".into()],
            tldr: Vec::new(),
        }];
        let md = index_md(&plan, &rows, &["b.base.w.r1: not run yet".into()]);
        let expected = format!(
            "# ibench matrix: {}\n\n12 cells, 2 repeat(s).\n\n| group / workload | base | compared | reports |\n|---|---|---|---|\n\
             | all / w | A | A, B | [all.w.html](all.w.html) [all.w.md](all.w.md) |\n\n## Problems\n\n- b.base.w.r1: not run yet\n",
            plan.file.display()
        );
        assert_eq!(md, expected);
        let html = index_html(&plan, &rows, &[]);
        assert!(html.contains("href=\"all.w.html\""), "{html}");
        assert!(!html.contains("Problems"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Two fixture runs of one SQLite build, each a repeat of one combination.
    fn two_repeats() -> Vec<PathBuf> {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        vec![
            fixtures.join("sqlite-noisy-a"),
            fixtures.join("sqlite-noisy-b"),
        ]
    }

    #[test]
    fn a_combinations_throughput_is_the_median_of_its_repeats_and_its_spread_their_range() {
        let dirs = two_repeats();
        let (repeats, problems) = load::load_runs(&dirs);
        assert!(problems.is_empty(), "{problems:?}");
        let members = vec![("a.base".to_string(), dirs)];
        let (runs, spreads, problems) = combine(&members, crate::matrix::file::Order::Sequential);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((runs.len(), spreads.len()), (1, 1));
        let (run, spread) = (&runs[0], &spreads[0]);
        assert_eq!((spread.member.as_str(), spread.repeats), ("a.base", 2));
        assert_eq!(spread.label, run.label);
        assert_eq!(spread.steps.len(), steps_of(&repeats).len());
        for &(step, med, min, max) in &spread.steps {
            let v: Vec<f64> = repeats
                .iter()
                .filter_map(|r| r.record.step(step))
                .map(|s| s.throughput)
                .collect();
            assert_eq!(
                min,
                v.iter().copied().fold(f64::INFINITY, f64::min),
                "{step}"
            );
            assert_eq!(
                max,
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                "{step}"
            );
            assert_eq!(Some(med), median(v), "{step}");
            assert!(min <= med && med <= max, "{step}");
            // The combined run shows the median; its other figures are one repeat's.
            assert_eq!(run.record.step(step).map(|s| s.throughput), Some(med));
        }
        // Run one after another: nothing to pair by round.
        assert!(spread.measures.iter().all(|(_, m)| m.rounds.is_empty()));
        assert!(method_note(&spreads, false).starts_with("Method: Welch"));
        // The base's spread is the band of each step it measured: min / median ..= max / median.
        let bands = spread.bands();
        let &(step, med, min, max) = spread.steps.iter().find(|s| s.1 > 0.0).unwrap();
        let band = bands.own(step).expect("its own band");
        assert_eq!((band.low, band.high), (min / med, max / med));
    }

    #[test]
    fn a_repeats_round_is_its_cells_repeat_number() {
        let (runs, _) = load::load_runs(&two_repeats()[..1]);
        let mut run = runs[0].clone();
        run.dir = PathBuf::from("out/cells/a.base.w.r3/run");
        assert_eq!(round_of(&run), Some(3));
        run.dir = PathBuf::from("out/cells/a.base.w/run");
        assert_eq!(round_of(&run), None);
        run.dir = PathBuf::from("run");
        assert_eq!(round_of(&run), None);
    }

    #[test]
    fn the_spread_table_has_a_row_per_combination_and_its_range_per_step() {
        let members = vec![("a.base".to_string(), two_repeats())];
        let (runs, spreads, _) = combine(&members, crate::matrix::file::Order::Sequential);
        let cmp = compare::compare(&runs, None, Vec::new());
        let blocks = spread_blocks(&cmp, &spreads, false);
        let Some(Block::Table(t)) = blocks.iter().find(|b| matches!(b, Block::Table(_))) else {
            panic!("a spread table: {blocks:?}");
        };
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.columns.len(), spreads[0].steps.len());
        let (_, _, min, max) = spreads[0].steps[0];
        assert_eq!(
            t.rows[0].cells[0].text,
            format!("{}-{}", group_f(min), group_f(max))
        );
        assert!(
            blocks
                .iter()
                .any(|b| matches!(b, Block::List(l) if l[0].contains("n=2"))),
            "{blocks:?}"
        );
    }
}
