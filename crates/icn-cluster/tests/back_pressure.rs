//! Back-pressure end to end (rule 4 of `icn_fabric`): NICs whose DMA outpaces the fabric
//! hold their packets while the fabric's input queue is full, and nothing is lost.

use icn_cluster::nic::{Endpoint, NicConfig, NicKind};
use icn_cluster::patterns::alltoall;
use icn_cluster::sim::{ClusterSim, Outcome};
use icn_engine::model::NoProgress;
use icn_fabric::{
    ChannelLoad, Delivery, Fabric, FabricError, Nouns, Packet, Ps, Refused, ZeroLoad,
};
use icn_sci::fabric::SciRingFabricConfig;
use std::collections::HashSet;

/// A fabric as it is, watched: refusals, the fullest input queue and the most packets in
/// flight, and every delivery's tag (each must come once).
struct Watched<F> {
    inner: F,
    refused: u64,
    max_queued: usize,
    max_in_flight: u64,
    tags: HashSet<(usize, u64)>,
}

impl<F: Fabric> Watched<F> {
    fn new(inner: F) -> Self {
        Watched {
            inner,
            refused: 0,
            max_queued: 0,
            max_in_flight: 0,
            tags: HashSet::new(),
        }
    }
}

impl<F: Fabric> Fabric for Watched<F> {
    fn endpoints(&self) -> usize {
        self.inner.endpoints()
    }
    fn cycle_ps(&self) -> Ps {
        self.inner.cycle_ps()
    }
    fn now(&self) -> Ps {
        self.inner.now()
    }
    fn max_packet_bytes(&self) -> u32 {
        self.inner.max_packet_bytes()
    }
    fn inject(&mut self, _: Packet) {
        panic!("a NIC uses try_inject");
    }
    fn input_capacity(&self) -> Option<usize> {
        self.inner.input_capacity()
    }
    fn input_queued(&self, src: usize) -> usize {
        self.inner.input_queued(src)
    }
    fn can_inject(&self, src: usize) -> bool {
        self.inner.can_inject(src)
    }
    fn try_inject(&mut self, p: Packet) -> Result<(), Refused> {
        let r = self.inner.try_inject(p);
        self.refused += u64::from(r.is_err());
        self.max_queued = self.max_queued.max(self.inner.input_queued(p.src));
        self.max_in_flight = self.max_in_flight.max(self.inner.in_flight());
        r
    }
    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError> {
        let from = out.len();
        let r = self.inner.advance(until, out);
        for d in &out[from..] {
            assert!(
                self.tags.insert((d.packet.src, d.packet.tag)),
                "{d:?} delivered twice"
            );
        }
        r
    }
    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError> {
        self.inner.zero_load(src, dst, bytes)
    }
    fn in_flight(&self) -> u64 {
        self.inner.in_flight()
    }
    fn next_event(&self) -> Option<Ps> {
        self.inner.next_event()
    }
    fn skip_idle(&mut self, to: Ps) -> Result<(), FabricError> {
        self.inner.skip_idle(to)
    }
    fn set_measuring(&mut self, on: bool) {
        self.inner.set_measuring(on)
    }
    fn accepted(&self) -> &[u64] {
        self.inner.accepted()
    }
    fn channel_loads(&self) -> Vec<ChannelLoad> {
        self.inner.channel_loads()
    }
    fn nouns(&self) -> Nouns {
        self.inner.nouns()
    }
}

/// A 64 KiB all-to-all on a 4-node SCI ring behind `simple` NICs with a 2 GB/s DMA (one
/// 64-byte send per 32 ns, faster than a node's share of the ring), with a transmit queue of
/// `depth` sends.
fn run(depth: usize) -> (Outcome, Watched<icn_sci::fabric::SciRingFabric>) {
    let mut ring = SciRingFabricConfig {
        topology: "ring:4".into(),
        ..SciRingFabricConfig::default()
    };
    ring.ring.send_queue_depth = depth;
    let ring = ring.build().unwrap();
    let mut fabric = Watched::new(ring);
    let endpoint = Endpoint::build(
        &NicConfig {
            kind: NicKind::Simple,
            dma_mbs: 2000.0,
            ..NicConfig::default()
        },
        str::to_owned,
    )
    .unwrap();
    let program = alltoall(4, 65_536);
    let outcome = ClusterSim::new(&mut fabric, &endpoint, &program)
        .run(&NoProgress)
        .unwrap();
    (outcome, fabric)
}

/// With a transmit queue of 4 sends the NICs are refused thousands of times, no queue ever
/// holds more than 4, at most 4 × 4 queued + 4 × 4 active buffers (+ the landing tails) are
/// in the fabric at once where the unbounded queue held thousands, every one of the 12 × 1 024
/// sends is delivered once and every message completes (the simulator fails a run whose
/// message completes twice, out of order, or never). The sends wait in the NICs instead of
/// the fabric: a hundredth of the waiting in the fabric, more NIC time.
#[test]
fn nics_hold_their_dma_at_a_full_sci_transmit_queue_and_lose_nothing() {
    let (held, f) = run(4);
    assert!(f.refused > 1_000, "{} refusals", f.refused);
    assert!(f.max_queued <= 4, "a queue held {}", f.max_queued);
    assert!(f.max_in_flight <= 40, "{} sends in flight", f.max_in_flight);
    assert_eq!(f.tags.len(), 12 * 1024);
    assert_eq!((held.messages, held.bytes), (12, 12 * 65_536));
    assert!(held.finish.iter().all(|&t| t > 0));

    let (free, g) = run(1_000_000);
    assert_eq!(g.refused, 0);
    assert!(
        g.max_in_flight > 1_000,
        "{} sends in flight",
        g.max_in_flight
    );
    assert_eq!(g.tags.len(), 12 * 1024);
    // The ring is the bottleneck either way; what moves is where a send waits: in the
    // NIC, its DMA held, instead of in the fabric's queue.
    assert!(
        held.fabric_wait_ps * 100 < free.fabric_wait_ps,
        "{held:?} vs {free:?}"
    );
    assert!(held.nic_ps > free.nic_ps, "{held:?} vs {free:?}");
}
