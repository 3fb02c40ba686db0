//! Host and NIC endpoints: what a message costs between the program and the fabric.
//!
//! An endpoint is two tandem pipelines of *stages* per node, one for sending and one for
//! receiving. A message is cut into packets; each packet passes the stages in order, and a
//! stage serves one packet at a time in arrival order (a stage is one FSM / DMA engine /
//! CPU loop). A packet's cost at a stage is the NIC model's own cost formula
//! ([`icn_nicmodel::design::Stage::cost_us`]), so per-DMA set-up is paid once per chunk and
//! data streams packet by packet. The stage that drives the wire is replaced by the fabric.
//!
//! | endpoint | send side | receive side |
//! |---|---|---|
//! | `zero` | nothing: packets enter the fabric when the program sends (as its input queue takes them) | nothing |
//! | `simple` | host `send_ns`, then a DMA at `dma_mbs` per packet | a DMA at `dma_mbs`, then host `recv_ns` |
//! | `pipeline` | the `icn-nicmodel` design's send stages before the wire (host stages first) | its receive stages |
//!
//! The last send stage hands its packet to the fabric; while the fabric's input queue is full
//! (rule 4 of `icn_fabric`) the packet waits there and holds the stage ([`crate::transmit`]).
//!
//! Simplifications against `icn-nicmodel`'s own simulator (stated, and measured in
//! `docs/cluster.md`): a stage is one server, so two stages holding one resource (PCI used
//! by the send and the receive DMA) do not block each other; `contention` extras, the
//! `in_flight` limit and NIC-TLB misses (no miss: the hit path) are not modelled; the
//! send-completion branch runs beside delivery and delays nothing.

use icn_engine::Invalid;
use icn_fabric::{PS_PER_US, Ps};
use icn_nicmodel::design::{Every, Side};
use icn_nicmodel::{Pipeline, Switches};
use serde::{Deserialize, Serialize};

/// `[nic]` of a cluster experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// `zero`, `simple` or `pipeline`.
    pub kind: NicKind,
    /// `simple`: host time to post a send, ns.
    pub send_ns: f64,
    /// `simple`: host time to notice a completed receive, ns.
    pub recv_ns: f64,
    /// `simple`: host↔NIC DMA bandwidth, MB/s (0 = infinite).
    pub dma_mbs: f64,
    /// `simple`: largest packet the NIC puts on the wire, bytes.
    pub packet_bytes: u32,
    /// `pipeline`: an `icn-nicmodel` profile (bundled name or path).
    pub profile: String,
    /// `pipeline`: an `icn-nicmodel` design (`myvia`, `bvia`, `gm`, `mvia` or a path).
    pub design: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NicKind {
    #[default]
    Zero,
    Simple,
    Pipeline,
}

impl NicConfig {
    /// A key set to something other than its default that the chosen kind does not read is
    /// an error, not silently ignored (`send_ns = -1` with `kind = "zero"` was accepted while
    /// `keys` documents 0 ..= 10^9).
    fn check_keys_apply(&self) -> Result<(), Invalid> {
        use NicKind::*;
        let d = NicConfig::default();
        let keys: [(&str, bool, &[NicKind]); 6] = [
            ("send_ns", self.send_ns != d.send_ns, &[Simple]),
            ("recv_ns", self.recv_ns != d.recv_ns, &[Simple]),
            ("dma_mbs", self.dma_mbs != d.dma_mbs, &[Simple]),
            (
                "packet_bytes",
                self.packet_bytes != d.packet_bytes,
                &[Zero, Simple],
            ),
            ("profile", self.profile != d.profile, &[Pipeline]),
            ("design", self.design != d.design, &[Pipeline]),
        ];
        for (key, set, kinds) in keys {
            if set && !kinds.contains(&self.kind) {
                let kind = match self.kind {
                    Zero => "zero",
                    Simple => "simple",
                    Pipeline => "pipeline",
                };
                return Err(Invalid::new(
                    format!("nic.{key}"),
                    format!("does not apply to kind = \"{kind}\""),
                ));
            }
        }
        Ok(())
    }
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            kind: NicKind::Zero,
            send_ns: 1000.0,
            recv_ns: 1000.0,
            dma_mbs: 500.0,
            packet_bytes: 4096,
            profile: "setup-b".into(),
            design: "myvia".into(),
        }
    }
}

/// Which layer a stage's time is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Host,
    Nic,
}

/// One stage of an endpoint pipeline.
#[derive(Clone, Debug)]
pub struct EndStage {
    pub name: String,
    pub layer: Layer,
    cost: StageCost,
}

