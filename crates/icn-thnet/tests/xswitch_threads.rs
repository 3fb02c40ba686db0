//! Issue 15: the X-Switch network gives bit-identical metrics (every scalar, every table, every
//! note) at 1, 2 and 4 threads on the large-cluster families a 5-port switch can build: a 2-ary
//! 3-tree fat tree, the a = 2, h = 1 dragonfly and a 4-cube, below and past saturation.
//! (Meshes and tori: `xswitch/par_tests.rs`.)

use icn_engine::model::NoProgress;
use icn_engine::{Metrics, Model};
use icn_thnet::xswitch_model::{OnDeadlock, XSwitch, XSwitchConfig};
use icn_thnet::xswitch_net::XSwitchNetConfig;

fn same_at_1_2_4_threads(topology: &str, load: f64) -> Metrics {
    let cfg = XSwitchConfig {
        net: XSwitchNetConfig::on(topology),
        load,
        size: 64,
        warmup: 300,
        measure: 1_500,
        on_deadlock: OnDeadlock::Report,
        ..XSwitchConfig::default()
    };
    let one = XSwitch::run(&cfg, 3, &NoProgress).unwrap();
    for threads in [2, 4] {
        let mut at = cfg.clone();
        at.net.threads = threads;
        let got = XSwitch::run(&at, 3, &NoProgress).unwrap();
        assert_eq!(
            got.fingerprint(),
            one.fingerprint(),
            "{topology} at load {load}: {threads} threads"
        );
    }
    one
}

#[test]
fn fat_tree_dragonfly_and_hypercube_are_the_same_at_any_thread_count() {
    for topology in ["fattree:2,3", "dragonfly:1,2,1", "hypercube:4"] {
        let light = same_at_1_2_4_threads(topology, 0.05);
        // Traffic flowed, and the light load was carried.
        let accepted = light.require("accepted").unwrap();
        assert!(accepted > 0.04, "{topology}: accepted {accepted}");
        same_at_1_2_4_threads(topology, 0.6);
    }
}
