//! docs/extending.md, "A network kind": the recipe's worked example, built and run here. A
//! kind is one module (`crossbar` below: its keys with their defaults, its checks, what it
//! prepares once and builds per replication) and one line of a registry (`registry` below,
//! the same macro as the cluster's own registry in `icn_cluster::fabric`).

/// The kind's module: `[fabric] kind = "crossbar"`, N endpoints on one switch with a fixed
/// latency through it. Its fabric is icn-fabric's ideal fabric on `crossbar:N` (a kind may
/// as well build a fabric of its own: docs/extending.md, "A fabric").
mod crossbar {
    use icn_engine::Invalid;
    use icn_engine::lockstep::Exchange;
    use icn_fabric::Fabric;
    use icn_fabric::ideal::IdealConfig;
    use icn_fabric::kind::NetworkKind;
    use serde::{Deserialize, Serialize};
    use std::sync::Arc;

    /// 1. The keys, with their defaults, `deny_unknown_fields` (a key of another kind is then
    ///    refused naming the kinds that read it).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct CrossbarConfig {
        /// `crossbar:N`.
        pub topology: String,
        /// Latency from any endpoint to any other, ns.
        pub latency_ns: f64,
        /// Bandwidth of every endpoint's link, MB/s.
        pub link_mbs: f64,
    }

    impl Default for CrossbarConfig {
        fn default() -> Self {
            CrossbarConfig {
                topology: "crossbar:4".into(),
                latency_ns: 1_000.0,
                link_mbs: 1_000.0,
            }
        }
    }

    /// 2. Its key docs, read by `icnlab keys` (a `KeyGroup` with `when: "fabric.kind=\"crossbar\""`).
    pub const KEYS: &[icn_engine::doc::Key] = &[
        icn_engine::doc::key("topology", "", "`crossbar:N`"),
        icn_engine::doc::key("latency_ns", "ns", "latency through the switch"),
        icn_engine::doc::key("link_mbs", "MB/s", "bandwidth of every endpoint's link"),
    ];

    impl CrossbarConfig {
        /// The ideal fabric it is: a route of two hops (up, down), each half the latency.
        fn ideal(&self) -> IdealConfig {
            IdealConfig {
                topology: self.topology.clone(),
                hop_ns: self.latency_ns / 2.0,
                link_mbs: self.link_mbs,
                ..IdealConfig::default()
            }
        }
    }

    /// 3. The description: checks (errors name `fabric.KEY`), what every replication shares,
    ///    and a replication's fabric.
    impl NetworkKind for CrossbarConfig {
        const NAME: &'static str = "crossbar";
        type Prepared = usize;

        fn topology(&self) -> &str {
            &self.topology
        }

        fn topology_mut(&mut self) -> &mut String {
            &mut self.topology
        }

        fn prepare(&self) -> Result<usize, Invalid> {
            Invalid::check(
                self.topology.starts_with("crossbar:"),
                "fabric.topology",
                "crossbar:N",
                &self.topology,
            )?;
            Invalid::check(
                self.latency_ns.is_finite() && (0.0..=1e9).contains(&self.latency_ns),
                "fabric.latency_ns",
                "0 ..= 10^9 ns",
                self.latency_ns,
            )?;
            Ok(self.ideal().build()?.endpoints())
        }

        fn endpoints(n: &usize) -> usize {
            *n
        }

        fn max_packet_bytes(&self) -> u64 {
            u64::from(self.ideal().max_packet)
        }

        fn build(
            &self,
            _: &usize,
            _: u64,
            _: usize,
            _: Option<Arc<dyn Exchange>>,
        ) -> Result<Box<dyn Fabric>, Invalid> {
            Ok(Box::new(self.ideal().build()?))
        }
    }
}

/// 4. One line in the registry (here a registry of its own beside the default kind; in the
///    cluster, a line of `icn_cluster::fabric`).
mod registry {
    use super::crossbar::CrossbarConfig;
    use icn_fabric::ideal::IdealConfig;

