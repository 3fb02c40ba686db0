//! Designs: a VIA implementation described as data — an ordered list of pipeline stages over
//! the profile's resources — resolved against a profile and a set of optimisation switches.
//!
//! A message is cut into chunks (one DMA each, at most the design's DMA limit) and each chunk
//! into wire packets (at most the profile's `packet_bytes`; unset = one packet per chunk).
//! Every packet passes every stage in order; a stage applies to every packet, only the first
//! of the message, or only the last (the descriptor is fetched once, the status written
//! once). While a stage runs it holds all resources in its `hold` list (one job at a time per
//! resource, FIFO). Its cost for one packet is
//!
//! ```text
//! cost = [first packet of its chunk, or `per_packet`] × (units × (cycles / clock_MHz + Σ ops µs)
//!                                                        + misses × Σ miss_ops µs + fixed bytes / rate)
//!        + payload bytes / rate
//! units = pages touched by the chunk if `per_page`, else 1
//! misses = pages whose NIC-side TLB lookup missed (random, hit rate `tlb_hit_rate`)
//! bytes  = "chunk" (the packet's payload), "packet" (payload + design header) or a fixed number
//! ```
//!
//! So a DMA's set-up (descriptor, address translation, starting the engine) is paid once per
//! chunk, while its data moves packet by packet and the next stage can start on the first
//! packet before the last one is in; stages marked `per_packet` (building a header,
//! handling an arriving packet) pay their fixed cost on every packet.
//!
//! followed by a pure delay `latency` (switch, cable) that holds nothing. A stage may add
//! `contention` cycles that are paid only while another message is in the same side of the
//! pipeline (MyVIA's resource locks on LANai4 cost nothing in a pingpong, a lot when
//! streaming small messages).
//!
//! Optimisation switches (`user_tlb`, `pd_ring`, `pipeline`, `big_dma`) select stages through
//! `when` (a list of flags, `!` negates; `chain` is the profile's DMA-chain capability) and
//! change two structural things:
//!
//! | switch | on | off |
//! |---|---|---|
//! | `big_dma` | chunk = design `chunk_bytes` (contiguous memory, variable NIC buffers) | chunk = min(chunk_bytes, page) |
//! | `pipeline` | any number of messages in the NIC pipeline | one message per side at a time; without DMA chaining the NIC CPU also busy-waits on every DMA |

use crate::profile::{Kind, Profile};
use icn_engine::Invalid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bundled designs: `(name, TOML text)`.
pub const BUNDLED: [(&str, &str); 4] = [
    ("myvia", include_str!("../designs/myvia.toml")),
    ("bvia", include_str!("../designs/bvia.toml")),
    ("gm", include_str!("../designs/gm.toml")),
    ("mvia", include_str!("../designs/mvia.toml")),
];

/// Which node a stage runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    #[default]
    Tx,
    Rx,
}

/// Which chunks of a message a stage applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Every {
    #[default]
    Chunk,
    First,
    Last,
}

/// A number or the name of a design parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NumOrParam {
    Num(f64),
    Param(String),
}

/// Bytes a stage moves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BytesSpec {
    Fixed(u64),
    /// `"chunk"` or `"packet"`.
    Named(String),
}

