//! The benchmark steps as plain data (spec section 3) and the named profiles (section 6).

use crate::stats::convert::count_f64;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::micro::MicroStep;

/// Which query a query step runs back to back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// Covering range query through a random secondary index (`qr*`).
    Range,
    /// 10 primary-key lookups (`qp*`).
    Point,
}

/// A step's identity, as written on the command line (`l.i0`, `l.x`, `l.i1`, `l.i2`,
/// `qr100`, `qp500`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepName {
    /// `l.i0`: create the table and load it in PK order.
    LoadInitial,
    /// `l.x`: create the secondary indexes.
    CreateIndexes,
    /// `l.i1`: insert and delete at the same pace, big transactions.
    InsertDelete1,
    /// `l.i2`: like l.i1 with small transactions, then the settle phase.
    InsertDelete2,
    /// `qrN` / `qpN`: queries back to back with background inserts and deletes at N rows/s.
    Query {
        /// Range or point.
        kind: QueryKind,
        /// Background insert (and delete) rate per client, rows/s.
        rate_rows_per_sec: u32,
    },
    /// `m.load`: create and load the microbenchmarks' sysbench tables.
    MicroLoad,
    /// A microbenchmark (`point-query.pre_range=100`, ...).
    Micro(MicroStep),
}

/// A step name that is not one of the known forms.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown step '{0}'{hint}: steps are l.i0, l.x, l.i1, l.i2, qrN and qpN with N the background rows/s, e.g. qr100; with --workload micro, m.load and the microbenchmarks NAME[.pre]_range=N, e.g. point-query.pre_range=100 (--steps)",
    hint = step_hint(.0)
)]
pub struct UnknownStep(pub String);

/// ` (did you mean 'qr100'?)` for a name near a step of the default list or a microbenchmark.
fn step_hint(name: &str) -> String {
    let known: Vec<String> = StepName::default_list(&DEFAULT_QUERY_RATES_ROWS_PER_SEC)
        .into_iter()
        .chain(StepName::micro_list())
        .map(|s| s.to_string())
        .collect();
    crate::suggest::nearest(name, known.iter().map(String::as_str))
        .map_or_else(String::new, |k| format!(" (did you mean '{k}'?)"))
}

impl FromStr for StepName {
    type Err = UnknownStep;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s {
            "l.i0" => return Ok(StepName::LoadInitial),
            "l.x" => return Ok(StepName::CreateIndexes),
            "l.i1" => return Ok(StepName::InsertDelete1),
            "l.i2" => return Ok(StepName::InsertDelete2),
            "m.load" => return Ok(StepName::MicroLoad),
            _ => {}
        }
        if let Some(m) = MicroStep::parse(s) {
            return Ok(StepName::Micro(m));
        }
        let kind = if let Some(rest) = s.strip_prefix("qr") {
            Some((QueryKind::Range, rest))
        } else {
            s.strip_prefix("qp").map(|rest| (QueryKind::Point, rest))
        };
        match kind {
            Some((kind, rate)) if !rate.is_empty() && rate.bytes().all(|b| b.is_ascii_digit()) => {
                match rate.parse::<u32>() {
                    Ok(r) if r > 0 => Ok(StepName::Query {
                        kind,
                        rate_rows_per_sec: r,
                    }),
                    _ => Err(UnknownStep(s.to_string())),
                }
            }
            _ => Err(UnknownStep(s.to_string())),
        }
    }
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepName::LoadInitial => f.write_str("l.i0"),
            StepName::CreateIndexes => f.write_str("l.x"),
            StepName::InsertDelete1 => f.write_str("l.i1"),
            StepName::InsertDelete2 => f.write_str("l.i2"),
            StepName::Query {
                kind,
                rate_rows_per_sec,
            } => {
                let k = match kind {
                    QueryKind::Range => "qr",
                    QueryKind::Point => "qp",
                };
                write!(f, "{k}{rate_rows_per_sec}")
            }
            StepName::MicroLoad => f.write_str("m.load"),
            StepName::Micro(m) => write!(f, "{m}"),
        }
    }
}

