//! `[placement]`: which fabric endpoint each rank runs on.
//!
//! | `kind` | rank `r` runs on |
//! |---|---|
//! | `linear` (default) | endpoint `r` |
//! | `random` | entry `r` of a permutation of every endpoint drawn from `seed` (Fisher–Yates on the run's PCG streams): the ranks spread over the whole fabric, the same for every replication and thread count |
//! | `file` | the endpoint on line `r + 1` of `file` (one per line, `#` starts a comment; as many lines as ranks, each endpoint once) |
//!
//! Programs, traces and collectives keep speaking of ranks; the fabric is wrapped in
//! [`Placed`], which turns ranks into endpoints on the way in and back on the way out, so no
//! workload knows about placement. Linear placement wraps nothing.

use icn_engine::Invalid;
use icn_engine::rng::{self, Rng};
use icn_fabric::{
    ChannelLoad, Delivery, Fabric, FabricError, Nouns, Packet, Ps, Refused, ZeroLoad,
};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementKind {
    #[default]
    Linear,
    Random,
    File,
}

/// `[placement]` (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlacementConfig {
    pub kind: PlacementKind,
    /// random: the permutation's seed.
    pub seed: u64,
    /// file: endpoints of ranks 0, 1, ..., one per line, relative to the experiment file.
    pub file: String,
}

/// Rank ↔ endpoint, both ways.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// `endpoint[r]`: where rank `r` runs.
    pub endpoint: Vec<usize>,
    /// `rank[e]`: the rank on endpoint `e`, or `usize::MAX`.
    rank: Vec<usize>,
}

impl Placement {
    fn new(endpoint: Vec<usize>, endpoints: usize) -> Placement {
        let mut rank = vec![usize::MAX; endpoints];
        for (r, &e) in endpoint.iter().enumerate() {
            rank[e] = r;
        }
        Placement { endpoint, rank }
    }

    /// The rank on endpoint `e` (every endpoint a delivery names has one).
    pub fn rank(&self, e: usize) -> usize {
        self.rank[e]
    }

    /// Rank `r` on endpoint `r` for every rank.
    pub fn is_linear(&self) -> bool {
        self.endpoint.iter().enumerate().all(|(r, &e)| r == e)
    }
}

impl PlacementConfig {
    /// Places `ranks` ranks on a fabric of `endpoints` endpoints (`file` resolved against
    /// the experiment file's folder by `resolve`).
    pub fn place(
        &self,
        ranks: usize,
        endpoints: usize,
        resolve: &dyn Fn(&str) -> std::path::PathBuf,
    ) -> Result<Placement, Invalid> {
        let endpoint = match self.kind {
            PlacementKind::Linear => {
                Invalid::check(
                    self.file.is_empty(),
                    "placement.file",
                    "empty unless kind = \"file\"",
                    &self.file,
                )?;
                (0..ranks).collect()
            }
            PlacementKind::Random => {
                let mut all: Vec<usize> = (0..endpoints).collect();
                let mut g = rng::stream(self.seed, 0);
                for i in (1..all.len()).rev() {
                    all.swap(i, g.random_range(0..=i));
                }
                all.truncate(ranks);
                all
            }
            PlacementKind::File => {
                Invalid::check(
                    !self.file.is_empty(),
                    "placement.file",
                    "a file of endpoints, one per line",
                    "nothing",
                )?;
                read_file(&resolve(&self.file), ranks, endpoints)?
            }
        };
        Ok(Placement::new(endpoint, endpoints))
    }
}

/// A placement file: one endpoint per line for ranks 0, 1, ...; errors name file:line.
fn read_file(path: &Path, ranks: usize, endpoints: usize) -> Result<Vec<usize>, Invalid> {
    let bad = |m: String| Invalid::new("placement.file", m);
    let text = icn_engine::input::read_to_string(path)
        .map_err(|e| bad(format!("cannot read `{}`: {e}", path.display())))?;
    let mut taken: Vec<Option<usize>> = vec![None; endpoints];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), i + 1);
        let word = line.split('#').next().unwrap_or("").trim();
        if word.is_empty() {
            continue;
        }
        let e = word
            .parse::<usize>()
            .ok()
            .filter(|&e| e < endpoints)
            .ok_or_else(|| {
                bad(format!(
                    "{at}: `{}`: an endpoint must be in 0 ..= {} (the fabric's endpoints)",
                    word.escape_debug(),
                    endpoints.saturating_sub(1)
                ))
            })?;
        if let Some(line) = taken[e] {
            return Err(bad(format!(
                "{at}: endpoint {e} already holds the rank of line {line}"
            )));
        }
        taken[e] = Some(i + 1);
        out.push(e);
        if out.len() > ranks {
            return Err(bad(format!(
                "{at}: more lines than the workload's {ranks} ranks"
            )));
        }
    }
    if out.len() < ranks {
        return Err(bad(format!(
            "{}: places {} ranks; the workload has {ranks}",
            path.display(),
            out.len()
        )));
    }
    Ok(out)
}

/// A fabric whose endpoints are addressed by rank (see the module documentation).
pub struct Placed {
    inner: Box<dyn Fabric>,
    place: Arc<Placement>,
}

impl Placed {
    pub fn new(inner: Box<dyn Fabric>, place: Arc<Placement>) -> Placed {
        Placed { inner, place }
    }
}

impl Fabric for Placed {
    fn endpoints(&self) -> usize {
        self.place.endpoint.len()
    }

    fn cycle_ps(&self) -> Ps {
        self.inner.cycle_ps()
    }

    fn now(&self) -> Ps {
        self.inner.now()
    }

