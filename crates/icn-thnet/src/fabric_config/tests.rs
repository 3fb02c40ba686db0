use super::*;

fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |s| (0..n).map(move |d| (s, d)))
}

/// A new user's first try: an all-to-all on a source-routed X-Switch ring. Refused before
/// the run, naming the key and the cycle; `allow_deadlock` runs it anyway.
#[test]
fn an_x_switch_ring_is_refused_before_the_run() {
    let mut cfg = XSwitchFabricConfig {
        net: XSwitchNetConfig::on("ring:6"),
        ..XSwitchFabricConfig::default()
    };
    let topo = cfg.prepare().unwrap();
    let e = cfg.check_deadlock(&topo, &mut pairs(6)).unwrap_err();
    assert_eq!(e.key, "fabric.topology");
    assert!(e.message.contains("can deadlock"), "{}", e.message);
    assert!(e.message.contains("s0.A → s1.A"), "{}", e.message);
    cfg.allow_deadlock = true;
    cfg.check_deadlock(&topo, &mut pairs(6)).unwrap();
    let mesh = XSwitchFabricConfig {
        net: XSwitchNetConfig::on("mesh:4x4"),
        ..XSwitchFabricConfig::default()
    };
    mesh.check_deadlock(&mesh.prepare().unwrap(), &mut pairs(16))
        .unwrap();
}

/// A key of another kind is refused by the struct itself (the cluster reads `kind` first).
#[test]
fn keys_of_another_kind_are_unknown() {
    let e = toml::from_str::<XSwitchFabricConfig>("vcs = 4").unwrap_err();
    assert!(e.to_string().contains("unknown field `vcs`"), "{e}");
}
