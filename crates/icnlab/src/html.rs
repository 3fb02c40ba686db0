//! `results/index.html`: one page linking every reproduced experiment, with its figure inline.

use crate::plot::Frame;
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
    /// Points whose replications did not all end ok (drawn hollow in the figure).
    pub warning: Option<String>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders the index; `dir` is the results directory (to embed the head of each data.csv).
pub fn index(dir: &Path, entries: &[Entry], quick: bool) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>icnlab results</title><style>\
         body{{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}}\
         table{{border-collapse:collapse;font-size:12px}}td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}\
         section{{border-top:2px solid #ddd;margin-top:2em}}img{{max-width:100%;border:1px solid #eee}}\
         .err{{color:#a00}} details{{margin:.5em 0}}</style></head><body>\
         <h1>icnlab results</h1><p>icnlab {} — {} run. Each figure is drawn from the CSV next to it; \
         error bars are 95&nbsp;% confidence intervals over independent replications.</p><ul>",
        env!("CARGO_PKG_VERSION"),
        if quick {
            "quick (<code>--quick</code>: fewer points and replications, shorter runs)"
        } else {
            "full"
        }
    );
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
        let _ = write!(
            h,
            "<section id=\"{0}\"><h2>{0}: {1}</h2><p>{2}</p>",
            esc(&e.name),
            esc(&e.title),
            esc(&e.description)
        );
        if let Some(err) = &e.error {
            let _ = write!(h, "<p class=\"err\">failed: {}</p></section>", esc(err));
            continue;
        }
        if e.replications < 2 {
            h.push_str(
                "<p><em>One replication per point (a deterministic model, or a quick run): the figure \
                 has no confidence intervals.</em></p>",
            );
        }
        if let Some(w) = &e.warning {
            let _ = write!(h, "<p class=\"err\">flagged points: {}</p>", esc(w));
        }
        if e.has_plot {
            let _ = write!(
                h,
                "<img src=\"{}/plot.svg\" alt=\"{}\">",
                esc(&e.name),
                esc(&e.title)
            );
        }
        let _ = write!(h, "<p>Files ({:.1} s): ", e.wall_time_s);
        for f in &e.files {
            let _ = write!(h, "<a href=\"{0}/{1}\">{1}</a> ", esc(&e.name), esc(f));
        }
        h.push_str("</p>");
        if let Ok(frame) = Frame::read(&dir.join(&e.name).join("data.csv")) {
            let _ = write!(
                h,
                "<details><summary>data.csv ({} rows)</summary><table><tr>",
                frame.rows.len()
            );
            for c in &frame.columns {
                let _ = write!(h, "<th>{}</th>", esc(c));
            }
            h.push_str("</tr>");
            for r in frame.rows.iter().take(200) {
                h.push_str("<tr>");
                for v in r {
                    let shown = v
                        .parse::<f64>()
                        .map(crate::report::fmt_num)
                        .unwrap_or_else(|_| v.clone());
                    let _ = write!(h, "<td>{}</td>", esc(&shown));
                }
                h.push_str("</tr>");
            }
            h.push_str("</table></details>");
        }
        h.push_str("</section>");
    }
    h.push_str("</body></html>\n");
    h
}
