use icn_engine::Model;
use icn_sci::Sci;
use icn_sci::config::{BandwidthAllocation, SciConfig, Transmitter};
fn main() {
    for bw in [BandwidthAllocation::None, BandwidthAllocation::Sat] {
        for load in [0.1, 0.3, 0.5, 0.8, 1.0] {
            let cfg = SciConfig {
                load,
                bandwidth_allocation: bw,
                transmitter: Transmitter::Compare,
                ..SciConfig::default()
            };
            let t = std::time::Instant::now();
            match Sci::run(&cfg, 1, &icn_engine::model::NoProgress) {
                Ok(m) => println!(
                    "{bw:?} load {load}: r {:.3} delay_ratio {:.3} eta_std {:.4} eta_iab {:.4} ps_share_std {:.3} ps_share_iab {:.3} jain_std {:.3} hotjain_std {:.3} hotjain_iab {:.3} d_std {:.0} ({:.2}s)",
                    m.value("r"),
                    m.value("delay_ratio"),
                    m.value("eta_std"),
                    m.value("eta_iab"),
                    m.value("ps_disallow_share_std"),
                    m.value("ps_disallow_share_iab"),
                    m.value("jain_fairness_std"),
                    m.value("hotspot_jain_std"),
                    m.value("hotspot_jain_iab"),
                    m.value("delay_mean_ns_std"),
                    t.elapsed().as_secs_f64()
                ),
                Err(e) => println!("{bw:?} load {load}: ERROR {}", &e.to_string()[..120]),
            }
        }
    }
}
