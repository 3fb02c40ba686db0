//! TH-Net (THNPC-II) X-Switch networks simulated at symbol level, and the open-loop model of
//! the BookSim-style virtual-channel routers (crate `icn_router`) to compare them with. Model
//! notes and results: `docs/thnet.md`.
//!
//! Sans-IO protocol pieces (each a plain struct tested against the spec's tables):
//! * [`symbol`]: the 9-bit X-Link symbol codec (data vs control characters);
//! * [`frame`]: data-frame builder/parser (routing head, data, CRC, `ID-EOF`);
//! * [`fifo`]: the input FIFO and its STOP/GO hysteresis, with the threshold check;
//! * [`outport`]: the output port's 15-state circulating-priority machine.
//!
//! X-Switch assembly:
//! * [`topology`]: ring, mesh, torus, star, tree, graph files; source routes;
//! * the workloads shared by both models: `icn_fabric::traffic`;
//! * [`nia`]: the X-NIA endpoint (send queue, frame splitting, DMA delay, checked receive);
//! * [`xswitch`]: the cycle-driven X-Switch network with its deadlock watchdog;
//! * [`xswitch_model`]: `model = "xswitch"` for the CLI.
//!
//! Virtual-channel router:
//! * the cycle-driven networks of input-queued VC routers (BookSim2 `iq`), their allocators,
//!   their fabric and the `vc-router` network kind are crate `icn_router`;
//! * [`vc_model`]: `model = "vc-router"` for the CLI.
//!
//! The X-Switch network behind `icn_fabric::Fabric` ([`fabric`]), and the one open-loop
//! load–latency experiment both models run on their fabrics (`icn_fabric::harness`, which every
//! fabric can use).
//!
//! [`bench`]: the standard speed workloads of both models (`icnlab bench xswitch vc-router`).

pub mod bench;
pub mod fabric;
pub mod fabric_config;
pub mod fifo;
pub mod frame;
pub mod nia;
pub mod outport;
pub mod symbol;
pub mod topology;
pub mod vc_model;
pub mod xswitch;
pub mod xswitch_model;
pub mod xswitch_net;
