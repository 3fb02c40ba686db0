//! BookSim2 configurations through the import: syntax, translation, refusal by key name, and
//! the result validating as an icnlab `vc-router` experiment. The configurations are written
//! here in BookSim2's syntax, with the keys of BookSim2's own `src/examples/` (not copies).

use icn_booksim::{ImportError, Value, parse, translate};
use icn_engine::Model;
use icn_thnet::vc_model::{VcRouter, VcRouterConfig};

fn import(text: &str, overrides: &[&str]) -> Result<String, ImportError> {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    translate("test.cfg", &parse("test.cfg", text, &o)?)
}

/// The model part of an imported file, validated by the vc-router model.
fn model_config(toml_text: &str) -> VcRouterConfig {
    let mut t: toml::Table = toml::from_str(toml_text).unwrap();
    assert_eq!(t.remove("model").unwrap().as_str(), Some("vc-router"));
    for k in ["title", "seed", "replications"] {
        t.remove(k);
    }
    let cfg: VcRouterConfig = t.try_into().unwrap();
    VcRouter::validate(&cfg).unwrap_or_else(|e| panic!("{toml_text}\n{e}"));
    cfg
}

#[test]
fn syntax_comments_statements_and_overrides() {
    let e = parse(
        "a.cfg",
        "// comment\ntopology = torus; // trailing\nk =\n 4;\nn=2;injection_rate = 0.25;\nrouting_function = \"dim_order\";\nfoo = {1, 2};\n",
        &["k=8".into()],
    )
    .unwrap();
    let kv: Vec<(&str, Value, &str)> = e
        .iter()
        .map(|x| (x.key.as_str(), x.value.clone(), x.at.as_str()))
        .collect();
    assert_eq!(kv[0], ("topology", Value::Text("torus".into()), "a.cfg:2"));
    // A statement over two lines is at the line it starts on.
    assert_eq!(kv[1], ("k", Value::Number(4.0), "a.cfg:3"));
    assert_eq!(kv[2].0, "n");
    assert_eq!(kv[3], ("injection_rate", Value::Number(0.25), "a.cfg:5"));
    assert_eq!(kv[4].1, Value::Text("dim_order".into()));
    assert_eq!(kv[5].1, Value::List("1, 2".into()));
    assert_eq!(kv[6], ("k", Value::Number(8.0), "command line"));
    for (bad, line) in [
        ("k = 8", "a.cfg:1"),
        ("k 8;", "a.cfg:1"),
        ("\n\nk = ;", "a.cfg:3"),
        ("k = a b;", "a.cfg:1"),
        ("9k! = 1;", "a.cfg:1"),
        ("x = {1, 2;", "a.cfg:1"),
    ] {
        let e = parse("a.cfg", bad, &[]).unwrap_err();
        assert!(e.to_string().starts_with(line), "{bad:?}: {e}");
    }
    assert!(parse("a.cfg", "", &["k".into()]).is_err());
}

#[test]
fn torus88_example_imports_with_booksim_latencies() {
    // BookSim2's examples/torus88: topology, k, n, routing_function, num_vcs, traffic,
    // injection_rate.
    let t = import(
        "topology = torus;\nk = 8;\nn = 2;\nrouting_function = dim_order;\nnum_vcs = 2;\ntraffic = uniform;\ninjection_rate = 0.15;\n",
        &[],
    )
    .unwrap();
    let c = model_config(&t);
    assert_eq!(c.net.topology, "torus:8x8");
    assert_eq!(c.net.routing, "dim_order");
    assert_eq!((c.net.router.vcs, c.net.router.buf, c.size), (2, 8, 1));
    assert_eq!(
        (
            c.net.router.channel_delay,
            c.net.router.credit_delay,
            c.net.router.terminal_delay
        ),
        (2, 2, 1)
    );
    // injection_rate in packets of 1 flit; warm-up 3 × 1000, window 10 × 1000.
    assert_eq!((c.load, c.warmup, c.measure), (0.15, 3000, 10000));
    // use_noc_latency = 0: 1-cycle channels; overrides win.
    let c = model_config(
        &import(
            "topology = torus; k = 4; n = 3; routing_function = dim_order; num_vcs = 4;",
            &["use_noc_latency=0", "packet_size=5", "injection_rate=0.05"],
        )
        .unwrap(),
    );
    assert_eq!(c.net.topology, "torus:4x4x4");
    assert_eq!((c.net.router.channel_delay, c.load), (1, 0.25));
}

