//! Packetisation: a DMA (chunk) streams onto the wire as packets; per-DMA costs are paid once
//! per chunk; large MyVIA messages on set-up B are no slower than Berkeley VIA's.

use icn_engine::rng::stream;
use icn_nicmodel::sim::{self, Message, Stall};
use icn_nicmodel::{Design, Profile, Switches, bench, build, build_from};
use proptest::prelude::*;

/// 100 MHz clocks so 100 cycles = 1 µs; 1000-B packets; 8-B header on the wire.
const TINY_PROFILE: &str = r#"
name = "tiny"
packet_bytes = 1000   # test value
[resources.host_cpu]
clock_mhz = 100       # test value
[resources.nic_cpu]
clock_mhz = 100       # test value
[resources.pci]
kind = "bus"
rates = { read = 500.0, write = 1000.0 }   # test values
[resources.dma]
kind = "dma"
[resources.send_dma]
kind = "dma"
[resources.link]
kind = "link"
scope = "link"
rates = { wire = 250.0 }                   # test value
[resources.switch]
kind = "switch"
scope = "link"
ops = { latency = 0.5 }                    # test value
"#;

const TINY_DESIGN: &str = r#"
name = "tiny"
chunk_bytes = 3000
header_bytes = 8
[flags]
user_tlb = true
pd_ring = true
pipeline = true
big_dma = true

[[stage]]
name = "post"
hold = ["host_cpu"]
every = "first"
cycles = 100

[[stage]]
name = "fetch"
hold = ["dma", "pci"]
clock = "nic_cpu"
cycles = 100
bytes = "chunk"
rate = "pci.read"

[[stage]]
name = "setup"
hold = ["nic_cpu"]
per_packet = true
cycles = 25

[[stage]]
name = "wire"
hold = ["send_dma", "link"]
bytes = "packet"
rate = "link.wire"
latency = ["switch.latency"]

[[stage]]
name = "deliver"
side = "rx"
hold = ["dma", "pci"]
clock = "nic_cpu"
cycles = 50
bytes = "chunk"
rate = "pci.write"

[[stage]]
name = "poll"
side = "rx"
every = "last"
hold = ["host_cpu"]
cycles = 100
"#;

fn one(bytes: u64) -> [Message; 1] {
    [Message {
        bytes,
        from: 0,
        after_rx_of: None,
        after_tx_of: None,
    }]
}

fn ps(us: f64) -> u64 {
    (us * 1e6).round() as u64
}

fn tiny(edit: impl Fn(&mut Profile)) -> icn_nicmodel::Pipeline {
    let mut p = Profile::parse(TINY_PROFILE).unwrap();
    edit(&mut p);
    let d = Design::parse(TINY_DESIGN).unwrap();
    build_from(&p, &d, Switches::default(), 1.0).unwrap()
}

#[test]
fn three_packet_message_on_a_tiny_profile_matches_the_hand_timeline() {
    // post 0-1 µs. fetch (1 µs per DMA + 1000 B / 500 MB/s): p0 1-4, p1 4-6, p2 6-8.
    // setup (0.25 µs per packet): p0 4-4.25, p1 6-6.25, p2 8-8.25.
    // wire (1008 B / 250 MB/s = 4.032 µs, then 0.5 µs switch): p0 4.25-8.282, p1 8.282-12.314,
    //   p2 12.314-16.346; ready at the receiver 8.782, 12.814, 16.846.
    // deliver (0.5 µs per DMA + 1000 B / 1000 MB/s): p0 8.782-10.282, p1 12.814-13.814,
    //   p2 16.846-17.846. poll (last packet, 1 µs): 17.846-18.846.
    let pipe = tiny(|_| {});
    assert_eq!(sim::packets(&pipe, 3000), 3);
    let t = sim::run(&pipe, &one(3000), &mut stream(1, 0)).unwrap();
    assert_eq!(ps(t[0].rx_done_us), 18_846_000);
    assert_eq!(ps(t[0].tx_done_us), 16_346_000);
    // A pingpong is symmetric: the mean one-way latency is the same.
    let l = bench::pingpong(&pipe, 3000, 1, 1).unwrap();
    assert_eq!(ps(l), 18_846_000);
    // The same DMA as one packet (packet_bytes unset) is stored and forwarded:
    // post 1, fetch 1 + 6, setup 0.25, wire 3008 / 250 = 12.032, switch 0.5, deliver 0.5 + 3,
    // poll 1 = 25.282 µs.
    let whole = tiny(|p| p.packet_bytes = None);
    let t = sim::run(&whole, &one(3000), &mut stream(1, 0)).unwrap();
    assert_eq!(ps(t[0].rx_done_us), 25_282_000);
}

#[test]
fn per_dma_costs_are_charged_once_per_chunk() {
    // 7000 B = DMAs of 3000 + 3000 + 1000 = 7 packets. With a near-infinite link the fetch
    // stage is the bottleneck: post 1 + fetch (3 DMAs × 1 µs + 7000 B / 500 MB/s = 17) +
    // setup of the last packet 0.25 + its wire time 1008 B / 10⁵ MB/s = 0.01008 µs.
    // Charging the DMA set-up per packet would add 4 µs.
    let pipe = tiny(|p| {
        p.resources
            .get_mut("link")
            .unwrap()
            .rates
            .insert("wire".into(), 100_000.0);
    });
    assert_eq!(sim::packets(&pipe, 7000), 7);
    let t = sim::run(&pipe, &one(7000), &mut stream(1, 0)).unwrap();
    assert_eq!(ps(t[0].tx_done_us), 18_260_080);
}

#[test]
fn one_packet_per_dma_when_the_profile_sets_no_packet_size() {
    // Set-up A keeps store and forward, so its validated numbers do not move.
    let a = build("setup-a", "myvia", Switches::default(), 1.0).unwrap();
    assert_eq!(a.packet_bytes, a.chunk_bytes);
    assert_eq!(sim::packets(&a, 131072), 2);
    let b = build("setup-b", "myvia", Switches::default(), 1.0).unwrap();
    assert_eq!(sim::packets(&b, 131072), 32);
}

#[test]
fn a_deadlocked_message_set_is_a_stall_error_not_a_hang() {
    let pipe = tiny(|_| {});
    let msgs = [
        Message {
            bytes: 100,
            from: 0,
            after_rx_of: Some(1),
            after_tx_of: None,
        },
        Message {
            bytes: 100,
            from: 1,
            after_rx_of: Some(0),
            after_tx_of: None,
        },
    ];
    let e: Stall = sim::run(&pipe, &msgs, &mut stream(1, 0)).unwrap_err();
    assert_eq!(e.message, 0);
    assert_eq!(e.delivered, 0);
    assert_eq!(e.at_ps, 0);
    let inv: icn_engine::Invalid = e.into();
    assert_eq!(inv.key, "simulation");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The paper: MyVIA streams, so a large message is never much slower than Berkeley VIA's
    /// page-by-page transfer (before packetisation it was ≈2× slower at 32–128 KB).
    #[test]
    fn myvia_latency_within_10_percent_of_bvia_on_setup_b(size in 4096u64..=262_144) {
        let my = build("setup-b", "myvia", Switches::default(), 1.0).unwrap();
        let bv = build("setup-b", "bvia", Switches::default(), 1.0).unwrap();
        let a = bench::pingpong(&my, size, 1, 1).unwrap();
        let b = bench::pingpong(&bv, size, 1, 1).unwrap();
        prop_assert!(a <= 1.10 * b, "{size} B: MyVIA {a} µs vs BVIA {b} µs");
    }
}
