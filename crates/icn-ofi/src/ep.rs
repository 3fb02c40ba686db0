//! Endpoints (safe layer): an active `FI_EP_MSG` endpoint is one icn-via VI; a passive one
//! is a thread taking the fabric NIC's connection requests. The C entry points
//! (`crate::abi`) translate arguments and call these.
//!
//! Connection set-up (see `crate::cm` for why the first message each way is the provider's):
//!
//! | client | server |
//! |---|---|
//! | `fi_enable`: posts the receive for the server's answer | |
//! | `fi_connect`: a thread runs icn-via's `connect_request` (job key / uid check), sends `Request{its address, data}` | the listener accepts the VI at once, its receive already posted, reads the `Request`, queues `FI_CONNREQ` |
//! | | `fi_endpoint(info)` adopts that VI; `fi_accept` sends `Accept{data}`, queues `FI_CONNECTED`; `fi_reject` sends `Reject{data}` and closes |
//! | the thread reads the answer: `FI_CONNECTED` with the accept data, or an error event `FI_ECONNREFUSED` with the reject data | |
//!
//! Until an endpoint is connected its completions are the provider's (the CQ does not look
//! at it), so the set-up messages never show up in an application's CQ.

use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use icn_via::{
    CompletedOp, Completion, CompletionStatus, Descriptor, MemAttributes, MemRegion, Reliability,
    Segment, Vi, ViAttributes, ViState, ViaError,
};

use crate::cm::{self, Kind, MAX_CM_DATA, MAX_MSG};
use crate::eq::{Eq, Event};
use crate::error::*;
use crate::fabric::NicCtx;

/// The discriminator every connection of this provider carries (icn-via matches it
/// exactly; what distinguishes connections is the `Request` message).
pub const DISCRIMINATOR: &[u8] = b"icnvia-ofi/1";
/// How long `fi_connect` waits for a server to listen, accept the VI and answer, and how
/// long a listener waits for a client's `Request`.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The id of the provider's own set-up descriptors (application ids are slab indices).
const CM_ID: u64 = u64::MAX;
/// Empty polls of an endpoint before each further one yields the CPU.
const IDLE_SPINS: u32 = 16;
/// Send and receive queue depth of every VI (`tx_attr.size`, `rx_attr.size`).
pub const QUEUE_DEPTH: usize = 1024;

const IDLE: u8 = 0;
const CONNECTING: u8 = 1;
const ACCEPTING: u8 = 2;
const CONNECTED: u8 = 3;
const SHUTDOWN: u8 = 4;

/// The attributes of every VI: reliable delivery (a send completes once the peer has the
/// data, libfabric's `FI_TRANSMIT_COMPLETE`), RDMA both ways.
fn vi_attributes(ctx: &NicCtx) -> ViAttributes {
    let mut a = ViAttributes::new(ctx.ptag, Reliability::ReliableDelivery);
    // One more than offered: the set-up message's descriptor takes a slot on each queue
    // (ofi_rxm posts exactly `rx_attr.size` receives).
    a.queue_depth = QUEUE_DEPTH + 1;
    a
}

/// What the provider keeps of a posted operation until it completes.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    /// The application's `context`.
    pub context: usize,
    /// `FI_SEND | FI_MSG`, `FI_RECV | FI_MSG`, `FI_RMA | FI_READ`, `FI_RMA | FI_WRITE`.
    pub flags: u64,
    /// A receive's buffer (reported in `FI_CQ_FORMAT_DATA` entries).
    pub buf: usize,
    /// Whether a successful completion is reported (`FI_SELECTIVE_COMPLETION`).
    pub report: bool,
}

/// A completion as a CQ reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqEntry {
    pub context: usize,
    pub flags: u64,
    pub len: usize,
    pub buf: usize,
    pub data: u64,
}

/// A failed operation (`fi_cq_readerr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqError {
    pub entry: CqEntry,
    /// Positive `FI_E*`.
    pub err: i32,
    /// icn-via's completion status code.
    pub prov_errno: i32,
    pub msg: String,
}

