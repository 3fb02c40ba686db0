//! ULBM, universal lists (Diks & Pelc): one ordered neighbour list per node, used for every
//! source.
//!
//! | variant | on first reception from `u` | source |
//! |---------|------------------------------|--------|
//! | non-adaptive (NAULBM) | send to every list entry in order, `u` included | every entry in order |
//! | adaptive (AULBM) | the same, skipping `u` (its entry costs no step) | every entry in order |
//!
//! Storage: `deg(v)` entries per node.

use crate::sim::{Protocol, Send};
use icn_topo::{Graph, NodeId, Port};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniversalLists {
    /// `lists[v]`: the ports of `v` in sending order (a permutation of its ports).
    pub lists: Vec<Vec<Port>>,
    pub adaptive: bool,
}

impl UniversalLists {
    /// Lists in port order.
    pub fn port_order(g: &Graph, adaptive: bool) -> Self {
        UniversalLists {
            lists: (0..g.len())
                .map(|v| g.links(v).iter().map(|l| l.port).collect())
                .collect(),
            adaptive,
        }
    }

    /// Entries per node.
    pub fn entries(&self) -> Vec<usize> {
        self.lists.iter().map(Vec::len).collect()
    }
}

impl Protocol for UniversalLists {
    type Msg = ();
    fn start(&mut self, _: &Graph, s: NodeId) -> Vec<Send<()>> {
        self.lists[s]
            .iter()
            .map(|&port| Send { port, msg: () })
            .collect()
    }
    fn on_receive(&mut self, g: &Graph, v: NodeId, from: NodeId, _: Port, _: &()) -> Vec<Send<()>> {
        self.lists[v]
            .iter()
            .filter(|&&p| !self.adaptive || g.link(v, p).is_none_or(|l| l.to != from))
            .map(|&port| Send { port, msg: () })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Tiebreak, simulate};
    use icn_topo::build::path;

    #[test]
    fn non_adaptive_wastes_a_step_on_the_sender() {
        // Path 0-1-2 from 0. Node 1's list is [F, B] in port order: F → 2 at step 2 either way.
        // With list [B, F] the non-adaptive node sends back to 0 first: 2 is reached at step 3.
        let g = path(3).unwrap();
        let mut lists = UniversalLists::port_order(&g, false);
        lists.lists[1] = vec![Port::B, Port::F];
        let o = simulate(&g, 0, &mut lists.clone(), Tiebreak::LowestSender);
        assert_eq!(o.time(), Some(3));
        assert_eq!(o.redundant_total(), 2); // 1 → 0 and 2 → 1
        lists.adaptive = true;
        let o = simulate(&g, 0, &mut lists, Tiebreak::LowestSender);
        assert_eq!(o.time(), Some(2));
        assert_eq!(o.redundant_total(), 0);
    }
}
