//! The [`icn_fabric::conformance`] suite on the ideal fabric: with and without contention,
//! serialisation, on a path, a mesh and a hypercube; rule 3 (zero-load answers) on the ideal
//! and the flow fabric. (The X-Switch and VC-router fabrics run
//! it in `icn-thnet/tests/fabric_conformance.rs`, the SCI ring in `icn-sci/tests/`.)

use icn_fabric::conformance::{
    Traffic, back_pressure, check, skip_idle_matches_stepping, zero_load_is_exact,
};
use icn_fabric::flow::FlowConfig;
use icn_fabric::ideal::IdealConfig;

#[test]
fn the_ideal_fabric_conforms() {
    for (topology, link_mbs, contention) in [
        ("path:2", 1000.0, true),
        ("mesh:4x4", 1000.0, true),
        ("mesh:4x4", 0.0, false),
        ("hypercube:4", 250.0, true),
        ("crossbar:8", 1000.0, true),
        ("fattree:2,3", 1000.0, true),
        ("dragonfly:1,2,1", 1000.0, true),
    ] {
        let cfg = IdealConfig {
            topology: topology.into(),
            link_mbs,
            contention,
            hop_ns: 100.0,
            max_packet: 4096,
            window: 0,
        };
        let mut f = cfg.build().unwrap();
        check(&mut f, Traffic::default(), 7).unwrap_or_else(|e| panic!("{topology}: {e}"));
    }
}

#[test]
fn the_ideal_fabric_skips_idle_time_exactly() {
    let cfg = IdealConfig {
        topology: "mesh:4x4".into(),
        ..IdealConfig::default()
    };
    let (mut a, mut b) = (cfg.build().unwrap(), cfg.build().unwrap());
    skip_idle_matches_stepping(&mut a, &mut b, 20, 1_000_000, 7).unwrap();
}

/// A fabric that breaks one rule on purpose: the suite must name it.
struct Broken {
    inner: icn_fabric::ideal::IdealFabric,
    /// Drop the first delivery, or hand it out twice.
    duplicate: bool,
    /// Added to every zero-load latency.
    skew: icn_fabric::Ps,
    done: bool,
}

impl icn_fabric::Fabric for Broken {
    fn endpoints(&self) -> usize {
        self.inner.endpoints()
    }
    fn cycle_ps(&self) -> icn_fabric::Ps {
        self.inner.cycle_ps()
    }
    fn now(&self) -> icn_fabric::Ps {
        self.inner.now()
    }
    fn max_packet_bytes(&self) -> u32 {
        self.inner.max_packet_bytes()
    }
    fn inject(&mut self, p: icn_fabric::Packet) {
        self.inner.inject(p)
    }
    fn advance(
        &mut self,
        until: icn_fabric::Ps,
        out: &mut Vec<icn_fabric::Delivery>,
    ) -> Result<(), icn_fabric::FabricError> {
        let before = out.len();
        self.inner.advance(until, out)?;
        if !self.done && out.len() > before {
            self.done = true;
            if self.duplicate {
                out.insert(before, out[before]);
            } else {
                out.remove(before);
            }
        }
        Ok(())
    }
    fn zero_load(
        &mut self,
        src: usize,
        dst: usize,
        bytes: u32,
    ) -> Result<icn_fabric::ZeroLoad, icn_fabric::FabricError> {
        let mut z = self.inner.zero_load(src, dst, bytes)?;
        z.latency += self.skew;
        Ok(z)
    }
    fn in_flight(&self) -> u64 {
        self.inner.in_flight()
    }
    fn set_measuring(&mut self, on: bool) {
        self.inner.set_measuring(on)
    }
    fn accepted(&self) -> &[u64] {
        self.inner.accepted()
    }
    fn channel_loads(&self) -> Vec<icn_fabric::ChannelLoad> {
        self.inner.channel_loads()
    }
    fn nouns(&self) -> icn_fabric::Nouns {
        self.inner.nouns()
    }
}

#[test]
fn a_lost_or_doubled_delivery_fails_the_suite() {
    for duplicate in [false, true] {
        let mut f = Broken {
            inner: IdealConfig {
                topology: "mesh:4x4".into(),
                hop_ns: 100.0,
                link_mbs: 1000.0,
                max_packet: 4096,
                ..IdealConfig::default()
            }
            .build()
            .unwrap(),
            duplicate,
            skew: 0,
            done: false,
        };
        let e = check(&mut f, Traffic::default(), 7).unwrap_err();
        let want = if duplicate {
            "delivered twice"
        } else {
            "never delivered"
        };
        assert!(e.contains(want), "{e}");
    }
}

/// Pairs near and far, one byte to a few kilobytes, on a mesh, a fat tree and a crossbar.
const CASES: &[(usize, usize, u32)] = &[(0, 1, 1), (0, 7, 100), (5, 2, 4096), (3, 6, 1500)];

#[test]
fn the_ideal_fabric_answers_zero_load_exactly() {
    for (topology, link_mbs, contention) in [
        ("mesh:4x4", 160.0, true),
        ("mesh:4x4", 160.0, false),
        ("fattree:2,3", 1000.0, true),
        ("crossbar:8", 0.0, true),
    ] {
        let cfg = IdealConfig {
            topology: topology.into(),
            link_mbs,
            contention,
            ..IdealConfig::default()
        };
        let fresh = || Box::new(cfg.build().unwrap()) as Box<dyn icn_fabric::Fabric>;
        zero_load_is_exact(&fresh, CASES, &[0, 3, 1_000_000])
            .unwrap_or_else(|e| panic!("{topology}: {e}"));
    }
}

