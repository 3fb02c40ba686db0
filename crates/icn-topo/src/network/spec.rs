//! Network and routing specifications as used in experiment files (`topology = "dragonfly:4"`,
//! `routing = "ugal"`).
//!
//! | network spec | network |
//! |---|---|
//! | `mesh:8x8`, `mesh:4x4x4`, `mesh:8x8,2` | mesh (any number of dimensions), optional terminals per router |
//! | `torus:8x8`, `torus:4x4x4,2` | torus |
//! | `ring:N` | ring of `N ≥ 3` |
//! | `fattree:K,N` | k-ary n-tree |
//! | `dragonfly:P` | balanced dragonfly, `a = 2p`, `h = p` |
//! | `dragonfly:P,A,H` | dragonfly with `g = a·h + 1` groups |
//! | `dragonfly:P,palm`, `dragonfly:P,A,H,absolute` | the same with the global links' [`Arrangement`] named (palm tree by default; `absolute` is BookSim2's `dragonflynew`) |
//! | `flatfly:4x4`, `flatfly:4x4,4` | flattened butterfly, optional terminals per router |
//! | `hypercube:D`, `hypercube:D,C` | hypercube |
//! | `crossbar:N` | one router joining `N` terminals (a 0-dimensional hypercube) |
//! | `graph:SPEC` | a [`crate::spec`] graph (`graph:ccc:4,3`, `graph:file:PATH`), one terminal per node |
//!
//! | routing | networks | VC classes by default |
//! |---|---|---|
//! | `dim_order` | mesh, torus, ring (BookSim2's: random tie at `k/2`, a torus class per dimension traversal) | 2 on a torus or ring, else 1 |
//! | `dor` | mesh, torus, ring, flattened butterfly, hypercube (icnlab's: `+` on a tie, dateline class after the wrap link) | 2 (dateline) on a torus or ring, else 1 |
//! | `updown`, `updown_random` | fat tree: up/down with D-mod-k or random up ports; any other network (graphs): up*/down* on a BFS tree from router 0, parent or any up link | 1 |
//! | `minimal`, `valiant`, `ugal` | dragonfly (Kim et al.'s: intermediate group) | 2, 3, 3 |
//! | `dim_order_mesh`, `dim_order_torus` | BookSim2's full names of `dim_order` | as `dim_order` |
//! | `nca_fattree` | fat tree: BookSim2's nearest common ancestor, random up port (= `updown_random`) | 1 |
//! | `anca_fattree` | fat tree: BookSim2's adaptive NCA, the less loaded of two random up ports | 1 |
//! | `xy_yx_mesh`, `romm_mesh`, `valiant_mesh` | mesh: BookSim2's (see [`crate::routing::twophase`]) | 2 |
//! | `valiant_torus` | torus, ring: BookSim2's Valiant, each phase BookSim2's `dim_order` | 4 |
//! | `min_dragonflynew`, `ugal_dragonflynew`, `valiant_dragonflynew` | dragonfly: BookSim2's (see [`crate::routing::dragonfly`]) | 2, 3, 3 |
//!
//! A VC-class count given with the routing overrides the default: `dor` with 1 class on a torus
//! is dimension order without datelines, `ugal` with 2 classes is too few — what the deadlock
//! checker is for.

use super::{Arrangement, Network, Shape};
use crate::TopoError;
use crate::routing::Routing;
use crate::routing::dor::{DimensionOrder, Vcs};
use crate::routing::dragonfly::{Algorithm, DragonflyRouting};
use crate::routing::tree::GraphUpDown;
use crate::routing::twophase::{Kind, TwoPhase};
use crate::routing::updown::{UpDown, UpPort};

/// The accepted network forms, for error messages.
pub const NETWORK_FORMS: &str = "mesh:WxH[x..][,C] | torus:WxH[x..][,C] | ring:N | fattree:K,N | \
     dragonfly:P[,A,H][,palm|,absolute] | flatfly:WxH[x..][,C] | hypercube:D[,C] | crossbar:N | graph:GRAPHSPEC";

/// The accepted routing names.
pub const ROUTING_NAMES: &str = "dim_order | dim_order_mesh | dim_order_torus | nca_fattree | \
     anca_fattree | xy_yx_mesh | romm_mesh | valiant_mesh | valiant_torus | min_dragonflynew | \
     ugal_dragonflynew | valiant_dragonflynew | dor | updown | updown_random | minimal | valiant | \
     ugal";

