//! `libicnvia-fi.so`: a libfabric (OFI) provider over icn-via, so that unchanged libfabric
//! programs and MPI libraries (Open MPI's `mtl ofi`, through libfabric's own `ofi_rxm` for
//! `FI_EP_RDM` + `FI_TAGGED`) run on icn-via's shm and tcp providers.
//!
//! | libfabric | icn-via |
//! |---|---|
//! | `fi_fabric` "shm" / "tcp" | one [`icn_via::Nic`] per fabric (`fabric`) |
//! | `fi_domain` | that NIC and its protection tag |
//! | `fi_mr_reg` (`FI_MR_LOCAL`, `FI_MR_VIRT_ADDR`, `FI_MR_PROV_KEY`) | [`icn_via::Nic::register_addr`]; key = the handle |
//! | `fi_endpoint` (`FI_EP_MSG`) | one [`icn_via::Vi`], reliable delivery |
//! | `fi_passive_ep` + `fi_listen` | a thread on [`icn_via::Nic::connect_wait`] |
//! | `fi_connect` / `fi_accept` / `fi_reject` + EQ events | [`icn_via::Nic::connect_request`] / [`icn_via::ConnRequest::accept`], then one set-up message each way (`cm`) |
//! | `fi_send*` / `fi_recv*` | `post_send` / `post_recv` of a send / receive descriptor |
//! | `fi_read*` / `fi_write*` | RDMA read / write descriptors |
//! | `fi_cq_read` (manual progress) | `send_done` / `recv_done` of each bound VI |
//!
//! Layers: `addr`, `cm`, `info` are sans-IO rules; `fabric`, `ep`, `eq`, `cq` the safe
//! runtime over icn-via; `abi` the C entry points (all `unsafe`); `sys` the generated ABI.
//! docs/ofi.md says how to run programs over it and what is and is not supported.

pub mod abi;
pub mod addr;
pub mod cm;
pub mod cq;
pub mod ep;
pub mod eq;
pub mod error;
pub mod fabric;
pub mod info;
pub mod sys;

pub use abi::fi_prov_ini;
