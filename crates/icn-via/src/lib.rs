//! A VIA-style user-level messaging library (after VIA 1.0 and MyVIA), with two providers:
//! `shm` (processes on one host, rings in shared memory) and `tcp` (between hosts).
//!
//! ```no_run
//! use icn_via::*;
//! let nic = Nic::open("tcp://127.0.0.1:0")?;
//! let ptag = nic.create_ptag();
//! let vi = nic.create_vi(ViAttributes::new(ptag, Reliability::ReliableReception), None, None)?;
//! let mem = nic.register_mem(4096, MemAttributes::local(ptag))?;
//! nic.connect_request(&vi, "tcp://127.0.0.1:7000", b"demo", Some(std::time::Duration::from_secs(5)))?;
//! mem.write(0, b"hello")?;
//! vi.post_send(Descriptor::send(vec![Segment::new(mem.handle(), 0, 5)]))?;
//! vi.send_wait(None)?.ok()?;
//! # Ok::<(), ViaError>(())
//! ```
//!
//! # Mapping to VIA 1.0, ibverbs and libfabric
//!
//! | icn-via | VIA 1.0 | ibverbs | libfabric |
//! |---|---|---|---|
//! | [`Nic::open`] / drop | `VipOpenNic` / `VipCloseNic` | `ibv_open_device` / `ibv_close_device` | `fi_fabric`+`fi_domain` / `fi_close` |
//! | [`Nic::attributes`] | `VipQueryNic` | `ibv_query_device` | `fi_getinfo` |
//! | [`Nic::create_ptag`] / drop | `VipCreatePtag` / `VipDestroyPtag` | `ibv_alloc_pd` / `ibv_dealloc_pd` | `fi_domain` |
//! | [`Nic::register_mem`] / drop of [`MemRegion`] | `VipRegisterMem` / `VipDeregisterMem` | `ibv_reg_mr` / `ibv_dereg_mr` | `fi_mr_reg` / `fi_close` |
//! | [`Nic::register_user_mem`] ([`UserRegion`], the caller's own buffer for a scope) | `VipRegisterMem` on user memory | `ibv_reg_mr` on an application buffer | `fi_mr_reg` on an application buffer |
//! | [`MemRegion::attributes`] | `VipQueryMem` | (`ibv_mr` fields) | `fi_mr_desc`/`fi_mr_key` |
//! | [`MemAttributes`] `enable_rdma_*` | `VIP_MEM_ATTRIBUTES.EnableRdma*` | `IBV_ACCESS_REMOTE_WRITE/READ` | `FI_REMOTE_WRITE/READ` |
//! | [`MemHandle`] | `VIP_MEM_HANDLE` | lkey / rkey | `fi_mr_key` |
//! | [`Nic::create_vi`] / drop of [`Vi`] | `VipCreateVi` / `VipDestroyVi` | `ibv_create_qp` / `ibv_destroy_qp` | `fi_endpoint` / `fi_close` |
//! | [`Vi::query`] / [`Vi::set_attributes`] | `VipQueryVi` / `VipSetViAttributes` | `ibv_query_qp` / `ibv_modify_qp` | `fi_getopt` / `fi_setopt` |
//! | [`Reliability`] | `VIP_RELIABILITY_LEVEL` | RC (reliable) / UD-UC (unreliable) | `FI_TRANSMIT_COMPLETE` / `FI_DELIVERY_COMPLETE` |
//! | [`Nic::create_cq`] / [`CompletionQueue::resize`] | `VipCreateCQ` / `VipResizeCQ` | `ibv_create_cq` / `ibv_resize_cq` | `fi_cq_open` |
//! | [`CompletionQueue::done`] / [`CompletionQueue::wait`] | `VipCQDone` / `VipCQWait` | `ibv_poll_cq` / `ibv_get_cq_event` | `fi_cq_read` / `fi_cq_sread` |
//! | [`Nic::connect_request`] | `VipConnectRequest` | `rdma_connect` | `fi_connect` |
//! | [`Nic::connect_wait`] | `VipConnectWait` | `rdma_get_cm_event` (CONNECT_REQUEST) | `fi_eq_sread` (FI_CONNREQ) |
//! | [`ConnRequest::accept`] / [`ConnRequest::reject`] | `VipConnectAccept` / `VipConnectReject` | `rdma_accept` / `rdma_reject` | `fi_accept` / `fi_reject` |
//! | [`Vi::disconnect`] | `VipDisconnect` | `rdma_disconnect` | `fi_shutdown` |
//! | [`Descriptor`] ([`Segment`], [`RemoteAddr`]) | `VIP_DESCRIPTOR` (data / address segments) | `ibv_send_wr`, `ibv_sge` | `fi_msg`, `iovec`, `fi_rma_iov` |
//! | [`Descriptor::with_immediate`] | `VIP_CONTROL_IMMEDIATE` | `IBV_WR_SEND_WITH_IMM` | `fi_senddata` |
//! | [`Vi::post_send`] / [`Vi::post_recv`] | `VipPostSend` / `VipPostRecv` | `ibv_post_send` / `ibv_post_recv` | `fi_sendmsg` / `fi_recvmsg` |
//! | [`Descriptor::rdma_write`] (± immediate) | `VIP_CONTROL_OP_RDMAWRITE` | `IBV_WR_RDMA_WRITE[_WITH_IMM]` | `fi_write` / `fi_writedata` |
//! | [`Descriptor::rdma_read`] | `VIP_CONTROL_OP_RDMAREAD` | `IBV_WR_RDMA_READ` | `fi_read` |
//! | [`Vi::send_done`] / [`Vi::recv_done`] | `VipSendDone` / `VipRecvDone` | `ibv_poll_cq` | `fi_cq_read` |
//! | [`Vi::send_wait`] / [`Vi::recv_wait`] | `VipSendWait` / `VipRecvWait` | `ibv_req_notify_cq` + wait | `fi_cq_sread` |
//! | [`Completion`] / [`CompletionStatus`] | descriptor status word | `ibv_wc` / `ibv_wc_status` | `fi_cq_entry` / `fi_cq_err_entry` |
//! | [`ViaError`] | `VIP_RETURN` codes | errno | `-FI_E*` |
//!
//! Not in this Rust API: peer-to-peer connect (`VipConnectPeer*`), notify callbacks
//! (`*Notify`, `VipErrorCallback`), the name service (`VipNS*`; URLs play its part) and
//! `VipQuerySystemManagementInfo`: the C library `libvipl` (crate `icn-vipl`) provides all
//! 41 VIPL calls over this one, those included. [`Nic::register_addr`] is the registration
//! by address it uses (VIPL's model: descriptors carry virtual addresses).
//!
//! # Module map
//! * sans-IO protocol logic: [`descriptor`] (format checks), [`tracker`] (send-queue
//!   completion state machine), [`rx_rules`] (what a receiver does with a frame),
//!   [`vi_state`] (connection state machine), [`frame`] (wire codec), [`memory`] (registration
//!   table / user-level TLB);
//! * the engine that drives them over a byte link: `engine`, `wire`;
//! * providers: [`provider`] (URLs, listening, dialing), [`link`] (`tcp`, `shm` + its `ring`);
//! * [`bench`](mod@bench): pingpong and window programs and raw socket baselines.

