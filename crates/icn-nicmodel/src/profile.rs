//! Hardware profiles: the resources of one host + NIC + network, read from TOML.
//!
//! A profile is a list of named resources (host CPU, PCI bus, host↔NIC DMA engine, NIC
//! processor, NIC→net and net→NIC DMA, link, switch). Each resource may have
//!
//! * `clock_mhz` — so a design can give a cost in cycles of *this* resource (firmware cycles
//!   on a LANai4 at 33 MHz cost four times those on a LANai9 at 133 MHz);
//! * `rates` — named throughputs in MB/s (10⁶ bytes per second = bytes per µs), e.g. the PCI
//!   bus's `read`, `write` and `pio` rates;
//! * `ops` — named fixed per-operation costs in µs (DMA start-up, interrupt, switch latency).
//!
//! Designs refer to these by `resource.name`, so a profile for other hardware is just another
//! TOML file. Every number in the bundled profiles carries a comment with its source.

use icn_engine::Invalid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bundled profiles: `(name, TOML text)`.
pub const BUNDLED: [(&str, &str); 4] = [
    ("setup-a", include_str!("../profiles/setup-a.toml")),
    ("setup-b", include_str!("../profiles/setup-b.toml")),
    (
        "fast-ethernet",
        include_str!("../profiles/fast-ethernet.toml"),
    ),
    (
        "gigabit-ethernet",
        include_str!("../profiles/gigabit-ethernet.toml"),
    ),
];

/// Where a resource instance lives: one per node, or one per direction of the link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    #[default]
    Node,
    Link,
}

/// What a resource is; `Dma` resources are the ones a non-pipelined NIC firmware busy-waits
/// on (see [`crate::design`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    #[default]
    Cpu,
    Bus,
    Dma,
    Link,
    Switch,
}

/// One resource of the profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resource {
    #[serde(default)]
    pub kind: Kind,
    #[serde(default)]
    pub scope: Scope,
    /// Clock for cycle-denominated costs, MHz.
    #[serde(default)]
    pub clock_mhz: Option<f64>,
    /// Named throughputs, MB/s (bytes per µs).
    #[serde(default)]
    pub rates: BTreeMap<String, f64>,
    /// Named fixed costs, µs.
    #[serde(default)]
    pub ops: BTreeMap<String, f64>,
}

/// A validated hardware profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub about: String,
    /// Whether the NIC can chain DMAs in hardware (LANai9: yes, LANai4: no).
    #[serde(default)]
    pub dma_chain: bool,
    /// Host page size: the DMA unit when buffers are not physically contiguous.
    #[serde(default = "default_page")]
    pub page_bytes: u64,
    /// Largest packet the NIC puts on the wire, payload bytes. A DMA longer than this leaves
    /// the NIC as several packets that stream through NIC→net DMA, link, net→NIC DMA and the
    /// receive host DMA one behind the other. Unset: one packet per DMA (store and forward).
    #[serde(default)]
    pub packet_bytes: Option<u64>,
    pub resources: BTreeMap<String, Resource>,
}

fn default_page() -> u64 {
    4096
}

/// Resources every design may name; a profile lacking one is rejected early only if a design
/// uses it (Ethernet NICs have no `nic_cpu`).
pub const CORE_RESOURCES: [&str; 3] = ["host_cpu", "pci", "link"];

impl Profile {
    /// Parses and validates a profile from TOML text.
    pub fn parse(text: &str) -> Result<Profile, Invalid> {
        let value: toml::Value = toml::from_str(text)
            .map_err(|e| Invalid::new("profile", format!("malformed TOML: {}", e.message())))?;
        let p: Profile = icn_engine::config::deserialize_at(value).map_err(|e| Invalid {
            key: format!("profile.{}", e.key),
            message: e.message,
        })?;
        p.validate()?;
        Ok(p)
    }

