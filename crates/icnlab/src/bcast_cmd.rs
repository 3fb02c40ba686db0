//! `icnlab bcast`: run broadcast models on a graph and report times, bounds and costs.
//!
//! ```text
//! icnlab bcast --graph ccc:4,3 --model ilbm --source all
//! icnlab bcast --graph hypercube:6 --model all --out out/q6
//! icnlab bcast --graph file:edges.txt --model clbm,aulbm,optimal
//! ```
//!
//! Prints one table row per model (worst/mean time over the sources, Theorem 1 bound for CCC,
//! diameter, optimum where decided, lower bound, messages, redundant receptions, storage).
//! `--out DIR` writes `report.json`, `per_source.csv` and `graph.svg` (the graph coloured by
//! first-receipt step for one source; CCC drawn as cycles on a cube).
//!
//! [`reproduce`] writes the claims table and figure of the CCC paper for a range of (h,k).

mod draw;

use anyhow::{Context, anyhow};
use icn_bcast::claims::{ClaimLimits, ClaimRow, check_ccc, markdown};
use icn_bcast::compare;
use icn_bcast::limits;
use icn_bcast::schemes::{RunOptions, Scheme, run_scheme};
use icn_bcast::sim::Tiebreak;
use icn_bcast::tables::{GraphComparison, SummaryRow, claims_csv, to_csv};
use icn_topo::parse_graph_spec;
use std::fmt::Write as _;
use std::path::Path;

#[derive(clap::Args, Debug, Clone)]
pub struct BcastArgs {
    /// Graph: ccc:H,K | hypercube:D | mesh:WxH | torus:WxH | ring:N | path:N | file:PATH
    #[arg(long, default_value = "ccc:4,3")]
    pub graph: String,
    /// Models, comma-separated: clbm, naulbm, aulbm, ilbm, optimal, or all
    #[arg(long, default_value = "ilbm")]
    pub model: String,
    /// Source node name (e.g. "(0,2)") or all
    #[arg(long, default_value = "all")]
    pub source: String,
    /// Source whose first-receipt steps are drawn (default: the first source run)
    #[arg(long)]
    pub draw_source: Option<String>,
    /// Seed of tie-breaks and searches
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Keep the lowest-index sender of simultaneous receptions instead of a seeded random one
    #[arg(long)]
    pub lowest_sender: bool,
    /// Largest graph for which the exact optimum is searched (0 ..= 5000)
    #[arg(long, default_value_t = 100, value_parser = in_range(limits::MAX_OPTIMUM_NODES as u64))]
    pub optimum_max_nodes: u64,
    /// SAT conflict budget per solver call (the answer is "unknown" when it runs out; 1 ..= 10^8)
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..=limits::MAX_CONFLICTS))]
    pub conflicts: u64,
    /// Moves of the universal-list designer (0 ..= 10^6)
    #[arg(long, default_value_t = 200, value_parser = in_range(limits::MAX_DESIGN_MOVES.into()))]
    pub design_moves: u64,
    /// Directory for report.json, per_source.csv and graph.svg
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

/// A parser of counts `0..=max` (clap's ranged parser, one line per size flag).
fn in_range(max: u64) -> clap::builder::RangedU64ValueParser {
    clap::value_parser!(u64).range(0..=max)
}

/// Bad command-line input: `icnlab` exits with code 2 and this one-line message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

fn usage(message: String) -> anyhow::Error {
    anyhow::Error::new(Usage(message))
}

/// [`run`] for `main`: bad input becomes [`ExecError::Usage`] (exit code 2), anything else
/// [`ExecError::Failed`] (exit code 1).
pub fn run_cli(args: &BcastArgs) -> Result<(), crate::exec::ExecError> {
    run(args).map_err(|e| match e.downcast_ref::<Usage>() {
        Some(u) => crate::exec::ExecError::Usage(u.0.clone()),
        None => crate::exec::ExecError::Failed(format!("{e:#}")),
    })
}

fn parse_models(s: &str) -> anyhow::Result<Vec<Scheme>> {
    if s == "all" {
        return Ok(Scheme::ALL.to_vec());
    }
    s.split(',')
        .map(|m| {
            Scheme::parse(m.trim()).ok_or_else(|| {
                usage(format!(
                    "--model: unknown model `{m}` (clbm, naulbm, aulbm, ilbm, optimal, all)"
                ))
            })
        })
        .collect()
}

