//! The VC-router networks behind the [`Fabric`] interface: a packet becomes a VC packet of
//! `⌈bytes / flit_bytes⌉` flits; the network is stepped one clock per cycle up to the
//! requested time, and its completion events become [`Delivery`]s in picoseconds
//! (`cycle × cycle_ps`). Idle time is jumped, not stepped ([`Fabric::skip_idle`]), at every
//! thread and rank count.

use crate::ParNet;
use crate::anyradix::VcAnyNet;
use crate::grid::VcNet;
use crate::grid::par::ParVcNet;
use crate::speculative::SpecNet;
use crate::{PacketDone, VcNetwork, VcObserver, VcParams};
use icn_engine::lockstep::Exchange;
use icn_engine::{Invalid, ModelError};
use icn_fabric::traffic::Grid;
use icn_fabric::window::Window;
use icn_fabric::zero_load::Probe;
use icn_fabric::{ChannelLoad, Delivery, Fabric, FabricError, Nouns, Packet, Ps, ZeroLoad};
use std::sync::Arc;

/// The two VC-router networks: the 5-port fast path on 2-D grids, and routers of any radix
/// on any icn-topo network.
// The fast path stays inline (no pointer to follow per cycle); there is one per fabric.
#[allow(clippy::large_enum_variant)]
pub enum VcEngine {
    Grid(VcNet),
    /// The fast path in partitions over threads (same results as `Grid`).
    GridParallel(Box<ParVcNet>),
    Any(Box<VcAnyNet>),
    /// Any network in partitions over threads (same results as `Any`).
    AnyParallel(Box<ParNet<VcAnyNet>>),
    /// Routers of any radix with speculative switch allocation, and in partitions.
    Spec(Box<SpecNet>),
    SpecParallel(Box<ParNet<SpecNet>>),
}

impl VcEngine {
    /// The network, for everything but the clock.
    pub fn net(&self) -> &dyn VcNetwork {
        match self {
            VcEngine::Grid(n) => n,
            VcEngine::GridParallel(n) => &**n,
            VcEngine::Any(n) => &**n,
            VcEngine::AnyParallel(n) => &**n,
            VcEngine::Spec(n) => &**n,
            VcEngine::SpecParallel(n) => &**n,
        }
    }

    pub fn net_mut(&mut self) -> &mut dyn VcNetwork {
        match self {
            VcEngine::Grid(n) => n,
            VcEngine::GridParallel(n) => &mut **n,
            VcEngine::Any(n) => &mut **n,
            VcEngine::AnyParallel(n) => &mut **n,
            VcEngine::Spec(n) => &mut **n,
            VcEngine::SpecParallel(n) => &mut **n,
        }
    }

    /// One clock: the one dispatch on the concrete network, so that the observer inlines.
    pub fn step<O: VcObserver>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        match self {
            VcEngine::Grid(n) => n.step(obs),
            VcEngine::GridParallel(n) => n.step(obs),
            VcEngine::Any(n) => n.step(obs),
            VcEngine::AnyParallel(n) => n.step(obs),
            VcEngine::Spec(n) => n.step(obs),
            VcEngine::SpecParallel(n) => n.step(obs),
        }
    }
}

/// Which VC network a fabric simulates.
#[derive(Clone)]
pub enum VcTopology {
    /// `mesh:XxY`, `torus:XxY`, `ring:N` with ≤ 8 VCs and dimension order: the 5-port fast
    /// path ([`crate::grid`]).
    Grid(Grid),
    /// Anything else: routers of any radix ([`crate::anyradix`]) on `net`, routed by
    /// `routing` (built for `net`).
    Any {
        net: Arc<icn_topo::Network>,
        routing: Arc<dyn icn_topo::routing::Routing>,
    },
}

/// Everything a [`VcFabric`] is built from, by name: the one builder of the `vc-router`
/// model and the cluster's `fabric.kind = "vc-router"`.
#[derive(Clone)]
pub struct VcSpec {
    pub topology: VcTopology,
    pub params: VcParams,
    /// Channel latency of dragonfly global links; 0: `params.channel_delay`.
    pub global_delay: u64,
    /// Seeds the routers' random routing choices: [`VcSpec::router_seed`] of the
    /// replication's seed, so that replications differ.
    pub router_seed: u64,
    /// Partitions simulated by this process (1: the sequential network); with `ranks`, per
    /// rank of the network spread over them. Results are the same at any count.
    pub threads: usize,
    pub ranks: Option<Arc<dyn Exchange>>,
    /// Picoseconds per cycle, bytes per flit, and the largest packet in flits.
    pub cycle_ps: Ps,
    pub flit_bytes: u32,
    pub max_packet_flits: u32,
}

impl VcSpec {
    /// The routers' seed for a replication's `seed` (a stream of its own).
    pub fn router_seed(seed: u64) -> u64 {
        icn_engine::rng::derive_seed(seed, u64::MAX - 1)
    }

