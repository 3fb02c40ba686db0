//! `[fabric]`: `kind` names a network kind, and the rest of the table is that kind's keys:
//! one struct per kind, owned with its defaults, checks, memory estimate, prepared network and
//! per-replication build by the kind's crate through [`NetworkKind`] — [`IdealConfig`] and
//! [`FlowConfig`] (icn-fabric), [`XSwitchFabricConfig`] (icn-thnet) and [`VcFabricConfig`] (icn-router; the
//! latter's network keys are `model = "vc-router"`'s, [`icn_router::vc_net`]),
//! [`SciRingFabricConfig`] (icn-sci). Each struct has `deny_unknown_fields`, so a key of
//! another kind is an error naming the kinds that read it.
//!
//! This module is the registry: [`network_registry!`](crate::network_registry) lists the
//! kinds, one line each, and writes the one dispatch over them ([`FabricKind`],
//! [`FabricConfig`], [`Prepared`]). Adding a kind is a [`NetworkKind`] impl beside its fabric
//! and a line here (docs/extending.md).
//!
//! Before the run, everything a replication's fabric needs is built once ([`Prepared`]):
//! the X-Switch's topology (with its source routes checked for deadlock over the pairs the
//! workload uses, see [`Prepared::check_pairs`]) or the VC network (its routing checked).

use icn_engine::Invalid;
use icn_fabric::flow::FlowConfig;
use icn_fabric::ideal::IdealConfig;
#[cfg(doc)]
use icn_fabric::kind::NetworkKind;
use icn_router::fabric_config::VcFabricConfig;
use icn_sci::fabric::SciRingFabricConfig;
use icn_thnet::fabric_config::XSwitchFabricConfig;

