//! Experiment files: reading, `[quick]` overrides, `--set` overrides, sweeps, and errors that
//! name the file, the key and the allowed range.
//!
//! An experiment file is TOML with a few common keys and the model's own keys at top level:
//!
//! ```toml
//! model = "sci"              # which model runs (required)
//! title = "A/B vs intelligent A/B aging"
//! seed = 1                   # base seed (default 1)
//! replications = 5           # independent replications per point (default 1)
//!
//! nodes = 8                  # ... the model's keys ...
//!
//! [sweep]                    # optional: key → list of values; the cartesian product is run
//! load = [0.1, 0.2, 0.4]
//! "traffic.hotspot" = [0.2, 0.5]
//!
//! [[plot]]                   # optional: panels of plot.svg
//! x = "load"
//! y = ["eta"]
//! series = ["protocol"]
//!
//! [quick]                    # optional: merged over the file by `--quick`
//! replications = 2
//! [quick.sweep]
//! load = [0.2, 0.8]
//! ```

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use std::fmt;
use std::path::{Path, PathBuf};

mod check;
mod reference;
pub mod sections;
pub use check::{Check, MAX_CHECKS, Reduce, Relation, reduce_word, selection_label};
pub use reference::{MAX_REFERENCES, MAX_VERDICT_CHARS, RefX, Reference};

/// An invalid value in a configuration: names the key and says what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("key `{key}`: {message}")]
pub struct Invalid {
    pub key: String,
    pub message: String,
}

impl Invalid {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Invalid {
            key: key.into(),
            message: message.into(),
        }
    }

    /// "must be in {allowed}, got {got}".
    pub fn range(key: impl Into<String>, allowed: &str, got: impl fmt::Display) -> Self {
        Invalid::new(key, format!("must be in {allowed}, got {got}"))
    }

    /// Returns `Err(Invalid::range(..))` unless `ok`.
    pub fn check(
        ok: bool,
        key: &str,
        allowed: &str,
        got: impl fmt::Display,
    ) -> Result<(), Invalid> {
        if ok {
            Ok(())
        } else {
            Err(Invalid::range(key, allowed, got))
        }
    }
}

/// Any problem with an experiment file, always naming the file. Displays on one line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}:{line}:{column}: malformed TOML: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{file}: {inner}")]
    Invalid { file: String, inner: Invalid },
}

impl ConfigError {
    pub fn invalid(file: &Path, inner: Invalid) -> Self {
        ConfigError::Invalid {
            file: file.display().to_string(),
            inner,
        }
    }
}

/// Largest experiment file read (1 MiB): the bundled ones are < 4 KiB; `icnlab run /dev/zero`
/// must fail at once instead of filling memory.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Most points a sweep may have. A 10^6-point sweep took 4.6 GB and wrote a 968 MB report.json;
/// 10^5 points keep report.json near 100 MB and memory near 0.5 GB.
pub const MAX_POINTS: usize = 100_000;

/// Most (point, replication) runs of one invocation: the job list and per-run metrics are held
/// in memory until the end.
pub const MAX_RUNS: usize = 1_000_000;

/// Reads a text file of at most `max` bytes; larger files (or endless ones like /dev/zero) are
/// an error naming the file rather than an allocation that aborts.
pub fn read_bounded(path: &Path, max: u64) -> Result<String, ConfigError> {
    crate::input::read_at_most(path, max).map_err(|source| ConfigError::Io {
        file: path.display().to_string(),
        source,
    })
}

/// Keys every experiment file may have besides the model's own.
const COMMON_KEYS: [&str; 10] = [
    "model",
    "title",
    "description",
    "seed",
    "replications",
    "sweep",
    "plot",
    "quick",
    "verdict",
    "reference",
];

