//! In-process tests of the API over both providers (two threads, loopback only). Each error
//! case of the issue is checked with the VIA-defined outcome.

mod common;

use common::*;
use icn_via::*;

const PROVIDERS: [&str; 2] = ["tcp", "shm"];
const RELIABLE: [Reliability; 2] = [
    Reliability::ReliableDelivery,
    Reliability::ReliableReception,
];

/// The passive side of an RDMA test: keep the VI progressing for `ms` milliseconds.
fn serve(vi: &Vi, ms: u64) {
    for _ in 0..ms {
        vi.progress();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn seg(r: &MemRegion, off: u64, len: u32) -> Segment {
    Segment::new(r.handle(), off, len)
}

#[test]
fn multi_segment_send_with_immediate_lands_in_order_in_the_receive_segments() {
    for p in PROVIDERS {
        for rel in [
            Reliability::Unreliable,
            Reliability::ReliableDelivery,
            Reliability::ReliableReception,
        ] {
            let (c, s) = pair(p, rel);
            let src = c.region(100, false);
            src.write(0, &pattern(1, 100)).unwrap();
            let dst = s.region(100, false);
            // receive scattered into two pieces of one region, in reverse layout
            s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 60, 40), seg(&dst, 0, 60)]).with_id(9))
                .unwrap();
            c.vi.post_send(
                Descriptor::send(vec![seg(&src, 0, 30), seg(&src, 30, 70)]).with_immediate(0xabcd),
            )
            .unwrap();
            let rc = s.vi.recv_wait(T).unwrap();
            assert_eq!(
                (
                    rc.status,
                    rc.length,
                    rc.immediate,
                    rc.desc.id,
                    rc.by_rdma_write
                ),
                (CompletionStatus::Success, 100, Some(0xabcd), 9, false)
            );
            s.vi.progress();
            let sc = c.vi.send_wait(T).unwrap();
            assert_eq!(
                (sc.status, sc.op, sc.length),
                (CompletionStatus::Success, CompletedOp::Send, 100)
            );
            let got = dst.with(|d| [&d[60..100], &d[0..60]].concat());
            assert_eq!(got, pattern(1, 100), "{p} {rel:?}");
        }
    }
}

#[test]
fn zero_byte_send_completes_both_sides() {
    for p in PROVIDERS {
        let (c, s) = pair(p, Reliability::ReliableReception);
        s.vi.post_recv(Descriptor::recv(vec![])).unwrap();
        c.vi.post_send(Descriptor::send(vec![])).unwrap();
        assert_eq!(s.vi.recv_wait(T).unwrap().length, 0);
        s.vi.progress();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
    }
}

#[test]
fn send_without_posted_receive_breaks_reliable_vis_and_is_dropped_on_unreliable() {
    for p in PROVIDERS {
        for rel in RELIABLE {
            let (c, s) = pair(p, rel);
            let src = c.region(8, false);
            c.vi.post_send(Descriptor::send(vec![seg(&src, 0, 8)]).with_id(1))
                .unwrap();
            c.vi.post_send(Descriptor::send(vec![seg(&src, 0, 8)]).with_id(2))
                .unwrap();
            // the receiver notices while waiting: its VI breaks
            let dst = s.region(8, false);
            let e = s.vi.recv_wait(T);
            assert!(e.is_err(), "{p} {rel:?}: {e:?}");
            assert_eq!(s.vi.query().state, ViState::Error);
            let first = c.vi.send_wait(T).unwrap();
            let second = c.vi.send_wait(T).unwrap();
            if rel == Reliability::ReliableReception {
                assert_eq!(first.status, CompletionStatus::RemoteDescriptorError, "{p}");
            } else {
                // reliable delivery: the first send had reached the peer, so it may have been acked
                assert!(
                    matches!(
                        first.status,
                        CompletionStatus::RemoteDescriptorError | CompletionStatus::Success
                    ),
                    "{p}"
                );
            }
            assert_eq!(second.status, CompletionStatus::Flushed, "{p} {rel:?}");
            assert_eq!(c.vi.query().state, ViState::Error);
            assert!(matches!(
                c.vi.post_send(Descriptor::send(vec![])),
                Err(ViaError::ConnectionLost(_))
            ));
            assert!(matches!(
                s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 0, 8)])),
                Err(ViaError::ConnectionLost(_))
            ));
        }
        // unreliable: the frame is dropped, the VI stays up and the next message gets through
        let (c, s) = pair(p, Reliability::Unreliable);
        let src = c.region(8, false);
        let dst = s.region(8, false);
        src.write(0, b"dropped!").unwrap();
        c.vi.post_send(Descriptor::send(vec![seg(&src, 0, 8)]))
            .unwrap();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        assert!(s.vi.recv_done().is_none());
        s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 0, 8)]))
            .unwrap();
        src.write(0, b"arrived!").unwrap();
        c.vi.post_send(Descriptor::send(vec![seg(&src, 0, 8)]))
            .unwrap();
        assert_eq!(s.vi.recv_wait(T).unwrap().length, 8);
        assert_eq!(dst.with(|d| d.to_vec()), b"arrived!");
        assert_eq!(s.vi.query().state, ViState::Connected);
    }
}

