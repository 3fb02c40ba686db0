//! The connection-management messages this provider exchanges on a fresh VI (sans-IO).
//!
//! libfabric's connection manager carries data both ways (`fi_connect`'s and `fi_accept`'s
//! or `fi_reject`'s `param`) and names the client in the server's `FI_CONNREQ`; icn-via's
//! (VIA's) carries neither. So the VI is connected at once (icn-via's own handshake: the
//! tcp job key or the shm uid check comes first), and the first message each way is one of
//! these: the client's `Request` (its listening address and its data), then the server's
//! `Accept` or `Reject` (its data). Both sides post a receive for it before anything else,
//! so it can never land in an application's buffer.

use std::net::SocketAddrV4;

use crate::addr::{self, SOCKADDR_IN_LEN};

/// Most connection data an application may pass (`FI_OPT_CM_DATA_SIZE`).
pub const MAX_CM_DATA: usize = 256;
/// Bytes of a message's fixed part: magic, kind, three zero bytes, the address, the length.
const FIXED: usize = 4 + 4 + SOCKADDR_IN_LEN + 4;
/// The largest message: the receive buffer both sides post for it.
pub const MAX_MSG: usize = FIXED + MAX_CM_DATA;
const MAGIC: [u8; 4] = *b"IOFI";

/// What a connection-management message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Client to server: connect me; `addr` is where I listen.
    Request {
        addr: SocketAddrV4,
    },
    Accept,
    Reject,
}

/// One message: its kind and the application's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    pub kind: Kind,
    pub data: Vec<u8>,
}

impl Msg {
    /// The message's bytes; `Err` if the data is longer than [`MAX_CM_DATA`].
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        if self.data.len() > MAX_CM_DATA {
            return Err(format!(
                "connection data of {} bytes (at most {MAX_CM_DATA})",
                self.data.len()
            ));
        }
        let (code, a) = match &self.kind {
            Kind::Request { addr } => (1u8, addr::encode(*addr)),
            Kind::Accept => (2, [0; SOCKADDR_IN_LEN]),
            Kind::Reject => (3, [0; SOCKADDR_IN_LEN]),
        };
        let mut b = Vec::with_capacity(FIXED + self.data.len());
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&[code, 0, 0, 0]);
        b.extend_from_slice(&a);
        b.extend_from_slice(&(self.data.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.data);
        Ok(b)
    }

    /// Parses what the peer sent; every field is checked (the peer is not trusted).
    pub fn decode(b: &[u8]) -> Result<Msg, String> {
        if b.len() < FIXED || b[0..4] != MAGIC {
            return Err(format!(
                "not a connection message ({} bytes, magic {:02x?})",
                b.len(),
                &b[..b.len().min(4)]
            ));
        }
        let len = u32::from_le_bytes(b[FIXED - 4..FIXED].try_into().expect("4 bytes")) as usize;
        if len > MAX_CM_DATA || b.len() != FIXED + len || b[5..8] != [0, 0, 0] {
            return Err(format!(
                "malformed connection message: {} bytes, data length {len}",
                b.len()
            ));
        }
        let kind = match b[4] {
            1 => Kind::Request {
                addr: addr::decode(&b[8..8 + SOCKADDR_IN_LEN])
                    .ok_or("connection request without an IPv4 address")?,
            },
            2 => Kind::Accept,
            3 => Kind::Reject,
            k => return Err(format!("unknown connection message kind {k}")),
        };
        Ok(Msg {
            kind,
            data: b[FIXED..].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn every_kind_round_trips_with_data_of_any_allowed_length() {
        let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 5000);
        for kind in [Kind::Request { addr }, Kind::Accept, Kind::Reject] {
            for len in [0, 1, 31, MAX_CM_DATA] {
                let m = Msg {
                    kind: kind.clone(),
                    data: (0..len).map(|i| i as u8).collect(),
                };
                let b = m.encode().unwrap();
                assert_eq!(b.len(), FIXED + len);
                assert!(b.len() <= MAX_MSG);
                assert_eq!(Msg::decode(&b), Ok(m));
            }
        }
    }

    #[test]
    fn too_much_data_and_damaged_messages_are_refused() {
        let m = Msg {
            kind: Kind::Accept,
            data: vec![0; MAX_CM_DATA + 1],
        };
        assert!(m.encode().unwrap_err().contains("257"));
        let good = Msg {
            kind: Kind::Reject,
            data: vec![7; 8],
        }
        .encode()
        .unwrap();
        assert!(Msg::decode(&good[..good.len() - 1]).is_err()); // length disagrees
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(Msg::decode(&bad).is_err());
        let mut bad = good.clone();
        bad[4] = 9;
        assert!(Msg::decode(&bad).unwrap_err().contains("kind 9"));
        let mut bad = good.clone();
        bad[FIXED - 4..FIXED].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Msg::decode(&bad).is_err());
        assert!(Msg::decode(&[]).is_err());
    }
}
