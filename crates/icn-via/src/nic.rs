//! The consumer-facing objects: [`Nic`], [`Vi`] and [`ConnRequest`].

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crate::attrs::{
    MAX_DISCRIMINATOR_LEN, MAX_QUEUE_DEPTH, MAX_REGISTER_SIZE, MAX_SEGMENTS, MAX_TRANSFER_SIZE,
    MemAttributes, NicAttributes, Ptag, Reliability, ViAttributes,
};
use crate::auth::JobKey;
use crate::cq::{CompletionQueue, ViId, WorkQueue};
use crate::descriptor::{Completion, Descriptor};
use crate::engine::ViCore;
use crate::error::{Result, ViaError};
use crate::frame::{HEADER_LEN, Header, Kind};
use crate::lock::{FastGuard, FastMutex};
use crate::memory::{MemHandle, MemRegion, RegionTable};
use crate::provider::{Address, Incoming, Listener, ShutdownFn, dial_until, establish};
use crate::vi_state::ViState;
use crate::wire::Wire;

/// How long an accepted connection has to prove the job key (tcp) or pass its area (shm)
/// and send its request, counted from its accept. Each connection is set up on its own
/// short-lived thread, so a silent one delays nobody else.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections being set up at once per NIC; one more evicts the oldest (its socket is shut
/// down, so its thread ends at once): silent connections cannot hold every slot. A tcp
/// client evicted before the key exchange ended tries again until its deadline.
pub const MAX_HANDSHAKES: usize = 32;
/// Requests waiting for a `connect_wait` with their discriminator, per NIC; one more is
/// closed unread.
pub const MAX_PENDING: usize = 64;
/// How long a request waits for a `connect_wait` with its discriminator before it is closed.
pub const PENDING_TTL: Duration = Duration::from_secs(60);

/// How often the NIC's ack keeper visits its VIs. An ack owed for one to two periods, by a
/// consumer that has not called since it received, is sent by the keeper: a reliable send
/// completes at the sender within ~2 periods of its delivery even if the receiving program
/// never calls the library again (it computes, sleeps, or waits on something else).
pub const ACK_KEEPER_PERIOD: Duration = Duration::from_millis(5);

struct NicShared {
    /// The VIs the ack keeper visits.
    vis: Mutex<Vec<Weak<FastMutex<ViCore>>>>,
    /// True once the keeper thread runs.
    keeper: std::sync::atomic::AtomicBool,
    addr: Address,
    url: String,
    table: Arc<RegionTable>,
    next_ptag: AtomicU32,
    next_vi: AtomicU32,
    listener: Mutex<Listener>,
    pending: Mutex<Vec<ConnRequest>>,
    /// The tcp provider's job key ([`crate::auth`]); `None` on shm.
    key: Option<JobKey>,
    /// Connections being set up by handshake threads, oldest first: an id and how to shut
    /// the connection down.
    handshakes: Mutex<std::collections::VecDeque<(u64, ShutdownFn)>>,
    next_handshake: std::sync::atomic::AtomicU64,
    /// True once a refused connection was reported on standard error.
    refusal_reported: std::sync::atomic::AtomicBool,
    /// An eventfd a handshake thread signals when it queued a request, so a waiting
    /// `connect_wait` looks at once.
    wake: OwnedFd,
}

/// An open NIC (`VipOpenNic`; dropping it is `VipCloseNic`).
#[derive(Clone)]
pub struct Nic {
    shared: Arc<NicShared>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Nic {
    /// Opens a NIC of the provider named by `url` (see [`crate::provider`] for the forms).
    pub fn open(url: &str) -> Result<Nic> {
        let addr = Address::parse(url)?;
        let key = match addr {
            Address::Tcp(_) => {
                Some(JobKey::load().map_err(|e| ViaError::at(url, "cannot load the job key", e))?)
            }
            Address::Shm(_) => None,
        };
        let (listener, url) = Listener::bind(&addr, key.as_ref())?;
        let wake = rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )
        .map_err(|e| ViaError::at(&url, "eventfd", e.into()))?;
        // On shm, large regions live in shared memory so a peer can copy straight out of
        // them (the single-copy path, `shared_mem`).
        let table = Arc::new(if addr.provider() == "shm" {
            RegionTable::with_shared_regions(crate::shared_mem::SHARED_REGION_MIN)
        } else {
            RegionTable::default()
        });
        Ok(Nic {
            shared: Arc::new(NicShared {
                addr,
                url,
                table,
                next_ptag: AtomicU32::new(1),
                next_vi: AtomicU32::new(1),
                listener: Mutex::new(listener),
                pending: Mutex::new(Vec::new()),
                key,
                handshakes: Mutex::new(Default::default()),
                next_handshake: 0.into(),
                refusal_reported: false.into(),
                wake,
                vis: Mutex::new(Vec::new()),
                keeper: false.into(),
            }),
        })
    }

