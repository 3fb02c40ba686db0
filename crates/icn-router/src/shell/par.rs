//! A VC network partitioned over threads, for any microarchitecture: [`ParNet`].
//!
//! Each partition is a network of a contiguous range of routers (the grid's
//! `VcNet::partition`, the any-radix `VcAnyNet::partition`) run by [`icn_engine::lockstep`]. A flit leaving for another partition's router lands there
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
//! port and VC (the grid's `VcNet::route`), not from state carried by the packet. The watchdog looks at
//! the whole network: packets created minus delivered over all partitions, and the latest
//! cycle any of them moved a flit. Tests: `grid/par_tests.rs`.
//!
//! **Across processes.** [`ParNet::spread`] (and `ParNet::any_spread`) build only this MPI
//! rank's block of `ranks × threads` partitions; the driver below runs replicated on every
//! rank, fed every partition's deliveries by [`Lockstep::spread`], and its whole-network
//! queries ([`ParNet::router_channel_loads`]) are collective. Tests: `tests/spread_ranks.rs`.

use super::{HEAD, PacketDone, REMOTE, Shell, TAIL, VcObserver, event, flit};
use icn_engine::ModelError;
use icn_engine::lockstep::{Exchange, Lockstep, Partition, Split};
use serde::{Serialize, de::DeserializeOwned};
use std::sync::Arc;

/// What one partition of a VC network sends another: a flit landing in, or a credit
/// returning to, one of its routers at cycle `at` (local indices of the receiver). A head flit
/// carries its packet's record `R`, which the receiver keeps under an id of its own until the
/// tail leaves.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum VcMsg<R> {
    Flit {
        at: u64,
        ivc: u32,
        flags: u8,
        packet: Option<R>,
    },
    Credit {
        at: u64,
        counter: u32,
    },
    /// A packet created now at source `src` (from the driver's `enqueue_tagged`).
    Create {
        src: usize,
        dst: usize,
        len: u32,
        tag: u64,
    },
}

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

/// Takes in what other partitions sent during the last cycle.
pub(crate) fn absorb<N: VcPartition>(net: &mut N, inbox: &mut Vec<VcMsg<Record<N>>>) {
    for m in inbox.drain(..) {
        match m {
            VcMsg::Credit { at, counter } => {
                let sh = net.shell_mut();
                sh.creds[at as usize & sh.ring_mask].push(counter);
            }
            VcMsg::Create { src, dst, len, tag } => net.enqueue_tagged(src, dst, len, tag),
            VcMsg::Flit {
                at,
                ivc,
                flags,
                packet,
            } => {
                let sh = net.shell_mut();
                let id = match packet {
                    Some((info, x)) => {
                        let id = sh.keep(info, x);
                        sh.arriving[ivc as usize] = id;
                        id
                    }
                    None => sh.arriving[ivc as usize],
                };
                sh.flits[at as usize & sh.ring_mask].push(event(ivc, flit(id, flags)));
            }
        }
    }
}

/// Sends the flits and credits of the cycle just simulated to their partitions; a head
/// takes its packet's record along, which is forgotten here once the tail has left.
pub(crate) fn send<N: VcPartition>(net: &mut N, outbox: &mut [Vec<VcMsg<Record<N>>>]) {
    let v = net.vcs() as u32;
    let sh = net.shell_mut();
    let mut flits = std::mem::take(&mut sh.sent_flits);
    for (at, e) in flits.drain(..) {
        let (target, f) = ((e >> 32) as u32 & !REMOTE, e as u32);
        let (q, base) = sh.remote_flit[(target / v) as usize];
        let id = f >> 2;
        let packet = (f & u32::from(HEAD) != 0).then(|| (sh.pk[id as usize], sh.pk_x[id as usize]));
        if f & u32::from(TAIL) != 0 {
            sh.forget(id);
        }
        outbox[q as usize].push(VcMsg::Flit {
            at,
            ivc: base + target % v,
            flags: (f & 3) as u8,
            packet,
        });
    }
    sh.sent_flits = flits;
    for (at, c) in sh.sent_creds.drain(..) {
        let c = c & !REMOTE;
        let (q, base) = sh.remote_cred[(c / v) as usize];
        outbox[q as usize].push(VcMsg::Credit {
            at,
            counter: base + c % v,
        });
    }
}

