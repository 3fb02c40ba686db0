//! Conformance checks in the spirit of libfabric's fabtests, on both providers (two threads
//! of one process, loopback): queue limits, messages beyond the posted receives under each
//! reliability level, posting from several threads, immediate data without payload, and
//! completion-queue overflow. (Between two processes: `tests/multiprocess.rs`, including
//! `every_error_case_between_two_processes` for each error a peer causes; error cases of
//! single descriptors in one process: `tests/api.rs`.)

mod common;

use common::*;
use icn_via::*;

const PROVIDERS: [&str; 2] = ["tcp", "shm"];
const LEVELS: [Reliability; 3] = [
    Reliability::Unreliable,
    Reliability::ReliableDelivery,
    Reliability::ReliableReception,
];

fn with_depth(rel: Reliability, depth: usize) -> impl Fn(Ptag) -> ViAttributes + Send + Clone {
    move |ptag| ViAttributes {
        queue_depth: depth,
        ..ViAttributes::new(ptag, rel)
    }
}

#[test]
fn work_queues_refuse_posts_beyond_their_depth_and_take_them_again_once_drained() {
    for p in PROVIDERS {
        let (c, s) = pair_with(
            p,
            with_depth(Reliability::ReliableDelivery, 4),
            with_depth(Reliability::ReliableDelivery, 4),
        );
        let m = s.region(64, false);
        for i in 0..4 {
            s.vi.post_recv(Descriptor::recv([Segment::new(m.handle(), i * 8, 8)]))
                .unwrap();
        }
        let e =
            s.vi.post_recv(Descriptor::recv([Segment::new(m.handle(), 32, 8)]));
        assert!(
            matches!(e, Err(ViaError::ResourceExhausted(_))),
            "{p}: {e:?}"
        );
        // sends stay on the send queue until the peer acknowledges them
        let src = c.region(8, false);
        for _ in 0..4 {
            c.vi.post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
                .unwrap();
        }
        let e =
            c.vi.post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]));
        assert!(
            matches!(e, Err(ViaError::ResourceExhausted(_))),
            "{p}: {e:?}"
        );
        for _ in 0..4 {
            assert_eq!(s.vi.recv_wait(T).unwrap().status, CompletionStatus::Success);
        }
        s.vi.progress();
        for _ in 0..4 {
            assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        }
        // drained: both queues take posts again
        s.vi.post_recv(Descriptor::recv([Segment::new(m.handle(), 0, 8)]))
            .unwrap();
        c.vi.post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
            .unwrap();
        assert_eq!(s.vi.recv_wait(T).unwrap().length, 8, "{p}");
    }
}

/// Five messages against three posted receives. Unreliable: the first three arrive in order,
/// the rest are dropped and the VI stays up. Reliable: the first three arrive, the fourth
/// breaks both VIs (its sender sees `RemoteDescriptorError`, or `Success` on reliable delivery
/// if it was acknowledged on arrival) and the fifth is flushed.
#[test]
fn messages_beyond_the_posted_receives_under_each_reliability_level() {
    for p in PROVIDERS {
        for rel in LEVELS {
            let (c, s) = pair(p, rel);
            let src = c.region(40, false);
            src.with_mut(|b| b.iter_mut().enumerate().for_each(|(i, x)| *x = i as u8));
            let dst = s.region(24, false);
            for i in 0..3 {
                s.vi.post_recv(Descriptor::recv([Segment::new(dst.handle(), i * 8, 8)]))
                    .unwrap();
            }
            for i in 0..5 {
                c.vi.post_send(Descriptor::send([Segment::new(src.handle(), i * 8, 8)]))
                    .unwrap();
            }
            for _ in 0..3 {
                assert_eq!(
                    s.vi.recv_wait(T).unwrap().status,
                    CompletionStatus::Success,
                    "{p} {rel:?}"
                );
            }
            dst.with(|d| assert_eq!(d, (0..24).collect::<Vec<u8>>(), "{p} {rel:?}: in order"));
            s.vi.progress();
            let sends: Vec<_> = (0..5).map(|_| c.vi.send_wait(T).unwrap().status).collect();
            assert_eq!(sends[..3], [CompletionStatus::Success; 3], "{p} {rel:?}");
            match rel {
                Reliability::Unreliable => {
                    assert_eq!(sends[3..], [CompletionStatus::Success; 2]);
                    assert_eq!(s.vi.query().state, ViState::Connected, "{p}");
                    assert!(s.vi.recv_done().is_none(), "{p}: dropped, not delivered");
                }
                _ => {
                    let fourth_ok = [
                        CompletionStatus::RemoteDescriptorError,
                        CompletionStatus::Success,
                    ];
                    if rel == Reliability::ReliableReception {
                        assert_eq!(sends[3], CompletionStatus::RemoteDescriptorError, "{p}");
                    } else {
                        assert!(fourth_ok.contains(&sends[3]), "{p}: {sends:?}");
                    }
                    assert_eq!(sends[4], CompletionStatus::Flushed, "{p} {rel:?}");
                    assert_eq!(c.vi.query().state, ViState::Error, "{p} {rel:?}");
                }
            }
        }
    }
}

