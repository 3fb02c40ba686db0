//! Runs every point of an experiment file through the `bcast` model and prints the main
//! metrics with timings (a stand-in for `icnlab run` while developing):
//! `cargo run --release -p icn-bcast --example run_experiment -- experiments/bcast.toml [--quick]`
use icn_bcast::{Bcast, BcastConfig};
use icn_engine::model::NoProgress;
use icn_engine::{ExperimentFile, Model};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let exp = ExperimentFile::load(std::path::Path::new(&args[0]), quick).expect("experiment file");
    let t0 = std::time::Instant::now();
    for p in exp.points() {
        let cfg: BcastConfig = exp.typed(&p.body).expect("config");
        Bcast::validate(&cfg).expect("valid");
        let t = std::time::Instant::now();
        let m = Bcast::run(&cfg, exp.seed, &NoProgress).expect("run");
        let pick = [
            "worst_steps",
            "bound_theorem1",
            "optimum",
            "source_k1_steps",
            "sharp_bound",
            "source_k1_optimum",
            "messages",
        ];
        let vals: Vec<String> = pick
            .iter()
            .map(|k| format!("{k}={}", m.require(k).expect("a bcast metric")))
            .collect();
        println!(
            "{} {} {} {:.2}s",
            cfg.spec(),
            cfg.scheme,
            vals.join(" "),
            t.elapsed().as_secs_f64()
        );
    }
    eprintln!("total {:.1}s", t0.elapsed().as_secs_f64());
}
