//! The far side of icn-via's multi-process integration tests (and a manual test tool).
//!
//! `icn-via-peer ROLE LISTEN_URL RELIABILITY [ARG]` opens a NIC listening on `LISTEN_URL`,
//! prints `READY <address>` on stdout, accepts one connection (discriminator `peer`) and
//! plays ROLE:
//!
//! | role | does |
//! |---|---|
//! | `echo [MAX]` | receives messages of up to MAX bytes (default 4 MiB) and sends each back unchanged, until disconnect |
//! | `sink N` | receives N 16-byte messages `(index, checksum)` and replies with one 24-byte report `(received, in_order, bad)` |
//! | `rdma` | registers a 4 KiB region with RDMA rights, one without, and a 256 KiB one with (`(i·13+5) mod 256`), sends their handles, serves RDMA until disconnect |
//! | `stall` | accepts and then only sleeps (to be killed by the test) |
//! | `errors CASE` | sends the handle of a 4 KiB RDMA region, then checks its side of error case CASE (`length`: its 16-byte receive completes with `LengthError`, nothing written; `nodesc`: no receive posted; `rdma`: the client's RDMA is refused) — the VI breaks (stays up if unreliable) and the RDMA region is untouched; exits 1 if anything differs |
//!
//! Exit status 0 on a clean disconnect, 1 on any error.

use std::time::Duration;

use icn_via::*;

const MAX: usize = 4 << 20;
const T: Option<Duration> = Some(Duration::from_secs(30));

fn main() {
    if let Err(e) = run() {
        eprintln!("icn-via-peer: {e}");
        std::process::exit(1);
    }
}

fn reliability(s: &str) -> Result<Reliability> {
    match s {
        "unreliable" => Ok(Reliability::Unreliable),
        "delivery" => Ok(Reliability::ReliableDelivery),
        "reception" => Ok(Reliability::ReliableReception),
        _ => Err(ViaError::InvalidParameter(format!(
            "reliability must be unreliable|delivery|reception, got {s}"
        ))),
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        return Err(ViaError::InvalidParameter(
            "usage: icn-via-peer ROLE LISTEN_URL RELIABILITY [ARG]".into(),
        ));
    }
    let nic = Nic::open(&args[2])?;
    let rel = reliability(&args[3])?;
    let ptag = nic.create_ptag();
    let vi = nic.create_vi(ViAttributes::new(ptag, rel), None, None)?;
    println!("READY {}", nic.address());
    use std::io::Write;
    std::io::stdout().flush()?;
    nic.connect_wait(b"peer", T)?.accept(&vi)?;
    match args[1].as_str() {
        "echo" => {
            let max = match args.get(4).filter(|a| !a.is_empty()) {
                None => MAX,
                Some(a) => a
                    .parse()
                    .ok()
                    .filter(|&m| m <= icn_via::attrs::MAX_TRANSFER_SIZE as usize)
                    .ok_or_else(|| {
                        ViaError::InvalidParameter(format!(
                            "echo size must be in 0..={}, got {a}",
                            icn_via::attrs::MAX_TRANSFER_SIZE
                        ))
                    })?,
            };
            echo(&nic, ptag, &vi, max)
        }
        "sink" => sink(
            &nic,
            ptag,
            &vi,
            args.get(4).and_then(|a| a.parse().ok()).unwrap_or(0),
        ),
        // The test ends the RDMA role by breaking the VI on purpose.
        "rdma" => rdma(&nic, ptag, &vi).or_else(|e| if finished(&e) { Ok(()) } else { Err(e) }),
        "errors" => errors(
            &nic,
            ptag,
            &vi,
            rel,
            args.get(4).map(String::as_str).unwrap_or(""),
        ),
        "stall" => loop {
            std::thread::sleep(Duration::from_secs(1));
        },
        r => Err(ViaError::InvalidParameter(format!("unknown role {r}"))),
    }
}

/// True if the error means the client hung up (the normal end of a role).
fn finished(e: &ViaError) -> bool {
    matches!(e, ViaError::InvalidState(_) | ViaError::ConnectionLost(_))
}

