//! BookSim2 keys → an icnlab `vc-router` experiment.
//!
//! | BookSim2 key | icnlab | accepted values |
//! |---|---|---|
//! | `topology`, `k`, `n` | `topology` | `mesh` → `mesh:K×…`, `torus` → `torus:K×…` (`ring:K` for `n = 1`), `fattree` → `fattree:K,N`, `dragonflynew` (`n = 1`) → `dragonfly:K,absolute` |
//! | `routing_function` | `routing` | `dim_order`/`dor` (mesh), `dim_order` (torus), `xy_yx`/`romm`/`valiant` (mesh) → `xy_yx_mesh`/`romm_mesh`/`valiant_mesh`, `valiant` (torus) → `valiant_torus`, `nca`/`anca` (fattree) → `nca_fattree`/`anca_fattree`, `min`/`ugal` (dragonflynew) → `min_dragonflynew`/`ugal_dragonflynew` (with `allow_deadlock`: the check finds BookSim2's class-0 cycle) |
//! | `use_noc_latency` | `channel_delay`, `credit_delay`, `terminal_delay`, `global_delay` | BookSim2's channel latencies: torus 2 (`use_noc_latency = 1`, its default) or 1, dragonfly 10 local / 100 global, else 1; injection and ejection 1 |
//! | `num_vcs`, `vc_buf_size` | `vcs`, `buf` | 1..=16 VCs (a multiple of the classes: 2 for `dim_order` on a torus, `xy_yx`, `romm`, `valiant` on a mesh, 4 for `valiant` on a torus; exactly 2 for `min`, 3 for `ugal`, as BookSim2 uses them); `min_adapt` is refused (several ports per hop with an escape VC) |
//! | `routing_delay`, `vc_alloc_delay`, `sw_alloc_delay`, `st_final_delay` | same (`st_delay`) | |
//! | `credit_delay` | — | 0 or 1 (the figures of docs/booksim.md were measured with 1) |
//! | `vc_allocator`, `sw_allocator` | `vc_alloc`, `sw_alloc` | `islip`; `separable_input_first` → `round_robin` |
//! | `traffic`, `perm_seed` | `traffic.pattern`, `traffic.perm_seed` | `uniform`, `transpose`, `bitcomp`, `bitrev`, `shuffle`, `tornado`, `neighbor`, `randperm`, `asymmetric` |
//! | `injection_process`, `burst_alpha`, `burst_beta` | `traffic.injection`, … | `bernoulli`, `on_off` (`burst_r1` unset) |
//! | `injection_rate`, `injection_rate_uses_flits`, `packet_size` | `load` (flits), `size` | |
//! | `warmup_periods`·`sample_period`, `max_samples`·`sample_period` | `warmup`, `measure` | one fixed window where BookSim2 stops on convergence |
//! | `seed` | `seed` | a number (`time` is not reproducible) |
//! | `sim_type` | — | `latency`, `throughput` (icnlab reports both) |
//!
//! Accepted when equal to what icnlab does: `router = iq`, `alloc_iters = 1`, `sim_count = 1`,
//! `input_speedup = 1`, `output_speedup = 1`, `internal_speedup = 1`, `wait_for_tail_credit = 0`,
//! `hold_switch_for_packet = 0`, `speculative = 0`, `noq = 0`, `vct = 0`, `classes = 1`,
//! `subnets = 1`, `priority = none`, `c = 1`, `use_read_write = 0`, `st_prepare_delay = 0`,
//! `output_delay = 0`, `include_queuing = 1`, `reorder = 0`, `link_failures = 0`, `buf_size = -1`.
//! Ignored (output or stopping rules only): `watch_out`, `print_activity`,
//! `print_csv_results`, `stats_out`, `viewer_trace`, `deadlock_warn_timeout`, `latency_thres`,
//! `warmup_thres`, `acc_warmup_thres`, `stopping_thres`, `acc_stopping_thres`.
//! Any other key is refused by name.

use crate::{Entry, ImportError, Value};
use std::collections::BTreeMap;

/// BookSim2's overall statistics (as it prints them) and the `vc-router` metric that is the
/// same quantity: latency from packet creation to tail arrival in cycles, rates in
/// flits/node/cycle over the measuring window.
pub const STATISTICS: &[(&str, &str)] = &[
    ("Packet latency average", "latency_mean"),
    ("Injected flit rate average", "offered"),
    ("Accepted flit rate average", "accepted"),
];