/// One panel of an experiment's `plot.svg`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    #[serde(default)]
    pub title: String,
    /// Column on the x axis (a sweep key or a table column).
    pub x: String,
    /// Columns drawn against x; each with its `_ci95` column as error bars when present.
    pub y: Vec<String>,
    /// Columns whose distinct values split the data into separate lines.
    #[serde(default)]
    pub series: Vec<String>,
    /// Keep only rows whose column equals the value.
    #[serde(default)]
    pub filter: toml::Table,
    /// Draw from this metrics table (long format: sweep keys + table columns) instead of the
    /// scalar data.
    #[serde(default)]
    pub table: Option<String>,
    /// Overlay the same x / y / series columns from this metrics table as unconnected markers
    /// (e.g. a paper's published points next to the model's curves).
    #[serde(default)]
    pub markers: Option<String>,
    #[serde(default)]
    pub x_label: Option<String>,
    #[serde(default)]
    pub y_label: Option<String>,
    #[serde(default)]
    pub log_x: bool,
    #[serde(default)]
    pub log_y: bool,
}

/// A parsed experiment file: common keys split from the model's body.
#[derive(Clone, Debug)]
pub struct ExperimentFile {
    pub path: PathBuf,
    pub model: String,
    pub title: String,
    pub description: String,
    pub seed: u64,
    pub replications: u32,
    /// Sweep axes in file order: (dotted key into the body, values).
    pub sweep: Vec<(String, Vec<toml::Value>)>,
    pub plots: Vec<PlotSpec>,
    /// What the figure shows against the paper, for the results page (see [`Reference`]).
    pub verdict: Option<String>,
    /// The paper's values, drawn into the panels that plot their column.
    pub references: Vec<Reference>,
    /// The claims every run judges (see [`Check`]).
    pub checks: Vec<Check>,
    /// The model's own keys.
    pub body: toml::Table,
    /// What identifies the experiment beyond its seed: the file's text, whether `[quick]` was
    /// merged, and the `--set` overrides in order. See [`ExperimentFile::identity`].
    pub source: Vec<String>,
}

/// One point of a sweep: its global index, the values of the sweep keys, and the body with
/// those values set.
#[derive(Clone, Debug)]
pub struct SweepPoint {
    pub index: usize,
    pub params: Vec<(String, toml::Value)>,
    pub body: toml::Table,
}

impl ExperimentFile {
    /// Reads and splits `path`. With `quick`, merges the file's `[quick]` table over it first.
    pub fn load(path: &Path, quick: bool) -> Result<Self, ConfigError> {
        let text = read_bounded(path, MAX_FILE_BYTES)?;
        Self::parse(path, &text, quick)
    }

