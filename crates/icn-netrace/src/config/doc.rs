//! What a Netrace replay reports: the scalars every model that accepts a `[netrace]` table
//! declares among its outputs ([`icn_engine::ModelDoc::outputs`]) and reports through
//! [`icn_engine::Metrics::put`].

use icn_engine::doc::{Output, output};

pub const PACKETS: Output = output("packets", "", "`[netrace]`: trace packets delivered");
pub const RUNTIME: Output = output(
    "runtime",
    "cycles",
    "`[netrace]`: from the start of the first replayed region to the last delivery",
);
pub const TRACE_CYCLES: Output = output(
    "trace_cycles",
    "cycles",
    "`[netrace]`: the replayed regions' length in the traced full-system run",
);
pub const SLOWDOWN: Output = output("slowdown", "", "`[netrace]`: runtime / trace_cycles");
pub const LATENCY_MEAN: Output = output(
    "latency_mean",
    "cycles",
    "`[netrace]`: packet latency: delivery − injection at the source endpoint",
);
pub const LATENCY_P99: Output = output(
    "latency_p99",
    "cycles",
    "`[netrace]`: packet latency, 99th percentile",
);
pub const LATENCY_MAX: Output = output(
    "latency_max",
    "cycles",
    "`[netrace]`: packet latency, largest",
);
pub const DELAY_MEAN: Output = output(
    "delay_mean",
    "cycles",
    "`[netrace]`: injection − trace cycle: waiting for dependencies delivered later than in the traced run",
);
pub const DELAY_MAX: Output = output(
    "delay_max",
    "cycles",
    "`[netrace]`: dependency delay, largest",
);
pub const PEAK_LIVE: Output = output(
    "peak_live",
    "",
    "`[netrace]`: most packets read and not yet delivered at once (the replay's memory)",
);
pub const PEAK_WINDOW: Output = output(
    "peak_window",
    "",
    "`[netrace]`: largest dependency window (ids listed and not yet read)",
);
pub const CYCLES_SIMULATED: Output = output(
    "cycles_simulated",
    "cycles",
    "`[netrace]`: fabric cycles the replay covered",
);

/// Every output of a replay, in the order it reports them.
pub const OUTPUTS: &[Output] = &[
    PACKETS,
    RUNTIME,
    TRACE_CYCLES,
    SLOWDOWN,
    LATENCY_MEAN,
    LATENCY_P99,
    LATENCY_MAX,
    DELAY_MEAN,
    DELAY_MAX,
    PEAK_LIVE,
    PEAK_WINDOW,
    CYCLES_SIMULATED,
];