fn echo(nic: &Nic, ptag: Ptag, vi: &Vi, max: usize) -> Result<()> {
    // Two buffers: the next receive is posted before the reply goes out, because the
    // client's next message may arrive while we wait for the reply's completion.
    let bufs = [
        nic.register_mem(max.max(1), MemAttributes::local(ptag))?,
        nic.register_mem(max.max(1), MemAttributes::local(ptag))?,
    ];
    let post = |i: usize| {
        vi.post_recv(Descriptor::recv(vec![Segment::new(
            bufs[i].handle(),
            0,
            max as u32,
        )]))
    };
    post(0)?;
    let mut cur = 0;
    loop {
        let c = match vi.recv_wait(None) {
            Ok(c) => c,
            Err(e) if finished(&e) => return Ok(()),
            Err(e) => return Err(e),
        };
        if c.status == CompletionStatus::Flushed {
            return Ok(());
        }
        let c = c.ok()?;
        post(1 - cur)?;
        vi.post_send(Descriptor::send(vec![Segment::new(
            bufs[cur].handle(),
            0,
            c.length,
        )]))?;
        match vi.send_wait(T) {
            Ok(s) if s.status == CompletionStatus::Flushed => return Ok(()),
            Ok(s) => drop(s.ok()?),
            Err(e) if finished(&e) => return Ok(()),
            Err(e) => return Err(e),
        }
        cur = 1 - cur;
    }
}

fn sink(nic: &Nic, ptag: Ptag, vi: &Vi, n: u64) -> Result<()> {
    const DEPTH: u64 = 64;
    let buf = nic.register_mem((DEPTH as usize) * 16, MemAttributes::local(ptag))?;
    let post = |slot: u64| {
        vi.post_recv(
            Descriptor::recv(vec![Segment::new(buf.handle(), slot * 16, 16)]).with_id(slot),
        )
    };
    for s in 0..DEPTH.min(n.max(1)) {
        post(s)?;
    }
    let (mut received, mut in_order, mut bad) = (0u64, 0u64, 0u64);
    while received < n {
        let c = vi.recv_wait(T)?.ok()?;
        let slot = c.desc.id;
        let mut m = [0u8; 16];
        buf.read((slot * 16) as usize, &mut m)?;
        let idx = u64::from_le_bytes(m[..8].try_into().unwrap_or_default());
        let sum = u64::from_le_bytes(m[8..].try_into().unwrap_or_default());
        if idx == received {
            in_order += 1;
        }
        if sum != idx.wrapping_mul(0x9e37_79b9_7f4a_7c15) || c.length != 16 {
            bad += 1;
        }
        received += 1;
        if received + DEPTH <= n {
            post(slot)?;
        }
        // Credit: tell the sender every DEPTH/2 messages that receives are posted again.
        if received % (DEPTH / 2) == 0 && received < n {
            vi.post_send(Descriptor::send(vec![]))?;
            vi.send_wait(T)?.ok()?;
        }
    }
    let report = nic.register_mem(24, MemAttributes::local(ptag))?;
    report.write(
        0,
        &[
            received.to_le_bytes(),
            in_order.to_le_bytes(),
            bad.to_le_bytes(),
        ]
        .concat(),
    )?;
    vi.post_send(Descriptor::send(vec![Segment::new(report.handle(), 0, 24)]))?;
    vi.send_wait(T)?.ok()?;
    // Keep serving until the client hangs up, so the report's acknowledgement gets out.
    let _ = vi.recv_wait(T);
    Ok(())
}

