//! The switched system: one ring simulator ([`Sim`]) per ring, stepped in lock-step, and the
//! switches that move sends between them.
//!
//! Per cycle: (1) hosts create sends (one traffic generator over all hosts, one random stream
//! per host, so arrivals do not depend on what the rings do); each is queued at its host with
//! the local destination on its ring — the target, or the agent towards the target's ring;
//! (2) every ring does one cycle; (3) what the rings reported is booked: acceptance at the
//! final target, DONE echoes of every hop; (4) every switch moves the serviced sends at the
//! heads of its agents' input queues into the send queue of its agent on the next ring, if
//! there is room there (otherwise the send keeps its input-queue slot: back-pressure);
//! (5) with `remote_status`, switches relay serve-status changes between rings
//! ([`super::remote`]).
//!
//! A send has one global sequence number for its whole life; each ring's event log sees it as
//! an ordinary send from its hop's source to its hop's target, so every ring-level check
//! (echo matching, phases, exactly one acceptance per ring) applies per hop.

use super::config::{Arbitration, SwitchedConfig, TopologyKind};
use super::remote::Relay;
use super::topology::Topology;
use crate::config::{SciConfig, TrafficPattern};
use crate::ring::delays::Delays;
use crate::ring::measure::Measure;
use crate::ring::sim::{AgentParams, Fwd, Outbox};
use crate::ring::traffic::Traffic;
use crate::ring::{Event, Sim};
use icn_engine::stats::Summary;
use icn_engine::{ModelError, Progress};
use std::collections::HashMap;

/// A send in the system: who sent it where, when, and its retries on the hops done so far.
#[derive(Clone, Copy, Debug)]
struct Txn {
    src: u16,
    dst: u16,
    created: u64,
    retries: u32,
    local: bool,
}

/// Where a switch input's head goes: send `seq` leaves by `out` (index into the switch's
/// rings) for local node `dst` there, on its way to host `fin`.
#[derive(Clone, Copy, Debug)]
struct HeadRoute {
    seq: u64,
    out: usize,
    dst: u8,
    fin: u16,
}

/// Counters the ring-level [`Measure`] has no place for.
#[derive(Clone, Debug, Default)]
pub struct Extra {
    /// Creation → acceptance at the final target (cycles), sends created in the window.
    pub accept_delay: Delays,
    /// Creation → DONE of the final hop, intra-ring and inter-ring sends.
    pub delay_local: Delays,
    pub delay_remote: Delays,
    /// Accepted send symbols at final targets, intra- and inter-ring.
    pub symbols_local: u64,
    pub symbols_remote: u64,
    /// Sends moved through a switch in the window.
    pub forwarded: u64,
    /// Cycles (summed over agents) a serviced send waited for room on the next ring.
    pub blocked_agent_cycles: u64,
    /// Remote-status relay messages sent (each one NOTIFY on one ring).
    pub relayed: u64,
    pub relayed_symbols: u64,
}

/// One replication of a switched system.
pub struct System {
    topo: Topology,
    rings: Vec<Sim>,
    traffic: Traffic,
    seq: u64,
    txns: HashMap<u64, Txn>,
    now: u64,
    measure_start: u64,
    gen_end: u64,
    drain_limit: u64,
    lens: Vec<u8>,
    measure: Measure,
    extra: Extra,
    outbox: Vec<Outbox>,
    relay: Option<Relay>,
    arbitration: Arbitration,
    /// Round-robin arbitration: per switch and output, the input served last.
    rr: Vec<Vec<usize>>,
    /// Per switch, its agents as (ring, local id), in the switch's ring order.
    ports_of: Vec<Vec<(usize, usize)>>,
    /// Per switch and input, the route of the head last seen.
    head_cache: Vec<Vec<Option<HeadRoute>>>,
    log: Option<Vec<(u64, usize, usize, usize)>>,
    /// Driven from outside ([`System::drive_externally`]): final acceptances reported here.
    external: Option<Vec<Outbox>>,
}