/// One stage as written in TOML.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    pub name: String,
    #[serde(default)]
    pub side: Side,
    pub hold: Vec<String>,
    #[serde(default)]
    pub every: Every,
    #[serde(default)]
    pub when: Vec<String>,
    #[serde(default)]
    pub cycles: Option<NumOrParam>,
    /// Resource whose clock converts `cycles`; default: first held resource with a clock.
    #[serde(default)]
    pub clock: Option<String>,
    #[serde(default)]
    pub ops: Vec<String>,
    #[serde(default)]
    pub per_page: bool,
    /// Fixed cost (`cycles`, `ops`) paid by every wire packet rather than once per chunk
    /// (DMA): work the NIC does per packet, such as building a header.
    #[serde(default)]
    pub per_packet: bool,
    #[serde(default)]
    pub miss_ops: Vec<String>,
    #[serde(default)]
    pub bytes: Option<BytesSpec>,
    #[serde(default)]
    pub rate: Option<String>,
    #[serde(default)]
    pub latency: Vec<String>,
    /// Off the main path: the chunk is handed to this stage and, at the same instant, moves
    /// on to the next main stage (a send-completion status write does not delay delivery).
    #[serde(default)]
    pub branch: bool,
    /// Extra cycles (same clock as `cycles`) paid only when another message is in the same
    /// side of the NIC pipeline: lock/unlock contention between resource state machines.
    #[serde(default)]
    pub contention: Option<NumOrParam>,
}

/// The optimisation switches of a design.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flags {
    pub user_tlb: bool,
    pub pd_ring: bool,
    pub pipeline: bool,
    pub big_dma: bool,
}

/// A design as written in TOML.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Design {
    pub name: String,
    #[serde(default)]
    pub about: String,
    pub flags: Flags,
    /// Pipeline unit when `big_dma` is on.
    pub chunk_bytes: u64,
    /// Protocol header added to every chunk on the wire.
    pub header_bytes: u64,
    /// Smallest packet on the wire (Ethernet pads to 64 B + preamble + gap).
    #[serde(default)]
    pub min_packet_bytes: u64,
    /// Named costs the stages refer to (firmware / host cycles).
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
    /// Which params were fitted, and to what: shown in the report.
    #[serde(default)]
    pub calibrated: BTreeMap<String, String>,
    #[serde(rename = "stage")]
    pub stages: Vec<StageSpec>,
}

/// A stage resolved against a profile: resource indices and costs in µs.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub name: String,
    pub side: Side,
    /// Indices into [`Pipeline::resources`].
    pub hold: Vec<usize>,
    pub every: Every,
    /// Fixed µs per unit (per chunk, or per page with `per_page`).
    pub fixed_us: f64,
    pub per_page: bool,
    /// Fixed costs paid by every packet, not only the first packet of a chunk.
    pub per_packet: bool,
    /// µs added per TLB miss (only with `per_page`).
    pub miss_us: f64,
    pub bytes: StageBytes,
    /// MB/s = bytes per µs; `None` when the stage moves no bytes.
    pub rate: Option<f64>,
    pub latency_us: f64,
    pub branch: bool,
    /// µs added when another message is in flight on the same side.
    pub contention_us: f64,
}

/// Resolved byte count of a stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StageBytes {
    None,
    Chunk,
    Packet,
    Fixed(u64),
}

/// A resolved resource: its name and whether there is one per node or one per link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceRef {
    pub name: String,
    pub per_link: bool,
}

/// Everything the simulator needs: no names left to look up.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    pub resources: Vec<ResourceRef>,
    pub stages: Vec<Stage>,
    pub chunk_bytes: u64,
    /// Largest wire packet, payload bytes; never above `chunk_bytes`.
    pub packet_bytes: u64,
    pub header_bytes: u64,
    pub min_packet_bytes: u64,
    pub page_bytes: u64,
    /// Messages allowed in one side of the NIC pipeline at once; `None` = unlimited.
    pub in_flight: Option<usize>,
    /// First send-side stage that uses the NIC (not only host CPU / PCI PIO): where the
    /// `in_flight` limit applies, so a host may post while the NIC is busy.
    pub nic_entry: usize,
    pub tlb_hit_rate: f64,
}

impl Stage {
    /// Whether a packet pays this stage's fixed costs: the first packet of a chunk, every
    /// packet of a `per_packet` stage, and the one packet a `first`/`last` stage applies to.
    pub fn pays_fixed(&self, chunk_start: bool) -> bool {
        chunk_start || self.per_packet || self.every != Every::Chunk
    }

