//! The recorder on the project's own MPI program under `mpirun -np 4`: messages and bytes per
//! pair in the trace equal what the program counted it sent, on the sending and the receiving
//! side; every request is waited for once; the compute recorded covers the program's busy time.
//!
//! Needs OpenMPI (`mpicc`, `mpirun`): ignored by default, run by CI's MPI step
//! (`cargo test --release -p icn-tirecord -- --ignored`).

use icn_tirecord::{build, read_trace, record};
use std::collections::BTreeMap;
use std::path::PathBuf;

const RANKS: usize = 4;
const FLOPS: f64 = 1e9;

#[test]
#[ignore = "needs OpenMPI (mpicc, mpirun); CI's MPI step runs it"]
fn recorded_trace_matches_what_the_program_sent() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tirecord");
    let _ = std::fs::remove_dir_all(&dir);
    let built = build(&dir.join("bin")).unwrap();
    let trace = dir.join("trace");
    let expected = dir.join("expected");
    std::fs::create_dir_all(&expected).unwrap();
    let cmd: Vec<String> = [
        "mpirun",
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &RANKS.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        built.exchange.display().to_string(),
        expected.display().to_string(),
    ])
    .collect();
    let status = record(&built.library, &trace, FLOPS, &cmd).unwrap();
    assert!(status.success(), "{cmd:?}: {status}");

    // What the program says it sent.
    let mut p2p = BTreeMap::new();
    let mut a2av = BTreeMap::new();
    let mut busy = [0.0; RANKS];
    for (r, busy) in busy.iter_mut().enumerate() {
        let text = std::fs::read_to_string(expected.join(format!("expected{r}.txt"))).unwrap();
        for l in text.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            match f[0] {
                "p2p" => {
                    p2p.insert((n(1) as usize, n(2) as usize), (n(3), n(4)));
                }
                "alltoallv" => {
                    a2av.insert((n(1) as usize, n(2) as usize), n(3));
                }
                "computed" => *busy = f[1].parse::<f64>().unwrap(),
                _ => panic!("{l}"),
            }
        }
    }
    // Every rank sends to both neighbours and the one two places on: 3 destinations.
    assert_eq!(p2p.len(), RANKS * 3);

    let c = read_trace(&trace).unwrap();
    assert_eq!(c.ranks, RANKS);
    assert_eq!(c.sent, p2p, "point-to-point as the senders recorded it");
    assert_eq!(
        c.received, p2p,
        "point-to-point as the receivers recorded it"
    );
    assert_eq!(c.alltoallv, a2av);
    let count = |a: &str| c.actions.get(a).copied().unwrap_or(0);
    for once in [
        "init",
        "finalize",
        "bcast",
        "allreduce",
        "alltoallv",
        "sendrecv",
        "barrier",
    ] {
        assert_eq!(count(once), RANKS as u64, "{once}");
    }
    // Three requests sent and three received per rank, each waited for once.
    assert_eq!(count("isend") + count("irecv"), 6 * RANKS as u64);
    assert_eq!(count("wait"), 6 * RANKS as u64);
    // The busy phases are compute at the stated rate (MPI time between them only adds).
    for (r, (&flops, &busy)) in c.compute.iter().zip(&busy).enumerate() {
        assert!(
            flops >= busy * FLOPS,
            "rank {r}: {flops} flops recorded, {busy} s busy"
        );
    }
}