fn show<T: ToString>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// What can be checked from the text of `--graph` before the graph is built (a
/// `hypercube:22` took 5.7 GB before an unknown source name was reported): the source names,
/// then the graph's build against `available` bytes. File graphs are checked once read.
fn check_before_building(args: &BcastArgs, available: u64) -> anyhow::Result<()> {
    let Some(kind) = icn_topo::spec_kind(&args.graph) else {
        return Ok(());
    };
    let names = [
        ("--source", Some(&args.source)),
        ("--draw-source", args.draw_source.as_ref()),
    ];
    for (flag, name) in names {
        let Some(name) = name.filter(|n| !(flag == "--source" && *n == "all")) else {
            continue;
        };
        let key: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        if kind.parse_node(&key).is_none()
            && kind
                .nodes()
                .is_some_and(|n| n > 0 && n <= icn_topo::build::MAX_NODES)
        {
            let e = icn_topo::TopoError::UnknownNode {
                name: name.clone(),
                example: kind.node_name(0),
            };
            return Err(usage(format!("{flag}: {e}")));
        }
    }
    if let Some(size) = icn_topo::graph_spec_size(&args.graph) {
        icn_engine::memory::check_fits(
            "--graph",
            &format!("building the graph of {} nodes", size.nodes),
            size.build_bytes(),
            available,
        )
        .map_err(|e| usage(format!("--graph: {}", e.message)))?;
    }
    Ok(())
}

/// Runs the `bcast` subcommand.
pub fn run(args: &BcastArgs) -> anyhow::Result<()> {
    let models = parse_models(&args.model)?;
    check_before_building(args, limits::available_memory())?;
    let g = parse_graph_spec(&args.graph).map_err(|e| usage(format!("--graph: {e}")))?;
    let sources: Vec<usize> = if args.source == "all" {
        (0..g.len()).collect()
    } else {
        vec![
            g.node(&args.source)
                .map_err(|e| usage(format!("--source: {e}")))?,
        ]
    };
    let draw_source = match &args.draw_source {
        Some(name) => g
            .node(name)
            .map_err(|e| usage(format!("--draw-source: {e}")))?,
        None => sources[0],
    };
    let opts = RunOptions {
        tiebreak: if args.lowest_sender {
            Tiebreak::LowestSender
        } else {
            Tiebreak::Random { seed: args.seed }
        },
        seed: args.seed,
        greedy_tries: RunOptions::default().greedy_tries,
        // Both in range by their parsers.
        design_moves: u32::try_from(args.design_moves).unwrap_or(u32::MAX),
        optimum_max_nodes: usize::try_from(args.optimum_max_nodes).unwrap_or(usize::MAX),
        optimum_conflicts: args.conflicts,
    };
    if models.contains(&Scheme::Ilbm) && g.kind() == icn_topo::Kind::File {
        return Err(usage(
            "--model ilbm: node algorithms exist for ccc, hypercube, ring, path, mesh and torus, not file graphs".into(),
        ));
    }
    // Refused before running: an all-source run on a long path used to take hours.
    limits::check(&g, &models, &sources, &opts, limits::available_memory())
        .map_err(|e| usage(format!("{}: {}", e.key.flag(), e.why)))?;
    let cmp = GraphComparison::run(&g, &models, &sources, &opts).map_err(|e| anyhow!("{e}"))?;
    println!("{}", table(&args.graph, &cmp));
    for r in &cmp.runs {
        for n in &r.notes {
            println!("note: {n}");
        }
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--out: cannot create {}", dir.display()))?;
        let report = cmp.report(&args.graph);
        write(dir, "report.json", &serde_json::to_string_pretty(&report)?)?;
        let per_source = to_csv(cmp.per_source(&g)).map_err(|e| anyhow!("{e}"))?;
        write(dir, "per_source.csv", &per_source)?;
        // Draw ILBM's outcome for the drawing source if it ran, else the first simulated model's.
        let drawable = cmp
            .runs
            .iter()
            .find(|r| r.scheme == Scheme::Ilbm)
            .or_else(|| cmp.runs.iter().find(|r| r.scheme != Scheme::Optimal))
            .map(|r| r.scheme);
        if let Some(m) = drawable {
            let one = run_scheme(&g, m, &[draw_source], &opts).map_err(|e| anyhow!("{e}"))?;
            if let Some(o) = one.sample {
                let title = format!(
                    "{} {} from {}: {} steps",
                    args.graph,
                    m.name(),
                    g.name(draw_source),
                    show(o.time())
                );
                write(
                    dir,
                    "graph.svg",
                    &draw::svg(&g, &o.first_receipt, draw_source, &title),
                )?;
            }
        }
        println!(
            "wrote {}/{{report.json, per_source.csv, graph.svg}}",
            dir.display()
        );
    }
    Ok(())
}

/// Each file through a temporary name and a rename: never seen truncated (issue 14).
fn write(dir: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    Ok(crate::outdir::write_atomic(
        &dir.join(name),
        text.as_bytes(),
    )?)
}