#[test]
fn message_longer_than_the_receive_gives_length_error() {
    for p in PROVIDERS {
        let (c, s) = pair(p, Reliability::ReliableReception);
        let src = c.region(16, false);
        let dst = s.region(16, false);
        dst.write(0, &[0xee; 16]).unwrap();
        s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 0, 8)]))
            .unwrap();
        c.vi.post_send(Descriptor::send(vec![seg(&src, 0, 16)]))
            .unwrap();
        assert_eq!(
            s.vi.recv_wait(T).unwrap().status,
            CompletionStatus::LengthError
        );
        assert_eq!(
            c.vi.send_wait(T).unwrap().status,
            CompletionStatus::RemoteDescriptorError
        );
        assert_eq!(
            dst.with(|d| d.to_vec()),
            vec![0xee; 16],
            "nothing written on a length error"
        );
    }
}

#[test]
fn segment_with_another_ptag_or_outside_its_region_is_a_protection_error() {
    for p in PROVIDERS {
        let (c, _s) = pair(p, Reliability::Unreliable);
        let other = c.nic.create_ptag();
        let foreign = c.nic.register_mem(8, MemAttributes::local(other)).unwrap();
        let mine = c.region(8, false);
        c.vi.post_send(Descriptor::send(vec![seg(&foreign, 0, 8)]).with_id(1))
            .unwrap();
        c.vi.post_send(Descriptor::send(vec![seg(&mine, 4, 5)]).with_id(2))
            .unwrap();
        let a = c.vi.send_wait(T).unwrap();
        let b = c.vi.send_wait(T).unwrap();
        assert_eq!(
            (a.desc.id, a.status),
            (1, CompletionStatus::ProtectionError)
        );
        assert_eq!(
            (b.desc.id, b.status),
            (2, CompletionStatus::ProtectionError)
        );
        assert_eq!(
            c.vi.query().state,
            ViState::Connected,
            "unreliable VIs survive local errors"
        );
        // on a reliable VI a local protection error breaks the connection
        let (c, s) = pair(p, Reliability::ReliableDelivery);
        let mine = c.region(8, false);
        let dst = s.region(8, false);
        s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 0, 8)]))
            .unwrap();
        c.vi.post_send(Descriptor::send(vec![seg(&mine, 0, 9)]))
            .unwrap();
        assert_eq!(
            c.vi.send_wait(T).unwrap().status,
            CompletionStatus::ProtectionError
        );
        assert_eq!(c.vi.query().state, ViState::Error);
        let r = s.vi.recv_wait(T).unwrap();
        assert_eq!(
            r.status,
            CompletionStatus::Flushed,
            "the survivor's receive is flushed"
        );
    }
}

