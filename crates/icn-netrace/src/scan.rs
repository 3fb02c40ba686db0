//! The check before a run: the whole trace read once, every record and dependency checked,
//! in the memory of the dependency window alone. A replay meets the same errors when it
//! reaches them; the scan finds them in seconds, before a long simulation starts.

use crate::deps::Window;
use crate::format::{Header, Reader, TraceError};
use std::io::Read;

/// What the scan saw.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub header: Header,
    pub packets: u64,
    /// Packets per region.
    pub region_packets: Vec<u64>,
    /// Largest dependency window (ids listed and not yet read) met.
    pub peak_window: usize,
}

/// Reads `reader` to its end.
pub fn scan<R: Read>(mut reader: Reader<R>) -> Result<Summary, TraceError> {
    let mut window = Window::default();
    let header = reader.header().clone();
    let mut s = Summary {
        region_packets: vec![0; header.regions.len()],
        header,
        packets: 0,
        peak_window: 0,
    };
    while let Some(rec) = reader.next_record()? {
        let packet = reader.last_packet().expect("a record was read");
        window.arrive(&rec, reader.offset())?;
        window.list(&rec, packet);
        s.peak_window = s.peak_window.max(window.len());
        s.packets += 1;
        s.region_packets[reader.region()] += 1;
    }
    window.finish(reader.offset())?;
    Ok(s)
}
