//! Workloads shared by the X-Switch and VC-router models (and any fabric the open-loop harness
//! drives), so all see the same traffic. The pattern type is icn-topo's [`TrafficPattern`], the
//! one of every model and fabric.
//!
//! Messages arrive at each source as a Bernoulli process (BookSim's convention): in every
//! cycle a new message is created with probability `rate = load / mean size`, drawn here as
//! geometric gaps so the cost is per message, not per cycle. Destinations:
//!
//! | pattern          | destination of source `s` (grid `X×Y`, `s = (x, y)`; `n` endpoints) |
//! |------------------|------------------------------------------------------------------------|
//! | `uniform`        | uniform over all `n` endpoints, `s` itself included (as BookSim)       |
//! | `hotspot`        | `hotspot_node` with probability `hotspot_fraction`, else uniform       |
//! | `transpose`      | `(y, x)`; needs a square grid                                          |
//! | `bit_complement` | `s XOR (n − 1)`; needs `n` a power of two (BookSim2's `bitcomp`)       |
//! | `neighbor_x`     | `(x + 1 mod X, y)` on a grid, `s + 1 mod n` otherwise; `neighbour`, its earlier (X-Switch) name, is still read — not BookSim2's `neighbor` |
//! | `trace`          | the rows of `trace_file`: `cycle src dst size` per line, `#` comments  |
//! | `random_permutation` | `π(s)`, a permutation of the endpoints fixed by `perm_seed` (BookSim's `randperm` with `perm_seed`; `randperm` is read too) |
//! | `group_shift`    | a uniform endpoint of the next dragonfly group (Kim et al.'s adversarial pattern) |
//! | `bitrev`, `shuffle` | BookSim2's bit permutations: the address bits reversed / rotated left by one; need `n` a power of two |
//! | `tornado`, `neighbor` | BookSim2's digit permutations of a mesh or torus: every coordinate `+ ⌈k/2⌉ − 1` / `+ 1` mod `k` |
//! | `asymmetric`     | BookSim2's: `s mod n/2`, in the upper half with probability ½            |
//!
//! `random_permutation` and `group_shift` are [`icn_topo::traffic`]'s patterns bound to the
//! network, which the model binds into the config ([`TrafficConfig::bind`], `vc-router` only)
//! before validation; BookSim2's permutations are icn-topo's functions, on the model's grid or
//! (vc-router) the bound network.
//!
//! Sizes are `size` units (bytes for X-Switch, flits for the VC router), or with
//! `large_fraction > 0` the bimodal mix `size_large` with that probability (the MyVIA paper's
//! 128 B / 4 KB mix is `size = 128, size_large = 4096`).

use icn_engine::rng::{Rng, SimRng};
use icn_engine::{Context, Invalid};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Grid shape, for dimension-order routing and the grid traffic patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub x: usize,
    pub y: usize,
    pub wrap: bool,
}

/// `traffic.pattern` of the open-loop harness: the module's table.
pub use icn_topo::traffic::TrafficPattern;

/// A pattern of [`icn_topo::traffic`] bound to the model's network (not a config key: the
/// model fills it in). Two bindings compare equal: the binding follows from the other keys.
#[derive(Clone, Debug)]
pub struct Bound(pub Arc<icn_topo::traffic::Traffic>);

impl PartialEq for Bound {
    fn eq(&self, _: &Bound) -> bool {
        true
    }
}

/// How messages arrive at a source (BookSim2's `injection_process`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Injection {
    /// A message in each cycle with probability `rate` (BookSim2's `bernoulli`).
    #[default]
    Bernoulli,
    /// BookSim2's `on_off`: a two-state Markov chain per source, on → off with probability
    /// `burst_beta` and off → on with `burst_alpha` per cycle; in an on cycle a message with
    /// probability `r1 = rate·(α + β)/α`, so the mean rate is `rate`. Sources start on or off
    /// with probability ½ each. Drawn as run lengths (geometric), so the cost stays per
    /// message.
    OnOff,
}

