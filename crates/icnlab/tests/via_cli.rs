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

/// Every bad flag value is an input error (exit 2, as the README says), refused before any
/// process starts; they exited 1 like a failed run.
#[test]
fn every_bad_via_flag_value_exits_2() {
    for args in [
        &["pingpong", "--sizes", "8,1073741825"][..],
        &["window", "--window", "0"],
        &["window", "--window", "513"],
        &["pingpong", "--spin-us", "1000001"],
        &["pingpong", "--iterations", "0"],
        &["window", "--messages", "0"],
        &["pingpong", "--raw-server", "udp"],
        &["copy", "--sizes", "0"],
        &["copy", "--sizes", "1073741825"],
        &["run", "/nonexistent/workload.toml"],
    ] {
        let out = icnlab()
            .arg("via")
            .args(args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
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

/// Kills one side of a two-process `icnlab via` run (`--server` / `--connect`) at a random
/// moment and checks the survivor: it exits with an error within 2 s, the error says the peer
/// is gone and what had completed, and nothing is left behind (no abstract socket, no new
/// `/dev/shm` entry). Runs alternate the provider, the program and the side killed.
/// `ICN_VIA_KILL_RUNS=100` runs 100 (default 4); `ICN_VIA_KILL_SEED` replays a run.
#[test]
fn a_killed_peer_is_reported_gone_by_the_survivor_with_what_completed() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let runs: usize = std::env::var("ICN_VIA_KILL_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let seed: u64 = std::env::var("ICN_VIA_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("ICN_VIA_KILL_SEED={seed}");
    // splitmix64: enough randomness for kill times, no dependency
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let exe = assert_cmd::cargo::cargo_bin("icnlab");
    let dev_shm = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir("/dev/shm")
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    // ours only: other programs on the machine may come and go
                    .filter(|n| n.contains("icnlab") || n.contains("via"))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    for run in 0..runs {
        let provider = ["shm", "tcp"][run % 2];
        let program = ["window", "pingpong"][(run / 2) % 2];
        let kill_server = (run / 4) % 2 == 0;
        let name = format!("kill-test-{}-{run}", std::process::id());
        let listen = if provider == "shm" {
            name.clone()
        } else {
            "127.0.0.1:0".to_string()
        };
        let shm_before = dev_shm();
        // effectively endless: the run is always cut by the kill
        let workload = [
            "--sizes",
            "0,8,4096",
            "--iterations",
            "100000000",
            "--messages",
            "100000000",
        ];
        let mut server = Command::new(&exe)
            .args(["via", program, "--provider", provider, "--server", &listen])
            .args(workload)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut sout = BufReader::new(server.stdout.take().unwrap());
        sout.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("READY ")
            .expect("READY line")
            .to_string();
        let mut client = Command::new(&exe)
            .args(["via", program, "--provider", provider, "--connect", &url])
            .args(workload)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // the client prints its table header once connected
        let mut cout = BufReader::new(client.stdout.take().unwrap());
        line.clear();
        cout.read_line(&mut line).unwrap();
        assert!(line.starts_with("# icnlab via"), "{line:?}");
        std::thread::sleep(Duration::from_micros(next() % 300_000));
        let what = format!("run {run} ({provider} {program}, seed {seed})");
        let (mut victim, mut survivor, mut survivor_out) = if kill_server {
            (server, client, Box::new(cout) as Box<dyn Read>)
        } else {
            (client, server, Box::new(sout) as Box<dyn Read>)
        };
        victim.kill().unwrap();
        victim.wait().unwrap();
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = survivor.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > Duration::from_secs(2) {
                let _ = survivor.kill();
                panic!("{what}: the survivor still runs 2 s after its peer was killed");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut err = String::new();
        survivor
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let mut out = String::new();
        survivor_out.read_to_string(&mut out).unwrap();
        assert!(!status.success(), "{what}: survivor succeeded");
        assert!(
            err.contains("peer ") && err.contains(" gone") && err.contains("completed: "),
            "{what}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{what}: one error line: {err}");
        let listed = std::fs::read_to_string("/proc/net/unix").unwrap();
        assert!(
            !listed.contains(&name),
            "{what}: abstract socket left behind"
        );
        assert_eq!(dev_shm(), shm_before, "{what}: /dev/shm changed");
    }
}

/// The window benchmark streams any number of messages: 65473 (once refused with "receive
/// queue full"), or `ICN_VIA_WINDOW_MESSAGES` (the issue's 10^7:
/// `ICN_VIA_WINDOW_MESSAGES=10000000 cargo test --release -p icnlab --test via_cli streams`).
#[test]
fn the_window_streams_any_number_of_messages_on_both_providers() {
    let messages = std::env::var("ICN_VIA_WINDOW_MESSAGES").unwrap_or_else(|_| "65473".into());
    for provider in ["shm", "tcp"] {
        let out = icnlab()
            .args(["via", "window", "--provider", provider, "--sizes", "8"])
            .args(["--messages", &messages, "--reliability", "reception"])
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let row = stdout.lines().last().unwrap();
        let bw: f64 = row.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(row.starts_with("8 ") && bw > 0.0, "{provider}: {stdout}");
    }
}

#[test]
fn sizes_up_to_one_gib_are_accepted_and_larger_ones_refused_naming_the_limit() {
    let help = icnlab().args(["via", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("0..=1073741824") && help.contains("max_transfer_size"),
        "{help}"
    );
    let out = icnlab()
        .args(["via", "pingpong", "--sizes", "8,1073741825"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sizes must be in 0..=1073741824 (the VI's max_transfer_size)"),
        "{err}"
    );
}

/// An endpoint already in use: the error names it and the OS error appears once.
#[test]
fn a_taken_endpoint_is_named_and_its_os_error_printed_once() {
    use std::io::{BufRead, BufReader};
    let name = format!("taken-{}", std::process::id());
    let mut first = std::process::Command::new(assert_cmd::cargo::cargo_bin("icnlab"))
        .args(["via", "pingpong", "--server", &name, "--sizes", "8"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(first.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("READY shm://"), "{line}");
    let out = icnlab()
        .args(["via", "pingpong", "--server", &name, "--sizes", "8"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("shm://{name}: cannot listen")),
        "{err}"
    );
    assert_eq!(err.matches("in use").count(), 1, "{err}");
}

/// The single-copy path between two processes (`--cma-min`): both programs complete, and the
/// last pingpong reply, which the echoer sends just before it disconnects and exits, still
/// arrives: the receiver copies it out of the echoer's memory, so a disconnect waits for
/// that copy's ack.
#[test]
fn single_copy_runs_complete_including_the_reply_sent_just_before_exit() {
    for program in ["pingpong", "window"] {
        let out = icnlab()
            .args(["via", program, "--provider", "shm", "--cma-min", "65536"])
            .args(["--sizes", "8,65536,4194304", "--iterations", "200"])
            .args(["--messages", "256", "--window", "8"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{program}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with('#'))
            .count();
        assert_eq!(rows, 3, "{program}");
    }
}

/// `icnlab via copy`: one row per size with the three copy figures and their ratio; a size
/// outside 1..=1 GiB is refused naming the range (exit 2, one error line).
#[test]
fn the_copy_figure_prints_a_row_per_size_and_refuses_sizes_out_of_range() {
    let out = icnlab()
        .args(["via", "copy", "--sizes", "65536,131072"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!((rows[0][0], rows[1][0]), ("65536", "131072"));
    for r in &rows {
        assert_eq!(r.len(), 5, "size, three figures, ratio: {text}");
        let v: Vec<f64> = r[1..].iter().map(|x| x.parse().unwrap()).collect();
        assert!(v.iter().all(|&x| x > 0.0), "{text}");
        assert!(
            (v[3] - v[1] / v[0]).abs() < 0.01,
            "ratio = shared / memcpy: {text}"
        );
    }
    for bad in ["0", "1073741825"] {
        let out = icnlab()
            .args(["via", "copy", "--sizes", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("1..=1073741824"), "{bad}: {err}");
    }
}