impl Serialize for StepName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for StepName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The query steps' background insert rates per client, rows/s, when none are given
/// (`--query-rates`): the published runs' 100, 500 and 1000.
pub const DEFAULT_QUERY_RATES_ROWS_PER_SEC: [u32; 3] = [100, 500, 1000];

impl StepName {
    /// The default step list for a set of background rates: l.i0 l.x l.i1 l.i2, then qr/qp per
    /// rate.
    pub fn default_list(rates: &[u32]) -> Vec<StepName> {
        let mut v = vec![
            StepName::LoadInitial,
            StepName::CreateIndexes,
            StepName::InsertDelete1,
            StepName::InsertDelete2,
        ];
        for &r in rates {
            for kind in [QueryKind::Range, QueryKind::Point] {
                v.push(StepName::Query {
                    kind,
                    rate_rows_per_sec: r,
                });
            }
        }
        v
    }

    /// The microbenchmark workload's steps: m.load, then the suite in its published order.
    pub fn micro_list() -> Vec<StepName> {
        std::iter::once(StepName::MicroLoad)
            .chain(MicroStep::suite().into_iter().map(StepName::Micro))
            .collect()
    }

    /// Whether the step belongs to the microbenchmark workload.
    pub fn is_micro(self) -> bool {
        matches!(self, StepName::MicroLoad | StepName::Micro(_))
    }

    /// Position in the canonical order: l.i0, l.x, l.i1, l.i2, then the query steps by rate,
    /// range before point.
    pub fn sort_key(self) -> (u8, u32, u8) {
        match self {
            StepName::LoadInitial => (0, 0, 0),
            StepName::CreateIndexes => (1, 0, 0),
            StepName::InsertDelete1 => (2, 0, 0),
            StepName::InsertDelete2 => (3, 0, 0),
            StepName::Query {
                kind,
                rate_rows_per_sec,
            } => (
                4,
                rate_rows_per_sec,
                match kind {
                    QueryKind::Range => 0,
                    QueryKind::Point => 1,
                },
            ),
            StepName::MicroLoad => (5, 0, 0),
            StepName::Micro(m) => (6, m.report_order(), 0),
        }
    }

    /// The op kind whose figure is the step's throughput.
    pub fn main_op(self) -> crate::stats::OpKind {
        use crate::stats::OpKind;
        match self {
            StepName::CreateIndexes => OpKind::CreateIndexes,
            StepName::Query {
                kind: QueryKind::Range,
                ..
            } => OpKind::RangeQuery,
            StepName::Query {
                kind: QueryKind::Point,
                ..
            } => OpKind::PointQuery,
            StepName::Micro(_) => OpKind::Micro,
            StepName::LoadInitial
            | StepName::InsertDelete1
            | StepName::InsertDelete2
            | StepName::MicroLoad => OpKind::Insert,
        }
    }

    /// The family a report summarises the step in: `load` (l.i0, l.x, m.load), `writes`
    /// (l.i1, l.i2 and the write microbenchmarks), `range queries` or `point queries`.
    pub fn family(self) -> &'static str {
        use crate::workload::micro::MicroGroup;
        match self {
            StepName::LoadInitial | StepName::CreateIndexes | StepName::MicroLoad => "load",
            StepName::InsertDelete1 | StepName::InsertDelete2 => "writes",
            StepName::Query {
                kind: QueryKind::Range,
                ..
            } => "range queries",
            StepName::Query {
                kind: QueryKind::Point,
                ..
            } => "point queries",
            StepName::Micro(m) => match m.bench.group() {
                MicroGroup::Point => "point queries",
                MicroGroup::Range => "range queries",
                MicroGroup::Write => "writes",
            },
        }
    }
}