fn rdma(nic: &Nic, ptag: Ptag, vi: &Vi) -> Result<()> {
    let open = nic.register_mem(4096, MemAttributes::rdma(ptag))?;
    let closed = nic.register_mem(4096, MemAttributes::local(ptag))?;
    open.with_mut(|b| {
        b.iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = (i * 7) as u8)
    });
    // 256 KiB: on shm a shared region, read and written by the single-copy path
    let big = nic.register_mem(256 << 10, MemAttributes::rdma(ptag))?;
    big.with_mut(|b| {
        b.iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = (i * 13 + 5) as u8)
    });
    let msg = nic.register_mem(12, MemAttributes::local(ptag))?;
    msg.write(
        0,
        &[
            open.handle().raw().to_le_bytes(),
            closed.handle().raw().to_le_bytes(),
            big.handle().raw().to_le_bytes(),
        ]
        .concat(),
    )?;
    vi.post_send(Descriptor::send(vec![Segment::new(msg.handle(), 0, 12)]))?;
    vi.send_wait(T)?.ok()?;
    // The client finishes by sending a message with the checksum of the open region it
    // expects; we reply with our actual checksum and never touched `closed`.
    let ck = nic.register_mem(16, MemAttributes::local(ptag))?;
    vi.post_recv(Descriptor::recv(vec![Segment::new(ck.handle(), 0, 8)]))?;
    let c = loop {
        match vi.recv_wait(Some(Duration::from_millis(50))) {
            Ok(c) => break c,
            Err(ViaError::Timeout) => continue,
            Err(e) if finished(&e) => return Ok(()),
            Err(e) => return Err(e),
        }
    };
    if c.status != CompletionStatus::Success {
        return Ok(());
    }
    let sum = |r: &MemRegion| r.with(|b| b.iter().map(|&x| u64::from(x)).sum::<u64>());
    ck.write(0, &sum(&open).to_le_bytes())?;
    ck.write(8, &sum(&closed).to_le_bytes())?;
    vi.post_send(Descriptor::send(vec![Segment::new(ck.handle(), 0, 16)]))?;
    vi.send_wait(T)?.ok()?;
    let _ = vi.recv_wait(Some(Duration::from_secs(5)));
    Ok(())
}

/// The far side of one VIA error case (`tests/multiprocess.rs`,
/// `every_error_case_between_two_processes`): see the role table.
fn errors(nic: &Nic, ptag: Ptag, vi: &Vi, rel: Reliability, case: &str) -> Result<()> {
    let fail = |what: String| Err(ViaError::InvalidParameter(format!("errors {case}: {what}")));
    let target = nic.register_mem(4096, MemAttributes::rdma(ptag))?;
    target.with_mut(|b| b.fill(0xee));
    let small = nic.register_mem(16, MemAttributes::local(ptag))?;
    small.with_mut(|b| b.fill(0xee));
    // The short receive is posted before the handle goes out: the client sends only once it
    // has the handle, so its message cannot arrive before the receive.
    match case {
        "length" => vi.post_recv(Descriptor::recv(vec![Segment::new(small.handle(), 0, 16)]))?,
        "nodesc" | "rdma" => {}
        _ => return fail("unknown case".into()),
    }
    let msg = nic.register_mem(4, MemAttributes::local(ptag))?;
    msg.write(0, &target.handle().raw().to_le_bytes())?;
    vi.post_send(Descriptor::send(vec![Segment::new(msg.handle(), 0, 4)]))?;
    vi.send_wait(T)?.ok()?;
    if case == "length" {
        let c = vi.recv_wait(T)?;
        if c.status != CompletionStatus::LengthError {
            return fail(format!("receive completed with {:?}", c.status));
        }
    }
    // Reliable VIs break on every one of these errors; an unreliable one stays up and the
    // client ends it by disconnecting.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let state = loop {
        vi.progress();
        let st = vi.query().state;
        if st != ViState::Connected || std::time::Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let want = if rel.is_reliable() {
        ViState::Error
    } else {
        ViState::Idle
    };
    if state != want {
        return fail(format!("VI ended {state:?}, expected {want:?}"));
    }
    if !small.with(|b| b.iter().all(|&x| x == 0xee)) {
        return fail("bytes written into the too-short receive".into());
    }
    if !target.with(|b| b.iter().all(|&x| x == 0xee)) {
        return fail("refused RDMA wrote into the region".into());
    }
    Ok(())
}
