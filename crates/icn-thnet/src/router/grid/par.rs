//! The grid VC network partitioned over threads: [`ParVcNet`].
//!
//! Each partition is a [`VcNet`] of a contiguous range of routers ([`VcNet::partition`]) run
//! by [`icn_engine::lockstep`]. A flit leaving for another partition's router lands there
//! `sw_alloc + st + channel` cycles later and a credit `credit_delay` cycles later (both ≥ 1:
//! the lookahead), so the partitions run each cycle independently and exchange those flits
//! and credits between cycles.
//!
//! **Why the results are the sequential run's, bit for bit.** Within a cycle, the sequential
//! network does: credits (increments, which commute), ejections (in router order), landings
//! (each into its own input VC: order-free), then per router VC and switch allocation (only
//! its own state), then sources (only their own). A partition does the same for its routers;
//! ejections are collected per partition and handed to the observer in partition order, which
//! is router order. What a packet needs at a router is its record (destination, for routing;
//! all of it, for the delivery): its head carries it to a new partition, which keeps it under
//! an id of its own (ids decide nothing). The dateline class on a torus follows from the input
//! port and VC ([`VcNet::route`]), not from state carried by the packet. The watchdog looks at
//! the whole network: packets created minus delivered over all partitions, and the latest
//! cycle any of them moved a flit. Tests: `router/grid/par_tests.rs`.
//!
//! **Across processes.** [`ParNet::spread`] (and `ParNet::any_spread`) build only this MPI
//! rank's block of `ranks × threads` partitions; the driver below runs replicated on every
//! rank, fed every partition's deliveries by [`Lockstep::spread`], and its whole-network
//! queries ([`ParNet::router_channel_loads`]) are collective. Tests: `tests/spread_ranks.rs`.

use super::*;
use icn_engine::lockstep::{Exchange, Lockstep, Partition, Split};
use serde::{Serialize, de::DeserializeOwned};
use std::sync::Arc;

/// Where a router port is, seen from partition `k` of a VC network with `radix` ports per
/// router and `v` VCs: its VC 0 as a local index, or a new entry (partition, its local VC 0)
/// of a remote table, returned as [`REMOTE`]` | entry · v` (flit targets and credit counters
/// add the VC to either).
pub(crate) struct PortPlacer {
    pub split: Split,
    pub k: usize,
    pub radix: usize,
    pub v: usize,
}

impl PortPlacer {
    pub fn place(&self, router: usize, port: usize, remote: &mut Vec<(u32, u32)>) -> u32 {
        let here = self.split.range(self.k);
        let local =
            |q: usize| (((router - self.split.start(q)) * self.radix + port) * self.v) as u32;
        if here.contains(&router) {
            local(self.k)
        } else {
            let q = self.split.part_of(router);
            remote.push((q as u32, local(q)));
            REMOTE | ((remote.len() - 1) * self.v) as u32
        }
    }
}

impl VcNet {
    /// Takes in what other partitions sent during the last cycle.
    fn absorb(&mut self, inbox: &mut Vec<VcMsg>) {
        for m in inbox.drain(..) {
            match m {
                VcMsg::Credit { at, counter } => {
                    self.creds[at as usize & self.ring].push(counter);
                }
                VcMsg::Create { src, dst, len, tag } => self.enqueue_tagged(src, dst, len, tag),
                VcMsg::Flit {
                    at,
                    ivc,
                    flags,
                    packet,
                } => {
                    let id = match packet {
                        Some(info) => {
                            let id = self.keep(info);
                            self.arriving[ivc as usize] = id;
                            id
                        }
                        None => self.arriving[ivc as usize],
                    };
                    self.flits[at as usize & self.ring].push(event(ivc, flit(id, flags)));
                }
            }
        }
    }

    /// Sends the flits and credits of the cycle just simulated to their partitions; a head
    /// takes its packet's record along, which is forgotten here once the tail has left.
    fn send(&mut self, outbox: &mut [Vec<VcMsg>]) {
        let v = self.v as u32;
        let cycle = self.now - 1;
        let mut flits = std::mem::take(&mut self.sent_flits);
        for e in flits.drain(..) {
            let (target, f) = ((e >> 32) as u32 & !REMOTE, e as u32);
            let (q, base) = self.remote_flit[(target / v) as usize];
            let id = f >> 2;
            let packet = (f & u32::from(HEAD) != 0).then(|| self.pk[id as usize]);
            if f & u32::from(TAIL) != 0 {
                self.free.push(id);
            }
            outbox[q as usize].push(VcMsg::Flit {
                at: cycle + self.fdelay as u64,
                ivc: base + target % v,
                flags: (f & 3) as u8,
                packet,
            });
        }
        self.sent_flits = flits;
        for c in self.sent_creds.drain(..) {
            let c = c & !REMOTE;
            let (q, base) = self.remote_cred[(c / v) as usize];
            outbox[q as usize].push(VcMsg::Credit {
                at: cycle + self.p.credit_delay,
                counter: base + c % v,
            });
        }
    }
}

impl Partition for VcNet {
    type Message = VcMsg;
    type Done = (u64, PacketDone);
    type Error = ModelError;

