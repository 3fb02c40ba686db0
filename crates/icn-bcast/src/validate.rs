//! Independent legality check of a broadcast schedule.
//!
//! Written without reference to the simulator: it replays the transfers in step order and
//! checks the model's rules.
//!
//! | rule | violation |
//! |------|-----------|
//! | a node sends only after it holds the message (source at step 0, others from the step after their first reception) | [`Violation::SendsBeforeInformed`] |
//! | at most one send per node per step | [`Violation::TwoSendsInOneStep`] |
//! | only to neighbours | [`Violation::NotANeighbour`] |
//! | steps are ≥ 1 and listed in non-decreasing order | [`Violation::BadStep`] |
//! | the claimed first-receipt steps are the replayed ones | [`Violation::WrongFirstReceipt`] |

use crate::sim::Transmission;
use icn_topo::{Graph, NodeId};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("step {step}: node {node} sends before it holds the message")]
    SendsBeforeInformed { step: u32, node: NodeId },
    #[error("step {step}: node {node} sends twice")]
    TwoSendsInOneStep { step: u32, node: NodeId },
    #[error("step {step}: {from} → {to} is not a link")]
    NotANeighbour { step: u32, from: NodeId, to: NodeId },
    #[error("transfer {index} has step {step}: steps must start at 1 and not decrease")]
    BadStep { index: usize, step: u32 },
    #[error("node {node}: claimed first receipt {claimed:?}, replay gives {replayed:?}")]
    WrongFirstReceipt {
        node: NodeId,
        claimed: Option<u32>,
        replayed: Option<u32>,
    },
}

/// Checks `schedule` for a broadcast from `source` and, if given, that `first_receipt` agrees.
/// Returns the replayed first-receipt steps.
pub fn check_schedule(
    g: &Graph,
    source: NodeId,
    schedule: &[Transmission],
    first_receipt: Option<&[Option<u32>]>,
) -> Result<Vec<Option<u32>>, Violation> {
    let mut informed: Vec<Option<u32>> = vec![None; g.len()];
    informed[source] = Some(0);
    // Last step in which each node sent (0: never; steps start at 1).
    let mut last_sent: Vec<u32> = vec![0; g.len()];
    let mut current = 0u32;
    for (index, t) in schedule.iter().enumerate() {
        if t.step == 0 || t.step < current {
            return Err(Violation::BadStep {
                index,
                step: t.step,
            });
        }
        current = t.step;
        if t.from >= g.len() || t.to >= g.len() {
            return Err(Violation::NotANeighbour {
                step: t.step,
                from: t.from,
                to: t.to,
            });
        }
        match informed[t.from] {
            Some(s) if s < t.step => {}
            _ => {
                return Err(Violation::SendsBeforeInformed {
                    step: t.step,
                    node: t.from,
                });
            }
        }
        if last_sent[t.from] == t.step {
            return Err(Violation::TwoSendsInOneStep {
                step: t.step,
                node: t.from,
            });
        }
        last_sent[t.from] = t.step;
        if t.from == t.to || !g.adjacent(t.from, t.to) {
            return Err(Violation::NotANeighbour {
                step: t.step,
                from: t.from,
                to: t.to,
            });
        }
        if informed[t.to].is_none() {
            informed[t.to] = Some(t.step);
        }
    }
    if let Some(claimed) = first_receipt {
        for (node, (&c, &r)) in claimed.iter().zip(&informed).enumerate() {
            if c != r {
                return Err(Violation::WrongFirstReceipt {
                    node,
                    claimed: c,
                    replayed: r,
                });
            }
        }
    }
    Ok(informed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_topo::Port;
    use icn_topo::build::path;

    fn t(step: u32, from: NodeId, to: NodeId) -> Transmission {
        Transmission {
            step,
            from,
            to,
            port: Port::F,
        }
    }

    #[test]
    fn accepts_a_legal_schedule_and_replays_times() {
        let g = path(4).unwrap();
        let s = [t(1, 1, 0), t(2, 1, 2), t(3, 2, 3)];
        assert_eq!(
            check_schedule(&g, 1, &s, None).unwrap(),
            vec![Some(1), Some(0), Some(2), Some(3)]
        );
    }

    #[test]
    fn rejects_each_rule_violation() {
        let g = path(4).unwrap();
        assert_eq!(
            check_schedule(&g, 0, &[t(1, 1, 2)], None),
            Err(Violation::SendsBeforeInformed { step: 1, node: 1 })
        );
        // Informed in step 1, may not send in step 1.
        assert_eq!(
            check_schedule(&g, 0, &[t(1, 0, 1), t(1, 1, 2)], None),
            Err(Violation::SendsBeforeInformed { step: 1, node: 1 })
        );
        assert_eq!(
            check_schedule(&g, 1, &[t(1, 1, 0), t(1, 1, 2)], None),
            Err(Violation::TwoSendsInOneStep { step: 1, node: 1 })
        );
        assert_eq!(
            check_schedule(&g, 0, &[t(1, 0, 2)], None),
            Err(Violation::NotANeighbour {
                step: 1,
                from: 0,
                to: 2
            })
        );
        assert_eq!(
            check_schedule(&g, 0, &[t(2, 0, 1), t(1, 1, 2)], None),
            Err(Violation::BadStep { index: 1, step: 1 })
        );
        // Node indices outside the graph are an error, not a panic.
        assert!(matches!(
            check_schedule(&g, 0, &[t(1, 0, 99)], None),
            Err(Violation::NotANeighbour { to: 99, .. })
        ));
        assert!(matches!(
            check_schedule(&g, 0, &[t(1, 0, 1)], Some(&[Some(0), Some(2), None, None])),
            Err(Violation::WrongFirstReceipt { node: 1, .. })
        ));
    }
}
