//! Every `experiments/nic-*.toml` parses (full and `--quick`), every sweep point is a valid
//! config, and the quick runs of the cheap ones produce the tables their plots draw from.

use icn_engine::model::NoProgress;
use icn_engine::{ExperimentFile, Model};
use icn_nicmodel::{Benchmark, Config, Nic};
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("nic-") && n.ends_with(".toml"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn all_nic_experiments_parse_and_validate() {
    let files = files();
    assert!(files.len() >= 6, "{files:?}");
    for f in files {
        for quick in [false, true] {
            let exp = ExperimentFile::load(&f, quick).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(exp.model, "nic");
            for p in exp.points() {
                let cfg: Config = exp.typed(&p.body).unwrap_or_else(|e| panic!("{e}"));
                Nic::validate(&cfg).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            }
        }
    }
}

#[test]
fn quick_curve_experiments_produce_the_plotted_tables() {
    for f in files() {
        let exp = ExperimentFile::load(&f, true).unwrap();
        for p in exp.points().into_iter().take(1) {
            let mut cfg: Config = exp.typed(&p.body).unwrap();
            if matches!(
                cfg.benchmark,
                Benchmark::Both | Benchmark::Pingpong | Benchmark::Window
            ) {
                cfg.sizes.truncate(3);
                let m = Nic::run(&cfg, exp.seed, &NoProgress).unwrap();
                for plot in &exp.plots {
                    if let Some(t) = &plot.table {
                        assert!(m.table(t).is_some(), "{}: no table {t}", f.display());
                    }
                }
            }
        }
    }
}
