//! The fabric interface: the one harness every network model plugs into.
//!
//! A *fabric* is a network seen from its endpoints: an endpoint injects a [`Packet`] at the
//! fabric's current time, and the fabric reports a [`Delivery`] when the packet's last byte
//! has been accepted at its destination. Every fabric speaks one time base, integer
//! **picoseconds** ([`Ps`]), whatever its own clock: the X-Switch moves one 9-bit symbol per
//! cycle, the VC router one flit, the SCI ring one 16-bit symbol every 2 ns, and the
//! [`ideal`] fabric has no clock at all. Each model keeps its own cycle loop inside
//! [`Fabric::advance`]; the caller only says how far to go.
//!
//! Who uses it:
//! * the open-loop load–latency harness ([`harness`]: Bernoulli sources of the [`traffic`]
//!   patterns, warm-up, measurement window, drain), the same for the X-Switch, the VC router
//!   and any other fabric;
//! * the cluster simulator (`icn-cluster`), where host and NIC endpoints feed a program's
//!   messages into any fabric.
//!
//! Rules every implementation keeps (checked by the conformance suite each fabric runs):
//! 1. every injected packet is delivered exactly once, unless the fabric reports an error;
//! 2. deliveries come out of `advance` in non-decreasing time, all `< until`, all
//!    `≥` their injection time;
//! 3. [`Fabric::zero_load`] is what the fabric does to a packet alone: on the fabric freshly
//!    built, a packet of `bytes` from `src` to `dst` injected at the time of the question
//!    is delivered `latency` later (route latency and its own serialisation), and in a train
//!    of packets like it injected at the same time each lands `spacing[k]` after the one
//!    before (the first gap checked by
//!    [`conformance::zero_load_is_exact`]). The cluster splits a message's time in the
//!    fabric into this *wire* time and *waiting* (contention, queueing, blocking) with it.
//! 4. an endpoint's input queue holds at most [`Fabric::input_capacity`] packets (the SCI
//!    ring's transmit queue, the X-NIA's message queue, a VC router's or an ideal or flow
//!    endpoint's window of packets in flight): [`Fabric::try_inject`] refuses a packet when
//!    its source's queue is full, handing it back with nothing changed ([`Refused`]), as a
//!    real NIC's DMA finds its transmit queue full and holds. Room is made only inside
//!    [`Fabric::advance`] (a packet leaves the queue or is delivered), and a full queue means
//!    packets in flight, so [`Fabric::next_event`] is `Some`: an event-driven caller that was
//!    refused asks [`Fabric::can_inject`] again after each `advance` and never polls idle
//!    time (checked by [`conformance::back_pressure`], with the refusals themselves, the
//!    queue never above its capacity, and nothing refused or accepted lost).
//!    [`Fabric::inject`] is the open-loop harness's unbounded source queue in front of the
//!    input queue (BookSim's convention: offered load is never refused); a caller uses one
//!    or the other.
//!
//! Order per pair is *not* promised: a VC router with several VCs or adaptive routes can
//! deliver one pair's packets out of order, as real networks do. The ideal, X-Switch and SCI
//! ring fabrics happen to keep it (the SCI ring resequences its retries); a caller that
//! needs order resequences, as the cluster simulator does per message.

pub mod conformance;
pub mod flow;
pub mod harness;
pub mod ideal;
pub mod kind;
pub mod time;
pub mod traffic;
pub mod window;
pub mod zero_load;

use std::fmt;
pub use zero_load::ZeroLoad;

/// Simulated time in picoseconds: fine enough for a 2 ns SCI symbol and a 0.55 µs Myrinet
/// switch alike, and 2^64 ps is 213 days ([`time`] converts and sums it without wrapping).
pub type Ps = u64;

/// Picoseconds per nanosecond and per microsecond, for conversions at the edges.
pub const PS_PER_NS: Ps = 1_000;
pub const PS_PER_US: Ps = 1_000_000;

/// One packet as an endpoint hands it to the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub src: usize,
    pub dst: usize,
    /// Payload bytes (the fabric adds its own headers, CRCs, framing).
    pub bytes: u32,
    /// The injector's own identifier, returned with the delivery (message id, sequence, ...).
    pub tag: u64,
}

/// A packet accepted at its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub packet: Packet,
    /// When it was injected.
    pub injected: Ps,
    /// When its last byte was accepted by the destination endpoint.
    pub delivered: Ps,
}

/// A packet [`Fabric::try_inject`] handed back: its source's input queue was full (rule 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the input queue of endpoint {src} is full: {packet} refused", src = .0.src, packet = .0)]
pub struct Refused(pub Packet);

/// Why a fabric stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FabricError {
    /// Packets wait for each other in a cycle and nothing moves; the text names the cycle.
    #[error("{0}")]
    Deadlock(String),
    /// The model detected a broken invariant (corrupt frame, overflow, misroute).
    #[error("{0}")]
    Failed(String),
}

