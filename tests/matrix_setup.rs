//! A matrix group checks itself: a private PostgreSQL 15 per cell with a config axis
//! (`synchronous_commit` on and off, beside the base config) and a workload axis (`clients` 1 and 2). The group's report
//! names what it varies (the config and `--clients`) and warns about nothing else; a cell whose
//! run was made with other options afterwards (as a shard run with an edited workload would
//! be) is warned about by name.

mod common;

use std::path::Path;

use common::{fresh_dir, ibench, ok, pg15_bindir};

fn matrix_file(dir: &Path) -> std::path::PathBuf {
    let bindir = pg15_bindir();
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        r#"
[servers.pg15]
kind = "postgres"
bindir = "{bindir}"

[configs.postgres]
[[configs.postgres.axes]]
setting = "synchronous_commit"
values = ["on", "off"]
names = ["sync1", "sync0"]

[workloads.w]
load_rows = 2000
i1_rows = 400
i2_rows = 100
query_seconds = 1
settle_seconds = 0
steps = ["l.i0", "l.x", "l.i1"]
[[workloads.w.axes]]
option = "clients"
values = [1, 2]
names = ["c1", "c2"]
"#,
        bindir = bindir.display()
    );
    let path = dir.join("matrix.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn report_json(out_dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out_dir.join("report/all.w.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_group_names_its_axes_and_warns_about_a_cell_that_differs_beyond_them() {
    let work = fresh_dir("mx-setup");
    let file = matrix_file(&work);
    let out_dir = work.join("out");
    let (f, o) = (file.to_str().unwrap(), out_dir.to_str().unwrap());
    ok(&ibench(&["matrix", "run", f, "--out", o, "--quiet"]));
    ok(&ibench(&["matrix", "report", o]));
    let json = report_json(&out_dir);
    let cmp = &json["comparison"];
    // Three configs (the base, with no config file, and the axis's two) at two clients each.
    assert_eq!(
        cmp["labels"].as_array().map(Vec::len),
        Some(6),
        "{}",
        cmp["labels"]
    );
    let axis = &cmp["axis"];
    assert_eq!(
        axis["varies"], "the config (base, sync1, sync0), --clients (1, 2)",
        "{axis}"
    );
    assert_eq!(axis["warnings"], serde_json::json!([]), "{axis}");
    // The members differ in the setting and the clients, each named with both values.
    let names = |i: usize| -> Vec<String> {
        cmp["differences"][i]["differences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{} {} → {}", d["name"], d["base"], d["run"]).replace('"', ""))
            .collect()
    };
    let all: Vec<String> = (0..5).flat_map(names).collect();
    assert!(
        all.contains(&"synchronous_commit on → off".to_string()),
        "{all:?}"
    );
    assert!(all.contains(&"--clients 1 → 2".to_string()), "{all:?}");
    let text = std::fs::read_to_string(out_dir.join("report/all.w.txt")).unwrap();
    assert!(
        text.contains("This matrix group varies the config (base, sync1, sync0), --clients (1, 2)"),
        "{text}"
    );
    assert!(
        text.contains("No cell differs beyond the group's axis"),
        "{text}"
    );

    // A cell's run made with another load batch than its workload's: warned about by name.
    let cell = "pg15.sync0.w_c2.r1";
    let run_json = out_dir.join("cells").join(cell).join("run/run.json");
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    run["options"]["load_rows_per_insert"] = serde_json::json!(7);
    std::fs::write(&run_json, serde_json::to_string(&run).unwrap()).unwrap();
    ok(&ibench(&["matrix", "report", o]));
    let json = report_json(&out_dir);
    let warnings = json["comparison"]["axis"]["warnings"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = warnings[0].as_str().unwrap();
    assert!(w.starts_with(cell), "{w}");
    assert!(w.contains("option --load-batch"), "{w}");
    let text = std::fs::read_to_string(out_dir.join("report/all.w.txt")).unwrap();
    assert!(
        text.contains(&format!("!! {cell} differs from the base")),
        "{text}"
    );
}
