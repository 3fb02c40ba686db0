//! Network-level tests of the X-Switch simulator: the "must show" items.

use super::*;
use icn_engine::rng::{Rng, stream};

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

#[derive(Default)]
struct Log {
    started: u64,
    delivered: Vec<(u64, usize, Delivered)>,
}

impl Observer for Log {
    fn started(&mut self, _now: u64, _src: usize, _f: &Started) {
        self.started += 1;
    }
    fn delivered(&mut self, now: u64, dst: usize, f: &Delivered) {
        self.delivered.push((now, dst, *f));
    }
}

/// Runs until every submitted message is delivered (or `limit` cycles).
fn drain(net: &mut XNet, log: &mut Log, limit: u64) -> Result<(), ModelError> {
    let end = net.now + limit;
    while net.now < end {
        if net.in_flight() == 0 && net.nias.iter().all(|n| n.backlog() == 0 && !n.mid_frame()) {
            return Ok(());
        }
        net.step(log)?;
    }
    panic!("not drained within {limit} cycles");
}

#[test]
fn conservation_and_order_on_a_mesh_with_tight_fifos() {
    let mut p = params();
    p.fifo_size = 8;
    p.stop_threshold = 5;
    p.go_threshold = 1;
    p.frame_size = 24;
    let mut net = XNet::new(Topology::from_spec("mesh:4x4").unwrap(), p).unwrap();
    net.measuring = true;
    let mut log = Log::default();
    let mut rng = stream(11, 0);
    let mut payload = 0u64;
    for _ in 0..3_000 {
        for s in 0..16 {
            if rng.random::<f64>() < 0.01 {
                let size = rng.random_range(1..100u32);
                payload += u64::from(size);
                net.nias[s].submit(rng.random_range(0..16), size, net.now);
            }
        }
        net.step(&mut log).unwrap();
    }
    drain(&mut net, &mut log, 200_000).unwrap();
    // Every frame started was accepted exactly once (the NIAs check order, CRC and
    // duplicates and would have failed the run), and all payload bytes arrived.
    assert_eq!(log.started, log.delivered.len() as u64);
    let got: u64 = log.delivered.iter().map(|d| u64::from(d.2.bytes)).sum();
    assert_eq!(got, payload);
    assert!(
        net.counters.stops > 0,
        "the tight FIFOs must have exercised STOP/GO"
    );
    assert_eq!(
        net.counters.stops, net.counters.gos,
        "every STOP is followed by a GO once drained"
    );
}

/// The paper's example: inputs A, B, C of one switch each send a message split into four
/// frames to output D. Returns the order in which output D granted inputs, and the order
/// (source, frame) in which the NIA on D accepted frames.
fn three_into_one(frame_size: u32, dma_delay: u64) -> (String, Vec<(usize, u32)>) {
    let mut p = params();
    p.frame_size = frame_size;
    p.dma_delay = dma_delay;
    let mut net = XNet::new(Topology::from_spec("star").unwrap(), p).unwrap();
    for src in 0..3 {
        net.nias[src].submit(3, 64, 0);
    }
    net.grant_log = Some((3, Vec::new())); // output D of the only switch
    let mut log = Log::default();
    drain(&mut net, &mut log, 10_000).unwrap();
    let grants = net
        .grant_log
        .unwrap()
        .1
        .iter()
        .map(|&(_, p)| port_name(p))
        .collect();
    (
        grants,
        log.delivered.iter().map(|d| (d.2.src, d.2.seq)).collect(),
    )
}

/// With the heads arriving when output D polls A (cycle 5 = link delay 2 + DMA 3; the idle
/// machine has stepped Poll A → … → Poll E → Poll A), the stream is exactly A0 B0 C0 A1 ….
#[test]
fn three_into_one_interleaves_a0_b0_c0_a1() {
    let (grants, arrivals) = three_into_one(16, 3);
    assert_eq!(grants, "ABCABCABCABC");
    let want: Vec<(usize, u32)> = (0..4).flat_map(|k| (0..3).map(move |s| (s, k))).collect();
    assert_eq!(arrivals, want, "A0 B0 C0 A1 B1 C1 …");
}

