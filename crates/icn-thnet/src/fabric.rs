//! The X-Switch network behind the [`Fabric`] interface (the VC routers' is
//! `icn_router::fabric`).
//!
//! The adapter is thin: it turns a [`Packet`] into an X-NIA message (split into frames by
//! the NIA), steps the network one clock per cycle up to the requested time, and turns the
//! network's completion events back into [`Delivery`]s in picoseconds (`cycle × cycle_ps`).
//! Idle time is jumped, not stepped ([`Fabric::skip_idle`]), at every thread and rank count.

use crate::nia::{Delivered, Started};
use crate::topology::Topology;
use crate::xswitch::network::XNetwork;
use crate::xswitch::par::ParXNet;
use crate::xswitch::{NetParams, Observer, XNet};
use icn_engine::lockstep::Exchange;
use icn_engine::{Invalid, ModelError};
use icn_fabric::zero_load::Probe;
use icn_fabric::{ChannelLoad, Delivery, Fabric, FabricError, Nouns, Packet, Ps, ZeroLoad};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Ports per switch (a 5-port device), for channel → (switch, port).
const PORTS: usize = crate::symbol::PORTS;
use crate::symbol::Port;

/// The X-Switch network on one thread, or in partitions over several (same results).
// The sequential network stays inline (no pointer to follow per cycle); there is one per fabric.
#[allow(clippy::large_enum_variant)]
pub enum XEngine {
    Seq(XNet),
    Par(Box<ParXNet>),
}

impl XEngine {
    /// One clock: the one dispatch on the concrete network, so that the observer inlines.
    pub fn step<O: Observer>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        match self {
            XEngine::Seq(n) => n.step(obs),
            XEngine::Par(n) => n.step(obs),
        }
    }
}

/// Everything but the clock goes through [`XNetwork`].
impl std::ops::Deref for XEngine {
    type Target = dyn XNetwork;
    fn deref(&self) -> &(dyn XNetwork + 'static) {
        match self {
            XEngine::Seq(n) => n,
            XEngine::Par(n) => &**n,
        }
    }
}

impl std::ops::DerefMut for XEngine {
    fn deref_mut(&mut self) -> &mut (dyn XNetwork + 'static) {
        match self {
            XEngine::Seq(n) => n,
            XEngine::Par(n) => &mut **n,
        }
    }
}

/// An X-Switch network ([`XNet`] or [`ParXNet`]) as a fabric: one packet = one X-NIA
/// message.
pub struct XSwitchFabric {
    pub net: XEngine,
    cycle_ps: Ps,
    /// Per source: packets not yet completely framed, in submission order (an NIA sends
    /// its messages strictly in order, so the next "last frame" of a source is the front's).
    framing: Vec<VecDeque<(Packet, Ps)>>,
    /// Packets whose last frame is under way, by (source, destination, that frame's sequence).
    last_frames: HashMap<(usize, usize, u32), (Packet, Ps)>,
    accepted: Vec<u64>,
    in_flight: u64,
    /// Messages an X-NIA's send queue holds (not yet completely framed), `None`: unbounded
    /// (rule 4 of the fabric interface; [`XSwitchFabric::set_nia_queue`]).
    nia_queue: Option<usize>,
    /// What a fresh sequential copy is built from, for [`Fabric::zero_load`].
    built_from: (Topology, NetParams),
    probe: Probe<Vec<Port>>,
}

impl XSwitchFabric {
    /// The sequential network.
    pub fn new(topo: Topology, p: NetParams, cycle_ps: Ps) -> Result<XSwitchFabric, Invalid> {
        Self::with_threads(topo, p, 1, cycle_ps)
    }

    /// Simulated by `threads` threads (1: the sequential network; more: [`ParXNet`], same
    /// results).
    pub fn with_threads(
        topo: Topology,
        p: NetParams,
        threads: usize,
        cycle_ps: Ps,
    ) -> Result<XSwitchFabric, Invalid> {
        Self::spread(topo, p, threads, None, cycle_ps)
    }

    /// As [`XSwitchFabric::with_threads`], and with `ranks`, `threads` partitions per rank of
    /// the network spread over them ([`ParXNet::spread`]).
    pub fn spread(
        topo: Topology,
        p: NetParams,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
        cycle_ps: Ps,
    ) -> Result<XSwitchFabric, Invalid> {
        let n = topo.nias();
        let built_from = (topo.clone(), p.clone());
        let net = if threads <= 1 && ranks.is_none() {
            XEngine::Seq(XNet::new(topo, p)?)
        } else {
            XEngine::Par(Box::new(ParXNet::spread(topo, p, threads, ranks)?))
        };
        Ok(XSwitchFabric {
            net,
            cycle_ps,
            framing: vec![VecDeque::new(); n],
            last_frames: HashMap::new(),
            accepted: vec![0; n],
            nia_queue: None,
            in_flight: 0,
            built_from,
            // Idle outputs poll their inputs in turn, one a cycle: a lone packet's grants
            // depend on its injection cycle modulo the ports.
            probe: Probe::new(PORTS as u64),
        })
    }
}

/// The ports a frame from `src` to `dst` passes, in then out at every switch: a lone frame's
/// timing depends on nothing else (every link has the same delay, every switch the same
/// parameters, and a fresh network's outputs all poll in the same phase), so pairs whose
/// routes have the same shape share one [`Probe`] answer (104 shapes for the 992 pairs of
/// an 8×4 mesh).
fn route_ports(topo: &Topology, src: usize, dst: usize) -> Vec<Port> {
    let (mut sw, mut port_in) = topo.nia_at[src];
    let mut ports = Vec::new();
    for out in topo.route(src, dst) {
        ports.extend([port_in, out]);
        match topo.links[sw * PORTS + usize::from(out)] {
            Some(crate::topology::XLinkEnd::Switch { sw: next, port }) => {
                (sw, port_in) = (next, port);
            }
            _ => break,
        }
    }
    ports
}

