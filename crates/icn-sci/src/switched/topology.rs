//! Rings, switches, hosts and routes of a switched SCI system (pure; no simulation).
//!
//! Every ring lists its hosts first (local ids 0..h) and then one agent per switch that joins
//! it, in switch order. Routing is by the target's ring: `route(r, t)` names the agent on ring
//! r that a send for ring t goes to, and the ring the switch forwards it onto. Routes are
//! shortest paths in the graph whose vertices are rings and where a switch joins all its rings;
//! among equally short choices the `(r + t) mod k`-th (in switch, then ring order) is taken, so
//! that row-to-row traffic in a grid spreads over the columns instead of all using column 0.
//! A route towards one ring is a tree, so a send never visits a ring twice.
//!
//! **Deadlock freedom.** Switch queues are bounded and a send keeps its input-queue slot until
//! the next ring's agent has room, so a cycle of queues waiting for each other would deadlock.
//! Every topology here has hosts only on *leaf* rings, and transit rings (the backbone, the
//! grid's columns, the crossbar's inside) carry only switch agents: a send goes leaf ring →
//! (at most one transit ring) → leaf ring, and on the target's leaf ring it goes to a host,
//! which always drains. The queue-dependency graph is acyclic. (With hosts on the grid's
//! column rings too, row→column→row and column→row→column paths close cycles, and the
//! conservation proptest found the deadlock within a few hundred cases.)

use super::config::{SwitchedConfig, TopologyKind};
use icn_engine::Invalid;
use std::collections::VecDeque;

/// Largest ring (hosts + agents): the SST packs 64 nodes.
pub const MAX_RING: usize = 64;
/// Largest number of hosts (sources are `u8` in the traffic generator).
pub const MAX_HOSTS: usize = 255;

/// One hop of a route: the agent (local id on the current ring) of `switch`, which forwards
/// onto `next` ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub agent: u8,
    pub switch: u16,
    pub next: u16,
}

/// One ring's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingLayout {
    pub hosts: usize,
    /// Switches with an agent here, in local order (agent k has local id `hosts + k`).
    pub switches: Vec<u16>,
}

impl RingLayout {
    pub fn nodes(&self) -> usize {
        self.hosts + self.switches.len()
    }

    /// Agent flags by local id.
    pub fn agent_flags(&self) -> Vec<bool> {
        (0..self.nodes()).map(|i| i >= self.hosts).collect()
    }
}

/// A switched system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub rings: Vec<RingLayout>,
    /// Each switch's rings.
    pub switches: Vec<Vec<u16>>,
    /// Global host id → (ring, local id).
    pub hosts: Vec<(u16, u8)>,
    /// `route[r × R + t]`, `None` for r = t.
    route: Vec<Option<Hop>>,
}

impl Topology {
    /// The system a config describes, with `nodes` hosts per host ring.
    pub fn build(cfg: &SwitchedConfig) -> Result<Topology, Invalid> {
        let n = cfg.ring.nodes;
        let (host_rings, switches): (Vec<usize>, Vec<Vec<u16>>) = match cfg.topology {
            TopologyKind::Single => (vec![n], vec![]),
            TopologyKind::RingOfRings => {
                let k = cfg.rings;
                let mut hosts = vec![n; k];
                hosts.push(0);
                (hosts, (0..k).map(|s| vec![s as u16, k as u16]).collect())
            }
            TopologyKind::Crossbar => {
                let k = cfg.rings;
                (vec![n; k], vec![(0..k as u16).collect()])
            }
            TopologyKind::Grid => {
                let (rows, cols) = (cfg.grid_rows, cfg.grid_cols);
                let sw = (0..rows)
                    .flat_map(|a| (0..cols).map(move |b| vec![a as u16, (rows + b) as u16]))
                    .collect();
                let mut hosts = vec![n; rows];
                hosts.extend(vec![0; cols]);
                (hosts, sw)
            }
        };
        Topology::from_parts(&host_rings, switches)
    }

