//! Multi-process integration tests: the far side is a real process (`icn-via-peer`), on both
//! providers, loopback only, every wait bounded.
//!
//! The soak length is `ICN_VIA_SOAK` messages (default 50 000 so `cargo test` stays quick;
//! the 10^6 run: `ICN_VIA_SOAK=1000000 cargo test --release -p icn-via --test
//! multiprocess soak`).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use icn_via::*;

const PROVIDERS: [&str; 2] = ["tcp", "shm"];

struct Peer {
    child: Child,
    addr: String,
}

impl Peer {
    fn spawn(role: &str, provider: &str, rel: &str, arg: &str) -> Peer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_icn-via-peer"))
            .args([role, &server_url(provider), rel, arg])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn icn-via-peer");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("READY ")
            .expect("peer announces its address")
            .to_string();
        Peer { child, addr }
    }

    /// Connects a fresh client NIC/VI to this peer.
    fn connect(&self, provider: &str, rel: Reliability) -> Side {
        self.connect_with(provider, |ptag| ViAttributes::new(ptag, rel))
    }

    /// Connects a fresh client NIC/VI with the attributes `attrs` makes to this peer.
    fn connect_with(&self, provider: &str, attrs: impl Fn(Ptag) -> ViAttributes) -> Side {
        let nic = Nic::open(&client_url(provider)).unwrap();
        let ptag = nic.create_ptag();
        let vi = nic.create_vi(attrs(ptag), None, None).unwrap();
        nic.connect_request(&vi, &self.addr, b"peer", T).unwrap();
        Side { nic, ptag, vi }
    }

    fn wait_ok(mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                assert!(st.success(), "peer failed: {st}");
                return;
            }
            assert!(Instant::now() < deadline, "peer did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
    })
}

/// 0, then every power of two up to 4 MiB with its neighbours ±1.
fn sizes() -> Vec<usize> {
    let mut v = vec![0, 1, 2, 3];
    for k in 2..=22 {
        let p = 1usize << k;
        v.extend([p - 1, p, p + 1]);
    }
    v.retain(|&s| s <= 4 << 20);
    v.dedup();
    v
}

#[test]
fn every_size_from_0_to_4_mib_round_trips_with_checksums() {
    for p in PROVIDERS {
        for (rel, name) in [
            (Reliability::ReliableReception, "reception"),
            (Reliability::Unreliable, "unreliable"),
        ] {
            let peer = Peer::spawn("echo", p, name, "");
            let c = peer.connect(p, rel);
            let max = 4 << 20;
            let out = c.region(max, false);
            let back = c.region(max, false);
            for (i, &n) in sizes().iter().enumerate() {
                let data = pattern(i as u64, n);
                out.write(0, &data).unwrap();
                c.vi.post_recv(Descriptor::recv(vec![Segment::new(
                    back.handle(),
                    0,
                    max as u32,
                )]))
                .unwrap();
                c.vi.post_send(Descriptor::send(vec![Segment::new(
                    out.handle(),
                    0,
                    n as u32,
                )]))
                .unwrap();
                let r = c.vi.recv_wait(T).unwrap();
                assert_eq!(
                    (r.status, r.length as usize),
                    (CompletionStatus::Success, n),
                    "{p} {name} size {n}"
                );
                assert_eq!(
                    back.with(|b| fnv(&b[..n])),
                    fnv(&data),
                    "{p} {name} size {n}: checksum"
                );
                assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
            }
            c.vi.disconnect().unwrap();
            peer.wait_ok();
        }
    }
}