/// The `[traffic]` table of both models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    pub pattern: TrafficPattern,
    pub hotspot_node: usize,
    pub hotspot_fraction: f64,
    pub trace_file: String,
    /// Seed of the `random_permutation` (fixed across replications, as BookSim's `perm_seed`).
    pub perm_seed: u64,
    /// `bernoulli` or `on_off` (BookSim2's `injection_process`).
    pub injection: Injection,
    /// `on_off`: per-cycle probability off → on (BookSim2's `burst_alpha`), in (0, 1].
    pub burst_alpha: f64,
    /// `on_off`: per-cycle probability on → off (BookSim2's `burst_beta`), in (0, 1].
    pub burst_beta: f64,
    /// The network's pattern for `random_permutation` and `group_shift`.
    #[serde(skip)]
    pub bound: Option<Bound>,
}

impl TrafficConfig {
    /// Binds `random_permutation` or `group_shift` to `net` (whose terminals are the
    /// endpoints); other patterns need nothing. An error names `traffic.pattern`.
    pub fn bind(&mut self, net: &icn_topo::Network) -> Result<(), Invalid> {
        let bound = match self.pattern {
            TrafficPattern::RandomPermutation
            | TrafficPattern::GroupShift
            | TrafficPattern::Tornado
            | TrafficPattern::Neighbor
            // A grid the router of any radix runs (a torus with dim_order) has no `Grid`.
            | TrafficPattern::Transpose => true,
            _ => false,
        };
        if !bound {
            return Ok(());
        }
        let t = icn_topo::traffic::Traffic::new(self.pattern, net, self.perm_seed)
            .map_err(|e| Invalid::new("traffic.pattern", e.to_string()))?;
        self.bound = Some(Bound(Arc::new(t)));
        Ok(())
    }
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: TrafficPattern::Uniform,
            hotspot_node: 0,
            hotspot_fraction: 0.2,
            trace_file: String::new(),
            perm_seed: 1,
            injection: Injection::Bernoulli,
            burst_alpha: 0.5,
            burst_beta: 0.5,
            bound: None,
        }
    }
}

/// Message-size distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizes {
    pub size: u32,
    pub size_large: u32,
    pub large_fraction: f64,
}

impl Sizes {
    pub fn mean(&self) -> f64 {
        f64::from(self.size) * (1.0 - self.large_fraction)
            + f64::from(self.size_large) * self.large_fraction
    }

    pub fn validate(&self, max: u32) -> Result<(), Invalid> {
        let range = format!("1 ..= {max}");
        Invalid::check((1..=max).contains(&self.size), "size", &range, self.size)?;
        Invalid::check(
            (0.0..=1.0).contains(&self.large_fraction),
            "large_fraction",
            "0 ..= 1",
            self.large_fraction,
        )?;
        if self.large_fraction > 0.0 {
            Invalid::check(
                (1..=max).contains(&self.size_large),
                "size_large",
                &range,
                self.size_large,
            )?;
        }
        Ok(())
    }

    fn draw(&self, rng: &mut SimRng) -> u32 {
        if self.large_fraction > 0.0 && rng.random::<f64>() < self.large_fraction {
            self.size_large
        } else {
            self.size
        }
    }
}

/// One trace-file row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRow {
    pub cycle: u64,
    pub src: usize,
    pub dst: usize,
    pub size: u32,
}

/// A created message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub dst: usize,
    pub size: u32,
}

/// Resolves the file names in a `topology = "file:PATH"` (or `graph:file:PATH`) spec and `traffic.trace_file`
/// against the experiment file's folder.
pub fn resolve_paths(topology: &mut String, t: &mut TrafficConfig, ctx: &Context) {
    *topology = ctx.resolve_spec(topology);
    if !t.trace_file.is_empty() {
        t.trace_file = ctx.resolve(&t.trace_file).display().to_string();
    }
}

/// The warm-up / measurement / drain windows both models share, each bounded so that a
/// typo cannot ask for centuries of simulated time.
pub fn check_windows(warmup: u64, measure: u64, drain: u64) -> Result<(), Invalid> {
    Invalid::check(
        (1..=1 << 36).contains(&measure),
        "measure",
        "1 ..= 2^36 cycles",
        measure,
    )?;
    Invalid::check(warmup <= 1 << 36, "warmup", "0 ..= 2^36 cycles", warmup)?;
    Invalid::check(drain <= 1 << 36, "drain", "0 ..= 2^36 cycles", drain)
}