/// Builds the network a specification names.
pub fn parse_network_spec(spec: &str) -> Result<Network, TopoError> {
    let err = |message: String| TopoError::Spec {
        spec: spec.to_owned(),
        message,
    };
    let (family, args) = spec
        .split_once(':')
        .ok_or_else(|| err(format!("expected one of {NETWORK_FORMS}")))?;
    let num = |s: &str| -> Result<u32, TopoError> {
        s.trim()
            .parse::<u32>()
            .map_err(|_| err(format!("`{s}` is not a number in 0..={}", u32::MAX)))
    };
    let list =
        |s: &str, sep: char| -> Result<Vec<u32>, TopoError> { s.split(sep).map(num).collect() };
    // `WxH..[,C]`: the grid and the optional terminals per router.
    let grid = || -> Result<(Vec<u32>, u32), TopoError> {
        let (dims, c) = match args.split_once(',') {
            Some((d, c)) => (d, num(c)?),
            None => (args, 1),
        };
        Ok((list(dims, 'x')?, c))
    };
    match family.trim() {
        "mesh" => grid().and_then(|(d, c)| Network::cube(&d, false, c)),
        "torus" => grid().and_then(|(d, c)| Network::cube(&d, true, c)),
        "flatfly" => grid().and_then(|(d, c)| Network::flat_fly(&d, c)),
        "ring" => Network::ring(num(args)?),
        "fattree" => match list(args, ',')?.as_slice() {
            [k, n] => Network::fat_tree(*k, *n),
            _ => Err(err("expected fattree:K,N".into())),
        },
        "dragonfly" => {
            let (numbers, arrangement) = match args.rsplit_once(',') {
                Some((rest, "palm")) => (rest, Arrangement::PalmTree),
                Some((rest, "absolute")) => (rest, Arrangement::Absolute),
                _ => (args, Arrangement::PalmTree),
            };
            match list(numbers, ',')?.as_slice() {
                [p] => Network::dragonfly_with(*p, p.saturating_mul(2), *p, arrangement),
                [p, a, h] => Network::dragonfly_with(*p, *a, *h, arrangement),
                _ => Err(err(
                    "expected dragonfly:P or dragonfly:P,A,H, optionally followed by ,palm or ,absolute".into(),
                )),
            }
        }
        "hypercube" => match list(args, ',')?.as_slice() {
            [d] => Network::hypercube(*d, 1),
            [d, c] => Network::hypercube(*d, *c),
            _ => Err(err("expected hypercube:D or hypercube:D,C".into())),
        },
        "crossbar" => Network::crossbar(num(args)?),
        "graph" => Network::from_graph(crate::spec::parse_graph_spec(args)?),
        other => Err(err(format!(
            "unknown family `{other}`; expected one of {NETWORK_FORMS}"
        ))),
    }
}

