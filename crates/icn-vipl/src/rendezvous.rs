//! Where a waiting server can be found: the connection manager's table of
//! (discriminator → NIC address), shared by the processes of a host through a directory.
//!
//! VIA routes a connection request to whichever process waits with a matching
//! discriminator (`VipConnectWait`); icn-via's NICs each listen at their own address. While a
//! `VipConnectWait` (or the waiting side of a `VipConnectPeerRequest`) runs, its NIC's
//! address is published in a file named after the provider, the host address (tcp) and the
//! discriminator, in `ICN_VIPL_RENDEZVOUS` (default: `vipl` in icn-via's private directory,
//! `$XDG_RUNTIME_DIR/icn-via/vipl` or `<temp dir>/icn-via-<uid>/vipl`). A
//! `VipConnectRequest` looks the file up, retrying until its timeout, so a client may start
//! before its server. The table is private: the directory is created 0700 and refused
//! unless it is ours, not a link, and closed to group and others; entries are created 0600
//! with `O_EXCL | O_NOFOLLOW` and renamed into place, and read with `O_NOFOLLOW` after their
//! owner and mode are checked (see `icn_via::private_dir`), so another user can neither
//! make us write through a planted link nor publish an endpoint we would connect to. Entries
//! are removed when the wait ends; a stale one (a killed server) only makes a dial fail, and
//! the client retries. For tcp between hosts the directory must be shared (e.g. NFS, same
//! uid on every host).

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::device::Provider;

/// The directory of the table, created if missing and checked (errors name the path and
/// what is wrong with it).
pub fn dir() -> std::io::Result<PathBuf> {
    let d = match std::env::var_os("ICN_VIPL_RENDEZVOUS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => icn_via::private_dir::dir()?.join("vipl"),
    };
    icn_via::private_dir::ensure(&d)?;
    Ok(d)
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
    publish_in(&dir()?, key, url)
}

/// Publishes `url` under `key` in the table at `d` (checked first: see the module doc).
pub fn publish_in(d: &std::path::Path, key: &str, url: &str) -> std::io::Result<Entry> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    icn_via::private_dir::ensure(d)?;
    let path = d.join(key);
    let tmp = d.join(format!(
        ".{key}.{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    // A leftover of a killed process that had our pid: ours to remove (the directory is).
    let _ = std::fs::remove_file(&tmp);
    icn_via::private_dir::create_file(&tmp, url.as_bytes())?;
    std::fs::rename(&tmp, &path)?;
    Ok(Entry { path })
}

/// The URL published under `key`, if any (an entry that is not ours, not private, or a link
/// is ignored).
pub fn lookup(key: &str) -> Option<String> {
    let b = icn_via::private_dir::read_file(&dir().ok()?.join(key), 255).ok()?;
    let s = String::from_utf8(b).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
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

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vipl-rdv-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_file(&d);
        d
    }

    /// A planted table (another user's directory, a world-writable one, a symbolic link to
    /// one) is refused, and nothing is written through it.
    #[test]
    fn a_planted_table_is_refused_and_nothing_is_written_through_it() {
        use std::os::unix::fs::PermissionsExt;
        let victim = scratch("victim-file");
        std::fs::write(&victim, b"precious").unwrap();
        // world-writable, with the entry's name already a link to the victim file
        let open = scratch("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::os::unix::fs::symlink(&victim, open.join("shm-01")).unwrap();
        let e = publish_in(&open, "shm-01", "shm://x")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("0777") && e.contains(&open.display().to_string()),
            "{e}"
        );
        // a link to a private directory of ours
        let real = scratch("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = scratch("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = publish_in(&link, "shm-01", "shm://x")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        // another user's directory (root can make one: the planting of issue 33)
        if icn_via::private_dir::uid() == 0 {
            let theirs = scratch("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let e = publish_in(&theirs, "shm-01", "shm://x")
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains("belongs to uid 65534"), "{e}");
            assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
            std::fs::remove_dir_all(&theirs).unwrap();
        } else {
            eprintln!("SKIPPED the another-user's-directory part: needs root to chown");
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
        for p in [&open, &real] {
            std::fs::remove_dir_all(p).unwrap();
        }
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_file(&victim).unwrap();
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
