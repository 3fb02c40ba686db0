//! The `xswitch` network kind, described once: its keys ([`XSwitchNetConfig`], with the
//! switches' and links' own keys in [`NetParams`]), their documentation ([`KEYS`]), their
//! validation, the memory estimate and the prepared topology ([`XSwitchNetConfig::prepare`]).
//!
//! Both drivers read it: `model = "xswitch"` (these keys at the top level beside its
//! workload keys) and the cluster's `[fabric] kind = "xswitch"` (beside the clock and the
//! deadlock check of the pairs a workload uses), with the same names, defaults and ranges.

use crate::topology::Topology;
use crate::xswitch::NetParams;
use icn_engine::Invalid;
use icn_engine::doc::{Key, key};
use serde::{Deserialize, Serialize};

/// The keys of a network of X-Switches and X-NIAs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct XSwitchNetConfig {
    /// `ring:N`, `mesh:XxY`, `torus:XxY`, `star`, `tree:D`, `ccc:H,K`, `file:PATH`, or a
    /// network spelling of the VC routers whose routers have at most 5 ports.
    pub topology: String,
    /// Threads simulating one replication (0: every core); results are the same at any count.
    pub threads: usize,
    /// Frames, FIFOs and flow control, links, the NIA's DMA, the watchdog.
    #[serde(skip)]
    pub switch: NetParams,
}

icn_engine::config_sections!(XSwitchNetConfig, own first: switch: NetParams);

impl Default for XSwitchNetConfig {
    fn default() -> Self {
        XSwitchNetConfig {
            topology: "mesh:8x8".into(),
            threads: 1,
            switch: NetParams::default(),
        }
    }
}

/// Unit and meaning of every key of [`XSwitchNetConfig`]: the rows of `icnlab keys xswitch`
/// and of `icnlab keys cluster` under `fabric.kind = "xswitch"`.
pub const KEYS: &[Key] = &[
    key(
        "topology",
        "",
        "the network of X-Switches: `ring:N`, `mesh:XxY`, `torus:XxY`, `star`, `tree:D`, `ccc:H,K`, `fattree:2,N`, `dragonfly:1,2,1`, `hypercube:D` (D ≤ 4), `crossbar:N` (N ≤ 5), `graph:SPEC` or `file:PATH`",
    ),
    key(
        "threads",
        "threads",
        "threads simulating one replication (0: every core); results are the same at any count",
    ),
    key("link_delay", "cycles", "latency of a link"),
    key("fifo_size", "symbols", "input FIFO of a switch port"),
    key(
        "stop_threshold",
        "symbols",
        "FIFO fill at which the port sends STOP upstream",
    ),
    key(
        "go_threshold",
        "symbols",
        "FIFO fill at which the port sends GO again",
    ),
    key(
        "frame_size",
        "bytes",
        "payload per frame; longer messages are split",
    ),
    key("check", "", "frame check: `none`, `crc16` or `crc32`"),
    key("dma_delay", "cycles", "NIA DMA setup time per message"),
    key(
        "watchdog",
        "cycles",
        "cycles without progress that count as a deadlock",
    ),
    key(
        "watchdog_wall_s",
        "s",
        "seconds of wall time without progress that count as a deadlock (the clock is read every 4096 still cycles)",
    ),
];

impl XSwitchNetConfig {
    /// The defaults on `topology`.
    pub fn on(topology: &str) -> XSwitchNetConfig {
        XSwitchNetConfig {
            topology: topology.into(),
            ..XSwitchNetConfig::default()
        }
    }

    /// Checks every key and builds the topology (`file:` paths already resolved by the
    /// caller), once for every replication; `partitions` is the number of partitions the
    /// network will be simulated in (every partition keeps whole-network port vectors, so
    /// the memory estimate grows with it). Errors name bare keys; the cluster prefixes
    /// `fabric.`.
    pub fn prepare(
        &self,
        partitions: impl FnOnce(&Topology) -> Result<usize, Invalid>,
    ) -> Result<(Topology, usize), Invalid> {
        let t = Topology::from_spec(&self.topology)?;
        self.switch.validate()?;
        Invalid::check(
            self.threads <= 1024,
            "threads",
            "0 (every core) ..= 1024",
            self.threads,
        )?;
        let partitions = partitions(&t)?;
        crate::xswitch_model::check_state_fits("topology", &t, &self.switch, partitions)?;
        Ok((t, partitions))
    }
}
