//! Loads inside (0, 1] so small that 1 − p rounds to 1: `ln(1 − p)` was 0, every
//! inter-arrival gap 1, and `load = 1e-15` ran as the *maximum* load in both TH-Net models.
//! Now the gap is exact (ln_1p) and a run far shorter than 1/p cycles offers nothing.

use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_router::vc_net::VcNetConfig;
use icn_thnet::vc_model::{VcRouter, VcRouterConfig};
use icn_thnet::xswitch_model::{XSwitch, XSwitchConfig};
use icn_thnet::xswitch_net::XSwitchNetConfig;

const TINY: [f64; 3] = [1e-15, 1e-300, 5e-324];

#[test]
fn vc_router_tiny_load_offers_nothing() {
    for load in TINY {
        let cfg = VcRouterConfig {
            net: VcNetConfig::on("mesh:4x4"),
            load,
            warmup: 100,
            measure: 2_000,
            drain: 1_000,
            ..VcRouterConfig::default()
        };
        let m = VcRouter::run(&cfg, 1, &NoProgress).unwrap();
        assert_eq!(m.require("offered").unwrap(), 0.0, "load {load}");
        assert_eq!(m.require("accepted").unwrap(), 0.0, "load {load}");
    }
}

#[test]
fn xswitch_tiny_load_offers_nothing() {
    for load in TINY {
        let cfg = XSwitchConfig {
            net: XSwitchNetConfig::on("mesh:4x4"),
            load,
            size: 128,
            warmup: 100,
            measure: 2_000,
            drain: 1_000,
            ..XSwitchConfig::default()
        };
        let m = XSwitch::run(&cfg, 1, &NoProgress).unwrap();
        assert_eq!(m.require("offered").unwrap(), 0.0, "load {load}");
    }
}