/// Matches the network's frame events to packets during one step.
struct FrameTracker<'a> {
    framing: &'a mut [VecDeque<(Packet, Ps)>],
    last_frames: &'a mut HashMap<(usize, usize, u32), (Packet, Ps)>,
    accepted: &'a mut [u64],
    measuring: bool,
    cycle_ps: Ps,
    out: &'a mut Vec<Delivery>,
}

impl Observer for FrameTracker<'_> {
    fn started(&mut self, _now: u64, src: usize, f: &Started) {
        if f.last_of.is_some() {
            let p = self.framing[src]
                .pop_front()
                .expect("a framed message was submitted");
            debug_assert_eq!(p.0.dst, f.dst);
            self.last_frames.insert((src, f.dst, f.seq), p);
        }
    }

    fn delivered(&mut self, now: u64, dst: usize, f: &Delivered) {
        if self.measuring {
            self.accepted[f.src] += u64::from(f.bytes);
        }
        if let Some((packet, injected)) = self.last_frames.remove(&(f.src, dst, f.seq)) {
            self.out.push(Delivery {
                packet,
                injected,
                delivered: now * self.cycle_ps,
            });
        }
    }
}

impl XSwitchFabric {
    /// Bounds every X-NIA's send queue at `messages` (0: unbounded): [`Fabric::try_inject`]
    /// refuses a message while that many are not yet completely framed.
    pub fn set_nia_queue(&mut self, messages: usize) {
        self.nia_queue = (messages > 0).then_some(messages);
    }

    /// [`Fabric::skip_idle`], returning the cycles it had to step before the network
    /// settled: then it jumps ([`XNetwork::skip_settled`]), partitioned or not.
    pub fn skip_idle_counted(&mut self, to: Ps) -> Result<u64, FabricError> {
        let target = to.div_ceil(self.cycle_ps);
        let mut stepped = 0;
        let mut none = Vec::new();
        while self.net.now() < target {
            let left = target - self.net.now();
            if self.in_flight == 0 && self.net.skip_settled(left) {
                break;
            }
            self.advance((self.net.now() + 1) * self.cycle_ps, &mut none)?;
            stepped += 1;
        }
        debug_assert!(none.is_empty(), "nothing in flight, nothing delivered");
        Ok(stepped)
    }
}

impl Fabric for XSwitchFabric {
    fn endpoints(&self) -> usize {
        self.net.nias()
    }

    fn cycle_ps(&self) -> Ps {
        self.cycle_ps
    }

    fn now(&self) -> Ps {
        self.net.now() * self.cycle_ps
    }

    fn max_packet_bytes(&self) -> u32 {
        crate::xswitch_model::MAX_SIZE
    }

    fn inject(&mut self, p: Packet) {
        let now = self.net.now();
        self.net.submit(p.src, p.dst, p.bytes.max(1));
        self.framing[p.src].push_back((p, now * self.cycle_ps));
        self.in_flight += 1;
    }

    fn input_capacity(&self) -> Option<usize> {
        self.nia_queue
    }

    /// Messages not yet completely framed by the source's X-NIA.
    fn input_queued(&self, src: usize) -> usize {
        self.framing[src].len()
    }

    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError> {
        while self.net.now() * self.cycle_ps < until {
            let before = out.len();
            let mut tracker = FrameTracker {
                framing: &mut self.framing,
                last_frames: &mut self.last_frames,
                accepted: &mut self.accepted,
                measuring: self.net.measuring(),
                cycle_ps: self.cycle_ps,
                out,
            };
            let stepped = self.net.step(&mut tracker);
            self.in_flight -= (out.len() - before) as u64;
            stepped.map_err(|e| FabricError::from_model(self.net.deadlocked(), e))?;
        }
        Ok(())
    }

    /// Measured on a fresh sequential copy ([`Probe`]).
    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError> {
        let (topo, p) = &self.built_from;
        let cycle_ps = self.cycle_ps;
        let class = route_ports(topo, src, dst);
        self.probe
            .measure(self.net.now(), class, (src, dst, bytes), || {
                XSwitchFabric::new(topo.clone(), p.clone(), cycle_ps)
                    .map(|f| Box::new(f) as Box<dyn Fabric>)
                    .map_err(|e| FabricError::Failed(e.to_string()))
            })
    }

    fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// Exact: steps until the last frame's symbols and flow-control characters have
    /// passed, then jumps ([`XNet::skip_settled`]).
    fn skip_idle(&mut self, to: Ps) -> Result<(), FabricError> {
        self.skip_idle_counted(to).map(|_| ())
    }

    fn set_measuring(&mut self, on: bool) {
        self.net.set_measuring(on);
    }

    fn accepted(&self) -> &[u64] {
        &self.accepted
    }

    fn channel_loads(&self) -> Vec<ChannelLoad> {
        let counters = self.net.counters();
        let nports = self.net.topo().switches * PORTS;
        let topo = self.net.topo();
        (0..nports)
            .filter(|&c| {
                matches!(
                    topo.links[c],
                    Some(crate::topology::XLinkEnd::Switch { .. })
                )
            })
            .map(|ch| ChannelLoad {
                router: ch / PORTS,
                port: ch % PORTS,
                busy: counters.busy[ch],
            })
            .collect()
    }

    fn nouns(&self) -> Nouns {
        Nouns {
            item: "message",
            size_unit: "B",
            router: "switch",
            latency_about: "message creation → last EOF accepted",
        }
    }
}
