use icn_sci::bench_config;
fn main() {
    let mut cfg = bench_config();
    cfg.warmup_cycles = 10_000;
    cfg.measure_cycles = 100_000;
    let sim = icn_sci::simulate(&cfg, 1, false, &icn_engine::model::NoProgress).unwrap();
    println!("{}", sim.now());
}