impl System {
    /// Builds the system (`intelligent` selects every node's transmitter).
    pub fn new(
        cfg: &SwitchedConfig,
        topo: &Topology,
        seed: u64,
        intelligent: bool,
    ) -> Result<System, ModelError> {
        cfg.validate_fields()?;
        let params = AgentParams {
            depth: cfg.switch.queue_depth,
            service_time: cfg.switch.service_time,
            policy: cfg.switch.receiver,
            sat_quota: cfg.switch.sat_quota,
            order: cfg.retry_order,
        };
        let mut rings = Vec::with_capacity(topo.rings.len());
        // The hosts' (and transit agents') SAT quota: the top-level key, except in the
        // single-ring system, which is the `sci` model.
        let quota = if cfg.topology == TopologyKind::Single {
            cfg.ring.sat_quota
        } else {
            cfg.sat_quota
        };
        for layout in &topo.rings {
            let mut rc = SciConfig {
                nodes: layout.nodes(),
                sat_quota: quota,
                ..cfg.ring.clone()
            };
            rc.traffic.pattern = TrafficPattern::Uniform;
            rc.traffic.hotspot_node = 0;
            // On a ring with hosts an agent carries the traffic of many sources and gets the
            // switch's quota; on a transit ring all nodes are agents, peers with the ring's.
            let params = AgentParams {
                sat_quota: if layout.hosts > 0 {
                    cfg.switch.sat_quota
                } else {
                    quota
                },
                ..params
            };
            rings.push(Sim::new_switched(
                &rc,
                seed,
                intelligent,
                &layout.agent_flags(),
                params,
            )?);
        }
        let hosts = topo.hosts.len();
        let mut hc = SciConfig {
            nodes: hosts,
            ..cfg.ring.clone()
        };
        icn_engine::Invalid::check(
            hc.traffic.hotspot_node < hosts,
            "ring.traffic.hotspot_node",
            &format!("0 ..= {} (hosts − 1)", hosts - 1),
            hc.traffic.hotspot_node,
        )?;
        if hc.traffic.pattern == TrafficPattern::Trace {
            hc.traffic.pattern = TrafficPattern::Uniform;
        }
        let mut traffic = Traffic::new(&hc, seed, Default::default());
        if let Some(f) = cfg.local_fraction {
            let group_of = topo.hosts.iter().map(|&(r, _)| usize::from(r)).collect();
            traffic = traffic.with_local_mix(f, group_of);
        }
        let hot =
            (hc.traffic.pattern == TrafficPattern::Hotspot).then_some(hc.traffic.hotspot_node);
        if let Some(h) = hot.filter(|_| !cfg.hot_ring_sends) {
            let hot_ring = topo.hosts[h].0;
            for (host, _) in topo
                .hosts
                .iter()
                .enumerate()
                .filter(|(_, l)| l.0 == hot_ring)
            {
                traffic.silence(host);
            }
        }
        let relay = (intelligent && cfg.remote_status && topo.rings.len() > 1).then(|| {
            for ring in &mut rings {
                ring.enable_remote_status(hosts);
            }
            Relay::new(topo)
        });
        Ok(System {
            topo: topo.clone(),
            rings,
            traffic,
            seq: 0,
            txns: HashMap::new(),
            now: 0,
            measure_start: cfg.ring.warmup_cycles,
            gen_end: cfg.ring.warmup_cycles + cfg.ring.measure_cycles,
            drain_limit: cfg.ring.drain_limit_cycles,
            lens: hc.send_lengths().into_iter().map(|l| l as u8).collect(),
            measure: Measure::new(hosts, cfg.ring.measure_cycles, hot),
            extra: Extra::default(),
            outbox: Vec::new(),
            relay,
            arbitration: cfg.switch.arbitration,
            rr: topo.switches.iter().map(|r| vec![0; r.len()]).collect(),
            ports_of: topo
                .switches
                .iter()
                .enumerate()
                .map(|(s, rs)| {
                    rs.iter()
                        .map(|&r| {
                            let a = topo.agent_of(s as u16, usize::from(r)).unwrap_or(0);
                            (usize::from(r), usize::from(a))
                        })
                        .collect()
                })
                .collect(),
            head_cache: topo.switches.iter().map(|r| vec![None; r.len()]).collect(),
            log: None,
            external: None,
        })
    }

