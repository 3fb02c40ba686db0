//! `libvipl`: the VI Provider Library of the VIA 1.0 specification — the C interface every
//! VIA program was written against — over icn-via's providers (shared memory between the
//! processes of a host, TCP between hosts).
//!
//! Build products: `libvipl.so` and `libvipl.a` (C), the `vipl` rlib (Rust tests), and the
//! header `include/vipl.h`, written from the specification. docs/vipl.md maps every
//! function and return code to the test that exercises it, and names what this
//! implementation chose where the specification leaves a choice.
//!
//! # Module map
//! * [`types`]: the C types and constants of `vipl.h`;
//! * [`codes`]: return codes, status words, descriptor decoding, reliability bits,
//!   timeouts (sans-IO, table-tested);
//! * [`device`]: device names to providers; [`rendezvous`]: where a waiting server is
//!   found; [`handle`]: opaque handles checked by kind; [`objects`]: what is behind them;
//!   [`regions`]: registered regions, with each VI's cache of the last one posted from;
//! * [`api`]: the 41 functions, one module per group;
//! * [`trace`]: recording a run as a SimGrid time-independent trace.

// `unsafe` is the C boundary's: handles, pointers from the consumer, callbacks, and two
// libc calls (`getifaddrs`, `getnameinfo`); each block says why it is sound.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod api;
pub mod codes;
pub mod device;
pub mod handle;
pub mod mapped;
pub mod objects;
pub mod regions;
pub mod rendezvous;
pub mod trace;
pub mod types;