/// The watchdog of a whole network, after its cycle: `Err` with the wait-for diagnosis when
/// packets are in the network and no flit moved for `limit` cycles (a partition's is the
/// driver's, [`ParNet::step`]).
#[inline(always)]
pub(crate) fn watchdog<N: VcPartition>(
    net: &mut N,
    limit: u64,
    wall_s: u64,
) -> Result<(), ModelError> {
    if let Some(by_wall) = net.shell_mut().stalled(limit, wall_s) {
        return Err(stalled(net, limit, by_wall.then_some(wall_s)));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn stalled<N: VcPartition>(net: &mut N, limit: u64, wall_s: Option<u64>) -> ModelError {
    net.shell_mut().deadlocked = true;
    let (now, in_network) = (net.shell().now, net.shell().in_network);
    let still = match wall_s {
        Some(seconds) => super::Still::Wall {
            seconds,
            cycles: now - net.shell().last_move,
        },
        None => super::Still::Cycles(limit),
    };
    super::deadlock(still, now, in_network, net.waits(), |c| {
        net.input_vc_name(c)
    })
}

/// What a head flit takes to another partition: its packet's record and what the
/// microarchitecture keeps with it.
pub type Record<N> = (PacketDone, <N as VcPartition>::Extra);

/// [`Partition`] for a microarchitecture `$net` keeping `$extra` per packet: take in, step,
/// send out, written once.
macro_rules! vc_partition {
    ($net:ty, $extra:ty) => {
        impl icn_engine::lockstep::Partition for $net {
            type Message = $crate::shell::par::VcMsg<($crate::PacketDone, $extra)>;
            type Done = (u64, $crate::PacketDone);
            type Error = icn_engine::ModelError;

            fn cycle(
                &mut self,
                inbox: &mut Vec<Self::Message>,
                outbox: &mut [Vec<Self::Message>],
                done: &mut Vec<Self::Done>,
            ) -> Result<(), icn_engine::ModelError> {
                $crate::shell::par::absorb(self, inbox);
                let stepped = self.step(done);
                $crate::shell::par::send(self, outbox);
                stepped
            }

            fn panicked(why: String) -> icn_engine::ModelError {
                icn_engine::ModelError::Failed(format!(
                    "a partition of the VC network panicked: {why}"
                ))
            }

            fn last_active(&self) -> u64 {
                $crate::shell::par::VcPartition::shell(self).last_move
            }
        }
    };
}
pub(crate) use vc_partition;

/// A VC router microarchitecture as the shell and the driver see it (its [`Partition`] comes
/// from `vc_partition!`). Partition 0 of 1 is a whole network.
pub trait VcPartition:
    Partition<Message = VcMsg<Record<Self>>, Done = (u64, PacketDone), Error = ModelError>
{
    /// What it keeps per packet besides the record, carried by a head to another partition.
    type Extra: Copy + Send + Serialize + DeserializeOwned + 'static;
    fn shell(&self) -> &Shell<Self::Extra>;
    fn shell_mut(&mut self) -> &mut Shell<Self::Extra>;
    /// VCs per port.
    fn vcs(&self) -> usize;
    /// Creates a packet of `len` flits at terminal `src` (of this partition) now.
    fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64);
    /// The global routers simulated here.
    fn router_range(&self) -> std::ops::Range<usize>;
    /// Ports per router (channel `router · radix + port`).
    fn ports_per_router(&self) -> usize;
    fn set_measuring(&mut self, on: bool) {
        self.shell_mut().measuring = on;
    }
    /// No input VC routing or waiting for the switch (the allocators' masks are empty).
    fn routers_idle(&self) -> bool;
    /// Whether an empty cycle would change nothing here but the clock (see [`Shell::quiet`]).
    fn quiet(&self) -> bool {
        self.shell().quiet() && self.routers_idle()
    }
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

/// A VC network simulated by several threads, possibly of several processes (MPI ranks),
/// with the sequential network's interface and results: [`ParVcNet`] (the grid) or
/// `ParNet<VcAnyNet>` (any network). Spread over ranks, every rank drives the whole network
/// the same way (this driver is replicated) and simulates its block of the partitions.
pub struct ParNet<N: VcPartition> {
    parts: Lockstep<N>,
    /// Per terminal: its partition.
    terminal_part: Vec<u32>,
    watchdog: u64,
    watchdog_wall_s: u64,
    wall: icn_engine::watchdog::StallClock,
    pub now: u64,
    /// Packets created and not yet delivered, over the whole network.
    in_network: i64,
    /// The cycle a packet entered an empty network (the watchdog counts from there).
    idle_reset: u64,
    measuring: bool,
    pub deadlocked: bool,
    done: Vec<(u64, PacketDone)>,
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
        (watchdog, watchdog_wall_s): (u64, u64),
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
            watchdog_wall_s,
            wall: Default::default(),
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

    /// Jumps `cycles` empty cycles at once, as that many steps would, if nothing is in the
    /// network, no flit or credit is between partitions and every partition is quiet
    /// ([`VcPartition::quiet`]); false (nothing done) otherwise. Collective when spread over
    /// ranks: every rank asks at the same cycle and gets the same answer.
    pub fn skip_quiet(&mut self, cycles: u64) -> bool {
        if self.in_network != 0 || !self.parts.quiet(|part| part.quiet()) {
            return false;
        }
        self.parts
            .for_each_local(|part| part.shell_mut().now += cycles);
        self.now += cycles;
        true
    }

    /// One clock of the whole network (as a whole network's `step`).
    pub fn step<O: VcObserver>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        let stepped = self.parts.cycle(&mut self.done);
        for (now, d) in self.done.drain(..) {
            self.in_network -= 1;
            obs.delivered(now, &d);
        }
        stepped?;
        let now = self.now;
        if self.in_network > 0 {
            let moved = self.parts.last_active().max(self.idle_reset);
            let still = now - moved;
            // The wall clock's verdict, agreed by every rank (each reaches this cycle).
            let by_wall = still < self.watchdog
                && still >= icn_engine::watchdog::CHECK_EVERY
                && self.wall_expired(moved, still);
            if still >= self.watchdog || by_wall {
                self.deadlocked = true;
                // Collective when spread over ranks: every rank reaches this in the same cycle.
                let waits: Vec<(InputVc, InputVc)> = self
                    .parts
                    .gather(|part| part.waits())
                    .into_iter()
                    .flatten()
                    .collect();
                let part = self.parts.part(self.parts.local().start);
                let how = if by_wall {
                    super::Still::Wall {
                        seconds: self.watchdog_wall_s,
                        cycles: still,
                    }
                } else {
                    super::Still::Cycles(self.watchdog)
                };
                return Err(super::deadlock(how, now, self.in_network, waits, |c| {
                    part.input_vc_name(c)
                }));
            }
        }
        self.now += 1;
        Ok(())
    }

    /// Whether this stall has lasted `watchdog_wall_s` by the wall clock, on any rank: every
    /// rank asks at the same still cycles (collective when spread over ranks).
    fn wall_expired(&mut self, moved: u64, still: u64) -> bool {
        if still & (icn_engine::watchdog::CHECK_EVERY - 1) != 0 {
            return false;
        }
        let mine = self.wall.expired(moved, still, self.watchdog_wall_s);
        self.parts.gather(|_| mine).into_iter().any(|e| e)
    }

    /// Every partition's credit counters are back at their buffer size. Collective when
    /// spread over ranks.
    pub fn credits_full(&self) -> bool {
        self.parts
            .gather(|part| part.shell().credits_full())
            .into_iter()
            .all(|full| full)
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