#[test]
fn rdma_write_and_read_with_rights() {
    for p in PROVIDERS {
        for rel in RELIABLE {
            let (c, s) = pair(p, rel);
            let local = c.region(64, false);
            local.write(0, &pattern(5, 64)).unwrap();
            let target = s.region(128, true);
            let remote = RemoteAddr {
                handle: target.handle(),
                offset: 32,
            };
            c.vi.post_send(Descriptor::rdma_write(remote, vec![seg(&local, 0, 64)]))
                .unwrap();
            s.vi.progress();
            assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
            // a write with immediate consumes a receive and tells the target it is done
            let note = s.region(0, false);
            s.vi.post_recv(Descriptor::recv(vec![seg(&note, 0, 0)]))
                .unwrap();
            c.vi.post_send(
                Descriptor::rdma_write(
                    RemoteAddr {
                        handle: target.handle(),
                        offset: 0,
                    },
                    vec![seg(&local, 0, 8)],
                )
                .with_immediate(77),
            )
            .unwrap();
            let rc = s.vi.recv_wait(T).unwrap();
            assert_eq!(
                (rc.status, rc.immediate, rc.length, rc.by_rdma_write),
                (CompletionStatus::Success, Some(77), 8, true)
            );
            s.vi.progress();
            assert_eq!(c.vi.send_wait(T).unwrap().op, CompletedOp::RdmaWrite);
            target.with(|t| {
                assert_eq!(&t[32..96], &pattern(5, 64)[..]);
                assert_eq!(&t[0..8], &pattern(5, 64)[..8]);
                assert!(t[8..32].iter().all(|&b| b == 0) && t[96..].iter().all(|&b| b == 0));
            });
            // read it back into a fresh region
            let back = c.region(64, false);
            c.vi.post_send(Descriptor::rdma_read(remote, vec![seg(&back, 0, 64)]))
                .unwrap();
            // the target's provider answers while its consumer waits on anything
            let t = std::thread::spawn(move || {
                serve(&s.vi, 300);
                s
            });
            let rc = c.vi.send_wait(T).unwrap();
            assert_eq!(
                (rc.status, rc.op),
                (CompletionStatus::Success, CompletedOp::RdmaRead)
            );
            assert_eq!(back.with(|b| b.to_vec()), pattern(5, 64));
            drop(t.join().unwrap());
        }
    }
}

#[test]
fn rdma_without_rights_is_refused_and_writes_nothing() {
    for p in PROVIDERS {
        for rel in RELIABLE {
            // region without RDMA write
            let (c, s) = pair(p, rel);
            let local = c.region(8, false);
            local.write(0, &[1; 8]).unwrap();
            let target = s.region(8, false);
            c.vi.post_send(Descriptor::rdma_write(
                RemoteAddr {
                    handle: target.handle(),
                    offset: 0,
                },
                vec![seg(&local, 0, 8)],
            ))
            .unwrap();
            let t = std::thread::spawn(move || {
                serve(&s.vi, 300);
                (s, ())
            });
            assert_eq!(
                c.vi.send_wait(T).unwrap().status,
                CompletionStatus::RdmaProtectionError,
                "{p} {rel:?}"
            );
            let (s, _) = t.join().unwrap();
            assert_eq!(target.with(|t| t.to_vec()), vec![0; 8]);
            assert_eq!(s.vi.query().state, ViState::Error);
            // region allows RDMA, VI does not allow RDMA read
            let (c, s) = pair_with(
                p,
                move |pt| ViAttributes::new(pt, rel),
                move |pt| ViAttributes {
                    enable_rdma_read: false,
                    ..ViAttributes::new(pt, rel)
                },
            );
            let target = s.region(8, true);
            let back = c.region(8, false);
            c.vi.post_send(Descriptor::rdma_read(
                RemoteAddr {
                    handle: target.handle(),
                    offset: 0,
                },
                vec![seg(&back, 0, 8)],
            ))
            .unwrap();
            let t = std::thread::spawn(move || {
                serve(&s.vi, 300);
                s
            });
            assert_eq!(
                c.vi.send_wait(T).unwrap().status,
                CompletionStatus::RdmaProtectionError
            );
            drop(t.join().unwrap());
            // out-of-bounds RDMA write on an RDMA region
            let (c, s) = pair(p, rel);
            let target = s.region(8, true);
            let local = c.region(8, false);
            c.vi.post_send(Descriptor::rdma_write(
                RemoteAddr {
                    handle: target.handle(),
                    offset: 1,
                },
                vec![seg(&local, 0, 8)],
            ))
            .unwrap();
            let t = std::thread::spawn(move || {
                serve(&s.vi, 300);
                s
            });
            assert_eq!(
                c.vi.send_wait(T).unwrap().status,
                CompletionStatus::RdmaProtectionError
            );
            drop(t.join().unwrap());
        }
        // unreliable: an RDMA write without rights is dropped silently, VI stays up
        let (c, s) = pair(p, Reliability::Unreliable);
        let target = s.region(8, false);
        let local = c.region(8, false);
        local.write(0, &[3; 8]).unwrap();
        c.vi.post_send(Descriptor::rdma_write(
            RemoteAddr {
                handle: target.handle(),
                offset: 0,
            },
            vec![seg(&local, 0, 8)],
        ))
        .unwrap();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        let dst = s.region(8, false);
        s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 0, 8)]))
            .unwrap();
        c.vi.post_send(Descriptor::send(vec![seg(&local, 0, 8)]))
            .unwrap();
        assert_eq!(s.vi.recv_wait(T).unwrap().status, CompletionStatus::Success);
        assert_eq!(target.with(|t| t.to_vec()), vec![0; 8]);
    }
}

