//! TH-Net (THNPC-II) X-Switch networks simulated at symbol level, and a BookSim-style
//! virtual-channel router to compare them with. Model notes and results: `docs/thnet.md`.
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
//! * [`router`]: the cycle-driven networks of input-queued VC routers (BookSim2 `iq`), one
//!   folder per microarchitecture, and their allocators;
//! * [`vc_model`]: `model = "vc-router"` for the CLI.
//!
//! Both networks behind `icn_fabric::Fabric` ([`fabric`]), and the one open-loop
//! load–latency experiment both models run on it (`icn_fabric::harness`, which every fabric can
//! use).
//!
//! [`bench`]: the standard speed workloads of both models (`icnlab bench xswitch vc-router`).

pub mod bench;
pub mod fabric;
pub mod fabric_config;
pub mod fifo;
pub mod frame;
pub mod nia;
pub mod outport;
pub mod router;
pub mod symbol;
pub mod topology;
pub mod vc_model;
pub mod vc_net;
pub mod xswitch;
pub mod xswitch_model;
pub mod xswitch_net;
