//! The results page as a reader sees it (issue 14 item 6): `index.html` after `reproduce --quick`
//! opened in a real headless Chromium.
//!
//! * A screenshot (`--screenshot`, 1300 px wide) is decoded and must not be blank: many
//!   distinct colours, a fair share of non-white pixels.
//! * The DOM after the page's `load` event (`--dump-dom`) must show every figure of the page
//!   loaded: the page's own script writes `data-figures` / `data-figures-loaded` on `<body>` and
//!   `data-loaded` on each `<img class="figure">`. Every plot.svg and extra SVG in the results
//!   folder must be one of those figures.
//! * Every experiment on the page carries its verdict, which must be the one in its experiment
//!   file with each `{check N}` filled in with a value measured in this run, and every other
//!   number in a verdict must occur in the README or docs/ (the verdicts quote the findings,
//!   they do not invent numbers).
//! * The page opens with the claims' scorecard (`#scorecard`, its counts those of the
//!   experiments' report.json) and the run's provenance (`#provenance`: version, commit, host).
//! * Every `plot.png` beside a `plot.svg` decodes to an image that is not blank.
//!
//! Results: `ICNLAB_RESULTS` (CI passes `target/ci-results`, relative paths are taken from the
//! workspace root), else a `reproduce --quick` of three fast experiments into a temporary folder.
//! Without a Chromium on PATH the browser test is skipped with a printed reason, unless
//! `ICNLAB_REQUIRE_BROWSER` is set (CI sets it): then it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Experiments the test runs when not given a results folder: a validation table with named
/// checks, curves with the paper's values as references, and R = 1 lines with intervals.
const OWN_EXPERIMENTS: [&str; 3] = ["nic-validation", "nic-setup-b", "sci-congestion"];

