//! Spec check: A/B aging must not starve anyone under a saturating hot spot; `no-aging` may.

mod common;

use icn_sci::protocol::Policy;

fn per_source(policy: Policy, intelligent: bool) -> (f64, f64, Vec<Vec<f64>>) {
    let cfg = common::saturated_hotspot(policy);
    let sim = common::run(&cfg, 3, intelligent);
    let m = sim.measure().metrics("", sim.now());
    let t = m.table("per_source").unwrap().rows.clone();
    println!(
        "{policy:?} intelligent={intelligent}: jain {:.4}, hotspot_jain {:.4}, eta {:.4}, delay max {:.0} ns",
        m.value("jain_fairness"),
        m.value("hotspot_jain"),
        m.value("eta"),
        m.value("delay_max_ns")
    );
    for r in &t {
        println!(
            "  src {:>2}: {:.4} GB/s, mean {:>8.0} ns, p99 {:>8.0} ns, max {:>8.0} ns, accepted {}",
            r[0], r[1], r[2], r[3], r[4], r[5]
        );
    }
    println!(
        "  hot accepts by src: {:?}",
        sim.measure().hot_accepted_by_src
    );
    for k in [
        "busy_echoes",
        "ps_disallow_sent",
        "transactions_per_cycle",
        "retries_per_packet",
        "serve_a_epoch_mean_ns",
        "offered_load_actual",
        "source_drops",
    ] {
        print!("{k}={:.4} ", m.value(k));
    }
    println!();
    (m.value("jain_fairness"), m.value("hotspot_jain"), t)
}

#[test]
fn explore() {
    for p in [Policy::Ab, Policy::NoAging, Policy::CountedAb] {
        per_source(p, false);
    }
    per_source(Policy::Ab, true);
}
