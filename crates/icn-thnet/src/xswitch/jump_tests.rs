//! The fast path ([`super::jump`]) equals stepping: the same frames start and arrive at the
//! same cycles with the same contents, and every counter is the same, on random networks
//! and workloads; a jump one symbol off is caught.

use super::*;
use crate::nia::{Delivered, Started};
use icn_engine::rng::{Rng, stream};
use proptest::prelude::*;

#[derive(Default, PartialEq, Debug)]
struct Log {
    started: Vec<(u64, usize, Started)>,
    delivered: Vec<(u64, usize, Delivered)>,
}

impl Observer for Log {
    fn started(&mut self, now: u64, src: usize, f: &Started) {
        self.started.push((now, src, *f));
    }
    fn delivered(&mut self, now: u64, dst: usize, f: &Delivered) {
        self.delivered.push((now, dst, *f));
    }
}

/// What a run shows: its events, its counters (read every 97 cycles and at the end), the
/// largest FIFO fill of every cycle, and how it ended.
#[derive(PartialEq, Debug)]
struct Outcome {
    log: Log,
    counters: Vec<String>,
    fills: Vec<usize>,
    end: Result<u64, String>,
}

#[derive(Clone, Debug)]
struct Workload {
    topo: &'static str,
    p: NetParams,
    /// (cycle, src, dst, bytes)
    messages: Vec<(u64, usize, usize, u32)>,
    measure_from: u64,
    measure_to: u64,
    cycles: u64,
}

/// Runs `w` stepping (`fast` off) or with the fast path, `skew` symbols off per thaw.
fn run(w: &Workload, fast: bool, skew: usize) -> (Outcome, u64) {
    let mut net = XNet::new(Topology::from_spec(w.topo).unwrap(), w.p.clone()).unwrap();
    net.set_fast_path(fast);
    net.jump.skew = skew;
    let mut log = Log::default();
    let mut counters = Vec::new();
    let mut fills = Vec::new();
    let mut next = 0;
    let mut end = Ok(0);
    while net.now < w.cycles {
        while next < w.messages.len() && w.messages[next].0 <= net.now {
            let (_, s, d, b) = w.messages[next];
            net.nias[s].submit(d, b, net.now);
            next += 1;
        }
        net.measuring = (w.measure_from..w.measure_to).contains(&net.now);
        if let Err(e) = net.step(&mut log) {
            end = Err(format!("{e}"));
            break;
        }
        fills.push(net.max_fill());
        if net.now % 97 == 0 {
            counters.push(format!("{:?}", net.counters_now()));
        }
    }
    if end.is_ok() {
        end = Ok(net.now);
    }
    counters.push(format!("{:?}", net.counters_now()));
    let jumped = net.jump.jumped;
    (
        Outcome {
            log,
            counters,
            fills,
            end,
        },
        jumped,
    )
}

/// Where two outcomes first differ (a short message instead of two long dumps).
fn first_difference(a: &Outcome, b: &Outcome) -> Option<String> {
    fn first<T: PartialEq + std::fmt::Debug>(what: &str, a: &[T], b: &[T]) -> Option<String> {
        let k = a.iter().zip(b).position(|(x, y)| x != y);
        match k {
            Some(k) => Some(format!(
                "{what}[{k}]: stepped {:?}, jumped {:?}",
                a[k], b[k]
            )),
            None if a.len() != b.len() => Some(format!(
                "{what}: stepped {} entries, jumped {}",
                a.len(),
                b.len()
            )),
            None => None,
        }
    }
    (a.end != b.end)
        .then(|| format!("end: stepped {:?}, jumped {:?}", a.end, b.end))
        .or_else(|| first("started", &a.log.started, &b.log.started))
        .or_else(|| first("delivered", &a.log.delivered, &b.log.delivered))
        .or_else(|| first("counters", &a.counters, &b.counters))
        .or_else(|| first("max fill per cycle", &a.fills, &b.fills))
}

