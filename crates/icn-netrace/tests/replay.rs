//! The reader on the real traces, and the closed-loop replay on the ideal fabric: the
//! invariants checked against the trace read independently, the errors named.

mod common;

use common::{check, records};
use icn_fabric::ideal::{IdealConfig, IdealFabric};
use icn_netrace::format::{
    ErrorKind, PacketType, Reader, Record, Region, write_header, write_record,
};
use icn_netrace::replay::{Event, Plan, ReplayError, replay};
use icn_netrace::scan::scan;

/// An 8×8 mesh where a hop takes 3 ps and a byte 1 ps: trace cycles are picoseconds here,
/// so packets overlap and dependencies bind.
fn ideal() -> IdealFabric {
    IdealConfig {
        topology: "mesh:8x8".into(),
        hop_ns: 0.003,
        link_mbs: 1e6,
        contention: true,
        max_packet: 4096,
        window: 0,
    }
    .build()
    .unwrap()
}

fn linear() -> Vec<usize> {
    (0..64).collect()
}

#[test]
fn headers_and_counts_of_the_sample_traces() {
    // Values as netrace's trace viewer prints them (and the README of the shared data says).
    let cases = [
        (
            common::data("shrtex.tra.bz2"),
            "short example trace",
            221,
            12,
            1,
        ),
        (
            common::data("example.tra.bz2"),
            "read-resp-delay-test",
            6_820,
            175,
            1,
        ),
        (
            common::shared("multiregion.tra.bz2"),
            "multiregion-test",
            324_247,
            22_968,
            5,
        ),
        (
            common::shared("lngrex.tra.bz2"),
            "blackscholes-short-test",
            2_325_306,
            81_749,
            1,
        ),
    ];
    for (path, name, cycles, packets, regions) in cases {
        let s = scan(Reader::open(&path).unwrap()).unwrap();
        assert_eq!(s.header.benchmark, name);
        assert_eq!(s.header.nodes, 64);
        assert_eq!(s.header.cycles, cycles);
        assert_eq!(s.header.packets, packets);
        assert_eq!(s.packets, packets);
        assert_eq!(s.header.regions.len(), regions);
    }
    let s = scan(Reader::open(&common::shared("multiregion.tra.bz2")).unwrap()).unwrap();
    assert_eq!(s.region_packets, [9_173, 5_156, 5_800, 0, 2_839]);
    assert_eq!(s.header.region_start(2), 9_453 + 19_571);
}

fn replay_all(path: &std::path::Path, first: usize, last: usize) -> (Vec<Event>, u64) {
    let mut r = Reader::open(path).unwrap();
    let base = r.header().region_start(first);
    let mut events = Vec::new();
    let plan = Plan {
        first,
        last,
        map: linear(),
    };
    let o = replay(&mut r, &mut ideal(), &plan, &mut |e| events.push(e)).unwrap();
    assert_eq!(o.packets as usize, events.len() / 2);
    (events, base)
}

#[test]
fn small_traces_replay_closed_loop() {
    for name in ["shrtex.tra.bz2", "example.tra.bz2"] {
        let path = common::data(name);
        let (_, recs) = records(&path);
        let (events, base) = replay_all(&path, 0, 0);
        assert_eq!(check(&recs, base, &events), recs.len());
    }
}

#[test]
fn one_region_of_multiregion_replays_alone() {
    let path = common::shared("multiregion.tra.bz2");
    let (_, recs) = records(&path);
    let region: Vec<_> = recs.iter().filter(|(g, _)| *g == 2).cloned().collect();
    assert_eq!(region.len(), 5_800);
    let (events, base) = replay_all(&path, 2, 2);
    assert_eq!(base, 29_024);
    assert_eq!(check(&region, base, &events), 5_800);
    // Regions 3 (empty) and 4 together.
    let region: Vec<_> = recs.iter().filter(|(g, _)| *g >= 3).cloned().collect();
    let (events, base) = replay_all(&path, 3, 4);
    assert_eq!(check(&region, base, &events), 2_839);
}

