//! Issue 25, item 3: an experiment's `[[check]]` claims are judged on every run. On an M/M/1
//! queue, whose answers are exact (sojourn 1/(μ − λ) = 2 at λ = 0.5, 4 at λ = 0.75): the true
//! claims pass (exit 0), a perturbed expected value fails (exit 3, `FAIL` in stdout, the page's
//! scorecard and the claim's row red), and a quick run without the claim's point leaves it
//! "not judged" rather than failing it.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

fn experiment(sojourn_at_half: f64) -> String {
    format!(
        r#"model = "mm1"
title = "M/M/1 claims"
verdict = "The mean sojourn at load 0.5 is {{check 0}} (theory: 2)."
seed = 3
replications = 2
customers = 20000
[sweep]
arrival_rate = [0.5, 0.75]
[quick]
customers = 2000
[quick.sweep]
arrival_rate = [0.75]

[[check]]
claim = "The exact sojourn at λ = 0.5 is 1/(μ − λ)"
column = "sojourn_exact"
where = {{ arrival_rate = 0.5 }}
value = {sojourn_at_half}
source = "queueing theory"

[[check]]
claim = "The simulated sojourn at λ = 0.75 is within 15 % of 1/(μ − λ) = 4"
column = "sojourn_mean"
where = {{ arrival_rate = 0.75 }}
range = [3.4, 4.6]

[[check]]
claim = "Waiting grows with load"
column = "sojourn_mean"
where = {{ arrival_rate = 0.75 }}
relation = ">"
than = {{ arrival_rate = 0.5 }}
factor = 1.5
"#
    )
}

fn sweep(dir: &Path, text: &str, quick: bool) -> (Option<i32>, String, serde_json::Value) {
    let cfg = dir.join("e.toml");
    fs::write(&cfg, text).unwrap();
    let out = dir.join("out");
    let mut cmd = icnlab();
    cmd.args(["sweep", "--quiet"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out);
    if quick {
        cmd.arg("--quick");
    }
    let run = cmd.output().unwrap();
    let report = fs::read_to_string(out.join("report.json")).unwrap();
    (
        run.status.code(),
        String::from_utf8_lossy(&run.stdout).into_owned(),
        serde_json::from_str(&report).unwrap(),
    )
}

fn judgements(report: &serde_json::Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["judgement"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn true_claims_pass_and_a_perturbed_one_fails_with_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, report) = sweep(dir.path(), &experiment(2.0), false);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(judgements(&report), ["pass", "pass", "pass"], "{stdout}");
    assert!(
        stdout.contains("checks: 3 confirmed, 0 refuted, 0 not judged"),
        "{stdout}"
    );
    assert_eq!(report["checks"][0]["measured"], 2.0);

    let (code, stdout, report) = sweep(dir.path(), &experiment(2.2), false);
    assert_eq!(code, Some(3), "{stdout}");
    assert_eq!(judgements(&report), ["fail", "pass", "pass"]);
    assert!(
        stdout.contains("FAIL       sojourn_exact (arrival_rate=0.5) = 2, expected = 2.2"),
        "{stdout}"
    );
}

#[test]
fn a_quick_run_without_the_points_does_not_judge() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, report) = sweep(dir.path(), &experiment(2.2), true);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(judgements(&report), ["not_judged", "pass", "not_judged"]);
    assert!(
        report["checks"][0]["why"]
            .as_str()
            .unwrap()
            .contains("no point of this run has arrival_rate=0.5"),
        "{report}"
    );
}

/// `reproduce` of a folder holding the perturbed experiment: scorecard in stdout, exit 3, and
/// the page opens with a red scorecard and shows the refuted claim's row in red; the verdict
/// quotes the measured value, marked as refuted.
#[test]
fn a_refuted_claim_turns_the_page_red_and_the_exit_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let exps = dir.path().join("experiments");
    fs::create_dir(&exps).unwrap();
    fs::write(exps.join("mm1.toml"), experiment(2.2)).unwrap();
    let out = dir.path().join("results");
    let run = icnlab()
        .args(["reproduce", "--experiments"])
        .arg(&exps)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert_eq!(run.status.code(), Some(3), "{stderr}");
    assert!(
        stdout.contains("scorecard: claims 2 confirmed, 1 refuted, 0 not judged"),
        "{stdout}"
    );
    let page = fs::read_to_string(out.join("index.html")).unwrap();
    let card = page
        .find("<div id=\"scorecard\" class=\"refuted\"")
        .expect("red scorecard");
    assert!(card < page.find("<section").unwrap());
    assert!(
        page.contains("<tr class=\"fail\"><td class=\"t j\">FAIL"),
        "{page}"
    );
    // The verdict quotes the refuted check's value and says it was refuted.
    assert!(
        page.contains(
            "The mean sojourn at load 0.5 is 2 [refuted by this run: check 0 expected = 2.2, \
             so the words around this value do not hold] (theory: 2)."
        ),
        "{page}"
    );
    assert!(page.contains("id=\"provenance\""), "{page}");
}

