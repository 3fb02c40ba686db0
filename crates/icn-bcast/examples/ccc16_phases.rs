//! Where the time of a one-source CCCBrd broadcast on a large CCC goes:
//! `cargo run --release -p icn-bcast --example ccc16_phases -- 16 16`
use icn_bcast::ilbm::Ilbm;
use icn_bcast::ilbm::ccc::CccBrd;
use icn_bcast::sim::{Tiebreak, simulate};
use std::time::Instant;

fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let (h, k) = (
        a.first().copied().unwrap_or(16),
        a.get(1).copied().unwrap_or(16),
    );
    let t = Instant::now();
    let g = icn_topo::build::ccc(h, k as u32).unwrap();
    println!("graph: {:.3}s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let brd = CccBrd::new(h, k);
    println!("plan table: {:.3}s", t.elapsed().as_secs_f64());
    let s = g.ccc_node(0, k - 1).unwrap();
    let t = Instant::now();
    let o = simulate(&g, s, &mut Ilbm(&brd), Tiebreak::Random { seed: 1 });
    println!(
        "simulate: {:.3}s, time {:?}",
        t.elapsed().as_secs_f64(),
        o.time()
    );
    let t = Instant::now();
    icn_bcast::validate::check_schedule(&g, s, &o.schedule, Some(&o.first_receipt)).unwrap();
    println!("validate: {:.3}s", t.elapsed().as_secs_f64());
}
