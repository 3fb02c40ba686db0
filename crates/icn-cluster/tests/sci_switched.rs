//! Issue 31, "the cluster gets every model": `[fabric] kind = "sci-switched"` — SCI rings
//! joined by switches, `model = "sci-switched"`'s system with its keys — replays a TI trace
//! and runs an all-to-all.

use icn_cluster::model::{Cluster, ClusterConfig};
use icn_engine::model::NoProgress;
use icn_engine::{Context, Metrics, Model};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn config(text: &str) -> ClusterConfig {
    let t: toml::Table = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    toml::Value::Table(t).try_into().unwrap()
}

fn run(cfg: &ClusterConfig, ctx: &Context) -> Metrics {
    let p = Cluster::prepare(cfg, ctx).unwrap();
    Cluster::run_prepared(&p, 1, &NoProgress).unwrap()
}

fn get(m: &Metrics, name: &str) -> f64 {
    m.require(name).unwrap_or_else(|e| panic!("{e}"))
}

/// SimGrid's example traces (3 and 4 ranks, messages up to 50 kB) on a ring of two rings of
/// two hosts: the same messages, bytes and actions as on the flow fabric (the algorithms
/// decide them, not the fabric), every rank ends, never before its compute, and the run
/// crosses the switches (most pairs are on different rings).
#[test]
fn ti_traces_replay_on_switched_sci() {
    for t in ["alltoall", "alltoallv", "allreduce", "bcast", "waitall"] {
        let file = repo().join(format!(
            "experiments/traces/simgrid-examples/actions_{t}.txt"
        ));
        let on = |fabric: &str| {
            run(
                &config(&format!(
                    "[workload]\nkind = \"ti\"\nfile = \"{}\"\n[fabric]\n{fabric}\n",
                    file.display()
                )),
                &Context::default(),
            )
        };
        let sci = on("kind = \"sci-switched\"\nrings = 2\n[fabric.ring]\nnodes = 2");
        let flow = on("kind = \"flow\"\ntopology = \"crossbar:4\"");
        for what in ["messages", "bytes", "actions"] {
            assert_eq!(get(&sci, what), get(&flow, what), "{t}: {what}");
        }
        assert!(get(&sci, "messages") > 0.0, "{t}");
        assert!(get(&sci, "completion_us") >= get(&sci, "compute_us"), "{t}");
        assert!(get(&sci, "fabric_us") > 0.0, "{t}");
    }
}

/// The bundled example (`experiments/examples/cluster-sci-switched-alltoall.toml`, 16 hosts
/// on four rings, intelligent A/B aging machine-wide) at 4 KiB per pair: every one of the
/// 240 messages arrives with its bytes, and the fabric time splits into wire and waiting.
#[test]
fn the_example_all_to_all_runs_on_a_ring_of_rings() {
    let path = repo().join("experiments/examples/cluster-sci-switched-alltoall.toml");
    let mut t: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for k in ["model", "title", "seed", "replications"] {
        t.remove(k);
    }
    icn_engine::config::set_path(&mut t, "workload.bytes", 4096.into());
    let cfg: ClusterConfig = toml::Value::Table(t).try_into().unwrap();
    let m = run(&cfg, &Context::for_file(&path));
    assert_eq!(get(&m, "messages"), 240.0);
    assert_eq!(get(&m, "bytes"), 240.0 * 4096.0);
    // 64-byte SCI sends: 4096 B is 64 of them.
    assert_eq!(get(&m, "packets"), 240.0 * 64.0);
    let (wire, wait, fabric) = (
        get(&m, "wire_us"),
        get(&m, "fabric_wait_us"),
        get(&m, "fabric_us"),
    );
    assert!(
        (wire + wait - fabric).abs() < 1e-6,
        "{wire} + {wait} ≠ {fabric}"
    );
    assert!(wire > 0.0 && wait >= 0.0, "{wire} {wait}");
}

/// The degenerate switched system (`topology = "single"`: one ring, no switch) is the
/// `sci-ring` fabric: a 16 KiB all-to-all of six hosts behind `simple` NICs takes the same
/// time on both, to the picosecond, with the same split per message — and so does a ring
/// with every ring key changed, which both kinds read from the same struct.
#[test]
fn one_switched_ring_is_the_sci_ring() {
    let workload = "[workload]\nkind = \"alltoall\"\nbytes = 16384\n[nic]\nkind = \"simple\"\ndma_mbs = 132.0\n";
    for ring in [
        "",
        "transmitter = \"intelligent\"\nservice_time = 30\nqueue_depth = 2\nsend_queue_depth = 8\ndata_bytes = [256]\n",
    ] {
        let single = run(
            &config(&format!(
                "{workload}[fabric]\nkind = \"sci-switched\"\ntopology = \"single\"\n[fabric.ring]\nnodes = 6\n{ring}"
            )),
            &Context::default(),
        );
        let plain = run(
            &config(&format!(
                "{workload}[fabric]\nkind = \"sci-ring\"\ntopology = \"ring:6\"\n{ring}"
            )),
            &Context::default(),
        );
        assert_eq!(get(&single, "messages"), 30.0);
        for what in [
            "completion_us",
            "message_us",
            "nic_us",
            "fabric_us",
            "wire_us",
            "packets",
        ] {
            assert_eq!(
                get(&single, what).to_bits(),
                get(&plain, what).to_bits(),
                "{ring:?}: {what}"
            );
        }
    }
}

/// Keys are the model's: a workload key of `model = "sci-switched"` is refused by name, and
/// a bad value names its `fabric.` key.
#[test]
fn a_model_only_key_is_refused_by_name() {
    let refusal = |text: &str| {
        let t: toml::Table = toml::from_str(text).unwrap();
        icn_engine::config::deserialize_at::<ClusterConfig>(toml::Value::Table(t))
            .and_then(|c| Cluster::validate(&c))
            .unwrap_err()
    };
    let e = refusal("[fabric]\nkind = \"sci-switched\"\n[fabric.ring]\nload = 0.5\n");
    assert_eq!(e.key, "fabric.ring.load");
    assert!(e.message.contains("workload"), "{}", e.message);
    let e = refusal("[fabric]\nkind = \"sci-ring\"\nnodes = 8\n");
    assert_eq!(e.key, "fabric.nodes");
    assert!(e.message.contains("ring:N"), "{}", e.message);
    assert_eq!(
        refusal("[fabric]\nkind = \"sci-switched\"\nrings = 40\n").key,
        "fabric.rings"
    );
    assert_eq!(
        refusal("[fabric]\nkind = \"sci-switched\"\n[fabric.ring]\nqueue_depth = 0\n").key,
        "fabric.ring.queue_depth"
    );
    assert_eq!(
        refusal("[fabric]\nkind = \"sci-switched\"\n[fabric.ring]\ntransmitter = \"compare\"\n")
            .key,
        "fabric.ring.transmitter"
    );
    assert_eq!(
        refusal("[fabric]\nkind = \"sci-switched\"\ntopology = \"torus\"\n").key,
        "fabric.topology"
    );
}