#[derive(Clone, Debug)]
enum StageCost {
    /// Fixed ps for the first packet of a message (or the last with `last`), nothing else.
    Once { ps: Ps, last: bool },
    /// ps per byte × 2^16 for every packet.
    PerByte { q16: u128 },
    /// A stage of the NIC model.
    Design(Box<icn_nicmodel::design::Stage>, u64, u64),
}

/// One packet of a message: its payload and where it sits in its chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub bytes: u64,
    pub first: bool,
    pub last: bool,
    pub chunk_first: bool,
    pub chunk_pages: u64,
}

impl EndStage {
    /// This stage's time for `piece`, ps (0 when it does not apply to the piece).
    pub fn cost(&self, piece: &Piece) -> Ps {
        match &self.cost {
            StageCost::Once { ps, last } => {
                if (*last && piece.last) || (!*last && piece.first) {
                    *ps
                } else {
                    0
                }
            }
            StageCost::PerByte { q16 } => ((u128::from(piece.bytes) * q16) >> 16) as Ps,
            StageCost::Design(s, header, min_packet) => {
                let applies = match s.every {
                    Every::Chunk => true,
                    Every::First => piece.first,
                    Every::Last => piece.last,
                };
                if !applies {
                    return 0;
                }
                let us = s.cost_us(
                    piece.bytes,
                    *header,
                    *min_packet,
                    piece.chunk_pages,
                    0,
                    piece.chunk_first,
                ) + s.latency_us;
                (us * PS_PER_US as f64).round() as Ps
            }
        }
    }
}

/// `piece` through one node's `stages` in order from `at`, each serving one packet at a time
/// (`free`: when each is next free). Returns when it is through, the time its host stages
/// took, and when the last host stage it used was done.
pub(crate) fn pass(
    stages: &[EndStage],
    piece: &Piece,
    at: Ps,
    free: &mut [Ps],
) -> (Ps, Ps, Option<Ps>) {
    let (mut ready, mut host, mut host_ready) = (at, 0, None);
    for (stage, free) in stages.iter().zip(free) {
        let cost = stage.cost(piece);
        if cost == 0 {
            continue;
        }
        *free = ready.max(*free).saturating_add(cost);
        ready = *free;
        if stage.layer == Layer::Host {
            host += cost;
            host_ready = Some(ready);
        }
    }
    (ready, host, host_ready)
}

/// The endpoint of every node (all nodes alike).
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub tx: Vec<EndStage>,
    pub rx: Vec<EndStage>,
    /// Largest packet payload.
    pub packet_bytes: u64,
    /// Bytes the NIC adds to each packet on the wire.
    pub header_bytes: u64,
    pipe: Option<Pipeline>,
}

fn per_byte(mbs: f64) -> u128 {
    if mbs == 0.0 {
        0
    } else {
        (1e6 / mbs * 65_536.0).round() as u128
    }
}

impl Endpoint {
    pub fn build(cfg: &NicConfig, resolve: impl Fn(&str) -> String) -> Result<Endpoint, Invalid> {
        cfg.check_keys_apply()?;
        let check_ns = |v: f64, key: &str| {
            Invalid::check(
                v.is_finite() && (0.0..=1e9).contains(&v),
                key,
                "0 ..= 10^9 ns",
                v,
            )
        };
        match cfg.kind {
            NicKind::Zero => Ok(Endpoint {
                packet_bytes: {
                    Invalid::check(
                        (1..=1 << 30).contains(&cfg.packet_bytes),
                        "nic.packet_bytes",
                        "1 ..= 2^30",
                        cfg.packet_bytes,
                    )?;
                    u64::from(cfg.packet_bytes)
                },
                tx: Vec::new(),
                rx: Vec::new(),
                header_bytes: 0,
                pipe: None,
            }),
            NicKind::Simple => {
                check_ns(cfg.send_ns, "nic.send_ns")?;
                check_ns(cfg.recv_ns, "nic.recv_ns")?;
                Invalid::check(
                    cfg.dma_mbs == 0.0
                        || (cfg.dma_mbs.is_finite() && (1e-3..=1e9).contains(&cfg.dma_mbs)),
                    "nic.dma_mbs",
                    "0 (infinite) or 0.001 ..= 10^9 MB/s",
                    cfg.dma_mbs,
                )?;
                Invalid::check(
                    (1..=1 << 30).contains(&cfg.packet_bytes),
                    "nic.packet_bytes",
                    "1 ..= 2^30",
                    cfg.packet_bytes,
                )?;
                let ns = |v: f64| (v * 1e3).round() as Ps;
                Ok(Endpoint {
                    tx: vec![
                        EndStage {
                            name: "post".into(),
                            layer: Layer::Host,
                            cost: StageCost::Once {
                                ps: ns(cfg.send_ns),
                                last: false,
                            },
                        },
                        EndStage {
                            name: "dma".into(),
                            layer: Layer::Nic,
                            cost: StageCost::PerByte {
                                q16: per_byte(cfg.dma_mbs),
                            },
                        },
                    ],
                    rx: vec![
                        EndStage {
                            name: "dma".into(),
                            layer: Layer::Nic,
                            cost: StageCost::PerByte {
                                q16: per_byte(cfg.dma_mbs),
                            },
                        },
                        EndStage {
                            name: "poll".into(),
                            layer: Layer::Host,
                            cost: StageCost::Once {
                                ps: ns(cfg.recv_ns),
                                last: true,
                            },
                        },
                    ],
                    packet_bytes: u64::from(cfg.packet_bytes),
                    header_bytes: 0,
                    pipe: None,
                })
            }
            NicKind::Pipeline => {
                let pipe = icn_nicmodel::build(
                    &resolve(&cfg.profile),
                    &resolve(&cfg.design),
                    Switches::default(),
                    1.0,
                )
                .map_err(|mut e| {
                    e.key = format!("nic.{}", e.key);
                    e
                })?;
                Ok(Endpoint::from_pipeline(pipe))
            }
        }
    }