    /// Turns the system into a network driven from outside (the cluster's `sci-switched`
    /// fabric): no measurement window (nothing is counted, so nothing grows with the run),
    /// sends queued by [`System::offer`], final acceptances reported by
    /// [`System::step_external`].
    pub fn drive_externally(&mut self) {
        self.measure_start = u64::MAX;
        self.gen_end = u64::MAX;
        self.external = Some(Vec::new());
    }

    /// Queues send `seq` from host `src` to host `dst` at its host, towards the target or
    /// the agent towards its ring; false, with nothing changed, when the host's send queue
    /// is full.
    pub fn offer(&mut self, src: usize, dst: usize, size_class: u8, seq: u64) -> bool {
        queue_at_host(
            &self.topo,
            &mut self.rings,
            &mut self.txns,
            (src, dst, size_class, seq),
            self.now,
        )
    }

    /// Sends in host `src`'s send queue.
    pub fn host_queued(&self, src: usize) -> usize {
        let (r, local) = self.topo.hosts[src];
        self.rings[usize::from(r)].send_queued(usize::from(local))
    }

    /// One cycle without generation, appending the final acceptances of a system
    /// [driven from outside](System::drive_externally) to `out`.
    pub fn step_external(&mut self, out: &mut Vec<Outbox>) {
        self.cycle(false);
        if let Some(acc) = &mut self.external {
            out.append(acc);
        }
    }

    /// Nothing in flight and every ring settled ([`Sim::settled`]): an idle cycle changes
    /// only the clocks and the SATs' places (the relays see no change of serve status).
    pub fn settled(&self) -> bool {
        self.txns.is_empty() && self.rings.iter().all(Sim::settled)
    }

    /// Advances a [settled](System::settled) system by `cycles`, exactly as stepping.
    pub fn skip_settled(&mut self, cycles: u64) {
        for ring in &mut self.rings {
            ring.skip_settled(cycles);
        }
        self.now += cycles;
    }

    /// Turns on every ring's event log and the system's log of final acceptances.
    pub fn enable_log(&mut self) {
        for r in &mut self.rings {
            r.enable_log();
        }
        self.log = Some(Vec::new());
    }

    /// Ring `r`'s event log.
    pub fn ring_events(&self, r: usize) -> &[Event] {
        self.rings[r].events()
    }

    /// Final acceptances with the log on: (seq, source host, target host, host that
    /// accepted it).
    pub fn acceptances(&self) -> &[(u64, usize, usize, usize)] {
        self.log.as_deref().unwrap_or(&[])
    }