#[test]
fn dragonfly_and_fat_tree_examples() {
    // examples/dragonflyconfig's keys, with the router keys icnlab models.
    let df = "vc_buf_size = 256; wait_for_tail_credit = 0; vc_allocator = separable_input_first;\n\
              sw_allocator = separable_input_first; alloc_iters = 1; credit_delay = 1;\n\
              routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1; st_final_delay = 1;\n\
              input_speedup = 1; output_speedup = 1; internal_speedup = 1.0; warmup_periods = 3;\n\
              sim_count = 1; sample_period = 10000; routing_function = min; num_vcs = 2;\n\
              priority = none; traffic = uniform; injection_rate = 0.8; packet_size = 10;\n\
              injection_rate_uses_flits = 1; topology = dragonflynew; k = 4; n = 1; watch_out = -;";
    let err = import(df, &[]).unwrap_err().to_string();
    assert!(err.contains("key `vc_buf_size`"), "{err}");
    let c = model_config(&import(df, &["vc_buf_size=64"]).unwrap());
    assert_eq!(c.net.topology, "dragonfly:4,absolute");
    assert_eq!(c.net.routing, "min_dragonflynew");
    assert_eq!(
        (
            c.net.router.channel_delay,
            c.net.global_delay,
            c.net.router.terminal_delay
        ),
        (10, 100, 1)
    );
    assert_eq!((c.net.router.routing_delay, c.size, c.load), (0, 10, 0.8));
    // UGAL needs BookSim2's 3 VCs, and runs with allow_deadlock (the check finds its cycle).
    assert!(import(df, &["vc_buf_size=64", "routing_function=ugal"]).is_err());
    let c = model_config(
        &import(
            df,
            &["vc_buf_size=64", "routing_function=ugal", "num_vcs=3"],
        )
        .unwrap(),
    );
    assert!(c.net.allow_deadlock);
    // examples/fattree_config's keys (hold_switch_for_packet = 1 is not modelled).
    let ft = "hold_switch_for_packet = 1; vc_buf_size = 16; routing_function = nca; num_vcs = 4;\n\
              traffic = uniform; injection_rate = 0.6; packet_size = 1; injection_rate_uses_flits = 1;\n\
              topology = fattree; k = 4; n = 3;";
    let err = import(ft, &[]).unwrap_err().to_string();
    assert!(
        err.starts_with("test.cfg:1: key `hold_switch_for_packet`"),
        "{err}"
    );
    let c = model_config(&import(ft, &["hold_switch_for_packet=0"]).unwrap());
    assert_eq!(
        (c.net.topology.as_str(), c.net.routing.as_str()),
        ("fattree:4,3", "nca_fattree")
    );
}

