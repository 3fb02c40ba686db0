//! The X-Switch network partitioned over threads: [`ParXNet`].
//!
//! Each partition is a [`XNet`] of a contiguous range of switches with the NIAs attached
//! to them ([`XNet::partition`]), run by [`icn_engine::lockstep`]. A symbol sent in cycle
//! `t` on an X-Link is received in cycle `t + link_delay` (`link_delay ≥ 1`, checked by
//! [`NetParams::validate`]): that delay line is the lookahead. A frame character or a
//! STOP/GO sent to another partition's switch is an [`XMsg`], taken in before the receiver's
//! next cycle and put on its copy of the delay line in the slot it would have had, so the
//! receiver reads it in cycle `t + link_delay` as the sequential network does. An NIA and
//! its switch are always in the same partition.
//!
//! **Why the results are the sequential run's, bit for bit.** Every partition keeps the
//! whole network's port and channel indexing (vectors of the whole size; it touches only its
//! own entries), so it visits its channels and ports in the sequential order. Within a cycle
//! the sequential network does: (1) receive, in channel order — a switch input's FIFO, or its
//! output's stopped flag, is fed by one channel only, so only the NIA deliveries depend on
//! the order; (2a) switch outputs in port order, each reading and changing its own switch
//! only; (2b) NIAs in index order, each changing only itself. A partition does the same for
//! its switches and NIAs. The observer's events of a cycle come out in the sequential order:
//! deliveries by the index of the channel they arrived on, then frame starts by NIA index;
//! the partitions' events are merged by that key ([`XDone::key`]). The watchdog looks at the
//! whole network: frames started minus delivered over all partitions, and the latest cycle
//! any of them moved a frame symbol; its diagnosis is computed on the switch state
//! assembled from the partitions, so it is the same text. Tests: `xswitch/par_tests.rs`.
//!
//! **Across processes.** [`ParXNet::spread`] builds only this MPI rank's block of
//! `ranks × threads` partitions; the driver runs replicated on every rank (fed every
//! partition's events by [`Lockstep::spread`]), and the queries that read partitions —
//! counters, grant log, sources idle, the deadlock diagnosis — gather them from every rank.
//! Tests: `tests/spread_ranks.rs`.

use super::*;
use icn_engine::lockstep::{Exchange, Lockstep, Partition};

/// What a partition of a [`XNet`] receives: a symbol sent on one of its incoming links
/// in the cycle just simulated (by the channel's global index), or a message submitted to one
/// of its NIAs by the driver.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub enum XMsg {
    Symbol {
        channel: u32,
        sym: Symbol,
    },
    Submit {
        nia: u32,
        dst: u32,
        size: u32,
        created: u64,
    },
}

/// An observer event of a partition's cycle, to be replayed in the sequential order.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub enum XDone {
    /// A frame accepted by NIA `dst` from channel `channel` (the switch output feeding it).
    Delivered {
        channel: u32,
        now: u64,
        dst: u32,
        f: Delivered,
    },
    /// A frame started by NIA `src`.
    Started { now: u64, src: u32, f: Started },
}

impl XDone {
    /// The sequential network's order within a cycle: deliveries in channel order (receive
    /// phase), then frame starts in NIA order (the NIA phase).
    fn key(&self) -> (u8, u32) {
        match *self {
            XDone::Delivered { channel, .. } => (0, channel),
            XDone::Started { src, .. } => (1, src),
        }
    }
}

/// Collects a partition's observer events with their sort key.
struct Collect<'a> {
    done: &'a mut Vec<XDone>,
    /// Per NIA, the channel that feeds it.
    feed: &'a [u32],
}

impl Observer for Collect<'_> {
    fn started(&mut self, now: u64, src: usize, f: &Started) {
        self.done.push(XDone::Started {
            now,
            src: src as u32,
            f: *f,
        });
    }
    fn delivered(&mut self, now: u64, dst: usize, f: &Delivered) {
        self.done.push(XDone::Delivered {
            channel: self.feed[dst],
            now,
            dst: dst as u32,
            f: *f,
        });
    }
}

/// Per NIA, the switch output channel that feeds it.
fn feeding_channels(topo: &Topology) -> Vec<u32> {
    let mut feed = vec![NONE; topo.nias()];
    for (c, link) in topo.links.iter().enumerate() {
        if let Some(XLinkEnd::Nia(n)) = *link {
            feed[n] = c as u32;
        }
    }
    feed
}

impl XNet {
    /// Takes in what the driver and the other partitions sent during the last cycle.
    fn absorb(&mut self, inbox: &mut Vec<XMsg>) {
        let d = self.p.link_delay;
        for m in inbox.drain(..) {
            match m {
                XMsg::Submit {
                    nia,
                    dst,
                    size,
                    created,
                } => self.nias[nia as usize].submit(dst as usize, size, created),
                XMsg::Symbol { channel, sym } => {
                    // Sent in cycle `now − 1`, into the slot read again in `now − 1 + d`.
                    let slot = ((self.now - 1) % d as u64) as usize;
                    let c = channel as usize;
                    self.line[c * d + slot] = sym;
                    self.lpend[slot * self.lwords + c / 64] |= 1 << (c % 64);
                }
            }
        }
    }

