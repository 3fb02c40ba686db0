//! Completion queues (`VipCreateCQ`, `VipCQDone`, `VipCQWait`, `VipResizeCQ`).
//!
//! As in VIA, a CQ does not take descriptors off their work queues: it records *which* work
//! queue of *which* VI has a completion, and the consumer then calls `send_done`/`recv_done`
//! on that VI. One CQ can gather many VIs so a server polls one place.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::engine::ViCore;
use crate::error::{Result, ViaError};
use crate::lock::FastMutex;

/// Which work queue of a VI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkQueue {
    Send,
    Recv,
}

/// Identifies a VI within its NIC (returned by CQ polls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViId(pub u32);

pub(crate) struct CqShared {
    entries: Mutex<VecDeque<(u32, WorkQueue)>>,
    capacity: Mutex<usize>,
    overflowed: std::sync::atomic::AtomicBool,
    members: Mutex<Vec<Weak<FastMutex<ViCore>>>>,
}

impl CqShared {
    pub(crate) fn push(&self, vi: u32, q: WorkQueue) {
        let cap = *self.capacity.lock().unwrap_or_else(|e| e.into_inner());
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if e.len() >= cap {
            self.overflowed
                .store(true, std::sync::atomic::Ordering::Relaxed);
        } else {
            e.push_back((vi, q));
        }
    }
    pub(crate) fn attach(&self, core: &Arc<FastMutex<ViCore>>) {
        self.members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(core));
    }
}

/// A completion queue. Attach work queues to it in [`crate::Nic::create_vi`].
#[derive(Clone)]
pub struct CompletionQueue {
    pub(crate) shared: Arc<CqShared>,
}

impl CompletionQueue {
    pub(crate) fn new(capacity: usize) -> Result<Self> {
        check_capacity(capacity)?;
        Ok(CompletionQueue {
            shared: Arc::new(CqShared {
                entries: Mutex::new(VecDeque::new()),
                capacity: Mutex::new(capacity),
                overflowed: false.into(),
                members: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The VIs attached, still alive.
    fn members(&self) -> Vec<Arc<FastMutex<ViCore>>> {
        self.shared
            .members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    fn progress_members(&self) {
        for m in self.members() {
            let mut core = m.lock();
            core.progress();
            core.flush_ack();
        }
    }

    /// `VipCQDone`: the next (VI, work queue) with a completion, if any.
    pub fn done(&self) -> Result<Option<(ViId, WorkQueue)>> {
        if self
            .shared
            .overflowed
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(ViaError::ResourceExhausted(
                "completion queue overflowed".into(),
            ));
        }
        let pop = || {
            self.shared
                .entries
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop_front()
        };
        if let Some((v, q)) = pop() {
            return Ok(Some((ViId(v), q)));
        }
        self.progress_members();
        Ok(pop().map(|(v, q)| (ViId(v), q)))
    }

    /// `VipCQWait`: blocks until an entry arrives or `timeout` passes, by the VI waits'
    /// policy ([`crate::link::backoff`]): polls for [`crate::link::backoff::DEFAULT_SPIN`] (a
    /// message from a peer on another core arrives within it, and a sleep would cost the
    /// wake-up latency) unless a member's peer last waited on this CPU, then yields for
    /// [`crate::link::backoff::YIELD_FOR`], then sleeps with a growing back-off (capped at
    /// 1.3 ms: a CQ has no doorbell to block on), never busy-waiting for long.
    ///
    /// Why the CPU check: two processes on one core, each spinning its whole budget in turn
    /// before the other could answer, cost 2 x 50 us per round trip (MP_Lite's pong over
    /// libvipl, which waits on CQs: 118-122 us round trips pinned to one core against 1-4 us
    /// on two, docs/vipl.md).
    pub fn wait(&self, timeout: Option<Duration>) -> Result<(ViId, WorkQueue)> {
        use crate::link::backoff::{Backoff, Step};
        let start = Instant::now();
        let deadline = timeout.map(|t| start + t);
        let backoff = Backoff::default();
        let shares = self.members().iter().any(|m| m.lock().peer_shares_cpu());
        let mut round = 0u32;
        loop {
            if let Some(e) = self.done()? {
                return Ok(e);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(ViaError::Timeout);
            }
            match backoff.step(now - start, shares) {
                Step::Spin => std::hint::spin_loop(),
                Step::Yield => std::thread::yield_now(),
                Step::Block => {
                    std::thread::sleep(Duration::from_micros(10u64 << round.min(7)));
                    round = round.saturating_add(1);
                }
            }
        }
    }

    /// `VipResizeCQ`.
    pub fn resize(&self, capacity: usize) -> Result<()> {
        check_capacity(capacity)?;
        *self
            .shared
            .capacity
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = capacity;
        Ok(())
    }
}

fn check_capacity(capacity: usize) -> Result<()> {
    if capacity == 0 || capacity > 1 << 20 {
        return Err(ViaError::InvalidParameter(format!(
            "CQ capacity must be in 1..=1048576, got {capacity}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::*;
    use std::time::Duration;

    /// Pins the calling thread to the CPU it runs on, so the CPU it publishes stays true.
    #[allow(unsafe_code)]
    fn pin_here() {
        // SAFETY: `sched_getcpu` takes no arguments; `set` is a zeroed `cpu_set_t` owned
        // here, filled by `CPU_SET` and read by `sched_setaffinity` for this thread (0).
        unsafe {
            let cpu = libc::sched_getcpu();
            assert!(cpu >= 0);
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                0
            );
        }
    }

    /// A completion queue's wait spins only if no member's peer last waited on the
    /// waiter's CPU: both ends of one shm connection polled from one pinned thread see each
    /// other there; over tcp there is no hint.
    #[test]
    fn a_cq_wait_sees_a_peer_on_its_own_cpu() {
        let t = Some(Duration::from_secs(30));
        for p in ["shm", "tcp"] {
            let url = match p {
                "shm" => format!("shm:///icn-via-cq-cpu/{}", std::process::id()),
                _ => "tcp://127.0.0.1:0".to_string(),
            };
            let server = Nic::open(&url).unwrap();
            let addr = server.address().to_string();
            let client = Nic::open(&format!("{p}://")).unwrap();
            let cq = server.create_cq(4).unwrap();
            let (ps, pc) = (server.create_ptag(), client.create_ptag());
            let sv = server
                .create_vi(
                    ViAttributes::new(ps, Reliability::ReliableDelivery),
                    None,
                    Some(&cq),
                )
                .unwrap();
            let cv = client
                .create_vi(
                    ViAttributes::new(pc, Reliability::ReliableDelivery),
                    None,
                    None,
                )
                .unwrap();
            std::thread::scope(|s| {
                let acc = s.spawn(|| server.connect_wait(b"cpu", t).unwrap().accept(&sv));
                client.connect_request(&cv, &addr, b"cpu", t).unwrap();
                acc.join().unwrap().unwrap();
            });
            pin_here();
            let shares = || cq.members().iter().any(|m| m.lock().peer_shares_cpu());
            shares(); // publishes this CPU for the server's side
            let peer = cv.core().peer_shares_cpu();
            assert_eq!(peer, p == "shm", "{p}: the peer sees the CQ's side here");
            assert_eq!(
                shares(),
                p == "shm",
                "{p}: the CQ's wait sees its peer here"
            );
        }
    }
}
