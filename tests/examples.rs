//! The example matrix files in `examples/` (one per published shape) stay valid: `ibench
//! matrix plan` accepts every one on a machine set up by `./scripts/test.sh` (the binaries they
//! name exist), and one cell of the config-variants example runs as written.

mod common;
use common::{ibench, matrix_run, ok};

use std::path::{Path, PathBuf};

use common::fresh_dir;

fn examples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path().join("matrix.toml"))
        .filter(|p| p.exists())
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_matrix_plans() {
    let files = examples();
    assert!(files.len() >= 5, "{files:?}");
    for f in &files {
        let out = ibench(&["matrix", "plan", f.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(" cells, estimated "),
            "{}:\n{stdout}",
            f.display()
        );
        assert!(stdout.contains("group "), "{}:\n{stdout}", f.display());
    }
}

/// One shard (one cell: the base config) of the config-variants example runs as written.
#[test]
fn a_cell_of_the_config_variants_example_runs_as_written() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pg-config-variants/matrix.toml");
    let out_dir = fresh_dir("example-run");
    let out = matrix_run(&file, &out_dir, &["--shard", "0/4", "--quiet"]);
    ok(&out);
    let cells: Vec<String> = std::fs::read_dir(out_dir.join("cells"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(cells.len(), 1, "{cells:?}");
    let run_dir = out_dir.join("cells").join(&cells[0]).join("run");
    let run = ibench::results::read_run(&run_dir).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(
        run.status,
        ibench::results::Status::Completed,
        "{:?}",
        run.error
    );
    assert_eq!(run.steps.len(), 10);
    assert!(run.steps.iter().all(|s| s.check_failures.is_empty()));
}