    /// Splits a design's stages at the wire: send stages before the stage that holds a
    /// per-link resource, and every receive stage.
    pub fn from_pipeline(pipe: Pipeline) -> Endpoint {
        let wire = pipe
            .stages
            .iter()
            .position(|s| s.side == Side::Tx && s.hold.iter().any(|&r| pipe.resources[r].per_link))
            .unwrap_or(pipe.stages.len());
        let host_cpu = pipe.resources.iter().position(|r| r.name == "host_cpu");
        let stage = |i: usize, s: &icn_nicmodel::design::Stage| EndStage {
            name: s.name.clone(),
            layer: if i < pipe.nic_entry
                || (s.side == Side::Rx && host_cpu.is_some_and(|h| s.hold == [h]))
            {
                Layer::Host
            } else {
                Layer::Nic
            },
            cost: StageCost::Design(
                Box::new(s.clone()),
                pipe.header_bytes,
                pipe.min_packet_bytes,
            ),
        };
        let tx = pipe.stages[..wire]
            .iter()
            .enumerate()
            .filter(|(_, s)| s.side == Side::Tx && !s.branch)
            .map(|(i, s)| stage(i, s))
            .collect();
        let rx = pipe
            .stages
            .iter()
            .enumerate()
            .filter(|(_, s)| s.side == Side::Rx && !s.branch)
            .map(|(i, s)| stage(i, s))
            .collect();
        Endpoint {
            tx,
            rx,
            packet_bytes: pipe.packet_bytes.min(pipe.chunk_bytes).max(1),
            header_bytes: pipe.header_bytes,
            pipe: Some(pipe),
        }
    }

    /// Passes one packet that reached node `dst` at `at` through the receive stages (`free`
    /// as for [`Endpoint::send_pieces`]). Returns when it is through, and the time its host
    /// stages took.
    pub fn receive_piece(&self, piece: &Piece, dst: usize, at: Ps, free: &mut [Ps]) -> (Ps, Ps) {
        let free = &mut free[dst * self.rx.len()..][..self.rx.len()];
        let (ready, host, _) = pass(&self.rx, piece, at, free);
        (ready, host)
    }

    /// How a message of `bytes` is cut into packets of at most `fabric_max` bytes on the
    /// wire (payload + this NIC's header).
    pub fn cut(&self, bytes: u64, fabric_max: u64) -> Cut {
        let limit = self
            .packet_bytes
            .min(fabric_max.saturating_sub(self.header_bytes).max(1));
        match &self.pipe {
            Some(pipe) => {
                let chunk = pipe.chunk_bytes.max(1);
                Cut::new(
                    bytes,
                    limit,
                    chunk,
                    pipe.packet_bytes.clamp(1, chunk),
                    pipe.page_bytes.max(1),
                )
            }
            None => Cut::plain(bytes, limit),
        }
    }
}

