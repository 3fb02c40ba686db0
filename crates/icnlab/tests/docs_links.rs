//! Issue 14: `docs/` cited `shared/DESIGN.md` and `shared/spec/*.md`, which are not in the
//! repository. Every relative link of the README, `docs/` and the crates' READMEs must name a
//! file of the repository, none of them may cite a `shared/` path, and every `docs/...md` path
//! the sources cite must exist.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files a reader follows links from.
fn markdown() -> Vec<PathBuf> {
    let r = root();
    let mut files = vec![r.join("README.md")];
    let mut dirs = vec![r.join("docs")];
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    for e in fs::read_dir(r.join("crates")).unwrap() {
        let readme = e.unwrap().path().join("README.md");
        if readme.exists() {
            files.push(readme);
        }
    }
    files
}

/// Targets of `[text](target)` links in `text`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim().to_owned());
        }
    }
    out
}

#[test]
fn relative_links_of_the_docs_resolve_inside_the_repository() {
    let mut broken = Vec::new();
    let files = markdown();
    assert!(files.len() > 10, "{files:?}");
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        // Cited as code spans (`shared/spec/via.md`), as the docs did.
        if text.contains("`shared/") {
            broken.push(format!("{}: cites a `shared/` path", file.display()));
        }
        for link in links(&text) {
            let path = link.split('#').next().unwrap_or("");
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            let target = file.parent().unwrap().join(path);
            if !target.exists() || path.contains("shared/") {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
}

#[test]
fn docs_the_sources_cite_exist() {
    let r = root();
    let mut missing = Vec::new();
    let mut dirs = vec![r.join("crates")];
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            // This file names the patterns it looks for.
            if p.extension().is_none_or(|x| x != "rs") || p.ends_with(file!()) {
                continue;
            }
            let text = fs::read_to_string(&p).unwrap();
            for (i, _) in text.match_indices("docs/") {
                let cited: String = text[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || "/._-".contains(*c))
                    .collect();
                let cited = cited.trim_end_matches('.');
                if cited.ends_with(".md") && !r.join(cited).exists() {
                    missing.push(format!("{}: {cited}", p.display()));
                }
            }
            if text.contains("shared/spec") || text.contains("shared/DESIGN") {
                missing.push(format!("{}: cites shared/", p.display()));
            }
        }
    }
    assert!(missing.is_empty(), "cited but absent: {missing:#?}");
}
