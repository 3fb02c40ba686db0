//! The dependency window: packets that have been listed as dependents by packets already read,
//! but have not been read themselves.
//!
//! Each entry counts the listers not yet delivered and remembers when the last of the
//! delivered ones arrived, so that when its packet is read the replay knows at once whether it
//! may go and from which cycle. Because ids increase through the file and a packet lists only
//! greater ids (checked by the reader), the entry of id `d` can only be created before `d` is
//! read, and an entry whose id is passed by without being read is a *dangling* dependency,
//! reported as soon as the reader passes it. The window therefore holds the ids listed and
//! not yet reached: it is bounded by how far ahead in the file a trace's dependencies reach,
//! never by the trace's length.

use crate::format::{ErrorKind, PacketRef, Record, TraceError};
use std::collections::BTreeMap;

/// What a listed, not yet read packet waits for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Waiting {
    /// Listers not yet delivered (ids).
    pub listers: Vec<u32>,
    /// First lister, for diagnosis.
    pub first: Option<PacketRef>,
    /// Latest delivery cycle of a delivered lister, plus one: the earliest cycle it may go.
    pub ready_at: u64,
}

/// The window of listed, unread packets.
#[derive(Debug, Default)]
pub struct Window {
    pending: BTreeMap<u32, Waiting>,
}

impl Window {
    /// Ids listed and not yet read.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// `rec` has been read (the reader is at byte `at`): returns what it waits for (its
    /// entry, taken out of the window) after checking that no listed id below its own was
    /// skipped.
    pub fn arrive(&mut self, rec: &Record, at: u64) -> Result<Waiting, TraceError> {
        if let Some((&gone, w)) = self.pending.first_key_value()
            && gone < rec.id
        {
            return Err(dangling(gone, w, at));
        }
        Ok(self.pending.remove(&rec.id).unwrap_or_default())
    }

    /// Registers `rec`'s dependents: each now waits for it too.
    pub fn list(&mut self, rec: &Record, packet: PacketRef) {
        for &d in &rec.dependents {
            let w = self.pending.entry(d).or_default();
            w.listers.push(rec.id);
            w.first.get_or_insert(packet);
        }
    }

    /// Lister `id` was delivered in `cycle`; `Some(true)` if `dependent` is in the window (not
    /// read yet) and now waits for nothing, `Some(false)` if it still waits, `None` if it is
    /// not in the window.
    pub fn delivered(&mut self, dependent: u32, id: u32, cycle: u64) -> Option<bool> {
        let w = self.pending.get_mut(&dependent)?;
        if let Some(i) = w.listers.iter().position(|&l| l == id) {
            w.listers.swap_remove(i);
        }
        w.ready_at = w.ready_at.max(cycle + 1);
        Some(w.listers.is_empty())
    }

    /// At the end of the file: anything still listed never came.
    pub fn finish(&self, at: u64) -> Result<(), TraceError> {
        match self.pending.first_key_value() {
            Some((&gone, w)) => Err(dangling(gone, w, at)),
            None => Ok(()),
        }
    }
}

fn dangling(gone: u32, w: &Waiting, at: u64) -> TraceError {
    let lister = w.first.expect("an entry is created by a lister");
    TraceError::new(
        ErrorKind::Dependency,
        at,
        Some(lister),
        format!(
            "lists packet {gone} as waiting for it, but the trace passes id {gone} without it (a dangling dependency: the byte is where that was found)"
        ),
    )
}