/// The text table: one line per model.
fn table(spec: &str, cmp: &GraphComparison) -> String {
    let mut s = format!(
        "graph {spec}: {} nodes, {} links, diameter {}\n",
        cmp.nodes, cmp.links, cmp.diameter
    );
    let _ = writeln!(
        s,
        "{:<8} {:>6} {:>7} {:>6} {:>5} {:>8} {:>6} {:>9} {:>10} {:>8}",
        "model",
        "worst",
        "mean",
        "bound",
        "diam",
        "optimum",
        "lower",
        "messages",
        "redundant",
        "storage"
    );
    for r in cmp.summary() {
        let SummaryRow {
            model,
            worst,
            mean,
            bound,
            diameter,
            optimum,
            lower,
            messages,
            redundant,
            storage,
        } = r;
        let _ = writeln!(
            s,
            "{:<8} {:>6} {:>7} {:>6} {:>5} {:>8} {:>6} {:>9.1} {:>10.1} {:>8}",
            model,
            show(worst),
            mean.map_or("-".into(), |m| format!("{m:.2}")),
            show(bound),
            diameter,
            show(optimum),
            show(lower),
            messages,
            redundant,
            show(storage),
        );
    }
    s
}

/// `icnlab reproduce bcast`: the CCC claims table (Markdown, CSV, JSON) and a figure of
/// Theorem 1's bound, CCCBrd's worst time and the optimum over the (h,k) range, in `dir`.
/// `quick` limits the range to k ≤ 4 and the exact search to small graphs.
pub fn reproduce(dir: &Path, quick: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let (kmax, lim) = if quick {
        (
            4,
            ClaimLimits {
                all_sources_max_nodes: 64,
                k1_max_nodes: 128,
                conflicts: 50_000,
            },
        )
    } else {
        (
            8,
            ClaimLimits {
                all_sources_max_nodes: 600,
                k1_max_nodes: 3100,
                conflicts: 300_000,
            },
        )
    };
    let mut rows: Vec<ClaimRow> = Vec::new();
    for k in 2..=kmax {
        for h in k as usize..=k as usize + 4 {
            rows.push(check_ccc(h, k, &lim).map_err(|e| anyhow!("{e}"))?);
        }
    }
    write(dir, "claims.md", &markdown(&rows))?;
    write(dir, "claims.json", &serde_json::to_string_pretty(&rows)?)?;
    let csv = claims_csv(&rows).map_err(|e| anyhow!("{e}"))?;
    write(dir, "claims.csv", &csv)?;
    write(dir, "claims.svg", &claims_figure(&rows)?)?;
    println!("{}", markdown(&rows));
    println!("wrote {}/claims.{{md,csv,json,svg}}", dir.display());
    // The comparison of the models, reusing the optima the claims check decided. Quick mode
    // stops at k = 3 (list models from every source are the slow part).
    let kcmp = if quick { 3 } else { kmax };
    let sizes: Vec<(usize, u32, Option<icn_bcast::claims::Known>)> = rows
        .iter()
        .filter(|r| r.k <= kcmp)
        .map(|r| (r.h, r.k, Some(r.optimum_worst)))
        .collect();
    let cmp = compare::compare_all(&sizes, &RunOptions::default()).map_err(|e| anyhow!("{e}"))?;
    write(dir, "comparison.md", &compare::markdown(&cmp))?;
    let csv = compare::csv(&cmp).map_err(|e| anyhow!("{e}"))?;
    write(dir, "comparison.csv", &csv)?;
    println!("{}", compare::markdown(&cmp));
    println!("wrote {}/comparison.{{md,csv}}", dir.display());
    Ok(())
}

/// One line of the claims figure: (size index, steps).
type Points = Vec<(usize, u32)>;

