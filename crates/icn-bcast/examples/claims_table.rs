//! Prints the claims table of docs/bcast.md:
//! `cargo run --release -p icn-bcast --example claims_table`
use icn_bcast::claims::{ClaimLimits, check_ccc, markdown};

fn main() {
    // Optional: ALL_SOURCES_MAX_NODES K1_MAX_NODES CONFLICTS
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let mut lim = ClaimLimits::default();
    if a.len() == 3 {
        lim = ClaimLimits {
            all_sources_max_nodes: a[0] as usize,
            k1_max_nodes: a[1] as usize,
            conflicts: a[2],
        };
    }
    let mut rows = Vec::new();
    for k in 2..=8u32 {
        for h in k as usize..=k as usize + 4 {
            let t0 = std::time::Instant::now();
            let row = check_ccc(h, k, &lim).expect("valid size");
            eprintln!("CCC({h},{k}) {:.1}s", t0.elapsed().as_secs_f64());
            rows.push(row);
        }
    }
    print!("{}", markdown(&rows));
}
