//! Where a waiting server can be found: the connection manager's table of
//! (discriminator → NIC address), shared by the processes of a host through a directory.
//!
//! VIA routes a connection request to whichever process waits with a matching
//! discriminator (`VipConnectWait`); icn-via's NICs each listen at their own address. While a
//! `VipConnectWait` (or the waiting side of a `VipConnectPeerRequest`) runs, its NIC's
//! address is published in a file named after the provider, the host address (tcp) and the
//! discriminator, in `ICN_VIPL_RENDEZVOUS` (default `/tmp/icn-vipl-<uid>`). A
//! `VipConnectRequest` looks the file up, retrying until its timeout, so a client may start
//! before its server. Files are written atomically (temporary file + rename) and removed
//! when the wait ends; a stale one (a killed server) only makes a dial fail, and the client
//! retries. For tcp between hosts the directory must be shared (e.g. NFS).

use std::io::Write;
use std::net::Ipv4Addr;
use std::path::PathBuf;

use crate::device::Provider;

/// The directory of the table.
pub fn dir() -> PathBuf {
    match std::env::var_os("ICN_VIPL_RENDEZVOUS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        // SAFETY: `getuid` has no preconditions and cannot fail.
        _ => PathBuf::from(format!("/tmp/icn-vipl-{}", unsafe { libc::getuid() })),
    }
}

/// The file name of an entry: `shm-<disc hex>` or `tcp-<a.b.c.d>-<disc hex>`. shm entries
/// leave the host out: every shm NIC is on this host, whichever address names it.
pub fn key(provider: Provider, host: Ipv4Addr, disc: &[u8]) -> String {
    let hex: String = disc.iter().map(|b| format!("{b:02x}")).collect();
    match provider {
        Provider::Shm => format!("shm-{hex}"),
        Provider::Tcp => format!("tcp-{host}-{hex}"),
    }
}

/// An entry, removed when dropped.
pub struct Entry {
    path: PathBuf,
}

impl Drop for Entry {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Publishes `url` under `key`.
pub fn publish(key: &str, url: &str) -> std::io::Result<Entry> {
    let d = dir();
    std::fs::create_dir_all(&d)?;
    let path = d.join(key);
    let tmp = d.join(format!(".{key}.{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(url.as_bytes())?;
    }
    std::fs::rename(&tmp, &path)?;
    Ok(Entry { path })
}

/// The URL published under `key`, if any.
pub fn lookup(key: &str) -> Option<String> {
    let s = std::fs::read_to_string(dir().join(key)).ok()?;
    let s = s.trim();
    (!s.is_empty() && s.len() < 256).then(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_provider_host_and_discriminator() {
        let h = Ipv4Addr::new(10, 1, 2, 3);
        assert_eq!(key(Provider::Shm, h, &[0, 0xab]), "shm-00ab");
        assert_eq!(
            key(Provider::Shm, Ipv4Addr::LOCALHOST, &[0, 0xab]),
            "shm-00ab"
        );
        assert_eq!(key(Provider::Tcp, h, &[1]), "tcp-10.1.2.3-01");
        assert_eq!(key(Provider::Tcp, h, &[]), "tcp-10.1.2.3-");
    }

    #[test]
    fn an_entry_is_found_while_it_lives() {
        let k = format!("test-{}-entry", std::process::id());
        assert_eq!(lookup(&k), None);
        let e = publish(&k, "shm://x").unwrap();
        assert_eq!(lookup(&k).as_deref(), Some("shm://x"));
        drop(e);
        assert_eq!(lookup(&k), None);
    }
}
