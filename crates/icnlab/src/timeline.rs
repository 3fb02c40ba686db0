//! Writing a cluster run's timeline ([`icn_cluster::timeline`]): Chrome trace-event JSON
//! (Perfetto, chrome://tracing), OTF2 (Vampir, `otf2-print`: [`write_otf2`]) and the SVG
//! picture of the results page.
//!
//! Chrome JSON: one process "ranks" with a thread per rank whose complete events (`ph: X`) are
//! its calls (category `call`, named by the TI action: `send`, `waitall`, `allreduce`,
//! `compute` …) and, nested in them, the time it waited (category `wait`); one process
//! "fabric" with a counter (`ph: C`) per channel giving its utilisation (0 ..= 1) over each
//! sampling interval. Times are µs. `otherData.notes` says when the event cap was reached.

use crate::exec::ExecError;
use icn_cluster::model::{Cluster, ClusterPoint};
use icn_cluster::timeline::{MAX_CAP, SpanKind, Timeline};
use icn_engine::{ExperimentFile, Model};
use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Which configuration of a file a timeline is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Of {
    /// The base configuration (what `icnlab run` runs).
    Base,
    /// The first point of the file's sweep (what `icnlab reproduce` runs first).
    FirstPoint,
}

/// The timeline of the file's configuration `of` (replication seed 0), at most `cap` spans.
pub fn record(file: &ExperimentFile, of: Of, cap: usize) -> Result<Timeline, ExecError> {
    let point = traced_point(file, of, cap)?;
    icn_cluster::model::timeline(&point, cap)
        .map_err(|e| ExecError::Failed(format!("{}: timeline: {e}", file.path.display())))
}

/// The prepared configuration `of`, checked to be a trace replay, and `cap` checked.
fn traced_point(file: &ExperimentFile, of: Of, cap: usize) -> Result<ClusterPoint, ExecError> {
    if !(1..=MAX_CAP).contains(&cap) {
        return Err(ExecError::Usage(format!(
            "--timeline-events: {cap} is not in 1 ..= {MAX_CAP}"
        )));
    }
    let why = "--timeline records trace replays: model = \"cluster\" with workload.kind = \"ti\" or \"dumpi\"";
    if file.model != "cluster" {
        return Err(ExecError::Usage(format!(
            "{}: {why}, not model = \"{}\"",
            file.path.display(),
            file.model
        )));
    }
    let point = prepare(file, of)?;
    if point.ti.is_none() {
        return Err(ExecError::Usage(format!(
            "{}: {why}, not workload.kind = \"{}\"",
            file.path.display(),
            format!("{:?}", point.cfg.workload.kind).to_lowercase()
        )));
    }
    Ok(point)
}

/// `run --timeline PATH --timeline-events CAP` checked before the run: the file replays a
/// trace, the cap is in range, the target can be written.
pub fn check_request(file: &ExperimentFile, path: &Path, cap: usize) -> Result<(), ExecError> {
    check_target(path)?;
    traced_point(file, Of::Base, cap).map(drop)
}

fn prepare(file: &ExperimentFile, of: Of) -> Result<ClusterPoint, ExecError> {
    let mut base = file.clone();
    if of == Of::Base {
        base.sweep.clear();
    }
    let point = base
        .points()
        .into_iter()
        .next()
        .ok_or_else(|| ExecError::Failed("the experiment has no point".into()))?;
    let bad = |e: String| ExecError::Usage(format!("{}: {e}", file.path.display()));
    let cfg = file.typed(&point.body).map_err(|e| bad(format!("{e:#}")))?;
    Cluster::prepare(&cfg, &icn_engine::Context::for_file(&file.path))
        .map_err(|e| bad(e.to_string()))
}

/// Whether the file's configuration `of` replays a trace (the workloads with a timeline).
pub fn has_timeline(file: &ExperimentFile, of: Of) -> bool {
    file.model == "cluster" && prepare(file, of).is_ok_and(|p| p.ti.is_some())
}

/// Whether `path` asks for Chrome JSON (else an OTF2 archive).
pub fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}

