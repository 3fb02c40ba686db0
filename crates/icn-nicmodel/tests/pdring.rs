//! PD-ring behaviour the paper reports (§3.3): on LANai4 interrupts fall as the small ring
//! grows and then flatten out; on LANai9 they practically never fire.

use icn_nicmodel::pdring::{RingConfig, run_on};

fn per_1000(profile: &str, small_ring: usize) -> f64 {
    let cfg = RingConfig {
        small_ring,
        messages: 10_000,
        ..RingConfig::default()
    };
    run_on(profile, "myvia", &cfg, 1)
        .unwrap()
        .interrupts_per_1000()
}

#[test]
fn lanai9_has_essentially_no_interrupts_at_default_ring_size() {
    let d = RingConfig::default().small_ring;
    let x = per_1000("setup-b", d);
    assert!(x < 2.0, "{x} interrupts per 1000 messages");
    assert!(per_1000("setup-b", 2 * d) == 0.0);
}

#[test]
fn lanai4_interrupts_fall_with_small_ring_then_flatten() {
    let sizes = [8, 16, 32, 64, 128, 256];
    let v: Vec<f64> = sizes.iter().map(|&s| per_1000("setup-a", s)).collect();
    for w in v.windows(2) {
        assert!(w[1] < w[0], "not decreasing: {v:?}");
    }
    // The first doubling removes far more interrupts than the last one.
    let first = v[0] - v[1];
    let last = v[4] - v[5];
    assert!(first > 10.0 * last, "{v:?}");
    // And LANai4 interrupts clearly more than LANai9 at the default size.
    assert!(per_1000("setup-a", 64) > 5.0 * per_1000("setup-b", 64).max(0.1));
}