#[test]
fn rdma_read_is_refused_at_post_on_unreliable_vis() {
    let (c, _s) = pair("tcp", Reliability::Unreliable);
    let r = c.region(8, false);
    let e = c.vi.post_send(Descriptor::rdma_read(
        RemoteAddr {
            handle: MemHandle::from_raw(1),
            offset: 0,
        },
        vec![seg(&r, 0, 8)],
    ));
    assert!(matches!(e, Err(ViaError::Descriptor(_))));
}

#[test]
fn connection_management_reject_mismatch_and_timeouts() {
    for p in PROVIDERS {
        let snic = Nic::open(&server_url(p)).unwrap();
        let addr = snic.address().to_string();
        let cnic = Nic::open(&client_url(p)).unwrap();
        let pt = cnic.create_ptag();
        // nobody waits: the request times out
        let vi = cnic
            .create_vi(ViAttributes::new(pt, Reliability::Unreliable), None, None)
            .unwrap();
        let e = cnic.connect_request(
            &vi,
            &addr,
            b"nobody",
            Some(std::time::Duration::from_millis(200)),
        );
        assert!(matches!(e, Err(ViaError::Timeout)), "{p}: {e:?}");
        assert_eq!(vi.query().state, ViState::Idle);
        // a waiter with another discriminator times out, keeping the request
        assert!(matches!(
            snic.connect_wait(b"other", Some(std::time::Duration::from_millis(100))),
            Err(ViaError::Timeout)
        ));
        // reject
        let s2 = snic.clone();
        let t = std::thread::spawn(move || s2.connect_wait(b"rej", T).unwrap().reject().unwrap());
        let vi = cnic
            .create_vi(ViAttributes::new(pt, Reliability::Unreliable), None, None)
            .unwrap();
        assert!(matches!(
            cnic.connect_request(&vi, &addr, b"rej", T),
            Err(ViaError::Rejected)
        ));
        t.join().unwrap();
        // reliability mismatch: the server's accept fails and the client is rejected
        let s2 = snic.clone();
        let t = std::thread::spawn(move || {
            let spt = s2.create_ptag();
            let svi = s2
                .create_vi(
                    ViAttributes::new(spt, Reliability::ReliableReception),
                    None,
                    None,
                )
                .unwrap();
            s2.connect_wait(b"mm", T).unwrap().accept(&svi)
        });
        let vi = cnic
            .create_vi(ViAttributes::new(pt, Reliability::Unreliable), None, None)
            .unwrap();
        assert!(matches!(
            cnic.connect_request(&vi, &addr, b"mm", T),
            Err(ViaError::Rejected)
        ));
        assert!(matches!(
            t.join().unwrap(),
            Err(ViaError::InvalidParameter(_))
        ));
        // invalid parameters
        assert!(matches!(
            cnic.connect_request(&vi, &addr, &[0; 65], T),
            Err(ViaError::InvalidParameter(_))
        ));
        assert!(matches!(
            cnic.connect_request(&vi, "udp://x", b"", T),
            Err(ViaError::InvalidParameter(_))
        ));
        assert!(matches!(
            Nic::open("bogus"),
            Err(ViaError::InvalidParameter(_))
        ));
        let bad = ViAttributes {
            max_transfer_size: 0,
            ..ViAttributes::new(pt, Reliability::Unreliable)
        };
        assert!(matches!(
            cnic.create_vi(bad, None, None),
            Err(ViaError::InvalidParameter(_))
        ));
    }
}

