//! Single-entry optimum (every cycle entered by one L transfer) from (0,k−1) vs CCCBrd.
use icn_bcast::bounds::sharp_claim;
use icn_bcast::optimum::{Answer, decide_restricted};
fn main() {
    for (h, k) in [
        (3usize, 3u32),
        (5, 4),
        (5, 5),
        (7, 5),
        (7, 6),
        (9, 6),
        (4, 3),
        (6, 4),
        (7, 7),
    ] {
        let g = icn_topo::build::ccc(h, k).unwrap();
        let once: Vec<Vec<(usize, usize)>> = (0..1usize << k)
            .map(|c| {
                (0..k as usize)
                    .map(|p| {
                        (
                            g.ccc_node(c ^ (1 << p), p).unwrap(),
                            g.ccc_node(c, p).unwrap(),
                        )
                    })
                    .collect()
            })
            .collect();
        let s = g.ccc_node(0, k as usize - 1).unwrap();
        let t = sharp_claim(h, k);
        let t0 = std::time::Instant::now();
        let a = decide_restricted(&g, s, t, &[], &once, 2_000_000);
        println!(
            "CCC({h},{k}) sharp {t}: single-entry feasible? {:?} {:.1}s",
            matches!(a, Answer::Yes(_))
                .then_some("yes")
                .unwrap_or(if a == Answer::No { "no" } else { "unknown" }),
            t0.elapsed().as_secs_f64()
        );
    }
}
