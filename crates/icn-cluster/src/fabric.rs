//! `[fabric]`: `kind` names the fabric, and the rest of the table is that fabric's own
//! struct, owned with its defaults and its checks by the fabric's crate: [`IdealConfig`] and
//! [`FlowConfig`] (icn-fabric), [`XSwitchFabricConfig`] and [`VcFabricConfig`] (icn-thnet),
//! [`SciRingFabricConfig`] (icn-sci). Each struct has `deny_unknown_fields`, so a key of
//! another kind is an error naming the kinds that read it; adding a key to a fabric touches
//! its crate only.
//!
//! Before the run, everything a replication's fabric needs is built once ([`Prepared`]):
//! the X-Switch's topology (with its source routes checked for deadlock over the pairs the
//! workload uses, see [`Prepared::check_pairs`]) or the VC network (its routing checked).

use icn_engine::Invalid;
use icn_engine::lockstep::Exchange;
use icn_fabric::Fabric;
use icn_fabric::flow::FlowConfig;
use icn_fabric::ideal::IdealConfig;
use icn_sci::fabric::SciRingFabricConfig;
use icn_thnet::fabric::VcTopology;
use icn_thnet::fabric_config::{VcFabricConfig, XSwitchFabricConfig, vc_sizes};
use icn_thnet::topology::Topology;
use serde::{Deserialize, Deserializer, Serialize};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FabricKind {
    #[default]
    Ideal,
    /// Messages as flows sharing links max-min fairly (SimGrid's CM02).
    Flow,
    Xswitch,
    VcRouter,
    SciRing,
}

impl FabricKind {
    pub const ALL: [FabricKind; 5] = [
        FabricKind::Ideal,
        FabricKind::Flow,
        FabricKind::Xswitch,
        FabricKind::VcRouter,
        FabricKind::SciRing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FabricKind::Ideal => "ideal",
            FabricKind::Flow => "flow",
            FabricKind::Xswitch => "xswitch",
            FabricKind::VcRouter => "vc-router",
            FabricKind::SciRing => "sci-ring",
        }
    }
}

/// `[fabric]`: one fabric's keys (see the module documentation). Written as a table with
/// `kind` (default `ideal`) beside that kind's keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FabricConfig {
    Ideal(IdealConfig),
    Flow(FlowConfig),
    Xswitch(XSwitchFabricConfig),
    VcRouter(VcFabricConfig),
    SciRing(SciRingFabricConfig),
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig::Ideal(IdealConfig::default())
    }
}

/// Reads `kind`, then that kind's struct, with errors naming `fabric.KEY`.
impl<'de> Deserialize<'de> for FabricConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let table = toml::Table::deserialize(d)?;
        FabricConfig::from_table(&table).map_err(serde::de::Error::custom)
    }
}

impl FabricConfig {
    /// The defaults of `kind`.
    pub fn of_kind(kind: FabricKind) -> FabricConfig {
        match kind {
            FabricKind::Ideal => FabricConfig::Ideal(IdealConfig::default()),
            FabricKind::Flow => FabricConfig::Flow(FlowConfig::default()),
            FabricKind::Xswitch => FabricConfig::Xswitch(XSwitchFabricConfig::default()),
            FabricKind::VcRouter => FabricConfig::VcRouter(VcFabricConfig::default()),
            FabricKind::SciRing => FabricConfig::SciRing(SciRingFabricConfig::default()),
        }
    }

    pub fn kind(&self) -> FabricKind {
        match self {
            FabricConfig::Ideal(_) => FabricKind::Ideal,
            FabricConfig::Flow(_) => FabricKind::Flow,
            FabricConfig::Xswitch(_) => FabricKind::Xswitch,
            FabricConfig::VcRouter(_) => FabricKind::VcRouter,
            FabricConfig::SciRing(_) => FabricKind::SciRing,
        }
    }

    /// Every kind has a `topology`.
    pub fn topology(&self) -> &str {
        match self {
            FabricConfig::Ideal(c) => &c.topology,
            FabricConfig::Flow(c) => &c.topology,
            FabricConfig::Xswitch(c) => &c.topology,
            FabricConfig::VcRouter(c) => &c.topology,
            FabricConfig::SciRing(c) => &c.topology,
        }
    }

    pub fn topology_mut(&mut self) -> &mut String {
        match self {
            FabricConfig::Ideal(c) => &mut c.topology,
            FabricConfig::Flow(c) => &mut c.topology,
            FabricConfig::Xswitch(c) => &mut c.topology,
            FabricConfig::VcRouter(c) => &mut c.topology,
            FabricConfig::SciRing(c) => &mut c.topology,
        }
    }