#[test]
fn unmodelled_examples_are_refused_key_by_key() {
    for (cfg, key) in [
        // examples/cmeshconfig
        (
            "topology = cmesh; k = 4; n = 2; c = 4; routing_function = dor_no_express;",
            "c",
        ),
        (
            "topology = cmesh; k = 4; n = 2; routing_function = dor_no_express;",
            "topology",
        ),
        // examples/flatflyconfig
        (
            "num_vcs = 8; topology = flatfly; routing_function = ran_min; x = 4;",
            "x",
        ),
        // examples/singleconfig
        (
            "topology = fly; k = 10; n = 1; routing_function = dest_tag;",
            "topology",
        ),
        // examples/mesh88_lat
        (
            "topology = mesh; k = 8; n = 2; routing_function = dor; wait_for_tail_credit = 1;",
            "wait_for_tail_credit",
        ),
        (
            "topology = mesh; k = 8; n = 2; routing_function = dor; input_speedup = 2;",
            "input_speedup",
        ),
        (
            "topology = mesh; k = 8; n = 2; routing_function = min_adapt;",
            "routing_function",
        ),
        (
            "topology = torus; k = 8; n = 2; routing_function = romm;",
            "routing_function",
        ),
        (
            "topology = torus; k = 8; n = 2; routing_function = valiant; num_vcs = 6;",
            "num_vcs",
        ),
        // examples/anynet
        (
            "topology = anynet; network_file = anynet_file; routing_function = min;",
            "network_file",
        ),
        (
            "topology = torus; routing_function = dim_order; num_vcs = 3;",
            "num_vcs",
        ),
        (
            "topology = torus; routing_function = dim_order; traffic = hotspot({0},{1});",
            "traffic",
        ),
        (
            "topology = torus; routing_function = dim_order; injection_rate = {0.1, 0.2};",
            "injection_rate",
        ),
        (
            "topology = torus; routing_function = dim_order; seed = time;",
            "seed",
        ),
        (
            "topology = torus; routing_function = dim_order; injection_process = on_off; burst_r1 = 0.5;",
            "burst_r1",
        ),
    ] {
        match import(cfg, &[]) {
            Err(ImportError::Key { key: k, .. }) => assert_eq!(k, key, "{cfg}"),
            other => panic!("{cfg}: {other:?}"),
        }
    }
}

#[test]
fn mesh88_with_modelled_keys_runs_the_same_router() {
    let c = model_config(
        &import(
            "topology = mesh; k = 8; n = 2; routing_function = dor; num_vcs = 8; vc_buf_size = 8;\n\
             vc_allocator = islip; sw_allocator = islip; alloc_iters = 1; credit_delay = 1;\n\
             routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1; traffic = transpose;\n\
             packet_size = 20; sim_type = latency; injection_rate = 0.005;\n\
             injection_process = on_off; burst_alpha = 0.2; burst_beta = 0.6;",
            &[],
        )
        .unwrap(),
    );
    assert_eq!(c.net.topology, "mesh:8x8");
    assert_eq!(c.net.routing, "dim_order");
    assert_eq!((c.net.router.vcs, c.size), (8, 20));
    assert!((c.load - 0.1).abs() < 1e-12);
    assert_eq!(c.traffic.burst_beta, 0.6);
}

#[test]
fn booksim2_routing_functions_map_to_their_names() {
    for (topology, function, vcs, name) in [
        ("mesh", "xy_yx", 2, "xy_yx_mesh"),
        ("mesh", "romm", 4, "romm_mesh"),
        ("mesh", "valiant", 2, "valiant_mesh"),
        ("torus", "valiant", 4, "valiant_torus"),
        ("torus", "valiant", 8, "valiant_torus"),
        ("fattree", "anca", 1, "anca_fattree"),
    ] {
        let n = if topology == "fattree" { 3 } else { 2 };
        let text = format!(
            "topology = {topology}; k = 4; n = {n}; routing_function = {function}; num_vcs = {vcs};"
        );
        let c = model_config(&import(&text, &[]).unwrap());
        assert_eq!(
            (c.net.routing.as_str(), c.net.router.vcs),
            (name, vcs),
            "{text}"
        );
    }
    // Too few VCs for the classes, or a count they do not split: refused by key.
    for (topology, function, vcs) in [("mesh", "romm", 3), ("torus", "valiant", 2)] {
        let text =
            format!("topology = {topology}; routing_function = {function}; num_vcs = {vcs};");
        match import(&text, &[]) {
            Err(ImportError::Key { key, .. }) => assert_eq!(key, "num_vcs", "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

proptest::proptest! {
    /// Whatever the text, parsing and translating return (never panic).
    #[test]
    fn any_text_is_an_import_or_an_error(text in ".{0,200}") {
        if let Ok(e) = parse("f", &text, &[]) {
            let _ = translate("f", &e);
        }
    }
}