    /// The network the spec names: sequential, or in partitions over threads (and ranks).
    pub fn engine(&self) -> Result<VcEngine, Invalid> {
        let parallel = self.threads > 1 || self.ranks.is_some();
        let p = self.params.clone();
        Ok(match &self.topology {
            VcTopology::Grid(_) if p.speculative => {
                return Err(Invalid::new(
                    "speculative",
                    "speculative switch allocation runs on the router of any radix \
                     (VcTopology::Any), not on the grid's fast path",
                ));
            }
            VcTopology::Grid(g) if parallel => VcEngine::GridParallel(Box::new(ParVcNet::spread(
                *g,
                p,
                self.threads,
                self.ranks.clone(),
            )?)),
            VcTopology::Grid(g) => VcEngine::Grid(VcNet::new(*g, p)?),
            VcTopology::Any { net, routing } => {
                let global = match self.global_delay {
                    0 => p.channel_delay,
                    d => d,
                };
                let (net, routing) = (net.clone(), routing.clone());
                let seed = self.router_seed;
                if p.speculative && parallel {
                    VcEngine::SpecParallel(Box::new(ParNet::any_spread(
                        net,
                        routing,
                        p,
                        global,
                        seed,
                        self.threads,
                        self.ranks.clone(),
                    )?))
                } else if p.speculative {
                    VcEngine::Spec(Box::new(SpecNet::over(VcAnyNet::new(
                        net, routing, p, global, seed,
                    )?)?))
                } else if parallel {
                    VcEngine::AnyParallel(Box::new(ParNet::any_spread(
                        net,
                        routing,
                        p,
                        global,
                        self.router_seed,
                        self.threads,
                        self.ranks.clone(),
                    )?))
                } else {
                    VcEngine::Any(Box::new(VcAnyNet::new(
                        net,
                        routing,
                        p,
                        global,
                        self.router_seed,
                    )?))
                }
            }
        })
    }
}

/// A network of VC routers ([`VcNet`] or [`VcAnyNet`]) as a fabric: one packet = one VC
/// packet of `⌈bytes / flit_bytes⌉` flits (at least one).
pub struct VcFabric {
    pub net: VcEngine,
    cycle_ps: Ps,
    flit_bytes: u32,
    max_packet_bytes: u32,
    /// Packets in the network with their injection time, by the tag given to the network
    /// (a slab index: a hash map per packet cost ~5 % of the router's speed).
    packets: Vec<Option<(Packet, Ps)>>,
    free: Vec<u64>,
    accepted: Vec<u64>,
    /// The endpoints' input queues (rule 4): packets in flight per source, unbounded
    /// unless [`VcFabric::set_window`] bounds them.
    window: Window,
    /// The spec of a fresh sequential copy, for [`Fabric::zero_load`].
    alone: VcSpec,
    probe: Probe<VcRouteClass>,
}

/// Which pairs a lone packet crosses alike ([`Probe`]'s route class): on the 5-port grid
/// routers (identical routers, unit channels, dimension order) only the hop count matters,
/// so an 8×8 mesh's 4 032 pairs are 14 classes; on routers of any radix (channel delays that
/// differ per link, table or adaptive routes) each pair is its own class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum VcRouteClass {
    GridHops(usize),
    Pair(usize, usize),
}

impl VcRouteClass {
    fn of(topology: &VcTopology, src: usize, dst: usize) -> VcRouteClass {
        match topology {
            VcTopology::Grid(g) => {
                let along = |a: usize, b: usize, n: usize| {
                    let d = a.abs_diff(b);
                    if g.wrap { d.min(n - d) } else { d }
                };
                VcRouteClass::GridHops(
                    along(src % g.x, dst % g.x, g.x) + along(src / g.x, dst / g.x, g.y),
                )
            }
            VcTopology::Any { .. } => VcRouteClass::Pair(src, dst),
        }
    }
}

impl VcFabric {
    /// Bounds every endpoint's packets in flight at `packets` (0: unbounded): the router
    /// model's source queue is unbounded (BookSim's), so this window stands for the
    /// injection buffer a NIC fills (rule 4 of the fabric interface).
    pub fn set_window(&mut self, packets: usize) {
        self.window = Window::new(self.accepted.len(), packets);
    }

    /// The fabric `spec` names.
    pub fn build(spec: &VcSpec) -> Result<VcFabric, Invalid> {
        let net = spec.engine()?;
        let n = net.net().nodes();
        Ok(VcFabric {
            net,
            cycle_ps: spec.cycle_ps,
            flit_bytes: spec.flit_bytes,
            max_packet_bytes: spec.flit_bytes.saturating_mul(spec.max_packet_flits),
            packets: Vec::new(),
            free: Vec::new(),
            accepted: vec![0; n],
            window: Window::new(n, 0),
            alone: VcSpec {
                threads: 1,
                ranks: None,
                ..spec.clone()
            },
            // Routers arbitrate among requesters only: a lone packet's timing does not
            // depend on the cycle it starts in.
            probe: Probe::new(1),
        })
    }

    /// The 5-port fast path on a 2-D mesh, torus or ring with unit cycle and flit sizes,
    /// simulated by `threads` threads (1: the sequential network; same results).
    pub fn grid(
        grid: Grid,
        p: VcParams,
        threads: usize,
        max_packet_flits: u32,
    ) -> Result<VcFabric, Invalid> {
        Self::build(&VcSpec {
            topology: VcTopology::Grid(grid),
            params: p,
            global_delay: 0,
            router_seed: 0,
            threads,
            ranks: None,
            cycle_ps: 1,
            flit_bytes: 1,
            max_packet_flits,
        })
    }
}

