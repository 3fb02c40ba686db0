//! The partitioned X-Switch network gives the sequential network's run bit for bit: the same
//! observer events in the same order, the same counters and the same end (including a
//! deadlock found in the same cycle with the same diagnosis), at 1, 2, 3 and 4 threads.

use super::par::ParXNet;
use super::*;
use crate::xswitch_model::{OnDeadlock, XSwitch, XSwitchConfig};
use crate::xswitch_net::XSwitchNetConfig;
use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_engine::rng::{Rng, stream};

/// Every observer event, in the order the observer saw it.
#[derive(Debug, PartialEq, Default)]
struct Events(Vec<(u64, bool, usize, u32, u32)>);

impl Observer for Events {
    fn started(&mut self, now: u64, src: usize, f: &Started) {
        self.0.push((now, false, src, f.seq, f.bytes));
    }
    fn delivered(&mut self, now: u64, dst: usize, f: &Delivered) {
        self.0.push((now, true, dst, f.seq, f.bytes));
    }
}

/// What a run leaves behind: events, counters (busy per channel included), end and cycle.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Events,
    stops: u64,
    gos: u64,
    wait_cycles: u64,
    busy: Vec<u64>,
    cycles: u64,
    end: Result<(), String>,
    now: u64,
}

/// The two drivers behind one interface (one of them per test run: size does not matter).
#[allow(clippy::large_enum_variant)]
enum Net {
    Seq(XNet),
    Par(ParXNet),
}

impl Net {
    fn now(&self) -> u64 {
        match self {
            Net::Seq(n) => n.now,
            Net::Par(n) => n.now,
        }
    }
    fn submit(&mut self, src: usize, dst: usize, size: u32) {
        match self {
            Net::Seq(n) => n.nias[src].submit(dst, size, n.now),
            Net::Par(n) => n.submit(src, dst, size),
        }
    }
    fn step(&mut self, e: &mut Events) -> Result<(), ModelError> {
        match self {
            Net::Seq(n) => n.step(e),
            Net::Par(n) => n.step(e),
        }
    }
    fn counters(&self) -> Counters {
        match self {
            Net::Seq(n) => n.counters.clone(),
            Net::Par(n) => n.counters(),
        }
    }
}

/// `msgs` = (cycle, source, destination, bytes), sorted by cycle; runs `cycles` cycles or
/// until an error, measuring from cycle 100 (so the counters cover part of the run).
fn run(
    spec: &str,
    p: &NetParams,
    threads: usize,
    msgs: &[(u64, usize, usize, u32)],
    cycles: u64,
) -> Outcome {
    let topo = Topology::from_spec(spec).unwrap();
    let mut net = if threads == 0 {
        Net::Seq(XNet::new(topo, p.clone()).unwrap())
    } else {
        Net::Par(ParXNet::new(topo, p.clone(), threads).unwrap())
    };
    let mut events = Events::default();
    let mut next = 0;
    let mut end = Ok(());
    while net.now() < cycles {
        if net.now() == 100 {
            match &mut net {
                Net::Seq(n) => n.measuring = true,
                Net::Par(n) => n.set_measuring(true),
            }
        }
        while next < msgs.len() && msgs[next].0 <= net.now() {
            let (_, s, t, size) = msgs[next];
            net.submit(s, t, size);
            next += 1;
        }
        if let Err(e) = net.step(&mut events) {
            end = Err(e.to_string());
            break;
        }
    }
    let c = net.counters();
    Outcome {
        events,
        stops: c.stops,
        gos: c.gos,
        wait_cycles: c.wait_cycles,
        busy: c.busy,
        cycles: c.cycles,
        end,
        now: net.now(),
    }
}

fn uniform(
    nodes: usize,
    rate: f64,
    size: u32,
    cycles: u64,
    seed: u64,
) -> Vec<(u64, usize, usize, u32)> {
    let mut rng = stream(seed, 0);
    let mut msgs = Vec::new();
    for t in 0..cycles {
        for s in 0..nodes {
            if rng.random::<f64>() < rate {
                msgs.push((t, s, rng.random_range(0..nodes), size));
            }
        }
    }
    msgs
}