    /// The keys of `kind` (its defaults' table, `kind` included).
    fn keys_of(kind: FabricKind) -> Vec<String> {
        toml::Table::try_from(FabricConfig::of_kind(kind))
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Reads a `[fabric]` table: `kind` (default `ideal`), then the rest as that kind's
    /// struct. A key another kind reads is refused as not applying to this one.
    pub fn from_table(table: &toml::Table) -> Result<FabricConfig, Invalid> {
        use icn_engine::config::deserialize_at;
        let mut rest = table.clone();
        let kind = match rest.remove("kind") {
            None => FabricKind::Ideal,
            Some(v) => deserialize_at::<FabricKind>(v).map_err(|e| Invalid {
                key: "fabric.kind".into(),
                ..e
            })?,
        };
        let named = |e: Invalid| {
            let unknown = e
                .message
                .strip_prefix("unknown field `")
                .and_then(|m| m.split('`').next());
            let readers: Vec<&str> = unknown
                .map(|key| {
                    FabricKind::ALL
                        .iter()
                        .filter(|k| FabricConfig::keys_of(**k).iter().any(|x| x == key))
                        .map(|k| k.name())
                        .collect()
                })
                .unwrap_or_default();
            let key = format!("fabric.{}", e.key.trim_start_matches("fabric."));
            if readers.is_empty() {
                Invalid { key, ..e }
            } else {
                Invalid::new(
                    key,
                    format!(
                        "does not apply to kind = \"{}\" (a key of {}); this kind's keys: {}",
                        kind.name(),
                        readers.join(", "),
                        FabricConfig::keys_of(kind).join(", ")
                    ),
                )
            }
        };
        let v = toml::Value::Table(rest);
        Ok(match kind {
            FabricKind::Ideal => FabricConfig::Ideal(deserialize_at(v).map_err(named)?),
            FabricKind::Flow => FabricConfig::Flow(deserialize_at(v).map_err(named)?),
            FabricKind::Xswitch => FabricConfig::Xswitch(deserialize_at(v).map_err(named)?),
            FabricKind::VcRouter => FabricConfig::VcRouter(deserialize_at(v).map_err(named)?),
            FabricKind::SciRing => FabricConfig::SciRing(deserialize_at(v).map_err(named)?),
        })
    }

    /// Largest packet payload the fabric takes (what `Fabric::max_packet_bytes` will say).
    pub fn max_packet_bytes(&self) -> u64 {
        match self {
            FabricConfig::Ideal(c) => u64::from(c.max_packet),
            FabricConfig::Flow(_) => u64::from(u32::MAX),
            FabricConfig::Xswitch(_) => u64::from(icn_thnet::xswitch_model::MAX_SIZE),
            FabricConfig::VcRouter(c) => c.max_packet_bytes(),
            FabricConfig::SciRing(c) => u64::from(c.sci_data_bytes).max(1),
        }
    }

    /// The `threads` key of the fabrics simulated in partitions.
    pub fn threads(&self) -> Option<usize> {
        match self {
            FabricConfig::Xswitch(c) => Some(c.threads),
            FabricConfig::VcRouter(c) => Some(c.threads),
            _ => None,
        }
    }

    /// The graph the broadcast schemes run on (the fabric's switch graph).
    pub fn graph(&self) -> Result<icn_topo::Graph, Invalid> {
        let topology = self.topology();
        let spec = match (self.kind(), topology.split_once(':')) {
            (FabricKind::Ideal, _) => topology.to_owned(),
            (_, Some(("ccc" | "mesh" | "torus" | "ring", _))) => topology.to_owned(),
            _ => {
                return Err(Invalid::new(
                    "workload.algorithm",
                    format!(
                        "the icn-bcast schemes need a ccc, mesh, torus or ring fabric, not `{topology}`"
                    ),
                ));
            }
        };
        icn_topo::parse_graph_spec(&spec)
            .map_err(|e| Invalid::new("fabric.topology", e.to_string()))
    }

    /// Checks the keys and builds what every replication's fabric needs, once (`file:`
    /// paths resolved by the caller).
    pub fn prepare(&self) -> Result<Prepared, Invalid> {
        Ok(match self {
            FabricConfig::Ideal(c) => Prepared::Clockless(c.build()?.endpoints()),
            FabricConfig::Flow(c) => Prepared::Clockless(c.build()?.endpoints()),
            FabricConfig::SciRing(c) => Prepared::Clockless(c.ring()?.nodes),
            FabricConfig::Xswitch(c) => Prepared::Xswitch(c.prepare()?),
            FabricConfig::VcRouter(c) => Prepared::Vc(c.prepare()?),
        })
    }
}

/// What [`FabricConfig::prepare`] built.
#[derive(Clone)]
pub enum Prepared {
    /// The fabrics built whole per replication (ideal, flow, SCI ring): their endpoints.
    Clockless(usize),
    Xswitch(Topology),
    Vc(VcTopology),
}

impl Prepared {
    pub fn endpoints(&self) -> usize {
        match self {
            Prepared::Clockless(n) => *n,
            Prepared::Xswitch(t) => t.nias(),
            Prepared::Vc(t) => vc_sizes(t).0,
        }
    }