/// Checks the injection process for a per-source message `rate`: on/off needs its on-state
/// rate `rate·(α + β)/α` to be at most one message per cycle.
pub fn check_injection(t: &TrafficConfig, rate: f64) -> Result<(), Invalid> {
    if t.injection == Injection::Bernoulli {
        return Ok(());
    }
    for (key, v) in [
        ("traffic.burst_alpha", t.burst_alpha),
        ("traffic.burst_beta", t.burst_beta),
    ] {
        Invalid::check(v > 0.0 && v <= 1.0, key, "(0, 1]", v)?;
    }
    let r1 = rate * (t.burst_alpha + t.burst_beta) / t.burst_alpha;
    if r1 > 1.0 {
        return Err(Invalid::new(
            "traffic.burst_alpha",
            format!(
                "on_off at {rate:.4} messages/cycle needs a message in {r1:.3} of the on cycles; \
                 raise burst_alpha or lower burst_beta so that rate·(α + β)/α ≤ 1"
            ),
        ));
    }
    Ok(())
}

/// Checks the traffic table against the network size and returns the parsed trace, if any.
pub fn validate(
    t: &TrafficConfig,
    n: usize,
    grid: Option<Grid>,
    max_size: u32,
) -> Result<Vec<TraceRow>, Invalid> {
    match t.pattern {
        TrafficPattern::Hotspot => {
            Invalid::check(
                t.hotspot_node < n,
                "traffic.hotspot_node",
                &format!("0 ..= {}", n - 1),
                t.hotspot_node,
            )?;
            Invalid::check(
                (0.0..=1.0).contains(&t.hotspot_fraction),
                "traffic.hotspot_fraction",
                "0 ..= 1",
                t.hotspot_fraction,
            )?;
        }
        TrafficPattern::Transpose => {
            if !matches!(grid, Some(g) if g.x == g.y) && t.bound.is_none() {
                return Err(Invalid::new(
                    "traffic.pattern",
                    "transpose needs a square mesh or torus",
                ));
            }
        }
        TrafficPattern::BitComplement => {
            if !n.is_power_of_two() {
                return Err(Invalid::new(
                    "traffic.pattern",
                    format!("bit_complement needs a power-of-two number of endpoints, got {n}"),
                ));
            }
        }
        TrafficPattern::Trace => {
            let text = icn_engine::input::read_to_string(&t.trace_file).map_err(|e| {
                Invalid::new(
                    "traffic.trace_file",
                    format!("cannot read `{}`: {e}", t.trace_file),
                )
            })?;
            // A bad row names the trace file, not only the experiment file's key.
            return parse_trace(&text, n, max_size).map_err(|e| Invalid {
                message: format!("`{}` {}", t.trace_file, e.message),
                ..e
            });
        }
        TrafficPattern::RandomPermutation | TrafficPattern::GroupShift => {
            if t.bound.is_none() {
                return Err(Invalid::new(
                    "traffic.pattern",
                    "random_permutation and group_shift need the vc-router model (an icn-topo network)",
                ));
            }
        }
        TrafficPattern::BitReverse | TrafficPattern::Shuffle => {
            if !n.is_power_of_two() {
                return Err(Invalid::new(
                    "traffic.pattern",
                    format!("bitrev and shuffle need a power-of-two number of endpoints, got {n}"),
                ));
            }
        }
        TrafficPattern::Tornado | TrafficPattern::Neighbor => {
            if grid.is_none() && t.bound.is_none() {
                return Err(Invalid::new(
                    "traffic.pattern",
                    "tornado and neighbor need a mesh or torus",
                ));
            }
        }
        TrafficPattern::Uniform | TrafficPattern::NeighborX | TrafficPattern::Asymmetric => {}
    }
    Ok(Vec::new())
}

/// Parses `cycle src dst size` rows, sorted by cycle afterwards (stable).
pub fn parse_trace(text: &str, n: usize, max_size: u32) -> Result<Vec<TraceRow>, Invalid> {
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let v: Vec<u64> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let bad = |m: &str| Invalid::new("traffic.trace_file", format!("line {}: {m}", i + 1));
        let [cycle, src, dst, size] = v[..] else {
            return Err(bad("expected four integers: cycle src dst size"));
        };
        if src as usize >= n || dst as usize >= n {
            return Err(bad(&format!("endpoint out of range 0 ..= {}", n - 1)));
        }
        if size == 0 || size > u64::from(max_size) {
            return Err(bad(&format!("size must be in 1 ..= {max_size}")));
        }
        rows.push(TraceRow {
            cycle,
            src: src as usize,
            dst: dst as usize,
            size: size as u32,
        });
    }
    rows.sort_by_key(|r| r.cycle);
    Ok(rows)
}

