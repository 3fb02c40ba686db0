//! Prints an optimal broadcast schedule of CCC(h,k) from (0,p), found by SAT:
//! `cargo run --release -p icn-bcast --example optimal_schedule -- H K P`
use icn_bcast::optimum::optimum;
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let g = icn_topo::build::ccc(args[0], args[1] as u32).unwrap();
    let o = optimum(&g, g.ccc_node(0, args[2]).unwrap(), 64, 1_000_000, 10000);
    println!("{:?}", o.exact);
    for t in &o.schedule {
        println!(
            "{} {} -> {} {}",
            t.step,
            g.name(t.from),
            g.name(t.to),
            t.port
        );
    }
}