    /// Switches or routers, the unit a fabric simulated in partitions is split by.
    pub fn routers(&self) -> usize {
        match self {
            Prepared::Clockless(_) => 0,
            Prepared::Xswitch(t) => t.switches,
            Prepared::Vc(t) => vc_sizes(t).1,
        }
    }

    /// The static deadlock check of the X-Switch's source routes over the endpoint pairs
    /// the workload uses (the VC networks' routing was checked for every pair when
    /// prepared; the other fabrics cannot deadlock).
    pub fn check_pairs(
        &self,
        cfg: &FabricConfig,
        pairs: &mut dyn Iterator<Item = (usize, usize)>,
    ) -> Result<(), Invalid> {
        match (self, cfg) {
            (Prepared::Xswitch(t), FabricConfig::Xswitch(c)) => c.check_deadlock(t, pairs),
            _ => Ok(()),
        }
    }

    /// A fresh fabric for one replication; `seed` (the replication's) seeds the VC
    /// routers' random routing choices.
    pub fn build(
        &self,
        cfg: &FabricConfig,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid> {
        Ok(match (self, cfg) {
            (_, FabricConfig::Ideal(c)) => Box::new(c.build()?),
            (_, FabricConfig::Flow(c)) => Box::new(c.build()?),
            (_, FabricConfig::SciRing(c)) => Box::new(c.build()?),
            (Prepared::Xswitch(t), FabricConfig::Xswitch(c)) => {
                Box::new(c.build(t, threads, ranks)?)
            }
            (Prepared::Vc(t), FabricConfig::VcRouter(c)) => {
                Box::new(c.build(t, seed, threads, ranks)?)
            }
            _ => unreachable!("prepared from this config"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<FabricConfig, Invalid> {
        icn_engine::config::deserialize_at(toml::Value::Table(toml::from_str(text).unwrap()))
    }

    /// `kind` first, then that kind's own struct: its defaults, its keys only.
    #[test]
    fn each_kind_reads_its_own_keys_with_its_own_defaults() {
        assert_eq!(read("").unwrap(), FabricConfig::default());
        assert_eq!(
            read("kind = \"ideal\"").unwrap(),
            FabricConfig::Ideal(IdealConfig::default())
        );
        let FabricConfig::Xswitch(x) = read("kind = \"xswitch\"\nframe_size = 64").unwrap() else {
            panic!("not an X-Switch");
        };
        assert_eq!(x.frame_size, 64);
        assert_eq!(x.fifo_size, XSwitchFabricConfig::default().fifo_size);
        let e = read("kind = \"ideal\"\nvcs = 4").unwrap_err();
        assert_eq!(e.key, "fabric.vcs");
        assert!(
            e.message
                .starts_with("does not apply to kind = \"ideal\" (a key of vc-router)"),
            "{}",
            e.message
        );
        let e = read("kind = \"flow\"\nlink_mbs = \"fast\"").unwrap_err();
        assert_eq!(e.key, "fabric.link_mbs");
        let e = read("kind = \"vc-router\"\nnonsense = 1").unwrap_err();
        assert_eq!(e.key, "fabric.nonsense");
        assert!(e.message.contains("unknown field"), "{}", e.message);
        let e = read("kind = \"hyperloop\"").unwrap_err();
        assert_eq!(e.key, "fabric.kind");
        assert!(e.message.contains("`sci-ring`"), "{}", e.message);
    }

    /// Written back, a config reads as itself (the config echo of report.json).
    #[test]
    fn every_kind_round_trips_through_its_table() {
        for kind in FabricKind::ALL {
            let cfg = FabricConfig::of_kind(kind);
            let table = toml::Table::try_from(&cfg).unwrap();
            assert_eq!(table["kind"].as_str(), Some(kind.name()));
            assert_eq!(FabricConfig::from_table(&table).unwrap(), cfg);
        }
    }
}