/// Issue 25: every bundled experiment states its claims as `[[check]]`s, and its verdict
/// quotes what this run measured (`{check N}` of a check that exists) rather than fixed
/// numbers of some earlier run.
#[test]
fn every_bundled_experiment_states_its_claims_as_checks_its_verdict_quotes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        seen += 1;
        let name = path.display();
        let file: toml::Table = toml::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let checks = file
            .get("check")
            .and_then(|c| c.as_array())
            .map_or(0, Vec::len);
        assert!(checks > 0, "{name}: no [[check]]");
        let verdict = file["verdict"].as_str().unwrap();
        let quoted: Vec<usize> = verdict
            .split("{check ")
            .skip(1)
            .map(|rest| rest[..rest.find('}').unwrap()].trim().parse().unwrap())
            .collect();
        assert!(!quoted.is_empty(), "{name}: the verdict quotes no check");
        for i in quoted {
            assert!(
                i < checks,
                "{name}: the verdict quotes check {i} of {checks}"
            );
        }
    }
    assert_eq!(seen, 33, "bundled experiments");
}

/// The bundled experiments and their claims as counted in `experiments/*.toml`.
fn bundled_counts() -> (usize, usize) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let (mut experiments, mut claims) = (0, 0);
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let file: toml::Table = toml::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        experiments += 1;
        claims += file
            .get("check")
            .and_then(|c| c.as_array())
            .map_or(0, Vec::len);
    }
    (experiments, claims)
}

/// The README and docs/results.md state how many experiments `reproduce` runs and how many
/// claims they check: those figures are the files' own counts, and the scorecard of the
/// `reproduce --quick` run docs/results.md reports adds up to the claims.
#[test]
fn the_docs_state_the_bundled_experiments_and_claims_as_counted() {
    let (experiments, claims) = bundled_counts();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let results = fs::read_to_string(root.join("docs/results.md")).unwrap();
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!("for the {experiments} experiments");
    assert!(
        flat(&readme).contains(&said),
        "README.md does not say `{said}`"
    );
    let said = format!(
        "Each of the {experiments} bundled experiments states its paper's claims as checks, {claims} in all"
    );
    assert!(
        flat(&results).contains(&said),
        "docs/results.md does not say `{said}`"
    );
    // | `reproduce --quick` (date, N experiments) | exit | stderr lines | scorecard | wall |
    let row = results
        .lines()
        .find(|l| l.starts_with("| `reproduce --quick`"))
        .expect("docs/results.md: the `reproduce --quick` row");
    assert!(row.contains(&format!("{experiments} experiments")), "{row}");
    let card: Vec<usize> = row
        .split('|')
        .nth(4)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(
        card.iter().sum::<usize>(),
        claims,
        "docs/results.md's quick scorecard {card:?} against {claims} claims"
    );
}

/// A check on a model's table (`table = "curve"`): the rows its `where` keys select are
/// judged, and a table or column the model does not write is an input error naming the key
/// (exit 2), found on the first run as a misspelt scalar column is.
#[test]
fn table_checks_are_judged_and_misspelt_tables_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = |table: &str, column: &str| {
        format!(
            r#"model = "nic"
title = "table checks"
profile = "setup-b"
benchmark = "both"
sizes = [64, 4096]
messages = 50
round_trips = 2
[sweep]
design = ["bvia", "myvia"]

[[check]]
claim = "MyVIA streams more than Berkeley VIA at 4 KB"
table = "{table}"
column = "{column}"
where = {{ design = "myvia", size_bytes = 4096 }}
relation = ">"
than = {{ design = "bvia", size_bytes = 4096 }}

[[check]]
claim = "a size the run does not have"
table = "{table}"
column = "{column}"
where = {{ size_bytes = 8 }}
of = "max"
range = [0, 1]
"#
        )
    };
    let (code, stdout, report) = sweep(dir.path(), &text("curve", "bandwidth_mbs"), false);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(judgements(&report), ["pass", "not_judged"], "{stdout}");
    assert!(
        report["checks"][0]["measured_what"]
            .as_str()
            .unwrap()
            .starts_with("bandwidth_mbs in curve (design=myvia, size_bytes=4096)"),
        "{report}"
    );
    let scalar_check = text("curve", "bandwidth").replace("table = \"curve\"\n", "");
    for (bad, key, says) in [
        (
            text("curves", "bandwidth_mbs"),
            "check[0].table",
            "no table `curves`",
        ),
        (
            text("curve", "bandwidth"),
            "check[0].column",
            "no column `bandwidth`",
        ),
        (scalar_check, "check[0].column", "no scalar `bandwidth`"),
    ] {
        let cfg = dir.path().join("bad.toml");
        fs::write(&cfg, bad).unwrap();
        let run = icnlab()
            .args(["sweep", "--quiet"])
            .arg(&cfg)
            .arg("--out")
            .arg(dir.path().join("bad"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(key), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}
