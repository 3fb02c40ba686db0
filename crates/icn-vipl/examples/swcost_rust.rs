//! The Rust twin of `bench/swcost.c`: the same loop over icn-via directly (both VIs of one
//! shm connection driven by one thread, buffers registered by address as libvipl registers
//! them; beyond 64 KiB B answers from a second thread, as there), so the difference of the
//! two under callgrind is the C layer's own work (`bench/overhead.sh`).
//!
//! `cargo run --release -p icn-vipl --example swcost_rust -- MESSAGES SIZE`
use std::time::Duration;

use icn_via::*;

const T: Option<Duration> = Some(Duration::from_secs(30));

struct End {
    vi: Vi,
    h: MemHandle,
    base: u64,
}

fn main() -> Result<()> {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u64>().unwrap_or(0));
    let n = args.next().unwrap_or(100_000);
    let size = args.next().unwrap_or(8) as u32;
    let url = format!("shm:///icn-vipl-swcost/{}", std::process::id());
    let server = Nic::open(&url)?;
    let client = Nic::open("shm://")?;
    let ptag_s = server.create_ptag();
    let ptag_c = client.create_ptag();
    // Like a C program's buffers: the caller's memory, live for the whole run.
    let mut mem_a = vec![3u8; 2 * size as usize + 64];
    let mut mem_b = vec![3u8; 2 * size as usize + 64];
    let end = |nic: &Nic, ptag: Ptag, mem: &mut Vec<u8>| -> Result<End> {
        // SAFETY: `mem` outlives the NIC's use of it (both live to the end of `main`, the
        // NICs are dropped first, in reverse declaration order) and no reference to it is
        // held while the library runs.
        let h =
            unsafe { nic.register_addr(mem.as_mut_ptr(), mem.len(), MemAttributes::local(ptag))? };
        let vi = nic.create_vi(
            ViAttributes::new(ptag, Reliability::ReliableDelivery),
            None,
            None,
        )?;
        Ok(End {
            vi,
            h,
            base: mem.as_ptr() as u64,
        })
    };
    let a = end(&client, ptag_c, &mut mem_a)?;
    let b = end(&server, ptag_s, &mut mem_b)?;
    std::thread::scope(|s| -> Result<()> {
        let t = s.spawn(|| server.connect_wait(b"swcost", T)?.accept(&b.vi));
        client.connect_request(&a.vi, &url, b"swcost", T)?;
        t.join().unwrap_or(Err(ViaError::Timeout))
    })?;
    let send = |e: &End| Segment::new(e.h, e.base, size);
    let recv = |e: &End| Segment::new(e.h, e.base + u64::from(size) + 64, size);
    a.vi.post_recv(Descriptor::recv([recv(&a)]))?;
    b.vi.post_recv(Descriptor::recv([recv(&b)]))?;
    let reap = |e: &End| -> Result<()> {
        while let Some(c) = e.vi.send_done() {
            c.ok()?;
        }
        Ok(())
    };
    if size > 65536 {
        // A message larger than the shm ring needs its reader running while it is written.
        std::thread::scope(|s| -> Result<()> {
            let t = s.spawn(|| -> Result<()> {
                for i in 0..n {
                    b.vi.recv_wait(T)?.ok()?;
                    b.vi.post_recv(Descriptor::recv([recv(&b)]))?;
                    b.vi.post_send(Descriptor::send([send(&b)]))?;
                    if i % 32 == 31 {
                        reap(&b)?;
                    }
                }
                Ok(())
            });
            for i in 0..n {
                a.vi.post_send(Descriptor::send([send(&a)]))?;
                a.vi.recv_wait(T)?.ok()?;
                a.vi.post_recv(Descriptor::recv([recv(&a)]))?;
                if i % 32 == 31 {
                    reap(&a)?;
                }
            }
            t.join().unwrap_or(Err(ViaError::Timeout))
        })?;
    } else {
        for i in 0..n {
            a.vi.post_send(Descriptor::send([send(&a)]))?;
            b.vi.recv_wait(T)?.ok()?;
            b.vi.post_recv(Descriptor::recv([recv(&b)]))?;
            b.vi.post_send(Descriptor::send([send(&b)]))?;
            a.vi.recv_wait(T)?.ok()?;
            a.vi.post_recv(Descriptor::recv([recv(&a)]))?;
            if i % 32 == 31 {
                reap(&a)?;
                reap(&b)?;
            }
        }
    }
    println!("swcost_rust: {n} round trips of {size} B");
    drop((a, b, server, client));
    Ok(())
}