/// Four threads post 50 sends each on one VI: every message arrives exactly once, and each
/// thread's messages in the order it posted them.
#[test]
fn sends_posted_from_several_threads_arrive_exactly_once_in_per_thread_order() {
    const THREADS: u8 = 4;
    const EACH: u8 = 50;
    for p in PROVIDERS {
        let (c, s) = pair(p, Reliability::ReliableReception);
        let n = usize::from(THREADS) * usize::from(EACH);
        let dst = s.region(2 * n, false);
        for i in 0..n {
            s.vi.post_recv(Descriptor::recv([Segment::new(
                dst.handle(),
                2 * i as u64,
                2,
            )]))
            .unwrap();
        }
        let src = c.region(2 * n, false);
        src.with_mut(|b| {
            for t in 0..THREADS {
                for k in 0..EACH {
                    let at = 2 * (usize::from(t) * usize::from(EACH) + usize::from(k));
                    b[at..at + 2].copy_from_slice(&[t, k]);
                }
            }
        });
        let receiver = std::thread::spawn(move || {
            for _ in 0..n {
                assert_eq!(s.vi.recv_wait(T).unwrap().status, CompletionStatus::Success);
            }
            s.vi.progress();
            s
        });
        std::thread::scope(|sc| {
            for t in 0..THREADS {
                let (vi, src) = (&c.vi, &src);
                sc.spawn(move || {
                    for k in 0..EACH {
                        let at = 2 * (u64::from(t) * u64::from(EACH) + u64::from(k));
                        vi.post_send(Descriptor::send([Segment::new(src.handle(), at, 2)]))
                            .unwrap();
                    }
                });
            }
        });
        for _ in 0..n {
            assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        }
        let s = receiver.join().unwrap();
        let got = s.vi.query();
        assert_eq!(got.recv_posted, 0);
        let msgs = dst.with(|d| d.chunks(2).map(|m| (m[0], m[1])).collect::<Vec<_>>());
        let mut seen = std::collections::HashSet::new();
        let mut next = [0u8; THREADS as usize];
        for (t, k) in msgs {
            assert!(seen.insert((t, k)), "{p}: ({t}, {k}) twice");
            assert_eq!(k, next[usize::from(t)], "{p}: thread {t} out of order");
            next[usize::from(t)] += 1;
        }
        assert_eq!(next, [EACH; THREADS as usize], "{p}: all arrived");
    }
}

