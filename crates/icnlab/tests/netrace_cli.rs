//! Issue 21, Netrace: the `[netrace]` workload from the command line. A trace with a
//! dependency cycle or a dangling dependency stops the run within seconds with exit 1 naming
//! the packet (never a hang); a malformed trace is refused before the run with exit 2 naming
//! the byte; the bundled example checks.

use assert_cmd::Command;
use icn_netrace::format::{PacketType, Record, write_file};
use std::fs;
use std::path::Path;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

fn rec(cycle: u64, id: u32, deps: &[u32]) -> Record {
    Record {
        cycle,
        id,
        addr: 0,
        kind: PacketType(1),
        src: 0,
        dst: 5,
        node_types: 0,
        dependents: deps.to_vec(),
    }
}

fn experiment(dir: &Path, model: &str, trace: &str) -> String {
    let p = dir.join(format!("{model}.toml"));
    fs::write(
        &p,
        format!("model = \"{model}\"\ntopology = \"mesh:4x4\"\n[netrace]\nfile = \"{trace}\"\n"),
    )
    .unwrap();
    p.display().to_string()
}

/// Runs `icnlab run` on `model` replaying `trace`: (exit code, stderr).
fn run(dir: &Path, model: &str, trace: &str) -> (Option<i32>, String) {
    let exp = experiment(dir, model, trace);
    let out = icnlab()
        .args(["run", &exp, "--quiet", "--out"])
        .arg(dir.join(format!("out-{model}-{trace}")))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn dependency_problems_exit_1_naming_the_packet() {
    let dir = tempfile::tempdir().unwrap();
    // Packet 2 lists 1, which came before it: 1 → 2 → 1.
    let cycle = [rec(0, 1, &[2]), rec(5, 2, &[1])];
    write_file(&dir.path().join("cycle.tra.bz2"), "cycle", 16, &cycle).unwrap();
    // Packet 1 lists 4, which never comes.
    let dangling = [rec(0, 1, &[4]), rec(5, 2, &[])];
    write_file(
        &dir.path().join("dangling.tra.bz2"),
        "dangling",
        16,
        &dangling,
    )
    .unwrap();
    for model in ["vc-router", "xswitch"] {
        let (code, err) = run(dir.path(), model, "cycle.tra.bz2");
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("id 2") && err.contains("cycle"), "{err}");
        let (code, err) = run(dir.path(), model, "dangling.tra.bz2");
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("id 1") && err.contains("dangling"), "{err}");
    }
    // A good one runs.
    let good = [rec(0, 1, &[2]), rec(5, 2, &[])];
    write_file(&dir.path().join("good.tra.bz2"), "good", 16, &good).unwrap();
    let (code, err) = run(dir.path(), "vc-router", "good.tra.bz2");
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn malformed_traces_exit_2_naming_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let good = [rec(0, 1, &[]), rec(5, 2, &[])];
    let path = dir.path().join("cut.tra.bz2");
    write_file(&path, "cut", 16, &good).unwrap();
    // Re-compress the stream without its last 3 bytes.
    let mut raw = Vec::new();
    use std::io::{Read, Write};
    bzip2_read(&path, &mut raw);
    raw.truncate(raw.len() - 3);
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(&raw).unwrap();
    fs::write(&path, e.finish().unwrap()).unwrap();
    let (code, err) = run(dir.path(), "vc-router", "cut.tra.bz2");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("netrace.file") && err.contains("byte 118"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    fs::write(dir.path().join("plain.tra.bz2"), "not bzip2").unwrap();
    let (code, err) = run(dir.path(), "xswitch", "plain.tra.bz2");
    assert_eq!(code, Some(2), "{err}");

    fn bzip2_read(p: &Path, out: &mut Vec<u8>) {
        bzip2::read::BzDecoder::new(fs::File::open(p).unwrap())
            .read_to_end(out)
            .unwrap();
    }
}

/// The bundled example (blackscholes, kept in `experiments/traces/netrace/`) checks.
#[test]
fn bundled_example_checks() {
    let exp = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/examples/netrace-blackscholes.toml");
    let out = icnlab().arg("check").arg(&exp).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