/// What a step's throughput figure counts. Recorded in run.json as its text
/// (`inserted rows/s`), which every earlier run.json holds too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ThroughputUnit {
    /// Rows inserted per second (l.i0, l.i1, l.i2, m.load).
    #[serde(rename = "inserted rows/s")]
    InsertedRows,
    /// Rows indexed per second (l.x).
    #[serde(rename = "indexed rows/s")]
    IndexedRows,
    /// Queries per second (the query steps).
    #[serde(rename = "queries/s")]
    Queries,
    /// Operations per second (the microbenchmarks).
    #[serde(rename = "operations/s")]
    Operations,
    /// Rows scanned per second (the scan microbenchmarks).
    #[serde(rename = "rows scanned/s")]
    RowsScanned,
}

impl ThroughputUnit {
    /// Its text, as run.json records it.
    pub fn as_str(self) -> &'static str {
        match self {
            ThroughputUnit::InsertedRows => "inserted rows/s",
            ThroughputUnit::IndexedRows => "indexed rows/s",
            ThroughputUnit::Queries => "queries/s",
            ThroughputUnit::Operations => "operations/s",
            ThroughputUnit::RowsScanned => "rows scanned/s",
        }
    }

    /// A short form for the terminal's step lines.
    pub fn short(self) -> &'static str {
        match self {
            ThroughputUnit::InsertedRows => "ins/s",
            ThroughputUnit::IndexedRows => "idx rows/s",
            ThroughputUnit::Queries => "q/s",
            ThroughputUnit::Operations => "ops/s",
            ThroughputUnit::RowsScanned => "rows/s",
        }
    }

    /// The unit of a time series of the figure (change detection): what is counted per second.
    pub fn series_unit(self) -> &'static str {
        match self {
            ThroughputUnit::InsertedRows
            | ThroughputUnit::IndexedRows
            | ThroughputUnit::RowsScanned => "rows/s",
            ThroughputUnit::Queries => "queries/s",
            ThroughputUnit::Operations => "operations/s",
        }
    }
}

impl fmt::Display for ThroughputUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parse a comma-separated step list.
pub fn parse_step_list(s: &str) -> Result<Vec<StepName>, UnknownStep> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(str::parse)
        .collect()
}

/// A named set of sizes and durations (spec section 6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The profile's name.
    pub name: String,
    /// X: rows per table loaded by l.i0.
    pub load_rows: u64,
    /// Y: rows per table inserted (and deleted) by l.i1.
    pub i1_rows: u64,
    /// Z: rows per table inserted (and deleted) by l.i2.
    pub i2_rows: u64,
    /// Duration of each query step, seconds.
    pub query_seconds: f64,
    /// Upper bound on the settle phase after l.i2, seconds; `None` uses the formula alone.
    pub settle_max_seconds: Option<f64>,
}

/// The `small` profile's settle budget, seconds (how it was chosen: docs/method.md).
pub const SMALL_SETTLE_SECONDS: f64 = 5.0;

/// Names of the built-in profiles.
pub const PROFILE_NAMES: [&str; 3] = ["small", "cached", "io-bound"];

impl Profile {
    /// The default profile: under a minute on 2 cores with SQLite. Its settle budget, 5 s, is
    /// what a default private MariaDB InnoDB needed to flush its dirty pages after l.i2 at
    /// these sizes with the settle's raised IO capacity (2.5 to 3.0 s measured,
    /// docs/method.md), with a margin; PostgreSQL and MyRocks needed under a second.
    pub fn small() -> Profile {
        Profile {
            name: "small".into(),
            load_rows: 400_000,
            i1_rows: 100_000,
            i2_rows: 20_000,
            query_seconds: 5.0,
            settle_max_seconds: Some(SMALL_SETTLE_SECONDS),
        }
    }