/// Every source sends long messages to random others: streams, contention, STOP and GO.
fn busy_workload(seed: u64, topo: &'static str, nias: usize, p: NetParams) -> Workload {
    let mut rng = stream(seed, 0);
    let mut messages = Vec::new();
    for s in 0..nias {
        let mut t = rng.random_range(0..50u64);
        for _ in 0..4 {
            let d = (s + rng.random_range(1..nias)) % nias;
            messages.push((t, s, d, rng.random_range(1..=3 * p.frame_size)));
            t += rng.random_range(0..400u64);
        }
    }
    messages.sort_by_key(|m| m.0);
    Workload {
        topo,
        p,
        messages,
        measure_from: 100,
        measure_to: 2_500,
        cycles: 4_000,
    }
}

fn thnpc_like() -> NetParams {
    NetParams {
        frame_size: 256,
        dma_delay: 0,
        ..NetParams::default()
    }
}

#[test]
fn jumping_equals_stepping_on_a_loaded_mesh() {
    let w = busy_workload(7, "mesh:4x2", 8, thnpc_like());
    let (stepped, none) = run(&w, false, 0);
    let (jumped, saved) = run(&w, true, 0);
    assert_eq!(none, 0, "stepping jumps nothing");
    assert!(
        saved > 5_000,
        "the fast path froze streams for only {saved} stream-cycles"
    );
    assert!(stepped.log.delivered.len() > 20);
    assert_eq!(first_difference(&stepped, &jumped), None);
}

#[test]
fn a_jump_one_symbol_off_fails_the_comparison() {
    let w = busy_workload(7, "mesh:4x2", 8, thnpc_like());
    let (stepped, _) = run(&w, false, 0);
    let (wrong, _) = run(&w, true, 1);
    let caught = first_difference(&stepped, &wrong);
    assert!(caught.is_some(), "a wrong jump must be caught");
}

fn params_strategy() -> impl Strategy<Value = NetParams> {
    (1usize..=3, 0usize..=6, 1u32..=80, 0u64..=4, 0usize..=3).prop_map(
        |(d, extra, frame_size, dma_delay, go)| {
            let stop_threshold = 4 + extra + go;
            NetParams {
                link_delay: d,
                fifo_size: stop_threshold + 2 * d - 1 + extra % 2,
                stop_threshold,
                go_threshold: go,
                frame_size,
                dma_delay,
                ..NetParams::default()
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Random link delays, FIFO thresholds and frame sizes; random long messages on small
    /// meshes (a torus can deadlock: then both runs must fail alike).
    #[test]
    fn jumping_equals_stepping_on_random_workloads(
        p in params_strategy(),
        seed in 0u64..1_000,
        which in 0usize..4,
    ) {
        let (topo, nias) = [("mesh:3x3", 9), ("mesh:4x2", 8), ("mesh:2x2", 4), ("torus:3x2", 6)][which];
        let mut w = busy_workload(seed, topo, nias, p);
        w.cycles = 3_000;
        let (stepped, _) = run(&w, false, 0);
        let (jumped, _) = run(&w, true, 0);
        let diff = first_difference(&stepped, &jumped);
        prop_assert!(diff.is_none(), "{}", diff.unwrap_or_default());
    }
}

/// Uniform traffic near saturation, messages to oneself included (they turn round in the
/// first switch).
#[test]
fn jumping_equals_stepping_with_uniform_traffic_and_self_sends() {
    let mut rng = stream(3, 0);
    let mut messages = Vec::new();
    for t in 0..3_000 {
        for s in 0..25 {
            if rng.random::<f64>() < 0.004 {
                messages.push((t, s, rng.random_range(0..25), 100));
            }
        }
    }
    let w = Workload {
        topo: "mesh:5x5",
        p: NetParams {
            link_delay: 2,
            fifo_size: 16,
            stop_threshold: 13,
            go_threshold: 4,
            frame_size: 32,
            dma_delay: 3,
            watchdog: 2_000,
            ..NetParams::default()
        },
        messages,
        measure_from: 100,
        measure_to: u64::MAX,
        cycles: 4_000,
    };
    let (stepped, _) = run(&w, false, 0);
    let (jumped, saved) = run(&w, true, 0);
    assert!(saved > 1_000, "{saved}");
    assert_eq!(first_difference(&stepped, &jumped), None);
}
