//! Simulation speed without the CLI: `cargo run --release -p icn-thnet --example bench [xswitch|vc|scale]`.
//!
//! `scale` (only when named) runs the 1 M-endpoint fat tree of `bench::scale_config`; measure
//! its peak memory with `/usr/bin/time -v`.
//!
//! Runs the standard workloads of [`icn_thnet::bench`] (8×8 mesh, load 0.3, 10^4 + 10^5
//! cycles); `BENCH_CYCLES=n` shortens the measured window (e.g. under callgrind). Wall-clock
//! time of the whole replication; `icnlab bench xswitch vc-router` reports CPU time too.
//!
//! `vc` with `BENCH_VC="key = value; …"` runs the VC workload with those `vc-router` keys
//! changed (another network or routing function, e.g. `topology = "torus:8x8"; routing =
//! "valiant_torus"; vcs = 4`) — the way to count a routing function's instructions under
//! callgrind, where `icnlab` itself does not run.

use icn_engine::model::NoProgress;
use icn_engine::{Metrics, Model};
use icn_thnet::bench::{ROUTERS, SCALE_ROUTERS, scale_config, vc_router_config, xswitch_config};
use icn_thnet::vc_model::VcRouter;
use icn_thnet::xswitch_model::XSwitch;
use std::time::Instant;

fn main() {
    let only = std::env::args().nth(1).unwrap_or_default();
    let cycles: Option<u64> = std::env::var("BENCH_CYCLES")
        .ok()
        .and_then(|c| c.parse().ok());
    if only == "scale" {
        let mut cfg = scale_config();
        cfg.measure = cycles.unwrap_or(cfg.measure);
        let t = Instant::now();
        let m = VcRouter::run(&cfg, 1, &NoProgress).expect("runs");
        let s = t.elapsed().as_secs_f64();
        let rc = SCALE_ROUTERS as f64 * m.require("cycles_simulated").expect("metric");
        println!(
            "scale     {:5.2} M router-cycles/s ({s:.1} s for {} cycles of {SCALE_ROUTERS} routers, setup and report included; accepted {:.3} flits/node/cycle)",
            rc / s / 1e6,
            m.require("cycles_simulated").expect("metric"),
            m.require("accepted").expect("metric"),
        );
        return;
    }
    if only != "vc" {
        let mut cfg = xswitch_config();
        cfg.measure = cycles.unwrap_or(cfg.measure);
        let (m, rate, s) = timed(|| XSwitch::run(&cfg, 1, &NoProgress));
        println!(
            "xswitch   {rate:5.1} M switch-cycles/s ({s:.2} s; accepted {:.3} B/node/cycle)",
            m.require("accepted").expect("metric"),
        );
    }
    if only != "xswitch" {
        let mut cfg = vc_router_config();
        cfg.measure = cycles.unwrap_or(cfg.measure);
        if let Ok(keys) = std::env::var("BENCH_VC") {
            cfg = with_keys(&cfg, &keys.replace(';', "\n"));
        }
        let (m, rate, s) = timed(|| VcRouter::run(&cfg, 1, &NoProgress));
        println!(
            "vc-router {rate:5.1} M router-cycles/s ({s:.2} s; accepted {:.3} flits/node/cycle, latency {:.1})",
            m.require("accepted").expect("metric"),
            m.require("latency_mean").expect("metric"),
        );
    }
}

/// `cfg` with the `vc-router` keys of the TOML text `keys` changed (`BENCH_VC`).
fn with_keys(
    cfg: &icn_thnet::vc_model::VcRouterConfig,
    keys: &str,
) -> icn_thnet::vc_model::VcRouterConfig {
    let mut table = toml::Table::try_from(cfg).expect("a config serialises");
    let changes: toml::Table = keys.parse().unwrap_or_else(|e| panic!("BENCH_VC: {e}"));
    table.extend(changes);
    table.try_into().unwrap_or_else(|e| panic!("BENCH_VC: {e}"))
}

/// Runs one replication; returns its metrics, the rate in M router- (switch-) cycles per
/// second of wall-clock time, and the seconds it took.
fn timed<E: std::fmt::Debug>(run: impl FnOnce() -> Result<Metrics, E>) -> (Metrics, f64, f64) {
    let t = Instant::now();
    let m = run().expect("runs");
    let s = t.elapsed().as_secs_f64();
    let rate = ROUTERS as f64 * m.require("cycles_simulated").expect("metric") / s / 1e6;
    (m, rate, s)
}
