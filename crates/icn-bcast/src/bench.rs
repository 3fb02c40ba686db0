//! The broadcast speed workloads `icnlab bench` times (issue 6's targets: CCC(16,16) from one
//! source in under 1 s, CCC(8,8) from all 2,048 sources in under 10 s on 2 cores).

use icn_engine::bench::Target;

/// One-source ILBM broadcast on CCC(16,16): builds the part of CCCBrd's plan table a source
/// at position 15 needs and runs the node algorithm in the CCC simulator of
/// `crate::verify` (no `Graph`); fails unless every node is informed within Theorem 1.
fn bcast_ccc16() -> Result<f64, String> {
    let (h, k) = (16usize, 16usize);
    let brd = crate::ilbm::ccc::CccBrd::for_positions(h, k, [k - 1]);
    let o = crate::verify::ccc_fast(&brd, h, k, (0, k - 1), false);
    let t = o.time().ok_or("CCC(16,16): some node never informed")?;
    let bound = crate::bounds::theorem1(h, k as u32);
    if t > bound {
        return Err(format!("CCC(16,16): {t} steps > Theorem 1 bound {bound}"));
    }
    Ok(o.first_receipt.len() as f64)
}

/// All-sources verification of CCCBrd on CCC(8,8): every source's schedule validated, its
/// time equal to the plan table's prediction and within Theorem 1.
fn bcast_ccc8_all() -> Result<f64, String> {
    let g = icn_topo::build::ccc(8, 8).map_err(|e| e.to_string())?;
    let brd = crate::ilbm::ccc::CccBrd::new(8, 8);
    let all = crate::verify::ccc_all_sources(&g, &brd)?;
    let worst = all.iter().map(|r| r.time).max().unwrap_or(0);
    let bound = crate::bounds::theorem1(8, 8);
    if worst > bound {
        return Err(format!(
            "CCC(8,8): worst {worst} steps > Theorem 1 bound {bound}"
        ));
    }
    Ok((all.len() * g.len()) as f64)
}

/// This crate's targets, in the order `icnlab bench` lists them.
pub fn targets() -> Vec<Target> {
    vec![
        // bcast (issue 6): targets "CCC(16,16) one source < 1 s" ⇔ ≥ 1.05 M nodes/s;
        // "CCC(8,8) all 2,048 sources < 10 s on 2 cores" ⇔ ≥ 0.42 M node-broadcasts/s (wall).
        Target {
            name: "bcast-ccc16",
            workload: "CCCBrd on CCC(16,16), 1,048,576 nodes, from (0,15): plan table for the source position + CCC simulator",
            unit: "nodes",
            run: bcast_ccc16,
        },
        Target {
            name: "bcast-ccc8-all",
            workload: "CCCBrd on CCC(8,8) from all 2,048 sources, each schedule validated (rayon, all cores)",
            unit: "node-broadcasts",
            run: bcast_ccc8_all,
        },
    ]
}