    fn max_packet_bytes(&self) -> u32 {
        self.inner.max_packet_bytes()
    }

    fn inject(&mut self, p: Packet) {
        self.inner.inject(Packet {
            src: self.place.endpoint[p.src],
            dst: self.place.endpoint[p.dst],
            ..p
        });
    }

    fn input_capacity(&self) -> Option<usize> {
        self.inner.input_capacity()
    }

    fn input_queued(&self, src: usize) -> usize {
        self.inner.input_queued(self.place.endpoint[src])
    }

    fn can_inject(&self, src: usize) -> bool {
        self.inner.can_inject(self.place.endpoint[src])
    }

    /// Hands a refused packet back in ranks, as it came.
    fn try_inject(&mut self, p: Packet) -> Result<(), Refused> {
        self.inner
            .try_inject(Packet {
                src: self.place.endpoint[p.src],
                dst: self.place.endpoint[p.dst],
                ..p
            })
            .map_err(|_| Refused(p))
    }

    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError> {
        let from = out.len();
        let r = self.inner.advance(until, out);
        for d in &mut out[from..] {
            d.packet.src = self.place.rank(d.packet.src);
            d.packet.dst = self.place.rank(d.packet.dst);
        }
        r
    }

    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError> {
        let (src, dst) = (self.place.endpoint[src], self.place.endpoint[dst]);
        self.inner.zero_load(src, dst, bytes)
    }

    fn in_flight(&self) -> u64 {
        self.inner.in_flight()
    }

    fn next_event(&self) -> Option<Ps> {
        self.inner.next_event()
    }

    fn skip_idle(&mut self, to: Ps) -> Result<(), FabricError> {
        self.inner.skip_idle(to)
    }

    fn set_measuring(&mut self, on: bool) {
        self.inner.set_measuring(on);
    }

    /// Per endpoint, not per rank (the cluster reports per rank from its own counts).
    fn accepted(&self) -> &[u64] {
        self.inner.accepted()
    }

    fn channel_loads(&self) -> Vec<ChannelLoad> {
        self.inner.channel_loads()
    }

    fn nouns(&self) -> Nouns {
        self.inner.nouns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_fabric::ideal::IdealConfig;

    fn here(p: &str) -> std::path::PathBuf {
        p.into()
    }

    /// Random placement is a seeded permutation: ranks on distinct endpoints, the same for
    /// the same seed, another for another seed.
    #[test]
    fn random_placement_is_a_seeded_permutation() {
        let cfg = |seed| PlacementConfig {
            kind: PlacementKind::Random,
            seed,
            ..PlacementConfig::default()
        };
        let a = cfg(1).place(16, 64, &here).unwrap();
        let mut seen = a.endpoint.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 16);
        assert!(seen.iter().all(|&e| e < 64));
        assert_eq!(a, cfg(1).place(16, 64, &here).unwrap());
        assert_ne!(a, cfg(2).place(16, 64, &here).unwrap());
        assert!(!a.is_linear());
        for (r, &e) in a.endpoint.iter().enumerate() {
            assert_eq!(a.rank(e), r);
        }
    }

    /// A placement file's errors name file:line and what is allowed.
    #[test]
    fn placement_files_are_checked_line_by_line() {
        let dir = std::env::temp_dir().join(format!("icn-placement-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |text: &str| {
            let p = dir.join("place.txt");
            std::fs::write(&p, text).unwrap();
            PlacementConfig {
                kind: PlacementKind::File,
                file: p.display().to_string(),
                ..PlacementConfig::default()
            }
        };
        let ok = file("# rank 0 on the far corner\n15\n0\n\n5 # rank 2\n");
        assert_eq!(ok.place(3, 16, &here).unwrap().endpoint, [15, 0, 5]);
        let e = file("1\n16\n2\n").place(3, 16, &here).unwrap_err();
        assert_eq!(e.key, "placement.file");
        assert!(
            e.message.ends_with(
                "place.txt:2: `16`: an endpoint must be in 0 ..= 15 (the fabric's endpoints)"
            ),
            "{}",
            e.message
        );
        let e = file("1\n2\n1\n").place(3, 16, &here).unwrap_err();
        assert!(
            e.message
                .contains(":3: endpoint 1 already holds the rank of line 1"),
            "{}",
            e.message
        );
        let e = file("1\n2\n").place(3, 16, &here).unwrap_err();
        assert!(
            e.message.contains("places 2 ranks; the workload has 3"),
            "{}",
            e.message
        );
        let e = file("1\n2\n3\n4\n").place(3, 16, &here).unwrap_err();
        assert!(e.message.contains(":4: more lines than"), "{}", e.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Through [`Placed`], rank 0 → rank 1 crosses the path between their endpoints (3
    /// hops of a 4-node path placed at its two ends: 3 × 550 ns + 160 MB/s for 160 B) and
    /// is delivered addressed by rank.
    #[test]
    fn a_placed_fabric_speaks_ranks_and_routes_between_endpoints() {
        let inner = IdealConfig {
            topology: "path:4".into(),
            ..IdealConfig::default()
        }
        .build()
        .unwrap();
        let place = Arc::new(Placement::new(vec![3, 0], 4));
        let mut f = Placed::new(Box::new(inner), place);
        assert_eq!(f.endpoints(), 2);
        f.inject(Packet {
            src: 0,
            dst: 1,
            bytes: 160,
            tag: 7,
        });
        let mut out = Vec::new();
        f.advance(Ps::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].packet.src, out[0].packet.dst), (0, 1));
        assert_eq!(out[0].delivered, 3 * 550_000 + 1_000_000);
    }
}
