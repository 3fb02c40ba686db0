//! End-to-end checks of `icnlab via`: both providers launch their second process, and
//! `--baselines` runs the raw TCP and Unix-socket programs as two processes too (the hidden
//! `--raw-server` child); the JSON names every series with one row per size (no size 0 for
//! the raw streams, which cannot carry an empty message).

use assert_cmd::Command;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

#[test]
fn pingpong_and_window_with_two_process_baselines_on_both_providers() {
    for provider in ["shm", "tcp"] {
        for program in ["pingpong", "window"] {
            let out = icnlab()
                .args(["via", program, "--provider", provider])
                .args([
                    "--sizes",
                    "0,8,4096",
                    "--iterations",
                    "20",
                    "--messages",
                    "64",
                ])
                .args(["--window", "8", "--baselines", "--json"])
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{provider} {program}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let series = doc["series"].as_array().unwrap();
            let names: Vec<&str> = series
                .iter()
                .map(|s| s["transport"].as_str().unwrap())
                .collect();
            assert_eq!(
                names,
                [
                    format!("icn-via {provider}").as_str(),
                    "raw tcp",
                    "raw unix"
                ]
            );
            let sizes = |i: usize| -> Vec<u64> {
                series[i]["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["size"].as_u64().unwrap())
                    .collect()
            };
            assert_eq!(sizes(0), [0, 8, 4096], "{provider} {program}");
            assert_eq!(sizes(1), [8, 4096]);
            assert_eq!(sizes(2), [8, 4096]);
        }
    }
}

#[test]
fn a_bad_raw_server_socket_is_refused() {
    let out = icnlab()
        .args(["via", "pingpong", "--raw-server", "udp", "--sizes", "8"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcp or unix"));
}

#[test]
fn a_spin_budget_out_of_range_is_refused_naming_the_range() {
    let out = icnlab()
        .args(["via", "pingpong", "--sizes", "8", "--spin-us", "1000001"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("spin must be in 0..=1000000"), "{err}");
}