    /// A system of rings with `hosts[r]` hosts each, joined by `switches` (each a list of ring
    /// ids); checks sizes and connectivity.
    pub fn from_parts(hosts: &[usize], switches: Vec<Vec<u16>>) -> Result<Topology, Invalid> {
        let nr = hosts.len();
        let mut rings: Vec<RingLayout> = hosts
            .iter()
            .map(|&h| RingLayout {
                hosts: h,
                switches: vec![],
            })
            .collect();
        for (s, rs) in switches.iter().enumerate() {
            for &r in rs {
                rings[usize::from(r)].switches.push(s as u16);
            }
        }
        for (r, ring) in rings.iter().enumerate() {
            Invalid::check(
                (2..=MAX_RING).contains(&ring.nodes()),
                "ring.nodes",
                &format!("rings of 2 ..= {MAX_RING} nodes including switch agents"),
                format!("ring {r} with {} nodes", ring.nodes()),
            )?;
        }
        let host_list: Vec<(u16, u8)> = rings
            .iter()
            .enumerate()
            .flat_map(|(r, ring)| (0..ring.hosts).map(move |k| (r as u16, k as u8)))
            .collect();
        Invalid::check(
            (2..=MAX_HOSTS).contains(&host_list.len()),
            "ring.nodes",
            &format!("2 ..= {MAX_HOSTS} hosts in the whole system"),
            host_list.len(),
        )?;
        let mut route = vec![None; nr * nr];
        for t in 0..nr {
            let dist = distances(&rings, &switches, t);
            for r in (0..nr).filter(|&r| r != t) {
                let d = dist[r].ok_or_else(|| {
                    Invalid::new("topology", format!("ring {r} cannot reach ring {t}"))
                })?;
                let mut options: Vec<Hop> = Vec::new();
                for (k, &s) in rings[r].switches.iter().enumerate() {
                    for &r2 in &switches[usize::from(s)] {
                        if dist[usize::from(r2)] == Some(d - 1) {
                            options.push(Hop {
                                agent: (rings[r].hosts + k) as u8,
                                switch: s,
                                next: r2,
                            });
                        }
                    }
                }
                route[r * nr + t] = Some(options[(r + t) % options.len()]);
            }
        }
        Ok(Topology {
            rings,
            switches,
            hosts: host_list,
            route,
        })
    }

    /// Where a send on ring `r` for ring `t` ≠ r goes next.
    pub fn route(&self, r: usize, t: usize) -> Option<Hop> {
        self.route[r * self.rings.len() + t]
    }

    /// Local id of switch `s`'s agent on ring `r`.
    pub fn agent_of(&self, s: u16, r: usize) -> Option<u8> {
        let ring = &self.rings[r];
        ring.switches
            .iter()
            .position(|&x| x == s)
            .map(|k| (ring.hosts + k) as u8)
    }

    /// Local destination on ring `r` of a send for global host `dst`: the host itself, or the
    /// agent towards its ring.
    pub fn hop_dst(&self, r: usize, dst: usize) -> u8 {
        let (t, local) = self.hosts[dst];
        match self.route(r, usize::from(t)) {
            None => local,
            Some(h) => h.agent,
        }
    }

    /// Ring hops (switch traversals + 1) from host `src` to host `dst`.
    pub fn hops(&self, src: usize, dst: usize) -> usize {
        let (mut r, t) = (
            usize::from(self.hosts[src].0),
            usize::from(self.hosts[dst].0),
        );
        let mut hops = 1;
        while let Some(h) = self.route(r, t) {
            r = usize::from(h.next);
            hops += 1;
        }
        hops
    }
}