/// Posted operations by descriptor id: a slab, so ids are small and reused.
#[derive(Default)]
struct Slab {
    ops: Vec<Option<OpInfo>>,
    free: Vec<u32>,
}

impl Slab {
    fn insert(&mut self, op: OpInfo) -> u64 {
        match self.free.pop() {
            Some(i) => {
                self.ops[i as usize] = Some(op);
                u64::from(i)
            }
            None => {
                self.ops.push(Some(op));
                (self.ops.len() - 1) as u64
            }
        }
    }
    fn take(&mut self, id: u64) -> Option<OpInfo> {
        let op = self.ops.get_mut(usize::try_from(id).ok()?)?.take();
        if op.is_some() {
            self.free.push(id as u32);
        }
        op
    }
}

/// The two small regions of a VI's set-up messages.
pub struct CmBufs {
    rx: MemRegion,
    tx: MemRegion,
}

impl CmBufs {
    fn new(ctx: &NicCtx) -> Result<CmBufs> {
        Ok(CmBufs {
            rx: ctx
                .nic
                .register_mem(MAX_MSG, MemAttributes::local(ctx.ptag))?,
            tx: ctx
                .nic
                .register_mem(MAX_MSG, MemAttributes::local(ctx.ptag))?,
        })
    }
    fn post_rx(&self, vi: &Vi) -> Result<()> {
        vi.post_recv(
            Descriptor::recv([Segment::new(self.rx.handle(), 0, MAX_MSG as u32)]).with_id(CM_ID),
        )?;
        Ok(())
    }
    fn send(&self, vi: &Vi, msg: &cm::Msg, deadline: Instant) -> Result<()> {
        let b = msg.encode().map_err(|e| Error::new(FI_EINVAL, e))?;
        self.tx.write(0, &b)?;
        vi.post_send(
            Descriptor::send([Segment::new(self.tx.handle(), 0, b.len() as u32)]).with_id(CM_ID),
        )?;
        wait_cm(vi, CompletedOp::Send, deadline).map(|_| ())
    }
    fn receive(&self, vi: &Vi, deadline: Instant) -> Result<cm::Msg> {
        let c = wait_cm(vi, CompletedOp::Recv, deadline)?;
        let mut b = vec![0u8; c.length as usize];
        self.rx.read(0, &mut b)?;
        cm::Msg::decode(&b).map_err(|e| Error::new(FI_ECONNABORTED, e))
    }
}

/// Waits for the next completion of a set-up descriptor on `vi` (no application
/// descriptor can complete first: the VI is not connected for the application yet).
fn wait_cm(vi: &Vi, op: CompletedOp, deadline: Instant) -> Result<Completion> {
    let mut nap = Duration::from_micros(20);
    loop {
        vi.progress();
        let c = match op {
            CompletedOp::Send => vi.send_done(),
            _ => vi.recv_done(),
        };
        if let Some(c) = c {
            if c.desc.id != CM_ID {
                return Err(Error::new(
                    FI_ECONNABORTED,
                    "an application descriptor completed during connection set-up",
                ));
            }
            if !c.status.is_ok() {
                return Err(Error::new(
                    FI_ECONNABORTED,
                    format!(
                        "connection set-up message: {:?}{}",
                        c.status,
                        vi.break_reason()
                            .map(|r| format!(" ({r})"))
                            .unwrap_or_default()
                    ),
                ));
            }
            return Ok(c);
        }
        if Instant::now() >= deadline {
            return Err(Error::new(
                FI_ETIMEDOUT,
                "no answer to the connection set-up",
            ));
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(2));
    }
}

/// A connection a listener accepted, waiting for `fi_endpoint` to adopt it.
pub struct Pending {
    nic: Arc<NicCtx>,
    vi: Vi,
    cm: CmBufs,
    peer: SocketAddrV4,
}

impl Pending {
    /// The link the connection runs on.
    pub fn link(&self) -> crate::addr::Link {
        self.nic.link
    }

