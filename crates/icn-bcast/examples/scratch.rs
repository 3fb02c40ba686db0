use icn_bcast::ilbm::{Ilbm, ccc::CccBrd};
use icn_bcast::sim::{Tiebreak, simulate};
use icn_bcast::validate::check_schedule;
fn main() {
    for k in 2..=8usize {
        for h in k..=k + 4 {
            let g = icn_topo::build::ccc(h, k as u32).unwrap();
            let brd = CccBrd::new(h, k);
            let hh = (h - 1).div_ceil(2);
            let th1 = 2 * k - 1 + 2 * hh;
            let sharp = 2 * k - 1 + hh;
            let mut worst = 0;
            let mut line = String::new();
            for s in 0..h {
                let src = g.ccc_node(0, s).unwrap();
                let mut p = Ilbm(brd.clone());
                let o = simulate(&g, src, &mut p, Tiebreak::Random { seed: 1 });
                check_schedule(&g, src, &o.schedule, Some(&o.first_receipt)).unwrap();
                let t = o.time().unwrap() as usize;
                let plan = brd.predicted_time(s).unwrap();
                worst = worst.max(t);
                line += &format!(
                    " {s}:{t}/{}{}",
                    plan,
                    if o.redundant_total() > 0 { "r" } else { "" }
                );
            }
            let tk1 = {
                let src = g.ccc_node(0, k - 1).unwrap();
                simulate(&g, src, &mut Ilbm(brd.clone()), Tiebreak::LowestSender)
                    .time()
                    .unwrap() as usize
            };
            println!(
                "h={h} k={k} th1={th1} sharp={sharp} worst={worst} k1={tk1} {} |{line}",
                if worst <= th1 { "OK" } else { "FAIL" }
            );
        }
    }
}
