//! Prints the claims table of docs/bcast.md:
//! `cargo run --release -p icn-bcast --example claims_table`
use icn_bcast::claims::{ClaimLimits, check_ccc, markdown};

fn main() {
    let lim = ClaimLimits::default();
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