/// A packet whose dependency keeps it back: a data response (cycle 0, 0 → 9) frees a request
/// (cycle 0, 9 → 0) only after it lands, so the request goes in the cycle after.
#[test]
fn a_dependent_waits_for_its_lister_exactly_one_cycle_past_delivery() {
    let recs = vec![
        rec(0, 1, 0, 9, &[2]),
        rec(0, 2, 9, 0, &[]),
        rec(500, 3, 1, 2, &[]),
    ];
    let path = common::compressed_file("dep.tra.bz2", &common::write(64, &recs));
    let mut r = Reader::open(&path).unwrap();
    let mut events = Vec::new();
    let plan = Plan {
        first: 0,
        last: 0,
        map: linear(),
    };
    let o = replay(&mut r, &mut ideal(), &plan, &mut |e| events.push(e)).unwrap();
    // 0 → 9 on the 8×8 mesh is 2 hops: 2·3 ps + 72 ps of 72 bytes at 1 ps/B = 78 ps.
    let delivered = |id| {
        events.iter().find_map(|e| match *e {
            Event::Delivered { id: i, cycle } if i == id => Some(cycle),
            _ => None,
        })
    };
    let injected = |id| {
        events.iter().find_map(|e| match *e {
            Event::Injected { id: i, cycle } if i == id => Some(cycle),
            _ => None,
        })
    };
    assert_eq!(injected(1), Some(0));
    assert_eq!(delivered(1), Some(78));
    assert_eq!(injected(2), Some(79));
    assert_eq!(injected(3), Some(500));
    assert_eq!(o.packets, 3);
    assert_eq!(o.runtime, delivered(3).unwrap() + 1);
}

pub fn rec(cycle: u64, id: u32, src: u8, dst: u8, deps: &[u32]) -> Record {
    Record {
        cycle,
        id,
        addr: 0,
        kind: PacketType(2),
        src,
        dst,
        node_types: 0,
        dependents: deps.to_vec(),
    }
}

fn replay_err(name: &str, recs: &[Record]) -> ReplayError {
    let path = common::compressed_file(name, &common::write(64, recs));
    let mut r = Reader::open(&path).unwrap();
    let plan = Plan {
        first: 0,
        last: 0,
        map: linear(),
    };
    replay(&mut r, &mut ideal(), &plan, &mut |_| {}).unwrap_err()
}

#[test]
fn cycles_and_dangling_dependencies_are_named_not_hung() {
    // 1 → 2 → 1: packet 2 lists 1, which came before it.
    let e = replay_err(
        "cycle.tra.bz2",
        &[rec(0, 1, 0, 1, &[2]), rec(0, 2, 1, 0, &[1])],
    );
    let ReplayError::Trace(t) = e else {
        panic!("{e}")
    };
    assert_eq!(t.kind, ErrorKind::Dependency);
    assert_eq!(t.packet.unwrap().id, 2);
    assert_eq!(t.packet.unwrap().index, 1);
    // The header is 72 + 1 + 24 bytes; the first record 21 + 4.
    assert_eq!(t.offset, 97 + 25);
    assert!(t.to_string().contains("packet #1 of the file, id 2"), "{t}");
    // A packet waiting for itself.
    let e = replay_err("self.tra.bz2", &[rec(0, 1, 0, 1, &[1])]);
    assert!(e.to_string().contains("waiting for itself"), "{e}");
    // 1 lists 5, the trace goes on to 7 without it.
    let e = replay_err(
        "dangling.tra.bz2",
        &[rec(0, 1, 0, 1, &[5]), rec(3, 7, 1, 0, &[])],
    );
    let ReplayError::Trace(t) = e else {
        panic!("{e}")
    };
    assert_eq!(t.kind, ErrorKind::Dependency);
    assert_eq!(t.packet.unwrap().id, 1);
    assert!(t.to_string().contains("passes id 5"), "{t}");
    // ... or ends without it.
    let e = replay_err("dangling-end.tra.bz2", &[rec(0, 1, 0, 1, &[5])]);
    assert!(e.to_string().contains("passes id 5"), "{e}");
}