    /// Cost of this stage for a packet of `bytes` payload whose chunk spans `pages` pages of
    /// which `misses` missed the NIC TLB, µs. `chunk_start`: the packet is the first of its
    /// chunk, so it carries the chunk's set-up (for a one-packet chunk, always true).
    pub fn cost_us(
        &self,
        bytes: u64,
        header: u64,
        min_packet: u64,
        pages: u64,
        misses: u64,
        chunk_start: bool,
    ) -> f64 {
        let per_transfer = |n: u64| match self.rate {
            Some(r) => n as f64 / r,
            None => 0.0,
        };
        let streamed = match self.bytes {
            StageBytes::Chunk => per_transfer(bytes),
            StageBytes::Packet => per_transfer((bytes + header).max(min_packet)),
            StageBytes::None | StageBytes::Fixed(_) => 0.0,
        };
        if !self.pays_fixed(chunk_start) {
            return streamed;
        }
        let units = if self.per_page { pages as f64 } else { 1.0 };
        let fixed_bytes = match self.bytes {
            StageBytes::Fixed(n) => per_transfer(n),
            _ => 0.0,
        };
        units * self.fixed_us + misses as f64 * self.miss_us + fixed_bytes + streamed
    }
}

impl Design {
    pub fn parse(text: &str) -> Result<Design, Invalid> {
        let value: toml::Value = toml::from_str(text)
            .map_err(|e| Invalid::new("design", format!("malformed TOML: {}", e.message())))?;
        let d: Design = icn_engine::config::deserialize_at(value).map_err(|e| Invalid {
            key: format!("design.{}", e.key),
            message: e.message,
        })?;
        Invalid::check(
            d.chunk_bytes >= 1,
            "design.chunk_bytes",
            "[1, ∞)",
            d.chunk_bytes,
        )?;
        Invalid::check(
            !d.stages.is_empty(),
            "design.stage",
            "at least one stage",
            0,
        )?;
        for (k, v) in &d.params {
            Invalid::check(
                v.is_finite() && *v >= 0.0,
                &format!("design.params.{k}"),
                "[0, ∞)",
                v,
            )?;
        }
        Ok(d)
    }

    /// A bundled design by name, or a TOML file at that path.
    pub fn load(name_or_path: &str) -> Result<Design, Invalid> {
        if let Some((_, text)) = BUNDLED.iter().find(|(n, _)| *n == name_or_path) {
            return Design::parse(text);
        }
        let text = icn_engine::input::read_to_string(name_or_path).map_err(|e| {
            Invalid::new(
                "design",
                format!(
                    "not one of myvia, bvia, gm, mvia and cannot read file `{name_or_path}`: {e}"
                ),
            )
        })?;
        // An error inside the file names it (the key alone points at the experiment file).
        Design::parse(&text).map_err(|e| Invalid {
            message: format!("in `{name_or_path}`: {}", e.message),
            ..e
        })
    }

