//! Issue 31, "same network, same answers": a network kind is described once, so the network
//! an open-loop model runs and the fabric the cluster builds from the equivalent `[fabric]`
//! table are the same network. Each case drives both with the one open-loop harness, the
//! same workload and the same seed, and gets bit-identical metrics (every scalar and table).
//!
//! Cases: vc-router (`torus:8x8` `dim_order`, dragonfly UGAL, fat tree `nca_fattree`, the
//! speculative router with pipeline delays and channel latencies), the X-Switch mesh, the SCI
//! ring (`model = "sci"`'s ring keys, at their defaults and changed) and switched SCI (ring of
//! rings, crossbar with machine-wide intelligent A/B aging, grid).
//!
//! The cluster's fabric is built as the cluster builds it (`FabricConfig::from_table`, then
//! `prepare` and `build` of the kind registry); its clock and flit size are set so that a
//! cycle is 1 ps and a flit 1 byte, the units the model reports in.

use icn_cluster::fabric::FabricConfig;
use icn_engine::model::NoProgress;
use icn_engine::{Context, Metrics, Model};
use icn_fabric::harness::{self, OpenLoop};
use icn_thnet::vc_model::{VcRouter, VcRouterConfig};
use icn_thnet::xswitch_model::{XSwitch, XSwitchConfig};

/// The open-loop workload every case runs (flits, cycles).
const WORKLOAD: &str = "load = 0.25\nsize = 5\nwarmup = 300\nmeasure = 1500\ndrain = 20000\n";