/// One source's message generator (its own RNG stream).
pub struct Source {
    rng: SimRng,
    rate: f64,
    /// Cycle of the next arrival.
    pub next: u64,
    src: usize,
    /// For traces: this source's rows, next index.
    trace: Vec<TraceRow>,
    trace_at: usize,
    /// On/off: (α, β), the end of the current on run and the first cycle not yet drawn.
    on_off: Option<OnOff>,
}

#[derive(Clone, Copy, Debug)]
struct OnOff {
    alpha: f64,
    beta: f64,
    on_end: u64,
    cursor: u64,
}

impl Source {
    /// `trace`: `Some(rows)` when the workload is a trace (then `rate` is ignored).
    pub fn new(src: usize, rate: f64, mut rng: SimRng, trace: Option<&[TraceRow]>) -> Source {
        let (trace, next) = match trace {
            Some(rows) => {
                let mine: Vec<TraceRow> = rows.iter().filter(|r| r.src == src).copied().collect();
                let next = mine.first().map_or(u64::MAX, |r| r.cycle);
                (mine, next)
            }
            None if rate > 0.0 => (Vec::new(), gap(&mut rng, rate) - 1),
            None => (Vec::new(), u64::MAX),
        };
        Source {
            rng,
            rate,
            next,
            src,
            trace,
            trace_at: 0,
            on_off: None,
        }
    }

    /// This (non-trace) source with BookSim2's on/off process at its mean `rate` (see
    /// [`Injection::OnOff`]; [`check_injection`] has checked `α`, `β` and the on-state rate).
    pub fn on_off(mut self, alpha: f64, beta: f64) -> Source {
        if self.is_trace() || self.rate <= 0.0 {
            return self;
        }
        let (start, on_end) = if self.rng.random::<bool>() {
            (0, gap(&mut self.rng, beta))
        } else {
            let s = gap(&mut self.rng, alpha);
            (s, s + gap(&mut self.rng, beta))
        };
        self.rate *= (alpha + beta) / alpha;
        let mut st = OnOff {
            alpha,
            beta,
            on_end,
            cursor: start,
        };
        self.next = self.next_on_off(&mut st);
        self.on_off = Some(st);
        self
    }

    /// The next arrival of the on/off chain from `st.cursor` on: in the current on run, or
    /// (memoryless) in a later one after an off run.
    fn next_on_off(&mut self, st: &mut OnOff) -> u64 {
        // Saturating: a tiny rate or burst probability gives gaps past u64 (never), and an
        // on run that would end past the clock means no further arrival.
        loop {
            let c = st.cursor.saturating_add(gap(&mut self.rng, self.rate) - 1);
            if c < st.on_end {
                st.cursor = c + 1;
                return c;
            }
            if st.on_end == u64::MAX {
                return u64::MAX;
            }
            let start = st.on_end.saturating_add(gap(&mut self.rng, st.alpha));
            st.on_end = start.saturating_add(gap(&mut self.rng, st.beta));
            st.cursor = start;
        }
    }

    /// Sources reading a trace ignore `rate`.
    pub fn is_trace(&self) -> bool {
        !self.trace.is_empty()
    }

    /// The message due at `self.next`; advances `next`.
    pub fn arrive(&mut self, w: &Workload) -> Arrival {
        if self.is_trace() {
            let r = self.trace[self.trace_at];
            self.trace_at += 1;
            self.next = self.trace.get(self.trace_at).map_or(u64::MAX, |r| r.cycle);
            return Arrival {
                dst: r.dst,
                size: r.size,
            };
        }
        let a = Arrival {
            dst: w.destination(self.src, &mut self.rng),
            size: w.sizes.draw(&mut self.rng),
        };
        match self.on_off {
            Some(mut st) => {
                self.next = self.next_on_off(&mut st);
                self.on_off = Some(st);
            }
            None => self.next = self.next.saturating_add(gap(&mut self.rng, self.rate)),
        }
        a
    }
}