    /// Resolves the design on `profile` with switches `flags` and NIC TLB hit rate.
    pub fn resolve(
        &self,
        profile: &Profile,
        flags: Flags,
        tlb_hit_rate: f64,
    ) -> Result<Pipeline, Invalid> {
        let mut resources: Vec<ResourceRef> = Vec::new();
        let mut index = |name: &str, key: &str| -> Result<usize, Invalid> {
            let r = profile.resource(name, key)?;
            if let Some(i) = resources.iter().position(|x| x.name == name) {
                return Ok(i);
            }
            resources.push(ResourceRef {
                name: name.to_owned(),
                per_link: r.scope == crate::profile::Scope::Link,
            });
            Ok(resources.len() - 1)
        };
        let chain = profile.dma_chain;
        let mut stages = Vec::new();
        for (i, s) in self.stages.iter().enumerate() {
            let key = |k: &str| format!("design.stage[{i}].{k}");
            if !self.applies(s, flags, chain, &key("when"))? {
                continue;
            }
            Invalid::check(!s.hold.is_empty(), &key("hold"), "at least one resource", 0)?;
            let mut hold = Vec::new();
            for name in &s.hold {
                hold.push(index(name, &key("hold"))?);
            }
            let busy_waits = !flags.pipeline && !chain && profile.resources.contains_key("nic_cpu");
            let holds_dma = s.hold.iter().any(|n| {
                profile
                    .resources
                    .get(n)
                    .is_some_and(|r| r.kind == Kind::Dma)
            });
            if busy_waits && holds_dma && !s.hold.iter().any(|n| n == "nic_cpu") {
                hold.push(index("nic_cpu", &key("hold"))?);
            }
            let mut fixed_us = 0.0;
            let mut contention_us = 0.0;
            if s.cycles.is_some() || s.contention.is_some() {
                let clock_name = match &s.clock {
                    Some(c) => c.clone(),
                    None => s
                        .hold
                        .iter()
                        .find(|n| {
                            profile
                                .resources
                                .get(*n)
                                .is_some_and(|r| r.clock_mhz.is_some())
                        })
                        .cloned()
                        .unwrap_or_else(|| s.hold[0].clone()),
                };
                let mhz = profile.clock(&clock_name, &key("clock"))?;
                if let Some(c) = &s.cycles {
                    fixed_us += self.param(c, &key("cycles"))? / mhz;
                }
                if let Some(c) = &s.contention {
                    contention_us = self.param(c, &key("contention"))? / mhz;
                }
            }
            for op in &s.ops {
                fixed_us += profile.op(op, &key("ops"))?;
            }
            let mut miss_us = 0.0;
            for op in &s.miss_ops {
                miss_us += profile.op(op, &key("miss_ops"))?;
            }
            let bytes = match &s.bytes {
                None => StageBytes::None,
                Some(BytesSpec::Fixed(n)) => StageBytes::Fixed(*n),
                Some(BytesSpec::Named(n)) if n == "chunk" => StageBytes::Chunk,
                Some(BytesSpec::Named(n)) if n == "packet" => StageBytes::Packet,
                Some(BytesSpec::Named(n)) => {
                    return Err(Invalid::range(
                        key("bytes"),
                        "\"chunk\", \"packet\" or a number",
                        n,
                    ));
                }
            };
            let rate = match &s.rate {
                Some(r) => Some(profile.rate(r, &key("rate"))?),
                None if bytes != StageBytes::None => {
                    return Err(Invalid::new(
                        key("rate"),
                        "a stage that moves bytes needs a rate",
                    ));
                }
                None => None,
            };
            let mut latency_us = 0.0;
            for op in &s.latency {
                latency_us += profile.op(op, &key("latency"))?;
            }
            stages.push(Stage {
                name: s.name.clone(),
                side: s.side,
                hold,
                every: s.every,
                fixed_us,
                per_page: s.per_page,
                per_packet: s.per_packet,
                miss_us,
                bytes,
                rate,
                latency_us,
                branch: s.branch,
                contention_us,
            });
        }
        Invalid::check(
            stages.iter().any(|s| s.side == Side::Tx) && stages.iter().any(|s| s.side == Side::Rx),
            "design.stage",
            "at least one tx and one rx stage after applying `when`",
            stages.len(),
        )?;
        Invalid::check(
            !stages[0].branch && !stages[stages.len() - 1].branch,
            "design.stage",
            "first and last stage on the main path (branch = false)",
            "branch",
        )?;
        let tx_then_rx = stages
            .windows(2)
            .all(|w| !(w[0].side == Side::Rx && w[1].side == Side::Tx));
        Invalid::check(
            tx_then_rx,
            "design.stage",
            "all tx stages before all rx stages",
            "interleaved",
        )?;
        let chunk_bytes = if flags.big_dma {
            self.chunk_bytes
        } else {
            self.chunk_bytes.min(profile.page_bytes)
        };
        let host_only = |s: &Stage| {
            s.hold
                .iter()
                .all(|&r| resources[r].name == "host_cpu" || resources[r].name == "pci")
        };
        let nic_entry = stages
            .iter()
            .position(|s| s.side == Side::Rx || !host_only(s))
            .unwrap_or(0);
        Ok(Pipeline {
            nic_entry,
            resources,
            stages,
            chunk_bytes,
            packet_bytes: profile.packet_bytes.unwrap_or(chunk_bytes).min(chunk_bytes),
            header_bytes: self.header_bytes,
            min_packet_bytes: self.min_packet_bytes,
            page_bytes: profile.page_bytes,
            in_flight: if flags.pipeline { None } else { Some(1) },
            tlb_hit_rate,
        })
    }

