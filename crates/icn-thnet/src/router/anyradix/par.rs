//! [`VcAnyNet`] in partitions over threads: `ParNet<VcAnyNet>` ([`crate::router::grid::par`]).
//!
//! As for the grid (`router/grid/par.rs`, whose module doc argues why the results are the
//! sequential run's bit for bit): a partition simulates a contiguous range of routers with
//! their terminals; flits and credits for other partitions leave as [`VcMsg`]s that arrive
//! after their link's delay (per port here: dragonfly global links are longer, and all are
//! ≥ 1 cycle, the lookahead); a head carries its packet's record and routing header. The
//! routers' random choices (Valiant, UGAL, random up ports) come from a stream per router, so
//! they do not depend on which thread simulates the router.

use super::*;
use crate::router::grid::par::{ParNet, VcPartition};
use crate::router::grid::{REMOTE, VcMsg};
use icn_engine::lockstep::{Exchange, Lockstep, Partition};

/// What a head flit takes to another partition.
type Record = (PacketDone, Header);

impl VcAnyNet {
    fn absorb(&mut self, inbox: &mut Vec<VcMsg<Record>>) {
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
                        Some((info, hdr)) => {
                            let id = self.keep(info, hdr);
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

    fn send(&mut self, outbox: &mut [Vec<VcMsg<Record>>]) {
        let v = self.v as u32;
        let mut flits = std::mem::take(&mut self.sent_flits);
        for (at, e) in flits.drain(..) {
            let (target, f) = ((e >> 32) as u32 & !REMOTE, e as u32);
            let (q, base) = self.remote_flit[(target / v) as usize];
            let id = (f >> 2) as usize;
            let packet = (f & u32::from(HEAD) != 0).then(|| (self.pk[id], self.pk_hdr[id]));
            if f & u32::from(TAIL) != 0 {
                self.free.push(id as u32);
            }
            outbox[q as usize].push(VcMsg::Flit {
                at,
                ivc: base + target % v,
                flags: (f & 3) as u8,
                packet,
            });
        }
        self.sent_flits = flits;
        for (at, c) in self.sent_creds.drain(..) {
            let c = c & !REMOTE;
            let (q, base) = self.remote_cred[(c / v) as usize];
            outbox[q as usize].push(VcMsg::Credit {
                at,
                counter: base + c % v,
            });
        }
    }
}

impl Partition for VcAnyNet {
    type Message = VcMsg<Record>;
    type Done = (u64, PacketDone);
    type Error = ModelError;

    fn cycle(
        &mut self,
        inbox: &mut Vec<VcMsg<Record>>,
        outbox: &mut [Vec<VcMsg<Record>>],
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

impl VcPartition for VcAnyNet {
    type Record = Record;
    fn router_range(&self) -> std::ops::Range<usize> {
        self.lo..self.lo + self.routers
    }
    fn ports_per_router(&self) -> usize {
        self.radix
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
        VcAnyNet::waits(self)
    }
    fn input_vc_name(&self, vc: InputVc) -> String {
        VcAnyNet::input_vc_name(self, vc)
    }
}

impl ParNet<VcAnyNet> {
    /// [`VcAnyNet::new`]'s network in `threads` partitions of (nearly) equal router counts.
    pub fn any(
        net: Arc<Network>,
        routing: Arc<dyn Routing>,
        p: VcParams,
        global_delay: u64,
        seed: u64,
        threads: usize,
    ) -> Result<ParNet<VcAnyNet>, Invalid> {
        Self::any_spread(net, routing, p, global_delay, seed, threads, None)
    }

    /// As [`ParNet::any`], or with `ranks`, `ranks × threads` partitions of which this
    /// process builds and simulates its rank's `threads`.
    pub fn any_spread(
        net: Arc<Network>,
        routing: Arc<dyn Routing>,
        p: VcParams,
        global_delay: u64,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<ParNet<VcAnyNet>, Invalid> {
        let watchdog = p.watchdog;
        let total = threads * ranks.as_ref().map_or(1, |x| x.size());
        let parts = Lockstep::<VcAnyNet>::local_block(total, ranks.as_deref())
            .map(|k| {
                VcAnyNet::partition(
                    net.clone(),
                    routing.clone(),
                    p.clone(),
                    global_delay,
                    seed,
                    total,
                    k,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let split = icn_engine::lockstep::Split {
            items: net.routers() as usize,
            parts: total,
        };
        let terminal_part = (0..net.terminals())
            .map(|t| split.part_of(net.terminal_at(t).0 as usize) as u32)
            .collect();
        Ok(ParNet::from_block(
            parts,
            total,
            net.routers() as usize,
            terminal_part,
            watchdog,
            ranks,
        ))
    }
}