    pub fn rings(&self) -> &[Sim] {
        &self.rings
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    /// Sends created and queued at their hosts.
    pub fn injected(&self) -> u64 {
        self.seq
    }

    /// Sends not yet accepted at their final target.
    pub fn in_flight(&self) -> usize {
        self.txns.len()
    }

    pub fn extra(&self) -> &Extra {
        &self.extra
    }

    /// Jain index of sends accepted at the hot host by the sources on *other* rings that
    /// offered traffic, and their mean share relative to the hot ring's own sources (NaN
    /// without a hot spot).
    pub fn remote_hotspot_fairness(&self) -> (f64, f64) {
        let m = &self.measure;
        let Some(hot) = m.hot_node else {
            return (f64::NAN, f64::NAN);
        };
        let hot_ring = self.topo.hosts[hot].0;
        let (mut remote, mut local) = (Vec::new(), Vec::new());
        for s in (0..m.nodes).filter(|&s| s != hot && m.per_src_generated[s] > 0) {
            let x = m.hot_accepted_by_src[s] as f64;
            if self.topo.hosts[s].0 == hot_ring {
                local.push(x);
            } else {
                remote.push(x);
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        (
            icn_engine::stats::jain_fairness(&remote),
            mean(&remote) / mean(&local),
        )
    }

    /// Runs warm-up, measurement and drain.
    pub fn run(&mut self, progress: &dyn Progress) -> Result<(), ModelError> {
        const CHUNK: u64 = 4096;
        while self.now < self.gen_end {
            let end = (self.now + CHUNK).min(self.gen_end);
            let chunk = end - self.now;
            while self.now < end {
                self.cycle(true);
            }
            progress.advance(chunk);
            self.check_fault()?;
        }
        let limit = self.now + self.drain_limit;
        while !self.quiescent() {
            if self.now >= limit {
                return Err(ModelError::Failed(self.diagnose()));
            }
            for _ in 0..64 {
                self.cycle(false);
            }
            self.check_fault()?;
        }
        Ok(())
    }

    /// Every send accepted at its final target, every ring empty.
    pub fn quiescent(&self) -> bool {
        self.txns.is_empty() && self.rings.iter().all(Sim::quiescent)
    }

    /// The first invariant violation a ring recorded, if any.
    pub fn fault(&self) -> Option<String> {
        self.rings
            .iter()
            .enumerate()
            .find_map(|(r, ring)| ring.fault().map(|f| format!("ring {r}: {f}")))
    }

    fn check_fault(&self) -> Result<(), ModelError> {
        for (r, ring) in self.rings.iter().enumerate() {
            if let Some(f) = ring.fault() {
                return Err(ModelError::Failed(format!(
                    "SCI simulator invariant violated on ring {r}: {f}"
                )));
            }
        }
        Ok(())
    }

    fn diagnose(&self) -> String {
        format!(
            "drain did not finish within drain_limit_cycles = {}: {}",
            self.drain_limit,
            self.stuck()
        )
    }

    /// What is stuck where: sends not yet at their target, the rings that are not quiet,
    /// the switch queues.
    pub fn stuck(&self) -> String {
        let agents: Vec<String> = self
            .rings
            .iter()
            .enumerate()
            .flat_map(|(r, ring)| {
                (0..ring.nodes())
                    .filter(|&i| ring.is_agent(i) && ring.agent_queue(i) > 0)
                    .map(move |i| format!("ring {r} agent {i}: {} queued", ring.agent_queue(i)))
            })
            .collect();
        let rings: Vec<String> = self
            .rings
            .iter()
            .enumerate()
            .filter(|(_, ring)| !ring.quiescent())
            .map(|(r, ring)| format!("ring {r}: {}", ring.diagnose()))
            .collect();
        format!(
            "{} sends not yet at their target; rings: {}; switch queues: {}",
            self.txns.len(),
            rings.join(" | "),
            if agents.is_empty() {
                "empty".to_string()
            } else {
                agents.join("; ")
            }
        )
    }

    /// One cycle of the whole system (module doc).
    fn cycle(&mut self, generate: bool) {
        let measuring = self.now >= self.measure_start && self.now < self.gen_end;
        if generate {
            self.generate();
        }
        for ring in &mut self.rings {
            ring.advance(1, false);
        }
        self.book(measuring);
        self.switch();
        if let Some(relay) = &mut self.relay {
            let (messages, symbols) = relay.step(&mut self.rings);
            if measuring {
                self.extra.relayed += messages;
                self.extra.relayed_symbols += symbols;
            }
        }
        self.now += 1;
    }

    fn generate(&mut self) {
        let (topo, rings, txns) = (&self.topo, &mut self.rings, &mut self.txns);
        let (measure, lens, seq) = (&mut self.measure, &self.lens, &mut self.seq);
        let (now, measuring) = (self.now, self.now >= self.measure_start);
        self.traffic.arrivals(now, |a| {
            let (src, dst) = (usize::from(a.src), usize::from(a.dst));
            if measuring {
                measure.generated += 1;
                measure.per_src_generated[src] += 1;
                measure.generated_symbols += u64::from(lens[usize::from(a.size_class)]);
            }
            if queue_at_host(topo, rings, txns, (src, dst, a.size_class, *seq), now) {
                *seq += 1;
            } else if measuring {
                measure.source_drops += 1;
            }
        });
    }

    /// Books what the rings reported during the cycle just simulated (`self.now`).
    fn book(&mut self, measuring: bool) {
        let mut outbox = std::mem::take(&mut self.outbox);
        for r in 0..self.rings.len() {
            self.rings[r].drain_outbox(&mut outbox);
            self.book_ring(r, &mut outbox, measuring);
        }
        self.outbox = outbox;
    }

    fn book_ring(&mut self, r: usize, outbox: &mut Vec<Outbox>, measuring: bool) {
        let in_window = |created: u64| created >= self.measure_start && created < self.gen_end;
        for o in outbox.drain(..) {
            match o {
                Outbox::Accepted {
                    node,
                    seq,
                    symbols,
                    bytes,
                } => {
                    let Some(t) = self.txns.get(&seq).copied() else {
                        continue;
                    };
                    if let Some(acc) = &mut self.external {
                        acc.push(o);
                    }
                    if let Some(log) = &mut self.log {
                        let host = self.topo.hosts.iter().position(|&h| h == (r as u16, node));
                        log.push((
                            seq,
                            usize::from(t.src),
                            usize::from(t.dst),
                            host.unwrap_or(usize::MAX),
                        ));
                    }
                    if in_window(t.created) {
                        self.extra.accept_delay.add(self.now - t.created);
                    }
                    if measuring {
                        let (m, src) = (&mut self.measure, usize::from(t.src));
                        m.accepted += 1;
                        m.accepted_symbols += u64::from(symbols);
                        m.accepted_bytes += bytes;
                        m.per_src_bytes[src] += bytes;
                        m.per_src_accepted[src] += 1;
                        if m.hot_node == Some(usize::from(t.dst)) {
                            m.hot_accepted_by_src[src] += 1;
                        }
                        if t.local {
                            self.extra.symbols_local += u64::from(symbols);
                        } else {
                            self.extra.symbols_remote += u64::from(symbols);
                        }
                    }
                }
                Outbox::HopDone {
                    seq,
                    transmissions,
                    last,
                    ..
                } => {
                    let Some(t) = self.txns.get_mut(&seq) else {
                        continue;
                    };
                    t.retries += transmissions - 1;
                    if last {
                        let t = *t;
                        self.txns.remove(&seq);
                        if in_window(t.created) {
                            let delay = self.now - t.created;
                            let m = &mut self.measure;
                            m.per_src_delay[usize::from(t.src)].add(delay);
                            m.retries += u64::from(t.retries);
                            m.completed += 1;
                            if t.local {
                                self.extra.delay_local.add(delay);
                            } else {
                                self.extra.delay_remote.add(delay);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Where the serviced send at the head of switch `s`'s input `j` (index into the
    /// switch's rings) goes: (the send, output index, its local destination there, its final
    /// host). The route of a head is computed once and cached until the head changes.
    fn head(&mut self, s: usize, j: usize) -> Option<(Fwd, usize, u8, u16)> {
        let (r, agent) = self.ports_of[s][j];
        let f = self.rings[r].forward_ready(agent)?;
        if let Some(h) = self.head_cache[s][j]
            && h.seq == f.seq
        {
            return Some((f, h.out, h.dst, h.fin));
        }
        let t = self.txns.get(&f.seq)?;
        let final_ring = usize::from(self.topo.hosts[usize::from(t.dst)].0);
        let next = self.topo.route(r, final_ring)?.next;
        let out = self.topo.switches[s].iter().position(|&x| x == next)?;
        let dst = self.topo.hop_dst(usize::from(next), usize::from(t.dst));
        self.head_cache[s][j] = Some(HeadRoute {
            seq: f.seq,
            out,
            dst,
            fin: t.dst,
        });
        Some((f, out, dst, t.dst))
    }

    /// Moves the head of switch `s`'s input `j` to output `out` if there is room.
    fn forward(&mut self, s: usize, j: usize, (f, out, dst, fin): (Fwd, usize, u8, u16)) -> bool {
        let (r, a_in) = self.ports_of[s][j];
        let (next, a_out) = self.ports_of[s][out];
        if !self.rings[next].inject_forward(a_out as u8, dst, f, fin) {
            return false;
        }
        self.rings[r].release(a_in);
        if self.now >= self.measure_start && self.now < self.gen_end {
            self.extra.forwarded += 1;
        }
        true
    }

    /// Every switch moves serviced sends onto their next ring while there is room. Inputs
    /// that want the same output are served round-robin (`switch.arbitration`), or in fixed
    /// ring order.
    fn switch(&mut self) {
        let measuring = self.now >= self.measure_start && self.now < self.gen_end;
        for s in 0..self.topo.switches.len() {
            let k = self.topo.switches[s].len();
            match self.arbitration {
                Arbitration::Fixed => {
                    for j in 0..k {
                        while let Some(h) = self.head(s, j) {
                            if !self.forward(s, j, h) {
                                break;
                            }
                        }
                    }
                }
                Arbitration::RoundRobin => loop {
                    let mut moved = false;
                    for o in 0..k {
                        // The next input after the one this output served last.
                        for step in 1..=k {
                            let j = (self.rr[s][o] + step) % k;
                            let Some(h) = self.head(s, j).filter(|h| h.1 == o) else {
                                continue;
                            };
                            if self.forward(s, j, h) {
                                self.rr[s][o] = j;
                                moved = true;
                            }
                            break;
                        }
                    }
                    if !moved {
                        break;
                    }
                },
            }
            if measuring {
                let waiting = (0..k).filter(|&j| self.head(s, j).is_some()).count();
                self.extra.blocked_agent_cycles += waiting as u64;
            }
        }
    }

    /// The system-wide measure: the hosts' view (acceptance at final targets, end-to-end
    /// delays) plus the protocol counters of all rings.
    pub fn measure(&self) -> Measure {
        let mut m = self.measure.clone();
        m.transmitted = self.rings.iter().map(|r| r.measure().transmitted).sum();
        m.ps_disallow = self.rings.iter().map(|r| r.measure().ps_disallow).sum();
        m.busy_echoes = self.rings.iter().map(|r| r.measure().busy_echoes).sum();
        m.notify_symbols = self.rings.iter().map(|r| r.measure().notify_symbols).sum();
        m.epoch_a = merged(self.rings.iter().map(|r| &r.measure().epoch_a));
        m.epoch_b = merged(self.rings.iter().map(|r| &r.measure().epoch_b));
        m
    }
}

/// Queues send `seq` (`src` → `dst`, hosts, of data size class `size_class`) created at
/// `now` at its host with the local destination on its ring (the target, or the agent
/// towards the target's ring); false when the host's send queue is full.
fn queue_at_host(
    topo: &Topology,
    rings: &mut [Sim],
    txns: &mut HashMap<u64, Txn>,
    (src, dst, size_class, seq): (usize, usize, u8, u64),
    now: u64,
) -> bool {
    let (r, local) = topo.hosts[src];
    let r = usize::from(r);
    let hop = topo.hop_dst(r, dst);
    let queued = rings[r].inject_created(local, hop, size_class, seq, dst as u16);
    if queued {
        txns.insert(
            seq,
            Txn {
                src: src as u16,
                dst: dst as u16,
                created: now,
                retries: 0,
                local: topo.hosts[dst].0 == topo.hosts[src].0,
            },
        );
    }
    queued
}

/// Count and mean of several summaries (all the metrics use); one summary is kept as it is.
fn merged<'a>(parts: impl Iterator<Item = &'a Summary>) -> Summary {
    let parts: Vec<&Summary> = parts.collect();
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let mut s = Summary::default();
    s.count = parts.iter().map(|p| p.count).sum();
    if s.count > 0 {
        s.mean = parts.iter().map(|p| p.mean * p.count as f64).sum::<f64>() / s.count as f64;
        s.min = parts
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| p.min)
            .fold(f64::INFINITY, f64::min);
        s.max = parts
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| p.max)
            .fold(f64::NEG_INFINITY, f64::max);
    }
    s
}
