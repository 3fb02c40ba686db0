use icn_bcast::optimum::optimum;
use std::time::Instant;
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (h, k, budget) = (args[0], args[1] as u32, args[2] as u64);
    let g = icn_topo::build::ccc(h, k).unwrap();
    for s in 0..h {
        let t0 = Instant::now();
        let o = optimum(&g, g.ccc_node(0, s).unwrap(), 64, budget, 10000);
        println!(
            "ccc({h},{k}) s={s} lower={} exact={:?} {:.2}s",
            o.lower,
            o.exact,
            t0.elapsed().as_secs_f64()
        );
    }
}
