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
    // Rebuilt when HEAD moves or the index changes (a checkout), and on every commit, merge or
    // reset of the checked-out branch: those move the branch's ref, not the file HEAD, and do
    // not always rewrite the index, so a stamp watching HEAD and index alone went stale (a
    // report named a commit two merges old). `logs/HEAD`, HEAD's reflog, gets a line for each
    // of them; the branch's ref file is watched too where reflogs are off.
    let mut watched = vec![
        "HEAD".to_owned(),
        "index".to_owned(),
        "logs/HEAD".to_owned(),
    ];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for path in &watched {
        // A missing path (a packed ref, reflogs off) would rerun this script on every build.
        let existing = git(&["rev-parse", "--git-path", path.as_str()])
            .filter(|p| std::path::Path::new(p).exists());
        if let Some(p) = existing {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