/// Height of the screenshot window (the page is longer; its top must not be blank).
const WINDOW_H: u32 = 3000;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Chromium's binary: `ICNLAB_CHROMIUM`, else the first of the usual names on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ICNLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Runs `cmd` for at most `limit`, returning its stdout; a hang is a failure, not a hung test.
fn run(mut cmd: Command, limit: Duration) -> Vec<u8> {
    let shown = format!("{cmd:?}");
    let out_file = tempfile::NamedTempFile::new().unwrap();
    let mut child = cmd
        .stdout(out_file.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{shown} failed: {status}");
            return std::fs::read(out_file.path()).unwrap();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn headless(browser: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// The results folder to check, and the temporary folder holding it when the test made it.
fn results() -> (PathBuf, Option<tempfile::TempDir>) {
    if let Some(dir) = std::env::var_os("ICNLAB_RESULTS") {
        let dir = PathBuf::from(dir);
        let dir = if dir.is_absolute() {
            dir
        } else {
            workspace().join(dir)
        };
        return (dir, None);
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_icnlab"));
    cmd.arg("reproduce")
        .arg("--quick")
        .arg("--experiments")
        .arg(workspace().join("experiments"))
        .arg("--out")
        .arg(&out)
        .args(OWN_EXPERIMENTS);
    run(cmd, Duration::from_secs(240));
    (out, Some(tmp))
}

/// The value of attribute `name` in the first tag of `html` that starts with `tag`.
fn attribute<'a>(html: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let start = html.find(tag)?;
    let end = start + html[start..].find('>')?;
    let open = &html[start..end];
    let key = format!("{name}=\"");
    let from = open.find(&key)? + key.len();
    Some(&open[from..from + open[from..].find('"')?])
}

/// The `<img class="figure" ...>` tags of `html`.
fn figure_tags(html: &str) -> Vec<&str> {
    html.match_indices("<img class=\"figure\"")
        .map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()])
        .collect()
}

/// The experiment names (folders) the page has sections for.
fn sections(html: &str) -> Vec<String> {
    html.match_indices("<section id=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The verdict without its `{check N}` placeholders: the text around them, in order.
fn literal_parts(verdict: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = verdict;
    while let Some(start) = rest.find("{check ") {
        parts.push(rest[..start].to_owned());
        let end = rest[start..]
            .find('}')
            .map_or(rest.len(), |e| start + e + 1);
        rest = &rest[end..];
    }
    parts.push(rest.to_owned());
    parts.retain(|p| !p.is_empty());
    parts
}

/// `path` is a PNG that decodes to a drawn image: many colours, not mostly white.
fn png_is_drawn(path: &Path) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert!(
        frame.width >= 600 && frame.height >= 400,
        "{}: {frame:?}",
        path.display()
    );
    let channels = frame.color_type.samples();
    let rgb: std::collections::BTreeSet<[u8; 3]> = pixels[..frame.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    assert!(
        rgb.len() >= 8,
        "{}: only {} colours",
        path.display(),
        rgb.len()
    );
}

/// The `verdict` of experiment file `name`.
fn verdict_of(name: &str) -> Option<String> {
    let path = workspace().join("experiments").join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).ok()?;
    let table: toml::Table = text.parse().unwrap();
    table
        .get("verdict")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

#[test]
fn results_page_renders_in_headless_chromium() {
    let required = std::env::var_os("ICNLAB_REQUIRE_BROWSER").is_some_and(|v| !v.is_empty());
    let Some(browser) = chromium() else {
        assert!(
            !required,
            "ICNLAB_REQUIRE_BROWSER is set but no chromium was found on PATH (Debian: apt-get \
             install chromium; or set ICNLAB_CHROMIUM)"
        );
        eprintln!(
            "report_browser: SKIPPED — no chromium, chromium-browser or google-chrome on PATH \
             (set ICNLAB_REQUIRE_BROWSER=1 to make this a failure)"
        );
        return;
    };
    let (dir, _keep) = results();
    let index = dir.join("index.html");
    let source = std::fs::read_to_string(&index)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", index.display()));
    let url = format!("file://{}", index.canonicalize().unwrap().display());
    let work = tempfile::tempdir().unwrap();

    // The screenshot: decoded, the right size, and not blank.
    let shot = work.path().join("index.png");
    let mut cmd = headless(&browser, &work.path().join("profile-shot"));
    cmd.arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size=1300,{WINDOW_H}"))
        .arg("--virtual-time-budget=10000")
        .arg(&url);
    run(cmd, Duration::from_secs(90));
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&shot).expect("chromium wrote the screenshot"),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (1300, WINDOW_H));
    let channels = frame.color_type.samples();
    assert!(channels >= 3, "{:?}", frame.color_type);
    let rgb: Vec<[u8; 3]> = pixels[..frame.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    let colours: std::collections::BTreeSet<[u8; 3]> = rgb.iter().copied().collect();
    let inked = rgb.iter().filter(|p| **p != [255, 255, 255]).count();
    assert!(
        colours.len() >= 64,
        "the screenshot has only {} colours",
        colours.len()
    );
    assert!(
        inked * 50 > rgb.len(),
        "the screenshot is nearly blank: {inked} of {} pixels not white",
        rgb.len()
    );

    // The DOM after load: every figure loaded.
    let mut cmd = headless(&browser, &work.path().join("profile-dom"));
    cmd.arg("--virtual-time-budget=10000")
        .arg("--dump-dom")
        .arg(&url);
    let dom = String::from_utf8(run(cmd, Duration::from_secs(90))).unwrap();
    let figures = figure_tags(&source);
    assert!(!figures.is_empty(), "the page shows no figure");
    let counted = attribute(&dom, "<body", "data-figures");
    let loaded = attribute(&dom, "<body", "data-figures-loaded");
    assert_eq!(
        (counted, loaded),
        (
            Some(figures.len().to_string().as_str()),
            Some(figures.len().to_string().as_str())
        ),
        "figures on the page / loaded in the browser"
    );
    for tag in figure_tags(&dom) {
        assert!(tag.contains("data-loaded=\"yes\""), "not loaded: {tag}");
    }

    // Every figure in the folder is on the page; every experiment has its file's verdict.
    let names = sections(&source);
    assert!(!names.is_empty());
    let mut verdicts = 0;
    let mut pngs = 0;
    for name in &names {
        let files = std::fs::read_dir(dir.join(name)).unwrap();
        for f in files.filter_map(Result::ok) {
            let file = f.file_name().to_string_lossy().into_owned();
            if file.ends_with(".svg") {
                let src = format!("src=\"{name}/{file}\"");
                assert!(
                    figures.iter().any(|t| t.contains(&src)),
                    "{name}/{file} is not on the page"
                );
            }
        }
        if let Some(v) = verdict_of(name) {
            // The literal parts of the verdict, in order, around the measured values.
            let start = dom
                .find(&format!("<h2>{name}:"))
                .and_then(|at| dom[at..].find("<strong>Verdict:</strong> ").map(|v| at + v))
                .unwrap_or_else(|| panic!("{name}: no verdict on the page"));
            let shown = &dom[start..start + dom[start..].find("</p>").unwrap()];
            let mut at = 0;
            for part in literal_parts(&v) {
                let part = escape(&part);
                let found = shown[at..].find(&part).unwrap_or_else(|| {
                    panic!("{name}: verdict part not on the page: {part}\n{shown}")
                });
                at += found + part.len();
            }
            assert!(!shown.contains("{check"), "{name}: unfilled: {shown}");
            verdicts += 1;
        }
        if dir.join(name).join("plot.svg").exists() {
            png_is_drawn(&dir.join(name).join("plot.png"));
            pngs += 1;
        }
    }
    // The scorecard and the provenance open the page.
    let card = dom
        .find("id=\"scorecard\"")
        .expect("the page has a scorecard");
    let first_section = dom.find("<section").unwrap_or(dom.len());
    assert!(
        card < first_section,
        "the scorecard comes before the experiments"
    );
    let mut counts = [0usize; 3];
    for name in &names {
        let report = std::fs::read_to_string(dir.join(name).join("report.json")).unwrap();
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        for c in report["checks"].as_array().into_iter().flatten() {
            let i = ["pass", "fail", "not_judged"]
                .iter()
                .position(|j| c["judgement"] == *j)
                .unwrap();
            counts[i] += 1;
        }
    }
    for (attr, n) in ["data-pass", "data-fail", "data-not-judged"]
        .iter()
        .zip(counts)
    {
        assert_eq!(
            attribute(&dom, "<div id=\"scorecard\"", attr),
            Some(n.to_string().as_str()),
            "scorecard {attr}"
        );
    }
    assert!(counts[0] > 0, "no claim was confirmed: {counts:?}");
    let provenance = dom
        .find("id=\"provenance\"")
        .expect("the page has its provenance");
    assert!(provenance < first_section);
    let prov = &dom[provenance..provenance + dom[provenance..].find("</p>").unwrap()];
    for word in ["icnlab ", "commit", "cores", "load average"] {
        assert!(prov.contains(word), "provenance lacks {word}: {prov}");
    }
    assert_eq!(verdicts, names.len(), "every experiment has a verdict");
    eprintln!(
        "report_browser: {} experiments, {} figures loaded, {pngs} PNGs decoded, claims {counts:?}, screenshot {} colours, {:.0} % inked",
        names.len(),
        figures.len(),
        colours.len(),
        100.0 * inked as f64 / rgb.len() as f64
    );
}

/// Every number a verdict quotes (1.09, 5 587, 0.055, …) occurs in the README or in docs/: the
/// verdicts carry the findings to the page, they do not make up new ones.
#[test]
fn verdict_numbers_come_from_the_readme_or_docs() {
    let mut sources = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    for f in std::fs::read_dir(workspace().join("docs")).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            sources.push_str(&std::fs::read_to_string(&p).unwrap());
        }
    }
    let mut checked = 0;
    for f in std::fs::read_dir(workspace().join("experiments")).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let verdict = verdict_of(&name).unwrap_or_else(|| panic!("{name} has no verdict"));
        // `{check N}` is filled with a measured value on the page: not a number quoted here.
        for number in literal_parts(&verdict)
            .concat()
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map(|t| t.trim_matches('.'))
            .filter(|t| !t.is_empty())
        {
            assert!(
                sources.contains(number),
                "{name}: the verdict's {number} occurs neither in README.md nor in docs/"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} numbers checked");
}
