//! Model checking of the single-copy handshake on shm ([`icn_via::link::SourceRef`],
//! `shared_mem`): the sender's payload stays in its registered region, the ring carries only
//! a descriptor, the receiver copies out of the region and only then acks, and the sender
//! reuses its buffer only after that ack. Both rings are the provider's real code
//! ([`icn_via::ring::Ring`] over loom atomics, as in `loom_ring.rs`) and the descriptor is
//! the real encoding; the region is a loom `UnsafeCell`, so loom reports any execution in
//! which the sender's reuse and the receiver's copy are not ordered (a data race), besides
//! the byte comparison.
//!
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p icn-via --test loom_single_copy --release`
#![cfg(loom)]

use icn_via::link::SourceRef;
use icn_via::link::source::DESC_LEN;
use icn_via::ring::{Ring, Words, area_len, init_words};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU64, Ordering, fence};

#[derive(Clone)]
struct LoomArea {
    words: Arc<Vec<AtomicU64>>,
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
        for (i, &b) in src.iter().enumerate() {
            let (w, sh) = ((off + i) / 8, ((off + i) % 8) * 8);
            let old = self.words[w].load(Ordering::Relaxed);
            self.words[w].store(
                (old & !(0xff << sh)) | (u64::from(b) << sh),
                Ordering::Relaxed,
            );
        }
    }
    fn copy_out(&self, off: usize, dst: &mut [u8]) {
        for (i, d) in dst.iter_mut().enumerate() {
            let (w, sh) = ((off + i) / 8, ((off + i) % 8) * 8);
            *d = (self.words[w].load(Ordering::Relaxed) >> sh) as u8;
        }
    }
}

fn pair() -> (Ring<LoomArea>, Ring<LoomArea>) {
    let cap = 128;
    let area = LoomArea {
        words: Arc::new((0..area_len(cap) / 8).map(|_| AtomicU64::new(0)).collect()),
    };
    init_words(&area);
    (
        Ring::new(area.clone(), 0).unwrap(),
        Ring::new(area, 1).unwrap(),
    )
}

/// Reads exactly `buf.len()` bytes from `ring`, yielding while it is empty.
fn read_exact(ring: &Ring<LoomArea>, buf: &mut [u8]) {
    let mut have = 0;
    while have < buf.len() {
        let (n, _) = ring.read(&mut buf[have..]).unwrap();
        have += n;
        if n == 0 {
            loom::thread::yield_now();
        }
    }
}

fn write_all(ring: &Ring<LoomArea>, bytes: &[u8]) {
    let mut done = 0;
    while done < bytes.len() {
        let n = ring.write(&[&bytes[done..]]).unwrap();
        done += n;
        if n == 0 {
            loom::thread::yield_now();
        }
    }
}

/// The handshake with the receiver acking after (`true`) or, the bug, before its copy.
fn handshake(ack_after_copy: bool) {
    loom::model(move || {
        let (sender_side, receiver_side) = pair();
        // the sender's registered region (8 bytes at offset 8 of it are the payload)
        let region = Arc::new(UnsafeCell::new([0u8; 16]));
        let src = SourceRef::Shared {
            fd: 3,
            serial: 1,
            offset: 8,
        };
        let r = region.clone();
        let receiver = loom::thread::spawn(move || {
            let mut desc = [0u8; DESC_LEN];
            read_exact(&receiver_side, &mut desc);
            let SourceRef::Shared { offset, .. } = SourceRef::decode(&desc).unwrap() else {
                panic!("wrong kind")
            };
            let off = offset as usize;
            if !ack_after_copy {
                write_all(&receiver_side, b"A");
            }
            // the receiver's one copy, straight out of the sender's region
            // SAFETY: `p` points to the live 16-byte array in the `Arc`; `off` is 8 (decoded
            // from what the sender encoded), so the range is inside. Whether this read is
            // ordered against the sender's writes is exactly what loom checks here.
            let got = r.with(|p| unsafe { (&(*p))[off..off + 8].to_vec() });
            if ack_after_copy {
                write_all(&receiver_side, b"A");
            }
            got
        });
        // SAFETY: the array is live (the `Arc`); the receiver reads it only after the
        // descriptor below, which loom checks.
        region.with_mut(|p| unsafe { (&mut (*p))[8..16].copy_from_slice(&[1; 8]) });
        write_all(&sender_side, &src.encode());
        let mut ack = [0u8; 1];
        read_exact(&sender_side, &mut ack);
        assert_eq!(&ack, b"A");
        // acknowledged: the buffer is the sender's again
        // SAFETY: as above; this write is ordered after the receiver's copy only through the
        // ack, which is the property under test.
        region.with_mut(|p| unsafe { (&mut (*p))[8..16].copy_from_slice(&[2; 8]) });
        assert_eq!(
            receiver.join().unwrap(),
            [1; 8],
            "the copy saw the reused buffer"
        );
    });
}

#[test]
fn the_sender_reuses_its_region_only_after_the_receivers_copy() {
    handshake(true);
}

/// The model can fail: with the ack sent before the copy, loom finds the execution in which
/// the sender overwrites the payload while the receiver copies it.
#[test]
fn acking_before_the_copy_is_caught() {
    let r = std::panic::catch_unwind(|| handshake(false));
    assert!(r.is_err(), "loom should have found the race");
}
