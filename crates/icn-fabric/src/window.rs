//! A window of packets in flight per endpoint: the input queue of rule 4 for a fabric whose
//! model has no bounded queue of its own at the endpoint (the ideal and flow fabrics, whose
//! links are reserved or shared from the injection on, and the VC routers, whose source
//! queue is inside the router model). A packet counts from its acceptance to its delivery,
//! so room is made only by a delivery, which [`crate::Fabric::next_event`] announces.

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct Window {
    /// Packets per endpoint at most; `None`: unbounded.
    capacity: Option<usize>,
    /// Per endpoint: packets accepted and not yet delivered.
    in_flight: Vec<u32>,
}

impl Window {
    /// `capacity` packets per endpoint, 0 = unbounded.
    pub fn new(endpoints: usize, capacity: usize) -> Window {
        Window {
            capacity: (capacity > 0).then_some(capacity),
            in_flight: vec![0; endpoints],
        }
    }

    pub fn capacity(&self) -> Option<usize> {
        self.capacity
    }

    pub fn queued(&self, src: usize) -> usize {
        self.in_flight.get(src).map_or(0, |&k| k as usize)
    }

    /// A packet from `src` was accepted.
    pub fn accepted(&mut self, src: usize) {
        self.in_flight[src] += 1;
    }

    /// A packet from `src` was delivered.
    pub fn delivered(&mut self, src: usize) {
        self.in_flight[src] -= 1;
    }
}