    /// `VipQueryNic`.
    pub fn attributes(&self) -> NicAttributes {
        NicAttributes {
            provider: self.shared.addr.provider(),
            address: self.shared.url.clone(),
            max_transfer_size: MAX_TRANSFER_SIZE,
            max_segments_per_desc: MAX_SEGMENTS,
            max_queue_depth: MAX_QUEUE_DEPTH,
            max_discriminator_len: MAX_DISCRIMINATOR_LEN,
            max_register_bytes: MAX_REGISTER_SIZE,
        }
    }

    /// The URL peers use to reach this NIC.
    pub fn address(&self) -> &str {
        &self.shared.url
    }

    /// `VipCreatePtag`.
    pub fn create_ptag(&self) -> Ptag {
        Ptag(self.shared.next_ptag.fetch_add(1, Ordering::Relaxed))
    }

    /// `VipRegisterMem`: a zeroed region of `len` bytes.
    pub fn register_mem(&self, len: usize, attrs: MemAttributes) -> Result<MemRegion> {
        self.shared.table.register(len, attrs)
    }

    /// `VipRegisterMem` on the caller's own memory: registers `buf` for the duration of `f`,
    /// which gets the region to name in descriptors (send, receive, RDMA target or source),
    /// and returns what `f` returns. No bounce copy: the NIC moves bytes straight into and out
    /// of `buf`. When `f` returns (or panics) the registration ends before `buf` is given
    /// back: its handle is refused from then on, and a descriptor still pending on it
    /// cannot touch `buf` any more (wait for its completion inside `f`). A scope rather than
    /// a returned handle because a handle could be `mem::forget`-ed (see `user_mem`).
    ///
    /// ```no_run
    /// # use icn_via::*;
    /// # let nic = Nic::open("shm://")?; let ptag = nic.create_ptag();
    /// # let vi = nic.create_vi(ViAttributes::new(ptag, Reliability::ReliableDelivery), None, None)?;
    /// let mut buf = vec![0u8; 1 << 20];
    /// let len = nic.register_user_mem(&mut buf, MemAttributes::local(ptag), |r| {
    ///     vi.post_recv(Descriptor::recv([Segment::new(r.handle(), 0, r.len() as u32)]))?;
    ///     Ok::<_, ViaError>(vi.recv_wait(None)?.ok()?.length)
    /// })??;
    /// println!("received {len} B into buf: {:?}", &buf[..4]);
    /// # Ok::<(), ViaError>(())
    /// ```
    pub fn register_user_mem<R>(
        &self,
        buf: &mut [u8],
        attrs: MemAttributes,
        f: impl FnOnce(&crate::memory::UserRegion<'_>) -> R,
    ) -> Result<R> {
        self.shared.table.register_user(buf, attrs, f)
    }

    /// `VipRegisterMem` as VIPL has it: registers `len` bytes of the caller's memory at
    /// `ptr` until [`Nic::deregister_addr`]. Segments and RDMA address segments name these
    /// bytes by their *address* (`offset` = the address as a `u64`), not by an offset from
    /// the start: a C program puts pointers in its descriptors and sends its buffer's address
    /// to the peer it lets RDMA into it. This is the registration `libvipl` (`icn-vipl`) uses;
    /// Rust code should prefer [`Nic::register_mem`] or [`Nic::register_user_mem`], which
    /// need no `unsafe`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes until `deregister_addr(handle)`
    /// has returned (or the NIC is dropped), and the caller must not hold a Rust reference to
    /// those bytes across any call into this NIC or its VIs (the library reads and writes
    /// them inside those calls). Plain C use (touching the buffer between calls) is fine.
    #[allow(unsafe_code)]
    pub unsafe fn register_addr(
        &self,
        ptr: *mut u8,
        len: usize,
        attrs: MemAttributes,
    ) -> Result<MemHandle> {
        if ptr.is_null() {
            return Err(ViaError::InvalidParameter("null address".into()));
        }
        // SAFETY: the caller's contract above is `lend_raw`'s; `deregister_addr` (or the
        // table's drop, which drops the `Bytes` without touching them) ends it.
        let bytes = unsafe { crate::user_mem::Bytes::lend_raw(ptr, len) };
        self.shared
            .table
            .register_by_address(bytes, ptr as u64, attrs)
    }

    /// `VipDeregisterMem` of a [`Nic::register_addr`] region: once this returns the library
    /// never touches those bytes again (a descriptor still pending on them moves its bytes
    /// to or from a sink).
    pub fn deregister_addr(&self, handle: MemHandle) -> Result<()> {
        self.shared.table.deregister_by_address(handle)
    }

    /// `VipQueryMem`: the attributes of a registered region, `None` for an unknown handle.
    pub fn mem_attributes(&self, handle: MemHandle) -> Option<MemAttributes> {
        self.shared.table.attributes_of(handle)
    }

    /// `VipSetMemAttributes` on a [`Nic::register_addr`] region (same handle, bytes and
    /// address; new protection tag and RDMA rights).
    ///
    /// # Safety
    /// As for [`Nic::register_addr`], with the same `ptr` and `len` it was registered with.
    #[allow(unsafe_code)]
    pub unsafe fn set_addr_attributes(
        &self,
        handle: MemHandle,
        ptr: *mut u8,
        len: usize,
        attrs: MemAttributes,
    ) -> Result<()> {
        self.shared
            .table
            .set_attributes_by_address(handle, attrs, || {
                // SAFETY: the caller's contract (same region, still registered) is `lend_raw`'s.
                unsafe { crate::user_mem::Bytes::lend_raw(ptr, len) }
            })
    }

    /// `VipCreateCQ`.
    pub fn create_cq(&self, capacity: usize) -> Result<CompletionQueue> {
        CompletionQueue::new(capacity)
    }

    /// `VipCreateVi`, optionally attaching its work queues to completion queues.
    pub fn create_vi(
        &self,
        attrs: ViAttributes,
        send_cq: Option<&CompletionQueue>,
        recv_cq: Option<&CompletionQueue>,
    ) -> Result<Vi> {
        attrs.validate()?;
        let id = self.shared.next_vi.fetch_add(1, Ordering::Relaxed);
        let mut core = ViCore::new(id, attrs, self.shared.table.clone());
        core.send_cq = send_cq.map(|c| c.shared.clone());
        core.recv_cq = recv_cq.map(|c| c.shared.clone());
        let core = Arc::new(FastMutex::new(core));
        for cq in [send_cq, recv_cq].into_iter().flatten() {
            cq.shared.attach(&core);
        }
        {
            let mut vis = lock(&self.shared.vis);
            vis.retain(|v| v.strong_count() > 0);
            vis.push(Arc::downgrade(&core));
        }
        self.start_ack_keeper();
        Ok(Vi { id: ViId(id), core })
    }

    /// Starts the NIC's ack keeper once: a thread that every [`ACK_KEEPER_PERIOD`] visits
    /// each VI whose lock is free ([`FastMutex::try_lock`]: a consumer inside a call is never
    /// waited for, and a consumer inside a wait flushes its own acks) and sends an ack owed
    /// since its previous visit. It holds the NIC weakly and ends with it. The data path is
    /// unchanged: no system call and no atomic operation is added per message.
    fn start_ack_keeper(&self) {
        if self.shared.keeper.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak = Arc::downgrade(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("icn-via-acks".into())
            .spawn(move || ack_keeper(weak));
        if spawned.is_err() {
            self.shared.keeper.store(false, Ordering::Release);
        }
    }

    /// `VipConnectRequest`: connects `vi` to the server NIC at `remote`, offering
    /// `discriminator`, waiting up to `timeout` (`None`: for ever) for a server to listen
    /// there and accept: a client may start before its server. Fails with `Rejected`,
    /// `Timeout` (nobody listened or accepted in time) or `ConnectionLost`.
    pub fn connect_request(
        &self,
        vi: &Vi,
        remote: &str,
        discriminator: &[u8],
        timeout: Option<Duration>,
    ) -> Result<()> {
        check_discriminator(discriminator)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let link = dial_until(
            &self.shared.addr,
            remote,
            self.shared.key.as_ref(),
            deadline,
        )?;
        let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let mut core = vi.core();
        core.peer = remote.to_string();
        core.connect(link, discriminator, timeout)
    }

    /// `VipConnectWait`: waits for a request carrying `discriminator`, never past `timeout`.
    /// Requests with other discriminators are kept for other waiters ([`MAX_PENDING`] at
    /// most, each for [`PENDING_TTL`]). Each accepted connection is set up (job key, request)
    /// on a thread of its own within [`HANDSHAKE_TIMEOUT`], [`MAX_HANDSHAKES`] at once: a
    /// silent or junk connection delays neither this wait nor a legitimate client.
    pub fn connect_wait(
        &self,
        discriminator: &[u8],
        timeout: Option<Duration>,
    ) -> Result<ConnRequest> {
        check_discriminator(discriminator)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            {
                let mut pending = lock(&self.shared.pending);
                let now = Instant::now();
                pending.retain(|r| now.duration_since(r.arrived) < PENDING_TTL);
                if let Some(i) = pending
                    .iter()
                    .position(|r| r.discriminator == discriminator)
                {
                    return Ok(pending.remove(i));
                }
            }
            let left = deadline.map_or(Duration::from_millis(100), |d| {
                d.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return Err(ViaError::Timeout);
            }
            self.accept_some(left.min(Duration::from_millis(100)))?;
        }
    }

    /// Waits up to `timeout` for a connection or a handshake thread's signal; hands a
    /// connection to a handshake thread.
    fn accept_some(&self, timeout: Duration) -> Result<()> {
        use rustix::event::{PollFd, PollFlags, poll};
        let incoming = {
            let mut listener = lock(&self.shared.listener);
            let Some(lfd) = listener.fd() else {
                return Err(ViaError::InvalidState(
                    "this NIC was opened without a listening address".into(),
                ));
            };
            let mut fds = [
                PollFd::from_borrowed_fd(lfd, PollFlags::IN),
                PollFd::new(&self.shared.wake, PollFlags::IN),
            ];
            match poll(&mut fds, Some(&crate::link::timespec(timeout))) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(ViaError::Io(e.into())),
            }
            let (conn, woken) = (!fds[0].revents().is_empty(), !fds[1].revents().is_empty());
            if woken {
                let mut b = [0u8; 8];
                let _ = rustix::io::read(&self.shared.wake, &mut b);
            }
            if !conn {
                return Ok(());
            }
            listener.accept(Duration::ZERO)?
        };
        if let Some(incoming) = incoming {
            self.start_handshake(incoming);
        }
        Ok(())
    }

    /// Sets `incoming` up on a thread of its own (evicting the oldest if [`MAX_HANDSHAKES`]
    /// run); the request it carries joins the pending queue.
    fn start_handshake(&self, incoming: Incoming) {
        let shared = &self.shared;
        let Some(kill) = incoming.shutdown_fn() else {
            return; // cannot be bounded: closed unread
        };
        let id = shared.next_handshake.fetch_add(1, Ordering::Relaxed);
        {
            let mut hs = lock(&shared.handshakes);
            while hs.len() >= MAX_HANDSHAKES {
                if let Some((_, oldest)) = hs.pop_front() {
                    oldest();
                }
            }
            hs.push_back((id, kill));
        }
        let weak: Weak<NicShared> = Arc::downgrade(shared);
        let key = shared.key.clone();
        let url = shared.url.clone();
        let spawned = std::thread::Builder::new()
            .name("icn-via-handshake".into())
            .spawn(move || {
                let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
                let req = establish(incoming, key.as_ref(), deadline)
                    .and_then(|link| ConnRequest::read(Wire::new(link), deadline));
                let Some(shared) = weak.upgrade() else {
                    return;
                };
                lock(&shared.handshakes).retain(|(i, _)| *i != id);
                // A client refused for its proof (not one that merely went away) is reported,
                // once per NIC: a flood must not flood the consumer's standard error.
                if let Err(ViaError::Io(e)) = &req
                    && e.kind() == std::io::ErrorKind::PermissionDenied
                    && !shared.refusal_reported.swap(true, Ordering::AcqRel)
                {
                    eprintln!(
                        "icn-via: {url}: refused a connection: {e} (further refusals not reported)"
                    );
                }
                if let Ok(mut req) = req {
                    req.peer = format!("connected to {url}");
                    let mut pending = lock(&shared.pending);
                    if pending.len() < MAX_PENDING {
                        pending.push(req);
                    }
                }
                let _ = rustix::io::write(&shared.wake, &1u64.to_ne_bytes());
            });
        if spawned.is_err() {
            lock(&shared.handshakes).retain(|(i, _)| *i != id);
        }
    }

    /// Connections being set up and requests pending (for tests of the bounds).
    pub fn connection_backlog(&self) -> (usize, usize) {
        (
            lock(&self.shared.handshakes).len(),
            lock(&self.shared.pending).len(),
        )
    }
}

/// The ack keeper's loop ([`Nic::start_ack_keeper`]): every [`ACK_KEEPER_PERIOD`], a visit
/// to each VI whose lock is free, until the NIC is gone. Out of line so profiles name it
/// (`crates/icn-vipl/bench/overhead.sh` takes its cost, which grows with time, not with
/// messages, out of its per-message counts): ~250 instructions a visit.
#[inline(never)]
fn ack_keeper(nic: Weak<NicShared>) {
    loop {
        std::thread::sleep(ACK_KEEPER_PERIOD);
        let Some(shared) = nic.upgrade() else {
            return;
        };
        let vis: Vec<_> = lock(&shared.vis).iter().filter_map(Weak::upgrade).collect();
        drop(shared);
        for vi in vis {
            if let Some(mut core) = vi.try_lock() {
                core.keeper_visit();
            }
        }
    }
}

fn check_discriminator(d: &[u8]) -> Result<()> {
    if d.len() > MAX_DISCRIMINATOR_LEN {
        return Err(ViaError::InvalidParameter(format!(
            "discriminator length must be in 0..={MAX_DISCRIMINATOR_LEN}, got {}",
            d.len()
        )));
    }
    Ok(())
}

/// An incoming connection request (the `VIP_CONN_HANDLE` of `VipConnectWait`).
pub struct ConnRequest {
    wire: Wire,
    discriminator: Vec<u8>,
    reliability: Reliability,
    max_transfer_size: u32,
    /// How errors name the client: it has no address of its own.
    peer: String,
    /// When the request was read (it expires [`PENDING_TTL`] later).
    arrived: Instant,
}

impl ConnRequest {
    fn read(mut wire: Wire, deadline: Instant) -> Result<ConnRequest> {
        let deadline = Some(deadline);
        let mut b = [0u8; HEADER_LEN];
        wire.read_exact_until(&mut b, deadline)?;
        let h = Header::decode(&b)
            .map_err(|e| ViaError::ConnectionLost(format!("bad connection request: {e}")))?;
        if h.kind != Kind::Connect {
            return Err(ViaError::ConnectionLost(
                "expected a connection request".into(),
            ));
        }
        if h.len as usize > MAX_DISCRIMINATOR_LEN {
            return Err(ViaError::ConnectionLost(format!(
                "connection request with a {}-byte discriminator (at most {MAX_DISCRIMINATOR_LEN})",
                h.len
            )));
        }
        let mut disc = vec![0u8; h.len as usize];
        wire.read_exact_until(&mut disc, deadline)?;
        let reliability = Reliability::from_code(h.imm)
            .ok_or_else(|| ViaError::ConnectionLost("bad reliability".into()))?;
        Ok(ConnRequest {
            wire,
            discriminator: disc,
            reliability,
            max_transfer_size: h.handle,
            peer: "client".into(),
            arrived: Instant::now(),
        })
    }

