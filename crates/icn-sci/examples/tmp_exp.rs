use icn_engine::{ExperimentFile, Metrics, Model};
use icn_sci::{Sci, SciConfig};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.get(2).is_some();
    let file = ExperimentFile::load(std::path::Path::new(&args[1]), quick).unwrap();
    let t = std::time::Instant::now();
    for p in file.points() {
        let cfg: SciConfig = file.typed(&p.body).unwrap();
        let reps: Vec<Metrics> = (0..file.replications)
            .map(|r| {
                Sci::run(
                    &cfg,
                    icn_engine::rng::derive_seed(file.seed, (p.index * 1000 + r as usize) as u64),
                    &icn_engine::model::NoProgress,
                )
                .unwrap()
            })
            .collect();
        let m = Metrics::aggregate(&reps);
        let params: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let show = [
            "r",
            "delay_ratio",
            "eta_std",
            "eta_iab",
            "hotspot_jain",
            "jain_fairness",
            "eta",
        ];
        let vals: Vec<String> = show
            .iter()
            .filter_map(|k| {
                m.get(k)
                    .map(|x| format!("{k}={:.3}±{:.3}", x.value, x.ci95.unwrap_or(f64::NAN)))
            })
            .collect();
        println!("{} {}", params.join(" "), vals.join(" "));
    }
    eprintln!("{:.1}s", t.elapsed().as_secs_f64());
}