    icn_cluster::network_registry! {
        Ideal => IdealConfig,
        /// N endpoints on one switch with a fixed latency.
        Crossbar => CrossbarConfig,
    }
}

use icn_engine::model::NoProgress;
use icn_fabric::conformance::{self, Traffic};
use icn_fabric::harness::{self, OnDeadlock, OpenLoop};
use icn_fabric::traffic::{Sizes, TrafficConfig};
use registry::{FabricConfig, FabricKind};

fn read(text: &str) -> Result<FabricConfig, icn_engine::Invalid> {
    FabricConfig::from_table(&toml::from_str(text).unwrap())
}

/// The registry reads the new kind's table, refuses its bad values and another kind's keys
/// by name, and builds a fabric that passes the fabric conformance suite.
#[test]
fn the_worked_example_is_a_kind_of_the_registry() {
    assert_eq!(FabricKind::ALL.map(FabricKind::name), ["ideal", "crossbar"]);
    let cfg = read("kind = \"crossbar\"\ntopology = \"crossbar:8\"\nlatency_ns = 500.0").unwrap();
    assert_eq!(cfg.kind(), FabricKind::Crossbar);
    let prepared = cfg.prepare().unwrap();
    assert_eq!(prepared.endpoints(), 8);
    let mut fabric = prepared.build(&cfg, 1, 1, None).unwrap();
    conformance::check(fabric.as_mut(), Traffic::default(), 3).unwrap();

    let e = read("kind = \"crossbar\"\nlatency_ns = -1.0")
        .unwrap()
        .prepare()
        .err();
    assert_eq!(e.map(|e| e.key).as_deref(), Some("fabric.latency_ns"));
    let e = read("kind = \"ideal\"\nlatency_ns = 5.0").unwrap_err();
    assert_eq!(e.key, "fabric.latency_ns");
    assert!(e.message.contains("a key of crossbar"), "{}", e.message);
    // Every key has its docs row.
    let keys = FabricConfig::keys_of(FabricKind::Crossbar);
    let documented: Vec<&str> = crossbar::KEYS.iter().map(|k| k.key).collect();
    assert_eq!(keys[1..], documented, "kind, then the kind's keys");
    // Written back, the table reads as itself (the config echo of report.json).
    let table = toml::Table::try_from(&cfg).unwrap();
    assert_eq!(FabricConfig::from_table(&table).unwrap(), cfg);
}

/// The open-loop harness drives it like any kind (its cycle is the ideal fabric's 1 ps): at a
/// quarter of the link's bandwidth everything offered is delivered, and a lone packet's
/// latency is the configured one: 1 µs through the switch plus its 100 B serialised once at
/// 1000 MB/s (the ideal fabric pipelines a packet over its hops), 1.1 µs; packets of a train
/// follow 100 ns apart.
#[test]
fn the_worked_example_runs_open_loop() {
    let cfg = read("kind = \"crossbar\"").unwrap();
    let prepared = cfg.prepare().unwrap();
    let mut fabric = prepared.build(&cfg, 1, 1, None).unwrap();
    let zero = fabric.zero_load(0, 1, 100).unwrap();
    assert_eq!(zero.latency, 1_100_000, "{zero:?}");
    assert_eq!(zero.steady, 100_000, "{zero:?}");
    let traffic = TrafficConfig::default();
    let w = OpenLoop {
        // Bytes per endpoint per 1-ps cycle: 2.5·10^-4 is 250 MB/s.
        load: 2.5e-4,
        sizes: Sizes {
            size: 100,
            size_large: 100,
            large_fraction: 0.0,
        },
        traffic: &traffic,
        trace: &[],
        grid: None,
        warmup: 100_000,
        measure: 2_000_000,
        drain: 10_000_000,
        on_deadlock: OnDeadlock::Error,
    };
    let m = harness::run(&mut *fabric, &w, 1, &NoProgress, |_, _, _| {}).unwrap();
    assert_eq!(m.require("unfinished").unwrap(), 0.0);
    assert!(m.require("accepted").unwrap() > 0.0);
}