    fn cycle(
        &mut self,
        inbox: &mut Vec<VcMsg>,
        outbox: &mut [Vec<VcMsg>],
        done: &mut Vec<(u64, PacketDone)>,
    ) -> Result<(), ModelError> {
        self.absorb(inbox);
        let stepped = self.step(done);
        self.send(outbox);
        stepped
    }

    fn panicked(why: String) -> ModelError {
        ModelError::Failed(format!("a partition of the VC network panicked: {why}"))
    }

    fn last_active(&self) -> u64 {
        self.last_move
    }
}

/// What the driver needs of a partition of a VC network besides [`Partition`].
pub trait VcPartition:
    Partition<Message = VcMsg<Self::Record>, Done = (u64, PacketDone), Error = ModelError>
{
    /// What a head flit carries to another partition (or rank).
    type Record: Send + Serialize + DeserializeOwned + 'static;
    /// The global routers simulated here.
    fn router_range(&self) -> std::ops::Range<usize>;
    /// Ports per router (channel `router · radix + port`).
    fn ports_per_router(&self) -> usize;
    fn set_measuring(&mut self, on: bool);
    /// Flits sent on local channel `c` while measuring.
    fn channel_busy(&self, c: usize) -> u64;
    /// Local channels that join two routers.
    fn router_channels(&self) -> Vec<usize>;
    /// The blocked input VCs of this partition's routers, each with the input VC downstream
    /// whose buffer it waits on (see [`wait_for_cycle`]).
    fn waits(&self) -> Vec<(InputVc, InputVc)>;
    /// A reader's name of an input VC anywhere in the network.
    fn input_vc_name(&self, vc: InputVc) -> String;
}

/// An input VC of the whole network: (router, input port, VC).
pub type InputVc = (usize, usize, usize);

/// The wait-for cycle among `waits` (each blocked input VC with the one downstream it waits
/// on: a full buffer it holds credits for, or a VC class all of whose VCs are held), walked
/// from the lowest blocked input VC, so that a network and its partitions find the same one.
pub fn wait_for_cycle(waits: &[(InputVc, InputVc)]) -> Option<Vec<InputVc>> {
    use std::collections::{BTreeMap, BTreeSet};
    let next: BTreeMap<InputVc, InputVc> = waits.iter().copied().collect();
    let mut seen = BTreeSet::new();
    for &start in next.keys() {
        let mut path: Vec<InputVc> = Vec::new();
        let mut at = start;
        while seen.insert(at) {
            path.push(at);
            match next.get(&at) {
                Some(&n) => at = n,
                None => break,
            }
        }
        if let Some(i) = path.iter().position(|&p| p == at) {
            return Some(path[i..].to_vec());
        }
    }
    None
}

/// The watchdog's diagnosis, on one line: the wait-for cycle (at most 16 of its input VCs
/// named), or the blocked input VCs when no cycle is found.
pub fn describe_waits(waits: &[(InputVc, InputVc)], name: impl Fn(InputVc) -> String) -> String {
    const SHOWN: usize = 16;
    match wait_for_cycle(waits) {
        Some(cycle) => {
            let mut names: Vec<String> = cycle.iter().take(SHOWN).map(|&c| name(c)).collect();
            if cycle.len() > SHOWN {
                names.push(format!("… ({} input VCs in all)", cycle.len()));
            }
            names.push(name(cycle[0]));
            format!(
                ". Wait-for cycle of {} input VCs, each waiting on the next one's buffer: {}",
                cycle.len(),
                names.join(" → ")
            )
        }
        None => format!(
            ". No wait-for cycle found among {} blocked input VCs",
            waits.len()
        ),
    }
}

impl VcPartition for VcNet {
    type Record = PacketDone;
    fn router_range(&self) -> std::ops::Range<usize> {
        self.routers()
    }
    fn ports_per_router(&self) -> usize {
        P
    }
    fn set_measuring(&mut self, on: bool) {
        self.measuring = on;
    }
    fn channel_busy(&self, c: usize) -> u64 {
        self.busy(c)
    }
    fn router_channels(&self) -> Vec<usize> {
        self.inter_router_channels().collect()
    }
    fn waits(&self) -> Vec<(InputVc, InputVc)> {
        VcNet::waits(self)
    }
    fn input_vc_name(&self, vc: InputVc) -> String {
        VcNet::input_vc_name(self, vc)
    }
}

/// A VC network simulated by several threads, possibly of several processes (MPI ranks),
/// with the sequential network's interface and results: [`ParVcNet`] (the grid) or
/// `ParNet<VcAnyNet>` (any network). Spread over ranks, every rank drives the whole network
/// the same way (this driver is replicated) and simulates its block of the partitions.
pub struct ParNet<N: VcPartition> {
    parts: Lockstep<N>,
    /// Per terminal: its partition.
    terminal_part: Vec<u32>,
    watchdog: u64,
    pub now: u64,
    /// Packets created and not yet delivered, over the whole network.
    in_network: i64,
    /// The cycle a packet entered an empty network (the watchdog counts from there).
    idle_reset: u64,
    measuring: bool,
    pub deadlocked: bool,
    done: Vec<(u64, PacketDone)>,
}