    /// The reliability level the client asked for.
    pub fn reliability(&self) -> Reliability {
        self.reliability
    }
    /// The client's discriminator.
    pub fn discriminator(&self) -> &[u8] {
        &self.discriminator
    }

    /// `VipConnectAccept`: binds the request to `vi`. The reliability levels must match
    /// (else the request is rejected and `InvalidParameter` returned).
    pub fn accept(mut self, vi: &Vi) -> Result<()> {
        let mut core = vi.core();
        if core.attrs.reliability != self.reliability {
            let _ = self.wire.write_all(
                &[&Header::new(Kind::Reject).encode()],
                Duration::from_secs(1),
            );
            return Err(ViaError::InvalidParameter(format!(
                "VI reliability {:?} differs from the request's {:?}",
                core.attrs.reliability, self.reliability
            )));
        }
        let disc_len = self.discriminator.len();
        core.peer = format!("({})", self.peer);
        core.accept(self.wire, self.max_transfer_size, disc_len)
    }

    /// `VipConnectReject`.
    pub fn reject(mut self) -> Result<()> {
        self.wire.write_all(
            &[&Header::new(Kind::Reject).encode()],
            Duration::from_secs(1),
        )?;
        Ok(())
    }
}

/// What `VipQueryVi` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViQuery {
    pub state: ViState,
    pub attributes: ViAttributes,
    /// Send-queue descriptors posted and not yet reaped.
    pub send_posted: usize,
    /// Receive descriptors posted and not yet consumed.
    pub recv_posted: usize,
    /// Sends, RDMA writes and RDMA read responses whose payload the peer copied straight
    /// out of this side's memory, one copy: from a shared region
    /// ([`ViAttributes::single_copy_min`]) or by cross-memory attach
    /// ([`ViAttributes::cma_min`]).
    pub single_copy_sends: u64,
}

