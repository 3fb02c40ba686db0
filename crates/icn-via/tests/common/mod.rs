//! Helpers shared by the integration tests: connected VI pairs on loopback.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use icn_via::*;

pub const T: Option<Duration> = Some(Duration::from_secs(10));

pub struct Side {
    pub nic: Nic,
    pub ptag: Ptag,
    pub vi: Vi,
}

impl Side {
    pub fn region(&self, len: usize, rdma: bool) -> MemRegion {
        let a = if rdma {
            MemAttributes::rdma(self.ptag)
        } else {
            MemAttributes::local(self.ptag)
        };
        self.nic.register_mem(len, a).unwrap()
    }
}

/// A listening URL unique to this test process and call.
pub fn server_url(provider: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    match provider {
        "tcp" => "tcp://127.0.0.1:0".into(),
        _ => format!(
            "shm:///icnlab-test/{}/{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ),
    }
}

pub fn client_url(provider: &str) -> String {
    format!("{provider}://")
}

/// A connected (client, server) pair with the given attributes on each side.
pub fn pair_with(
    provider: &str,
    client: impl Fn(Ptag) -> ViAttributes,
    server: impl Fn(Ptag) -> ViAttributes + Send + 'static,
) -> (Side, Side) {
    let snic = Nic::open(&server_url(provider)).unwrap();
    let addr = snic.address().to_string();
    let srv = std::thread::spawn(move || {
        let ptag = snic.create_ptag();
        let vi = snic.create_vi(server(ptag), None, None).unwrap();
        let req = snic.connect_wait(b"test", T).unwrap();
        req.accept(&vi).unwrap();
        Side {
            nic: snic,
            ptag,
            vi,
        }
    });
    let cnic = Nic::open(&client_url(provider)).unwrap();
    let ptag = cnic.create_ptag();
    let vi = cnic.create_vi(client(ptag), None, None).unwrap();
    cnic.connect_request(&vi, &addr, b"test", T).unwrap();
    (
        Side {
            nic: cnic,
            ptag,
            vi,
        },
        srv.join().unwrap(),
    )
}

pub fn pair(provider: &str, rel: Reliability) -> (Side, Side) {
    pair_with(
        provider,
        move |p| ViAttributes::new(p, rel),
        move |p| ViAttributes::new(p, rel),
    )
}

/// Deterministic test pattern: byte i of message `m`.
pub fn pattern(m: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u64)
                .wrapping_mul(31)
                .wrapping_add(m.wrapping_mul(7919)) as u8
        })
        .collect()
}