    /// `fi_reject`: tells the client (with `data`) and closes the VI.
    pub fn reject(self, data: &[u8]) -> Result<()> {
        let msg = cm::Msg {
            kind: Kind::Reject,
            data: data.to_vec(),
        };
        let r = self
            .cm
            .send(&self.vi, &msg, Instant::now() + Duration::from_secs(5));
        let _ = self.vi.disconnect();
        r
    }
}

/// An active endpoint (`fi_endpoint`).
pub struct Ep {
    pub nic: Arc<NicCtx>,
    vi: Vi,
    cm: CmBufs,
    state: AtomicU8,
    adopted: bool,
    enabled: AtomicBool,
    /// The C object's address: what events name.
    pub fid: AtomicUsize,
    pub context: AtomicUsize,
    eq: Mutex<Option<Arc<Eq>>>,
    ops: Mutex<Slab>,
    /// Report every successful send / receive (false: only those posted with `FI_COMPLETION`).
    pub tx_all: AtomicBool,
    pub rx_all: AtomicBool,
    peer: Mutex<Option<SocketAddrV4>>,
    empty_polls: AtomicU32,
}

impl Ep {
    /// A client endpoint on the fabric's NIC.
    pub fn new(nic: Arc<NicCtx>) -> Result<Ep> {
        let vi = nic.nic.create_vi(vi_attributes(&nic), None, None)?;
        let cm = CmBufs::new(&nic)?;
        Ok(Ep::with(nic, vi, cm, IDLE, false, None))
    }

    /// The server endpoint of a connection request.
    pub fn adopt(p: Pending) -> Ep {
        Ep::with(p.nic, p.vi, p.cm, ACCEPTING, true, Some(p.peer))
    }

    fn with(
        nic: Arc<NicCtx>,
        vi: Vi,
        cm: CmBufs,
        state: u8,
        adopted: bool,
        peer: Option<SocketAddrV4>,
    ) -> Ep {
        Ep {
            nic,
            vi,
            cm,
            state: AtomicU8::new(state),
            adopted,
            enabled: AtomicBool::new(false),
            fid: AtomicUsize::new(0),
            context: AtomicUsize::new(0),
            eq: Mutex::new(None),
            ops: Mutex::new(Slab::default()),
            tx_all: AtomicBool::new(true),
            rx_all: AtomicBool::new(true),
            peer: Mutex::new(peer),
            empty_polls: AtomicU32::new(0),
        }
    }

    pub fn bind_eq(&self, eq: Arc<Eq>) {
        *self.eq.lock().unwrap_or_else(|e| e.into_inner()) = Some(eq);
    }