/// The largest transfer: 1 GiB (`MAX_TRANSFER_SIZE`) in one message to another
/// process and back, on both providers, with checksums. Needs ~4 GiB of memory and a few
/// seconds per provider in release, so it is opt-in:
/// `ICN_VIA_BIG=1 cargo test --release -p icn-via --test multiprocess one_gib -- --nocapture`.
#[test]
fn one_gib_in_one_message_round_trips_with_checksums() {
    if std::env::var_os("ICN_VIA_BIG").is_none() {
        eprintln!("skipped: set ICN_VIA_BIG=1 to move 1 GiB each way");
        return;
    }
    let n = icn_via::attrs::MAX_TRANSFER_SIZE as usize;
    assert_eq!(n, 1 << 30);
    for p in PROVIDERS {
        let peer = Peer::spawn("echo", p, "reception", &n.to_string());
        let c = peer.connect(p, Reliability::ReliableReception);
        assert_eq!(
            c.vi.query().attributes.max_transfer_size,
            icn_via::attrs::MAX_TRANSFER_SIZE
        );
        let out = c.region(n, false);
        let back = c.region(n, false);
        let sum = out.with_mut(|b| {
            for (i, x) in b.iter_mut().enumerate() {
                *x = (i as u64).wrapping_mul(0x9e37_79b9) as u8 ^ (i >> 20) as u8;
            }
            fnv(b)
        });
        let t0 = Instant::now();
        c.vi.post_recv(Descriptor::recv([Segment::new(back.handle(), 0, n as u32)]))
            .unwrap();
        c.vi.post_send(Descriptor::send([Segment::new(out.handle(), 0, n as u32)]))
            .unwrap();
        let r = c.vi.recv_wait(Some(Duration::from_secs(120))).unwrap();
        assert_eq!(
            (r.status, r.length as usize),
            (CompletionStatus::Success, n),
            "{p}"
        );
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        eprintln!("{p}: 1 GiB there and back in {:?}", t0.elapsed());
        assert_eq!(back.with(fnv), sum, "{p}: checksum");
        c.vi.disconnect().unwrap();
        peer.wait_ok();
    }
}

/// The single-copy paths: with one of them on for every non-empty send, the client's
/// messages of every size reach another process by it (cross-memory attach, or the
/// receiver's copy out of the client's shared region), intact, on both reliable levels; the
/// VI counts them. With both off, none go that way. (The echo comes back by the peer's
/// defaults: through its shared regions from `SINGLE_COPY_MIN` bytes on.)
#[test]
fn single_copy_sends_of_every_size_arrive_intact_in_another_process() {
    for (rel, name) in [
        (Reliability::ReliableDelivery, "delivery"),
        (Reliability::ReliableReception, "reception"),
    ] {
        for (cma_min, single_copy_min, path) in
            [(1u32, 0u32, "cma"), (0, 1, "shared"), (0, 0, "ring")]
        {
            let peer = Peer::spawn("echo", "shm", name, "");
            let c = peer.connect_with("shm", |ptag| ViAttributes {
                cma_min,
                single_copy_min,
                ..ViAttributes::new(ptag, rel)
            });
            let max = 4 << 20;
            let (out, back) = (c.region(max, false), c.region(max, false));
            let mut nonempty = 0;
            for (i, &n) in sizes().iter().enumerate() {
                let data = pattern(i as u64 + 99, n);
                out.write(0, &data).unwrap();
                c.vi.post_recv(Descriptor::recv([Segment::new(
                    back.handle(),
                    0,
                    max as u32,
                )]))
                .unwrap();
                c.vi.post_send(Descriptor::send([Segment::new(out.handle(), 0, n as u32)]))
                    .unwrap();
                let r = c.vi.recv_wait(T).unwrap();
                assert_eq!(
                    (r.status, r.length as usize),
                    (CompletionStatus::Success, n)
                );
                assert_eq!(
                    back.with(|b| fnv(&b[..n])),
                    fnv(&data),
                    "{name} {path} size {n}"
                );
                assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
                nonempty += u64::from(n > 0);
            }
            let single = c.vi.query().single_copy_sends;
            let want = if path == "ring" { 0 } else { nonempty };
            assert_eq!(single, want, "{name} {path}");
            c.vi.disconnect().unwrap();
            peer.wait_ok();
        }
    }
}