/// The grid network on several threads.
pub type ParVcNet = ParNet<VcNet>;

impl ParNet<VcNet> {
    /// `grid` in `threads` partitions of (nearly) equal router counts, each on its own thread.
    pub fn new(grid: Grid, p: VcParams, threads: usize) -> Result<ParVcNet, Invalid> {
        Self::spread(grid, p, threads, None)
    }

    /// As [`ParNet::new`], or with `ranks`, `ranks × threads` partitions of which this
    /// process builds and simulates its rank's `threads`.
    pub fn spread(
        grid: Grid,
        p: VcParams,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<ParVcNet, Invalid> {
        let watchdog = p.watchdog;
        let total = threads * ranks.as_ref().map_or(1, |x| x.size());
        let parts = Lockstep::<VcNet>::local_block(total, ranks.as_deref())
            .map(|k| VcNet::partition(grid, p.clone(), total, k))
            .collect::<Result<Vec<_>, _>>()?;
        let routers = grid.x * grid.y;
        let split = Split {
            items: routers,
            parts: total,
        };
        // One terminal per router.
        let terminal_part = (0..routers).map(|r| split.part_of(r) as u32).collect();
        Ok(Self::from_block(
            parts,
            total,
            routers,
            terminal_part,
            watchdog,
            ranks,
        ))
    }
}

impl<N: VcPartition> ParNet<N> {
    /// Runs `parts`, this process's block of `total` partitions of contiguous router ranges
    /// covering `routers` in order (all of them unless spread over `ranks`), with
    /// `terminal_part` the partition of each terminal.
    pub fn from_block(
        parts: Vec<N>,
        total: usize,
        routers: usize,
        terminal_part: Vec<u32>,
        watchdog: u64,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> ParNet<N> {
        let split = Split {
            items: routers,
            parts: total,
        };
        let parts = Lockstep::new_or_spread(parts, total, ranks);
        debug_assert!(
            parts
                .local()
                .all(|k| parts.part(k).router_range() == split.range(k)),
            "partitions follow the split"
        );
        ParNet {
            parts,
            terminal_part,
            watchdog,
            now: 0,
            in_network: 0,
            idle_reset: 0,
            measuring: false,
            deadlocked: false,
            done: Vec::new(),
        }
    }

    /// Ports per router (channel `router · radix + port`).
    pub fn ports_per_router(&self) -> usize {
        self.parts.part(self.parts.local().start).ports_per_router()
    }

    /// Terminals (endpoints).
    pub fn nodes(&self) -> usize {
        self.terminal_part.len()
    }

    pub fn measuring(&self) -> bool {
        self.measuring
    }

    pub fn set_measuring(&mut self, on: bool) {
        if on != self.measuring {
            self.measuring = on;
            self.parts.for_each_local(|part| part.set_measuring(on));
        }
    }

    /// Packets created and not yet delivered.
    pub fn in_network(&self) -> u64 {
        self.in_network as u64
    }

    /// Creates a packet of `len` flits at terminal `src` now (taken in by its partition at
    /// the start of the next cycle, before anything could inject it).
    pub fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        if self.in_network == 0 {
            self.idle_reset = self.now;
        }
        self.in_network += 1;
        let k = self.terminal_part[src] as usize;
        self.parts.post(k, VcMsg::Create { src, dst, len, tag });
    }

    /// One clock of the whole network (as [`VcNet::step`]).
    pub fn step<O: VcObserver>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        let stepped = self.parts.cycle(&mut self.done);
        for (now, d) in self.done.drain(..) {
            self.in_network -= 1;
            obs.delivered(now, &d);
        }
        stepped?;
        let now = self.now;
        if self.in_network > 0 && now >= self.watchdog {
            let moved = self.parts.last_active().max(self.idle_reset);
            if now - moved >= self.watchdog {
                self.deadlocked = true;
                // Collective when spread over ranks: every rank reaches this in the same cycle.
                let mut waits: Vec<(InputVc, InputVc)> = self
                    .parts
                    .gather(|part| part.waits())
                    .into_iter()
                    .flatten()
                    .collect();
                waits.sort_unstable();
                let part = self.parts.part(self.parts.local().start);
                return Err(ModelError::Failed(format!(
                    "deadlock: no flit moved for {} cycles (cycle {now}) with {} packets in the network{}",
                    self.watchdog,
                    self.in_network,
                    describe_waits(&waits, |c| part.input_vc_name(c))
                )));
            }
        }
        self.now += 1;
        Ok(())
    }

    /// Output channels that join two routers (global `router · radix + port`, ascending)
    /// with the flits sent on each while measuring. Collective when spread over ranks.
    pub fn router_channel_loads(&self) -> Vec<(usize, u64)> {
        self.parts
            .gather(|part| {
                let lo = part.router_range().start * part.ports_per_router();
                part.router_channels()
                    .into_iter()
                    .map(|c| (lo + c, part.channel_busy(c)))
                    .collect::<Vec<_>>()
            })
            .into_iter()
            .flatten()
            .collect()
    }
}
