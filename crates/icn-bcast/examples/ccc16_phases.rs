//! Where the time of a one-source CCCBrd broadcast on a large CCC goes:
//! `cargo run --release -p icn-bcast --example ccc16_phases -- 16 16 [generic]`
//! (plan table for the source's position, fast simulator; `generic` adds the graph, the full
//! table, the generic simulator and the validator).
use icn_bcast::ilbm::Ilbm;
use icn_bcast::ilbm::ccc::CccBrd;
use icn_bcast::sim::{Tiebreak, simulate};
use icn_bcast::verify::ccc_fast;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let h: usize = a.first().map_or(16, |s| s.parse().unwrap());
    let k: usize = a.get(1).map_or(16, |s| s.parse().unwrap());
    let t = Instant::now();
    let brd = CccBrd::for_positions(h, k, [k - 1]);
    println!(
        "plan table for position k-1: {:.3}s, {} states",
        t.elapsed().as_secs_f64(),
        brd.table_len()
    );
    let t = Instant::now();
    let o = ccc_fast(&brd, h, k, (0, k - 1), false);
    println!(
        "fast simulator: {:.3}s, time {:?}",
        t.elapsed().as_secs_f64(),
        o.time()
    );
    if a.get(2).map(String::as_str) != Some("generic") {
        return;
    }
    let t = Instant::now();
    let g = icn_topo::build::ccc(h, k as u32).unwrap();
    println!("graph: {:.3}s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let brd = CccBrd::new(h, k);
    println!(
        "full plan table: {:.3}s, {} states",
        t.elapsed().as_secs_f64(),
        brd.table_len()
    );
    let s = g.ccc_node(0, k - 1).unwrap();
    let t = Instant::now();
    let o = simulate(&g, s, &mut Ilbm(&brd), Tiebreak::Random { seed: 1 });
    println!(
        "generic simulate: {:.3}s, time {:?}",
        t.elapsed().as_secs_f64(),
        o.time()
    );
    let t = Instant::now();
    icn_bcast::validate::check_schedule(&g, s, &o.schedule, Some(&o.first_receipt)).unwrap();
    println!("validate: {:.3}s", t.elapsed().as_secs_f64());
}
