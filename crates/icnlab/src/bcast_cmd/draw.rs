//! SVG drawing of a graph coloured by first-receipt step (a small hand-written SVG writer:
//! plotters has no graph drawing, and the picture is only circles and lines).

use icn_topo::Graph;
use icn_topo::layout::positions;
use std::fmt::Write;

/// Colour for step `t` of `max`: blue (early) → red (late); grey when never reached.
fn colour(t: Option<u32>, max: u32) -> String {
    match t {
        None => "#bbbbbb".into(),
        Some(t) => {
            let f = if max == 0 {
                0.0
            } else {
                f64::from(t) / f64::from(max)
            };
            let hue = 240.0 * (1.0 - f);
            format!("hsl({hue:.0},75%,50%)")
        }
    }
}

/// Draws `g` with each node filled by its first-receipt step; the source is outlined.
pub fn svg(g: &Graph, first_receipt: &[Option<u32>], source: usize, title: &str) -> String {
    let size = 760.0;
    let margin = 40.0;
    let pts: Vec<(f64, f64)> = positions(g)
        .into_iter()
        .map(|(x, y)| {
            (
                margin + x * (size - 2.0 * margin),
                margin + 20.0 + (1.0 - y) * (size - 2.0 * margin),
            )
        })
        .collect();
    let max = first_receipt.iter().flatten().copied().max().unwrap_or(0);
    let r = (220.0 / (g.len() as f64).sqrt()).clamp(2.5, 14.0);
    let mut s = String::new();
    let h = size + 60.0;
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{h}" viewBox="0 0 {size} {h}" font-family="sans-serif">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{margin}" y="24" font-size="16">{}</text>"#,
        escape(title)
    );
    for u in 0..g.len() {
        for v in g.neighbours(u) {
            if u < v {
                let ((x1, y1), (x2, y2)) = (pts[u], pts[v]);
                let _ = writeln!(
                    s,
                    r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#999" stroke-width="0.8"/>"##
                );
            }
        }
    }
    for (v, &(x, y)) in pts.iter().enumerate() {
        let stroke = if v == source {
            r#" stroke="black" stroke-width="3""#
        } else {
            ""
        };
        let t = first_receipt.get(v).copied().flatten();
        let _ = writeln!(
            s,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r:.1}" fill="{}"{stroke}><title>{} step {}</title></circle>"#,
            colour(t, max),
            escape(&g.name(v)),
            t.map_or("-".into(), |t| t.to_string())
        );
        if r >= 8.0 {
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" font-size="{:.0}" text-anchor="middle" fill="white">{}</text>"#,
                y + r * 0.35,
                r,
                t.map_or("-".into(), |t| t.to_string())
            );
        }
    }
    // Legend: one swatch per step.
    let y = size + 35.0;
    let w = ((size - 2.0 * margin) / f64::from(max + 1)).min(40.0);
    for t in 0..=max {
        let x = margin + f64::from(t) * w;
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="12" fill="{}"/>"#,
            colour(Some(t), max)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{margin}" y="{:.1}" font-size="12">step 0 … {max} (first receipt)</text>"#,
        y - 4.0
    );
    s.push_str("</svg>\n");
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
