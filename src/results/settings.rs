//! The server's settings as a run recorded them (`server-settings.json`, written once per
//! run by the sampler): read back into one typed map, whatever the backend wrote.
//!
//! PostgreSQL writes `pg_settings` (`{"name": {"setting", "unit", "source"}}`), MySQL and
//! MariaDB `SHOW GLOBAL VARIABLES` (`{"name": "value"}`), SQLite its pragmas
//! (`{"pragma name": "value"}`, or `{"error": …}` for one that could not be read).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;

use super::metrics::SETTINGS_FILE;

/// One setting's value as the server reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingValue {
    /// The value as text, in the server's own unit (`16384` for 128 MB of 8 kB buffers).
    pub value: String,
    /// The unit the value counts (`8kB`, `ms`), where the server says (PostgreSQL).
    pub unit: Option<String>,
    /// Where the value came from (`configuration file`, `default`, `command line`), where
    /// the server says (PostgreSQL).
    pub source: Option<String>,
}

impl SettingValue {
    /// The value for people: a memory size in the largest unit that holds it whole
    /// (`16384` of `8kB` is `128MB`), other units appended (`200ms`), else as reported.
    pub fn display(&self) -> String {
        let Some(unit) = self.unit.as_deref() else {
            return self.value.clone();
        };
        match (memory_unit_bytes(unit), self.value.parse::<u64>()) {
            (Some(unit_bytes), Ok(n)) => pg_size_text(n.saturating_mul(unit_bytes)),
            _ => format!("{}{unit}", self.value),
        }
    }

    /// True when the server says the value is its built-in default (PostgreSQL's `source`).
    pub fn is_default(&self) -> bool {
        self.source.as_deref() == Some("default")
    }
}

/// Bytes in one of PostgreSQL's memory units (`B`, `kB`, `8kB`, `MB`, `16MB`, ...).
fn memory_unit_bytes(unit: &str) -> Option<u64> {
    let digits_end = unit
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(unit.len());
    let (count, name) = unit.split_at(digits_end);
    let count: u64 = if count.is_empty() {
        1
    } else {
        count.parse().ok()?
    };
    let scale = match name {
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    Some(count * scale)
}

/// Bytes as PostgreSQL writes a size: the largest of its units (powers of 1024) that divides
/// it (`128MB`, `8kB`, `4GB`, `1TB`), else bytes (`100B`). The one writer of such a size: a
/// setting's value shown, a value ibench sets (`max_slot_wal_keep_size`).
pub fn pg_size_text(bytes: u64) -> String {
    for (scale, name) in [
        (1u64 << 40, "TB"),
        (1 << 30, "GB"),
        (1 << 20, "MB"),
        (1 << 10, "kB"),
    ] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{name}", bytes / scale);
        }
    }
    format!("{bytes}B")
}

/// The server's settings, name → value, as recorded by one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerSettings {
    /// Every setting that could be read, by name.
    pub values: BTreeMap<String, SettingValue>,
}

impl ServerSettings {
    /// Read `server-settings.json` from a results directory: `Ok(None)` when the run has none
    /// (an older run, or one whose server could not be asked).
    pub fn read(dir: &Path) -> anyhow::Result<Option<ServerSettings>> {
        let path = dir.join(SETTINGS_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let json: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        Ok(Some(ServerSettings::from_json(&json)))
    }

    /// The settings of any backend's `server-settings.json`; entries of no known shape (a
    /// pragma that could not be read) are left out.
    pub fn from_json(json: &serde_json::Value) -> ServerSettings {
        let Some(object) = json.as_object() else {
            return ServerSettings::default();
        };
        let values = object
            .iter()
            .filter_map(|(name, v)| Some((name.clone(), setting_of(v)?)))
            .collect();
        ServerSettings { values }
    }
}

fn setting_of(v: &serde_json::Value) -> Option<SettingValue> {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => Some(String::new()),
        serde_json::Value::Bool(_) | serde_json::Value::Number(_) => Some(v.to_string()),
        _ => None,
    };
    match v {
        serde_json::Value::Object(o) => {
            let value = text(o.get("setting")?)?;
            let field = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_string);
            Some(SettingValue {
                value,
                unit: field("unit"),
                source: field("source"),
            })
        }
        other => Some(SettingValue {
            value: text(other)?,
            unit: None,
            source: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backends_settings_file_reads_into_one_map() {
        let pg = serde_json::json!({
            "shared_buffers": {"setting": "16384", "unit": "8kB", "source": "configuration file"},
            "wal_compression": {"setting": "off", "unit": null, "source": "default"},
            "deadlock_timeout": {"setting": "1000", "unit": "ms", "source": "default"}
        });
        let s = ServerSettings::from_json(&pg);
        assert_eq!(s.values["shared_buffers"].display(), "128MB");
        assert_eq!(s.values["deadlock_timeout"].display(), "1000ms");
        assert!(s.values["wal_compression"].is_default());
        assert!(!s.values["shared_buffers"].is_default());

        let my =
            serde_json::json!({"innodb_buffer_pool_size": "134217728", "gtid_domain_id": null});
        let s = ServerSettings::from_json(&my);
        assert_eq!(s.values["innodb_buffer_pool_size"].display(), "134217728");
        assert_eq!(s.values["gtid_domain_id"].value, "");

        let lite =
            serde_json::json!({"pragma cache_size": "-2000", "pragma mmap_size": {"error": "x"}});
        let s = ServerSettings::from_json(&lite);
        assert_eq!(s.values.len(), 1);
        assert_eq!(s.values["pragma cache_size"].value, "-2000");
    }

    #[test]
    fn sizes_are_written_as_postgresql_writes_them() {
        assert_eq!(pg_size_text(100), "100B");
        assert_eq!(pg_size_text(8 << 10), "8kB");
        assert_eq!(pg_size_text(1536 << 20), "1536MB");
        assert_eq!(pg_size_text(64 << 30), "64GB");
        assert_eq!(pg_size_text(1 << 40), "1TB");
    }

    #[test]
    fn memory_sizes_take_the_largest_whole_unit() {
        let v = |value: &str, unit: &str| SettingValue {
            value: value.into(),
            unit: Some(unit.into()),
            source: None,
        };
        assert_eq!(v("4096", "kB").display(), "4MB");
        assert_eq!(v("1000", "kB").display(), "1000kB");
        assert_eq!(v("65", "16MB").display(), "1040MB");
        assert_eq!(v("131072", "8kB").display(), "1GB");
        assert_eq!(v("-1", "kB").display(), "-1kB");
    }
}