/// Keys whose only accepted value is icnlab's behaviour.
const FIXED: &[(&str, &str)] = &[
    ("router", "iq"),
    ("alloc_iters", "1"),
    ("sim_count", "1"),
    ("input_speedup", "1"),
    ("output_speedup", "1"),
    ("internal_speedup", "1"),
    ("wait_for_tail_credit", "0"),
    ("hold_switch_for_packet", "0"),
    ("speculative", "0"),
    ("noq", "0"),
    ("vct", "0"),
    ("classes", "1"),
    ("subnets", "1"),
    ("priority", "none"),
    ("c", "1"),
    ("use_read_write", "0"),
    ("st_prepare_delay", "0"),
    ("output_delay", "0"),
    ("include_queuing", "1"),
    ("reorder", "0"),
    ("link_failures", "0"),
    ("buf_size", "-1"),
];

/// Keys that change only BookSim2's output or its stopping rule.
const IGNORED: &[&str] = &[
    "watch_out",
    "print_activity",
    "print_csv_results",
    "stats_out",
    "viewer_trace",
    "deadlock_warn_timeout",
    "latency_thres",
    "warmup_thres",
    "acc_warmup_thres",
    "stopping_thres",
    "acc_stopping_thres",
];

/// Keys [`translate`] reads.
const TRANSLATED: &[&str] = &[
    "topology",
    "k",
    "n",
    "routing_function",
    "use_noc_latency",
    "num_vcs",
    "vc_buf_size",
    "routing_delay",
    "vc_alloc_delay",
    "sw_alloc_delay",
    "st_final_delay",
    "credit_delay",
    "vc_allocator",
    "sw_allocator",
    "traffic",
    "perm_seed",
    "injection_process",
    "burst_alpha",
    "burst_beta",
    "burst_r1",
    "injection_rate",
    "injection_rate_uses_flits",
    "packet_size",
    "warmup_periods",
    "sample_period",
    "max_samples",
    "seed",
    "sim_type",
];

/// The configuration's settings (the last assignment of each key wins).
struct Settings<'a>(BTreeMap<&'a str, &'a Entry>);

impl<'a> Settings<'a> {
    fn err(&self, key: &str, message: String) -> ImportError {
        ImportError::Key {
            at: self.0.get(key).map_or("(default)".into(), |e| e.at.clone()),
            key: key.to_owned(),
            message,
        }
    }

    fn text(&self, key: &str, default: &str) -> Result<String, ImportError> {
        match self.0.get(key).map(|e| &e.value) {
            None => Ok(default.to_owned()),
            Some(Value::List(_)) => Err(self.err(
                key,
                "lists (one value per traffic class) are not modelled: icnlab has one class".into(),
            )),
            Some(v) => Ok(v.text()),
        }
    }

    fn num(&self, key: &str, default: f64) -> Result<f64, ImportError> {
        match self.0.get(key).map(|e| &e.value) {
            None => Ok(default),
            Some(Value::Number(x)) => Ok(*x),
            Some(v) => Err(self.err(key, format!("`{}` is not a number", v.text()))),
        }
    }

    /// A whole number in `lo..=hi`.
    fn int(&self, key: &str, default: i64, lo: i64, hi: i64) -> Result<i64, ImportError> {
        let x = self.num(key, default as f64)?;
        if x.fract() != 0.0 || x < lo as f64 || x > hi as f64 {
            return Err(self.err(key, format!("{x} is not a whole number in {lo}..={hi}")));
        }
        Ok(x as i64)
    }
}

