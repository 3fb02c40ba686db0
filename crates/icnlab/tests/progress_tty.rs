//! Issue 22, item 5: a single long replication shows its own progress on a terminal. Each
//! run below is one replication; it runs under `script` (util-linux), which gives it a
//! pseudo-terminal, and the bar's percentages are read back from what it drew: the bar must
//! stand at several values strictly between 0 and 100 % while the run goes, not jump from 0
//! to 100 at the end (the cluster's bar sat at 0 % for a whole broadcast).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The percentages the bar showed while `icnlab run FILE` ran on a pseudo-terminal.
fn percentages_drawn(file: &Path, out: &Path) -> BTreeSet<u32> {
    let bin = assert_cmd::cargo::cargo_bin("icnlab");
    let cmd = format!(
        "{} run {} --out {}",
        bin.display(),
        file.display(),
        out.display()
    );
    let run = Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{text}");
    // The bar is redrawn in place: `... 37% eta 2s`, several times.
    text.split('%')
        .filter_map(|before| {
            let digits: String = before
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            digits.parse().ok()
        })
        .filter(|&p| p <= 100)
        .collect()
}

fn assert_advances(name: &str, text: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let seen = percentages_drawn(&file, &tmp.path().join("out"));
    let between: Vec<u32> = seen.iter().copied().filter(|&p| 0 < p && p < 100).collect();
    assert!(
        between.len() >= 3,
        "{name}: the bar should stand at several values between 0 and 100 %, drew {seen:?}"
    );
}

/// The cluster: CCCBrd (ILBM) broadcast on CCC(5,5) of X-Switches, of 64 KiB to keep the
/// suite short (the 1 MB broadcast of the issue shows the same bar over minutes).
#[test]
fn a_cluster_broadcast_shows_its_progress_on_a_terminal() {
    assert_advances(
        "ccc-bcast",
        r#"model = "cluster"
replications = 1
[workload]
kind = "bcast"
algorithm = "ilbm"
bytes = 65536
[nic]
kind = "simple"
[fabric]
kind = "xswitch"
topology = "ccc:5,5"
"#,
    );
}

/// The VC router: one run of 10^7 cycles (warm-up and measurement).
#[test]
fn a_vc_router_run_of_ten_million_cycles_shows_its_progress_on_a_terminal() {
    assert_advances(
        "vc-long",
        r#"model = "vc-router"
replications = 1
topology = "mesh:2x2"
load = 0.05
warmup = 1000
measure = 9999000
"#,
    );
}