    /// As [`load`](Self::load), from text (the path only names the source in errors).
    pub fn parse(path: &Path, text: &str, quick: bool) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let mut root: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let (line, column) = e.span().map_or((1, 1), |s| line_column(text, s.start));
            ConfigError::Syntax {
                file: file.clone(),
                line,
                column,
                message: e.message().trim().to_owned(),
            }
        })?;
        let bad = |inner: Invalid| ConfigError::invalid(path, inner);

        let quick_table = match root.remove("quick") {
            None => None,
            Some(toml::Value::Table(t)) => Some(t),
            Some(_) => return Err(bad(Invalid::new("quick", "must be a table of overrides"))),
        };
        if quick && let Some(q) = quick_table {
            deep_merge(&mut root, q);
        }

        let model = match root.remove("model") {
            Some(toml::Value::String(s)) => s,
            Some(_) => {
                return Err(bad(Invalid::new(
                    "model",
                    "must be a string naming a model",
                )));
            }
            None => {
                return Err(bad(Invalid::new(
                    "model",
                    "missing: say which model runs, e.g. model = \"sci\"",
                )));
            }
        };
        let title = take_string(&mut root, "title")
            .map_err(bad)?
            .unwrap_or_else(|| model.clone());
        let description = take_string(&mut root, "description")
            .map_err(bad)?
            .unwrap_or_default();
        let seed = match root.remove("seed") {
            None => 1,
            Some(toml::Value::Integer(s)) if s >= 0 => s as u64,
            Some(v) => return Err(bad(Invalid::range("seed", "integers 0 ..= 2^63−1", v))),
        };
        let replications = match root.remove("replications") {
            None => 1,
            Some(toml::Value::Integer(r)) if (1..=10_000).contains(&r) => r as u32,
            Some(v) => return Err(bad(Invalid::range("replications", "1 ..= 10000", v))),
        };
        let sweep = match root.remove("sweep") {
            None => Vec::new(),
            Some(toml::Value::Table(t)) => {
                let mut axes = Vec::new();
                for (key, values) in t {
                    axes.push((key.clone(), sweep_values(&key, values).map_err(bad)?));
                }
                axes
            }
            Some(_) => {
                return Err(bad(Invalid::new(
                    "sweep",
                    "must be a table of key = [values]",
                )));
            }
        };
        let plots = match root.remove("plot") {
            None => Vec::new(),
            Some(v) => {
                let v = match v {
                    toml::Value::Table(t) => toml::Value::Array(vec![toml::Value::Table(t)]),
                    other => other,
                };
                deserialize_at::<Vec<PlotSpec>>(v).map_err(|inner| {
                    bad(Invalid::new(format!("plot{}", inner.key), inner.message))
                })?
            }
        };
        let verdict = reference::verdict(root.remove("verdict")).map_err(bad)?;
        let references = reference::references(root.remove("reference"), &plots).map_err(bad)?;
        // `[[check]]` tables are claims; a plain `check` value is a model's key (the X-Switch's
        // frame check), so only an array is taken.
        let claims = match root.get("check") {
            Some(toml::Value::Array(_)) => root.remove("check"),
            _ => None,
        };
        let checks = check::checks(claims).map_err(bad)?;
        let file = ExperimentFile {
            path: path.to_owned(),
            model,
            title,
            description,
            seed,
            replications,
            sweep,
            plots,
            verdict,
            references,
            checks,
            body: root,
            source: vec![text.to_owned(), format!("quick={quick}")],
        };
        file.check_size()?;
        Ok(file)
    }

    /// Applies `key=value` overrides (value in TOML syntax; bare words are taken as strings).
    pub fn apply_sets(&mut self, sets: &[String]) -> Result<(), ConfigError> {
        for set in sets {
            self.source.push(format!("set {set}"));
            let (key, value) =
                parse_set(set).map_err(|inner| ConfigError::invalid(&self.path, inner))?;
            match key.as_str() {
                "seed" => {
                    self.seed = value.as_integer().filter(|s| *s >= 0).ok_or_else(|| {
                        ConfigError::invalid(
                            &self.path,
                            Invalid::range("seed", "integers ≥ 0", &value),
                        )
                    })? as u64
                }
                "replications" => {
                    self.replications = value
                        .as_integer()
                        .filter(|r| (1..=10_000).contains(r))
                        .ok_or_else(|| {
                            ConfigError::invalid(
                                &self.path,
                                Invalid::range("replications", "1 ..= 10000", &value),
                            )
                        })? as u32
                }
                "title" | "description" => {
                    let text = value.as_str().map(str::to_owned).ok_or_else(|| {
                        ConfigError::invalid(&self.path, Invalid::new(&key, "must be a string"))
                    })?;
                    if key == "title" {
                        self.title = text;
                    } else {
                        self.description = text;
                    }
                }
                "model" | "sweep" | "plot" | "quick" | "verdict" | "reference" => {
                    return Err(ConfigError::invalid(
                        &self.path,
                        Invalid::new(&key, "cannot be overridden with --set; edit the file"),
                    ));
                }
                _ => {
                    if let Some(axis) = key.strip_prefix("sweep.") {
                        let values = sweep_values(axis, value)
                            .map_err(|inner| ConfigError::invalid(&self.path, inner))?;
                        match self.sweep.iter_mut().find(|(k, _)| k == axis) {
                            Some((_, vs)) => *vs = values,
                            None => self.sweep.push((axis.to_owned(), values)),
                        }
                    } else if self.sweep.iter().any(|(k, _)| *k == key) {
                        // Each point would overwrite the value: the override would be ignored.
                        return Err(ConfigError::invalid(
                            &self.path,
                            Invalid::new(
                                &key,
                                format!(
                                    "is swept by [sweep]; use --set sweep.{key}=[...] to change \
                                     its values"
                                ),
                            ),
                        ));
                    } else {
                        set_path(&mut self.body, &key, value);
                    }
                }
            }
        }
        self.check_size()
    }

    /// Refuses sweeps with more than [`MAX_POINTS`] points or [`MAX_RUNS`] runs (points ×
    /// replications), before anything is allocated for them.
    fn check_size(&self) -> Result<(), ConfigError> {
        let points = self
            .sweep
            .iter()
            .try_fold(1usize, |n, (_, vs)| n.checked_mul(vs.len()))
            .filter(|&n| n <= MAX_POINTS);
        let Some(points) = points else {
            return Err(ConfigError::invalid(
                &self.path,
                Invalid::new(
                    "sweep",
                    format!(
                        "has more than {MAX_POINTS} points (the product of its list lengths); \
                         split it into several files or shards"
                    ),
                ),
            ));
        };
        let runs = points * self.replications as usize;
        if runs > MAX_RUNS {
            return Err(ConfigError::invalid(
                &self.path,
                Invalid::new(
                    "replications",
                    format!(
                        "{points} points × {} replications = {runs} runs, more than the limit \
                         of {MAX_RUNS}",
                        self.replications
                    ),
                ),
            ));
        }
        Ok(())
    }

    /// A fingerprint of the experiment — file text, `--quick`, `--set` values and seed — as 16
    /// hex digits (FNV-1a, 64 bits: stable across Rust versions and platforms, unlike std's
    /// hasher). Shards of one sweep carry it so that `merge` can refuse shards of another
    /// experiment; it guards against mistakes, not against forgery.
    pub fn identity(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let seed = format!("seed={}", self.seed);
        for part in self
            .source
            .iter()
            .map(String::as_str)
            .chain([seed.as_str()])
        {
            for b in part.bytes().chain([0u8]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        format!("{h:016x}")
    }

    /// Number of points of the full sweep (the product of the axis lengths, 1 without a sweep).
    pub fn point_count(&self) -> usize {
        self.sweep.iter().map(|(_, vs)| vs.len()).product()
    }

    /// The typed model config of `body`, with errors naming this file and the key.
    pub fn typed<C: DeserializeOwned>(&self, body: &toml::Table) -> Result<C, ConfigError> {
        deserialize_at(toml::Value::Table(body.clone()))
            .map_err(|inner| ConfigError::invalid(&self.path, inner))
    }

    /// All points of the sweep (one point, the body itself, when there is no sweep), in
    /// row-major order of the axes as written in the file.
    pub fn points(&self) -> Vec<SweepPoint> {
        let total: usize = self.sweep.iter().map(|(_, vs)| vs.len()).product();
        (0..total)
            .map(|index| {
                let mut rest = index;
                let mut params = Vec::with_capacity(self.sweep.len());
                for (key, values) in self.sweep.iter().rev() {
                    params.push((key.clone(), values[rest % values.len()].clone()));
                    rest /= values.len();
                }
                params.reverse();
                let mut body = self.body.clone();
                for (key, value) in &params {
                    set_path(&mut body, key, value.clone());
                }
                SweepPoint {
                    index,
                    params,
                    body,
                }
            })
            .collect()
    }
}

/// The values of sweep axis `key`: a non-empty list.
fn sweep_values(key: &str, values: toml::Value) -> Result<Vec<toml::Value>, Invalid> {
    if COMMON_KEYS.contains(&key) {
        return Err(Invalid::new(
            format!("sweep.{key}"),
            "only the model's keys can be swept",
        ));
    }
    match values {
        toml::Value::Array(vs) if !vs.is_empty() => Ok(vs),
        _ => Err(Invalid::new(
            format!("sweep.{key}"),
            "must be a non-empty list of values",
        )),
    }
}

/// Deserializes a TOML value into `T`, reporting the dotted path of the offending key.
/// The `[[name]]` tables of an experiment file (one `[name]` table counts as a list of one):
/// at most `max` of them, each read as a `T`. Errors name `name[i].key`; `shape` lists the
/// keys an entry takes, for the message when `name` is not a table.
pub(crate) fn table_list<T: DeserializeOwned>(
    value: Option<toml::Value>,
    name: &str,
    shape: &str,
    max: usize,
) -> Result<Vec<T>, Invalid> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let value = match value {
        toml::Value::Table(t) => toml::Value::Array(vec![toml::Value::Table(t)]),
        list @ toml::Value::Array(_) => list,
        _ => {
            return Err(Invalid::new(
                name,
                format!("must be [[{name}]] tables of {shape}"),
            ));
        }
    };
    let items: Vec<T> = deserialize_at(value)
        .map_err(|inner| Invalid::new(format!("{name}{}", inner.key), inner.message))?;
    Invalid::check(
        items.len() <= max,
        name,
        &format!("lists of at most {max} entries"),
        items.len(),
    )?;
    Ok(items)
}

