//! Machine-wide intelligent A/B aging: switches relay the serve status of the hosts behind
//! them (docs/sci.md, "Switched SCI: serve status in the switches").
//!
//! What a switch knows of host j on ring t:
//! * if the switch has an agent on ring t, that agent's SST entry for j — the agent is a node
//!   of ring t and parses every NOTIFY j sends there, like any intelligent node;
//! * otherwise the *remote* table of its agent on the ring it forwards sends for ring t onto,
//!   fed by the relays of the next switch on the path.
//!
//! When that knowledge changes, the switch posts a relayed NOTIFY about j on every other ring
//! it joins whose sends for ring t go through it (and only there: a ring whose route to t
//! passes elsewhere gets its status from that switch). A relayed NOTIFY is an ordinary 4-symbol
//! NOTIFY of the agent (target = source = the agent, removed back at the agent after one
//! round) whose 14 reserved status bits carry j's global host id + 1; every node on the ring
//! parses it into its remote table. Sources and intermediate agents hold back a *new* send (a
//! first try on its hop, NOTRY) whose final target the remote table shows in SERVE_A or
//! SERVE_B; retries on a hop are governed by that hop's target only. The receivers still
//! enforce the A/B table, so stale status costs bandwidth, never correctness.
//!
//! Routes towards one ring form a tree, so relays never loop; a chain of switches carries the
//! status back hop by hop, each hop adding one ring's NOTIFY latency.

use super::topology::Topology;
use crate::protocol::packet::ECHO_SYMBOLS;
use crate::protocol::{ServeState, Sst, StateChange};
use crate::ring::Sim;

/// One host a switch relays from one of its agents.
#[derive(Clone, Debug)]
struct Entry {
    host: u16,
    /// The host's local id when it is on the agent's ring (then its SST is read).
    local: Option<u8>,
    /// (ring, agent) pairs the relay goes to.
    to: Vec<(usize, usize)>,
    last: ServeState,
}

/// The hosts a switch learns about through one of its agents.
#[derive(Clone, Debug)]
struct Source {
    ring: usize,
    agent: usize,
    entries: Vec<Entry>,
    last_sst: Sst,
    last_version: u64,
}

/// Every switch's relays.
#[derive(Clone, Debug)]
pub struct Relay {
    sources: Vec<Source>,
}

/// The change whose new state is `to` (what a relayed NOTIFY carries when intermediate states
/// were overtaken: only the newest state is relayed).
fn change_to(to: ServeState) -> StateChange {
    let from = ServeState::ALL
        .into_iter()
        .find(|s| s.next() == to)
        .unwrap_or(ServeState::Na);
    StateChange::from(from)
}

impl Relay {
    pub fn new(topo: &Topology) -> Relay {
        let mut sources = Vec::new();
        for (s, rings_of) in topo.switches.iter().enumerate() {
            let s = s as u16;
            for &r_out in rings_of {
                let r_out = usize::from(r_out);
                let Some(agent) = topo.agent_of(s, r_out) else {
                    continue;
                };
                let mut entries = Vec::new();
                for (host, &(t, local)) in topo.hosts.iter().enumerate() {
                    let t = usize::from(t);
                    // Does this switch forward sends for ring t onto r_out?
                    let via_here = t == r_out
                        || rings_of.iter().any(|&r| {
                            topo.route(usize::from(r), t)
                                .is_some_and(|h| h.switch == s && usize::from(h.next) == r_out)
                        });
                    if !via_here {
                        continue;
                    }
                    let to: Vec<(usize, usize)> = rings_of
                        .iter()
                        .map(|&r| usize::from(r))
                        .filter(|&r| r != r_out)
                        .filter(|&r| {
                            topo.route(r, t)
                                .is_some_and(|h| h.switch == s && usize::from(h.next) == r_out)
                        })
                        .filter_map(|r| topo.agent_of(s, r).map(|a| (r, usize::from(a))))
                        .collect();
                    if !to.is_empty() {
                        entries.push(Entry {
                            host: host as u16,
                            local: (t == r_out).then_some(local),
                            to,
                            last: ServeState::Na,
                        });
                    }
                }
                if !entries.is_empty() {
                    sources.push(Source {
                        ring: r_out,
                        agent: usize::from(agent),
                        entries,
                        last_sst: Sst::new(),
                        last_version: 0,
                    });
                }
            }
        }
        Relay { sources }
    }