/// How a message is cut into packets, without building them: chunks of at most `chunk`
/// bytes (one DMA each, `icn_nicmodel::sim::split`), each cut into the design's packets of
/// at most `packet` bytes, each of those into wire packets of at most `limit` bytes. All
/// but the last of each are full, so packet `k` is computed, not stored: a message of any
/// size costs these few words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    bytes: u64,
    limit: u64,
    chunk: u64,
    packet: u64,
    page: u64,
    /// Chunks, wire packets of a full chunk, and in all.
    chunks: u64,
    per_chunk: u64,
    count: u64,
}

impl Cut {
    /// Packets of at most `limit` bytes, one chunk (no NIC-model design).
    pub fn plain(bytes: u64, limit: u64) -> Cut {
        let limit = limit.max(1);
        let count = bytes.div_ceil(limit).max(1);
        Cut {
            bytes,
            limit,
            chunk: bytes.max(1),
            packet: bytes.max(1),
            page: u64::MAX,
            chunks: 1,
            per_chunk: count,
            count,
        }
    }

    fn new(bytes: u64, limit: u64, chunk: u64, packet: u64, page: u64) -> Cut {
        let mut c = Cut {
            bytes,
            limit: limit.max(1),
            chunk,
            packet,
            page,
            chunks: bytes.div_ceil(chunk).max(1),
            per_chunk: 0,
            count: 0,
        };
        c.per_chunk = c.in_chunk(chunk);
        c.count = (c.chunks - 1) * c.per_chunk + c.in_chunk(c.last_chunk());
        c
    }

    fn last_chunk(&self) -> u64 {
        self.bytes - (self.chunks - 1) * self.chunk
    }

    /// Wire packets of a chunk of `size` bytes (an empty message is one empty packet).
    fn in_chunk(&self, size: u64) -> u64 {
        let packets = size.div_ceil(self.packet).max(1);
        let full = self.packet.div_ceil(self.limit);
        let last = size - (packets - 1) * self.packet;
        (packets - 1) * full + last.div_ceil(self.limit).max(1)
    }

