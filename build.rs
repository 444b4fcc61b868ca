//! Build facts `ibench --version` names: the commit (`git rev-parse --short HEAD`, `unknown`
//! outside a git checkout; changes not yet committed are not marked) and the build profile with
//! its optimisation level.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    let opt = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "?".into());
    let debug = std::env::var("DEBUG").is_ok_and(|d| d != "false" && d != "0");
    println!("cargo:rustc-env=IBENCH_COMMIT={commit}");
    println!(
        "cargo:rustc-env=IBENCH_BUILD={profile} build, opt-level {opt}{}",
        if debug { ", debug info" } else { "" }
    );
    // Built again when the checked-out commit moves: HEAD, the branch refs, packed refs (a
    // path that does not exist would make cargo run this every time: only those that do).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
        let common = git(&["rev-parse", "--git-common-dir"]).map_or(dir.clone(), PathBuf::from);
        for path in [
            dir.join("HEAD"),
            common.join("refs").join("heads"),
            common.join("packed-refs"),
        ] {
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