fn table(text: &str) -> toml::Table {
    toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A model's config from the keys of an experiment file.
fn model_config<T: serde::de::DeserializeOwned>(text: &str) -> T {
    icn_engine::config::deserialize_at(toml::Value::Table(table(text))).unwrap()
}

/// The cluster's fabric from the `[fabric]` table `fabric`, as the cluster builds it, driven
/// by the workload `w` from `seed`.
fn cluster_run(fabric: &str, w: &OpenLoop, seed: u64) -> Metrics {
    let fabric = FabricConfig::from_table(&table(fabric)).unwrap();
    let prepared = fabric.prepare().unwrap();
    let mut net = prepared.build(&fabric, seed, 1, None).unwrap();
    harness::run(&mut *net, w, seed, &NoProgress, |_, _, _| {}).unwrap()
}

/// `model = "vc-router"` with the network keys `net` and the cluster's `[fabric] kind =
/// "vc-router"` with the same keys, both driven by the model's workload from `seed`.
fn vc_router_both_ways(net: &str, seed: u64) -> (Metrics, Metrics) {
    let cfg: VcRouterConfig = model_config(&format!("{net}\n{WORKLOAD}"));
    let point = VcRouter::prepare(&cfg, &Context::default()).unwrap();
    let mut model_net = point.fabric(seed).unwrap();
    let w = point.open_loop();
    let model = harness::run(&mut model_net, &w, seed, &NoProgress, |_, _, _| {}).unwrap();
    let fabric = format!(
        "kind = \"vc-router\"\n{net}\nclock_mhz = 1e6\nflit_bytes = 1\nmax_packet_flits = 65536\n"
    );
    (model, cluster_run(&fabric, &w, seed))
}

fn agree(what: &str, (model, cluster): (Metrics, Metrics)) -> Metrics {
    assert!(model.require("accepted").unwrap() > 0.0, "{what}");
    // Compared as text (`f64`'s `Debug` round-trips every bit): a source that sent nothing
    // has a NaN mean latency, and NaN ≠ NaN.
    assert_eq!(
        model.fingerprint(),
        cluster.fingerprint(),
        "{what}: the model and the cluster's fabric differ"
    );
    model
}

fn same(net: &str, seed: u64) -> Metrics {
    agree(net, vc_router_both_ways(net, seed))
}

/// `model = "xswitch"` and the cluster's `[fabric] kind = "xswitch"` with the network keys
/// `net` (bytes and cycles: a link moves a byte a cycle).
fn xswitch_both_ways(net: &str, seed: u64) -> (Metrics, Metrics) {
    let cfg: XSwitchConfig = model_config(&format!(
        "{net}\nload = 0.2\nsize = 128\nwarmup = 300\nmeasure = 1500\n"
    ));
    let point = XSwitch::prepare(&cfg, &Context::default()).unwrap();
    let mut model_net = point.fabric().unwrap();
    let w = point.open_loop();
    let model = harness::run(&mut model_net, &w, seed, &NoProgress, |_, _, _| {}).unwrap();
    let fabric = format!("kind = \"xswitch\"\n{net}\nclock_mhz = 1e6\n");
    (model, cluster_run(&fabric, &w, seed))
}

/// The X-Switch mesh of the model's experiments, its defaults (64-byte frames, a 10-cycle
/// DMA) and a variant with split frames and a slow link.
#[test]
fn xswitch_mesh() {
    agree(
        "xswitch mesh",
        xswitch_both_ways("topology = \"mesh:4x4\"", 5),
    );
    agree(
        "xswitch mesh, 32-byte frames",
        xswitch_both_ways(
            "topology = \"mesh:4x4\"\nframe_size = 32\nlink_delay = 2\ndma_delay = 0\ncheck = \"crc32\"",
            6,
        ),
    );
}

/// The validated BookSim2 torus: the cluster's torus runs `dim_order` unless told otherwise
/// (it ran the grid router's `dor` before), and `routing` reaches it.
#[test]
fn vc_router_torus_dim_order() {
    let dim_order = same("topology = \"torus:8x8\"", 1);
    let explicit = same("topology = \"torus:8x8\"\nrouting = \"dim_order\"", 1);
    assert_eq!(
        dim_order.fingerprint(),
        explicit.fingerprint(),
        "dim_order is the torus's default"
    );
    let dor = same("topology = \"torus:8x8\"\nrouting = \"dor\"", 1);
    assert_ne!(
        dor.require("latency_mean").unwrap(),
        dim_order.require("latency_mean").unwrap(),
        "the routing key reaches the network"
    );
}

/// A dragonfly with UGAL (3 VC classes) and slow global channels: keys the cluster's
/// `[fabric]` did not have.
#[test]
fn vc_router_dragonfly_ugal() {
    same(
        "topology = \"dragonfly:2\"\nrouting = \"ugal\"\nvcs = 3\nglobal_delay = 5",
        2,
    );
}

/// A fat tree with BookSim2's nearest-common-ancestor routing.
#[test]
fn vc_router_fat_tree_nca() {
    same("topology = \"fattree:4,3\"\nrouting = \"nca_fattree\"", 3);
}

/// The speculative router, pipeline delays, channel latencies and iSLIP allocators.
#[test]
fn vc_router_speculative_with_delays() {
    same(
        "topology = \"mesh:4x4\"\nspeculative = true\nvc_alloc_delay = 2\nsw_alloc_delay = 2\nchannel_delay = 3\n\
         credit_delay = 2\nterminal_delay = 1\nvc_alloc = \"islip\"\nsw_alloc = \"islip\"",
        4,
    );
}

/// The light open-loop workload of the SCI cases: 64-byte sends at a tenth of a node's
/// link.
fn sci_workload(traffic: &icn_fabric::traffic::TrafficConfig) -> OpenLoop<'_> {
    OpenLoop {
        load: 0.1,
        sizes: icn_fabric::traffic::Sizes {
            size: 64,
            size_large: 64,
            large_fraction: 0.0,
        },
        traffic,
        trace: &[],
        grid: None,
        warmup: 2_000,
        measure: 20_000,
        drain: 200_000,
        on_deadlock: icn_fabric::harness::OnDeadlock::Error,
    }
}

