//! A model's config read as a `[fabric]` table: the SCI kinds' keys are their models'
//! network keys, read by the model's own struct (`SciConfig`, `SwitchedConfig`) with its
//! names, defaults, ranges, checks and documentation. What only an open-loop run has — its
//! traffic, offered load and run lengths (the cluster's program is a fabric's traffic) — is
//! listed per kind ([`ModelOnly`]): such a key is refused by name, saying why, and not
//! written back.

use icn_engine::Invalid;
use icn_engine::config::deserialize_at;
use icn_engine::config::sections::toml;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A key of the model that its fabric does not read (dotted, `ring.traffic`), and why.
pub type ModelOnly = (&'static str, &'static str);

/// What a model-only key about the workload says.
pub const WORKLOAD: &str =
    "is the open-loop model's workload; a fabric carries the cluster's program";

fn remove_path(t: &mut toml::Table, dotted: &str) -> Option<toml::Value> {
    match dotted.split_once('.') {
        Some((head, rest)) => remove_path(t.get_mut(head)?.as_table_mut()?, rest),
        None => t.remove(dotted),
    }
}

/// `cfg`'s table without the model-only keys.
pub fn network_table<C: Serialize>(
    cfg: &C,
    model_only: &[ModelOnly],
) -> Result<toml::Table, String> {
    let mut t = toml::Table::try_from(cfg).map_err(|e| e.to_string())?;
    for (key, _) in model_only {
        remove_path(&mut t, key);
    }
    Ok(t)
}

/// Reads `table` as the model's config `C` (its defaults for every key not given), refusing
/// a model-only key by name.
pub fn read_network<C: DeserializeOwned>(
    mut table: toml::Table,
    model_only: &[ModelOnly],
) -> Result<C, Invalid> {
    for (key, why) in model_only {
        if remove_path(&mut table, key).is_some() {
            return Err(Invalid::new(
                *key,
                format!("not a key of this fabric: it {why}"),
            ));
        }
    }
    deserialize_at(toml::Value::Table(table))
}

/// Writes a kind's table: `topology` as written, then the model config's network keys.
pub fn write<S: Serializer, C: Serialize>(
    s: S,
    topology: &str,
    cfg: &C,
    model_only: &[ModelOnly],
) -> Result<S::Ok, S::Error> {
    let mut t = toml::Table::new();
    t.insert("topology".into(), topology.into());
    let net = network_table(cfg, model_only).map_err(serde::ser::Error::custom)?;
    t.extend(net.into_iter().filter(|(k, _)| k != "topology"));
    t.serialize(s)
}

/// Reads a kind's table: `topology` (checked by `topology`, kept as written; `None` when not
/// given) and the rest as the model config's network keys ([`read_network`]).
pub fn read<'de, D: Deserializer<'de>, C: DeserializeOwned>(
    d: D,
    model_only: &[ModelOnly],
    topology: impl Fn(&toml::Value) -> Result<(), Invalid>,
) -> Result<(Option<String>, C), D::Error> {
    let mut t = toml::Table::deserialize(d)?;
    let written = match t.remove("topology") {
        None => None,
        Some(v) => {
            topology(&v).map_err(serde::de::Error::custom)?;
            Some(v.as_str().unwrap_or_default().to_owned())
        }
    };
    let cfg = read_network(t, model_only).map_err(serde::de::Error::custom)?;
    Ok((written, cfg))
}
