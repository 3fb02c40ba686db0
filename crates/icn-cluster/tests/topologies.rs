//! Issue 21, item 5: any topology on any fabric, rank placement, and the static deadlock
//! check of the cluster's fabrics before the run.

use icn_cluster::model::{
    Cluster, ClusterConfig, FabricConfig, FabricKind, WorkloadKind, run_point,
};
use icn_cluster::nic::NicKind;
use icn_cluster::placement::{PlacementConfig, PlacementKind};
use icn_engine::model::NoProgress;
use icn_engine::{Context, Model};

fn config(kind: FabricKind, topology: &str, workload: WorkloadKind, bytes: u64) -> ClusterConfig {
    let mut fabric = FabricConfig::of_kind(kind);
    *fabric.topology_mut() = topology.into();
    let mut cfg = ClusterConfig {
        fabric,
        ..ClusterConfig::default()
    };
    cfg.nic.kind = NicKind::Zero;
    cfg.workload.kind = workload;
    cfg.workload.bytes = bytes;
    cfg
}

/// An all-to-all over every endpoint of each network spelling of the VC routers, and a
/// single crossbar, on the ideal, X-Switch and VC-router fabrics: every one of the
/// n·(n − 1) messages is delivered with its bytes. (The X-Switch takes the networks whose
/// routers have at most 5 ports and whose source routes cannot deadlock: its BFS routes
/// round a CCC's cycles are refused by the deadlock check.)
#[test]
fn every_fabric_takes_the_vc_routers_spellings_and_a_crossbar() {
    let everywhere = [
        ("crossbar:4", 4),
        ("fattree:2,3", 8),
        ("hypercube:3", 8),
        ("mesh:3x3,1", 9),
    ];
    let wide = [
        ("crossbar:12", 12),
        ("torus:3x3x3", 27),
        ("mesh:3x3,2", 18),
        ("dragonfly:1,2,2", 10),
        ("flatfly:3x3", 9),
        ("graph:ccc:3,3", 24),
    ];
    for kind in [FabricKind::Ideal, FabricKind::Xswitch, FabricKind::VcRouter] {
        let extra: &[(&str, u64)] = if kind == FabricKind::Xswitch {
            &[]
        } else {
            &wide
        };
        for &(topology, n) in everywhere.iter().chain(extra) {
            let cfg = config(kind, topology, WorkloadKind::Alltoall, 300);
            let point = Cluster::prepare(&cfg, &Context::default())
                .unwrap_or_else(|e| panic!("{kind:?} {topology}: {e}"));
            let (o, _) = run_point(&point, &NoProgress)
                .unwrap_or_else(|e| panic!("{kind:?} {topology}: {e}"));
            assert_eq!(o.messages, n * (n - 1), "{kind:?} {topology}");
            assert_eq!(o.bytes, 300 * n * (n - 1), "{kind:?} {topology}");
        }
    }
    let e = Cluster::validate(&config(
        FabricKind::Xswitch,
        "crossbar:6",
        WorkloadKind::Pingpong,
        8,
    ))
    .unwrap_err();
    assert_eq!(e.key, "fabric.topology");
    assert!(e.message.contains("an X-Switch has 5"), "{}", e.message);
    let e = Cluster::validate(&config(
        FabricKind::Xswitch,
        "graph:ccc:3,3",
        WorkloadKind::Alltoall,
        300,
    ))
    .unwrap_err();
    assert!(e.message.contains("can deadlock"), "{}", e.message);
}

/// One message on a 4-node ideal path with the two ranks at its ends (a placement file)
/// crosses 3 hops instead of 1: it takes exactly 2 × 550 ns longer.
#[test]
fn a_placement_file_puts_ranks_where_it_says() {
    let dir = tempfile_dir();
    let trace = dir.join("one.trace");
    std::fs::write(&trace, "# ranks 2\n0 send 1 8 0\n1 recv 0 8 0\n").unwrap();
    let mut linear = config(FabricKind::Ideal, "path:4", WorkloadKind::Trace, 8);
    linear.workload.file = trace.display().to_string();
    let file = dir.join("ends.txt");
    std::fs::write(&file, "# rank 0 and rank 1 at the two ends\n0\n3\n").unwrap();
    let mut ends = linear.clone();
    ends.placement = PlacementConfig {
        kind: PlacementKind::File,
        file: file.display().to_string(),
        ..PlacementConfig::default()
    };
    let run = |cfg: &ClusterConfig| {
        run_point(
            &Cluster::prepare(cfg, &Context::default()).unwrap(),
            &NoProgress,
        )
        .unwrap()
        .0
    };
    let (near, far) = (run(&linear), run(&ends));
    assert_eq!((near.messages, far.messages), (1, 1));
    assert_eq!(far.message_ps, near.message_ps + 2 * 550_000);
    std::fs::remove_dir_all(&dir).ok();
}

/// Random placement spreads 8 ranks over a 4×4 mesh of VC routers: the same messages and
/// bytes as linear placement, and the same metrics for the same seed.
#[test]
fn random_placement_keeps_every_message_and_is_seeded() {
    let mut cfg = config(
        FabricKind::VcRouter,
        "mesh:4x4",
        WorkloadKind::Alltoall,
        700,
    );
    cfg.workload.ranks = 8;
    let linear = Cluster::run(&cfg, 1, &NoProgress).unwrap();
    cfg.placement = PlacementConfig {
        kind: PlacementKind::Random,
        seed: 3,
        ..PlacementConfig::default()
    };
    let random = Cluster::run(&cfg, 1, &NoProgress).unwrap();
    for m in ["messages", "bytes", "packets"] {
        assert_eq!(
            random.require(m).unwrap(),
            linear.require(m).unwrap(),
            "{m}"
        );
    }
    assert_eq!(random.require("messages").unwrap(), 56.0);
    let again = Cluster::run(&cfg, 1, &NoProgress).unwrap();
    assert_eq!(again.fingerprint(), random.fingerprint());
}

/// Issue 21, item 5: an all-to-all of 64 KiB messages on a source-routed X-Switch ring
/// deadlocked only after the 1 M-cycle watchdog. Now the check before the run refuses it,
/// naming the key and the cycle; neighbours only (a pingpong) have no cycle and run, and
/// `allow_deadlock` lets the all-to-all through to the watchdog.
#[test]
fn an_x_switch_ring_all_to_all_is_refused_before_it_runs() {
    let mut cfg = config(
        FabricKind::Xswitch,
        "ring:8",
        WorkloadKind::Alltoall,
        65_536,
    );
    let e = Cluster::validate(&cfg).unwrap_err();
    assert_eq!(e.key, "fabric.topology");
    assert!(e.message.contains("can deadlock"), "{}", e.message);
    assert!(
        e.message
            .contains("s0.A → s1.A → s2.A → s3.A → s4.A → s5.A → s6.A → s7.A"),
        "{}",
        e.message
    );
    if let FabricConfig::Xswitch(x) = &mut cfg.fabric {
        x.allow_deadlock = true;
    }
    Cluster::validate(&cfg).unwrap();
    let ping = config(
        FabricKind::Xswitch,
        "ring:8",
        WorkloadKind::Pingpong,
        65_536,
    );
    let m = Cluster::run(&ping, 1, &NoProgress).unwrap();
    assert_eq!(m.require("messages").unwrap(), 20.0);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("icn-topologies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