#[test]
fn disconnect_flushes_and_the_peer_sees_it() {
    for p in PROVIDERS {
        let (c, s) = pair(p, Reliability::ReliableDelivery);
        let dst = s.region(8, false);
        s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 0, 8)]))
            .unwrap();
        c.vi.disconnect().unwrap();
        assert_eq!(c.vi.query().state, ViState::Idle);
        let r = s.vi.recv_wait(T).unwrap();
        assert_eq!(r.status, CompletionStatus::Flushed);
        assert_eq!(s.vi.query().state, ViState::Idle);
        assert!(matches!(
            c.vi.post_send(Descriptor::send(vec![])),
            Err(ViaError::InvalidState(_))
        ));
    }
}

#[test]
fn wait_times_out_and_done_polls() {
    for p in PROVIDERS {
        let (c, s) = pair(p, Reliability::ReliableReception);
        let dst = s.region(8, false);
        s.vi.post_recv(Descriptor::recv(vec![seg(&dst, 0, 8)]))
            .unwrap();
        assert!(s.vi.recv_done().is_none());
        assert!(matches!(
            s.vi.recv_wait(Some(std::time::Duration::from_millis(50))),
            Err(ViaError::Timeout)
        ));
        assert!(
            matches!(c.vi.send_wait(T), Err(ViaError::InvalidState(_))),
            "nothing posted"
        );
        let q = s.vi.query();
        assert_eq!(
            (q.recv_posted, q.send_posted, q.state),
            (1, 0, ViState::Connected)
        );
    }
}

#[test]
fn completion_queue_gathers_two_vis() {
    for p in PROVIDERS {
        let snic = Nic::open(&server_url(p)).unwrap();
        let addr = snic.address().to_string();
        let cq = snic.create_cq(16).unwrap();
        let spt = snic.create_ptag();
        let cq2 = cq.clone();
        let s2 = snic.clone();
        let srv = std::thread::spawn(move || {
            let mut vis = Vec::new();
            for d in [b"a", b"b"] {
                let vi = s2
                    .create_vi(
                        ViAttributes::new(spt, Reliability::ReliableDelivery),
                        None,
                        Some(&cq2),
                    )
                    .unwrap();
                s2.connect_wait(d, T).unwrap().accept(&vi).unwrap();
                vis.push(vi);
            }
            vis
        });
        let cnic = Nic::open(&client_url(p)).unwrap();
        let pt = cnic.create_ptag();
        let mut cvis = Vec::new();
        for d in [b"a", b"b"] {
            let vi = cnic
                .create_vi(
                    ViAttributes::new(pt, Reliability::ReliableDelivery),
                    None,
                    None,
                )
                .unwrap();
            cnic.connect_request(&vi, &addr, d, T).unwrap();
            cvis.push(vi);
        }
        let svis = srv.join().unwrap();
        let dst = snic.register_mem(16, MemAttributes::local(spt)).unwrap();
        for (i, vi) in svis.iter().enumerate() {
            vi.post_recv(Descriptor::recv(vec![Segment::new(
                dst.handle(),
                i as u64 * 8,
                8,
            )]))
            .unwrap();
        }
        assert_eq!(cq.done().unwrap(), None);
        let src = cnic.register_mem(8, MemAttributes::local(pt)).unwrap();
        cvis[1]
            .post_send(Descriptor::send(vec![seg(&src, 0, 8)]))
            .unwrap();
        let (id, q) = cq.wait(T).unwrap();
        assert_eq!((id, q), (svis[1].id(), WorkQueue::Recv));
        assert_eq!(svis[1].recv_done().unwrap().length, 8);
        assert!(svis[0].recv_done().is_none());
        cq.resize(1).unwrap();
        assert!(cq.resize(0).is_err());
    }
}