/// Whatever input the free-running poll reaches first, the frames then alternate strictly.
#[test]
fn three_into_one_alternates_from_any_poll_phase() {
    for dma in 0..5 {
        let (grants, _) = three_into_one(16, dma);
        let first = &grants[..3];
        assert!(
            ["ABC", "BCA", "CAB"].contains(&first),
            "dma {dma}: {grants}"
        );
        assert_eq!(grants, first.repeat(4), "dma {dma}");
    }
}

#[test]
fn without_splitting_one_input_keeps_the_output() {
    let (grants, arrivals) = three_into_one(64, 3);
    assert_eq!(grants, "ABC", "one whole message per grant");
    assert_eq!(arrivals, vec![(0, 0), (1, 0), (2, 0)]);
}

/// Four switches in a ring, every node sending long messages two hops clockwise with small
/// FIFOs: the classic wormhole cycle. The watchdog must stop the run with a diagnosis.
#[test]
fn ring_deadlock_is_diagnosed_not_hung() {
    let mut p = params();
    p.frame_size = 4096;
    let mut net = XNet::new(Topology::from_spec("ring:4").unwrap(), p).unwrap();
    for s in 0..4 {
        net.nias[s].submit((s + 2) % 4, 4096, 0);
    }
    let mut log = Log::default();
    let mut err = None;
    for _ in 0..50_000 {
        if let Err(e) = net.step(&mut log) {
            err = Some(e.to_string());
            break;
        }
    }
    let err = err.expect("must deadlock and be detected");
    assert!(err.contains("Wait-for cycle"), "{err}");
    assert!(err.contains("has stopped"), "{err}");
}

/// An 8×8 torus with dimension-order routing and no virtual channels, under heavy uniform
/// traffic: the run either completes or is stopped by the watchdog, within a bounded number
/// of cycles. Which one happens is reported, not assumed.
#[test]
fn torus_without_vcs_runs_or_is_stopped() {
    let mut p = params();
    p.frame_size = 256;
    let mut net = XNet::new(Topology::from_spec("torus:4x4").unwrap(), p).unwrap();
    let mut rng = stream(5, 0);
    let mut log = Log::default();
    let mut outcome = Ok(());
    for _ in 0..20_000 {
        for s in 0..16 {
            if rng.random::<f64>() < 0.01 {
                net.nias[s].submit(rng.random_range(0..16), 512, net.now);
            }
        }
        outcome = net.step(&mut log);
        if outcome.is_err() {
            break;
        }
    }
    match outcome {
        Ok(()) => assert!(!log.delivered.is_empty()),
        Err(e) => assert!(e.to_string().contains("deadlock"), "{e}"),
    }
}

#[test]
fn bad_parameters_name_the_key() {
    let topo = || Topology::from_spec("star").unwrap();
    let mut p = params();
    p.frame_size = 0;
    assert_eq!(XNet::new(topo(), p).err().unwrap().key, "frame_size");
    let mut p = params();
    p.stop_threshold = 14; // 16 − 14 = 2 < 2·2 − 1
    assert_eq!(XNet::new(topo(), p).err().unwrap().key, "stop_threshold");
    let mut p = params();
    p.watchdog = 10;
    assert_eq!(XNet::new(topo(), p).err().unwrap().key, "watchdog");
}