/// An OTF2 archive is written into a new folder (never over an
/// existing one), and its parent folder must exist.
fn check_target(path: &Path) -> Result<(), ExecError> {
    if !is_json(path) && path.exists() {
        return Err(ExecError::Usage(format!(
            "--timeline {}: exists; the OTF2 archive goes into a new folder (or give a .json path \
             for Chrome trace-event JSON)",
            path.display()
        )));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if parent.is_some_and(|p| !p.is_dir()) {
        return Err(ExecError::Usage(format!(
            "--timeline {}: its folder does not exist",
            path.display()
        )));
    }
    Ok(())
}

fn us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// Writes `t` as Chrome trace-event JSON to `path`.
pub fn write_chrome(t: &Timeline, path: &Path) -> anyhow::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = BufWriter::new(f);
    write_chrome_to(t, &mut w)?;
    w.flush()?;
    Ok(())
}

pub fn write_chrome_to(t: &Timeline, w: &mut impl Write) -> std::io::Result<()> {
    let notes = serde_json::to_string(&t.notes()).expect("strings");
    writeln!(
        w,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"icnlab\",\"notes\":{notes}}},\"traceEvents\":["
    )?;
    let mut first = true;
    let mut sep = |w: &mut dyn Write| -> std::io::Result<()> {
        if !std::mem::take(&mut first) {
            w.write_all(b",\n")?;
        }
        Ok(())
    };
    sep(w)?;
    write!(
        w,
        "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{{\"name\":\"ranks\"}}}}"
    )?;
    for r in 0..t.ranks {
        sep(w)?;
        write!(
            w,
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{r},\"args\":{{\"name\":\"rank {r}\"}}}}"
        )?;
    }
    for s in &t.spans {
        sep(w)?;
        let cat = match s.kind {
            SpanKind::Call => "call",
            SpanKind::Wait => "wait",
        };
        write!(
            w,
            "{{\"name\":\"{}\",\"cat\":\"{cat}\",\"ph\":\"X\",\"ts\":{:.6},\"dur\":{:.6},\"pid\":0,\"tid\":{}}}",
            s.name,
            us(s.start),
            us(s.end - s.start),
            s.rank
        )?;
    }
    if !t.channels.is_empty() {
        sep(w)?;
        write!(
            w,
            "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{{\"name\":\"fabric\"}}}}"
        )?;
    }
    for (a, _, u) in t.utilisation() {
        for (c, v) in t.channels.iter().zip(u) {
            sep(w)?;
            write!(
                w,
                "{{\"name\":\"router {} port {}\",\"ph\":\"C\",\"ts\":{:.6},\"pid\":1,\"tid\":0,\"args\":{{\"utilisation\":{v:.6}}}}}",
                c.router,
                c.port,
                us(a)
            )?;
        }
    }
    writeln!(w, "\n]}}")
}

/// The OTF2 writer's C source: built with `cc` against Debian's OTF2 library when asked.
const OTF2_WRITER_C: &str = include_str!("../c/timeline2otf2.c");

