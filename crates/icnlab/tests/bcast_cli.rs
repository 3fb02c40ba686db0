//! `icnlab bcast` through the built binary: bad input exits with code 2 and one clear line on
//! stderr; a valid run exits 0 and prints the table.

use std::process::{Command, Output};

fn bcast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_icnlab"))
        .arg("bcast")
        .args(args)
        .output()
        .expect("icnlab runs")
}

#[test]
fn bad_input_exits_2_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let self_loop = dir.path().join("loop.txt");
    std::fs::write(&self_loop, "a b\nb b\n").unwrap();
    let split = dir.path().join("split.txt");
    std::fs::write(&split, "a b\nc d\n").unwrap();
    let missing = dir.path().join("missing.txt");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--graph".into(), "cube:3".into()],
            "unknown family `cube`",
        ),
        (vec!["--graph".into(), "ccc:2,3".into()], "h must be ≥ k"),
        (vec!["--graph".into(), "ccc:4,0".into()], "k must be ≥ 1"),
        (
            vec!["--graph".into(), "mesh:4".into()],
            "expected two numbers",
        ),
        (
            vec!["--graph".into(), format!("file:{}", self_loop.display())],
            "self-loop",
        ),
        (
            vec!["--graph".into(), format!("file:{}", split.display())],
            "disconnected",
        ),
        (
            vec!["--graph".into(), format!("file:{}", missing.display())],
            "cannot read",
        ),
        (
            vec![
                "--graph".into(),
                "ring:5".into(),
                "--model".into(),
                "magic".into(),
            ],
            "unknown model `magic`",
        ),
        (
            vec![
                "--graph".into(),
                "ccc:3,2".into(),
                "--source".into(),
                "(9,9)".into(),
            ],
            "unknown node `(9,9)`",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = bcast(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: --"), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn valid_run_exits_0_with_the_table() {
    let out = bcast(&["--graph", "ccc:3,2", "--model", "ilbm"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("graph ccc:3,2: 12 nodes"), "{stdout}");
    // CCCBrd's worst time on CCC(3,2) is 6 (docs/bcast.md §4), bound 5.
    let row = stdout.lines().find(|l| l.starts_with("ilbm")).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((cols[1], cols[3]), ("6", "5"), "{row}");
}