#[test]
fn immediate_data_without_payload_and_segment_limits() {
    for p in PROVIDERS {
        for rel in LEVELS {
            let (c, s) = pair(p, rel);
            let none = s.region(0, false);
            s.vi.post_recv(Descriptor::recv([Segment::new(none.handle(), 0, 0)]))
                .unwrap();
            c.vi.post_send(Descriptor::send([]).with_immediate(0xdead_beef))
                .unwrap();
            let r = s.vi.recv_wait(T).unwrap();
            assert_eq!(
                (r.status, r.length, r.immediate),
                (CompletionStatus::Success, 0, Some(0xdead_beef)),
                "{p} {rel:?}"
            );
            // more segments than a descriptor may have: refused at post, VI unharmed
            let m = c.region(64, false);
            let segs = (0..=attrs::MAX_SEGMENTS as u64).map(|i| Segment::new(m.handle(), i, 1));
            let e = c.vi.post_send(Descriptor::send(segs));
            assert!(matches!(e, Err(ViaError::Descriptor(_))), "{p}: {e:?}");
            assert_eq!(c.vi.query().state, ViState::Connected);
        }
    }
}

/// A CQ of capacity 2 fed three completions reports the overflow instead of losing one
/// silently.
#[test]
fn a_completion_queue_overflow_is_reported() {
    for p in PROVIDERS {
        let snic = Nic::open(&server_url(p)).unwrap();
        let addr = snic.address().to_string();
        let cq = snic.create_cq(2).unwrap();
        let spt = snic.create_ptag();
        let svi = snic
            .create_vi(
                ViAttributes::new(spt, Reliability::ReliableDelivery),
                None,
                Some(&cq),
            )
            .unwrap();
        let cnic = Nic::open(&client_url(p)).unwrap();
        let cpt = cnic.create_ptag();
        let cvi = cnic
            .create_vi(
                ViAttributes::new(cpt, Reliability::ReliableDelivery),
                None,
                None,
            )
            .unwrap();
        std::thread::scope(|sc| {
            sc.spawn(|| cnic.connect_request(&cvi, &addr, b"cq", T).unwrap());
            snic.connect_wait(b"cq", T).unwrap().accept(&svi).unwrap();
        });
        let dst = snic.register_mem(24, MemAttributes::local(spt)).unwrap();
        for i in 0..3 {
            svi.post_recv(Descriptor::recv([Segment::new(dst.handle(), i * 8, 8)]))
                .unwrap();
        }
        let src = cnic.register_mem(8, MemAttributes::local(cpt)).unwrap();
        for _ in 0..3 {
            cvi.post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
                .unwrap();
        }
        // all three completions land on the VI; the CQ can only note two of them
        for _ in 0..3 {
            assert_eq!(svi.recv_wait(T).unwrap().status, CompletionStatus::Success);
        }
        let e = cq.done();
        assert!(
            matches!(e, Err(ViaError::ResourceExhausted(_))),
            "{p}: {e:?}"
        );
    }
}

/// Issue 33: a reliable send completes without the receiver's help. The receiver takes the
/// message and then never calls the library again (it computes, or waits on something else):
/// the NIC's ack keeper acknowledges for it, so the sender's own `send_wait` completes with
/// `Success` (a recording of the run then holds the send as well as the receive). Before
/// the keeper, the send waited for the receiver's next call.
#[test]
fn a_reliable_send_completes_though_the_receiver_never_calls_again() {
    for p in PROVIDERS {
        for rel in [
            Reliability::ReliableDelivery,
            Reliability::ReliableReception,
        ] {
            let (c, s) = pair(p, rel);
            let dst = s.region(8, false);
            s.vi.post_recv(Descriptor::recv([Segment::new(dst.handle(), 0, 8)]))
                .unwrap();
            let src = c.region(8, false);
            src.write(0, b"complete").unwrap();
            c.vi.post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
                .unwrap();
            let got = s.vi.recv_wait(T).unwrap();
            assert_eq!(got.length, 8, "{p} {rel:?}");
            // From here the receiver makes no call at all until the end of the test.
            let done = c.vi.send_wait(T).unwrap();
            assert_eq!(done.status, CompletionStatus::Success, "{p} {rel:?}");
            dst.with(|d| assert_eq!(d, b"complete"));
        }
    }
}