fn params() -> NetParams {
    NetParams {
        link_delay: 2,
        fifo_size: 16,
        stop_threshold: 13,
        go_threshold: 4,
        frame_size: 32,
        check: Check::Crc16,
        dma_delay: 3,
        watchdog: 2_000,
        watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
    }
}

/// Sequential vs 1, 2, 3 and 4 partitions; returns the sequential outcome.
fn same_at_any_thread_count(
    spec: &str,
    p: &NetParams,
    msgs: &[(u64, usize, usize, u32)],
    cycles: u64,
) -> Outcome {
    let seq = run(spec, p, 0, msgs, cycles);
    for threads in 1..=4 {
        let par = run(spec, p, threads, msgs, cycles);
        assert!(
            par == seq,
            "{spec}: {threads} threads differ from the sequential run"
        );
    }
    seq
}

/// A 5×5 mesh (25 switches: partitions of 6 and 7 switches cut rows in the middle) near
/// saturation with STOP/GO at work, link delay 2: the same run at any thread count.
#[test]
fn mesh_same_events_and_counters_at_any_thread_count() {
    let msgs = uniform(25, 0.004, 100, 3_000, 3);
    let seq = same_at_any_thread_count("mesh:5x5", &params(), &msgs, 4_000);
    // The run is not trivial: frames crossed partitions, flow control was used.
    assert_eq!(seq.end, Ok(()));
    let delivered = seq.events.0.iter().filter(|e| e.1).count();
    assert!(delivered > 500, "{delivered} frames delivered");
    assert!(
        seq.stops > 0 && seq.gos > 0,
        "STOP/GO used: {} {}",
        seq.stops,
        seq.gos
    );
}

/// Link delay 1 (the smallest lookahead) on a 4×4 torus with wrap-around links between the
/// first and the last partition.
#[test]
fn torus_with_link_delay_one_is_the_same_at_any_thread_count() {
    let mut p = params();
    p.link_delay = 1;
    p.stop_threshold = 12;
    let msgs = uniform(16, 0.003, 64, 2_000, 9);
    let seq = same_at_any_thread_count("torus:4x4", &p, &msgs, 3_000);
    assert!(seq.events.0.iter().any(|e| e.1));
}

/// A ring whose every node sends a long message two hops clockwise deadlocks: every thread
/// count finds it in the same cycle with the same wait-for diagnosis.
#[test]
fn deadlock_found_in_the_same_cycle_with_the_same_diagnosis() {
    let mut p = params();
    p.frame_size = 4096;
    let msgs: Vec<_> = (0..4).map(|s| (0, s, (s + 2) % 4, 4096)).collect();
    let seq = same_at_any_thread_count("ring:4", &p, &msgs, 50_000);
    let err = seq.end.unwrap_err();
    assert!(
        err.contains("Wait-for cycle") && err.contains("has stopped"),
        "{err}"
    );
}

/// The model: `threads = 1, 2, 3, 4` give equal metrics (tables and the grant log included)
/// on a mesh and on a torus.
#[test]
fn model_metrics_are_the_same_at_any_thread_count() {
    for (topology, trace_port) in [("mesh:4x4", "s5.A"), ("torus:4x4", "s10.C")] {
        let cfg = XSwitchConfig {
            net: XSwitchNetConfig::on(topology),
            load: 0.2,
            size: 128,
            warmup: 500,
            measure: 2_000,
            trace_port: trace_port.into(),
            ..XSwitchConfig::default()
        };
        let one = XSwitch::run(&cfg, 5, &NoProgress).unwrap();
        assert!(one.require("accepted").unwrap() > 0.1, "{topology}");
        assert!(!one.table("grants").unwrap().rows.is_empty());
        for threads in 2..=4 {
            let mut at = cfg.clone();
            at.net.threads = threads;
            let got = XSwitch::run(&at, 5, &NoProgress).unwrap();
            assert!(got == one, "{topology}: {threads} threads");
        }
    }
}