/// A wait between frames with a large receive posted reads the next header and the start of
/// its payload straight into that receive (tcp): frames that do not belong there (an RDMA
/// write, a second send behind the first) must still land intact and in order.
#[test]
fn frames_queued_behind_a_large_posted_receive_land_in_order() {
    for p in PROVIDERS {
        for rel in RELIABLE {
            let (c, s) = pair(p, rel);
            let src = c.region(100_000, false);
            src.write(0, &pattern(7, 100_000)).unwrap();
            let target = s.region(40_000, true);
            let inb = s.region(2 * 65_536, false);
            for k in 0..2 {
                s.vi.post_recv(Descriptor::recv(vec![seg(&inb, k * 65_536, 65_536)]).with_id(k))
                    .unwrap();
            }
            let remote = RemoteAddr {
                handle: target.handle(),
                offset: 0,
            };
            c.vi.post_send(Descriptor::rdma_write(remote, vec![seg(&src, 0, 40_000)]))
                .unwrap();
            c.vi.post_send(Descriptor::send(vec![seg(&src, 100, 50_000)]))
                .unwrap();
            c.vi.post_send(Descriptor::send(vec![seg(&src, 7, 20)]))
                .unwrap();
            let a = s.vi.recv_wait(T).unwrap();
            let b = s.vi.recv_wait(T).unwrap();
            assert_eq!(
                (a.status, a.desc.id, a.length, b.status, b.desc.id, b.length),
                (
                    CompletionStatus::Success,
                    0,
                    50_000,
                    CompletionStatus::Success,
                    1,
                    20
                ),
                "{p} {rel:?}"
            );
            let all = pattern(7, 100_000);
            inb.with(|d| {
                assert_eq!(&d[..50_000], &all[100..50_100], "{p} {rel:?}");
                assert_eq!(&d[65_536..65_556], &all[7..27], "{p} {rel:?}");
            });
            target.with(|t| assert_eq!(t, &all[..40_000], "{p} {rel:?}"));
            s.vi.progress();
            for _ in 0..3 {
                assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
            }
        }
    }
}

