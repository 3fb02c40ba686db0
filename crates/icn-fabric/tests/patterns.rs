//! The one `traffic.pattern` type: BookSim2's names and the earlier ones a configuration may
//! still hold, and the X-Switch's `neighbour` (now `neighbor_x`) kept apart from BookSim2's
//! `neighbor`.

use icn_engine::config::deserialize_at;
use icn_engine::rng::stream;
use icn_fabric::traffic::{Grid, Sizes, TrafficConfig, TrafficPattern, Workload};

fn read(name: &str) -> TrafficPattern {
    deserialize_at(toml::Value::String(name.into())).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every name reads as its pattern, and writing a pattern gives its name back; the earlier or
/// BookSim2 spellings read as the same pattern.
#[test]
fn names_and_aliases() {
    for (name, p) in [
        ("neighbor_x", TrafficPattern::NeighborX),
        ("neighbour", TrafficPattern::NeighborX),
        ("neighbor", TrafficPattern::Neighbor),
        ("bit_complement", TrafficPattern::BitComplement),
        ("bitcomp", TrafficPattern::BitComplement),
        ("random_permutation", TrafficPattern::RandomPermutation),
        ("randperm", TrafficPattern::RandomPermutation),
        ("bitrev", TrafficPattern::BitReverse),
    ] {
        assert_eq!(read(name), p, "{name}");
        assert_eq!(read(p.name()), p);
        assert_eq!(toml::Value::try_from(p).unwrap().as_str(), Some(p.name()));
    }
}

fn destination(p: TrafficPattern, grid: Grid, s: usize) -> usize {
    let t = TrafficConfig {
        pattern: p,
        ..TrafficConfig::default()
    };
    let sizes = Sizes {
        size: 1,
        size_large: 1,
        large_fraction: 0.0,
    };
    Workload::new(&t, grid.x * grid.y, Some(grid), sizes).destination(s, &mut stream(1, 0))
}

/// On a 4×4 mesh `neighbour` (x + 1) and BookSim2's `neighbor` (every coordinate + 1) differ:
/// source 5 = (1, 1) goes to (2, 1) = 6 and to (2, 2) = 10; on a ring of 5 both are s + 1.
#[test]
fn neighbour_is_not_booksims_neighbor_except_on_a_ring() {
    let mesh = Grid {
        x: 4,
        y: 4,
        wrap: false,
    };
    assert_eq!(destination(read("neighbour"), mesh, 5), 6);
    assert_eq!(destination(read("neighbor"), mesh, 5), 10);
    let ring = Grid {
        x: 5,
        y: 1,
        wrap: true,
    };
    for s in 0..5 {
        assert_eq!(destination(read("neighbour"), ring, s), (s + 1) % 5);
        assert_eq!(destination(read("neighbor"), ring, s), (s + 1) % 5);
    }
}