/// Writes `t` as an OTF2 archive in the folder `path` (`path/traces.otf2` is its anchor
/// file): each rank a location whose calls are regions entered and left, the waits regions
/// inside them; each tracked channel a metric location with its utilisation. The writer is
/// Debian's OTF2 library through a small C program (`crates/icnlab/c/timeline2otf2.c`)
/// built here with `cc` in a private temporary folder.
pub fn write_otf2(t: &Timeline, path: &Path) -> anyhow::Result<()> {
    use anyhow::{Context, bail};
    if path.exists() {
        bail!("exists: give a new folder for the OTF2 archive");
    }
    let dir = tempfile::tempdir().context("a private folder for the OTF2 writer")?;
    let src = dir.path().join("timeline2otf2.c");
    let exe = dir.path().join("timeline2otf2");
    std::fs::write(&src, OTF2_WRITER_C)?;
    let cc = std::process::Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lotf2")
        .output()
        .context("cannot run `cc` to build the OTF2 writer (install a C compiler and Debian's libotf2-trace-dev)")?;
    if !cc.status.success() {
        bail!(
            "the OTF2 writer does not build (it needs Debian's libotf2-trace-dev): {}",
            String::from_utf8_lossy(&cc.stderr).trim()
        );
    }
    let mut child = std::process::Command::new(&exe)
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("cannot start the OTF2 writer")?;
    {
        let stdin = child.stdin.take().expect("piped");
        let mut w = BufWriter::new(stdin);
        otf2_input(t, &mut w)?;
        w.flush()?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "the OTF2 writer failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The OTF2 writer's input (its format is described in `timeline2otf2.c`): per rank its
/// spans as properly nested enter/leave events in time order.
fn otf2_input(t: &Timeline, w: &mut impl Write) -> std::io::Result<()> {
    let mut regions: Vec<&str> = Vec::new();
    let mut id = std::collections::HashMap::new();
    for s in &t.spans {
        id.entry(s.name).or_insert_with(|| {
            regions.push(s.name);
            regions.len() - 1
        });
    }
    writeln!(
        w,
        "T {} {} {} {}",
        t.ranks,
        t.channels.len(),
        regions.len(),
        t.end
    )?;
    for r in &regions {
        writeln!(w, "N {r}")?;
    }
    for c in &t.channels {
        writeln!(w, "C {} {}", c.router, c.port)?;
    }
    let mut by_rank: Vec<Vec<&icn_cluster::timeline::Span>> = vec![Vec::new(); t.ranks];
    for s in &t.spans {
        by_rank[s.rank as usize].push(s);
    }
    for (r, spans) in by_rank.iter_mut().enumerate() {
        // By start; at the same start calls (which never overlap: the shorter, an instant
        // call, first) before the waits inside them.
        spans.sort_by_key(|s| (s.start, s.kind == SpanKind::Wait, s.end));
        let mut open: Vec<(u64, usize)> = Vec::new();
        for s in spans.iter() {
            while let Some(&(end, region)) = open.last() {
                if end > s.start {
                    break;
                }
                writeln!(w, "L {r} {end} {region}")?;
                open.pop();
            }
            // A span is inside the open one (waits inside calls): clamped to it if not.
            let end = open.last().map_or(s.end, |&(e, _)| s.end.min(e));
            let region = id[s.name];
            writeln!(w, "E {r} {} {region}", s.start)?;
            open.push((end, region));
        }
        while let Some((end, region)) = open.pop() {
            writeln!(w, "L {r} {end} {region}")?;
        }
    }
    let util = t.utilisation();
    for c in 0..t.channels.len() {
        for (a, _, u) in &util {
            writeln!(w, "M {c} {a} {}", u[c])?;
        }
    }
    Ok(())
}

/// What a span is drawn as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Category {
    Compute,
    PointToPoint,
    Collective,
    Other,
    Wait,
}

const CATEGORIES: [(Category, &str, &str); 5] = [
    (Category::Compute, "#9e9e9e", "compute"),
    (Category::PointToPoint, "#1f77b4", "point-to-point"),
    (Category::Collective, "#ff7f0e", "collective"),
    (Category::Other, "#2ca02c", "other call"),
    (Category::Wait, "#d62728", "waiting"),
];

fn category(kind: SpanKind, name: &str) -> Category {
    match (kind, name) {
        (SpanKind::Wait, _) => Category::Wait,
        (_, "compute" | "sleep") => Category::Compute,
        (_, "send" | "isend" | "recv" | "irecv" | "sendRecv" | "wait" | "waitall" | "test") => {
            Category::PointToPoint
        }
        (_, "init" | "finalize" | "comm" | "location" | "end of trace") => Category::Other,
        _ => Category::Collective,
    }
}

/// Most ranks drawn as lanes.
const MAX_LANES: usize = 64;

/// The results page's picture: a lane per rank coloured by what it did in each pixel column
/// (the category with the most time there; waiting when it waited at least half of it), and
/// below it the mean and busiest channel utilisation over time.
pub fn svg(t: &Timeline, title: &str) -> String {
    const W: usize = 900;
    const LEFT: usize = 70;
    const LANE: usize = 12;
    let lanes = t.ranks.min(MAX_LANES);
    let end = t.end.max(1) as f64;
    let plot_top = 40 + lanes * LANE + 30;
    let height = plot_top + 110 + 40;
    let mut h = String::new();
    let _ = write!(
        h,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"{LEFT}\" y=\"16\" font-size=\"13\">{}</text>",
        LEFT + W + 70,
        escape(title)
    );
    // Legend.
    for (i, (_, colour, label)) in CATEGORIES.iter().enumerate() {
        let x = LEFT + i * 130;
        let _ = write!(
            h,
            "<rect x=\"{x}\" y=\"24\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{}\" y=\"33\">{label}</text>",
            x + 14
        );
    }
    // Per rank and column: time per category.
    let col = |ps: u64| ((ps as f64 / end) * W as f64).min(W as f64);
    let mut time = vec![[0.0f64; 5]; lanes * W];
    for s in &t.spans {
        let r = s.rank as usize;
        if r >= lanes || s.end <= s.start {
            continue;
        }
        let c = category(s.kind, s.name) as usize;
        let (a, b) = (col(s.start), col(s.end));
        let mut x = a.floor() as usize;
        while (x as f64) < b && x < W {
            let lo = a.max(x as f64);
            let hi = b.min(x as f64 + 1.0);
            time[r * W + x][c] += hi - lo;
            x += 1;
        }
    }
    for r in 0..lanes {
        let y = 40 + r * LANE;
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">rank {r}</text>",
            LEFT - 4,
            y + LANE - 3
        );
        let mut run: Option<(usize, usize)> = None; // (start column, category)
        let colour_at = |x: usize| -> Option<usize> {
            let v = &time[r * W + x];
            let calls: f64 = v[..4].iter().sum();
            if calls <= 0.0 {
                return None;
            }
            if v[4] * 2.0 >= calls {
                return Some(4);
            }
            (0..4).max_by(|&i, &j| v[i].total_cmp(&v[j]))
        };
        for x in 0..=W {
            let c = if x < W { colour_at(x) } else { None };
            match (run, c) {
                (Some((_, rc)), Some(c)) if rc == c => {}
                _ => {
                    if let Some((start, rc)) = run.take() {
                        let _ = write!(
                            h,
                            "<rect x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                            LEFT + start,
                            x - start,
                            LANE - 2,
                            CATEGORIES[rc].1
                        );
                    }
                    run = c.map(|c| (x, c));
                }
            }
        }
    }
    if t.ranks > lanes {
        let _ = write!(
            h,
            "<text x=\"{LEFT}\" y=\"{}\">… and {} more ranks (in timeline.json)</text>",
            40 + lanes * LANE + 12,
            t.ranks - lanes
        );
    }
    // Utilisation: mean and max over the tracked channels.
    let util = t.utilisation();
    let top = plot_top as f64;
    let y_of = |u: f64| top + 100.0 * (1.0 - u);
    if t.channels.is_empty() {
        let _ = write!(
            h,
            "<text x=\"{LEFT}\" y=\"{}\">channel utilisation: this fabric reports no channel loads</text>",
            plot_top - 6
        );
    } else {
        let _ = write!(
            h,
            "<text x=\"{LEFT}\" y=\"{}\">channel utilisation (mean: black, busiest channel: red), {} channels</text>\
             <rect x=\"{LEFT}\" y=\"{top}\" width=\"{W}\" height=\"100\" fill=\"none\" stroke=\"#ccc\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">1</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>",
            plot_top - 6,
            t.channels.len(),
            LEFT - 4,
            top + 8.0,
            LEFT - 4,
            top + 100.0
        );
        for (pick, colour) in [(0, "black"), (1, "#d62728")] {
            let mut pts = String::new();
            for (a, b, u) in &util {
                let v = if u.is_empty() {
                    0.0
                } else if pick == 0 {
                    u.iter().sum::<f64>() / u.len() as f64
                } else {
                    u.iter().copied().fold(0.0, f64::max)
                };
                let _ = write!(
                    pts,
                    "{:.1},{:.1} {:.1},{:.1} ",
                    LEFT as f64 + col(*a),
                    y_of(v),
                    LEFT as f64 + col(*b),
                    y_of(v)
                );
            }
            let _ = write!(
                h,
                "<polyline points=\"{pts}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.2\"/>"
            );
        }
    }
    // Time axis.
    let axis = top + 100.0 + 16.0;
    for i in 0..=4 {
        let x = LEFT as f64 + W as f64 * i as f64 / 4.0;
        let _ = write!(
            h,
            "<text x=\"{x:.1}\" y=\"{axis:.1}\" text-anchor=\"middle\">{}</text>",
            time_label(t.end as f64 * i as f64 / 4.0)
        );
    }
    for (i, n) in t.notes().iter().enumerate() {
        let _ = write!(
            h,
            "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#d62728\">{}</text>",
            axis + 14.0 * (i + 1) as f64,
            escape(n)
        );
    }
    h.push_str("</svg>\n");
    h
}

