//! Prints latency/bandwidth curves: `cargo run --release -p icn-nicmodel --example explore -- setup-b myvia,bvia,gm`.
use icn_nicmodel::{Switches, bench, build};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let prof = &args[1];
    for d in args[2].split(',') {
        let p = build(prof, d, Switches::default(), 1.0).unwrap();
        let e = bench::Effort {
            round_trips: 5,
            messages: 300,
            queue_depth: 64,
        };
        println!("{prof} {d}");
        for pt in bench::curve(&p, &bench::paper_sizes(), e, 1).unwrap() {
            println!(
                "{:>7} {:>8.2} us {:>8.2} MB/s",
                pt.size_bytes, pt.latency_us, pt.bandwidth_mbs
            );
        }
    }
}