/// The flow fabric: on a crossbar, a ring (a longer route pays more latency) and with the
/// TCP window binding the rate (10 ms per link: 4 MiB / 2L = 105 MB/s, under the link's 125).
#[test]
fn the_flow_fabric_answers_zero_load_exactly() {
    for (topology, link_lat_ns) in [
        ("crossbar:8", 1_000.0),
        ("ring:8", 1_000.0),
        ("crossbar:8", 10_000_000.0),
    ] {
        let cfg = FlowConfig {
            topology: topology.into(),
            link_mbs: 125.0,
            link_lat_ns,
            ..FlowConfig::default()
        };
        let fresh = || Box::new(cfg.build().unwrap()) as Box<dyn icn_fabric::Fabric>;
        zero_load_is_exact(&fresh, CASES, &[0, 1_000_000])
            .unwrap_or_else(|e| panic!("{topology}: {e}"));
    }
}

/// A fabric whose answer is one picosecond off fails rule 3, naming the case.
#[test]
fn a_wrong_zero_load_answer_fails_the_suite() {
    let fresh = || {
        Box::new(Broken {
            inner: IdealConfig::default().build().unwrap(),
            duplicate: false,
            skew: 1,
            done: true,
        }) as Box<dyn icn_fabric::Fabric>
    };
    let e = zero_load_is_exact(&fresh, &[(0, 1, 64)], &[0]).unwrap_err();
    assert!(e.contains("took"), "{e}");
}

/// Rule 4 on the ideal and flow fabrics: a window of 4 packets per endpoint, 16 endpoints
/// each offering 40 packets to one hot spot as fast as they are taken; refusals happen, no
/// window ever holds more than 4, and every packet is delivered once.
#[test]
fn the_ideal_and_flow_fabrics_refuse_at_a_full_window_and_lose_nothing() {
    for (topology, contention) in [
        ("mesh:4x4", true),
        ("crossbar:16", true),
        ("ring:16", false),
    ] {
        let mut f = IdealConfig {
            topology: topology.into(),
            contention,
            window: 4,
            ..IdealConfig::default()
        }
        .build()
        .unwrap();
        let refused = back_pressure(&mut f, 40, 512).unwrap_or_else(|e| panic!("{topology}: {e}"));
        assert!(refused > 0);
    }
    for topology in ["crossbar:16", "ring:8"] {
        let mut f = FlowConfig {
            topology: topology.into(),
            window: 4,
            ..FlowConfig::default()
        }
        .build()
        .unwrap();
        back_pressure(&mut f, 40, 512).unwrap_or_else(|e| panic!("{topology}: {e}"));
    }
}

/// The rule-4 check fails a fabric whose queues are unbounded (nothing refused), and one
/// that states a capacity and accepts beyond it, naming what broke.
#[test]
fn the_back_pressure_check_names_an_unbounded_or_overfull_queue() {
    let cfg = IdealConfig {
        topology: "crossbar:4".into(),
        window: 0,
        ..IdealConfig::default()
    };
    let e = back_pressure(&mut cfg.build().unwrap(), 10, 64).unwrap_err();
    assert!(e.contains("unbounded"), "{e}");
    let mut overfull = Overfull(cfg.build().unwrap());
    let e = back_pressure(&mut overfull, 10, 64).unwrap_err();
    assert!(e.contains("more than its capacity 2"), "{e}");
}

/// States a capacity of 2 and never refuses.
struct Overfull(icn_fabric::ideal::IdealFabric);

impl icn_fabric::Fabric for Overfull {
    fn endpoints(&self) -> usize {
        self.0.endpoints()
    }
    fn cycle_ps(&self) -> icn_fabric::Ps {
        self.0.cycle_ps()
    }
    fn now(&self) -> icn_fabric::Ps {
        self.0.now()
    }
    fn max_packet_bytes(&self) -> u32 {
        self.0.max_packet_bytes()
    }
    fn inject(&mut self, p: icn_fabric::Packet) {
        self.0.inject(p)
    }
    fn input_capacity(&self) -> Option<usize> {
        Some(2)
    }
    fn input_queued(&self, src: usize) -> usize {
        self.0.input_queued(src)
    }
    fn can_inject(&self, _src: usize) -> bool {
        true
    }
    fn advance(
        &mut self,
        until: icn_fabric::Ps,
        out: &mut Vec<icn_fabric::Delivery>,
    ) -> Result<(), icn_fabric::FabricError> {
        self.0.advance(until, out)
    }
    fn zero_load(
        &mut self,
        src: usize,
        dst: usize,
        bytes: u32,
    ) -> Result<icn_fabric::ZeroLoad, icn_fabric::FabricError> {
        self.0.zero_load(src, dst, bytes)
    }
    fn in_flight(&self) -> u64 {
        self.0.in_flight()
    }
    fn next_event(&self) -> Option<icn_fabric::Ps> {
        self.0.next_event()
    }
    fn set_measuring(&mut self, on: bool) {
        self.0.set_measuring(on)
    }
    fn accepted(&self) -> &[u64] {
        self.0.accepted()
    }
    fn channel_loads(&self) -> Vec<icn_fabric::ChannelLoad> {
        self.0.channel_loads()
    }
    fn nouns(&self) -> icn_fabric::Nouns {
        self.0.nouns()
    }
}
