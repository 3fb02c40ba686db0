//! Time to build the CCCBrd plan table: `cargo run --release -p icn-bcast --example plan_cost`
fn main() {
    for (h, k) in [(8, 8), (12, 8), (10, 10), (12, 10), (11, 11), (12, 12)] {
        let t = std::time::Instant::now();
        let b = icn_bcast::ilbm::ccc::CccBrd::new(h, k);
        println!(
            "CCC({h},{k}): {:.2}s, worst predicted {:?}",
            t.elapsed().as_secs_f64(),
            (0..h).filter_map(|s| b.predicted_time(s)).max()
        );
    }
}
