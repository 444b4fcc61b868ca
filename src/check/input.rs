//! What `ibench check` compares: from a matrix output dir (a group's base against each of its
//! other members, workload by workload) or from run directories (the runs labelled `--base`
//! against the others), as [`Pair`]s of loaded runs; and whether each pair is like for like.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::cli::CheckArgs;
use crate::matrix::cell::cell_dir;
use crate::matrix::plan::Plan;
use crate::matrix::run::PLAN_FILE;
use crate::report::differs::{Difference, setup_differences};
use crate::report::load::{self, LoadedRun};
use crate::results::RUN_FILE;

/// The base's repeats and one candidate's, loaded together (labels unique among them).
#[derive(Debug)]
pub struct Pair {
    /// What is compared (`group / workload` for a matrix, empty for run directories).
    pub title: String,
    /// The base's label.
    pub base_label: String,
    /// The candidate's label.
    pub candidate_label: String,
    /// The base's runs, then the candidate's.
    pub runs: Vec<LoadedRun>,
    /// How many of `runs` are the base's.
    pub base_count: usize,
    /// A short name per run (`r1`, or the end of its directory's path).
    pub names: Vec<String>,
    /// Problems met reading the runs, one line each.
    pub problems: Vec<String>,
    /// Whether the base's and the candidate's repeats ran in rounds (a matrix with `order =
    /// "interleaved"`, `ibench check --run`): `names` then hold each repeat's round (`r3`),
    /// and a figure is judged on the per-round ratios (paired).
    pub interleaved: bool,
}

impl Pair {
    /// The round run `i` ran in, when the pair ran in rounds: the number of its name (`r3`).
    pub fn round(&self, i: usize) -> Option<usize> {
        // A duet side knows its round (run directories given by hand too).
        if let Some(d) = self.runs.get(i).and_then(|r| r.record.duet.as_ref()) {
            return usize::try_from(d.round).ok();
        }
        if !self.interleaved {
            return None;
        }
        self.names.get(i)?.strip_prefix('r')?.parse().ok()
    }

    /// Whether the host probes show the host steady between every base run and every
    /// candidate run (`results::probe::steady_between`); a duet's sides shared the host's
    /// moves second by second, which is that evidence.
    pub fn steady_host(&self) -> bool {
        if !self.runs.is_empty() && self.runs.iter().all(|r| r.record.duet.is_some()) {
            return true;
        }
        let (b, c) = self.runs.split_at(self.base_count.min(self.runs.len()));
        !b.is_empty()
            && !c.is_empty()
            && b.iter().all(|b| {
                c.iter().all(|c| {
                    crate::results::probe::steady_between(&b.record.steps, &c.record.steps)
                })
            })
    }