/// A 4×4 torus whose first row sends long messages two hops in +x (the ring deadlock in one
/// dimension, around the wrap-around link), plus background traffic elsewhere, with
/// `on_deadlock = "report"`: the same metrics (deadlocked = 1, the same diagnosis note) at any
/// thread count, and with `error` the same error.
#[test]
fn deadlocking_torus_reports_the_same_at_any_thread_count() {
    let path = std::env::temp_dir().join(format!("xpar-torus-{}.txt", std::process::id()));
    let mut trace = String::from("0 0 2 4096\n0 1 3 4096\n0 2 0 4096\n0 3 1 4096\n");
    for s in 4..16 {
        trace.push_str(&format!("{} {s} {} 300\n", s * 7, (s * 5) % 16));
    }
    std::fs::write(&path, trace).unwrap();
    let mut cfg = XSwitchConfig {
        net: XSwitchNetConfig::on("torus:4x4"),
        warmup: 0,
        measure: 10_000,
        on_deadlock: OnDeadlock::Report,
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
    let one = XSwitch::run(&cfg, 1, &NoProgress).unwrap();
    assert_eq!(one.require("deadlocked").unwrap(), 1.0);
    assert!(
        one.notes.iter().any(|n| n.contains("Wait-for cycle")),
        "{:?}",
        one.notes
    );
    cfg.on_deadlock = OnDeadlock::Error;
    let err = XSwitch::run(&cfg, 1, &NoProgress).unwrap_err().to_string();
    for threads in 2..=4 {
        let mut par = XSwitchConfig {
            on_deadlock: OnDeadlock::Report,
            ..cfg.clone()
        };
        par.net.threads = threads;
        let got = XSwitch::run(&par, 1, &NoProgress).unwrap();
        // Compared as text: a deadlocked run's empty latency statistics are NaN (≠ NaN).
        assert_eq!(format!("{got:?}"), format!("{one:?}"), "{threads} threads");
        let mut par = cfg.clone();
        par.net.threads = threads;
        let got = XSwitch::run(&par, 1, &NoProgress).unwrap_err().to_string();
        assert_eq!(got, err, "{threads} threads");
    }
    std::fs::remove_file(path).ok();
}

#[test]
fn thread_counts_are_checked() {
    let bad = |topology: &str, threads| {
        let cfg = XSwitchConfig {
            net: XSwitchNetConfig {
                threads,
                ..XSwitchNetConfig::on(topology)
            },
            ..XSwitchConfig::default()
        };
        XSwitch::validate(&cfg).err().map(|e| e.key)
    };
    assert_eq!(bad("star", 2).as_deref(), Some("threads"), "one switch");
    assert_eq!(bad("mesh:2x2", 5).as_deref(), Some("threads"));
    assert_eq!(bad("mesh:2x2", 4), None);
    assert_eq!(bad("mesh:8x8", 1025).as_deref(), Some("threads"));
    let topo = Topology::from_spec("mesh:2x2").unwrap();
    assert!(ParXNet::new(topo, params(), 5).is_err());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const TOPOLOGIES: [&str; 6] = [
        "mesh:3x2",
        "mesh:3x3",
        "tree:2",
        "ring:5",
        "torus:3x3",
        "mesh:4x2",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Random small topologies, legal parameters and message mixes: every thread count
        /// up to the switch count gives the sequential run (events, counters, end).
        #[test]
        fn any_partitioning_gives_the_sequential_run(
            topo in 0..TOPOLOGIES.len(),
            d in 1usize..=3,
            fifo in 8usize..=24,
            frame_size in 1u32..=40,
            threads in 1usize..=4,
            msgs in proptest::collection::vec((0u64..300, 0usize..9, 0usize..9, 1u32..=80), 1..30),
        ) {
            let spec = TOPOLOGIES[topo];
            let t = Topology::from_spec(spec).unwrap();
            let (n, switches) = (t.nias(), t.switches);
            let stop = fifo - (2 * d - 1);
            let p = NetParams {
                link_delay: d,
                fifo_size: fifo,
                stop_threshold: stop,
                go_threshold: stop / 2,
                frame_size,
                check: Check::Crc16,
                dma_delay: 2,
                watchdog: 500,
                watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
            };
            let mut msgs: Vec<_> = msgs.into_iter().map(|(c, s, t, b)| (c, s % n, t % n, b)).collect();
            msgs.sort_by_key(|m| m.0);
            let seq = run(spec, &p, 0, &msgs, 1_500);
            let par = run(spec, &p, threads.min(switches), &msgs, 1_500);
            prop_assert!(par == seq, "{} on {} threads", spec, threads);
        }
    }
}