fn soak_count() -> u64 {
    std::env::var("ICN_VIA_SOAK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000)
}

#[test]
fn soak_nothing_lost_duplicated_or_reordered_on_reliable_vis() {
    let n = soak_count();
    for p in PROVIDERS {
        for (rel, name) in [
            (Reliability::ReliableDelivery, "delivery"),
            (Reliability::ReliableReception, "reception"),
        ] {
            let peer = Peer::spawn("sink", p, name, &n.to_string());
            let c = peer.connect(p, rel);
            let t0 = Instant::now();
            const DEPTH: u64 = 64;
            let out = c.region(DEPTH as usize * 16, false);
            let inbox = c.region(4 * 24, false);
            for s in 0..4u64 {
                c.vi.post_recv(
                    Descriptor::recv(vec![Segment::new(inbox.handle(), s * 24, 24)]).with_id(s),
                )
                .unwrap();
            }
            let mut credits = DEPTH;
            let mut outstanding = 0u64;
            let mut report = None;
            let handle_recv = |c: &Side, r: Completion, credits: &mut u64| -> Option<[u8; 24]> {
                assert_eq!(r.status, CompletionStatus::Success);
                let mut rep = None;
                if r.length == 0 {
                    *credits += DEPTH / 2;
                } else {
                    let mut b = [0u8; 24];
                    inbox.read(r.desc.id as usize * 24, &mut b).unwrap();
                    rep = Some(b);
                }
                c.vi.post_recv(
                    Descriptor::recv(vec![Segment::new(inbox.handle(), r.desc.id * 24, 24)])
                        .with_id(r.desc.id),
                )
                .unwrap();
                rep
            };
            for i in 0..n {
                while credits == 0 {
                    let r = c.vi.recv_wait(T).unwrap();
                    report = report.or(handle_recv(&c, r, &mut credits));
                }
                if outstanding == DEPTH {
                    assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
                    outstanding -= 1;
                }
                let slot = (i % DEPTH) * 16;
                out.write(
                    slot as usize,
                    &[
                        i.to_le_bytes(),
                        i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes(),
                    ]
                    .concat(),
                )
                .unwrap();
                c.vi.post_send(Descriptor::send(vec![Segment::new(out.handle(), slot, 16)]))
                    .unwrap();
                credits -= 1;
                outstanding += 1;
                while let Some(r) = c.vi.recv_done() {
                    report = report.or(handle_recv(&c, r, &mut credits));
                }
            }
            while report.is_none() {
                let r = c.vi.recv_wait(T).unwrap();
                report = handle_recv(&c, r, &mut credits);
            }
            for _ in 0..outstanding {
                assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
            }
            let b = report.unwrap();
            let word = |k: usize| u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().unwrap());
            assert_eq!(
                (word(0), word(1), word(2)),
                (n, n, 0),
                "{p} {name}: received, in order, corrupt"
            );
            eprintln!("soak {p} {name}: {n} messages in {:?}", t0.elapsed());
            c.vi.disconnect().unwrap();
            peer.wait_ok();
        }
    }
}