    fn param(&self, v: &NumOrParam, key: &str) -> Result<f64, Invalid> {
        match v {
            NumOrParam::Num(x) if x.is_finite() && *x >= 0.0 => Ok(*x),
            NumOrParam::Num(x) => Err(Invalid::range(key, "[0, ∞) cycles", x)),
            NumOrParam::Param(p) => self
                .params
                .get(p)
                .copied()
                .ok_or_else(|| Invalid::new(key, format!("unknown design parameter `{p}`"))),
        }
    }

    fn applies(&self, s: &StageSpec, f: Flags, chain: bool, key: &str) -> Result<bool, Invalid> {
        for cond in &s.when {
            let (neg, name) = match cond.strip_prefix('!') {
                Some(n) => (true, n),
                None => (false, cond.as_str()),
            };
            let v = match name {
                "user_tlb" => f.user_tlb,
                "pd_ring" => f.pd_ring,
                "pipeline" => f.pipeline,
                "big_dma" => f.big_dma,
                "chain" => chain,
                other => {
                    return Err(Invalid::range(
                        key,
                        "user_tlb, pd_ring, pipeline, big_dma, chain (optionally with !)",
                        other,
                    ));
                }
            };
            if v == neg {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup_b() -> Profile {
        Profile::load("setup-b").unwrap()
    }

    fn with_stage_edit(from: &str, to: &str) -> Result<Pipeline, Invalid> {
        let text = BUNDLED[0].1.replacen(from, to, 1);
        let d = Design::parse(&text)?;
        d.resolve(&setup_b(), d.flags, 1.0)
    }

    #[test]
    fn bundled_designs_resolve_on_every_bundled_profile_they_fit() {
        for (name, text) in BUNDLED {
            let d = Design::parse(text).unwrap();
            let profiles: &[&str] = if name == "mvia" {
                &["fast-ethernet", "gigabit-ethernet"]
            } else {
                &["setup-a", "setup-b"]
            };
            for p in profiles {
                let prof = Profile::load(p).unwrap();
                d.resolve(&prof, d.flags, 1.0)
                    .unwrap_or_else(|e| panic!("{name} on {p}: {e}"));
            }
        }
    }

    #[test]
    fn stage_naming_an_unknown_resource_is_an_error_naming_the_stage() {
        let e = with_stage_edit("hold = [\"host_cpu\"]", "hold = [\"warp_drive\"]").unwrap_err();
        assert_eq!(e.key, "design.stage[0].hold");
        assert!(e.message.contains("unknown resource `warp_drive`"), "{e}");
    }

    #[test]
    fn unknown_rate_op_param_and_flag_are_errors() {
        let e = with_stage_edit("rate = \"pci.pio\"", "rate = \"pci.turbo\"").unwrap_err();
        assert!(
            e.key.ends_with(".rate") && e.message.contains("pci.turbo"),
            "{e}"
        );
        // The first such op is in a stage switched off by default; break them all.
        let text = BUNDLED[0].1.replace("\"h2n_dma.start\"", "\"h2n_dma.nap\"");
        let d = Design::parse(&text).unwrap();
        let e = d.resolve(&setup_b(), d.flags, 1.0).unwrap_err();
        assert!(e.key.ends_with(".ops"), "{e}");
        let e = with_stage_edit("cycles = \"post_cycles\"", "cycles = \"nope\"").unwrap_err();
        assert_eq!(e.key, "design.stage[0].cycles");
        let e = with_stage_edit("when = [\"user_tlb\"]", "when = [\"warp\"]").unwrap_err();
        assert!(e.key.ends_with(".when"), "{e}");
    }

    #[test]
    fn a_design_on_a_profile_without_a_nic_cpu_is_rejected() {
        let d = Design::load("myvia").unwrap();
        let p = Profile::load("fast-ethernet").unwrap();
        let e = d.resolve(&p, d.flags, 1.0).unwrap_err();
        assert!(e.message.contains("unknown resource"), "{e}");
    }

    #[test]
    fn switches_select_stages_and_structure() {
        let d = Design::load("myvia").unwrap();
        let p = setup_b();
        let on = d.resolve(&p, d.flags, 1.0).unwrap();
        let names = |x: &Pipeline| x.stages.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert!(names(&on).contains(&"pd_pio".to_owned()));
        assert!(names(&on).contains(&"chain_fetch".to_owned()));
        assert_eq!(on.chunk_bytes, 122880);
        assert_eq!(on.packet_bytes, 4096);
        assert_eq!(on.in_flight, None);
        let off = Flags {
            user_tlb: false,
            pd_ring: false,
            pipeline: false,
            big_dma: false,
        };
        let all_off = d.resolve(&p, off, 1.0).unwrap();
        let n = names(&all_off);
        assert!(n.contains(&"doorbell".to_owned()) && n.contains(&"fetch_descriptor".to_owned()));
        assert!(n.contains(&"nic_tlb".to_owned()) && !n.contains(&"utlb".to_owned()));
        assert_eq!(all_off.chunk_bytes, 4096);
        assert_eq!(all_off.packet_bytes, 4096);
        let a = d
            .resolve(&Profile::load("setup-a").unwrap(), d.flags, 1.0)
            .unwrap();
        assert_eq!(
            a.packet_bytes, a.chunk_bytes,
            "set-up A: one packet per DMA"
        );
        assert_eq!(all_off.in_flight, Some(1));
    }

    #[test]
    fn costs_follow_the_formula() {
        // chain_fetch on set-up B: 340 cycles / 133 MHz + 0.5 µs + 4096 B / 400 MB/s.
        let d = Design::load("myvia").unwrap();
        let pipe = d.resolve(&setup_b(), d.flags, 1.0).unwrap();
        let s = pipe
            .stages
            .iter()
            .find(|s| s.name == "chain_fetch")
            .unwrap();
        let want = 340.0 / 133.0 + 0.5 + 4096.0 / 400.0;
        assert!((s.cost_us(4096, 16, 0, 1, 0, true) - want).abs() < 1e-12);
        // A later packet of the same DMA pays only its bytes.
        assert!((s.cost_us(4096, 16, 0, 1, 0, false) - 4096.0 / 400.0).abs() < 1e-12);
        let w = pipe.stages.iter().find(|s| s.name == "net_send").unwrap();
        assert!((w.cost_us(4096, 16, 0, 1, 0, true) - 4112.0 / 250.0).abs() < 1e-12);
        assert!((w.cost_us(4096, 16, 0, 1, 0, false) - 4112.0 / 250.0).abs() < 1e-12);
        // Building a header is per packet.
        let h = pipe.stages.iter().find(|s| s.name == "send_setup").unwrap();
        assert!(h.per_packet);
        assert!((h.cost_us(4096, 16, 0, 1, 0, false) - 40.0 / 133.0).abs() < 1e-12);
        assert!((w.latency_us - 0.35).abs() < 1e-12);
    }
}