/// `ps` in the unit that keeps it short: 12.5 µs, 3.2 ms, 75.8 s.
fn time_label(ps: f64) -> String {
    match ps {
        p if p >= 1e12 => format!("{:.3} s", p / 1e12),
        p if p >= 1e9 => format!("{:.3} ms", p / 1e9),
        p => format!("{:.3} µs", p / 1e6),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_cluster::timeline::ChannelLoad;

    fn sample() -> Timeline {
        let mut t = Timeline::new(100, 2);
        t.span(0, SpanKind::Call, "init", 0, 0);
        t.span(0, SpanKind::Call, "compute", 0, 1_000_000);
        t.span(0, SpanKind::Call, "send", 1_000_000, 3_000_000);
        t.span(0, SpanKind::Wait, "wait", 1_500_000, 3_000_000);
        t.span(1, SpanKind::Call, "allreduce", 0, 3_000_000);
        let loads = |b| {
            vec![ChannelLoad {
                router: 0,
                port: 1,
                busy: b,
            }]
        };
        t.sample(0, || loads(0), 1000);
        t.sample(1_000_000, || loads(500), 1000);
        t.finish(3_000_000, loads(1500), 1000);
        t
    }

    /// The JSON is trace-event format as chrome://tracing and Perfetto read it: an object
    /// with `traceEvents`, every event with `ph`, `pid`, `tid`; complete events with `ts` and
    /// a non-negative `dur`; counters with numeric args; waits inside their call.
    #[test]
    fn chrome_json_is_trace_event_format() {
        let t = sample();
        let mut buf = Vec::new();
        write_chrome_to(&t, &mut buf).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        let mut calls = 0;
        for e in events {
            let ph = e["ph"].as_str().unwrap();
            assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
            match ph {
                "M" => assert!(e["args"]["name"].is_string()),
                "X" => {
                    calls += 1;
                    assert!(e["ts"].as_f64().unwrap() >= 0.0);
                    assert!(e["dur"].as_f64().unwrap() >= 0.0);
                }
                "C" => {
                    let u = e["args"]["utilisation"].as_f64().unwrap();
                    assert!((0.0..=1.0).contains(&u), "{e}");
                }
                other => panic!("unexpected phase {other}"),
            }
        }
        assert_eq!(calls, 5);
        // The wait of rank 0: 1.5 µs from 1.5 µs.
        let wait = events.iter().find(|e| e["cat"] == "wait").unwrap();
        assert_eq!(
            (wait["ts"].as_f64(), wait["dur"].as_f64()),
            (Some(1.5), Some(1.5))
        );
        // 500 busy cycles of 1 ns in the first µs: 0.5; 1000 in the next 2 µs: 0.5.
        let u: Vec<f64> = events
            .iter()
            .filter(|e| e["ph"] == "C")
            .map(|e| e["args"]["utilisation"].as_f64().unwrap())
            .collect();
        assert_eq!(u, vec![0.5, 0.5]);
    }

    /// The OTF2 writer's input enters and leaves each rank's regions properly nested and in
    /// time order: the wait inside rank 0's send is entered after and left before it.
    #[test]
    fn otf2_input_nests_waits_inside_calls() {
        let mut buf = Vec::new();
        otf2_input(&sample(), &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let rank0: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(['E', 'L']) && l.split(' ').nth(1) == Some("0"))
            .collect();
        assert_eq!(
            rank0,
            [
                "E 0 0 0",
                "L 0 0 0",
                "E 0 0 1",
                "L 0 1000000 1",
                "E 0 1000000 2",
                "E 0 1500000 3",
                "L 0 3000000 3",
                "L 0 3000000 2"
            ]
        );
        assert!(
            text.starts_with(
                "T 2 1 5 3000000\nN init\nN compute\nN send\nN wait\nN allreduce\nC 0 1\n"
            ),
            "{text}"
        );
    }

    /// The picture has a lane per rank with the waiting colour where rank 0 waited.
    #[test]
    fn the_picture_draws_lanes_and_waits() {
        let s = svg(&sample(), "t");
        assert!(s.contains("rank 0") && s.contains("rank 1"));
        // Each colour once in the legend, then in the lanes.
        assert_eq!(
            s.matches("fill=\"#d62728\"/>").count(),
            2,
            "the wait of rank 0"
        );
        assert_eq!(
            s.matches("fill=\"#ff7f0e\"/>").count(),
            2,
            "the allreduce of rank 1"
        );
        assert_eq!(
            s.matches("fill=\"#9e9e9e\"/>").count(),
            2,
            "the compute of rank 0"
        );
    }
}