    /// What an error about this pair starts with: its title and a colon, or nothing for run
    /// directories.
    pub fn error_prefix(&self) -> String {
        if self.title.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.title)
        }
    }

    /// Refuse a pair in which some runs lost their primary in a step (a failover) and others
    /// did not: a step through a failover and one without measure different things, and the
    /// check would call the failover a regression of the DBMS. One line naming a run of each.
    pub fn failovers_alike(&self) -> Result<()> {
        let with = |r: &LoadedRun| {
            r.record
                .steps
                .iter()
                .find(|s| s.failover.is_some())
                .map(|s| s.name)
        };
        let name = |i: usize| {
            let side = if i < self.base_count {
                "base"
            } else {
                "candidate"
            };
            format!("{side} {}", self.names.get(i).map_or("", String::as_str))
        };
        let failed_over = self.runs.iter().position(|r| with(r).is_some());
        let without = self.runs.iter().position(|r| with(r).is_none());
        if let (Some(f), Some(w)) = (failed_over, without) {
            let step = with(&self.runs[f]).map_or_else(String::new, |s| s.to_string());
            bail!(
                "{}cannot compare a failover run with one without: {} lost its primary in {step} and {} had no failover; compare runs made with the same --failover (or --reconnect-for), or split the matrix's failover axis into groups",
                self.error_prefix(),
                name(f),
                name(w)
            );
        }
        Ok(())
    }

    /// The differences of the server (DBMS, build, settings) between the base's first run and
    /// the candidate's: what the comparison varies.
    pub fn server_differences(&self) -> Vec<Difference> {
        match (self.runs.first(), self.runs.get(self.base_count)) {
            (Some(b), Some(c)) => setup_differences(b, c)
                .differences
                .into_iter()
                .filter(|d| d.area.is_the_servers())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Every difference outside the server between the base's first run and any other run,
    /// once each by name: what makes the pair unlike.
    pub fn unlike(&self) -> Vec<Difference> {
        let mut out: Vec<Difference> = Vec::new();
        let Some(first) = self.runs.first() else {
            return out;
        };
        for run in &self.runs[1..] {
            for d in setup_differences(first, run).unlike() {
                if !out.iter().any(|o| o.name == d.name) {
                    out.push(d.clone());
                }
            }
        }
        out
    }
}

/// The pairs to judge, from the command line's directories.
pub fn read_pairs(args: &CheckArgs) -> Result<Vec<Pair>> {
    let matrix_dirs = args
        .dirs
        .iter()
        .filter(|d| d.join(PLAN_FILE).is_file())
        .count();
    if matrix_dirs == args.dirs.len() {
        if args.base.is_some() {
            bail!(
                "--base is for run directories; a matrix's group names its base (pick the group with --group)"
            );
        }
        let pairs = matrix_pairs(&args.dirs, args.group.as_deref())?;
        for p in &pairs {
            p.failovers_alike()?;
        }
        return Ok(pairs);
    }
    if matrix_dirs > 0 {
        bail!(
            "give either one matrix output dir (its shards) or run directories, not both: {} holds a {PLAN_FILE}",
            args.dirs
                .iter()
                .find(|d| d.join(PLAN_FILE).is_file())
                .map_or_else(String::new, |d| d.display().to_string())
        );
    }
    if args.group.is_some() {
        bail!(
            "--group is for a matrix output dir; with run directories, name the base's label with --base"
        );
    }
    let Some(base) = args.base.as_deref() else {
        bail!(
            "{} is not a matrix output dir (no {PLAN_FILE}); with run directories, name the base's label with --base",
            args.dirs[0].display()
        );
    };
    let pair = dirs_pair(&args.dirs, base)?;
    pair.failovers_alike()?;
    Ok(vec![pair])
}

/// Run directories: those labelled `base` against the others, which must share one label.
fn dirs_pair(dirs: &[PathBuf], base: &str) -> Result<Pair> {
    for d in dirs {
        if !d.join(RUN_FILE).is_file() {
            bail!(
                "{} holds no {RUN_FILE}: give results directories of `ibench run` (or one matrix output dir)",
                d.display()
            );
        }
    }
    let (runs, problems) = load::load_runs(dirs);
    if let Some(p) = problems.iter().find(|p| p.starts_with("skipping")) {
        bail!("{p}");
    }
    // --base may name one of the directories: runs that share a label are told apart by them.
    let by_dir = dirs.iter().any(|d| same_dir(d, Path::new(base)));
    let is_base = |r: &LoadedRun| {
        if by_dir {
            same_dir(&r.dir, Path::new(base))
        } else {
            r.record.label == base
        }
    };
    let candidate = if by_dir {
        candidate_of_dirs(&runs, base)?
    } else {
        candidate_label(&runs, base)?
    };
    let (mut b, mut c): (Vec<LoadedRun>, Vec<LoadedRun>) = runs.into_iter().partition(is_base);
    let base_count = b.len();
    b.append(&mut c);
    let paths: Vec<&Path> = b.iter().map(|r| r.dir.as_path()).collect();
    let names = load::distinct_tails(&paths);
    let base_label = if by_dir {
        format!(
            "{} ({})",
            b.first().map_or("", |r| r.record.label.as_str()),
            names.first().map_or("", String::as_str)
        )
    } else {
        base.to_string()
    };
    Ok(Pair {
        title: String::new(),
        base_label: crate::report::load::clean_label(&base_label),
        candidate_label: crate::report::load::clean_label(&candidate),
        runs: b,
        base_count,
        names,
        problems,
        interleaved: false,
    })
}

/// Whether two paths name the same directory (as given, or once resolved).
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// With `--base` a directory: the candidate is every other run, named by its label and its
/// directory.
fn candidate_of_dirs(runs: &[LoadedRun], base: &str) -> Result<String> {
    let others: Vec<&LoadedRun> = runs
        .iter()
        .filter(|r| !same_dir(&r.dir, Path::new(base)))
        .collect();
    let Some(first) = others.first() else {
        bail!("--base {base} is the only directory given: give the candidate's runs too");
    };
    let tails = load::distinct_tails(&others.iter().map(|r| r.dir.as_path()).collect::<Vec<_>>());
    Ok(format!("{} ({})", first.record.label, tails.join(", ")))
}

/// With `--base` a label: the one other label the runs carry.
fn candidate_label(runs: &[LoadedRun], base: &str) -> Result<String> {
    let mut labels: Vec<&str> = runs.iter().map(|r| r.record.label.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    if !labels.contains(&base) {
        bail!(
            "no run is labelled {base:?}; the runs' labels are {}: give one of them to --base",
            quoted(&labels)
        );
    }
    let others: Vec<&str> = labels.iter().copied().filter(|l| *l != base).collect();
    match others.as_slice() {
        [one] => Ok(one.to_string()),
        [] => bail!(
            "every run is labelled {base:?}: tell the base apart by its directory (--base {}), or label the runs apart (ibench run --label NAME)",
            runs.first()
                .map_or_else(String::new, |r| r.dir.display().to_string())
        ),
        _ => bail!(
            "the runs besides the base carry {} labels ({}); check one candidate at a time",
            others.len(),
            quoted(&others)
        ),
    }
}

fn quoted(labels: &[&str]) -> String {
    labels
        .iter()
        .map(|l| format!("{:?}", crate::report::load::clean_label(l)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A matrix: the group's base against each other member, for every workload of the group.
fn matrix_pairs(dirs: &[PathBuf], group: Option<&str>) -> Result<Vec<Pair>> {
    let plan = crate::matrix::report::read_plan(dirs)?;
    let names: Vec<&str> = plan.groups.iter().map(|g| g.name.as_str()).collect();
    let g = match (group, plan.groups.as_slice()) {
        (Some(name), _) => plan.groups.iter().find(|g| g.name == name).ok_or_else(|| {
            anyhow::anyhow!(
                "the matrix has no group {name:?}; its groups are {}: give one to --group",
                names.join(", ")
            )
        })?,
        (None, [one]) => one,
        (None, _) => bail!(
            "the matrix has {} groups ({}): pick one with --group",
            names.len(),
            names.join(", ")
        ),
    };
    if g.members.len() < 2 {
        bail!(
            "group {} has one member ({}): a check needs a base and a candidate; add a server or config to the group",
            g.name,
            g.base
        );
    }
    let mut pairs = Vec::new();
    for w in plan.workloads.iter().filter(|w| {
        g.workloads.contains(&w.name) || w.family.as_ref().is_some_and(|f| g.workloads.contains(f))
    }) {
        for m in g.members.iter().filter(|m| **m != g.base) {
            pairs.push(matrix_pair(&plan, dirs, (&g.name, &w.name), &g.base, m)?);
        }
    }
    Ok(pairs)
}

/// The run dirs of a combination's cells (any whose run.json exists, in any of the dirs) and
/// each one's repeat name.
fn combo_runs(plan: &Plan, dirs: &[PathBuf], combo: &str) -> Vec<(PathBuf, String)> {
    plan.cells
        .iter()
        .filter(|c| c.combo == combo)
        .filter_map(|c| {
            let run = dirs
                .iter()
                .map(|d| cell_dir(d, &c.name).join("run"))
                .find(|r| r.join(RUN_FILE).is_file())?;
            let repeat = c.name.rsplit('.').next().unwrap_or(&c.name).to_string();
            Some((run, repeat))
        })
        .collect()
}

fn matrix_pair(
    plan: &Plan,
    dirs: &[PathBuf],
    (group, workload): (&str, &str),
    base: &str,
    member: &str,
) -> Result<Pair> {
    let title = format!("{group} / {workload}");
    let b = combo_runs(plan, dirs, &format!("{base}.{workload}"));
    let c = combo_runs(plan, dirs, &format!("{member}.{workload}"));
    for (side, runs) in [(base, &b), (member, &c)] {
        if runs.is_empty() {
            bail!(
                "{title}: {side} has no run in {}; run the matrix first (ibench matrix run FILE --out {})",
                dirs[0].display(),
                dirs[0].display()
            );
        }
    }
    let all: Vec<PathBuf> = b.iter().chain(&c).map(|(d, _)| d.clone()).collect();
    let (runs, problems) = load::load_runs(&all);
    if let Some(p) = problems.iter().find(|p| p.starts_with("skipping")) {
        bail!("{title}: {p}");
    }
    let label = |i: usize| {
        runs.get(i)
            .map_or_else(String::new, |r| r.record.label.clone())
    };
    Ok(Pair {
        title,
        base_label: crate::report::load::clean_label(&label(0)),
        candidate_label: crate::report::load::clean_label(&label(b.len())),
        base_count: b.len(),
        names: b.iter().chain(&c).map(|(_, n)| n.clone()).collect(),
        runs,
        problems,
        // A duet's rounds are rounds too.
        interleaved: plan.order != crate::matrix::file::Order::Sequential,
    })
}