#[test]
fn rdma_write_and_read_against_another_process_with_and_without_rights() {
    for p in PROVIDERS {
        let peer = Peer::spawn("rdma", p, "reception", "");
        let c = peer.connect(p, Reliability::ReliableReception);
        let msg = c.region(12, false);
        c.vi.post_recv(Descriptor::recv(vec![Segment::new(msg.handle(), 0, 12)]))
            .unwrap();
        c.vi.recv_wait(T).unwrap().ok().unwrap();
        let mut h = [0u8; 12];
        msg.read(0, &mut h).unwrap();
        let open = MemHandle::from_raw(u32::from_le_bytes(h[..4].try_into().unwrap()));
        let closed = MemHandle::from_raw(u32::from_le_bytes(h[4..8].try_into().unwrap()));
        let big = MemHandle::from_raw(u32::from_le_bytes(h[8..].try_into().unwrap()));
        // 200 KiB out of the peer's 256 KiB region (on shm: a shared region, so the peer
        // answers with a descriptor and we copy straight out of it), then written back
        // 100 KiB further on from our own (shared, on shm) region and read again
        let mine = c.region(256 << 10, false);
        let n = 200 << 10;
        let want = |i: usize| (i * 13 + 5) as u8;
        c.vi.post_send(Descriptor::rdma_read(
            RemoteAddr {
                handle: big,
                offset: 1000,
            },
            vec![Segment::new(mine.handle(), 0, n as u32)],
        ))
        .unwrap();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        mine.with(|b| assert!((0..n).all(|i| b[i] == want(i + 1000)), "{p}: big read"));
        c.vi.post_send(Descriptor::rdma_write(
            RemoteAddr {
                handle: big,
                offset: 0,
            },
            vec![Segment::new(mine.handle(), 0, 50_000)],
        ))
        .unwrap();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        c.vi.post_send(Descriptor::rdma_read(
            RemoteAddr {
                handle: big,
                offset: 0,
            },
            vec![Segment::new(mine.handle(), 100_000, 60_000)],
        ))
        .unwrap();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        mine.with(|b| {
            // [0, 50 000) now holds what we wrote (bytes 1000.. of the original), the rest
            // the original
            assert!((0..50_000).all(|i| b[100_000 + i] == want(i + 1000)), "{p}");
            assert!((50_000..60_000).all(|i| b[100_000 + i] == want(i)), "{p}");
        });
        let single = c.vi.query().single_copy_sends;
        assert_eq!(single, if p == "shm" { 1 } else { 0 }, "{p}: the write");
        // read the open region
        let local = c.region(4096, false);
        c.vi.post_send(Descriptor::rdma_read(
            RemoteAddr {
                handle: open,
                offset: 0,
            },
            vec![Segment::new(local.handle(), 0, 4096)],
        ))
        .unwrap();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        local.with(|b| assert!(b.iter().enumerate().all(|(i, &x)| x == (i * 7) as u8)));
        // overwrite half of it
        local.write(0, &[1; 2048]).unwrap();
        c.vi.post_send(Descriptor::rdma_write(
            RemoteAddr {
                handle: open,
                offset: 1024,
            },
            vec![Segment::new(local.handle(), 0, 2048)],
        ))
        .unwrap();
        assert_eq!(c.vi.send_wait(T).unwrap().status, CompletionStatus::Success);
        // ask for checksums: expected = original with [1024,3072) set to 1
        let ck = c.region(16, false);
        c.vi.post_recv(Descriptor::recv(vec![Segment::new(ck.handle(), 0, 16)]))
            .unwrap();
        let mut expect: u64 = (0..4096).map(|i| u64::from((i * 7) as u8)).sum();
        expect -= (1024..3072).map(|i| u64::from((i * 7) as u8)).sum::<u64>();
        expect += 2048;
        let req = c.region(8, false);
        c.vi.post_send(Descriptor::send(vec![Segment::new(req.handle(), 0, 8)]))
            .unwrap();
        c.vi.send_wait(T).unwrap().ok().unwrap();
        c.vi.recv_wait(T).unwrap().ok().unwrap();
        let mut got = [0u8; 16];
        ck.read(0, &mut got).unwrap();
        assert_eq!(
            u64::from_le_bytes(got[..8].try_into().unwrap()),
            expect,
            "{p}: open region after write"
        );
        assert_eq!(
            u64::from_le_bytes(got[8..].try_into().unwrap()),
            0,
            "{p}: closed region untouched"
        );
        // now without rights: the write is refused and breaks the VI
        c.vi.post_send(Descriptor::rdma_write(
            RemoteAddr {
                handle: closed,
                offset: 0,
            },
            vec![Segment::new(local.handle(), 0, 64)],
        ))
        .unwrap();
        assert_eq!(
            c.vi.send_wait(T).unwrap().status,
            CompletionStatus::RdmaProtectionError,
            "{p}"
        );
        assert_eq!(c.vi.query().state, ViState::Error);
        peer.wait_ok();

        // RDMA read without rights, on a fresh connection
        let peer = Peer::spawn("rdma", p, "delivery", "");
        let c = peer.connect(p, Reliability::ReliableDelivery);
        let msg = c.region(12, false);
        c.vi.post_recv(Descriptor::recv(vec![Segment::new(msg.handle(), 0, 12)]))
            .unwrap();
        c.vi.recv_wait(T).unwrap().ok().unwrap();
        msg.read(0, &mut h).unwrap();
        let closed = MemHandle::from_raw(u32::from_le_bytes(h[4..8].try_into().unwrap()));
        let local = c.region(64, false);
        c.vi.post_send(Descriptor::rdma_read(
            RemoteAddr {
                handle: closed,
                offset: 0,
            },
            vec![Segment::new(local.handle(), 0, 64)],
        ))
        .unwrap();
        assert_eq!(
            c.vi.send_wait(T).unwrap().status,
            CompletionStatus::RdmaProtectionError,
            "{p}"
        );
        local.with(|b| assert!(b.iter().all(|&x| x == 0)));
        peer.wait_ok();
    }
}

