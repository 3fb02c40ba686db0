//! Issue 15, item 2(b): one network spread over ranks (here threads standing for MPI ranks,
//! `icn_engine::lockstep::ThreadRanks`) gives, on every rank, the metrics of the one-process sequential run bit for
//! bit (every scalar, every table, the status): `vc-router` on a mesh, a torus, a fat tree and
//! a dragonfly, `xswitch` on a mesh, a torus, a tree, a fat tree and a dragonfly, with one and two threads per rank, a
//! point past saturation and deadlocks included. `icnlab`'s `mpi_cli` test does the same over
//! real MPI ranks.

use icn_engine::model::{ModelError, NoProgress, run_on_thread_ranks};
use icn_engine::{Metrics, Model};
use icn_thnet::vc_model::{VcRouter, VcRouterConfig};
use icn_thnet::xswitch_model::{OnDeadlock as XOnDeadlock, XSwitch, XSwitchConfig};
use icn_thnet::xswitch_net::XSwitchNetConfig;

mod common;
use common::short_vc_run;

/// The one-process sequential run, and the same on 2 and 3 ranks (threads as set in `with`).
fn same_on_every_rank<M: Model>(
    cfg: M::Config,
    with_threads: impl Fn(&M::Config, usize) -> M::Config,
    what: &str,
) -> Metrics
where
    M::Config: 'static,
{
    let one = M::run(&with_threads(&cfg, 1), 7, &NoProgress).unwrap();
    for (ranks, threads) in [(2, 1), (2, 2), (3, 1)] {
        let c = with_threads(&cfg, threads);
        for (r, got) in run_on_thread_ranks::<M>(&c, ranks, 7).iter().enumerate() {
            assert_eq!(
                got.as_ref().unwrap().fingerprint(),
                one.fingerprint(),
                "{what}: rank {r} of {ranks} at {threads} threads per rank"
            );
        }
    }
    one
}

fn vc_same(c: VcRouterConfig) -> Metrics {
    let what = format!("vc-router {} ({})", c.net.topology, c.net.routing);
    same_on_every_rank::<VcRouter>(
        c,
        |c, threads| {
            let mut c = c.clone();
            c.net.threads = threads;
            c
        },
        &what,
    )
}

#[test]
fn vc_mesh_and_torus_are_bit_identical_over_ranks() {
    let m = vc_same(short_vc_run("mesh:6x6", "", 2, 0.2));
    assert!(m.require("accepted").unwrap() > 0.1);
    // Past saturation: unfinished packets.
    let m = vc_same(short_vc_run("mesh:6x6", "", 2, 0.9));
    assert!(m.require("unfinished").unwrap() > 0.0);
    vc_same(short_vc_run("torus:5x4", "", 4, 0.3));
    // A 3-D torus on the router of any radix.
    vc_same(short_vc_run("torus:4x3x3", "dor", 2, 0.2));
}

#[test]
fn vc_fat_tree_and_dragonfly_are_bit_identical_over_ranks() {
    vc_same(short_vc_run("fattree:4,3", "updown_random", 2, 0.3));
    for routing in ["minimal", "ugal"] {
        let vcs = if routing == "minimal" { 2 } else { 3 };
        let mut c = short_vc_run("dragonfly:2", routing, vcs, 0.3);
        c.net.global_delay = 5;
        vc_same(c);
    }
}

#[test]
fn a_deadlocking_vc_torus_deadlocks_identically_over_ranks() {
    let mut c = VcRouterConfig {
        warmup: 500,
        measure: 3_000,
        drain: 20_000,
        ..short_vc_run("torus:4x4", "dor", 1, 0.4)
    };
    c.net.allow_deadlock = true;
    c.net.router.watchdog = 1_000;
    // icnlab's `dor` on the fast path, and BookSim2's `dim_order` (random ties) on the router
    // of any radix, whose draws once came in the order flits landed — which differs over
    // ranks — and gave sources 5 and 6 each other's latencies on 3 ranks.
    for (routing, load) in [("dor", 0.4), ("dim_order", 0.6)] {
        let mut c = VcRouterConfig { load, ..c.clone() };
        c.net.routing = routing.into();
        let m = vc_same(c);
        assert_eq!(m.require("deadlocked").unwrap(), 1.0, "{routing}");
    }
}

