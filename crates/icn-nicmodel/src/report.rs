//! Validation, ablation and sensitivity tables, and the paper's points for plots.

use icn_engine::Table;

/// The paper's numbers for `(profile, design)` as table `paper` (size_bytes, bandwidth_mbs,
/// latency_us; NaN where the paper gives nothing). Maxima without a stated size are placed
/// at 128 KB.
pub fn paper_table(profile: &str, design: &str) -> Table {
    let nan = f64::NAN;
    let rows: Vec<Vec<f64>> = match (profile, design) {
        ("setup-a", "bvia") => vec![vec![131072.0, 47.46, nan]],
        ("setup-a", "myvia") => vec![vec![131072.0, 76.2, nan]],
        ("setup-b", "myvia") => vec![
            vec![4.0, nan, 8.46],
            vec![4096.0, 250.0, nan],
            vec![32768.0, 250.0, nan],
        ],
        ("setup-b", "bvia") | ("setup-b", "gm") => vec![vec![32768.0, 250.0, nan]],
        ("fast-ethernet", "mvia") => vec![vec![4.0, nan, 22.0], vec![131072.0, 11.6, nan]],
        ("gigabit-ethernet", "mvia") => vec![vec![131072.0, 59.7, nan]],
        _ => vec![],
    };
    Table {
        name: "paper".into(),
        columns: vec![
            "size_bytes".into(),
            "bandwidth_mbs".into(),
            "latency_us".into(),
        ],
        rows,
        ci95: vec![],
    }
}