/// Ring distances (switch traversals) to ring `t`.
fn distances(rings: &[RingLayout], switches: &[Vec<u16>], t: usize) -> Vec<Option<usize>> {
    let mut dist = vec![None; rings.len()];
    dist[t] = Some(0);
    let mut queue = VecDeque::from([t]);
    while let Some(r) = queue.pop_front() {
        let d = dist[r].unwrap_or(0);
        for &s in &rings[r].switches {
            for &r2 in &switches[usize::from(s)] {
                let r2 = usize::from(r2);
                if dist[r2].is_none() {
                    dist[r2] = Some(d + 1);
                    queue.push_back(r2);
                }
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SciConfig;

    fn cfg(topology: TopologyKind, n: usize) -> SwitchedConfig {
        SwitchedConfig {
            topology,
            rings: 3,
            grid_rows: 2,
            grid_cols: 3,
            ring: SciConfig {
                nodes: n,
                ..SciConfig::default()
            },
            ..SwitchedConfig::default()
        }
    }

    #[test]
    fn single_ring_has_no_switch() {
        let t = Topology::build(&cfg(TopologyKind::Single, 8)).unwrap();
        assert_eq!(t.rings.len(), 1);
        assert_eq!(t.rings[0].nodes(), 8);
        assert!(t.switches.is_empty());
        assert_eq!(t.hop_dst(0, 5), 5);
        assert_eq!(t.hops(0, 5), 1);
    }

    #[test]
    fn ring_of_rings_goes_up_the_backbone_and_down() {
        let t = Topology::build(&cfg(TopologyKind::RingOfRings, 4)).unwrap();
        // 3 host rings of 4 hosts + 1 agent; the backbone (ring 3) has 3 agents.
        assert_eq!(t.rings.len(), 4);
        assert_eq!(t.rings[0].nodes(), 5);
        assert_eq!(t.rings[3].nodes(), 3);
        assert_eq!(t.hosts.len(), 12);
        // Host 1 (ring 0) → host 9 (ring 2, local 1): agent 4 of ring 0 → backbone → switch 2.
        assert_eq!(t.hop_dst(0, 9), 4);
        let up = t.route(0, 2).unwrap();
        assert_eq!((up.switch, up.next), (0, 3));
        let across = t.route(3, 2).unwrap();
        assert_eq!((across.agent, across.switch, across.next), (2, 2, 2));
        assert_eq!(t.hops(1, 9), 3);
        assert_eq!(t.hops(1, 2), 1);
    }

    #[test]
    fn crossbar_is_one_switch_away() {
        let t = Topology::build(&cfg(TopologyKind::Crossbar, 6)).unwrap();
        assert_eq!(t.switches, vec![vec![0, 1, 2]]);
        assert_eq!(t.route(1, 2).unwrap().next, 2);
        assert_eq!(t.agent_of(0, 2), Some(6));
        assert_eq!(t.hops(0, 17), 2);
    }

    #[test]
    fn grid_routes_rows_to_rows_over_spread_columns() {
        let t = Topology::build(&cfg(TopologyKind::Grid, 4)).unwrap();
        // Rings 0, 1 are rows (4 hosts, 3 agents each), 2, 3, 4 columns (2 agents, no host).
        assert_eq!(t.rings[0].nodes(), 7);
        assert_eq!(t.rings[2].nodes(), 2);
        assert_eq!(t.hosts.len(), 8);
        // Row → column: direct, via switch (row, col).
        let h = t.route(1, 3).unwrap();
        assert_eq!((h.switch, h.next), (4, 3));
        // Row 0 → row 1: over a column; (0 + 1) mod 3 = the second column (ring 3).
        let h = t.route(0, 1).unwrap();
        assert_eq!((h.switch, h.next), (1, 3));
        assert_eq!(t.route(3, 1).unwrap().switch, 4);
        // Host 0 (row 0) → host 5 (row 1): row, column, row.
        assert_eq!(t.hops(0, 5), 3);
    }

    #[test]
    fn oversized_rings_and_systems_are_rejected() {
        let mut c = cfg(TopologyKind::Crossbar, 64);
        assert_eq!(Topology::build(&c).unwrap_err().key, "ring.nodes");
        c.ring.nodes = 63;
        assert!(Topology::build(&c).is_ok());
        c.rings = 5;
        assert_eq!(Topology::build(&c).unwrap_err().key, "ring.nodes");
    }
}