    /// Sends the symbols of the cycle just simulated to the partitions they lead to.
    fn send(&mut self, outbox: &mut [Vec<XMsg>]) {
        for (channel, sym) in self.sent.drain(..) {
            let q = self.remote_to[channel as usize] as usize;
            outbox[q].push(XMsg::Symbol { channel, sym });
        }
    }
}

/// A partition with the table that keys its deliveries.
pub struct XPart {
    net: XNet,
    feed: Arc<Vec<u32>>,
}

impl Partition for XPart {
    type Message = XMsg;
    type Done = XDone;
    type Error = ModelError;

    fn cycle(
        &mut self,
        inbox: &mut Vec<XMsg>,
        outbox: &mut [Vec<XMsg>],
        done: &mut Vec<XDone>,
    ) -> Result<(), ModelError> {
        self.net.absorb(inbox);
        let stepped = self.net.step(&mut Collect {
            done,
            feed: &self.feed,
        });
        self.net.send(outbox);
        stepped
    }

    fn panicked(why: String) -> ModelError {
        ModelError::Failed(format!(
            "a partition of the X-Switch network panicked: {why}"
        ))
    }

    fn last_active(&self) -> u64 {
        self.net.last_move()
    }
}

/// An X-Switch network simulated by several threads, possibly of several processes (MPI
/// ranks), with [`XNet`]'s interface and results. Spread over ranks, every rank drives the
/// whole network the same way (this driver is replicated) and simulates its block of the
/// partitions; the queries that read partitions ([`ParXNet::counters`], …) are collective.
pub struct ParXNet {
    parts: Lockstep<XPart>,
    pub topo: Arc<Topology>,
    /// Partition of each NIA.
    nia_part: Vec<u32>,
    watchdog: u64,
    watchdog_wall_s: u64,
    wall: icn_engine::watchdog::StallClock,
    pub now: u64,
    /// Frames started and not yet delivered, over the whole network.
    in_flight: i64,
    measuring: bool,
    pub deadlocked: bool,
    done: Vec<XDone>,
}

/// What the deadlock diagnosis needs of one partition: its switches' ports.
#[derive(serde::Serialize, serde::Deserialize)]
struct PortState {
    own: std::ops::Range<usize>,
    bound: Vec<bool>,
    fsm: Vec<OutputFsm>,
    stopped: Vec<bool>,
    fifo: Vec<Fifo>,
}

impl ParXNet {
    /// `topo` in `threads` partitions of (nearly) equal switch counts, each on its own thread.
    pub fn new(topo: Topology, p: NetParams, threads: usize) -> Result<ParXNet, Invalid> {
        Self::spread(topo, p, threads, None)
    }