/// A virtual interface: a send and a receive work queue bound to one connection
/// (`VipCreateVi`; dropping it is `VipDestroyVi`). Methods take `&self` and lock internally,
/// so a `Vi` can be shared between threads.
pub struct Vi {
    id: ViId,
    core: Arc<FastMutex<ViCore>>,
}

impl Vi {
    #[inline]
    pub(crate) fn core(&self) -> FastGuard<'_, ViCore> {
        self.core.lock()
    }
    /// The id CQ entries name this VI by.
    pub fn id(&self) -> ViId {
        self.id
    }
    /// `VipPostSend`.
    #[inline]
    pub fn post_send(&self, desc: Descriptor) -> Result<()> {
        self.core().post_send(desc)
    }
    /// `VipPostRecv`.
    #[inline]
    pub fn post_recv(&self, desc: Descriptor) -> Result<()> {
        self.core().post_recv(desc)
    }
    /// `VipSendDone`: the oldest completed send-queue descriptor, if any (never blocks).
    #[inline]
    pub fn send_done(&self) -> Option<Completion> {
        self.core().send_done()
    }
    /// `VipRecvDone`.
    #[inline]
    pub fn recv_done(&self) -> Option<Completion> {
        self.core().recv_done()
    }
    /// `VipSendWait`: blocks (spin, then sleep) until a send-queue descriptor completes.
    /// `None` waits forever — but still returns `ConnectionLost` if the peer dies.
    #[inline]
    pub fn send_wait(&self, timeout: Option<Duration>) -> Result<Completion> {
        self.core().wait(WorkQueue::Send, timeout)
    }
    /// `VipRecvWait`.
    #[inline]
    pub fn recv_wait(&self, timeout: Option<Duration>) -> Result<Completion> {
        self.core().wait(WorkQueue::Recv, timeout)
    }
    /// Makes progress without blocking: handles every frame that has arrived (answering RDMA
    /// reads, placing RDMA writes) and sends any acknowledgement owed.
    ///
    /// Progress happens in the consumer's calls (like a user-level NIC library).
    /// Acknowledgements ride on outgoing frames or are sent when this side blocks; one owed by
    /// a consumer that neither sends, waits nor polls is sent by the NIC's ack keeper within
    /// about two [`ACK_KEEPER_PERIOD`]s, so the peer's reliable sends complete anyway. An
    /// RDMA target with nothing posted calls this to serve reads and writes.
    pub fn progress(&self) {
        let mut core = self.core();
        core.progress();
        core.flush_ack();
    }

    /// `VipDisconnect`.
    pub fn disconnect(&self) -> Result<()> {
        self.core().disconnect()
    }
    /// `VipQueryVi`.
    pub fn query(&self) -> ViQuery {
        let core = self.core();
        let (state, attributes, send_posted, recv_posted) = core.query();
        ViQuery {
            state,
            attributes,
            send_posted,
            recv_posted,
            single_copy_sends: core.single_copy_sends,
        }
    }
    /// True if a descriptor whose id lies in `ids` is posted on this VI and not yet handed
    /// back by a `*_done` / `*_wait` (libvipl's ids are descriptor addresses: it refuses to
    /// deregister memory a pending descriptor lies in, whose status it will write).
    pub fn has_descriptor_in(&self, ids: std::ops::Range<u64>) -> bool {
        self.core().outstanding_ids().any(|id| ids.contains(&id))
    }
    /// Why the VI broke, if it did (e.g. `peer shm://name gone (peer closed the
    /// connection)`): what a descriptor completed with `Flushed` was flushed for.
    pub fn break_reason(&self) -> Option<String> {
        self.core().break_reason.clone()
    }
    /// `VipSetViAttributes`: only allowed while idle (VIA: before connecting).
    pub fn set_attributes(&self, attrs: ViAttributes) -> Result<()> {
        attrs.validate()?;
        let mut core = self.core();
        if core.state != ViState::Idle {
            return Err(ViaError::InvalidState(
                "VI attributes can only change while idle".into(),
            ));
        }
        core.attrs = attrs;
        Ok(())
    }
}

impl Drop for Vi {
    fn drop(&mut self) {
        let mut core = self.core();
        if core.state == ViState::Connected {
            let _ = core.disconnect();
        }
    }
}
