//! Ranks as threads: a [`Comm`] over channels, for testing the protocol and the sweep path
//! without an MPI library.

use super::driver::Comm;
use std::sync::mpsc::{Receiver, Sender, channel};

pub struct LocalComm {
    rank: usize,
    size: usize,
    /// Rank 0: one receiver per rank (index 0 unused).
    inbox: Vec<Receiver<Vec<u8>>>,
    /// Other ranks: the way to rank 0.
    to_root: Option<Sender<Vec<u8>>>,
    /// Rank 0: one sender per rank for the broadcast (index 0 unused).
    codes_out: Vec<Sender<u8>>,
    codes_in: Option<Receiver<u8>>,
}

/// `size` connected ranks, in rank order.
pub fn world(size: usize) -> Vec<LocalComm> {
    let (mut inbox, mut codes_out) = (Vec::new(), Vec::new());
    let mut others = Vec::new();
    for _ in 1..size {
        let (tx, rx) = channel();
        let (ctx, crx) = channel();
        inbox.push(rx);
        codes_out.push(ctx);
        others.push((tx, crx));
    }
    let root = LocalComm {
        rank: 0,
        size,
        inbox,
        to_root: None,
        codes_out,
        codes_in: None,
    };
    std::iter::once(root)
        .chain(
            others
                .into_iter()
                .enumerate()
                .map(|(i, (tx, crx))| LocalComm {
                    rank: i + 1,
                    size,
                    inbox: Vec::new(),
                    to_root: Some(tx),
                    codes_out: Vec::new(),
                    codes_in: Some(crx),
                }),
        )
        .collect()
}

impl Comm for LocalComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn send_to_root(&self, bytes: &[u8]) {
        let to_root = self
            .to_root
            .as_ref()
            .expect("rank 0 does not send to itself");
        to_root.send(bytes.to_vec()).expect("rank 0 is alive");
    }
    fn receive_from(&self, from: usize) -> Vec<u8> {
        self.inbox[from - 1].recv().expect("the rank is alive")
    }
    fn broadcast_code(&self, code: &mut u8) {
        match &self.codes_in {
            None => self
                .codes_out
                .iter()
                .for_each(|tx| tx.send(*code).expect("the rank is alive")),
            Some(rx) => *code = rx.recv().expect("rank 0 is alive"),
        }
    }
}