    /// As [`ParXNet::new`], or with `ranks`, `ranks × threads` partitions of which this
    /// process builds and simulates its rank's `threads`.
    pub fn spread(
        topo: Topology,
        p: NetParams,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<ParXNet, Invalid> {
        let topo = Arc::new(topo);
        let feed = Arc::new(feeding_channels(&topo));
        let (watchdog, watchdog_wall_s) = (p.watchdog, p.watchdog_wall_s);
        let total = threads * ranks.as_ref().map_or(1, |x| x.size());
        let parts = Lockstep::<XPart>::local_block(total, ranks.as_deref())
            .map(|k| {
                XNet::partition(topo.clone(), p.clone(), total, k).map(|net| XPart {
                    net,
                    feed: feed.clone(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let split = icn_engine::lockstep::Split {
            items: topo.switches,
            parts: total,
        };
        let nia_part = topo
            .nia_at
            .iter()
            .map(|&(sw, _)| split.part_of(sw) as u32)
            .collect();
        Ok(ParXNet {
            parts: Lockstep::new_or_spread(parts, total, ranks),
            topo,
            nia_part,
            watchdog,
            watchdog_wall_s,
            wall: Default::default(),
            now: 0,
            in_flight: 0,
            measuring: false,
            deadlocked: false,
            done: Vec::new(),
        })
    }

    pub fn nias(&self) -> usize {
        self.nia_part.len()
    }

    pub fn measuring(&self) -> bool {
        self.measuring
    }

    pub fn set_measuring(&mut self, on: bool) {
        if on != self.measuring {
            self.measuring = on;
            self.parts.for_each_local(|part| part.net.measuring = on);
        }
    }

    /// Frames started and not yet delivered.
    pub fn in_flight(&self) -> u64 {
        self.in_flight as u64
    }

    /// True when no NIA has a message to send or a frame under way. Collective when spread.
    pub fn sources_idle(&self) -> bool {
        self.parts
            .gather(|part| part.net.sources_idle())
            .into_iter()
            .all(|idle| idle)
    }

    /// As [`Nia::submit`] on NIA `src` now: taken in before the next cycle.
    pub fn submit(&mut self, src: usize, dst: usize, size: u32) {
        let k = self.nia_part[src] as usize;
        self.parts.post(
            k,
            XMsg::Submit {
                nia: src as u32,
                dst: dst as u32,
                size,
                created: self.now,
            },
        );
    }

    /// As [`XNet::skip_settled`] on the whole network, if it has settled: no frame in
    /// flight, every partition quiet ([`XNet::settled`] but for its own frame count) and no
    /// symbol or submission between partitions; false (nothing done) otherwise. Collective
    /// when spread over ranks: every rank asks at the same cycle and gets the same answer.
    pub fn skip_settled(&mut self, cycles: u64) -> bool {
        if self.in_flight != 0 || !self.parts.quiet(|part| part.net.quiet()) {
            return false;
        }
        self.parts
            .for_each_local(|part| part.net.skip_settled(cycles));
        self.now += cycles;
        true
    }

    /// One clock of the whole network (as [`XNet::step`]).
    pub fn step<O: Observer>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        let stepped = self.parts.cycle(&mut self.done);
        // Each partition's events are in the sequential order already; merge them.
        self.done.sort_by_key(XDone::key);
        for e in self.done.drain(..) {
            match e {
                XDone::Delivered { now, dst, f, .. } => {
                    self.in_flight -= 1;
                    obs.delivered(now, dst as usize, &f);
                }
                XDone::Started { now, src, f } => {
                    self.in_flight += 1;
                    obs.started(now, src as usize, &f);
                }
            }
        }
        stepped?;
        let now = self.now;
        if self.in_flight > 0 {
            let moved = self.parts.last_active();
            let still = now - moved;
            if still >= self.watchdog {
                self.deadlocked = true;
                let how = format!("no frame symbol moved for {still} cycles");
                return Err(ModelError::Failed(self.diagnose(&how)));
            }
            // The wall clock's verdict, agreed by every rank (each asks at the same cycles).
            if still & (icn_engine::watchdog::CHECK_EVERY - 1) == 0 && still > 0 {
                let mine = self.wall.expired(moved, still, self.watchdog_wall_s);
                if self.parts.gather(|_| mine).into_iter().any(|e| e) {
                    self.deadlocked = true;
                    let how = icn_engine::watchdog::wall_message(self.watchdog_wall_s, still);
                    return Err(ModelError::Failed(self.diagnose(&how)));
                }
            }
        }
        self.now += 1;
        Ok(())
    }

    /// The wait-for diagnosis of [`XNet::diagnose`] over the whole network.
    fn diagnose(&self, how: &str) -> String {
        let n = self.topo.switches * PORTS;
        let mut bound = vec![false; n];
        let mut fsm = vec![OutputFsm::default(); n];
        let mut stopped = vec![false; n];
        let mut fifo = vec![Fifo::new(1); n];
        let states = self.parts.gather(|part| {
            let net = &part.net;
            let r = net.own_ports.clone();
            PortState {
                own: r.clone(),
                bound: net.bound[r.clone()].to_vec(),
                fsm: net.fsm[r.clone()].to_vec(),
                stopped: net.stopped[r.clone()].to_vec(),
                fifo: net.fifo[r].to_vec(),
            }
        });
        for s in states {
            let r = s.own;
            bound[r.clone()].copy_from_slice(&s.bound);
            fsm[r.clone()].copy_from_slice(&s.fsm);
            stopped[r.clone()].copy_from_slice(&s.stopped);
            fifo[r].clone_from_slice(&s.fifo);
        }
        // Every partition has the whole network's destinations.
        let dest = self.parts.part(self.parts.local().start).net.dest.clone();
        WaitFor {
            bound: &bound,
            fsm: &fsm,
            stopped: &stopped,
            fifo: &fifo,
            dest: &dest,
        }
        .diagnose(how, self.now, self.in_flight as u64)
    }

    /// The counters of the whole network (sums over the partitions; each channel is counted
    /// by the partition that sends on it). Collective when spread.
    pub fn counters(&self) -> Counters {
        let mut c = Counters::default();
        for p in self.parts.gather(|part| part.net.counters.clone()) {
            c.stops += p.stops;
            c.gos += p.gos;
            c.wait_cycles += p.wait_cycles;
            c.cycles = p.cycles;
            if c.busy.is_empty() {
                c.busy = p.busy;
            } else {
                for (a, b) in c.busy.iter_mut().zip(&p.busy) {
                    *a += b;
                }
            }
        }
        c
    }

    /// Logs the grants of output port `o` (as [`XNet::grant_log`]).
    pub fn log_grants(&mut self, o: usize) {
        self.parts.for_each_local(|part| {
            if part.net.own_ports.contains(&o) {
                part.net.grant_log = Some((o, Vec::new()));
            }
        });
    }

    /// The grant log set by [`ParXNet::log_grants`]. Collective when spread.
    pub fn grant_log(&self) -> Option<(usize, Vec<(u64, Port)>)> {
        self.parts
            .gather(|part| part.net.grant_log.clone())
            .into_iter()
            .find_map(|log| log)
    }
}
