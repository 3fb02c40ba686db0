use super::*;

/// Every VC-router spelling builds a VC network: the 2-D meshes on the 5-port
/// routers, the rest (a torus or ring, whose default routing is BookSim2's `dim_order`, a crossbar,
/// more dimensions, several endpoints per router, fat trees, dragonflies, graphs) on the
/// any-radix routers, with their endpoints.
#[test]
fn every_spelling_of_the_vc_routers_prepares() {
    for (spec, grid, endpoints) in [
        ("mesh:4x4", true, 16),
        ("torus:4x4", false, 16),
        ("ring:5", false, 5),
        ("crossbar:8", false, 8),
        ("mesh:4x4,2", false, 32),
        ("torus:3x3x3", false, 27),
        ("fattree:2,3", false, 8),
        ("dragonfly:1,2,1", false, 6),
        ("hypercube:3", false, 8),
        ("flatfly:4x4", false, 16),
        ("ccc:3,3", false, 24),
        ("graph:ccc:3,3", false, 24),
    ] {
        let cfg = VcFabricConfig {
            net: VcNetConfig::on(spec),
            ..VcFabricConfig::default()
        };
        let t = cfg.prepare().unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(t.grid().is_some(), grid, "{spec}");
        assert_eq!(t.endpoints(), endpoints, "{spec}");
        cfg.build(&t, 1, 1, None).unwrap();
    }
}

/// A key of another kind is refused by the struct itself (the cluster reads `kind` first).
#[test]
fn keys_of_another_kind_are_unknown() {
    let e = toml::from_str::<VcFabricConfig>("frame_size = 64").unwrap_err();
    assert!(e.to_string().contains("unknown field `frame_size`"), "{e}");
}