/// The routing function `name` on `net`, with `vc_classes` classes or the default scheme.
pub fn routing_for(
    net: &Network,
    name: &str,
    vc_classes: Option<u8>,
) -> Result<Box<dyn Routing>, TopoError> {
    let err = |message: String| TopoError::parameter("routing", message);
    let only_one = |what: &str| match vc_classes {
        None | Some(1) => Ok(()),
        Some(n) => Err(err(format!("{what} uses 1 VC class, got {n}"))),
    };
    match name.trim() {
        "dor" => {
            let wrap = matches!(net.shape(), Shape::Cube { wrap: true, .. });
            let vcs = match vc_classes {
                None if wrap => Vcs::Dateline,
                None | Some(1) => Vcs::Single,
                Some(2) if wrap => Vcs::Dateline,
                Some(n) => {
                    return Err(err(format!(
                        "dor uses 1 VC class, or 2 (dateline) on a torus or ring; got {n}"
                    )));
                }
            };
            Ok(Box::new(DimensionOrder::new(net, vcs)?))
        }
        "dim_order" | "dim_order_mesh" | "dim_order_torus" => {
            let wrap = matches!(net.shape(), Shape::Cube { wrap: true, .. });
            if !matches!(net.shape(), Shape::Cube { .. }) {
                return Err(err(format!(
                    "dim_order (BookSim2's) needs a mesh, torus or ring, not {}; dor routes the others",
                    net.shape().describe()
                )));
            }
            let classes = vc_classes.unwrap_or(if wrap { 2 } else { 1 });
            Ok(Box::new(DimensionOrder::booksim(net, classes)?))
        }
        "nca_fattree" | "anca_fattree" => {
            only_one(name)?;
            if !matches!(net.shape(), Shape::FatTree { .. }) {
                return Err(err(format!("{name} (BookSim2's) needs a fat tree")));
            }
            let up = if name.trim() == "anca_fattree" {
                UpPort::Adaptive
            } else {
                UpPort::Random
            };
            Ok(Box::new(UpDown::new(net, up)?))
        }
        "xy_yx_mesh" | "romm_mesh" | "valiant_mesh" | "valiant_torus" => {
            let r = TwoPhase::new(
                net,
                match name.trim() {
                    "xy_yx_mesh" => Kind::XyYx,
                    "romm_mesh" => Kind::Romm,
                    _ => Kind::Valiant,
                },
            )?;
            match vc_classes {
                Some(n) if n != r.vc_classes() => Err(err(format!(
                    "{name} uses {} VC classes, got {n}",
                    r.vc_classes()
                ))),
                _ => Ok(Box::new(r)),
            }
        }
        "updown" | "updown_random" => {
            only_one(name)?;
            let random = name.trim() == "updown_random";
            if matches!(net.shape(), Shape::FatTree { .. }) {
                let up = if random {
                    UpPort::Random
                } else {
                    UpPort::Destination
                };
                Ok(Box::new(UpDown::new(net, up)?))
            } else {
                Ok(Box::new(GraphUpDown::new(net, 0, random)?))
            }
        }
        "minimal"
        | "valiant"
        | "ugal"
        | "min_dragonflynew"
        | "ugal_dragonflynew"
        | "valiant_dragonflynew" => {
            let alg = match name.trim() {
                "minimal" => Algorithm::Minimal,
                "valiant" => Algorithm::Valiant,
                "ugal" => Algorithm::Ugal { threshold: 0 },
                "min_dragonflynew" => Algorithm::BookSimMin,
                "ugal_dragonflynew" => Algorithm::BookSimUgal { threshold: 30 },
                _ => Algorithm::BookSimValiant,
            };
            let r = DragonflyRouting::new(net, alg)?;
            Ok(Box::new(match vc_classes {
                Some(n) => r.with_vc_classes(n)?,
                None => r,
            }))
        }
        other => Err(err(format!(
            "unknown routing `{other}`; expected one of {ROUTING_NAMES}"
        ))),
    }
}

/// The name of the family's usual routing: `dim_order` (BookSim2's, on a torus or ring),
/// `dor`, `updown` (fat trees and graphs) or `minimal` (dragonflies). The one place this
/// mapping is written.
pub fn default_routing_name(net: &Network) -> &'static str {
    match net.shape() {
        Shape::Cube { wrap: true, .. } => "dim_order",
        Shape::Cube { .. } | Shape::FlatFly { .. } | Shape::Hypercube { .. } => "dor",
        Shape::FatTree { .. } | Shape::Graph(_) => "updown",
        Shape::Dragonfly { .. } => "minimal",
    }
}