/// `model = "sci"` with the ring keys `keys` on `nodes` nodes, and the cluster's `[fabric]
/// kind = "sci-ring"` with the same keys on `ring:nodes`, both driven by one workload.
fn sci_ring_both_ways(nodes: usize, keys: &str, seed: u64) -> (Metrics, Metrics) {
    use icn_sci::config::{SciConfig, Transmitter};
    use icn_sci::fabric::SciRingFabric;
    let traffic = icn_fabric::traffic::TrafficConfig::default();
    let w = sci_workload(&traffic);
    let cfg: SciConfig = model_config(&format!("nodes = {nodes}\n{keys}"));
    let ring = icn_sci::Sci::prepare(&cfg, &Context::default()).unwrap();
    let mut model_net =
        SciRingFabric::new(&ring, ring.transmitter == Transmitter::Intelligent).unwrap();
    let model = harness::run(&mut model_net, &w, seed, &NoProgress, |_, _, _| {}).unwrap();
    let fabric = format!("kind = \"sci-ring\"\ntopology = \"ring:{nodes}\"\n{keys}");
    (model, cluster_run(&fabric, &w, seed))
}

/// The SCI ring the `sci` model describes and the cluster's `[fabric] kind = "sci-ring"`: at
/// the model's defaults (A/B aging, 4 active buffers, 4-packet input queues, 120-cycle
/// service time, SAT) with either transmitter, and with every ring key away from its
/// default (the `[fabric]` had four keys before, and the receiver's service time that caps
/// a lone stream at 267 MB/s was not one of them).
#[test]
fn sci_ring() {
    for transmitter in ["standard", "intelligent"] {
        agree(
            "sci ring",
            sci_ring_both_ways(6, &format!("transmitter = \"{transmitter}\"\n"), 9),
        );
    }
    let every_key = "transmitter = \"intelligent\"\nreceiver = \"counted-ab\"\n\
        generation_end = \"quiet-window\"\nquiet_window = 150\nactive_buffers = 2\nqueue_depth = 2\n\
        service_time = 30\nsend_queue_depth = 16\ndata_bytes = [256]\ncrc_outside_header = true\n\
        sat_quota = 1\n";
    let changed = agree("sci ring, every key", sci_ring_both_ways(5, every_key, 3));
    let (defaults, _) = sci_ring_both_ways(5, "", 3);
    assert_ne!(
        changed.fingerprint(),
        defaults.fingerprint(),
        "the keys reach the ring"
    );
    agree(
        "sci ring, no aging, no SAT",
        sci_ring_both_ways(
            4,
            "receiver = \"no-aging\"\nbandwidth_allocation = \"none\"\nunbounded_queue = true\n",
            5,
        ),
    );
}

/// `model = "sci-switched"` with the network keys `keys` and the cluster's `[fabric] kind =
/// "sci-switched"` with the same keys, both driven by one workload.
fn sci_switched_both_ways(keys: &str, seed: u64) -> (Metrics, Metrics) {
    use icn_sci::fabric::SciSwitchedFabric;
    use icn_sci::switched::{SciSwitched, SwitchedConfig};
    let traffic = icn_fabric::traffic::TrafficConfig::default();
    let w = sci_workload(&traffic);
    let cfg: SwitchedConfig = model_config(keys);
    let system = SciSwitched::prepare(&cfg, &Context::default()).unwrap();
    let mut model_net = SciSwitchedFabric::new(std::sync::Arc::new(system), seed).unwrap();
    let model = harness::run(&mut model_net, &w, seed, &NoProgress, |_, _, _| {}).unwrap();
    let fabric = format!("kind = \"sci-switched\"\n{keys}");
    (model, cluster_run(&fabric, &w, seed))
}

/// Switched SCI, the network `model = "sci-switched"` describes, and the cluster's
/// `[fabric] kind = "sci-switched"`: a ring of rings with standard A/B aging, a crossbar
/// with intelligent A/B aging machine-wide (serve status relayed by the switches), and a
/// grid with slow, shallow switches.
#[test]
fn sci_switched() {
    let ring_of_rings = "topology = \"ring-of-rings\"\nrings = 3\n[ring]\nnodes = 3\n";
    let m = agree("ring of rings", sci_switched_both_ways(ring_of_rings, 1));
    assert_eq!(m.require("unfinished").unwrap(), 0.0);
    agree(
        "crossbar, intelligent",
        sci_switched_both_ways(
            "topology = \"crossbar\"\nrings = 2\nremote_status = true\n[ring]\nnodes = 4\ntransmitter = \"intelligent\"\n",
            2,
        ),
    );
    agree(
        "grid",
        sci_switched_both_ways(
            "topology = \"grid\"\ngrid_rows = 2\ngrid_cols = 2\nretry_order = \"least-recent\"\n\
             [switch]\nqueue_depth = 2\nservice_time = 60\n[ring]\nnodes = 3\nservice_time = 60\n",
            3,
        ),
    );
}