pub fn deserialize_at<T: DeserializeOwned>(value: toml::Value) -> Result<T, Invalid> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let key = e.path().to_string();
        let message = e.into_inner().to_string();
        // A table read by a deserializer of its own (the cluster's `[fabric]`: `kind`, then
        // that kind's struct) reports an [`Invalid`] whose key is already the full one.
        if let Some((inner, rest)) = message
            .strip_prefix("key `")
            .and_then(|m| m.split_once("`: "))
            && (key == "." || inner.starts_with(&format!("{key}.")))
        {
            let rest = rest.trim_end();
            let rest = rest.strip_suffix(&format!("in `{key}`")).unwrap_or(rest);
            return Invalid::new(inner, rest.trim_end().replace('\n', " "));
        }
        // serde_path_to_error already ends the path with an unknown field's name; only the
        // root needs a readable stand-in.
        let key = if key == "." {
            match message
                .strip_prefix("unknown field `")
                .and_then(|m| m.split('`').next())
            {
                Some(field) => field.to_owned(),
                None => "(top level)".to_owned(),
            }
        } else {
            key
        };
        Invalid {
            key,
            message: message.replace('\n', " "),
        }
    })
}

/// Sets `a.b.c = value` in `table`, creating intermediate tables.
pub fn set_path(table: &mut toml::Table, dotted: &str, value: toml::Value) {
    let mut parts = dotted.split('.').peekable();
    let mut t = table;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            t.insert(part.to_owned(), value);
            return;
        }
        let entry = t
            .entry(part.to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        t = entry.as_table_mut().expect("just made a table");
    }
}