/// The icnlab `vc-router` experiment (TOML text) equivalent to the BookSim2 assignments
/// `entries` ([`crate::parse`]'s), `source` naming them in the header comment.
pub fn translate(source: &str, entries: &[Entry]) -> Result<String, ImportError> {
    // The last assignment of each key wins (overrides come last).
    let mut map = BTreeMap::new();
    for e in entries {
        map.insert(e.key.as_str(), e);
    }
    // Checked in the order written, each key at its last assignment.
    for e in entries
        .iter()
        .filter(|e| std::ptr::eq(map[e.key.as_str()], *e))
    {
        let key = e.key.as_str();
        if let Some((_, want)) = FIXED.iter().find(|(k, _)| *k == key) {
            let same = match &e.value {
                Value::Number(x) => want.parse::<f64>().is_ok_and(|w| w == *x),
                v => v.text() == *want,
            };
            if !same {
                return Err(ImportError::Key {
                    at: e.at.clone(),
                    key: key.to_owned(),
                    message: format!(
                        "`{}` is not modelled: icnlab's router has {key} = {want}",
                        e.value.text()
                    ),
                });
            }
        } else if !IGNORED.contains(&key) && !TRANSLATED.contains(&key) {
            return Err(ImportError::Key {
                at: e.at.clone(),
                key: key.to_owned(),
                message: "not modelled by icnlab (see docs/booksim.md for the keys it imports)"
                    .into(),
            });
        }
    }
    let s = Settings(map);
    let mut out = Vec::<(String, String)>::new();
    let mut traffic = Vec::<(String, String)>::new();
    let q = |v: &str| format!("{v:?}");

    // The network, its routing function and its channel latencies.
    let topology = s.text("topology", "torus")?;
    let k = s.int("k", 8, 2, 64)?;
    let n = s.int("n", 2, 1, 6)?;
    let grid = |sep: &str| vec![k.to_string(); n as usize].join(sep);
    let routing_name = s.text("routing_function", "none")?;
    let vcs = s.int("num_vcs", 16, 1, 16)?;
    let refuse_routing = |what: &str| {
        s.err(
            "routing_function",
            format!("`{routing_name}` on {topology} is not modelled (icnlab imports: {what})"),
        )
    };
    let noc = s.int("use_noc_latency", 1, 0, 1)? == 1;
    let (spec, routing, channel, global) = match topology.as_str() {
        "mesh" | "torus" => {
            let wrap = topology == "torus";
            let spec = match (wrap, n) {
                (true, 1) => format!("ring:{k}"),
                (true, _) => format!("torus:{}", grid("x")),
                (false, _) => format!("mesh:{}", grid("x")),
            };
            // The icnlab name and the VC count its classes split evenly (BookSim2 halves the
            // range per class; odd counts give it overlapping halves).
            let (routing, split) = match (routing_name.as_str(), wrap) {
                ("dim_order", true) => ("dim_order", 2),
                ("dim_order" | "dor", false) => ("dim_order", 1),
                ("xy_yx", false) => ("xy_yx_mesh", 2),
                ("romm", false) => ("romm_mesh", 2),
                ("valiant", false) => ("valiant_mesh", 2),
                ("valiant", true) => ("valiant_torus", 4),
                ("min_adapt", _) => {
                    return Err(s.err(
                        "routing_function",
                        "`min_adapt` is not modelled: it offers several output ports with an escape VC and priorities per hop, and icnlab's router allocates one port's VCs per packet".into(),
                    ));
                }
                _ => {
                    return Err(refuse_routing(
                        "dim_order, and dor, xy_yx, romm, valiant on a mesh; dim_order, valiant on a torus",
                    ));
                }
            };
            if vcs % split != 0 {
                return Err(s.err(
                    "num_vcs",
                    format!("{vcs}: BookSim2's {routing_name} splits the VCs into {split} classes, an uneven count into overlapping ones, icnlab into disjoint ones; use a multiple of {split}"),
                ));
            }
            let channel = if wrap && noc { 2 } else { 1 };
            (spec, routing, channel, None)
        }
        "fattree" => {
            let routing = match routing_name.as_str() {
                "nca" => "nca_fattree",
                "anca" => "anca_fattree",
                _ => return Err(refuse_routing("nca, anca")),
            };
            (format!("fattree:{k},{n}"), routing, 1, None)
        }
        "dragonflynew" => {
            if n != 1 {
                return Err(s.err(
                    "n",
                    format!("{n}: BookSim2's dragonflynew builds n = 1 only"),
                ));
            }
            let routing = match routing_name.as_str() {
                "min" if vcs == 2 => "min_dragonflynew",
                "ugal" if vcs == 3 => "ugal_dragonflynew",
                "min" | "ugal" => {
                    return Err(s.err(
                        "num_vcs",
                        format!(
                            "{vcs}: BookSim2's {routing_name} uses exactly {} VCs (VC = its phase)",
                            if routing_name == "min" { 2 } else { 3 }
                        ),
                    ));
                }
                _ => return Err(refuse_routing("min, ugal")),
            };
            (format!("dragonfly:{k},absolute"), routing, 10, Some(100))
        }
        other => {
            return Err(s.err(
                "topology",
                format!(
                    "`{other}` is not modelled (icnlab imports mesh, torus, fattree, dragonflynew)"
                ),
            ));
        }
    };
    out.push(("topology".into(), q(&spec)));
    out.push(("routing".into(), q(routing)));
    if routing == "ugal_dragonflynew" {
        out.push(("allow_deadlock".into(), "true".into()));
    }
    out.push(("vcs".into(), vcs.to_string()));
    out.push(("buf".into(), s.int("vc_buf_size", 8, 1, 255)?.to_string()));
    out.push(("channel_delay".into(), channel.to_string()));
    out.push(("credit_delay".into(), channel.to_string()));
    out.push(("terminal_delay".into(), "1".into()));
    if let Some(g) = global {
        out.push(("global_delay".into(), g.to_string()));
    }
    s.int("credit_delay", 0, 0, 1).map_err(|_| {
        s.err(
            "credit_delay",
            "only 0 or 1 is modelled (the credit takes the channel's latency)".into(),
        )
    })?;
    for (b, i) in [
        ("routing_delay", "routing_delay"),
        ("vc_alloc_delay", "vc_alloc_delay"),
        ("sw_alloc_delay", "sw_alloc_delay"),
        ("st_final_delay", "st_delay"),
    ] {
        out.push((i.into(), s.int(b, 1, 0, 16)?.to_string()));
    }
    for (b, i) in [("vc_allocator", "vc_alloc"), ("sw_allocator", "sw_alloc")] {
        let v = match s.text(b, "islip")?.as_str() {
            "islip" => "islip",
            "separable_input_first" => "round_robin",
            other => {
                return Err(s.err(
                    b,
                    format!("`{other}` is not modelled (islip, separable_input_first)"),
                ));
            }
        };
        out.push((i.into(), q(v)));
    }

    // Traffic and injection.
    let pattern = match s.text("traffic", "uniform")?.as_str() {
        "uniform" => "uniform",
        "transpose" => "transpose",
        "bitcomp" => "bit_complement",
        "bitrev" => "bitrev",
        "shuffle" => "shuffle",
        "tornado" => "tornado",
        "neighbor" => "neighbor",
        "randperm" => "random_permutation",
        "asymmetric" => "asymmetric",
        other => {
            return Err(s.err(
                "traffic",
                format!("`{other}` is not modelled (uniform, transpose, bitcomp, bitrev, shuffle, tornado, neighbor, randperm, asymmetric)"),
            ));
        }
    };
    traffic.push(("pattern".into(), q(pattern)));
    if s.0.contains_key("perm_seed") {
        let seed = s.int("perm_seed", 0, 0, i64::from(u32::MAX))?;
        traffic.push(("perm_seed".into(), seed.to_string()));
    }
    match s.text("injection_process", "bernoulli")?.as_str() {
        "bernoulli" => {}
        "on_off" => {
            if s.num("burst_r1", -1.0)? >= 0.0 {
                return Err(s.err(
                    "burst_r1",
                    "not modelled: icnlab derives the on rate from burst_alpha and burst_beta"
                        .into(),
                ));
            }
            traffic.push(("injection".into(), q("on_off")));
            for key in ["burst_alpha", "burst_beta"] {
                traffic.push((key.into(), s.num(key, 0.5)?.to_string()));
            }
        }
        other => {
            return Err(s.err(
                "injection_process",
                format!("`{other}` is not modelled (bernoulli, on_off)"),
            ));
        }
    }
    let size = s.int("packet_size", 1, 1, 65536)?;
    let rate = s.num("injection_rate", 0.1)?;
    let flits = s.int("injection_rate_uses_flits", 0, 0, 1)? == 1;
    let load = if flits { rate } else { rate * size as f64 };
    if !(load > 0.0 && load <= 1.0) {
        return Err(s.err(
            "injection_rate",
            format!("{load} flits/node/cycle is outside (0, 1]"),
        ));
    }
    out.push(("size".into(), size.to_string()));
    out.push(("load".into(), load.to_string()));

    // Windows and seed.
    let period = s.int("sample_period", 1000, 1, 1 << 30)?;
    let warmup = s.int("warmup_periods", 3, 0, 1 << 20)? * period;
    let samples = s.int("max_samples", 10, 1, 1 << 20)?;
    out.push(("warmup".into(), warmup.to_string()));
    out.push(("measure".into(), (samples * period).to_string()));
    match s.text("sim_type", "latency")?.as_str() {
        "latency" | "throughput" => {}
        other => {
            return Err(s.err(
                "sim_type",
                format!("`{other}` is not modelled (latency, throughput)"),
            ));
        }
    }
    let seed = match s.0.get("seed").map(|e| &e.value) {
        Some(Value::Text(t)) if t == "time" => {
            return Err(s.err("seed", "`time` is not reproducible: give a number".into()));
        }
        _ => s.int("seed", 0, 0, i64::MAX)?,
    };

    let stats: Vec<String> = STATISTICS
        .iter()
        .map(|(theirs, ours)| format!("{theirs} = {ours}"))
        .collect();
    let mut text = format!(
        "# Imported from the BookSim2 configuration {source} by `icnlab import booksim`.\n\
         # BookSim2's statistics are icnlab's metrics: {}.\n\
         model = \"vc-router\"\n\
         title = {}\n\
         seed = {seed}\n\
         replications = 1\n\
         on_deadlock = \"report\"\n",
        stats.join(", "),
        q(&format!("BookSim2 {source}"))
    );
    for (key, v) in out {
        text.push_str(&format!("{key} = {v}\n"));
    }
    text.push_str("\n[traffic]\n");
    for (key, v) in traffic {
        text.push_str(&format!("{key} = {v}\n"));
    }
    Ok(text)
}
