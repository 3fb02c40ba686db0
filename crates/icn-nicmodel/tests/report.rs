//! Ablation, TLB and sensitivity behaviour (the numbers are in docs/nicmodel.md).

use icn_nicmodel::Profile;
use icn_nicmodel::bench::Effort;
use icn_nicmodel::report::{self, Ablation, HEADLINES};
use std::sync::OnceLock;

const E: Effort = Effort {
    round_trips: 2,
    messages: 150,
    queue_depth: 64,
};

fn ablation() -> &'static [Ablation] {
    static A: OnceLock<Vec<Ablation>> = OnceLock::new();
    A.get_or_init(|| report::ablation(E).unwrap())
}

fn row(profile: &str, prefix: &str) -> &'static Ablation {
    ablation()
        .iter()
        .find(|r| r.profile == profile && r.variant.starts_with(prefix))
        .unwrap()
}

#[test]
fn each_optimisation_has_the_effect_the_paper_claims() {
    for p in ["setup-a", "setup-b"] {
        let base = row(p, "MyVIA");
        // PD ring: one PIO instead of doorbell + descriptor DMA → lower latency.
        assert!(
            row(p, "- PD ring").latency_us > base.latency_us + 1.0,
            "{p}"
        );
        // Pipelining: overlapping messages → more bandwidth at 4 KB and 64 KB.
        assert!(row(p, "- pipeline").bw_4k < 0.95 * base.bw_4k, "{p}");
        // User TLB: NIC misses cost interrupts on the critical path.
        assert!(
            row(p, "- user TLB (NIC TLB, 70").latency_us > base.latency_us,
            "{p}"
        );
    }
    // Big DMAs matter where the PCI DMA set-up is expensive relative to the transfer (LANai4).
    let a = row("setup-a", "MyVIA");
    assert!(row("setup-a", "- big DMA").bw_64k < 0.85 * a.bw_64k);
}

#[test]
fn myvia_without_its_optimisations_is_close_to_berkeley_via() {
    for p in ["setup-a", "setup-b"] {
        let stripped = row(p, "- all four");
        let bvia = row(p, "Berkeley VIA");
        for (x, y) in [(stripped.bw_4k, bvia.bw_4k), (stripped.bw_64k, bvia.bw_64k)] {
            assert!((x / y - 1.0).abs() < 0.1, "{p}: {x} vs {y}");
        }
    }
}

#[test]
fn poor_tlb_locality_costs_berkeley_via_bandwidth() {
    let sweep = report::tlb_sweep(E, 1).unwrap();
    for p in ["setup-a", "setup-b"] {
        let rows: Vec<_> = sweep.iter().filter(|r| r.0 == p).collect();
        for w in rows.windows(2) {
            assert!(w[1].3 < w[0].3, "{p}: not decreasing with hit rate");
        }
    }
    // Set-up B at 50 % hits: inside the paper's 10-40 % band at 64 KB.
    let full = sweep
        .iter()
        .find(|r| r.0 == "setup-b" && r.1 == 1.0)
        .unwrap()
        .3;
    let half = sweep
        .iter()
        .find(|r| r.0 == "setup-b" && r.1 == 0.5)
        .unwrap()
        .3;
    let loss = 1.0 - half / full;
    assert!((0.10..0.40).contains(&loss), "{loss}");
}

#[test]
fn sensitivity_follows_the_bottleneck() {
    let h = HEADLINES
        .iter()
        .find(|h| h.name == "B MyVIA BW 4 KB")
        .unwrap();
    let p = Profile::load("setup-b").unwrap();
    let base = report::headline_value(h, &p, E).unwrap();
    // Link-bound at 4 KB: +20 % link rate gives well over +10 %, +20 % host clock nothing.
    let link = report::headline_value(h, &p.scaled("link.rates.wire", 1.2), E).unwrap();
    assert!(link / base > 1.1, "{base} → {link}");
    let host = report::headline_value(h, &p.scaled("host_cpu.clock_mhz", 1.2), E).unwrap();
    assert!((host / base - 1.0).abs() < 0.01, "{base} → {host}");
    // Latency: the NIC clock matters (firmware cycles), the link rate hardly (4-B packets).
    let lat = HEADLINES
        .iter()
        .find(|h| h.name == "B MyVIA latency 4 B")
        .unwrap();
    let l0 = report::headline_value(lat, &p, E).unwrap();
    let slow = report::headline_value(lat, &p.scaled("nic_cpu.clock_mhz", 0.8), E).unwrap();
    assert!(slow > l0 * 1.05, "{l0} → {slow}");
}