    /// Packets in all.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Packet `k` (`k < count`).
    pub fn piece(&self, k: u64) -> Piece {
        let c = (k / self.per_chunk).min(self.chunks - 1);
        let i = k - c * self.per_chunk;
        let size = if c + 1 == self.chunks {
            self.last_chunk()
        } else {
            self.chunk
        };
        let full = self.packet.div_ceil(self.limit);
        let packets = size.div_ceil(self.packet).max(1);
        let j = (i / full).min(packets - 1);
        let q = i - j * full;
        let design_packet = (size - j * self.packet).min(self.packet);
        Piece {
            bytes: (design_packet - q * self.limit).min(self.limit),
            first: k == 0,
            last: k + 1 == self.count,
            chunk_first: i == 0,
            chunk_pages: if self.page == u64::MAX {
                1
            } else {
                size.div_ceil(self.page).max(1)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_endpoint_costs_are_exact() {
        let cfg = NicConfig {
            kind: NicKind::Simple,
            send_ns: 700.0,
            recv_ns: 300.0,
            dma_mbs: 250.0,
            packet_bytes: 1000,
            ..NicConfig::default()
        };
        let e = Endpoint::build(&cfg, str::to_owned).unwrap();
        let cut = e.cut(2500, u64::MAX);
        let pieces: Vec<Piece> = (0..cut.count()).map(|k| cut.piece(k)).collect();
        assert_eq!(
            pieces.iter().map(|p| p.bytes).collect::<Vec<_>>(),
            [1000, 1000, 500]
        );
        // Post once (700 ns), DMA 4 ns per byte at 250 MB/s.
        assert_eq!(e.tx[0].cost(&pieces[0]), 700_000);
        assert_eq!(e.tx[0].cost(&pieces[1]), 0);
        assert_eq!(e.tx[1].cost(&pieces[2]), 2_000_000);
        assert_eq!(e.rx[1].cost(&pieces[2]), 300_000);
        assert_eq!(e.rx[1].cost(&pieces[0]), 0);
    }

    /// The packets as they were built before [`Cut`] computed them: every chunk of
    /// `icn_nicmodel::sim::split`, each cut into parts of at most `limit`.
    fn built(e: &Endpoint, bytes: u64, fabric_max: u64) -> Vec<Piece> {
        let limit = e
            .packet_bytes
            .min(fabric_max.saturating_sub(e.header_bytes).max(1));
        let mut out: Vec<Piece> = match &e.pipe {
            Some(pipe) => icn_nicmodel::sim::split(pipe, bytes)
                .flat_map(|p| {
                    let parts = p.bytes.div_ceil(limit).max(1);
                    (0..parts).map(move |k| Piece {
                        bytes: (p.bytes - k * limit).min(limit),
                        first: false,
                        last: false,
                        chunk_first: p.chunk_first && k == 0,
                        chunk_pages: p.chunk_pages,
                    })
                })
                .collect(),
            None => (0..bytes.div_ceil(limit).max(1))
                .map(|k| Piece {
                    bytes: (bytes - k * limit).min(limit),
                    first: false,
                    last: false,
                    chunk_first: k == 0,
                    chunk_pages: 1,
                })
                .collect(),
        };
        out.first_mut().unwrap().first = true;
        out.last_mut().unwrap().last = true;
        out
    }

    /// A [`Cut`] computes exactly the packets that building them gave, for every design
    /// (chunks, design packets, pages) and the simple NIC, at sizes around every boundary
    /// and wire limits from 64 B (an SCI send) up.
    #[test]
    fn a_cut_computes_the_packets_building_them_gave() {
        let mut endpoints = vec![
            Endpoint::build(
                &NicConfig {
                    kind: NicKind::Simple,
                    packet_bytes: 1000,
                    ..NicConfig::default()
                },
                str::to_owned,
            )
            .unwrap(),
        ];
        for design in ["myvia", "bvia", "gm", "mvia"] {
            endpoints.push(
                Endpoint::build(
                    &NicConfig {
                        kind: NicKind::Pipeline,
                        design: design.into(),
                        ..NicConfig::default()
                    },
                    str::to_owned,
                )
                .unwrap(),
            );
        }
        for e in &endpoints {
            for fabric_max in [64, 100, 1500, 4200, 70_000, u64::MAX] {
                for bytes in [0, 1, 63, 64, 65, 999, 1000, 1001, 1484, 4095, 4096, 4097]
                    .into_iter()
                    .chain([8191, 8192, 65_535, 65_536, 65_537, 300_001, 1 << 20])
                {
                    let want = built(e, bytes, fabric_max);
                    let cut = e.cut(bytes, fabric_max);
                    let got: Vec<Piece> = (0..cut.count()).map(|k| cut.piece(k)).collect();
                    assert_eq!(got, want, "{bytes} B, fabric max {fabric_max}");
                }
            }
        }
    }

    #[test]
    fn myvia_splits_at_the_wire_and_puts_post_and_poll_on_the_host() {
        let e = Endpoint::build(
            &NicConfig {
                kind: NicKind::Pipeline,
                ..NicConfig::default()
            },
            str::to_owned,
        )
        .unwrap();
        let names = |s: &[EndStage]| {
            s.iter()
                .map(|s| (s.name.clone(), s.layer))
                .collect::<Vec<_>>()
        };
        assert!(
            !names(&e.tx).iter().any(|(n, _)| *n == "net_send"),
            "{:?}",
            names(&e.tx)
        );
        assert_eq!(e.tx[0].layer, Layer::Host);
        assert_eq!(e.tx[0].name, "post");
        assert_eq!(e.rx.last().unwrap().name, "poll");
        assert_eq!(e.rx.last().unwrap().layer, Layer::Host);
        assert!(
            e.rx.iter()
                .any(|s| s.name == "net_recv" && s.layer == Layer::Nic)
        );
    }

    /// Issue 22: a `simple` key set under another kind was accepted silently, whatever its
    /// value (`send_ns = -1` with the default `zero`).
    #[test]
    fn keys_of_another_kind_are_refused() {
        let cfg = NicConfig {
            send_ns: -1.0,
            ..NicConfig::default()
        };
        let e = Endpoint::build(&cfg, |p| p.to_owned()).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("nic.send_ns", "does not apply to kind = \"zero\"")
        );
        let cfg = NicConfig {
            packet_bytes: 0,
            ..NicConfig::default()
        };
        assert_eq!(
            Endpoint::build(&cfg, |p| p.to_owned()).unwrap_err().key,
            "nic.packet_bytes"
        );
    }

    #[test]
    fn bad_keys_are_named() {
        let bad = |f: fn(&mut NicConfig)| {
            let mut c = NicConfig {
                kind: NicKind::Simple,
                ..NicConfig::default()
            };
            f(&mut c);
            Endpoint::build(&c, str::to_owned).unwrap_err().key
        };
        assert_eq!(bad(|c| c.send_ns = -1.0), "nic.send_ns");
        assert_eq!(bad(|c| c.dma_mbs = f64::INFINITY), "nic.dma_mbs");
        assert_eq!(
            bad(|c| {
                c.kind = NicKind::Pipeline;
                c.design = "nope".into()
            }),
            "nic.design"
        );
    }
}