/// Merges `over` into `base`: tables recursively, other values replaced.
pub fn deep_merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Parses `key=value`, the value in TOML syntax or, failing that, a bare string.
pub fn parse_set(set: &str) -> Result<(String, toml::Value), Invalid> {
    let (key, raw) = set
        .split_once('=')
        .ok_or_else(|| Invalid::new(set, "an override must look like key=value"))?;
    let key = key.trim().to_owned();
    if key.is_empty() {
        return Err(Invalid::new(set, "an override must look like key=value"));
    }
    let raw = raw.trim();
    let value = format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_owned()));
    Ok((key, value))
}

fn take_string(root: &mut toml::Table, key: &str) -> Result<Option<String>, Invalid> {
    match root.remove(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Invalid::new(key, "must be a string")),
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Renders a TOML value compactly for CSV cells and labels (strings without quotes).
pub fn value_label(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table read by its own deserializer (one struct per `kind`) reports an [`Invalid`]
    /// with the full key; the key survives instead of stopping at the table's name.
    #[test]
    fn a_nested_reader_keeps_its_own_key() {
        #[derive(Debug)]
        struct Own;
        impl<'de> serde::Deserialize<'de> for Own {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let _ = toml::Table::deserialize(d)?;
                Err(serde::de::Error::custom(Invalid::new("t.deep", "not here")))
            }
        }
        #[derive(Debug, Deserialize)]
        struct Outer {
            #[allow(dead_code)]
            t: Own,
        }
        let e = deserialize_at::<Outer>(toml::Value::Table(toml::from_str("[t]\nx = 1").unwrap()))
            .unwrap_err();
        assert_eq!(e, Invalid::new("t.deep", "not here"));
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Cfg {
        nodes: u32,
        #[serde(default)]
        traffic: Traffic,
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Traffic {
        #[serde(default)]
        hotspot: f64,
    }

    fn parse(text: &str) -> Result<ExperimentFile, ConfigError> {
        ExperimentFile::parse(Path::new("x.toml"), text, false)
    }

    #[test]
    fn splits_common_keys_and_sweeps_in_order() {
        let f = parse(
            "model='m'\nseed=9\nnodes=4\n[sweep]\nnodes=[4,8]\n\"traffic.hotspot\"=[0.1,0.2,0.3]\n",
        )
        .unwrap();
        assert_eq!((f.model.as_str(), f.seed, f.replications), ("m", 9, 1));
        let pts = f.points();
        assert_eq!(pts.len(), 6);
        let c: Cfg = f.typed(&pts[4].body).unwrap();
        assert_eq!(
            c,
            Cfg {
                nodes: 8,
                traffic: Traffic { hotspot: 0.2 }
            }
        );
        assert_eq!(pts[4].params[0].1, toml::Value::Integer(8));
    }

    #[test]
    fn unknown_key_is_named() {
        let f = parse("model='m'\nnodes=4\nnodse=3\n").unwrap();
        let e = f.typed::<Cfg>(&f.body).unwrap_err().to_string();
        assert!(e.starts_with("x.toml: key `nodse`: unknown field"), "{e}");
        let f = parse("model='m'\nnodes=4\n[traffic]\nhot=1.0\n").unwrap();
        let e = f.typed::<Cfg>(&f.body).unwrap_err().to_string();
        assert!(e.contains("key `traffic.hot`"), "{e}");
    }

    #[test]
    fn wrong_type_is_named() {
        let f = parse("model='m'\nnodes='many'\n").unwrap();
        let e = f.typed::<Cfg>(&f.body).unwrap_err().to_string();
        assert!(
            e.contains("key `nodes`") && e.contains("invalid type"),
            "{e}"
        );
    }

    #[test]
    fn malformed_toml_gives_line_and_one_line_message() {
        let e = parse("model='m'\nnodes = = 4\n").unwrap_err().to_string();
        assert!(e.starts_with("x.toml:2:"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn missing_model_and_bad_common_values() {
        assert!(
            parse("nodes=4")
                .unwrap_err()
                .to_string()
                .contains("key `model`")
        );
        assert!(
            parse("model='m'\nreplications=0")
                .unwrap_err()
                .to_string()
                .contains("1 ..= 10000")
        );
        assert!(
            parse("model='m'\n[sweep]\nnodes=[]")
                .unwrap_err()
                .to_string()
                .contains("sweep.nodes")
        );
    }

    #[test]
    fn quick_overrides_merge_deeply() {
        let text = "model='m'\nnodes=4\nreplications=5\n[sweep]\nnodes=[1,2,3]\n[quick]\nreplications=2\n[quick.sweep]\nnodes=[1]\n";
        let full = ExperimentFile::parse(Path::new("x"), text, false).unwrap();
        let quick = ExperimentFile::parse(Path::new("x"), text, true).unwrap();
        assert_eq!((full.replications, full.points().len()), (5, 3));
        assert_eq!((quick.replications, quick.points().len()), (2, 1));
    }

    #[test]
    fn set_overrides_parse_toml_or_strings() {
        let mut f = parse("model='m'\nnodes=4\n").unwrap();
        f.apply_sets(&[
            "nodes=16".into(),
            "traffic.hotspot=0.5".into(),
            "seed=3".into(),
        ])
        .unwrap();
        let c: Cfg = f.typed(&f.body).unwrap();
        assert_eq!(
            c,
            Cfg {
                nodes: 16,
                traffic: Traffic { hotspot: 0.5 }
            }
        );
        assert_eq!(f.seed, 3);
        assert_eq!(
            parse_set("policy=ab").unwrap().1,
            toml::Value::String("ab".into())
        );
        assert!(parse_set("novalue").is_err());
    }

    #[test]
    fn set_reaches_title_and_sweep_and_refuses_swept_keys() {
        let mut f = parse("model='m'\nnodes=4\n[sweep]\nnodes=[1,2]\n").unwrap();
        let e = f.apply_sets(&["nodes=8".into()]).unwrap_err().to_string();
        assert!(e.contains("key `nodes`: is swept"), "{e}");
        f.apply_sets(&[
            "title=Other".into(),
            "sweep.nodes=[3,4,5]".into(),
            "sweep.traffic.hotspot=[0.1,0.2]".into(),
        ])
        .unwrap();
        assert_eq!(f.title, "Other");
        assert_eq!(f.points().len(), 6);
        let c: Cfg = f.typed(&f.points()[5].body).unwrap();
        assert_eq!((c.nodes, c.traffic.hotspot), (5, 0.2));
        assert!(f.apply_sets(&["sweep.nodes=[]".into()]).is_err());
        assert!(f.apply_sets(&["sweep.seed=[1]".into()]).is_err());
        assert!(f.apply_sets(&["title=3".into()]).is_err());
    }

    #[test]
    fn sweeps_and_runs_are_bounded() {
        let axis = format!("[{}]", vec!["1"; 1000].join(","));
        let text = format!("model='m'\n[sweep]\na={axis}\nb={axis}\n");
        let e = parse(&text).unwrap_err().to_string();
        assert!(
            e.contains("key `sweep`: has more than 100000 points"),
            "{e}"
        );
        // 10^21 points must not overflow into a small number.
        let text = format!(
            "model='m'\n[sweep]\na={axis}\nb={axis}\nc={axis}\nd={axis}\ne={axis}\nf={axis}\ng={axis}\n"
        );
        assert!(parse(&text).is_err());
        let text = format!("model='m'\nreplications=1000\n[sweep]\na={axis}\nb=[1,2]\n");
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.contains("2000 points × 1000 replications"), "{e}");
        let mut f = parse(&format!("model='m'\n[sweep]\na={axis}\n")).unwrap();
        assert!(f.apply_sets(&[format!("sweep.b={axis}")]).is_err());
    }

    #[test]
    fn file_reads_are_bounded() {
        let e = read_bounded(Path::new("/dev/zero"), 1024)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/dev/zero: cannot read: larger than"), "{e}");
        let e = ExperimentFile::load(Path::new("/dev/zero"), false).unwrap_err();
        assert!(matches!(e, ConfigError::Io { .. }));
    }

    #[test]
    fn identity_covers_text_sets_quick_and_seed() {
        let base = parse("model='m'\nnodes=4\n").unwrap();
        let id = base.identity();
        assert_eq!(id.len(), 16);
        assert_eq!(parse("model='m'\nnodes=4\n").unwrap().identity(), id);
        assert_ne!(parse("model='m'\nnodes=5\n").unwrap().identity(), id);
        let mut set = base.clone();
        set.apply_sets(&["nodes=4".into()]).unwrap();
        assert_ne!(set.identity(), id, "a --set changes the experiment");
        let mut seed = base.clone();
        seed.seed = 2;
        assert_ne!(seed.identity(), id);
        let quick = ExperimentFile::parse(Path::new("x.toml"), "model='m'\nnodes=4\n", true);
        assert_ne!(quick.unwrap().identity(), id);
    }
}
