//! SimGrid time-independent (TI) traces, and DUMPI traces read as TI actions ([`dumpi`]): the actions ([`action`]), their datatypes
//! ([`datatype`]), finding and streaming a trace's files with a pre-scan that checks every
//! line before the run ([`reader`]), and the replay over any fabric ([`replay`]).
pub mod action;
pub mod datatype;
pub mod dumpi;
mod dumpi_layouts;
pub mod reader;
pub mod replay;