fn x(topology: &str, load: f64) -> XSwitchConfig {
    XSwitchConfig {
        net: XSwitchNetConfig::on(topology),
        load,
        warmup: 300,
        measure: 1_500,
        drain: 3_000,
        ..XSwitchConfig::default()
    }
}

fn x_same(c: XSwitchConfig) -> Metrics {
    let what = format!("xswitch {}", c.net.topology);
    same_on_every_rank::<XSwitch>(
        c,
        |c, threads| {
            let mut c = c.clone();
            c.net.threads = threads;
            c
        },
        &what,
    )
}

#[test]
fn xswitch_mesh_torus_tree_fat_tree_and_dragonfly_are_bit_identical_over_ranks() {
    let m = x_same(x("mesh:3x3", 0.2));
    assert!(m.require("accepted").unwrap() > 0.0);
    // Stop/go counters, wait fraction and a grant log: collective queries over the ranks.
    let c = XSwitchConfig {
        trace_port: "s4.A".into(),
        ..x("torus:3x3", 0.4)
    };
    let m = x_same(c);
    assert!(m.table("grants").is_some_and(|t| !t.rows.is_empty()));
    x_same(x("tree:2", 0.3));
    // The large-cluster families that fit 5-port switches.
    x_same(x("fattree:2,3", 0.3));
    x_same(x("dragonfly:1,2,1", 0.2));
}

/// More partitions than switches over all ranks: refused when the point is prepared, on
/// every rank alike (each sees the same ranks and threads), naming `threads`.
#[test]
fn partitions_beyond_the_switches_are_refused_on_every_rank() {
    let mut c = x("mesh:2x2", 0.2);
    c.net.threads = 3;
    for got in run_on_thread_ranks::<XSwitch>(&c, 2, 7) {
        let Err(ModelError::Invalid(e)) = got else {
            panic!("refused when prepared: {got:?}");
        };
        assert_eq!(e.key, "threads", "{}", e.message);
        assert!(e.message.contains("2 ranks"), "{}", e.message);
    }
}

/// The X-Switch ring deadlock of `xswitch/par_tests.rs` on a 4×4 torus: with `report`, the same
/// metrics and wait-for diagnosis on every rank (assembled from every rank's switches); with
/// `error`, the same error on every rank.
#[test]
fn a_deadlocking_xswitch_torus_deadlocks_identically_over_ranks() {
    let path = std::env::temp_dir().join(format!("xspread-torus-{}.txt", std::process::id()));
    let mut trace = String::from("0 0 2 4096\n0 1 3 4096\n0 2 0 4096\n0 3 1 4096\n");
    for s in 4..16 {
        trace.push_str(&format!("{} {s} {} 300\n", s * 7, (s * 5) % 16));
    }
    std::fs::write(&path, trace).unwrap();
    let mut cfg = XSwitchConfig {
        net: XSwitchNetConfig::on("torus:4x4"),
        warmup: 0,
        measure: 10_000,
        on_deadlock: XOnDeadlock::Report,
        ..XSwitchConfig::default()
    };
    let sw = &mut cfg.net.switch;
    (
        sw.frame_size,
        sw.fifo_size,
        sw.stop_threshold,
        sw.go_threshold,
    ) = (4096, 16, 12, 4);
    sw.watchdog = 1_000;
    cfg.traffic.pattern = icn_fabric::traffic::TrafficPattern::Trace;
    cfg.traffic.trace_file = path.display().to_string();
    let m = x_same(cfg.clone());
    assert_eq!(m.require("deadlocked").unwrap(), 1.0);
    assert!(m.notes.iter().any(|n| n.contains("Wait-for cycle")));
    cfg.on_deadlock = XOnDeadlock::Error;
    let err = XSwitch::run(&cfg, 7, &NoProgress).unwrap_err().to_string();
    cfg.net.threads = 2;
    for got in run_on_thread_ranks::<XSwitch>(&cfg, 2, 7) {
        assert_eq!(got.unwrap_err().to_string(), err);
    }
    std::fs::remove_file(path).ok();
}