/// Two sources stream long frames into one output, so the input FIFOs of the switch fill
/// up at full link rate: with the headroom `2·d − 1` the run is clean; with one symbol less
/// (a configuration the validation rejects) the FIFO overflows and the run fails loudly.
#[test]
fn headroom_rule_is_tight() {
    for d in [1usize, 2, 4] {
        let run = |stop: usize| {
            let p = NetParams {
                link_delay: d,
                fifo_size: 12,
                stop_threshold: stop,
                go_threshold: 1,
                frame_size: 2_000,
                dma_delay: 0,
                ..params()
            };
            let mut net = XNet::new_unchecked(Topology::from_spec("star").unwrap(), p);
            for src in 0..2 {
                net.nias[src].submit(3, 2_000, 0);
            }
            let mut log = Log::default();
            (0..10_000)
                .try_for_each(|_| net.step(&mut log))
                .map(|_| log.delivered.len())
        };
        let ok = 12 - (2 * d - 1);
        assert_eq!(run(ok).unwrap(), 2, "d = {d}: both frames delivered");
        let err = run(ok + 1).unwrap_err().to_string();
        assert!(err.contains("FIFO overflow"), "d = {d}: {err}");
        let mut p = params();
        p.link_delay = d;
        p.fifo_size = 12;
        p.stop_threshold = ok + 1;
        p.go_threshold = 1;
        assert_eq!(p.validate().unwrap_err().key, "stop_threshold");
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// (topology, deadlock possible with its routing)
    const TOPOLOGIES: [(&str, bool); 6] = [
        ("star", false),
        ("mesh:3x2", false),
        ("mesh:3x3", false),
        ("tree:2", false),
        ("ring:5", true),
        ("torus:3x3", true),
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Any legal parameters and any message mix: every frame is delivered exactly once,
        /// intact and in order (the NIAs check), no FIFO overflows, and the only other
        /// outcome is a diagnosed deadlock on a topology whose routing allows one.
        #[test]
        fn delivered_once_or_diagnosed(
            topo in 0..TOPOLOGIES.len(),
            d in 1usize..=3,
            fifo in 8usize..=24,
            slack in 0usize..=3,
            go_frac in 0.0f64..1.0,
            frame_size in 1u32..=40,
            msgs in proptest::collection::vec((0u64..400, 0usize..9, 0usize..9, 1u32..=80), 1..30),
        ) {
            let (spec, may_deadlock) = TOPOLOGIES[topo];
            let stop = (fifo - (2 * d - 1)).saturating_sub(slack).max(1);
            let p = NetParams {
                link_delay: d,
                fifo_size: fifo,
                stop_threshold: stop,
                go_threshold: ((stop as f64) * go_frac) as usize,
                frame_size,
                check: Check::Crc16,
                dma_delay: 2,
                watchdog: 500,
                watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
            };
            let mut net = XNet::new(Topology::from_spec(spec).unwrap(), p).unwrap();
            let n = net.nias.len();
            let mut msgs = msgs;
            msgs.sort_by_key(|m| m.0);
            let payload: u64 = msgs.iter().map(|m| u64::from(m.3)).sum();
            let mut log = Log::default();
            let mut next = 0;
            let mut outcome = Ok(());
            while net.now < 200_000 {
                while next < msgs.len() && msgs[next].0 <= net.now {
                    let (_, s, t, size) = msgs[next];
                    net.nias[s % n].submit(t % n, size, net.now);
                    next += 1;
                }
                let idle = next == msgs.len()
                    && net.in_flight() == 0
                    && net.nias.iter().all(|x| x.backlog() == 0 && !x.mid_frame());
                if idle {
                    break;
                }
                outcome = net.step(&mut log);
                if outcome.is_err() {
                    break;
                }
            }
            match outcome {
                Ok(()) => {
                    prop_assert_eq!(log.started, log.delivered.len() as u64);
                    let got: u64 = log.delivered.iter().map(|x| u64::from(x.2.bytes)).sum();
                    prop_assert_eq!(got, payload);
                }
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(may_deadlock && e.contains("deadlock"), "{}: {}", spec, e);
                }
            }
        }
    }
}

/// One 10-byte message from n0 to n2 on a 4×4 mesh (route A, A, E), link delay 1, no DMA
/// delay, derived by hand. Idle outputs poll input p in the cycles t ≡ p (mod 5).
/// * NIA 0 sends symbol k in cycle k; the head (FA) reaches s0's input E (4) in cycle 1;
/// * s0's output A polls E at t = 4: grant (strip FA); forwards from 5, so s1's input B (1)
///   sees the next FA in cycle 6;
/// * s1's output A polls B at t = 6: grant; forwards from 7; s2's input B sees FE in cycle 8;
/// * s2's output E polls B at t = 11: grant; forwards the 19 remaining symbols (6 header,
///   10 data, 2 CRC, EOF) in cycles 12 ..= 30; the NIA accepts the EOF in cycle 31.
#[test]
fn zero_load_timing_by_hand() {
    let mut p = params();
    p.link_delay = 1;
    p.dma_delay = 0;
    p.fifo_size = 64;
    p.stop_threshold = 48;
    p.go_threshold = 16;
    let mut net = XNet::new(Topology::from_spec("mesh:4x4").unwrap(), p).unwrap();
    net.nias[0].submit(2, 10, 0);
    let mut log = Log::default();
    drain(&mut net, &mut log, 1_000).unwrap();
    assert_eq!(log.delivered.len(), 1);
    assert_eq!(log.delivered[0].0, 31);
}
