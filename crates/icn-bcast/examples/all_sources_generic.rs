//! The all-sources check of CCCBrd the way it was done before `verify::ccc_all_sources`:
//! generic simulator and validator, one source after the other, for comparison with
//! `icnlab bench bcast-ccc8-all`.
//! `cargo run --release -p icn-bcast --example all_sources_generic -- 8 8`
use icn_bcast::ilbm::Ilbm;
use icn_bcast::ilbm::ccc::CccBrd;
use icn_bcast::sim::{Tiebreak, simulate};
use icn_bcast::validate::check_schedule;
use std::time::Instant;

fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let (h, k) = (
        a.first().copied().unwrap_or(8),
        a.get(1).copied().unwrap_or(8),
    );
    let t = Instant::now();
    let g = icn_topo::build::ccc(h, k as u32).unwrap();
    let brd = CccBrd::new(h, k);
    let mut worst = 0;
    for s in 0..g.len() {
        let o = simulate(&g, s, &mut Ilbm(&brd), Tiebreak::Random { seed: s as u64 });
        check_schedule(&g, s, &o.schedule, Some(&o.first_receipt)).unwrap();
        worst = worst.max(o.time().unwrap());
    }
    println!(
        "CCC({h},{k}): {} sources, worst {worst}, {:.3}s",
        g.len(),
        t.elapsed().as_secs_f64()
    );
}