/// Issue 31, item 2: the open-loop harness drives every kind of the cluster's registry — the
/// clockless ideal and flow fabrics (1-ps cycles) and switched SCI too — at a light load and
/// at twice and four times it: a load–latency curve per kind. At the light load every
/// measured packet arrives and the accepted load is the offered one; at four times it the
/// mean latency is higher. The curves are printed (`-- --nocapture`; docs/cluster.md).
#[test]
fn the_open_loop_harness_drives_every_kind() {
    use icn_cluster::fabric::FabricKind;
    let traffic = icn_fabric::traffic::TrafficConfig::default();
    let mut seen = Vec::new();
    for kind in FabricKind::ALL {
        // (keys, bytes per cycle offered per endpoint, cycles measured): a tenth to a third
        // of an endpoint's link.
        let (keys, load, measure) = match kind {
            FabricKind::Ideal => ("topology = \"crossbar:4\"", 4.8e-5, 20_000_000),
            FabricKind::Flow => (
                "topology = \"crossbar:4\"\nlink_lat_ns = 100.0",
                3.75e-5,
                20_000_000,
            ),
            FabricKind::Xswitch => ("topology = \"mesh:2x2\"", 0.1, 20_000),
            // 16-byte flits: a tenth of a flit per cycle.
            FabricKind::VcRouter => ("topology = \"mesh:2x2\"", 1.6, 20_000),
            FabricKind::SciRing => ("topology = \"ring:4\"", 0.2, 20_000),
            FabricKind::SciSwitched => (
                "topology = \"ring-of-rings\"\nrings = 2\n[ring]\nnodes = 2",
                0.1,
                20_000,
            ),
        };
        let at = |load: f64| {
            let w = OpenLoop {
                load,
                sizes: icn_fabric::traffic::Sizes {
                    size: 64,
                    size_large: 64,
                    large_fraction: 0.0,
                },
                traffic: &traffic,
                trace: &[],
                grid: None,
                warmup: measure / 10,
                measure,
                drain: 10 * measure,
                on_deadlock: icn_fabric::harness::OnDeadlock::Error,
            };
            cluster_run(&format!("kind = \"{}\"\n{keys}\n", kind.name()), &w, 4)
        };
        let m = at(load);
        let (offered, accepted) = (
            m.require("offered").unwrap(),
            m.require("accepted").unwrap(),
        );
        assert_eq!(m.require("unfinished").unwrap(), 0.0, "{kind:?}");
        assert!(offered > 0.0, "{kind:?}");
        assert!(
            (accepted - offered).abs() < 0.15 * offered,
            "{kind:?}: {offered} {accepted}"
        );
        let light = m.require("latency_mean").unwrap();
        let mut latency = light;
        assert!(latency > 0.0, "{kind:?}");
        println!(
            "{:>12}: load {load:.3e} B/cycle: latency {latency:.1} cycles",
            kind.name()
        );
        for factor in [2.0, 4.0] {
            let m = at(factor * load);
            let l = m.require("latency_mean").unwrap();
            println!(
                "{:>12}: load {:.3e} B/cycle: latency {l:.1} cycles, accepted {:.3e}, unfinished {}",
                kind.name(),
                factor * load,
                m.require("accepted").unwrap(),
                m.require("unfinished").unwrap()
            );
            latency = l;
        }
        assert!(
            latency > light,
            "{kind:?}: latency {light} at the light load, {latency} at four times it"
        );
        seen.push(kind);
    }
    assert_eq!(seen, FabricKind::ALL);
}
