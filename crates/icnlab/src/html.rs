//! `results/index.html`: one page a reader can act on. Per experiment, in this order: what it
//! asks, its verdict against the paper (the experiment file's `verdict`), whether its figure has
//! intervals, every figure inline, the paper's reference values, and its tables as HTML.
//!
//! Tables are read back from the CSVs the run wrote, so the page shows what the files hold.
//! Models keep only numbers in tables and name their coded values in notes (`check 3: …`); the
//! page shows the names ([`crate::report::code_names`]), so a validation check reads "B MyVIA
//! min one-way latency (µs)", not "0". Columns that are empty everywhere (the `_ci95` of a
//! single replication) are left out.
//!
//! A small script counts, after the page's `load` event, the figures that loaded and writes the
//! counts into `<body data-figures=… data-figures-loaded=…>`, so a headless browser's DOM dump
//! proves every figure was found and decoded (`tests/report_browser.rs`).

use crate::checks::{Judgement, Outcome, Score};
use crate::plot::Frame;
use crate::provenance::Provenance;
use crate::report::{CodeNames, RunReport, code_names, fmt_num};
use icn_engine::config::Reference;
use std::fmt::Write;
use std::path::Path;

/// What the index shows for one experiment.
pub struct Entry {
    pub name: String,
    pub title: String,
    pub description: String,
    pub files: Vec<String>,
    pub has_plot: bool,
    pub wall_time_s: f64,
    pub error: Option<String>,
    /// Replications per point in this run.
    pub replications: u32,
    /// The run's status line when some points did not end ok (drawn marked in the figure),
    /// and whether they include a failure (deadlock, drain limit, failed run) rather than only
    /// saturation ([`crate::experiment::status_line`]).
    pub warning: Option<(String, bool)>,
    /// What the figure shows against the paper (the experiment file's `verdict`).
    pub verdict: Option<String>,
    /// The paper's values (the experiment file's `[[reference]]` entries).
    pub references: Vec<Reference>,
}

