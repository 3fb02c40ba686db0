//! The [`icn_fabric::conformance`] suite on the SCI ring fabric, plain and intelligent
//! (the X-Switch and VC routers run it in `icn-thnet`, the ideal fabric in `icn-fabric`).

use icn_fabric::conformance::{Traffic, check, skip_idle_matches_stepping};
use icn_sci::config::SciConfig;
use icn_sci::fabric::SciRingFabric;

#[test]
fn the_sci_ring_fabric_conforms() {
    for (nodes, intelligent) in [(2, false), (4, false), (8, true)] {
        let cfg = SciConfig {
            nodes,
            ..SciConfig::default()
        };
        let mut f = SciRingFabric::new(&cfg, intelligent).unwrap();
        check(&mut f, Traffic::default(), 9)
            .unwrap_or_else(|e| panic!("{nodes} nodes, intelligent {intelligent}: {e}"));
    }
}

#[test]
fn the_sci_ring_fabric_skips_idle_time_exactly() {
    for intelligent in [false, true] {
        let cfg = SciConfig::default();
        let mut a = SciRingFabric::new(&cfg, intelligent).unwrap();
        let mut b = SciRingFabric::new(&cfg, intelligent).unwrap();
        skip_idle_matches_stepping(&mut a, &mut b, 20, 5_000, 9)
            .unwrap_or_else(|e| panic!("intelligent {intelligent}: {e}"));
    }
}