/// Cycles to the next Bernoulli(p) success, ≥ 1.
fn gap(rng: &mut SimRng, p: f64) -> u64 {
    if p >= 1.0 {
        return 1;
    }
    let u: f64 = rng.random();
    // ln(1 − p) from ln_1p: `(1.0 - p).ln()` is 0 for p < 1.1e-16 (1 − p rounds to 1),
    // which made every gap 1 — the *highest* load for the lowest. Saturating: at tiny loads
    // the gap exceeds u64 (`as` saturates to u64::MAX: never).
    ((((1.0 - u).ln() / (-p).ln_1p()).floor()) as u64).saturating_add(1)
}

/// Destination rule and size distribution.
#[derive(Clone, Debug)]
pub struct Workload {
    pub pattern: TrafficPattern,
    pub n: usize,
    pub grid: Option<Grid>,
    pub hotspot_node: usize,
    pub hotspot_fraction: f64,
    pub sizes: Sizes,
    pub bound: Option<Bound>,
}

impl Workload {
    pub fn new(t: &TrafficConfig, n: usize, grid: Option<Grid>, sizes: Sizes) -> Workload {
        Workload {
            pattern: t.pattern,
            n,
            grid,
            hotspot_node: t.hotspot_node,
            hotspot_fraction: t.hotspot_fraction,
            sizes,
            bound: t.bound.clone(),
        }
    }

