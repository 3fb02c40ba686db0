//! Records the source tree's git commit, and whether it had uncommitted changes, for the
//! provenance of every report (`src/provenance.rs`). Outside a checkout: "unknown".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    println!("cargo:rustc-env=ICNLAB_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=ICNLAB_GIT_DIRTY={dirty}");
    // Rebuilt when HEAD moves or the index changes (a commit, a checkout).
    for path in ["HEAD", "index"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