/// Every VIA error case that involves the peer, between two real processes, on both
/// providers and every reliability level it applies to; on shm both by the ring (64-byte
/// messages) and by the single-copy path (8 KiB from a shared region). The far side
/// (`icn-via-peer errors CASE`) checks its half and exits 1 if it differs: a too-long message
/// completes its receive with `LengthError` and writes nothing; a refused RDMA writes
/// nothing; a reliable VI breaks on both sides, an unreliable one stays up.
///
/// | case | client's send completes with | client VI |
/// |---|---|---|
/// | message longer than the receive | `RemoteDescriptorError` (reception), that or `Success` (delivery: acked on arrival), `Success` (unreliable) | `Error` / `Error` / `Connected` |
/// | no receive posted | same | same |
/// | RDMA write/read out of the region's bounds, or to an unknown handle | `RdmaProtectionError` (a write on delivery may be `Success`: acked on arrival) | `Error` |
/// An RDMA the client makes in `every_error_case_between_two_processes`: (write?, offset,
/// length, to an unknown handle?).
type RdmaCase = (bool, u64, u32, bool);

#[test]
fn every_error_case_between_two_processes() {
    use CompletionStatus::*;
    let levels = [
        (Reliability::Unreliable, "unreliable"),
        (Reliability::ReliableDelivery, "delivery"),
        (Reliability::ReliableReception, "reception"),
    ];
    for p in PROVIDERS {
        for (rel, rname) in levels {
            let mut cases: Vec<(&str, Option<RdmaCase>, u32)> = vec![
                ("length", None, 64),
                ("length", None, 8192),
                ("nodesc", None, 64),
                ("nodesc", None, 8192),
            ];
            if rel.is_reliable() {
                cases.extend([
                    ("rdma", Some((true, 4000, 200, false)), 0),
                    ("rdma", Some((true, 0, 8192, false)), 0),
                    ("rdma", Some((true, 0, 64, true)), 0),
                    ("rdma", Some((false, 4090, 64, false)), 0),
                    ("rdma", Some((false, 0, 64, true)), 0),
                ]);
            }
            for (case, rdma, len) in cases {
                let what = format!("{p} {rname} {case} {rdma:?} {len}");
                let peer = Peer::spawn("errors", p, rname, case);
                let c = peer.connect(p, rel);
                let msg = c.region(4, false);
                c.vi.post_recv(Descriptor::recv(vec![Segment::new(msg.handle(), 0, 4)]))
                    .unwrap();
                c.vi.recv_wait(T).unwrap().ok().unwrap();
                let mut h = [0u8; 4];
                msg.read(0, &mut h).unwrap();
                let target = MemHandle::from_raw(u32::from_le_bytes(h));
                // 64 KiB: on shm a shared region, so 8 KiB goes by the single-copy path
                let src = c.region(64 << 10, false);
                src.with_mut(|b| b.fill(0x11));
                let (desc, allowed): (Descriptor, &[CompletionStatus]) = match rdma {
                    None => (
                        Descriptor::send(vec![Segment::new(src.handle(), 0, len)]),
                        match rel {
                            Reliability::ReliableReception => &[RemoteDescriptorError],
                            Reliability::ReliableDelivery => &[RemoteDescriptorError, Success],
                            Reliability::Unreliable => &[Success],
                        },
                    ),
                    Some((write, offset, n, unknown)) => {
                        let at = RemoteAddr {
                            handle: if unknown {
                                MemHandle::from_raw(target.raw() + 1000)
                            } else {
                                target
                            },
                            offset,
                        };
                        let seg = vec![Segment::new(src.handle(), 0, n)];
                        if write {
                            let ok: &[CompletionStatus] = if rel == Reliability::ReliableDelivery {
                                &[RdmaProtectionError, Success]
                            } else {
                                &[RdmaProtectionError]
                            };
                            (Descriptor::rdma_write(at, seg), ok)
                        } else {
                            (Descriptor::rdma_read(at, seg), &[RdmaProtectionError])
                        }
                    }
                };
                let is_read = matches!(rdma, Some((false, ..)));
                c.vi.post_send(desc).unwrap();
                let st = c.vi.send_wait(T).unwrap().status;
                assert!(allowed.contains(&st), "{what}: send completed with {st:?}");
                if is_read {
                    assert!(
                        src.with(|b| b.iter().all(|&x| x == 0x11)),
                        "{what}: refused read wrote"
                    );
                }
                if rel.is_reliable() {
                    let deadline = Instant::now() + Duration::from_secs(10);
                    while c.vi.query().state == ViState::Connected && Instant::now() < deadline {
                        c.vi.progress();
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    assert_eq!(c.vi.query().state, ViState::Error, "{what}");
                } else {
                    assert_eq!(c.vi.query().state, ViState::Connected, "{what}");
                    c.vi.disconnect().unwrap();
                }
                peer.wait_ok();
            }
        }
    }
}

/// Connection errors across processes, both providers: a request whose reliability level
/// differs from the accepting VI's is rejected (the client sees `Rejected`, the far side's
/// accept fails and it exits 1), and a request to an address nobody listens on fails at
/// once.
#[test]
fn a_reliability_mismatch_is_rejected_across_processes() {
    for p in PROVIDERS {
        let mut peer = Peer::spawn("echo", p, "delivery", "");
        let nic = Nic::open(&client_url(p)).unwrap();
        let ptag = nic.create_ptag();
        let vi = nic
            .create_vi(
                ViAttributes::new(ptag, Reliability::ReliableReception),
                None,
                None,
            )
            .unwrap();
        let e = nic.connect_request(&vi, &peer.addr, b"peer", T);
        assert!(matches!(e, Err(ViaError::Rejected)), "{p}: {e:?}");
        assert_eq!(vi.query().state, ViState::Idle, "{p}");
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(st) = peer.child.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "{p}: peer did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.code(), Some(1), "{p}: the far side's accept failed");
        drop(peer);
        // the same address again: nobody listens any more
        let vi = nic
            .create_vi(ViAttributes::new(ptag, Reliability::Unreliable), None, None)
            .unwrap();
        let addr = Peer::spawn("stall", p, "unreliable", "").addr.clone();
        // (that peer is killed when dropped at the end of the statement above)
        // a request waits for a server to listen there, up to its timeout
        let e = nic.connect_request(&vi, &addr, b"peer", Some(Duration::from_millis(300)));
        assert!(matches!(e, Err(ViaError::Timeout)), "{p}: {e:?}");
    }
}

fn shm_objects(name_part: &str) -> (usize, bool) {
    let unix = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    // the NIC's socket file in the private directory (its listener and accepted sockets)
    let path =
        icn_via::private_dir::endpoint_file(&icn_via::private_dir::dir().unwrap(), name_part);
    let sockets = unix
        .lines()
        .filter(|l| l.ends_with(&path.display().to_string()))
        .count();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    (
        sockets,
        maps.contains(&format!("memfd:icnlab-via:{name_part} ")),
    )
}

#[test]
fn killed_peer_makes_waits_fail_within_the_timeout_and_leaves_nothing_behind() {
    for p in PROVIDERS {
        // 1. the survivor waits for a receive when the peer is killed
        let mut peer = Peer::spawn("stall", p, "delivery", "");
        let c = peer.connect(p, Reliability::ReliableDelivery);
        let buf = c.region(64, false);
        c.vi.post_recv(Descriptor::recv(vec![Segment::new(buf.handle(), 0, 64)]))
            .unwrap();
        peer.child.kill().unwrap();
        let t0 = Instant::now();
        let r = c.vi.recv_wait(Some(Duration::from_secs(10)));
        let took = t0.elapsed();
        assert!(
            matches!(&r, Ok(c) if c.status == CompletionStatus::Flushed)
                || matches!(&r, Err(ViaError::ConnectionLost(_))),
            "{p}: {r:?}"
        );
        assert!(took < Duration::from_secs(3), "{p}: noticed after {took:?}");
        assert!(matches!(
            c.vi.recv_wait(Some(Duration::from_secs(1))),
            Err(ViaError::ConnectionLost(_))
        ));
        drop(peer);

        // 2. the survivor is mid-way through streaming 4 MiB messages into a peer that stopped
        //    reading when it is killed
        let mut peer = Peer::spawn("stall", p, "reception", "");
        let c = peer.connect(p, Reliability::ReliableReception);
        if p == "shm" {
            // positive control: while connected, the socket and the mapping are visible
            let (sockets, mapped) = shm_objects(peer.addr.trim_start_matches("shm://"));
            assert!(
                sockets >= 1 && mapped,
                "leak check cannot see live objects: {sockets} {mapped}"
            );
        }
        let big = c.region(4 << 20, false);
        let pid = peer.child.id();
        let killer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        });
        let t0 = Instant::now();
        let mut posted = 0;
        while c
            .vi
            .post_send(Descriptor::send(vec![Segment::new(
                big.handle(),
                0,
                4 << 20,
            )]))
            .is_ok()
            && posted < 64
        {
            posted += 1;
        }
        let mut saw_error = false;
        for _ in 0..=posted {
            match c.vi.send_wait(Some(Duration::from_secs(10))) {
                Ok(c) if c.status.is_ok() => {}
                Ok(_) | Err(ViaError::ConnectionLost(_)) => {
                    saw_error = true;
                    break;
                }
                Err(e) => panic!("{p}: {e:?}"),
            }
        }
        assert!(saw_error, "{p}: sends into a dead peer must fail");
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{p}: {:?}",
            t0.elapsed()
        );
        killer.join().unwrap();
        let _ = peer.child.wait();
        let addr = peer.addr.clone();
        drop(peer);
        drop(c);
        if p == "shm" {
            let name = addr.trim_start_matches("shm://");
            let (sockets, mapped) = shm_objects(name);
            assert_eq!(sockets, 0, "listening socket {name} outlived its process");
            assert!(
                !mapped,
                "the shared area is still mapped after both sides are gone"
            );
        }
    }
    // Nothing of ours in /dev/shm (other programs on the machine may use it meanwhile).
    let ours = std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().contains("icnlab"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(ours, 0, "nothing created in /dev/shm");
}
