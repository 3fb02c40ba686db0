//! Issue 14, item 4: exit code 2 for every input or usage error, with a message naming the
//! culprit; 1 is kept for failures of the run itself (tested in status_cli and thnet_cli).

use assert_cmd::Command;
use std::fs;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

/// Runs `args`; asserts exit code 2 and a stderr mentioning `named`.
fn usage_error(args: &[&str], named: &str) {
    let out = icnlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(named), "{args:?} should name `{named}`: {err}");
}

#[test]
fn input_and_usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    fs::write(p("ok.toml"), "model = \"mm1\"\ncustomers = 100\n").unwrap();
    fs::write(p("file"), "not a folder").unwrap();
    fs::create_dir(p("empty")).unwrap();

    usage_error(&["bench", "nosuch"], "nosuch");
    usage_error(
        &["run", &p("ok.toml"), "--quiet", "--out", &p("file")],
        &p("file"),
    );
    usage_error(
        &[
            "sweep",
            &p("ok.toml"),
            "--quiet",
            "--out",
            "/proc/icnlab-no/out",
        ],
        "/proc/icnlab-no",
    );
    usage_error(&["merge", &p("empty"), "--out", &p("m")], &p("empty"));
    usage_error(&["merge", &p("nowhere"), "--out", &p("m")], &p("nowhere"));
    usage_error(&["run", &p("empty"), "--quiet"], &p("empty"));
    usage_error(
        &[
            "reproduce",
            "--out",
            &p("file"),
            "--experiments",
            &p("empty"),
        ],
        &p("file"),
    );
    usage_error(
        &["reproduce", "--experiments", &p("nowhere"), "--list"],
        &p("nowhere"),
    );
    // Not a usage error: the run itself is fine, so exit 0 with the outputs written.
    icnlab()
        .args(["run", &p("ok.toml"), "--quiet", "--out", &p("o")])
        .assert()
        .success();
}

/// `icnlab keys MODEL` lists real keys with their defaults: pasted under `model = ...` they
/// form a valid experiment file, for every model.
#[test]
fn keys_of_every_model_form_a_valid_file() {
    let dir = tempfile::tempdir().unwrap();
    let models = icnlab().arg("models").output().unwrap();
    let names: Vec<String> = String::from_utf8_lossy(&models.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    assert!(names.len() >= 7, "{names:?}");
    for model in names {
        let out = icnlab().args(["keys", &model]).output().unwrap();
        assert!(out.status.success(), "{model}");
        let keys = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(keys.lines().count() > 3, "{model}: {keys}");
        let file = dir.path().join(format!("{model}.toml"));
        fs::write(&file, format!("model = \"{model}\"\n{keys}")).unwrap();
        let check = icnlab().arg("check").arg(&file).output().unwrap();
        assert!(
            check.status.success(),
            "{model}: {}\n{keys}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
    usage_error(&["keys", "warp"], "unknown model \"warp\"");
}

/// Issue 14: `bench --help` listed no targets. It names every target `bench` accepts, and
/// each one named there is accepted (a misspelt one is refused with exit 2 by the test above).
#[test]
fn bench_help_lists_its_targets() {
    let out = icnlab().args(["bench", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let line = help
        .lines()
        .find_map(|l| l.strip_prefix("Targets: "))
        .unwrap_or_else(|| panic!("no target list: {help}"));
    let targets: Vec<&str> = line.split(", ").collect();
    for t in [
        "sci",
        "sci-switched",
        "mm1",
        "xswitch",
        "vc-router",
        "cluster-ccc",
    ] {
        assert!(targets.contains(&t), "{t} missing from {targets:?}");
    }
}

/// Issue 32: `bench booksim` without BookSim2 says so and still times icnlab's side; a
/// misspelt comparison is a usage error listing the known ones; a `BOOKSIM2` that cannot run
/// is a failure naming it.
#[test]
fn bench_booksim_says_when_booksim2_is_absent() {
    let out = icnlab()
        .args(["bench", "booksim-mesh8", "--repeats", "1"])
        .env_remove("BOOKSIM2")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("BookSim2 not found"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("booksim-mesh8"))
        .unwrap_or_else(|| panic!("no row: {text}"));
    assert!(row.contains("router-cycles per CPU-second") && row.contains("BookSim2 not run"));
    usage_error(&["bench", "booksim-mesh9"], "booksim-mesh32");
    let out = icnlab()
        .args(["bench", "booksim-mesh8", "--repeats", "1"])
        .env("BOOKSIM2", "/nonexistent/booksim")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("/nonexistent/booksim"), "{err}");
}

/// Issue 22: control bytes a user typed (in a file name, a key's value, a flag's value) were
/// echoed raw in errors, where `ESC [2J` clears the terminal. Each is now escaped.
#[test]
fn control_bytes_in_echoed_errors_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let esc = "\u{1b}[2J\r";
    // TOML spells the control bytes as escapes; the parsed value holds them raw.
    fs::write(
        p("bad.toml"),
        "model = \"vc-router\"\ntopology = \"mesh:\\u001b[2J\\r\"\n",
    )
    .unwrap();
    let ours = "\\u{1b}[2J\\r";
    // clap drops what looks like a terminal sequence when it renders its error; the rest
    // is escaped as ours are.
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["check".into(), p("bad.toml")], ours),
        (vec!["run".into(), p(&format!("no{esc}such.toml"))], ours),
        (
            vec!["bcast".into(), "--graph".into(), format!("ring:{esc}")],
            ours,
        ),
        (
            vec![
                "via".into(),
                "pingpong".into(),
                "--sizes".into(),
                format!("8{esc}"),
            ],
            "'8\\r'",
        ),
    ];
    for (args, shown) in cases {
        let out = icnlab().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            !out.stderr.iter().any(|&b| b == 0x1b || b == b'\r'),
            "{args:?}: raw control bytes in {err:?}"
        );
        assert!(err.contains(shown), "{args:?}: {err:?}");
    }
}
