//! Model checking of the shm ring's publication protocol with loom, on the very code the
//! provider runs ([`icn_via::ring::Ring`], generic over its memory): here the memory is made
//! of loom atomics, so loom explores the thread interleavings and the values each load may
//! return under the C11 memory model.
//!
//! Not part of the normal test run (it needs its own build of every dependency):
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p icn-via --test loom_ring --release`
//!
//! Payload bytes live in relaxed atomic words: if a record's stamp were not published with
//! `Release` and read with `Acquire`, loom would find an execution in which the consumer
//! sees the stamp but stale payload, and the byte comparisons below would fail.
#![cfg(loom)]

use icn_via::ring::{CTRL_SIZE, Ring, Words, area_len, init_words};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU64, Ordering, fence};

#[derive(Clone)]
struct LoomArea {
    words: Arc<Vec<AtomicU64>>,
}

impl LoomArea {
    fn new(cap: usize) -> Self {
        let words = (0..area_len(cap) / 8).map(|_| AtomicU64::new(0)).collect();
        LoomArea {
            words: Arc::new(words),
        }
    }
}

impl Words for LoomArea {
    fn len(&self) -> usize {
        self.words.len() * 8
    }
    fn load(&self, off: usize, order: Ordering) -> u64 {
        self.words[off / 8].load(order)
    }
    fn store(&self, off: usize, v: u64, order: Ordering) {
        self.words[off / 8].store(v, order)
    }
    fn fence(&self) {
        fence(Ordering::SeqCst)
    }
    fn copy_in(&self, off: usize, src: &[u8]) {
        // one writer per byte range (the producer owns free space): load-modify-store is fine
        for (i, &b) in src.iter().enumerate() {
            let (w, sh) = ((off + i) / 8, ((off + i) % 8) * 8);
            let old = self.words[w].load(Ordering::Relaxed);
            let new = (old & !(0xff << sh)) | (u64::from(b) << sh);
            self.words[w].store(new, Ordering::Relaxed);
        }
    }
    fn copy_out(&self, off: usize, dst: &mut [u8]) {
        for (i, d) in dst.iter_mut().enumerate() {
            let (w, sh) = ((off + i) / 8, ((off + i) % 8) * 8);
            *d = (self.words[w].load(Ordering::Relaxed) >> sh) as u8;
        }
    }
}

/// Two views of a fresh area with rings of `cap` bytes.
fn pair(cap: usize) -> (Ring<LoomArea>, Ring<LoomArea>) {
    let area = LoomArea::new(cap);
    init_words(&area);
    let a = Ring::new(area.clone(), 0).unwrap();
    let b = Ring::new(area, 1).unwrap();
    assert_eq!(a.capacity(), cap);
    assert!(CTRL_SIZE + 2 * cap == area_len(cap));
    (a, b)
}

/// Three 8-byte messages through a two-line ring: the third needs the consumer's published
/// head (the ring is full after two records) and wraps to offset 0.
#[test]
fn records_are_published_consumed_and_reused_in_order() {
    loom::model(|| {
        let (tx, rx) = pair(128);
        let producer = loom::thread::spawn(move || {
            for m in 1..=3u8 {
                while tx.write(&[&[m; 8]]).unwrap() == 0 {
                    loom::thread::yield_now();
                }
            }
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 8];
        while got.len() < 24 {
            let (n, _) = rx.read(&mut buf[..8 - got.len() % 8]).unwrap();
            got.extend_from_slice(&buf[..n]);
            if n == 0 {
                loom::thread::yield_now();
            }
        }
        producer.join().unwrap();
        let want: Vec<u8> = [[1u8; 8], [2; 8], [3; 8]].concat();
        assert_eq!(got, want);
    });
}

/// The doorbell handshake: a consumer about to sleep either sees the new record on its
/// re-check, or the producer sees it asleep and wakes it — never neither (a lost wake-up).
#[test]
fn a_sleeping_consumer_never_misses_a_record() {
    loom::model(|| {
        let (tx, rx) = pair(128);
        let producer = loom::thread::spawn(move || {
            assert_eq!(tx.write(&[&[7; 8]]).unwrap(), 8);
            tx.peer_sleeping()
        });
        rx.set_sleeping(true);
        let saw_record = rx.readable();
        let woken = producer.join().unwrap();
        assert!(saw_record || woken, "lost wake-up");
    });
}
