//! `plot.png` beside `plot.svg`, for slides and papers: the SVG rendered by resvg at twice its
//! size on white. Text uses the machine's fonts (loaded once per process: DejaVu Sans,
//! Liberation Sans, … whichever it has); on a machine without any the figure is drawn
//! without its labels rather than not at all.

use anyhow::{Context, Result};
use resvg::{tiny_skia, usvg};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Pixels per SVG pixel: a 1240-pixel-wide figure becomes 2480 pixels, enough for a slide.
const SCALE: f32 = 2.0;

fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_system_fonts();
            // The figures ask for `sans-serif`, which fontdb maps to Arial: take a sans face
            // this machine has (any face at all, failing those).
            let has = |name: &str| {
                db.faces()
                    .any(|f| f.families.iter().any(|(family, _)| family == name))
            };
            let sans = [
                "DejaVu Sans",
                "Liberation Sans",
                "Noto Sans",
                "FreeSans",
                "Arial",
            ]
            .into_iter()
            .find(|n| has(n))
            .map(str::to_owned)
            .or_else(|| {
                db.faces()
                    .next()
                    .and_then(|f| f.families.first())
                    .map(|(n, _)| n.clone())
            });
            if let Some(sans) = sans {
                db.set_sans_serif_family(sans);
            }
            Arc::new(db)
        })
        .clone()
}

/// The PNG of the SVG document `svg`.
pub fn png_of_svg(svg: &[u8]) -> Result<Vec<u8>> {
    let options = usvg::Options {
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_data(svg, &options).context("cannot read the SVG")?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(SCALE)
        .context("empty figure")?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .context("figure too large to rasterise")?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(SCALE, SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("cannot encode the PNG")
}

/// Writes `png` from the SVG file `svg`.
pub fn write_png(svg: &Path, png: &Path) -> Result<()> {
    let text = std::fs::read(svg).with_context(|| format!("cannot read {}", svg.display()))?;
    let bytes = png_of_svg(&text).with_context(|| format!("{}", svg.display()))?;
    std::fs::write(png, bytes).with_context(|| format!("cannot write {}", png.display()))
}

#[cfg(test)]
mod tests {
    /// A red square with a label becomes a PNG twice its size whose centre is red.
    #[test]
    fn an_svg_becomes_a_png_twice_its_size() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30">
            <rect x="10" y="5" width="20" height="20" fill="#ff0000"/>
            <text x="2" y="28" font-size="6">load</text></svg>"##;
        let bytes = super::png_of_svg(svg).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((frame.width, frame.height), (80, 60));
        let channels = frame.color_type.samples();
        let at = |x: usize, y: usize| {
            let i = (y * frame.width as usize + x) * channels;
            [pixels[i], pixels[i + 1], pixels[i + 2]]
        };
        assert_eq!(at(40, 30), [255, 0, 0]);
        assert_eq!(at(2, 2), [255, 255, 255]);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(super::png_of_svg(b"not an svg").is_err());
    }
}