    /// A bundled profile by name, or a TOML file at that path.
    pub fn load(name_or_path: &str) -> Result<Profile, Invalid> {
        if let Some((_, text)) = BUNDLED.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text);
        }
        let text = icn_engine::input::read_to_string(name_or_path).map_err(|e| {
            let names: Vec<&str> = BUNDLED.iter().map(|(n, _)| *n).collect();
            Invalid::new(
                "profile",
                format!(
                    "not a bundled profile ({}) and cannot read file `{name_or_path}`: {e}",
                    names.join(", ")
                ),
            )
        })?;
        // An error inside the file names it (the key alone points at the experiment file).
        Profile::parse(&text).map_err(|e| Invalid {
            message: format!("in `{name_or_path}`: {}", e.message),
            ..e
        })
    }

    /// Every rate and clock positive and finite, every op non-negative, core resources present.
    pub fn validate(&self) -> Result<(), Invalid> {
        for core in CORE_RESOURCES {
            if !self.resources.contains_key(core) {
                return Err(Invalid::new(
                    format!("profile.resources.{core}"),
                    "missing: every profile needs host_cpu, pci and link",
                ));
            }
        }
        Invalid::check(
            self.page_bytes >= 64,
            "profile.page_bytes",
            "[64, ∞)",
            self.page_bytes,
        )?;
        if let Some(n) = self.packet_bytes {
            Invalid::check(n >= 64, "profile.packet_bytes", "[64, ∞) bytes", n)?;
        }
        for (name, r) in &self.resources {
            let key = |k: &str| format!("profile.resources.{name}.{k}");
            if let Some(c) = r.clock_mhz {
                Invalid::check(c.is_finite() && c > 0.0, &key("clock_mhz"), "(0, ∞) MHz", c)?;
            }
            for (rate, v) in &r.rates {
                Invalid::check(
                    v.is_finite() && *v > 0.0,
                    &key(&format!("rates.{rate}")),
                    "(0, ∞) MB/s",
                    v,
                )?;
            }
            for (op, v) in &r.ops {
                Invalid::check(
                    v.is_finite() && *v >= 0.0,
                    &key(&format!("ops.{op}")),
                    "[0, ∞) µs",
                    v,
                )?;
            }
        }
        Ok(())
    }

    /// `resource.rate` in MB/s; the error names the design key that asked for it.
    pub fn rate(&self, dotted: &str, key: &str) -> Result<f64, Invalid> {
        let (r, n) = self.split(dotted, key)?;
        r.rates.get(n).copied().ok_or_else(|| {
            Invalid::new(
                key,
                format!("profile `{}` has no rate `{dotted}`", self.name),
            )
        })
    }

    /// `resource.op` in µs; the error names the design key that asked for it.
    pub fn op(&self, dotted: &str, key: &str) -> Result<f64, Invalid> {
        let (r, n) = self.split(dotted, key)?;
        r.ops.get(n).copied().ok_or_else(|| {
            Invalid::new(key, format!("profile `{}` has no op `{dotted}`", self.name))
        })
    }

    /// The clock of resource `name` in MHz.
    pub fn clock(&self, name: &str, key: &str) -> Result<f64, Invalid> {
        self.resource(name, key)?.clock_mhz.ok_or_else(|| {
            Invalid::new(
                key,
                format!("resource `{name}` has no clock_mhz, so cycles cannot be converted"),
            )
        })
    }

    pub fn resource(&self, name: &str, key: &str) -> Result<&Resource, Invalid> {
        self.resources.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.resources.keys().map(String::as_str).collect();
            Invalid::new(
                key,
                format!(
                    "unknown resource `{name}` (profile `{}` has: {})",
                    self.name,
                    known.join(", ")
                ),
            )
        })
    }

    fn split<'a>(&self, dotted: &'a str, key: &str) -> Result<(&Resource, &'a str), Invalid> {
        let (res, name) = dotted
            .split_once('.')
            .ok_or_else(|| Invalid::new(key, format!("`{dotted}` must be `resource.name`")))?;
        Ok((self.resource(res, key)?, name))
    }

    /// Every numeric parameter as `(dotted path, value)`, for the sensitivity table.
    pub fn parameters(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        for (name, r) in &self.resources {
            if let Some(c) = r.clock_mhz {
                out.push((format!("{name}.clock_mhz"), c));
            }
            for (k, v) in &r.rates {
                out.push((format!("{name}.rates.{k}"), *v));
            }
            for (k, v) in &r.ops {
                out.push((format!("{name}.ops.{k}"), *v));
            }
        }
        out
    }

    /// A copy with parameter `path` (as from [`Profile::parameters`]) multiplied by `factor`.
    pub fn scaled(&self, path: &str, factor: f64) -> Profile {
        let mut p = self.clone();
        let mut parts = path.splitn(3, '.');
        let (Some(res), Some(what)) = (parts.next(), parts.next()) else {
            return p;
        };
        if let Some(r) = p.resources.get_mut(res) {
            match (what, parts.next()) {
                ("clock_mhz", None) => r.clock_mhz = r.clock_mhz.map(|c| c * factor),
                ("rates", Some(k)) => {
                    if let Some(v) = r.rates.get_mut(k) {
                        *v *= factor;
                    }
                }
                ("ops", Some(k)) => {
                    if let Some(v) = r.ops.get_mut(k) {
                        *v *= factor;
                    }
                }
                _ => {}
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_profiles_parse() {
        for (name, text) in BUNDLED {
            let p = Profile::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.name, name);
        }
    }

    #[test]
    fn every_number_in_a_bundled_profile_says_where_it_comes_from() {
        for (name, text) in BUNDLED {
            for line in text.lines() {
                let numeric = line
                    .split_once('=')
                    .is_some_and(|(_, v)| v.trim_start().starts_with(|c: char| c.is_ascii_digit()));
                assert!(
                    !numeric || line.contains('#'),
                    "{name}: `{line}` has no source comment"
                );
            }
        }
    }

    #[test]
    fn zero_rate_is_rejected_naming_the_key() {
        let text = BUNDLED[0].1.replace("write = 112.0", "write = 0");
        let e = Profile::parse(&text).unwrap_err();
        assert_eq!(e.key, "profile.resources.pci.rates.write");
        assert!(e.message.contains("(0, ∞)"), "{e}");
    }

    #[test]
    fn negative_clock_is_rejected() {
        let text = BUNDLED[1].1.replace("clock_mhz = 133", "clock_mhz = -133");
        let e = Profile::parse(&text).unwrap_err();
        assert_eq!(e.key, "profile.resources.nic_cpu.clock_mhz");
    }

    #[test]
    fn tiny_packet_size_is_rejected() {
        let text = BUNDLED[1]
            .1
            .replace("packet_bytes = 4096", "packet_bytes = 8");
        let e = Profile::parse(&text).unwrap_err();
        assert_eq!(e.key, "profile.packet_bytes");
    }

    #[test]
    fn missing_core_resource_is_rejected() {
        let mut p = Profile::parse(BUNDLED[0].1).unwrap();
        p.resources.remove("pci");
        let e = p.validate().unwrap_err();
        assert_eq!(e.key, "profile.resources.pci");
    }

    #[test]
    fn unknown_field_and_bad_path_are_rejected() {
        let e = Profile::parse("name = \"x\"\nspeed = 3\n[resources]\n").unwrap_err();
        assert!(e.key.contains("speed"), "{e}");
        let e = Profile::load("/nonexistent/profile.toml").unwrap_err();
        assert_eq!(e.key, "profile");
        assert!(e.message.contains("setup-a"));
    }

    #[test]
    fn scaling_touches_exactly_one_parameter() {
        let p = Profile::parse(BUNDLED[0].1).unwrap();
        let q = p.scaled("pci.rates.read", 1.2);
        let before = p.parameters();
        let after = q.parameters();
        let changed: Vec<_> = before
            .iter()
            .zip(&after)
            .filter(|(a, b)| a.1 != b.1)
            .collect();
        assert_eq!(changed.len(), 1);
        assert!((changed[0].1.1 / changed[0].0.1 - 1.2).abs() < 1e-12);
    }
}