    /// A built-in profile by name.
    pub fn named(name: &str) -> Option<Profile> {
        let p = |load_rows, i1_rows, i2_rows, query_seconds, settle_max_seconds| Profile {
            name: name.to_string(),
            load_rows,
            i1_rows,
            i2_rows,
            query_seconds,
            settle_max_seconds,
        };
        match name {
            "small" => Some(Profile::small()),
            "cached" => Some(p(30_000_000, 40_000_000, 10_000_000, 1800.0, None)),
            "io-bound" => Some(p(800_000_000, 4_000_000, 1_000_000, 1800.0, None)),
            _ => None,
        }
    }
}

/// The settle phase's length (spec section 3): `min(1200, 60 + rows loaded by l.i0 over all
/// tables / 1,000,000)` seconds, capped by the profile's limit when it has one.
pub fn settle_seconds(total_loaded_rows: u64, profile_max: Option<f64>) -> f64 {
    let formula = (60.0 + count_f64(total_loaded_rows) / 1_000_000.0).min(1200.0);
    match profile_max {
        Some(max) => formula.min(max),
        None => formula,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn throughput_units_are_recorded_as_their_text_and_name_what_they_count() {
        for (step, text, series) in [
            ("l.i0", "inserted rows/s", "rows/s"),
            ("l.x", "indexed rows/s", "rows/s"),
            ("qp100", "queries/s", "queries/s"),
            ("point-query_range=100", "operations/s", "operations/s"),
        ] {
            let name = step.parse::<StepName>().unwrap();
            let sizes =
                crate::results::options::RunOptions::from_profile("sqlite:x", &Profile::small())
                    .step_sizes();
            let unit = crate::workload::plan::StepPlan::for_step(name, &sizes)
                .throughput
                .unit();
            assert_eq!(unit.to_string(), text);
            assert_eq!(serde_json::to_string(&unit).unwrap(), format!("\"{text}\""));
            let back: ThroughputUnit = serde_json::from_str(&format!("\"{text}\"")).unwrap();
            assert_eq!(back, unit);
            // A microbenchmark's figure is operations/s in a time series, not rows/s.
            assert_eq!(unit.series_unit(), series, "{step}");
        }
    }

    use super::*;

    #[test]
    fn step_names_parse_and_print() {
        for s in [
            "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp500", "qr1000", "qp2500",
        ] {
            assert_eq!(s.parse::<StepName>().unwrap().to_string(), s);
        }
        for bad in ["l.i3", "qr", "qr0", "qx100", "qr-5", "qr10a", ""] {
            assert!(bad.parse::<StepName>().is_err(), "{bad}");
        }
        let e = "l.y".parse::<StepName>().unwrap_err().to_string();
        assert!(e.contains("--steps"), "{e}");
    }

    #[test]
    fn default_list_is_the_ten_steps_in_order() {
        let names: Vec<String> = StepName::default_list(&DEFAULT_QUERY_RATES_ROWS_PER_SEC)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            names.join(" "),
            "l.i0 l.x l.i1 l.i2 qr100 qp100 qr500 qp500 qr1000 qp1000"
        );
        assert_eq!(parse_step_list("l.i0, l.x").unwrap().len(), 2);
    }

    #[test]
    fn settle_follows_the_formula() {
        assert_eq!(settle_seconds(0, None), 60.0);
        assert_eq!(settle_seconds(600_000_000, None), 660.0);
        assert_eq!(settle_seconds(16_000_000_000, None), 1200.0);
        assert_eq!(settle_seconds(30_000_000, Some(2.0)), 2.0);
    }

    #[test]
    fn profiles_match_the_spec() {
        let c = Profile::named("cached").unwrap();
        assert_eq!(
            (c.load_rows, c.i1_rows, c.i2_rows),
            (30_000_000, 40_000_000, 10_000_000)
        );
        let io = Profile::named("io-bound").unwrap();
        assert_eq!(
            (io.load_rows, io.i1_rows, io.i2_rows),
            (800_000_000, 4_000_000, 1_000_000)
        );
        assert!(Profile::named("huge").is_none());
    }
}