/// The family's usual routing ([`default_routing_name`]).
pub fn default_routing(net: &Network) -> Result<Box<dyn Routing>, TopoError> {
    routing_for(net, default_routing_name(net), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use proptest::prelude::*;

    #[test]
    fn every_form_parses() {
        let n = |s: &str| parse_network_spec(s).unwrap();
        assert_eq!(n("mesh:8x8").terminals(), 64);
        assert_eq!(n("mesh:4x4x4,2").terminals(), 128);
        assert!(matches!(
            n("torus:4x4").shape(),
            Shape::Cube { wrap: true, .. }
        ));
        assert_eq!(n("ring:5").routers(), 5);
        let xbar = n("crossbar:6");
        assert_eq!((xbar.routers(), xbar.terminals(), xbar.radix()), (1, 6, 6));
        assert_eq!(n("fattree:4,3").terminals(), 64);
        // Balanced p = 2: a = 4, h = 2, g = 9: 72 terminals.
        assert_eq!(n("dragonfly:2").terminals(), 72);
        assert_eq!(n("dragonfly:1,2,2").terminals(), 10);
        let booksim = n("dragonfly:2,absolute");
        assert!(matches!(
            booksim.shape(),
            Shape::Dragonfly {
                a: 4,
                h: 2,
                arrangement: Arrangement::Absolute,
                ..
            }
        ));
        assert!(matches!(
            n("dragonfly:1,2,2,palm").shape(),
            Shape::Dragonfly {
                arrangement: Arrangement::PalmTree,
                ..
            }
        ));
        assert_eq!(n("flatfly:4x4,4").terminals(), 64);
        assert_eq!(n("hypercube:5").terminals(), 32);
        assert_eq!(n("hypercube:5,2").terminals(), 64);
        assert_eq!(n("graph:ccc:4,3").terminals(), 32);
    }

    #[test]
    fn errors_name_the_problem() {
        let e = |s: &str| parse_network_spec(s).unwrap_err().to_string();
        assert!(
            e("dragonfly").contains("expected one of"),
            "{}",
            e("dragonfly")
        );
        assert!(e("butterfly:4").contains("unknown family `butterfly`"));
        assert!(e("fattree:4").contains("expected fattree:K,N"));
        assert!(e("dragonfly:1,2,absolute").contains("optionally followed by"));
        assert!(e("dragonfly:1,2,2,tree").contains("`tree` is not a number"));
        assert!(e("mesh:4xq").contains("`q` is not a number"));
        assert!(e("torus:2x4").contains("≥ 3"));
        assert!(e("dragonfly:99999").contains("dragonfly"));
        assert!(e("graph:ccc:2,3").contains("h must be ≥ k"));
        assert!(e("mesh:99999999999x2").contains("not a number"));
        assert!(e("crossbar:0").contains("crossbar"), "{}", e("crossbar:0"));
    }

    /// A crossbar is one router: its default routing ejects at once, and the deadlock
    /// check finds no channel dependency at all.
    #[test]
    fn a_crossbar_routes_every_pair_through_its_one_router() {
        let xbar = parse_network_spec("crossbar:5").unwrap();
        let routing = default_routing(&xbar).unwrap();
        assert_eq!(routing.vc_classes(), 1);
        cdg::check(&xbar, routing.as_ref()).unwrap();
        for t in 0..5 {
            assert_eq!(xbar.terminal_at(t), (0, t as super::super::PortId));
        }
    }

    #[test]
    fn routings_by_name_with_their_default_classes() {
        let torus = parse_network_spec("torus:4x4").unwrap();
        assert_eq!(routing_for(&torus, "dor", None).unwrap().vc_classes(), 2);
        cdg::check(&torus, routing_for(&torus, "dor", None).unwrap().as_ref()).unwrap();
        let single = routing_for(&torus, "dor", Some(1)).unwrap();
        assert!(matches!(
            cdg::check(&torus, single.as_ref()),
            Err(cdg::CheckError::Cycle { .. })
        ));
        assert!(routing_for(&torus, "dor", Some(3)).is_err());
        let mesh = parse_network_spec("mesh:4x4").unwrap();
        assert_eq!(default_routing(&mesh).unwrap().vc_classes(), 1);
        assert!(routing_for(&mesh, "dor", Some(2)).is_err());
        let df = parse_network_spec("dragonfly:1,2,2").unwrap();
        assert_eq!(routing_for(&df, "ugal", None).unwrap().vc_classes(), 3);
        let few = routing_for(&df, "ugal", Some(2)).unwrap();
        assert!(matches!(
            cdg::check(&df, few.as_ref()),
            Err(cdg::CheckError::Cycle { .. })
        ));
        let ft = parse_network_spec("fattree:2,3").unwrap();
        assert!(routing_for(&ft, "updown_random", None).is_ok());
        assert!(routing_for(&ft, "updown", Some(2)).is_err());
        let e = routing_for(&ft, "minimal", None).unwrap_err().to_string();
        assert!(e.contains("needs a dragonfly, not a fat tree"), "{e}");
        let e = routing_for(&ft, "adaptive", None).unwrap_err().to_string();
        assert!(e.contains("unknown routing `adaptive`"), "{e}");
        let ccc = parse_network_spec("graph:ccc:3,2").unwrap();
        cdg::check(&ccc, default_routing(&ccc).unwrap().as_ref()).unwrap();
        let adaptive = routing_for(&ccc, "updown_random", None).unwrap();
        cdg::check(&ccc, adaptive.as_ref()).unwrap();
    }

    proptest! {
        #[test]
        fn never_panics(
            family in prop::sample::select(vec!["mesh", "torus", "ring", "fattree", "dragonfly", "flatfly", "hypercube", "graph", "x"]),
            args in "[0-6x,:a-z]{0,5}",
        ) {
            // Digits up to 6 keep accepted networks small; the size caps reject the rest
            // before allocating.
            if let Ok(net) = parse_network_spec(&format!("{family}:{args}")) {
                prop_assert_eq!(net.check_wiring(), Ok(()));
            }
        }
    }
}