    pub fn destination(&self, s: usize, rng: &mut SimRng) -> usize {
        let n = self.n;
        match self.pattern {
            TrafficPattern::Uniform | TrafficPattern::Trace => rng.random_range(0..n),
            TrafficPattern::Hotspot if rng.random::<f64>() < self.hotspot_fraction => {
                self.hotspot_node
            }
            TrafficPattern::Hotspot => rng.random_range(0..n),
            TrafficPattern::Transpose if self.bound.is_none() => {
                let g = self.grid.expect("validated: square grid");
                (s % g.x) * g.x + s / g.x
            }
            TrafficPattern::BitComplement => s ^ (n - 1),
            TrafficPattern::NeighborX => match self.grid {
                Some(g) => (s / g.x) * g.x + (s % g.x + 1) % g.x,
                None => (s + 1) % n,
            },
            TrafficPattern::BitReverse => {
                icn_topo::traffic::bit_reverse(s as u32, n as u32) as usize
            }
            TrafficPattern::Shuffle => icn_topo::traffic::shuffle(s as u32, n as u32) as usize,
            TrafficPattern::Asymmetric => {
                icn_topo::traffic::asymmetric(s as u32, n as u32, rng.random::<bool>()) as usize
            }
            TrafficPattern::Tornado | TrafficPattern::Neighbor if self.bound.is_none() => {
                let g = self.grid.expect("validated: a grid");
                let dims = [g.x as u32, g.y as u32];
                let dims = &dims[..if g.y > 1 { 2 } else { 1 }];
                if self.pattern == TrafficPattern::Tornado {
                    icn_topo::traffic::tornado(s as u32, dims) as usize
                } else {
                    icn_topo::traffic::neighbor(s as u32, dims) as usize
                }
            }
            TrafficPattern::RandomPermutation
            | TrafficPattern::GroupShift
            | TrafficPattern::Transpose
            | TrafficPattern::Tornado
            | TrafficPattern::Neighbor => {
                let t = self
                    .bound
                    .as_ref()
                    .expect("validated: bound to the network");
                t.0.destination(s as u32, rng) as usize
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::rng::stream;

    fn workload(p: TrafficPattern) -> Workload {
        let t = TrafficConfig {
            pattern: p,
            hotspot_fraction: 1.0,
            hotspot_node: 5,
            ..Default::default()
        };
        Workload::new(
            &t,
            16,
            Some(Grid {
                x: 4,
                y: 4,
                wrap: false,
            }),
            Sizes {
                size: 4,
                size_large: 0,
                large_fraction: 0.0,
            },
        )
    }

    #[test]
    fn permutation_patterns() {
        let mut rng = stream(1, 0);
        let w = workload(TrafficPattern::Transpose);
        assert_eq!(w.destination(1, &mut rng), 4); // (1,0) → (0,1)
        assert_eq!(w.destination(6, &mut rng), 9); // (2,1) → (1,2)
        assert_eq!(
            workload(TrafficPattern::BitComplement).destination(3, &mut rng),
            12
        );
        assert_eq!(
            workload(TrafficPattern::NeighborX).destination(7, &mut rng),
            4
        ); // (3,1) → (0,1)
        assert_eq!(
            workload(TrafficPattern::Hotspot).destination(0, &mut rng),
            5
        );
    }

    #[test]
    fn bernoulli_rate_is_respected() {
        let w = workload(TrafficPattern::Uniform);
        let mut s = Source::new(0, 0.1, stream(3, 0), None);
        let mut count = 0;
        while s.next < 100_000 {
            s.arrive(&w);
            count += 1;
        }
        // Binomial(100000, 0.1): sd ≈ 95; allow 5 sd.
        assert!((count as i64 - 10_000).abs() < 475, "{count}");
    }

    #[test]
    fn on_off_keeps_the_mean_rate_and_bursts() {
        // α = 0.05, β = 0.2: on a fifth of the time, at 5·0.05 = 0.25 in on cycles.
        let w = workload(TrafficPattern::Uniform);
        let mut s = Source::new(0, 0.05, stream(9, 0), None).on_off(0.05, 0.2);
        let mut at = Vec::new();
        while s.next < 400_000 {
            at.push(s.next);
            s.arrive(&w);
        }
        // Mean 20 000; the count's sd is larger than Bernoulli's (bursts): allow 8 %.
        assert!((at.len() as i64 - 20_000).abs() < 1_600, "{}", at.len());
        assert!(
            at.windows(2).all(|p| p[1] > p[0]),
            "one message per cycle at most"
        );
        // Burstiness: gaps of 1–3 cycles (inside an on run) are far more common than for a
        // Bernoulli source of the same rate (P(gap ≤ 3) = 1 − 0.95³ ≈ 14 %).
        let short = at.windows(2).filter(|p| p[1] - p[0] <= 3).count();
        assert!(short * 100 / at.len() > 30, "{short} of {}", at.len());
        let t = TrafficConfig {
            injection: Injection::OnOff,
            burst_alpha: 0.05,
            burst_beta: 0.2,
            ..Default::default()
        };
        assert!(check_injection(&t, 0.2).is_ok());
        assert!(check_injection(&t, 0.21).is_err());
        let bad = TrafficConfig {
            burst_beta: 0.0,
            ..t
        };
        assert!(check_injection(&bad, 0.01).is_err());
    }

    #[test]
    fn trace_rows_and_errors() {
        let rows = parse_trace("# c s d z\n5 1 2 8\n0 0 3 4\n", 4, 16).unwrap();
        assert_eq!(
            rows[0],
            TraceRow {
                cycle: 0,
                src: 0,
                dst: 3,
                size: 4
            }
        );
        let mut s = Source::new(1, 0.0, stream(1, 1), Some(&rows));
        assert_eq!(s.next, 5);
        assert_eq!(
            s.arrive(&workload(TrafficPattern::Trace)),
            Arrival { dst: 2, size: 8 }
        );
        assert_eq!(s.next, u64::MAX);
        assert!(
            parse_trace("0 0 9 4\n", 4, 16)
                .unwrap_err()
                .message
                .contains("line 1")
        );
        assert!(parse_trace("0 0 1\n", 4, 16).is_err());
        assert!(parse_trace("0 0 1 0\n", 4, 16).is_err());
    }

    #[test]
    fn pattern_preconditions() {
        let t = TrafficConfig {
            pattern: TrafficPattern::Transpose,
            ..Default::default()
        };
        assert!(
            validate(
                &t,
                8,
                Some(Grid {
                    x: 4,
                    y: 2,
                    wrap: false
                }),
                9
            )
            .is_err()
        );
        let t = TrafficConfig {
            pattern: TrafficPattern::BitComplement,
            ..Default::default()
        };
        assert!(validate(&t, 12, None, 9).is_err());
        let t = TrafficConfig {
            pattern: TrafficPattern::Hotspot,
            hotspot_node: 16,
            ..Default::default()
        };
        assert_eq!(
            validate(&t, 16, None, 9).unwrap_err().key,
            "traffic.hotspot_node"
        );
    }
}