    fn eq(&self) -> Option<Arc<Eq>> {
        self.eq.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `fi_enable`: a client posts the receive for the server's answer before anything of
    /// the application's.
    pub fn enable(&self) -> Result<()> {
        if self.enabled.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if !self.adopted {
            self.cm.post_rx(&self.vi)?;
        }
        Ok(())
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    pub fn is_connected(&self) -> bool {
        self.state.load(Ordering::Acquire) == CONNECTED
    }

    /// The peer's listening address (`fi_getpeer`), once known.
    pub fn peer(&self) -> Option<SocketAddrV4> {
        *self.peer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `fi_connect`: starts connecting to `dest` with `data`; the outcome arrives on the
    /// bound EQ (`FI_CONNECTED`, or an error event).
    pub fn connect(self: &Arc<Self>, dest: SocketAddrV4, data: &[u8]) -> Result<()> {
        if data.len() > MAX_CM_DATA {
            return Err(Error::new(
                FI_EINVAL,
                format!(
                    "{} bytes of connection data (at most {MAX_CM_DATA})",
                    data.len()
                ),
            ));
        }
        if self.adopted || self.eq().is_none() || !self.is_enabled() {
            return Err(Error::new(
                FI_EOPBADSTATE,
                "fi_connect needs an enabled client endpoint bound to an EQ",
            ));
        }
        if self
            .state
            .compare_exchange(IDLE, CONNECTING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::new(
                FI_EISCONN,
                "endpoint already connecting or connected",
            ));
        }
        *self.peer.lock().unwrap_or_else(|e| e.into_inner()) = Some(dest);
        let me = self.clone();
        let data = data.to_vec();
        std::thread::Builder::new()
            .name("icnvia-fi-connect".into())
            .spawn(move || me.run_connect(dest, data))
            .map_err(|e| {
                Error::new(
                    FI_ENOMEM,
                    format!("cannot start the connecting thread: {e}"),
                )
            })?;
        Ok(())
    }

    fn run_connect(self: &Arc<Self>, dest: SocketAddrV4, data: Vec<u8>) {
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        let outcome = (|| -> Result<cm::Msg> {
            let url = self.nic.link.url(dest);
            self.nic
                .nic
                .connect_request(&self.vi, &url, DISCRIMINATOR, Some(CONNECT_TIMEOUT))
                .map_err(|e| match e {
                    ViaError::Timeout => Error::new(
                        FI_ECONNREFUSED,
                        format!("{url}: nobody accepted within {CONNECT_TIMEOUT:?}"),
                    ),
                    e => Error::from(e),
                })?;
            let req = cm::Msg {
                kind: Kind::Request {
                    addr: self.nic.addr,
                },
                data,
            };
            self.cm.send(&self.vi, &req, deadline)?;
            self.cm.receive(&self.vi, deadline)
        })();
        let fid = self.fid.load(Ordering::Acquire);
        let Some(eq) = self.eq() else { return };
        match outcome {
            Ok(cm::Msg {
                kind: Kind::Accept,
                data,
            }) => {
                self.state.store(CONNECTED, Ordering::Release);
                watch(self);
                eq.push(Event::Connected { fid, data });
            }
            Ok(cm::Msg {
                kind: Kind::Reject,
                data,
            }) => {
                let _ = self.vi.disconnect();
                self.state.store(SHUTDOWN, Ordering::Release);
                eq.push(Event::Error {
                    fid,
                    context: self.context.load(Ordering::Acquire),
                    err: FI_ECONNREFUSED,
                    data,
                });
            }
            Ok(_) | Err(_) => {
                if let Err(e) = &outcome {
                    warn(&format!("fi_connect to {dest}: {e}"));
                }
                let err = outcome.err().map_or(FI_ECONNABORTED, |e| e.code);
                let _ = self.vi.disconnect();
                self.state.store(SHUTDOWN, Ordering::Release);
                eq.push(Event::Error {
                    fid,
                    context: self.context.load(Ordering::Acquire),
                    err,
                    data: Vec::new(),
                });
            }
        }
    }

    /// `fi_accept` on an adopted endpoint: answers the client, queues `FI_CONNECTED`.
    pub fn accept(self: &Arc<Self>, data: &[u8]) -> Result<()> {
        let Some(eq) = self.eq() else {
            return Err(Error::new(
                FI_ENOEQ,
                "fi_accept on an endpoint bound to no EQ",
            ));
        };
        if self
            .state
            .compare_exchange(ACCEPTING, CONNECTING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::new(
                FI_EOPBADSTATE,
                "fi_accept on an endpoint not made from a connection request",
            ));
        }
        let msg = cm::Msg {
            kind: Kind::Accept,
            data: data.to_vec(),
        };
        if let Err(e) = self
            .cm
            .send(&self.vi, &msg, Instant::now() + CONNECT_TIMEOUT)
        {
            self.state.store(SHUTDOWN, Ordering::Release);
            return Err(e);
        }
        self.state.store(CONNECTED, Ordering::Release);
        watch(self);
        eq.push(Event::Connected {
            fid: self.fid.load(Ordering::Acquire),
            data: Vec::new(),
        });
        Ok(())
    }

    /// `fi_shutdown`.
    /// `fi_shutdown`: ends the connection; `FI_SHUTDOWN` on the EQ here too (once per
    /// endpoint, whoever ended it), as fabtests' `fi_cm_data` expects.
    pub fn shutdown(&self) -> Result<()> {
        let was = self.state.swap(SHUTDOWN, Ordering::AcqRel);
        if was == CONNECTED {
            let fid = self.fid.load(Ordering::Acquire);
            if let (Some(eq), true) = (self.eq(), fid != 0) {
                eq.push(Event::Shutdown { fid });
            }
            self.vi.disconnect()?;
        }
        Ok(())
    }

    /// Posts a receive of `segments` (`fi_recv*`).
    pub fn post_recv(&self, segments: impl IntoIterator<Item = Segment>, op: OpInfo) -> Result<()> {
        if !self.is_enabled() {
            return Err(Error::new(
                FI_EOPBADSTATE,
                "receive posted before fi_enable",
            ));
        }
        self.post(Descriptor::recv(segments), op, false)
    }

    /// Posts a send, RDMA write or RDMA read (`desc.op`).
    pub fn post_send(&self, desc: Descriptor, op: OpInfo) -> Result<()> {
        match self.state.load(Ordering::Acquire) {
            CONNECTED => {}
            SHUTDOWN => return Err(Error::new(FI_ENOTCONN, "the connection has ended")),
            _ => return Err(Error::new(FI_EOPBADSTATE, "endpoint not connected")),
        }
        self.post(desc, op, true)
    }

    fn post(&self, desc: Descriptor, op: OpInfo, send: bool) -> Result<()> {
        let id = self
            .ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(op);
        let desc = desc.with_id(id);
        let r = if send {
            self.vi.post_send(desc)
        } else {
            self.vi.post_recv(desc)
        };
        if let Err(e) = r {
            self.ops.lock().unwrap_or_else(|e| e.into_inner()).take(id);
            return Err(e.into());
        }
        Ok(())
    }

    /// Hands completed operations of the send (`tx`) and receive (`rx`) queues to `sink`
    /// (which returns false to stop). Notices a connection that ended: `FI_SHUTDOWN` on the
    /// EQ, once.
    pub fn poll(
        &self,
        tx: bool,
        rx: bool,
        sink: &mut dyn FnMut(std::result::Result<CqEntry, CqError>) -> bool,
    ) {
        let st = self.state.load(Ordering::Acquire);
        if st != CONNECTED && st != SHUTDOWN {
            return;
        }
        let mut found = false;
        let mut broke = false;
        for (on, send) in [(tx, true), (rx, false)] {
            if !on {
                continue;
            }
            loop {
                let c = if send {
                    self.vi.send_done()
                } else {
                    self.vi.recv_done()
                };
                let Some(c) = c else { break };
                found = true;
                broke |= matches!(
                    c.status,
                    CompletionStatus::Flushed
                        | CompletionStatus::TransportError
                        | CompletionStatus::PartialPacket
                );
                if !self.complete(c, sink) {
                    break;
                }
            }
        }
        // Send any acknowledgement owed now: a peer waiting for its reliable send to
        // complete (e.g. before it posts its next receive) would otherwise wait for the ack
        // keeper (milliseconds; fi_pingpong took 1.85 ms a message).
        self.vi.progress();
        let empty = if found {
            self.empty_polls.store(0, Ordering::Relaxed);
            0
        } else {
            self.empty_polls.fetch_add(1, Ordering::Relaxed) + 1
        };
        if empty > IDLE_SPINS {
            // Give the CPU away between polls once a few found nothing. A busy-polling
            // pair on a full machine otherwise waits for the scheduler to preempt it before
            // the peer runs: loopback TCP's softirq work starved (0.6 ms a message on 2
            // loaded cores, against 36 µs for icn-via's own blocking waits), and on shm
            // each round trip cost scheduler slices (30 ms per message at load 16).
            std::thread::yield_now();
        }
        if st == CONNECTED {
            let check = broke || (empty > 0 && empty % 1024 == 0);
            if check && !matches!(self.vi.query().state, ViState::Connected) {
                self.connection_ended();
            }
        }
    }

    fn connection_ended(&self) {
        let fid = self.fid.load(Ordering::Acquire);
        if self
            .state
            .compare_exchange(CONNECTED, SHUTDOWN, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
            && fid != 0
            && let Some(eq) = self.eq()
        {
            eq.push(Event::Shutdown { fid });
        }
    }

    fn complete(
        &self,
        c: Completion,
        sink: &mut dyn FnMut(std::result::Result<CqEntry, CqError>) -> bool,
    ) -> bool {
        let Some(op) = self
            .ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take(c.desc.id)
        else {
            return true; // a set-up descriptor (already accounted for)
        };
        let recv = c.op == CompletedOp::Recv;
        let entry = CqEntry {
            context: op.context,
            flags: op.flags,
            len: if recv { c.length as usize } else { 0 },
            buf: if recv { op.buf } else { 0 },
            data: 0,
        };
        if c.status.is_ok() {
            if op.report {
                return sink(Ok(entry));
            }
            return true;
        }
        sink(Err(CqError {
            entry,
            err: completion_errno(c.status),
            prov_errno: c.status.code() as i32,
            msg: format!(
                "{:?}{}",
                c.status,
                self.vi
                    .break_reason()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ),
        }))
    }
}

impl Drop for Ep {
    fn drop(&mut self) {
        if self.state.load(Ordering::Acquire) == CONNECTED {
            let _ = self.vi.disconnect();
        }
    }
}

/// How often the watcher looks at connected endpoints.
pub const WATCH_PERIOD: Duration = Duration::from_millis(10);

/// Connected endpoints the watcher visits.
static WATCHED: Mutex<Vec<std::sync::Weak<Ep>>> = Mutex::new(Vec::new());
static WATCHER: std::sync::Once = std::sync::Once::new();

/// Has the process's watcher thread look at `ep` every [`WATCH_PERIOD`] until its
/// connection ends: a peer's close is noticed (`FI_SHUTDOWN`) even by a program that waits
/// on its EQ and never reads a CQ (progress is otherwise inside `fi_cq_read`). A visit is
/// one `progress` (acks owed go out too) and one state query, under the VI's lock.
fn watch(ep: &Arc<Ep>) {
    WATCHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::downgrade(ep));
    WATCHER.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("icnvia-fi-watch".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(WATCH_PERIOD);
                    let eps: Vec<Arc<Ep>> = {
                        let mut w = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
                        w.retain(|e| e.upgrade().is_some_and(|e| e.is_connected()));
                        w.iter().filter_map(std::sync::Weak::upgrade).collect()
                    };
                    for ep in eps {
                        ep.vi.progress();
                        if !matches!(ep.vi.query().state, ViState::Connected) {
                            ep.connection_ended();
                        }
                    }
                }
            });
    });
}

