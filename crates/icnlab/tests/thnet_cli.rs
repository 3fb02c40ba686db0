//! End-to-end checks of the TH-Net models through the CLI: bad configurations exit with code 2
//! and name the key, a deadlock exits with code 1 and a diagnosis, a valid run succeeds.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Outputs go to the temporary directory, never into the source tree.
fn outdir(d: &Path) -> String {
    d.join("out").display().to_string()
}

#[test]
fn bad_thnet_configs_exit_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let graph = |name: &str, text: &str| write(d, name, text);
    let cases = [
        (
            format!(
                "model = \"xswitch\"\ntopology = \"file:{}\"\n",
                graph("g1.txt", "switches 2\nlink s0.F s1.B\n")
            ),
            "port `F` out of range",
        ),
        (
            format!(
                "model = \"xswitch\"\ntopology = \"file:{}\"\n",
                graph("g2.txt", "switches 2\nlink s0.A s7.B\nlink s0.E n0\n")
            ),
            "missing switch s7",
        ),
        (
            format!(
                "model = \"xswitch\"\ntopology = \"file:{}\"\n",
                graph(
                    "g3.txt",
                    "switches 2\nlink s0.A s1.B\nlink s0.E n0\nlink s1.E n1\nroute n0 n1 C E\n"
                )
            ),
            "s0.C is not connected",
        ),
        (
            "model = \"xswitch\"\nframe_size = 0\n".to_string(),
            "key `frame_size`",
        ),
        (
            "model = \"xswitch\"\nstop_threshold = 64\n".to_string(),
            "key `stop_threshold`",
        ),
        (
            "model = \"vc-router\"\ntopology = \"torus:4x4\"\nvcs = 17\n".to_string(),
            "key `vcs`",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let cfg = write(d, &format!("bad{i}.toml"), text);
        let out = icnlab()
            .args(["run", &cfg, "--quiet", "--out", &outdir(d)])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "case {i}: {err}");
    }
}

#[test]
fn deadlock_exits_1_with_a_diagnosis_and_a_valid_run_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = write(
        d,
        "ring.trace",
        "0 0 2 4096\n0 1 3 4096\n0 2 0 4096\n0 3 1 4096\n",
    );
    let dead = write(
        d,
        "dead.toml",
        &format!(
            "model = \"xswitch\"\ntopology = \"ring:4\"\nframe_size = 4096\nfifo_size = 16\n\
             stop_threshold = 12\ngo_threshold = 4\nwarmup = 0\nmeasure = 5000\nwatchdog = 1000\n\
             [traffic]\npattern = \"trace\"\ntrace_file = \"{trace}\"\n"
        ),
    );
    let out = icnlab()
        .args(["run", &dead, "--quiet", "--out", &outdir(d)])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("Wait-for cycle"), "{err}");
    let ok = write(
        d,
        "ok.toml",
        "model = \"vc-router\"\ntopology = \"mesh:4x4\"\nwarmup = 200\nmeasure = 1000\n",
    );
    icnlab()
        .args(["run", &ok, "--quiet", "--out", &outdir(d)])
        .assert()
        .success();
}

/// Issue 14: the VC router's deadlock message had no wait-for cycle (the X-Switch's has). A
/// 1-VC torus run with `allow_deadlock` deadlocks: exit 1, and the error names the cycle.
#[test]
fn a_vc_router_deadlock_names_its_wait_for_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "vc.toml",
        "model = \"vc-router\"\ntopology = \"torus:4x4\"\nvcs = 1\nallow_deadlock = true\n\
         load = 0.9\nwatchdog = 1000\n",
    );
    let out = icnlab()
        .args(["run", &cfg, "--quiet", "--out", &outdir(d)])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("deadlock: no flit moved") && err.contains("Wait-for cycle of 4 input VCs"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