    /// Relays every change since the last call; returns (NOTIFYs posted, link symbols they
    /// will occupy: 4 per link of the ring they circle).
    pub fn step(&mut self, rings: &mut [Sim]) -> (u64, u64) {
        let (mut posted, mut symbols) = (0, 0);
        for src in &mut self.sources {
            let ring = &rings[src.ring];
            let (sst, version) = (ring.sst(src.agent), ring.remote_version(src.agent));
            if sst == src.last_sst && version == src.last_version {
                continue;
            }
            src.last_sst = sst;
            src.last_version = version;
            for e in &mut src.entries {
                let now = match e.local {
                    Some(l) => sst.get(usize::from(l)),
                    None => rings[src.ring].remote_state(src.agent, usize::from(e.host)),
                };
                if now == e.last {
                    continue;
                }
                e.last = now;
                for &(r, a) in &e.to {
                    rings[r].post_remote(a, e.host, change_to(now));
                    posted += 1;
                    symbols += (ECHO_SYMBOLS * rings[r].nodes()) as u64;
                }
            }
        }
        (posted, symbols)
    }

    /// Entries (switch, host) the relays track: the state a machine keeps in its switches,
    /// 2 bits each.
    pub fn entries(&self) -> usize {
        self.sources.iter().map(|s| s.entries.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SciConfig;
    use crate::switched::config::{SwitchedConfig, TopologyKind};

    fn topo(topology: TopologyKind) -> Topology {
        Topology::build(&SwitchedConfig {
            topology,
            rings: 3,
            ring: SciConfig {
                nodes: 4,
                ..SciConfig::default()
            },
            ..SwitchedConfig::default()
        })
        .unwrap()
    }

    /// Ring of rings, 3 host rings of 4 hosts, backbone = ring 3. Switch s (rings s and 3)
    /// relays the 4 hosts of ring s onto the backbone (read from its agent's SST there), and
    /// the 8 hosts of the other rings onto ring s (read from its backbone agent's remote table).
    #[test]
    fn ring_of_rings_relays_up_and_down() {
        let t = topo(TopologyKind::RingOfRings);
        let relay = Relay::new(&t);
        assert_eq!(relay.sources.len(), 6);
        assert_eq!(relay.entries(), 3 * 12);
        let up = relay
            .sources
            .iter()
            .find(|s| s.ring == 2)
            .expect("switch 2 reads ring 2");
        assert_eq!(up.agent, 4);
        let hosts: Vec<u16> = up.entries.iter().map(|e| e.host).collect();
        assert_eq!(hosts, vec![8, 9, 10, 11]);
        assert!(up.entries.iter().all(|e| e.to == vec![(3, 2)]));
        assert_eq!(up.entries[1].local, Some(1));
        let down = relay
            .sources
            .iter()
            .find(|s| s.ring == 3 && s.agent == 2)
            .expect("switch 2 reads the backbone");
        let hosts: Vec<u16> = down.entries.iter().map(|e| e.host).collect();
        assert_eq!(hosts, vec![0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(
            down.entries
                .iter()
                .all(|e| e.local.is_none() && e.to == vec![(2, 4)])
        );
    }

    /// A crossbar reads every host ring and relays to every other ring: per host ring, its 4
    /// hosts to the 2 other rings.
    #[test]
    fn crossbar_relays_to_every_other_ring() {
        let relay = Relay::new(&topo(TopologyKind::Crossbar));
        assert_eq!(relay.sources.len(), 3);
        assert_eq!(relay.entries(), 12);
        assert!(
            relay
                .sources
                .iter()
                .all(|s| s.entries.iter().all(|e| e.to.len() == 2))
        );
    }

    #[test]
    fn the_relayed_change_ends_in_the_new_state() {
        for s in ServeState::ALL {
            assert_eq!(change_to(s).to(), s);
        }
    }
}