/// A passive endpoint's listening thread: takes the fabric NIC's connection requests,
/// accepts each VI and queues `FI_CONNREQ` on `eq` naming `fid`.
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Listener {
    pub fn start(nic: Arc<NicCtx>, eq: Arc<Eq>, fid: usize) -> Result<Listener> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("icnvia-fi-listen".into())
            .spawn(move || {
                while !s.load(Ordering::Acquire) {
                    match nic
                        .nic
                        .connect_wait(DISCRIMINATOR, Some(Duration::from_millis(100)))
                    {
                        Ok(req) => {
                            let (nic, eq) = (nic.clone(), eq.clone());
                            let _ = std::thread::Builder::new()
                                .name("icnvia-fi-accept".into())
                                .spawn(move || {
                                    if let Err(e) = take_request(&nic, &eq, fid, req) {
                                        warn(&format!("connection request on {}: {e}", nic.addr));
                                    }
                                });
                        }
                        Err(ViaError::Timeout) => {}
                        Err(e) => {
                            warn(&format!("listening at {}: {e}", nic.addr));
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
            })
            .map_err(|e| {
                Error::new(FI_ENOMEM, format!("cannot start the listening thread: {e}"))
            })?;
        Ok(Listener {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Accepts the VI of `req` (its receive for the `Request` posted first), reads the
/// client's `Request`, queues `FI_CONNREQ`.
fn take_request(nic: &Arc<NicCtx>, eq: &Eq, fid: usize, req: icn_via::ConnRequest) -> Result<()> {
    let vi = nic.nic.create_vi(vi_attributes(nic), None, None)?;
    let cm = CmBufs::new(nic)?;
    cm.post_rx(&vi)?;
    req.accept(&vi)?;
    let msg = cm.receive(&vi, Instant::now() + CONNECT_TIMEOUT)?;
    let Kind::Request { addr } = msg.kind else {
        return Err(Error::new(
            FI_ECONNABORTED,
            "the client's first message is not a request",
        ));
    };
    eq.push(Event::ConnReq {
        fid,
        peer: addr,
        data: msg.data,
        pending: Arc::new(Mutex::new(Some(Pending {
            nic: nic.clone(),
            vi,
            cm,
            peer: addr,
        }))),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Link;
    use crate::fabric::Fabric;

    #[test]
    fn slab_reuses_ids_and_takes_each_once() {
        let mut s = Slab::default();
        let op = OpInfo {
            context: 1,
            flags: 0,
            buf: 0,
            report: true,
        };
        let a = s.insert(op);
        let b = s.insert(op);
        assert_ne!(a, b);
        assert!(s.take(a).is_some());
        assert!(s.take(a).is_none());
        assert_eq!(s.insert(op), a);
        assert!(s.take(CM_ID).is_none());
    }

    fn next_event(eq: &Eq) -> Event {
        eq.with_front(Some(Duration::from_secs(20)), |e| {
            (std::mem::replace(e, Event::Shutdown { fid: 0 }), true)
        })
        .expect("an event within 20 s")
    }

    /// Two fabrics (two "processes") on `link`: connect with data both ways, one message
    /// each way through the endpoints' registered memory, then a reject.
    fn connect_exchange_reject(link: Link) {
        let (fs, fc) = (Fabric::private(link), Fabric::private(link));
        let (ns, nc) = (fs.nic(None).unwrap(), fc.nic(None).unwrap());
        let (eqs, eqc) = (Arc::new(Eq::default()), Arc::new(Eq::default()));
        let _l = Listener::start(ns.clone(), eqs.clone(), 11).unwrap();

        let client = Arc::new(Ep::new(nc.clone()).unwrap());
        client.fid.store(22, Ordering::Release);
        client.bind_eq(eqc.clone());
        client.enable().unwrap();
        let rbuf = nc
            .nic
            .register_mem(64, MemAttributes::local(nc.ptag))
            .unwrap();
        client
            .post_recv(
                vec![Segment::new(rbuf.handle(), 0, 64)],
                OpInfo {
                    context: 5,
                    flags: 1,
                    buf: 0,
                    report: true,
                },
            )
            .unwrap();
        client.connect(ns.addr, b"hello server").unwrap();

        let Event::ConnReq {
            fid,
            peer,
            data,
            pending,
        } = next_event(&eqs)
        else {
            panic!("not a connreq")
        };
        assert_eq!(
            (fid, peer, data.as_slice()),
            (11, nc.addr, &b"hello server"[..])
        );
        let server = Arc::new(Ep::adopt(pending.lock().unwrap().take().unwrap()));
        server.fid.store(33, Ordering::Release);
        server.bind_eq(eqs.clone());
        server.enable().unwrap();
        server.accept(b"welcome").unwrap();
        assert!(matches!(next_event(&eqs), Event::Connected { fid: 33, .. }));
        let Event::Connected { fid: 22, data } = next_event(&eqc) else {
            panic!("client not connected")
        };
        assert_eq!(data, b"welcome");

        let sbuf = ns
            .nic
            .register_mem(64, MemAttributes::local(ns.ptag))
            .unwrap();
        sbuf.write(0, b"ping").unwrap();
        server
            .post_send(
                Descriptor::send([Segment::new(sbuf.handle(), 0, 4)]),
                OpInfo {
                    context: 6,
                    flags: 2,
                    buf: 0,
                    report: true,
                },
            )
            .unwrap();
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while got.len() < 2 && Instant::now() < deadline {
            server.poll(true, true, &mut |r| {
                got.push(r.unwrap());
                true
            });
            client.poll(true, true, &mut |r| {
                got.push(r.unwrap());
                true
            });
        }
        got.sort_by_key(|e| e.context);
        assert_eq!(
            got.iter().map(|e| (e.context, e.len)).collect::<Vec<_>>(),
            [(5, 4), (6, 0)]
        );
        let mut b = [0u8; 4];
        rbuf.read(0, &mut b).unwrap();
        assert_eq!(&b, b"ping");

        // A second client is rejected, with data.
        let c2 = Arc::new(Ep::new(nc.clone()).unwrap());
        c2.fid.store(44, Ordering::Release);
        c2.bind_eq(eqc.clone());
        c2.enable().unwrap();
        c2.connect(ns.addr, b"again").unwrap();
        let Event::ConnReq { pending, .. } = next_event(&eqs) else {
            panic!("not a connreq")
        };
        pending
            .lock()
            .unwrap()
            .take()
            .unwrap()
            .reject(b"no")
            .unwrap();
        let Event::Error {
            fid: 44, err, data, ..
        } = next_event(&eqc)
        else {
            panic!("not an error")
        };
        assert_eq!((err, data.as_slice()), (FI_ECONNREFUSED, &b"no"[..]));

        // The server going away ends the client's connection: FI_SHUTDOWN, flushed receive.
        client
            .post_recv(
                vec![Segment::new(rbuf.handle(), 0, 64)],
                OpInfo {
                    context: 7,
                    flags: 1,
                    buf: 0,
                    report: true,
                },
            )
            .unwrap();
        drop(server);
        let mut errs = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while eqc.is_empty() && Instant::now() < deadline {
            client.poll(true, true, &mut |r| {
                errs.push(r.unwrap_err());
                true
            });
        }
        assert!(matches!(next_event(&eqc), Event::Shutdown { fid: 22 }));
        assert_eq!(
            errs.iter()
                .map(|e| (e.entry.context, e.err))
                .collect::<Vec<_>>(),
            [(7, FI_ECANCELED)]
        );
    }

    #[test]
    fn a_peers_close_is_an_eq_event_without_reading_a_cq() {
        let (fs, fc) = (Fabric::private(Link::Shm), Fabric::private(Link::Shm));
        let (ns, nc) = (fs.nic(None).unwrap(), fc.nic(None).unwrap());
        let (eqs, eqc) = (Arc::new(Eq::default()), Arc::new(Eq::default()));
        let _l = Listener::start(ns.clone(), eqs.clone(), 1).unwrap();
        let client = Arc::new(Ep::new(nc).unwrap());
        client.fid.store(2, Ordering::Release);
        client.bind_eq(eqc.clone());
        client.enable().unwrap();
        client.connect(ns.addr, b"").unwrap();
        let Event::ConnReq { pending, .. } = next_event(&eqs) else {
            panic!("not a connreq")
        };
        let server = Arc::new(Ep::adopt(pending.lock().unwrap().take().unwrap()));
        server.fid.store(3, Ordering::Release);
        server.bind_eq(eqs.clone());
        server.accept(b"").unwrap();
        assert!(matches!(next_event(&eqs), Event::Connected { fid: 3, .. }));
        assert!(matches!(next_event(&eqc), Event::Connected { fid: 2, .. }));
        // The server shuts down: FI_SHUTDOWN at once there, and at the client (which
        // reads no CQ) through the watcher; exactly one each.
        server.shutdown().unwrap();
        assert!(matches!(next_event(&eqs), Event::Shutdown { fid: 3 }));
        assert!(matches!(next_event(&eqc), Event::Shutdown { fid: 2 }));
        client.shutdown().unwrap();
        std::thread::sleep(WATCH_PERIOD * 5);
        assert!(eqc.is_empty() && eqs.is_empty());
    }

    #[test]
    fn shm_connect_exchange_reject_shutdown() {
        connect_exchange_reject(Link::Shm);
    }

    #[test]
    fn tcp_connect_exchange_reject_shutdown() {
        connect_exchange_reject(Link::Tcp);
    }
}