/// Tables with at most this many rows are shown open; longer ones folded.
const OPEN_ROWS: usize = 30;
/// Rows shown of a long table (all of them are in its CSV).
const SHOWN_ROWS: usize = 200;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}\
    table{border-collapse:collapse;font-size:12px;margin:.3em 0}\
    td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.t,th{text-align:left}\
    section{border-top:2px solid #ddd;margin-top:2em}img.figure{max-width:100%;border:1px solid #eee;display:block;margin:.5em 0}\
    .err{color:#a00}tr.fail td,.refuted{color:#fff;background:#b00}tr.pass td.j{color:#070}tr.not_judged td.j{color:#777}\
    #scorecard{font-size:1.2em;padding:.5em 1em;border:3px solid #070}#scorecard.refuted{border-color:#b00}\
    .prov{color:#555;font-size:.9em}.saturated{color:#735}.verdict{background:#f3f7ff;border-left:4px solid #36c;padding:.4em .8em}\
    .ci{color:#555;font-style:italic}details{margin:.5em 0}h3{font-size:1em;margin:1em 0 .2em}";

/// Marks every `img.figure` loaded or not once the page has loaded, and counts them on `<body>`.
const LOAD_CHECK: &str = "<script>window.addEventListener('load',function(){\
    var f=document.querySelectorAll('img.figure'),ok=0;\
    f.forEach(function(i){var good=i.complete&&i.naturalWidth>0;\
    i.setAttribute('data-loaded',good?'yes':'no');if(good)ok++;});\
    document.body.setAttribute('data-figures',f.length);\
    document.body.setAttribute('data-figures-loaded',ok);});</script>";

/// Renders the index; `dir` is the results directory (each experiment's files in `dir/<name>`).
/// The page opens with the scorecard of every experiment's claim checks and the provenance
/// of the run.
pub fn index(
    dir: &Path,
    entries: &[Entry],
    quick: bool,
    provenance: Option<&Provenance>,
) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>icnlab results</title>\
         <style>{STYLE}</style></head><body>\
         <h1>icnlab results</h1><p>icnlab {} — {} run. Each figure is drawn from the CSV files \
         beside it; where it has error bars they are 95&nbsp;% confidence intervals over \
         independent replications, and each experiment says whether it has any. Black dashed \
         lines and triangles are the paper's values.</p>",
        env!("CARGO_PKG_VERSION"),
        if quick {
            "quick (<code>--quick</code>: fewer points and replications, shorter runs)"
        } else {
            "full"
        }
    );
    scorecard(&mut h, dir, entries);
    if let Some(p) = provenance {
        provenance_block(&mut h, p);
    }
    h.push_str("<ul>");
    for e in entries {
        let _ = write!(
            h,
            "<li><a href=\"#{0}\">{0}</a> — {1}</li>",
            esc(&e.name),
            esc(&e.title)
        );
    }
    h.push_str("</ul>");
    for e in entries {
        section(&mut h, &dir.join(&e.name), e);
    }
    h.push_str(LOAD_CHECK);
    h.push_str("</body></html>\n");
    h
}

fn section(h: &mut String, dir: &Path, e: &Entry) {
    let _ = write!(
        h,
        "<section id=\"{0}\"><h2>{0}: {1}</h2><p>{2}</p>",
        esc(&e.name),
        esc(&e.title),
        esc(&e.description)
    );
    let report = if e.error.is_none() {
        RunReport::read_json(&dir.join("report.json")).ok()
    } else {
        None
    };
    let outcomes = report.as_ref().map_or(&[][..], |r| r.checks.as_slice());
    if let Some(v) = &e.verdict {
        let _ = write!(
            h,
            "<p class=\"verdict\"><strong>Verdict:</strong> {}</p>",
            esc(&fill_verdict(v, outcomes))
        );
    }
    if let Some(err) = &e.error {
        let _ = write!(h, "<p class=\"err\">failed: {}</p></section>", esc(err));
        return;
    }
    checks_table(h, outcomes);
    if let Some(p) = report.as_ref().and_then(|r| r.provenance.as_ref()) {
        let _ = write!(
            h,
            "<p class=\"prov\">Ran in {:.2} s wall, {:.2} s CPU; load {:.2} → {:.2}.</p>",
            p.wall_time_s, p.cpu_time_s, p.load_start[0], p.load_end[0]
        );
    }
    let _ = write!(
        h,
        "<p class=\"ci\">{}</p>",
        intervals_line(dir, e.replications)
    );
    match &e.warning {
        Some((line, true)) => {
            let _ = write!(
                h,
                "<p class=\"err\">Flagged points: some replications deadlocked, hit the drain \
                 limit or failed; the figure draws those points hollow and data.csv gives each \
                 point's status. {}</p>",
                esc(line)
            );
        }
        Some((line, false)) => {
            let _ = write!(
                h,
                "<p class=\"saturated\">Saturated points: the offered load exceeds what the \
                 network accepts, so their accepted throughput is measured and their latency is \
                 unbounded (drawn as open markers; the value is a lower bound). {}</p>",
                esc(line)
            );
        }
        None => {}
    }
    for svg in figures(&e.files, e.has_plot) {
        let _ = write!(
            h,
            "<img class=\"figure\" src=\"{}/{}\" alt=\"{}: {}\">",
            esc(&e.name),
            esc(&svg),
            esc(&e.title),
            esc(&svg)
        );
    }
    references(h, &e.references);
    let notes: Vec<String> = report
        .as_ref()
        .and_then(|r| r.points.first())
        .map(|p| p.metrics.notes.clone())
        .unwrap_or_default();
    let codes = code_names(&notes);
    for csv in tables(&e.files, report.as_ref()) {
        if let Ok(frame) = Frame::read(&dir.join(&csv)) {
            table(h, &csv, &frame, &codes);
        }
    }
    let _ = write!(h, "<p>Files ({:.1} s): ", e.wall_time_s);
    for f in &e.files {
        let _ = write!(h, "<a href=\"{0}/{1}\">{1}</a> ", esc(&e.name), esc(f));
    }
    h.push_str("</p></section>");
}

/// The claims of every experiment counted, first thing on the page: red when one is refuted.
fn scorecard(h: &mut String, dir: &Path, entries: &[Entry]) {
    let mut score = Score::default();
    let mut refuted: Vec<&str> = Vec::new();
    for e in entries.iter().filter(|e| e.error.is_none()) {
        if let Ok(r) = RunReport::read_json(&dir.join(&e.name).join("report.json")) {
            let s = Score::of(&r.checks);
            if s.fail > 0 {
                refuted.push(&e.name);
            }
            score.merge(s);
        }
    }
    let _ = write!(
        h,
        "<div id=\"scorecard\" class=\"{}\" data-pass=\"{}\" data-fail=\"{}\" \
         data-not-judged=\"{}\"><strong>Claims:</strong> {}{}</div>",
        if score.fail > 0 {
            "refuted"
        } else {
            "confirmed"
        },
        score.pass,
        score.fail,
        score.not_judged,
        esc(&score.label()),
        if refuted.is_empty() {
            String::new()
        } else {
            format!(" — refuted in {}", esc(&refuted.join(", ")))
        }
    );
}

/// Who ran this page's results, where, and how long.
fn provenance_block(h: &mut String, p: &Provenance) {
    let _ = write!(
        h,
        "<p id=\"provenance\" class=\"prov\">Made by icnlab {} (commit <code>{}</code>{}) with \
         <code>{}</code> on {} ({}, {} cores, {:.1} GiB) at {}; {:.1} s wall, {:.1} s CPU; load \
         average {:.2} at the start, {:.2} at the end.</p>",
        esc(&p.icnlab_version),
        esc(&p.git_commit),
        if p.git_dirty {
            ", with uncommitted changes"
        } else {
            ""
        },
        esc(&p.command.join(" ")),
        esc(&p.host.name),
        esc(&p.host.cpu_model),
        p.host.cores,
        p.host.memory_bytes as f64 / f64::from(1u32 << 30),
        esc(&p.date_utc),
        p.wall_time_s,
        p.cpu_time_s,
        p.load_start[0],
        p.load_end[0]
    );
}

/// The experiment's claims as this run judged them, failures in red.
fn checks_table(h: &mut String, outcomes: &[Outcome]) {
    if outcomes.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<h3>Claims checked ({})</h3><table class=\"checks\"><tr><th>result</th><th>claim</th>\
         <th>measured</th><th>value</th><th>expected</th><th>source</th></tr>",
        esc(&Score::of(outcomes).label())
    );
    for o in outcomes {
        let class = match o.judgement {
            Judgement::Pass => "pass",
            Judgement::Fail => "fail",
            Judgement::NotJudged => "not_judged",
        };
        let why = if o.why.is_empty() {
            String::new()
        } else {
            format!(" ({})", esc(&o.why))
        };
        let _ = write!(
            h,
            "<tr class=\"{class}\"><td class=\"t j\">{}{why}</td><td class=\"t\">{}</td>\
             <td class=\"t\">{}</td><td>{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td></tr>",
            o.judgement.word(),
            esc(&o.claim),
            esc(&o.measured_what),
            o.measured.map_or("—".to_owned(), fmt_num),
            esc(&o.expected),
            esc(o.source.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table>");
}

/// The verdict with each `{check N}` replaced by the value check N measured in this run ("—"
/// when not judged), so that its numbers are the data on the page. The verdict's words
/// around a value are fixed ("more than 1.2 ×"): where check N failed in this run, the value
/// says so, so the page never puts a refuted value under words that claim it holds.
pub fn fill_verdict(verdict: &str, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let mut rest = verdict;
    while let Some(start) = rest.find("{check ") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "{check ".len()..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        match after[..end].trim().parse::<usize>() {
            Ok(i) => {
                let o = outcomes.get(i);
                out.push_str(&o.and_then(|o| o.measured).map_or("—".to_owned(), fmt_num));
                if o.is_some_and(|o| o.judgement == Judgement::Fail) {
                    let _ = write!(
                        out,
                        " [refuted by this run: check {i} expected {}, so the words around this value do not hold]",
                        o.map_or("", |o| &o.expected)
                    );
                }
            }
            Err(_) => out.push_str(&rest[start..start + "{check ".len() + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Whether the figure can show intervals, said plainly.
fn intervals_line(dir: &Path, replications: u32) -> String {
    if replications < 2 {
        return "One replication per point: no intervals (the figures and tables show single \
                runs)."
            .to_owned();
    }
    if !has_intervals(dir) {
        return format!(
            "{replications} replications per point, all giving the same values (the model is \
             deterministic here): no intervals."
        );
    }
    format!("{replications} replications per point: error bars are 95 % confidence intervals.")
}

/// True when some `_ci95` cell of some CSV in `dir` is a positive number.
fn has_intervals(dir: &Path) -> bool {
    let Ok(files) = std::fs::read_dir(dir) else {
        return false;
    };
    files.filter_map(Result::ok).any(|f| {
        f.path().extension().is_some_and(|x| x == "csv")
            && Frame::read(&f.path()).is_ok_and(|frame| {
                let ci: Vec<usize> = (0..frame.columns.len())
                    .filter(|&i| frame.columns[i].ends_with("_ci95"))
                    .collect();
                frame.rows.iter().any(|r| {
                    ci.iter()
                        .any(|&i| r[i].parse::<f64>().is_ok_and(|v| v > 0.0))
                })
            })
    })
}

/// The figures of an experiment: plot.svg first, then any other SVG its run wrote.
fn figures(files: &[String], has_plot: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if has_plot {
        out.push("plot.svg".to_owned());
    }
    out.extend(
        files
            .iter()
            .filter(|f| f.ends_with(".svg") && *f != "plot.svg")
            .cloned(),
    );
    out
}

/// The CSVs to show: data.csv, the model's tables in its order, then any other CSV.
fn tables(files: &[String], report: Option<&RunReport>) -> Vec<String> {
    let mut out = vec!["data.csv".to_owned()];
    if let Some(p) = report.and_then(|r| r.points.first()) {
        out.extend(p.metrics.tables.iter().map(|t| format!("{}.csv", t.name)));
    }
    for f in files.iter().filter(|f| f.ends_with(".csv")) {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out.retain(|f| files.contains(f));
    out
}

fn references(h: &mut String, refs: &[Reference]) {
    if refs.is_empty() {
        return;
    }
    h.push_str(
        "<h3>The paper's values</h3><table class=\"refs\"><tr><th>value</th><th>column</th>\
         <th>at x</th><th>paper</th><th>source</th></tr>",
    );
    for r in refs {
        let _ = write!(
            h,
            "<tr><td class=\"t\">{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td>\
             <td class=\"t\">{}</td></tr>",
            esc(&r.label),
            esc(&r.column),
            r.x.as_ref()
                .map_or("every x (line)".to_owned(), |x| esc(&x.to_string())),
            fmt_num(r.y),
            esc(r.source.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table>");
}

/// One CSV as an HTML table: coded values named, empty columns left out, long tables folded.
fn table(h: &mut String, name: &str, frame: &Frame, codes: &CodeNames) {
    let keep: Vec<usize> = (0..frame.columns.len())
        .filter(|&i| frame.rows.iter().any(|r| !r[i].is_empty()))
        .collect();
    // A single-point table whose rows the model names one by one (`row: …`).
    let row_names = codes
        .get("row")
        .filter(|names| names.len() == frame.rows.len());
    let rows = frame.rows.len();
    let open = rows <= OPEN_ROWS;
    let _ = write!(
        h,
        "<details{}><summary>{} ({rows} row{})</summary><table><tr>",
        if open { " open" } else { "" },
        esc(name),
        if rows == 1 { "" } else { "s" }
    );
    if row_names.is_some() {
        h.push_str("<th>row</th>");
    }
    for &i in &keep {
        let _ = write!(h, "<th>{}</th>", esc(&frame.columns[i]));
    }
    h.push_str("</tr>");
    for (n, r) in frame.rows.iter().take(SHOWN_ROWS).enumerate() {
        h.push_str("<tr>");
        if let Some(names) = row_names {
            let label = names.get(&n.to_string()).map_or("", String::as_str);
            let _ = write!(h, "<td class=\"t\">{}</td>", esc(label));
        }
        for &i in &keep {
            let cell = &r[i];
            match codes.get(&frame.columns[i]).and_then(|m| m.get(cell)) {
                Some(named) => {
                    let _ = write!(h, "<td class=\"t\">{}</td>", esc(named));
                }
                None => {
                    let shown = cell.parse::<f64>().map(fmt_num);
                    let class = if shown.is_ok() { "" } else { " class=\"t\"" };
                    let text = shown.unwrap_or_else(|_| cell.clone());
                    let _ = write!(h, "<td{class}>{}</td>", esc(&text));
                }
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    if rows > SHOWN_ROWS {
        let _ = write!(
            h,
            "<p>First {SHOWN_ROWS} of {rows} rows; all are in {}.</p>",
            esc(name)
        );
    }
    h.push_str("</details>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::PointResult;
    use icn_engine::{Metrics, Table};

    fn outcome(measured: f64, judgement: Judgement) -> Outcome {
        Outcome {
            claim: "c".into(),
            measured_what: "x".into(),
            measured: Some(measured),
            expected: "> 1.2 × y = 6".into(),
            judgement,
            why: String::new(),
            source: None,
        }
    }

    /// A passed check's value fills its place as it is; a failed one's says it was refuted,
    /// so the fixed words beside it ("more than 1.2 ×") are not left standing as if true.
    #[test]
    fn a_verdict_marks_the_values_of_refuted_checks() {
        let verdict =
            "Bruck takes {check 0} µs, more than 1.2 × pair's; barrier {check 1}; {check 2}.";
        let ok = fill_verdict(
            verdict,
            &[outcome(9.0, Judgement::Pass), outcome(3.0, Judgement::Pass)],
        );
        assert_eq!(
            ok,
            "Bruck takes 9 µs, more than 1.2 × pair's; barrier 3; —."
        );
        let refuted = fill_verdict(
            verdict,
            &[outcome(5.0, Judgement::Fail), outcome(3.0, Judgement::Pass)],
        );
        assert_eq!(
            refuted,
            "Bruck takes 5 [refuted by this run: check 0 expected > 1.2 × y = 6, so the words \
             around this value do not hold] µs, more than 1.2 × pair's; barrier 3; —."
        );
    }

    /// A results folder with one experiment `e`: a report with a coded table, its CSVs and a
    /// stand-in figure.
    fn results(tag: &str, ci: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("icnlab-html-{tag}-{}", std::process::id()));
        let e = dir.join("e");
        std::fs::create_dir_all(&e).unwrap();
        let mut m = Metrics::default();
        m.push("checks_passed", 1.0, "", "");
        m.notes
            .push("check 0: B MyVIA min one-way latency (µs)".into());
        m.notes.push("check 1: A BVIA max bandwidth (MB/s)".into());
        m.tables.push(Table {
            name: "validation".into(),
            columns: vec!["check".into(), "paper".into()],
            rows: vec![vec![0.0, 8.46], vec![1.0, 47.46]],
            ci95: vec![],
        });
        let report = RunReport {
            tool: "icnlab".into(),
            version: "0".into(),
            model: "nic".into(),
            title: "t".into(),
            description: String::new(),
            config_file: "e.toml".into(),
            seed: 1,
            replications: 3,
            threads: 1,
            wall_time_s: 0.0,
            shard: None,
            experiment: String::new(),
            sweep_points: 1,
            plots: vec![],
            verdict: None,
            references: vec![],
            check_specs: vec![],
            checks: vec![],
            provenance: None,
            points: vec![PointResult {
                index: 0,
                params: vec![],
                config: serde_json::Value::Null,
                metrics: m,
            }],
        };
        report.write_json(&e.join("report.json")).unwrap();
        std::fs::write(
            e.join("data.csv"),
            format!("point,load,r,r_ci95\n0,0.1,1.05,{ci}\n"),
        )
        .unwrap();
        std::fs::write(
            e.join("validation.csv"),
            "point,check,paper,check_ci95,paper_ci95\n0,0,8.46,,\n0,1,47.46,,\n",
        )
        .unwrap();
        std::fs::write(e.join("plot.svg"), "<svg/>").unwrap();
        dir
    }

    fn entry(replications: u32) -> Entry {
        let refs = icn_engine::ExperimentFile::parse(
            Path::new("e.toml"),
            "model = 'm'\n[[plot]]\nx = 'load'\ny = ['r']\n[[reference]]\ncolumn = 'r'\ny = 1\n\
             label = 'R = 1 <no gain>'\nsource = 'paper Fig. 5'\n",
            false,
        )
        .unwrap()
        .references;
        Entry {
            name: "e".into(),
            title: "An experiment".into(),
            description: "What it asks.".into(),
            files: ["data.csv", "plot.svg", "report.json", "validation.csv"]
                .map(str::to_owned)
                .to_vec(),
            has_plot: true,
            wall_time_s: 0.1,
            error: None,
            replications,
            warning: None,
            verdict: Some("Intelligent aging pays off under a hot spot (R 1.09–1.12).".into()),
            references: refs,
        }
    }

    #[test]
    fn the_page_carries_verdict_figure_references_and_named_tables() {
        let dir = results("full", "0.02");
        let page = index(&dir, &[entry(3)], true, None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            page.contains(
                "<strong>Verdict:</strong> Intelligent aging pays off under a hot spot (R 1.09–1.12).</p>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<img class=\"figure\" src=\"e/plot.svg\""),
            "{page}"
        );
        // The reference, escaped, with its source.
        assert!(page.contains("R = 1 &lt;no gain&gt;</td><td class=\"t\">r</td><td>every x (line)</td><td>1</td><td class=\"t\">paper Fig. 5</td>"), "{page}");
        // Checks by name, not number; the empty _ci95 columns are left out.
        assert!(
            page.contains("<td class=\"t\">B MyVIA min one-way latency (µs)</td><td>8.46</td>"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"t\">A BVIA max bandwidth (MB/s)</td>"),
            "{page}"
        );
        assert!(!page.contains("check_ci95"), "{page}");
        assert!(
            page.contains("3 replications per point: error bars are 95 % confidence intervals.")
        );
        assert!(
            page.contains("data-figures-loaded"),
            "the load check is on the page"
        );
    }

    /// Issue 14: the page promised 95 % intervals while most quick runs had one replication.
    #[test]
    fn runs_without_intervals_say_so() {
        let dir = results("none", "0");
        let one = index(&dir, &[entry(1)], true, None);
        let same = index(&dir, &[entry(3)], true, None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            one.contains("One replication per point: no intervals"),
            "{one}"
        );
        assert!(same.contains("3 replications per point, all giving the same values (the model is deterministic here): no intervals."), "{same}");
    }

    #[test]
    fn flagged_points_are_summed_up_in_one_line_saturation_apart() {
        let dir = results("flagged", "0.02");
        let mut e = entry(3);
        e.warning = Some(("e.toml: 1 of 1 points not ok (1 <deadlocked>)".into(), true));
        let mut sat = entry(3);
        sat.warning = Some(("e.toml: 2 of 5 points saturated".into(), false));
        let page = index(&dir, &[e], true, None);
        let saturated = index(&dir, &[sat], true, None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            page.contains("<p class=\"err\">Flagged points:")
                && page.contains("e.toml: 1 of 1 points not ok (1 &lt;deadlocked&gt;)</p>"),
            "{page}"
        );
        assert!(
            saturated.contains("<p class=\"saturated\">Saturated points:")
                && saturated.contains("e.toml: 2 of 5 points saturated</p>")
                && !saturated.contains("class=\"err\""),
            "{saturated}"
        );
    }

    #[test]
    fn a_failed_experiment_shows_its_error_and_verdict_but_no_figure() {
        let dir = results("failed", "0");
        let mut e = entry(1);
        e.error = Some("boom <here>".into());
        let page = index(&dir, &[e], false, None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(page.contains("failed: boom &lt;here&gt;"), "{page}");
        assert!(page.contains("Verdict:"), "{page}");
        assert!(!page.contains("<img class=\"figure\""), "{page}");
    }
}
