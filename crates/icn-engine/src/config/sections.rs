//! Configs whose keys are read at one level of one table but owned by several structs.
//!
//! A network kind's keys (the VC routers', say) are described once, by one struct in the
//! network's crate, and read by every driver of that network: the open-loop model
//! (`model = "vc-router"`, keys at the top level) and the cluster's `[fabric]` table. A driver
//! adds keys of its own beside them, in the same table, so serde's `flatten` would be the
//! natural tool; but `flatten` buffers the table, which loses the key path of an error (a
//! bad `vcs` would be reported at the top level) and weakens `deny_unknown_fields`. So a
//! section is split off by its keys instead: the keys of its `Default`'s table go to the
//! section, the rest to the driver's own fields, each read with `deny_unknown_fields` and
//! errors naming the key ([`crate::config::deserialize_at`]).
//!
//! Use: mark the section fields `#[serde(skip)]`, derive with `#[serde(remote = "Self")]`
//! (serde then writes inherent `serialize`/`deserialize` functions for the struct's own
//! fields), and call [`config_sections!`](crate::config_sections) for the trait impls.
//! A section may itself have sections: its keys are those of its whole default table.

use super::{Invalid, deserialize_at};
use serde::Serialize;
use serde::de::DeserializeOwned;
#[doc(hidden)]
pub use toml;

/// The keys of `S`'s default table, in order.
pub fn keys_of<S: Serialize + Default>() -> Vec<String> {
    toml::Table::try_from(S::default())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

/// Removes `S`'s keys from `rest` and reads them as an `S`.
pub fn take<S: Serialize + DeserializeOwned + Default>(
    rest: &mut toml::Table,
) -> Result<S, Invalid> {
    let mut own = toml::Table::new();
    for key in keys_of::<S>() {
        if let Some(v) = rest.remove(&key) {
            own.insert(key, v);
        }
    }
    deserialize_at(toml::Value::Table(own))
}

/// Appends `part`'s table to `table`.
pub fn append<P: Serialize + ?Sized>(table: &mut toml::Table, part: &P) -> Result<(), String> {
    let t = toml::Table::try_from(part).map_err(|e| e.to_string())?;
    table.extend(t);
    Ok(())
}

/// `Serialize` and `Deserialize` for a struct with sections (see the module documentation):
/// `config_sections!(Type, own first: field: Section, ...)` writes the struct's own keys
/// first, `sections first` writes them last.
#[macro_export]
macro_rules! config_sections {
    ($ty:ty, own first: $($field:ident : $sec:ty),+ $(,)?) => {
        $crate::config_sections!(@impl $ty, true, $($field : $sec),+);
    };
    ($ty:ty, sections first: $($field:ident : $sec:ty),+ $(,)?) => {
        $crate::config_sections!(@impl $ty, false, $($field : $sec),+);
    };
    (@impl $ty:ty, $own_first:expr, $($field:ident : $sec:ty),+) => {
        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                struct Own<'a>(&'a $ty);
                impl ::serde::Serialize for Own<'_> {
                    fn serialize<S2: ::serde::Serializer>(
                        &self,
                        s: S2,
                    ) -> ::std::result::Result<S2::Ok, S2::Error> {
                        <$ty>::serialize(self.0, s)
                    }
                }
                let err = <S::Error as ::serde::ser::Error>::custom;
                let mut table = $crate::config::sections::toml::Table::new();
                if $own_first {
                    $crate::config::sections::append(&mut table, &Own(self)).map_err(err)?;
                }
                $( $crate::config::sections::append(&mut table, &self.$field).map_err(err)?; )+
                if !$own_first {
                    $crate::config::sections::append(&mut table, &Own(self)).map_err(err)?;
                }
                ::serde::Serialize::serialize(&table, s)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                struct Own($ty);
                impl<'de2> ::serde::Deserialize<'de2> for Own {
                    fn deserialize<D2: ::serde::Deserializer<'de2>>(
                        d: D2,
                    ) -> ::std::result::Result<Self, D2::Error> {
                        <$ty>::deserialize(d).map(Own)
                    }
                }
                let err = <D::Error as ::serde::de::Error>::custom;
                let mut rest = <$crate::config::sections::toml::Table as ::serde::Deserialize>::deserialize(d)?;
                $( let $field: $sec = $crate::config::sections::take(&mut rest).map_err(err)?; )+
                let Own(mut this) =
                    $crate::config::deserialize_at::<Own>($crate::config::sections::toml::Value::Table(rest)).map_err(err)?;
                $( this.$field = $field; )+
                Ok(this)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::config::deserialize_at;
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Net {
        vcs: usize,
        name: String,
    }

    impl Default for Net {
        fn default() -> Self {
            Net {
                vcs: 2,
                name: "mesh".into(),
            }
        }
    }

    #[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
    #[serde(remote = "Self", deny_unknown_fields, default)]
    struct Model {
        #[serde(skip)]
        net: Net,
        load: f64,
        inner: Inner,
    }

    #[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Inner {
        x: u8,
    }

    crate::config_sections!(Model, sections first: net: Net);

    fn read(text: &str) -> Result<Model, crate::Invalid> {
        deserialize_at(toml::Value::Table(toml::from_str(text).unwrap()))
    }

    /// Both structs' keys at one level, each with its default; a config written back reads
    /// as itself, the section's keys first.
    #[test]
    fn keys_of_both_structs_share_one_table() {
        let m = read("vcs = 4\nload = 0.5\n").unwrap();
        assert_eq!(m.net.vcs, 4);
        assert_eq!(m.net.name, "mesh");
        assert_eq!(m.load, 0.5);
        let table = toml::Table::try_from(&m).unwrap();
        let keys: Vec<&str> = table.keys().map(String::as_str).collect();
        assert_eq!(keys, ["vcs", "name", "load", "inner"]);
        assert_eq!(read(&toml::to_string(&m).unwrap()).unwrap(), m);
    }

    /// An error names its key, whichever struct reads it; an unknown key is refused.
    #[test]
    fn errors_name_the_key() {
        assert_eq!(read("vcs = \"many\"").unwrap_err().key, "vcs");
        assert_eq!(read("load = \"high\"").unwrap_err().key, "load");
        assert_eq!(read("[inner]\nx = 300").unwrap_err().key, "inner.x");
        let e = read("speed = 1").unwrap_err();
        assert_eq!(e.key, "speed");
        assert!(e.message.contains("unknown field"), "{}", e.message);
    }
}