#[test]
fn malformed_traces_name_the_byte_and_packet() {
    let good = common::write(64, &[rec(0, 1, 0, 1, &[]), rec(1, 2, 1, 0, &[])]);
    let err = |b: &[u8]| -> icn_netrace::TraceError {
        let mut r = match Reader::new(b) {
            Ok(r) => r,
            Err(e) => return e,
        };
        loop {
            match r.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("accepted"),
                Err(e) => return e,
            }
        }
    };
    let mut b = good.clone();
    b[0] = 0;
    assert!(err(&b).to_string().starts_with("byte 0: magic"));
    let mut b = good.clone();
    b[97 + 17] = 64; // source node 64 of 64 nodes
    let e = err(&b);
    assert_eq!((e.offset, e.packet.unwrap().index), (97, 0));
    assert!(e.to_string().contains("nodes are 0 ..= 63"), "{e}");
    let mut b = good.clone();
    b[97 + 16] = 7; // InvalidCmd
    assert!(err(&b).to_string().contains("InvalidCmd"));
    let e = err(&good[..good.len() - 3]);
    assert_eq!(e.offset, 97 + 21);
    assert!(e.to_string().contains("ends 18 bytes into it"), "{e}");
    let mut b = good.clone();
    b[97 + 21 + 8..97 + 21 + 12].copy_from_slice(&1u32.to_le_bytes()); // id 1 again
    assert!(err(&b).to_string().contains("ids increase"));
    let mut b = good.clone();
    b[48] = 3; // header: 3 packets, the region says 2
    assert!(err(&b).to_string().contains("its regions 2"));
    let mut b = good.clone();
    b[40..48].copy_from_slice(&(1u64 << 37).to_le_bytes()); // a trace longer than 2^36 cycles
    assert!(err(&b).to_string().starts_with("byte 40: cycles"));
    let mut b = good.clone();
    b[97 + 21..97 + 29].copy_from_slice(&9u64.to_le_bytes()); // after the header's 2 cycles
    let e = err(&b);
    assert_eq!(e.packet.unwrap().id, 2);
    assert!(e.to_string().contains("after the trace's last"), "{e}");
    // Two regions of 5 cycles; the second's record says cycle 3, before its start at 5.
    let regions = [
        Region {
            offset: 0,
            cycles: 5,
            packets: 1,
        },
        Region {
            offset: 21,
            cycles: 5,
            packets: 1,
        },
    ];
    let mut b = Vec::new();
    write_header(&mut b, "t", 64, 10, "", &regions).unwrap();
    write_record(&mut b, &rec(1, 1, 0, 1, &[])).unwrap();
    write_record(&mut b, &rec(3, 2, 1, 0, &[])).unwrap();
    assert!(
        err(&b)
            .to_string()
            .contains("before the start of its region 1 at cycle 5")
    );
    // Not bzip2 at all.
    let path = std::env::temp_dir().join(format!("icn-netrace-plain-{}", std::process::id()));
    std::fs::write(&path, &good).unwrap();
    let e = match Reader::open(&path) {
        Err(e) => e,
        Ok(_) => panic!("plain bytes read as bzip2"),
    };
    std::fs::remove_file(&path).ok();
    assert_eq!(e.kind, ErrorKind::Io);
}

/// The replay's state is bounded by the outstanding packets (trace cycle passed, not yet
/// delivered) and the dependency window, not by the trace's length: a periodic trace (every
/// `gap` cycles a packet on a rotating pair, each listing the next three) of 2 000 and of
/// 20 000 packets peaks at the same live packets and window while the network keeps up (a
/// packet takes at most 3·14 + 72 ps < 150). When it does not (every 7 ps), the backlog of
/// outstanding packets grows with the trace, as the fabric's source queues would.
#[test]
fn memory_does_not_grow_with_trace_length() {
    let peaks = |n: u32, gap: u64| {
        let recs: Vec<Record> = (1..=n)
            .map(|i| {
                let deps: Vec<u32> = (i + 1..=(i + 3).min(n)).collect();
                rec(
                    u64::from(i) * gap,
                    i,
                    (i % 64) as u8,
                    ((i * 17) % 64) as u8,
                    &deps,
                )
            })
            .collect();
        let bytes = common::write(64, &recs);
        let mut r = Reader::new(&bytes[..]).unwrap();
        let plan = Plan {
            first: 0,
            last: 0,
            map: linear(),
        };
        let o = replay(&mut r, &mut ideal(), &plan, &mut |_| {}).unwrap();
        assert_eq!(o.packets, u64::from(n));
        (o.peak_live, o.peak_window)
    };
    let short = peaks(2_000, 150);
    assert!(short.0 >= 1 && short.1 == 3, "{short:?}");
    assert_eq!(peaks(20_000, 150), short);
    let (behind, long) = (peaks(2_000, 7), peaks(20_000, 7));
    assert!(long.0 > 9 * behind.0, "{behind:?} {long:?}");
    assert_eq!(long.1, 3);
}