/// Writes a registry of network kinds from one line per kind, `Variant => Config` (a
/// [`NetworkKind`]): `FabricKind` (the names), `FabricConfig` (a `[fabric]` table: `kind`
/// and that kind's keys, read with errors naming `fabric.KEY`), `Prepared` (what a kind
/// prepares), and the one `match` of each of their methods. The first kind is the default.
/// The cluster's registry is the invocation below; a test builds another (docs/extending.md).
#[macro_export]
macro_rules! network_registry {
    ($( $(#[$doc:meta])* $variant:ident => $cfg:ty ),+ $(,)?) => {
        /// The kinds `[fabric] kind` may name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum FabricKind {
            $( $(#[$doc])* $variant, )+
        }

        impl FabricKind {
            pub const ALL: [FabricKind; [$(stringify!($variant)),+].len()] =
                [$(FabricKind::$variant),+];

            pub fn name(self) -> &'static str {
                match self {
                    $( FabricKind::$variant => <$cfg as ::icn_fabric::kind::NetworkKind>::NAME, )+
                }
            }
        }

        impl Default for FabricKind {
            fn default() -> Self {
                FabricKind::ALL[0]
            }
        }

        /// `[fabric]`: one kind's keys. Written as a table with `kind` beside that kind's
        /// keys.
        #[derive(Clone, Debug, PartialEq, ::serde::Serialize)]
        #[serde(tag = "kind", rename_all = "kebab-case")]
        pub enum FabricConfig {
            $( $variant($cfg), )+
        }

        /// What [`FabricConfig::prepare`] built, per kind.
        #[derive(Clone)]
        pub enum Prepared {
            $( $variant(<$cfg as ::icn_fabric::kind::NetworkKind>::Prepared), )+
        }

        impl Default for FabricConfig {
            fn default() -> Self {
                FabricConfig::of_kind(FabricKind::default())
            }
        }

        /// Reads `kind`, then that kind's struct, with errors naming `fabric.KEY`.
        impl<'de> ::serde::Deserialize<'de> for FabricConfig {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let table = <::toml::Table as ::serde::Deserialize>::deserialize(d)?;
                FabricConfig::from_table(&table).map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }

        impl FabricConfig {
            /// The defaults of `kind`.
            pub fn of_kind(kind: FabricKind) -> FabricConfig {
                match kind {
                    $( FabricKind::$variant => FabricConfig::$variant(<$cfg>::default()), )+
                }
            }

            pub fn kind(&self) -> FabricKind {
                match self {
                    $( FabricConfig::$variant(_) => FabricKind::$variant, )+
                }
            }

            /// Every kind has a `topology`.
            pub fn topology(&self) -> &str {
                match self {
                    $( FabricConfig::$variant(c) => ::icn_fabric::kind::NetworkKind::topology(c), )+
                }
            }

            pub fn topology_mut(&mut self) -> &mut String {
                match self {
                    $( FabricConfig::$variant(c) => ::icn_fabric::kind::NetworkKind::topology_mut(c), )+
                }
            }

            /// Largest packet payload the fabric takes (what `Fabric::max_packet_bytes`
            /// will say).
            pub fn max_packet_bytes(&self) -> u64 {
                match self {
                    $( FabricConfig::$variant(c) => ::icn_fabric::kind::NetworkKind::max_packet_bytes(c), )+
                }
            }

            /// The `threads` key of the fabrics simulated in partitions.
            pub fn threads(&self) -> Option<usize> {
                match self {
                    $( FabricConfig::$variant(c) => ::icn_fabric::kind::NetworkKind::threads(c), )+
                }
            }

            /// Checks the keys and builds what every replication's fabric needs, once
            /// (`file:` paths resolved by the caller).
            pub fn prepare(&self) -> Result<Prepared, ::icn_engine::Invalid> {
                Ok(match self {
                    $( FabricConfig::$variant(c) => {
                        Prepared::$variant(::icn_fabric::kind::NetworkKind::prepare(c)?)
                    } )+
                })
            }

            /// The keys of `kind` (its defaults' table, `kind` included).
            pub fn keys_of(kind: FabricKind) -> Vec<String> {
                ::toml::Table::try_from(FabricConfig::of_kind(kind))
                    .map(|t| t.keys().cloned().collect())
                    .unwrap_or_default()
            }

            /// Reads a `[fabric]` table: `kind` (default: the first kind), then the rest as
            /// that kind's struct. A key another kind reads is refused as not applying to
            /// this one.
            pub fn from_table(table: &::toml::Table) -> Result<FabricConfig, ::icn_engine::Invalid> {
                use ::icn_engine::Invalid;
                use ::icn_engine::config::deserialize_at;
                let mut rest = table.clone();
                let kind = match rest.remove("kind") {
                    None => FabricKind::default(),
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
                let rest = ::toml::Value::Table(rest);
                Ok(match kind {
                    $( FabricKind::$variant => FabricConfig::$variant(deserialize_at(rest).map_err(named)?), )+
                })
            }
        }

        impl Prepared {
            pub fn endpoints(&self) -> usize {
                match self {
                    $( Prepared::$variant(p) => <$cfg as ::icn_fabric::kind::NetworkKind>::endpoints(p), )+
                }
            }

            /// Switches or routers, the unit a fabric simulated in partitions is split by
            /// (0 for the fabrics simulated whole).
            pub fn routers(&self) -> usize {
                match self {
                    $( Prepared::$variant(p) => <$cfg as ::icn_fabric::kind::NetworkKind>::routers(p), )+
                }
            }

            /// The static deadlock check of routes over the endpoint pairs the workload uses
            /// (the X-Switch's source routes; the VC networks' routing was checked for every
            /// pair when prepared; the other fabrics cannot deadlock).
            pub fn check_pairs(
                &self,
                cfg: &FabricConfig,
                pairs: &mut dyn Iterator<Item = (usize, usize)>,
            ) -> Result<(), ::icn_engine::Invalid> {
                match (self, cfg) {
                    $( (Prepared::$variant(p), FabricConfig::$variant(c)) => {
                        ::icn_fabric::kind::NetworkKind::check_pairs(c, p, pairs)
                    } )+
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("prepared from this config"),
                }
            }

            /// A fresh fabric for one replication; `seed` (the replication's) seeds the
            /// network's random choices (the VC routers' routing).
            pub fn build(
                &self,
                cfg: &FabricConfig,
                seed: u64,
                threads: usize,
                ranks: Option<::std::sync::Arc<dyn ::icn_engine::lockstep::Exchange>>,
            ) -> Result<Box<dyn ::icn_fabric::Fabric>, ::icn_engine::Invalid> {
                match (self, cfg) {
                    $( (Prepared::$variant(p), FabricConfig::$variant(c)) => {
                        ::icn_fabric::kind::NetworkKind::build(c, p, seed, threads, ranks)
                    } )+
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("prepared from this config"),
                }
            }
        }
    };
}

network_registry! {
    /// Latency per hop and bandwidth per link, packets in FIFO order (the default).
    Ideal => IdealConfig,
    /// Messages as flows sharing links max-min fairly (SimGrid's CM02).
    Flow => FlowConfig,
    /// X-NIAs over X-Switches at symbol level, source-routed.
    Xswitch => XSwitchFabricConfig,
    /// Virtual-channel routers (`model = "vc-router"`'s network).
    VcRouter => VcFabricConfig,
    /// One SCI ring.
    SciRing => SciRingFabricConfig,
}

impl FabricConfig {
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
        let FabricConfig::Xswitch(x) = read("kind = \"xswitch\"\nframe_size = 128").unwrap() else {
            panic!("not an X-Switch");
        };
        assert_eq!(x.net.switch.frame_size, 128);
        assert_eq!(
            x.net.switch.fifo_size,
            XSwitchFabricConfig::default().net.switch.fifo_size
        );
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