impl FabricError {
    /// A cycle-driven network's step error: a failure while the network's watchdog says
    /// `deadlocked` is a [`FabricError::Deadlock`] (its text the watchdog's diagnosis),
    /// anything else [`FabricError::Failed`].
    pub fn from_model(deadlocked: bool, e: icn_engine::ModelError) -> FabricError {
        match e {
            icn_engine::ModelError::Failed(why) if deadlocked => FabricError::Deadlock(why),
            other => FabricError::Failed(other.to_string()),
        }
    }
}

/// Load of one directed router-to-router channel over the measurement window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelLoad {
    pub router: usize,
    pub port: usize,
    /// Cycles (or, for clockless fabrics, picoseconds) the channel was busy while measuring.
    pub busy: u64,
}

/// What a fabric's numbers are counted in, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nouns {
    /// What one delivery is: "message", "packet".
    pub item: &'static str,
    /// Unit of `Packet::bytes` in this fabric's own reports: "B" or "flits".
    pub size_unit: &'static str,
    /// Name of a switching element: "switch", "router".
    pub router: &'static str,
    /// What the latency of one delivery spans, for the report's metric description.
    pub latency_about: &'static str,
}

/// A network model seen from its endpoints. See the module documentation for the rules.
///
/// Object safe: a caller that picks the fabric at run time holds a `&mut dyn Fabric`.
pub trait Fabric {
    /// Number of endpoints (0 ..= endpoints − 1 are valid `src` and `dst`).
    fn endpoints(&self) -> usize;

    /// Length of one clock cycle; 1 for clockless fabrics. Deliveries fall on multiples of it.
    fn cycle_ps(&self) -> Ps;

    /// Current time: everything before it has been simulated; injections happen at it.
    fn now(&self) -> Ps;

    /// Largest payload one packet may carry; callers cut longer messages.
    fn max_packet_bytes(&self) -> u32;

    /// Hands a packet to its source endpoint's unbounded source queue at [`Fabric::now`]
    /// (the open-loop harness's, BookSim's convention): back-pressure shows up as later
    /// deliveries, never as a refusal. A closed-loop caller (a NIC) uses
    /// [`Fabric::try_inject`] instead (rule 4).
    fn inject(&mut self, p: Packet);

    /// Packets an endpoint's input queue holds at most (rule 4); `None`: unbounded.
    fn input_capacity(&self) -> Option<usize> {
        None
    }

    /// Packets in `src`'s input queue now: accepted by [`Fabric::try_inject`] (or waiting
    /// in the source queue of [`Fabric::inject`]) and still counted against the capacity.
    fn input_queued(&self, src: usize) -> usize {
        let _ = src;
        0
    }

    /// Whether [`Fabric::try_inject`] would accept a packet from `src` now (rule 4).
    fn can_inject(&self, src: usize) -> bool {
        self.input_capacity()
            .is_none_or(|cap| self.input_queued(src) < cap)
    }

    /// Hands a packet to its source endpoint's input queue at [`Fabric::now`], or refuses it
    /// with nothing changed when that queue is full (rule 4).
    fn try_inject(&mut self, p: Packet) -> Result<(), Refused> {
        if !self.can_inject(p.src) {
            return Err(Refused(p));
        }
        self.inject(p);
        Ok(())
    }

    /// Simulates every cycle that starts before `until`, appending deliveries in time order.
    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError>;

    /// A packet of `bytes` from `src` to `dst` alone on this fabric freshly built, injected
    /// now (rule 3). Clockless fabrics compute it; cycle-level ones measure it on a fresh
    /// copy of themselves ([`zero_load::Probe`]), which is exact by construction and costs
    /// a lone packet's cycles once per distinct question.
    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError>;

    /// Packets injected and not yet delivered.
    fn in_flight(&self) -> u64;

    /// The earliest time at which a delivery can happen, `None` when nothing is in flight:
    /// an event-driven caller advances to it. A cycle-driven fabric answers its current
    /// cycle (it must be stepped); a clockless one its next delivery.
    fn next_event(&self) -> Option<Ps> {
        (self.in_flight() > 0).then(|| self.now())
    }

    /// Moves the clock to `to` when nothing is in flight: an idle network's state does not
    /// change with time, so a fabric may jump instead of stepping. The default steps.
    fn skip_idle(&mut self, to: Ps) -> Result<(), FabricError> {
        let mut none = Vec::new();
        self.advance(to, &mut none)
    }

    /// Starts or stops the measurement window of the fabric's own counters (channel load,
    /// accepted bytes, flow-control events).
    fn set_measuring(&mut self, on: bool);

    /// Payload accepted per source while measuring, in the fabric's own unit of delivery
    /// (an X-Switch counts each frame as it lands; a VC router each packet's tail).
    fn accepted(&self) -> &[u64];

    /// Every directed router-to-router channel with its busy time while measuring.
    fn channel_loads(&self) -> Vec<ChannelLoad>;

    /// How this fabric's quantities are named in reports.
    fn nouns(&self) -> Nouns;
}

impl fmt::Display for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} B from {} to {} (tag {})",
            self.bytes, self.src, self.dst, self.tag
        )
    }
}