/// The caller's own memory ([`Nic::register_user_mem`]) as send source, receive target, RDMA
/// write target and RDMA read source, on both providers: the bytes land in / come from the
/// caller's buffers, which hold them after the scope.
#[test]
fn user_memory_serves_send_receive_and_rdma_without_a_library_buffer() {
    const OUT: u64 = 0; // client: 1000 B sent, then 64 B read back at BACK
    const BACK: u64 = 1000;
    const INBOX: u64 = 0; // server: 1000 B received, RDMA target at TARGET
    const TARGET: u64 = 1000;
    for p in PROVIDERS {
        let (c, s) = pair(p, Reliability::ReliableDelivery);
        let sent = pattern(1, 1000);
        let mut cbuf = [sent.clone(), vec![0; 64]].concat();
        let mut sbuf = vec![0u8; 1000 + 256];
        c.nic
            .register_user_mem(&mut cbuf, MemAttributes::local(c.ptag), |cm| {
                s.nic
                    .register_user_mem(&mut sbuf, MemAttributes::rdma(s.ptag), |sm| {
                        let cseg = |off, len| Segment::new(cm.handle(), off, len);
                        s.vi.post_recv(Descriptor::recv([Segment::new(sm.handle(), INBOX, 1000)]))
                            .unwrap();
                        c.vi.post_send(Descriptor::send([cseg(OUT, 1000)])).unwrap();
                        let r = s.vi.recv_wait(T).unwrap();
                        assert_eq!((r.status, r.length), (CompletionStatus::Success, 1000));
                        s.vi.progress(); // sends the ack the client waits for
                        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
                        let remote = RemoteAddr {
                            handle: sm.handle(),
                            offset: TARGET + 100,
                        };
                        c.vi.post_send(Descriptor::rdma_write(remote, [cseg(OUT + 10, 64)]))
                            .unwrap();
                        s.vi.progress();
                        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
                        c.vi.post_send(Descriptor::rdma_read(remote, [cseg(BACK, 64)]))
                            .unwrap();
                        let read = std::thread::scope(|sc| {
                            sc.spawn(|| serve(&s.vi, 300));
                            c.vi.send_wait(T).unwrap()
                        });
                        assert_eq!(
                            (read.status, read.op),
                            (CompletionStatus::Success, CompletedOp::RdmaRead)
                        );
                    })
                    .unwrap();
            })
            .unwrap();
        assert_eq!(
            &sbuf[..1000],
            &sent[..],
            "{p}: received into the caller's buffer"
        );
        let target = &sbuf[TARGET as usize..];
        assert_eq!(&target[100..164], &sent[10..74], "{p}: RDMA-written");
        assert!(target[..100].iter().chain(&target[164..]).all(|&x| x == 0));
        assert_eq!(
            &cbuf[1000..],
            &sent[10..74],
            "{p}: RDMA-read into the caller's buffer"
        );
    }
}

/// RDMA writes by each single-copy path (on the writer: `cma_min` = 1, cross-memory attach;
/// or `single_copy_min` = 1, the target copying out of the writer's shared region), in one
/// process over shm: with rights the bytes land (with and without immediate data); without rights, or a
/// send that finds no receive, the frame is refused like a ring frame and nothing is written
/// (the receiver skips the copy).
#[test]
fn single_copy_rdma_writes_land_or_are_refused_like_ring_frames() {
    for (cma_min, single_copy_min) in [(1, 0), (0, 1)] {
        single_copy_rdma_writes(cma_min, single_copy_min);
    }
}