// `unsafe` is allowed only in the shared-memory ring and its mapping (`ring`, `link::shm`),
// the single-copy paths (`link::cma`, `shared_mem`), the caller's memory lent to a registration
// (`user_mem`), and the engine's and regions' lock (`lock`).
#![deny(unsafe_code)]

pub mod attrs;
pub mod auth;
pub mod bench;
pub mod cq;
pub mod descriptor;
mod engine;
pub mod error;
pub mod frame;
pub mod link;
mod lock;
pub mod memory;
pub mod model;
mod nic;
pub mod private_dir;
pub mod provider;
pub mod ring;
pub mod rx_rules;
mod shared_mem;
pub mod tracker;
mod user_mem;
pub mod vi_state;
mod wire;

pub use attrs::{MemAttributes, NicAttributes, Ptag, Reliability, ViAttributes};
pub use cq::{CompletionQueue, ViId, WorkQueue};
pub use descriptor::{CompletedOp, Completion, Descriptor, Op, RemoteAddr, Segment, Segments};
pub use error::{CompletionStatus, Result, ViaError};
pub use memory::{MemHandle, MemRegion, UserRegion};
pub use nic::{
    ACK_KEEPER_PERIOD, ConnRequest, HANDSHAKE_TIMEOUT, MAX_HANDSHAKES, MAX_PENDING, Nic,
    PENDING_TTL, Vi, ViQuery,
};
pub use vi_state::ViState;
