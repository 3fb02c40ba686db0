//! The send side of every node's NIC, shared by the cluster simulator ([`crate::sim`]) and
//! the TI replay ([`crate::ti::replay`]): messages queue per node in post order and pass the
//! send stages one packet at a time. A packet that has passed the last stage waits there,
//! holding that stage, until the fabric's input queue takes it (rule 4 of `icn_fabric`), as
//! a DMA engine holds its buffer while the transmit queue is full; the next packet's last
//! stage starts when the fabric has taken it. Nothing of a message exists but its
//! description ([`Cut`]) until its packets are taken, so memory grows with the messages
//! waiting, never with their bytes.
//!
//! While the fabric never refuses, the times are those of the eager computation this
//! replaces (every packet of a message through the stages at its post): the stages are
//! tandem servers, so a packet's times depend only on the stages' free times and on the
//! packets before it, in the same order. The host stages (a prefix of the send stages)
//! run ahead at the post, so that the rank resumes when its first packet has left them
//! whatever the NIC is doing; each message keeps the host stages' free times at its
//! start and replays them packet by packet when the NIC comes to it.

use crate::nic::{Cut, EndStage, Layer, Piece, pass};
use icn_fabric::Ps;
use std::collections::VecDeque;

/// A packet waiting at the last send stage of its node for the fabric to take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// The caller's message id.
    pub id: usize,
    /// Its index in the message, and what it carries.
    pub index: u64,
    pub piece: Piece,
    /// When it has passed the stages (the fabric may take it then), and the caller's event
    /// sequence number for that time: the message's base + `index`, so that equal times
    /// order as they did when every packet was scheduled at the post.
    pub ready: Ps,
    pub seq: u64,
}

struct Job {
    id: usize,
    cut: Cut,
    posted: Ps,
    seq_base: u64,
    /// The host stages' free times when this message entered them.
    host_start: Vec<Ps>,
}

#[derive(Default)]
struct NodeTx {
    /// Messages posted and not wholly taken, in post order; the front is being sent.
    queue: VecDeque<Job>,
    /// Host stages: free times after every posted message (they run ahead at the post).
    host_ahead: Vec<Ps>,
    /// Host stages as the front message's packets have passed them so far.
    host_replay: Vec<Ps>,
    /// NIC stages' free times.
    nic: Vec<Ps>,
    /// The front message's next packet to pass the stages.
    next: u64,
    head: Option<Head>,
}

/// See the module documentation.
pub struct Transmit {
    host: Vec<EndStage>,
    nic: Vec<EndStage>,
    nodes: Vec<NodeTx>,
}

impl Transmit {
    /// `nodes` nodes whose send stages are `stages` (host stages first).
    pub fn new(stages: &[EndStage], nodes: usize) -> Transmit {
        let split = stages
            .iter()
            .position(|s| s.layer != Layer::Host)
            .unwrap_or(stages.len());
        debug_assert!(
            stages[split..].iter().all(|s| s.layer != Layer::Host),
            "host send stages come first"
        );
        let (host, nic) = stages.split_at(split);
        Transmit {
            nodes: (0..nodes)
                .map(|_| NodeTx {
                    host_ahead: vec![0; host.len()],
                    host_replay: vec![0; host.len()],
                    nic: vec![0; nic.len()],
                    ..NodeTx::default()
                })
                .collect(),
            host: host.to_vec(),
            nic: nic.to_vec(),
        }
    }

    /// Posts message `id` of `cut` at node `node` at `now`, its packets' event sequence
    /// numbers from `seq_base` (the caller reserves `cut.count()` of them). Returns when
    /// its first packet has left the host stages (the rank may go on), and the node's head
    /// packet if this message's first one just became it.
    pub fn post(
        &mut self,
        node: usize,
        id: usize,
        cut: Cut,
        now: Ps,
        seq_base: u64,
    ) -> (Ps, Option<Head>) {
        let n = &mut self.nodes[node];
        let host_start = n.host_ahead.clone();
        let mut host_done = now;
        for k in 0..cut.count() {
            let (_, _, host_ready) = pass(&self.host, &cut.piece(k), now, &mut n.host_ahead);
            if k == 0 {
                host_done = host_ready.unwrap_or(now);
            }
            if self.host.is_empty() {
                break;
            }
        }
        n.queue.push_back(Job {
            id,
            cut,
            posted: now,
            seq_base,
            host_start,
        });
        let head = if n.head.is_none() && n.queue.len() == 1 {
            n.next = 0;
            n.host_replay.clone_from(&n.queue[0].host_start);
            self.prepare(node, 0)
        } else {
            None
        };
        (host_done, head)
    }

    /// The packet waiting at node `node`'s last stage, if any.
    pub fn head(&self, node: usize) -> Option<Head> {
        self.nodes[node].head
    }

    /// The fabric took node `node`'s head packet at `at`: the last stage is free from then,
    /// and the next packet (of this message or the next) passes the stages. Returns it.
    pub fn taken(&mut self, node: usize, at: Ps) -> Option<Head> {
        let n = &mut self.nodes[node];
        n.head.take().expect("a head packet was taken");
        if let Some(last) = n.nic.last_mut() {
            *last = (*last).max(at);
        }
        if n.next == n.queue[0].cut.count() {
            n.queue.pop_front();
            n.next = 0;
            let job = n.queue.front()?;
            n.host_replay.clone_from(&job.host_start);
        }
        self.prepare(node, at)
    }

    /// Passes the front message's next packet through the stages; it is ready no earlier
    /// than `not_before` (when the packet before it was taken).
    fn prepare(&mut self, node: usize, not_before: Ps) -> Option<Head> {
        let n = &mut self.nodes[node];
        let job = n.queue.front()?;
        let index = n.next;
        let piece = job.cut.piece(index);
        let (host_ready, _, _) = pass(&self.host, &piece, job.posted, &mut n.host_replay);
        let (ready, _, _) = pass(&self.nic, &piece, host_ready, &mut n.nic);
        n.next += 1;
        let head = Head {
            id: job.id,
            index,
            piece,
            ready: ready.max(not_before),
            seq: job.seq_base + index,
        };
        n.head = Some(head);
        Some(head)
    }

    /// Messages posted at `node` and not yet wholly taken by the fabric.
    pub fn queued(&self, node: usize) -> usize {
        self.nodes[node].queue.len()
    }
}
