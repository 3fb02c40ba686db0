use icn_sci::config::{Pattern, SciConfig};
use icn_sci::protocol::Policy;
fn main() {
    for (nodes, depth, svc, f) in [
        (8, 4, 120, 1.0),
        (8, 1, 120, 1.0),
        (16, 1, 120, 1.0),
        (8, 1, 40, 1.0),
        (16, 4, 300, 1.0),
    ] {
        for p in [Policy::Ab, Policy::NoAging, Policy::CountedAb] {
            let mut cfg = SciConfig {
                nodes,
                load: 1.0,
                queue_depth: depth,
                service_time: svc,
                receiver: p,
                warmup_cycles: 5000,
                measure_cycles: 200_000,
                ..SciConfig::default()
            };
            cfg.traffic.pattern = Pattern::Hotspot;
            cfg.traffic.hotspot_fraction = f;
            let sim = icn_sci::simulate(&cfg, 1, false, &icn_engine::model::NoProgress).unwrap();
            let m = sim.measure().metrics("", sim.now());
            let hot = &sim.measure().hot_accepted_by_src;
            println!(
                "N{nodes} d{depth} s{svc} {p:?}: hotjain {:.3} dmax {:.0} p99 {:.0} eta {:.4} hot {:?}",
                m.value("hotspot_jain"),
                m.value("delay_max_ns"),
                m.value("delay_p99_ns"),
                m.value("eta"),
                hot
            );
        }
    }
}