/// Theorem 1 bound, CCCBrd worst time and optimum (or its lower bound) per CCC size; and the
/// same for the sharper claim from (c,k−1).
fn claims_figure(rows: &[ClaimRow]) -> anyhow::Result<String> {
    use plotters::prelude::*;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 700)).into_drawing_area();
        root.fill(&WHITE)?;
        let panels = root.split_evenly((2, 1));
        let ymax = rows
            .iter()
            .map(|r| r.theorem1.max(r.cccbrd_worst))
            .max()
            .unwrap_or(1)
            + 2;
        let labels: Vec<String> = rows.iter().map(|r| format!("{},{}", r.h, r.k)).collect();
        let series: [(&str, Vec<Points>); 2] = [
            (
                "any source: Theorem 1 (black), CCCBrd worst (blue), optimum or lower bound (red)",
                vec![
                    rows.iter()
                        .enumerate()
                        .map(|(i, r)| (i, r.theorem1))
                        .collect(),
                    rows.iter()
                        .enumerate()
                        .map(|(i, r)| (i, r.cccbrd_worst))
                        .collect(),
                    rows.iter()
                        .enumerate()
                        .map(|(i, r)| (i, r.optimum_worst.lower()))
                        .collect(),
                ],
            ),
            (
                "source (c,k-1): sharp claim (black), CCCBrd (blue), optimum or lower bound (red)",
                vec![
                    rows.iter().enumerate().map(|(i, r)| (i, r.sharp)).collect(),
                    rows.iter()
                        .enumerate()
                        .map(|(i, r)| (i, r.cccbrd_k1))
                        .collect(),
                    rows.iter()
                        .enumerate()
                        .map(|(i, r)| (i, r.optimum_k1.lower()))
                        .collect(),
                ],
            ),
        ];
        for (panel, (title, lines)) in panels.iter().zip(series) {
            let mut chart = ChartBuilder::on(panel)
                .caption(title, ("sans-serif", 15))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(40)
                .build_cartesian_2d(0usize..rows.len().saturating_sub(1).max(1), 0u32..ymax)?;
            chart
                .configure_mesh()
                .x_labels(rows.len())
                .x_label_formatter(&|i| labels.get(*i).cloned().unwrap_or_default())
                .x_desc("CCC(h,k)")
                .y_desc("steps")
                .draw()?;
            for (pts, colour) in lines.into_iter().zip([BLACK, BLUE, RED]) {
                chart.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?;
                chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(graph: &str, model: &str) -> BcastArgs {
        BcastArgs {
            graph: graph.into(),
            model: model.into(),
            source: "all".into(),
            draw_source: None,
            seed: 1,
            lowest_sender: false,
            optimum_max_nodes: 100,
            conflicts: 200_000,
            design_moves: 20,
            out: None,
        }
    }

    #[test]
    fn writes_report_csv_and_svg() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = args("ccc:3,2", "all");
        a.out = Some(dir.path().to_path_buf());
        a.draw_source = Some("(1,2)".into());
        run(&a).unwrap();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
                .unwrap();
        assert_eq!(report["nodes"], 12);
        assert_eq!(report["theorem1_bound"], 5);
        assert_eq!(report["optimum_worst"], 5);
        assert_eq!(report["models"].as_array().unwrap().len(), 5);
        let csv = std::fs::read_to_string(dir.path().join("per_source.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 5 * 12);
        let svg = std::fs::read_to_string(dir.path().join("graph.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("(1,2) step 0"));
        assert_eq!(svg.matches("<circle").count(), 12);
    }

    #[test]
    fn bad_input_is_a_one_line_error() {
        for (g, m, s) in [
            ("ccc:2,3", "ilbm", "all"),
            ("cube:3", "ilbm", "all"),
            ("ring:5", "magic", "all"),
            ("ring:5", "ilbm", "99"),
        ] {
            let mut a = args(g, m);
            a.source = s.into();
            let e = run(&a).unwrap_err().to_string();
            assert!(!e.contains('\n') && e.starts_with("--"), "{e}");
        }
    }

    #[test]
    fn file_graphs_run_list_models_but_not_ilbm() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("edges.txt");
        std::fs::write(&f, "a b\nb c\nc d\nd a\na c\n").unwrap();
        let spec = format!("file:{}", f.display());
        run(&args(&spec, "clbm,aulbm,optimal")).unwrap();
        assert!(
            run(&args(&spec, "ilbm"))
                .unwrap_err()
                .to_string()
                .contains("file graphs")
        );
    }

    #[test]
    fn quick_reproduce_writes_the_claims() {
        let dir = tempfile::tempdir().unwrap();
        reproduce(dir.path(), true).unwrap();
        let md = std::fs::read_to_string(dir.path().join("claims.md")).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("claims.csv")).unwrap();
        let cols = csv.lines().next().unwrap().split(',').count();
        assert!(csv.lines().all(|l| l.split(',').count() == cols));
        // 3 header-ish lines aside, one row per (h,k) with 2 ≤ k ≤ 4, k ≤ h ≤ k+4.
        assert_eq!(md.lines().count(), 2 + 15);
        assert!(md.contains("| 3 | 2 | 12 |"));
        assert!(
            std::fs::read_to_string(dir.path().join("claims.svg"))
                .unwrap()
                .contains("<svg")
        );
        // The comparison: one row per size with k ≤ 3, optima taken from the claims.
        let cmp = std::fs::read_to_string(dir.path().join("comparison.md")).unwrap();
        assert_eq!(cmp.lines().count(), 2 + 10);
        assert!(cmp.contains("| 3 | 2 | 12 | 5 | "), "{cmp}");
        let csv = std::fs::read_to_string(dir.path().join("comparison.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 10);
        let cols = csv.lines().next().unwrap().split(',').count();
        assert!(csv.lines().all(|l| l.split(',').count() == cols));
    }
}
