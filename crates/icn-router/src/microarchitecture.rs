//! Which router a network is made of: the `microarchitecture` key of the routers
//! ([`crate::VcParams`]), one name per router design, read by the one builder of every VC
//! network ([`crate::fabric::VcSpec::engine`]).
//!
//! `speculative = true`, the key of earlier versions (BookSim2's `speculative = 1` on its `iq`
//! router), is still read: it means `microarchitecture = "speculative"` (and `false` leaves
//! `microarchitecture` as it is). A new microarchitecture is a variant here, its folder beside
//! `grid/` and `anyradix/`, and one arm in [`crate::fabric::VcEngine`] (`docs/extending.md`).

use crate::VcParams;
use icn_engine::Invalid;
use serde::{Deserialize, Serialize};

/// A router design (BookSim2's `router` key and its `speculative` flag).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Microarchitecture {
    /// BookSim2's `iq` router: routing, VC allocation, switch allocation and traversal, one
    /// stage after the other ([`crate::grid`] on 2-D grids, [`crate::anyradix`] elsewhere).
    #[default]
    #[serde(alias = "iq")]
    InputQueued,
    /// The input-queued router with speculative switch allocation: a head bids for the
    /// switch in the cycle it bids for its output VC ([`crate::speculative`], router of any
    /// radix only).
    Speculative,
}

impl Microarchitecture {
    /// Every microarchitecture (the conformance suite runs each).
    pub const ALL: [Microarchitecture; 2] = [
        Microarchitecture::InputQueued,
        Microarchitecture::Speculative,
    ];

    /// The key's value, as written in a configuration.
    pub fn name(self) -> &'static str {
        match self {
            Microarchitecture::InputQueued => "input_queued",
            Microarchitecture::Speculative => "speculative",
        }
    }

    /// Whether the 5-port fast path of 2-D grids ([`crate::grid`]) implements it; the
    /// router of any radix implements every microarchitecture.
    pub fn has_grid_fast_path(self) -> bool {
        match self {
            Microarchitecture::InputQueued => true,
            Microarchitecture::Speculative => false,
        }
    }

    /// The `microarchitecture` that the alias key `speculative` (of earlier versions) selects,
    /// given the configured one: `true` is the speculative router, `false` changes nothing.
    pub fn with_speculative_alias(self, speculative: bool) -> Microarchitecture {
        if speculative {
            Microarchitecture::Speculative
        } else {
            self
        }
    }
}

/// The alias key of `microarchitecture = "speculative"`.
const SPECULATIVE: &str = "speculative";

/// [`VcParams`]' keys, and after `microarchitecture` its alias `speculative` (true when the
/// router is the speculative one), so that the alias is a key of the routers' table: the
/// drivers that read these keys beside their own (`icn_engine::config_sections!`) hand it
/// here, and `icnlab keys` documents it.
impl Serialize for VcParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Keys<'a>(&'a VcParams);
        impl Serialize for Keys<'_> {
            fn serialize<S2: serde::Serializer>(&self, s: S2) -> Result<S2::Ok, S2::Error> {
                VcParams::serialize(self.0, s)
            }
        }
        let keys = toml::Table::try_from(Keys(self)).map_err(serde::ser::Error::custom)?;
        let mut table = toml::Table::new();
        for (key, value) in keys {
            let alias_follows = key == "microarchitecture";
            table.insert(key, value);
            if alias_follows {
                let speculative = self.microarchitecture == Microarchitecture::Speculative;
                table.insert(SPECULATIVE.into(), toml::Value::Boolean(speculative));
            }
        }
        table.serialize(s)
    }
}

/// [`VcParams`]' keys with `deny_unknown_fields`, and `speculative = true` read as
/// `microarchitecture = "speculative"`. Errors name their key.
impl<'de> Deserialize<'de> for VcParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys(VcParams);
        impl<'de2> Deserialize<'de2> for Keys {
            fn deserialize<D2: serde::Deserializer<'de2>>(d: D2) -> Result<Self, D2::Error> {
                VcParams::deserialize(d).map(Keys)
            }
        }
        let custom = <D::Error as serde::de::Error>::custom;
        let mut table = toml::Table::deserialize(d)?;
        let speculative = match table.remove(SPECULATIVE) {
            None => false,
            Some(toml::Value::Boolean(b)) => b,
            Some(other) => {
                return Err(custom(Invalid::new(
                    SPECULATIVE,
                    format!("invalid type: {}, expected a boolean", other.type_str()),
                )));
            }
        };
        let Keys(mut p) =
            icn_engine::config::deserialize_at(toml::Value::Table(table)).map_err(custom)?;
        p.microarchitecture = p.microarchitecture.with_speculative_alias(speculative);
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::config::deserialize_at;

    fn read(text: &str) -> Result<VcParams, Invalid> {
        deserialize_at(toml::Value::Table(toml::from_str(text).unwrap()))
    }

    /// `microarchitecture` names the router; `speculative = true` (the key of earlier
    /// versions) is `microarchitecture = "speculative"`, `false` changes nothing; BookSim2's
    /// `iq` is `input_queued`.
    #[test]
    fn the_speculative_key_is_an_alias() {
        use Microarchitecture::*;
        for (text, m) in [
            ("", InputQueued),
            ("microarchitecture = \"input_queued\"", InputQueued),
            ("microarchitecture = \"iq\"", InputQueued),
            ("microarchitecture = \"speculative\"", Speculative),
            ("speculative = true", Speculative),
            ("speculative = false", InputQueued),
            (
                "speculative = false\nmicroarchitecture = \"speculative\"",
                Speculative,
            ),
            (
                "speculative = true\nmicroarchitecture = \"input_queued\"",
                Speculative,
            ),
        ] {
            assert_eq!(read(text).unwrap().microarchitecture, m, "{text}");
        }
    }

    /// Bad values and unknown keys are refused naming their key, with what is allowed.
    #[test]
    fn errors_name_the_key() {
        let e = read("microarchitecture = \"oq\"").unwrap_err();
        assert_eq!(e.key, "microarchitecture");
        assert!(
            e.message
                .contains("expected one of `input_queued`, `iq`, `speculative`"),
            "{}",
            e.message
        );
        let e = read("speculative = 1").unwrap_err();
        assert_eq!(e.key, "speculative");
        assert!(e.message.contains("expected a boolean"), "{}", e.message);
        assert_eq!(read("vcs = \"many\"").unwrap_err().key, "vcs");
        assert_eq!(read("speed = 1").unwrap_err().key, "speed");
    }

    /// A configuration written back reads as itself, with the alias right after the key it
    /// stands for (the order `icnlab keys` lists them in).
    #[test]
    fn written_back_it_reads_as_itself() {
        for m in [
            Microarchitecture::InputQueued,
            Microarchitecture::Speculative,
        ] {
            let p = VcParams {
                microarchitecture: m,
                ..VcParams::default()
            };
            let table = toml::Table::try_from(&p).unwrap();
            let keys: Vec<&str> = table.keys().map(String::as_str).collect();
            let at = keys.iter().position(|k| *k == "microarchitecture").unwrap();
            assert_eq!(keys[at + 1], "speculative");
            assert_eq!(table["microarchitecture"].as_str(), Some(m.name()));
            assert_eq!(read(&toml::to_string(&p).unwrap()).unwrap(), p);
        }
    }
}