fn single_copy_rdma_writes(cma_min: u32, single_copy_min: u32) {
    let cma = |rel| {
        move |pt| ViAttributes {
            cma_min,
            single_copy_min,
            ..ViAttributes::new(pt, rel)
        }
    };
    let plain = |rel| move |pt| ViAttributes::new(pt, rel);
    let rel = Reliability::ReliableReception;
    let (c, s) = pair_with("shm", cma(rel), plain(rel));
    let data = pattern(7, 100_000);
    let src = c.region(data.len(), false);
    src.write(0, &data).unwrap();
    let target = s.region(200_000, true);
    let at = |offset| RemoteAddr {
        handle: target.handle(),
        offset,
    };
    c.vi.post_send(Descriptor::rdma_write(at(1000), [seg(&src, 0, 100_000)]))
        .unwrap();
    s.vi.progress();
    assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
    let note = s.region(0, false);
    s.vi.post_recv(Descriptor::recv([seg(&note, 0, 0)]))
        .unwrap();
    c.vi.post_send(Descriptor::rdma_write(at(150_000), [seg(&src, 0, 40_000)]).with_immediate(9))
        .unwrap();
    let r = s.vi.recv_wait(T).unwrap();
    assert_eq!(
        (r.status, r.immediate, r.length, r.by_rdma_write),
        (CompletionStatus::Success, Some(9), 40_000, true)
    );
    s.vi.progress();
    assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
    assert_eq!(c.vi.query().single_copy_sends, 2);
    target.with(|t| {
        assert_eq!(&t[1000..101_000], &data[..]);
        assert_eq!(&t[150_000..190_000], &data[..40_000]);
        assert!(t[..1000].iter().all(|&b| b == 0));
        assert!(t[101_000..150_000].iter().all(|&b| b == 0));
    });
    // an RDMA read of the (shared) target: the server answers with a descriptor (its
    // default single_copy_min) and the client copies straight out of the target region
    let back = c.region(120_000, false);
    c.vi.post_send(Descriptor::rdma_read(
        at(1000),
        [seg(&back, 10_000, 100_000)],
    ))
    .unwrap();
    let r = loop {
        s.vi.progress();
        if let Some(r) = c.vi.send_done() {
            break r;
        }
    };
    assert_eq!(r.status, CompletionStatus::Success);
    assert_eq!(
        s.vi.query().single_copy_sends,
        1,
        "read answered by descriptor"
    );
    back.with(|b| {
        assert_eq!(&b[10_000..110_000], &data[..]);
        assert!(b[..10_000].iter().chain(&b[110_000..]).all(|&x| x == 0));
    });
    // no rights: refused, nothing written, both VIs break
    let (c, s) = pair_with("shm", cma(rel), plain(rel));
    let src = c.region(data.len(), false);
    src.write(0, &data).unwrap();
    let local_only = s.region(200_000, false);
    c.vi.post_send(Descriptor::rdma_write(
        RemoteAddr {
            handle: local_only.handle(),
            offset: 0,
        },
        [seg(&src, 0, 100_000)],
    ))
    .unwrap();
    s.vi.progress();
    assert_eq!(
        c.vi.send_wait(T).unwrap().status,
        CompletionStatus::RdmaProtectionError
    );
    assert_eq!(c.vi.query().single_copy_sends, 1);
    assert!(local_only.with(|t| t.iter().all(|&b| b == 0)));
    // a send that finds no receive: refused like a ring frame, the copy skipped
    let (c, s) = pair_with("shm", cma(rel), plain(rel));
    let src = c.region(data.len(), false);
    c.vi.post_send(Descriptor::send([seg(&src, 0, 100_000)]))
        .unwrap();
    assert!(s.vi.recv_wait(T).is_err());
    assert_eq!(
        c.vi.send_wait(T).unwrap().status,
        CompletionStatus::RemoteDescriptorError
    );
}

/// `connect_request` waits for a server that starts after it (VIA's timeout semantics), and
/// times out when none ever does.
#[test]
fn a_request_waits_for_a_server_that_starts_later_and_times_out_without_one() {
    for p in PROVIDERS {
        let url = match p {
            "tcp" => {
                // a port nobody listens on until the server opens it below
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                format!("tcp://{}", l.local_addr().unwrap())
            }
            _ => format!("shm:///icn-via-late/{}", std::process::id()),
        };
        let cnic = Nic::open(&client_url(p)).unwrap();
        let pt = cnic.create_ptag();
        let vi = cnic
            .create_vi(
                ViAttributes::new(pt, Reliability::ReliableDelivery),
                None,
                None,
            )
            .unwrap();
        let start = std::time::Instant::now();
        let e = cnic.connect_request(
            &vi,
            &url,
            b"late",
            Some(std::time::Duration::from_millis(150)),
        );
        assert!(matches!(e, Err(ViaError::Timeout)), "{p}: {e:?}");
        assert!(
            start.elapsed() >= std::time::Duration::from_millis(140),
            "{p}: gave up early after {:?}",
            start.elapsed()
        );
        assert_eq!(vi.query().state, ViState::Idle);
        std::thread::scope(|s| {
            let server = s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let snic = Nic::open(&url).unwrap();
                let spt = snic.create_ptag();
                let svi = snic
                    .create_vi(
                        ViAttributes::new(spt, Reliability::ReliableDelivery),
                        None,
                        None,
                    )
                    .unwrap();
                snic.connect_wait(b"late", T).unwrap().accept(&svi).unwrap();
                svi.disconnect().unwrap();
            });
            cnic.connect_request(&vi, &url, b"late", T).unwrap();
            server.join().unwrap();
        });
    }
}