struct TailTracker<'a> {
    packets: &'a mut [Option<(Packet, Ps)>],
    free: &'a mut Vec<u64>,
    window: &'a mut Window,
    accepted: &'a mut [u64],
    measuring: bool,
    cycle_ps: Ps,
    out: &'a mut Vec<Delivery>,
}

impl VcObserver for TailTracker<'_> {
    fn delivered(&mut self, now: u64, p: &PacketDone) {
        let (packet, injected) = self.packets[p.tag as usize].take().expect("tagged packet");
        self.free.push(p.tag);
        self.window.delivered(packet.src);
        if self.measuring {
            self.accepted[p.src] += u64::from(packet.bytes);
        }
        self.out.push(Delivery {
            packet,
            injected,
            delivered: now * self.cycle_ps,
        });
    }
}

impl VcFabric {
    /// [`Fabric::skip_idle`], returning the cycles it had to step before the network was
    /// quiet (its last credits home): then it jumps ([`VcNetwork::skip_quiet`]).
    pub fn skip_idle_counted(&mut self, to: Ps) -> Result<u64, FabricError> {
        let target = to.div_ceil(self.cycle_ps);
        let mut stepped = 0;
        let mut none = Vec::new();
        while self.net.net().now() < target {
            let left = target - self.net.net().now();
            if self.in_flight() == 0 && self.net.net_mut().skip_quiet(left) {
                break;
            }
            self.advance((self.net.net().now() + 1) * self.cycle_ps, &mut none)?;
            stepped += 1;
        }
        debug_assert!(none.is_empty(), "nothing in flight, nothing delivered");
        Ok(stepped)
    }
}

impl Fabric for VcFabric {
    fn endpoints(&self) -> usize {
        self.net.net().nodes()
    }

    fn cycle_ps(&self) -> Ps {
        self.cycle_ps
    }

    fn now(&self) -> Ps {
        self.net.net().now() * self.cycle_ps
    }

    fn max_packet_bytes(&self) -> u32 {
        self.max_packet_bytes
    }

    fn inject(&mut self, p: Packet) {
        let flits = p.bytes.div_ceil(self.flit_bytes).max(1);
        let entry = Some((p, self.net.net().now() * self.cycle_ps));
        let id = match self.free.pop() {
            Some(id) => {
                self.packets[id as usize] = entry;
                id
            }
            None => {
                self.packets.push(entry);
                self.packets.len() as u64 - 1
            }
        };
        self.net.net_mut().enqueue_tagged(p.src, p.dst, flits, id);
        self.window.accepted(p.src);
    }

    fn input_capacity(&self) -> Option<usize> {
        self.window.capacity()
    }

    fn input_queued(&self, src: usize) -> usize {
        self.window.queued(src)
    }

    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError> {
        while self.net.net().now() * self.cycle_ps < until {
            let mut tracker = TailTracker {
                packets: &mut self.packets,
                free: &mut self.free,
                window: &mut self.window,
                accepted: &mut self.accepted,
                measuring: self.net.net().measuring(),
                cycle_ps: self.cycle_ps,
                out,
            };
            let stepped = self.net.step(&mut tracker);
            stepped.map_err(|e| FabricError::from_model(self.net.net().deadlocked(), e))?;
        }
        Ok(())
    }

    /// Measured on a fresh sequential copy ([`Probe`]).
    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError> {
        let spec = &self.alone;
        let class = VcRouteClass::of(&spec.topology, src, dst);
        self.probe
            .measure(self.net.net().now(), class, (src, dst, bytes), || {
                VcFabric::build(spec)
                    .map(|f| Box::new(f) as Box<dyn Fabric>)
                    .map_err(|e| FabricError::Failed(e.to_string()))
            })
    }

    fn in_flight(&self) -> u64 {
        (self.packets.len() - self.free.len()) as u64
    }

    /// Exact: steps until the last credits are home, then jumps
    /// ([`VcNetwork::skip_quiet`]).
    fn skip_idle(&mut self, to: Ps) -> Result<(), FabricError> {
        self.skip_idle_counted(to).map(|_| ())
    }

    fn set_measuring(&mut self, on: bool) {
        self.net.net_mut().set_measuring(on);
    }

    fn accepted(&self) -> &[u64] {
        &self.accepted
    }

    fn channel_loads(&self) -> Vec<ChannelLoad> {
        let net = self.net.net();
        let radix = net.ports_per_router();
        net.channel_loads()
            .into_iter()
            .map(|(ch, busy)| ChannelLoad {
                router: ch / radix,
                port: ch % radix,
                busy,
            })
            .collect()
    }

    fn nouns(&self) -> Nouns {
        Nouns {
            item: "packet",
            size_unit: if self.flit_bytes == 1 { "flits" } else { "B" },
            router: "router",
            latency_about: "packet creation → tail arrival",
        }
    }
}
