//! One figure of the result model: measured, or why not (`run.json`'s `{"value": …}` or
//! `{"na": "…"}`). The server-side metrics (`metrics.rs`) and perf's counters (`perf.rs`)
//! are made of it; it imports nothing of the results, so both stand above it.

use serde::{Deserialize, Serialize};

/// A figure that was measured, or why it was not. Serialised as `{"value": 1.23}` or
/// `{"na": "reason"}`: never 0 for unmeasured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// The measured value.
    Value(f64),
    /// Not measured, and why.
    Na(String),
}

impl Metric {
    /// The value, if measured.
    pub fn value(&self) -> Option<f64> {
        match self {
            Metric::Value(v) => Some(*v),
            Metric::Na(_) => None,
        }
    }

    pub(crate) fn na(reason: impl Into<String>) -> Metric {
        Metric::Na(reason.into())
    }

    pub(crate) fn from(r: &Result<f64, String>) -> Metric {
        match r {
            Ok(v) => Metric::Value(*v),
            Err(e) => Metric::Na(e.clone()),
        }
    }

    /// `self / by`, n/a when either is n/a or `by` is 0 (with `zero_reason`).
    pub(crate) fn per(&self, by: f64, zero_reason: &str) -> Metric {
        match self {
            Metric::Na(r) => Metric::Na(r.clone()),
            Metric::Value(_) if by <= 0.0 => Metric::na(zero_reason),
            Metric::Value(v) => Metric::Value(v / by),
        }
    }

    pub(crate) fn scale(&self, k: f64) -> Metric {
        match self {
            Metric::Value(v) => Metric::Value(v * k),
            na => na.clone(),
        }
    }
}
