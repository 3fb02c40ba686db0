//! Device names (`VipOpenNic`) and the providers behind them.
//!
//! | device name | provider | host address (`LocalNicAddress`) |
//! |---|---|---|
//! | `/dev/via_lo` (and `/etc/via_lo`, the form MP_Lite's `via.c` writes) | shm | 127.0.0.1 |
//! | `/dev/via_IFACE` (`/dev/via_eth0`, ...) | tcp, listening on loopback (see below) | IFACE's IPv4 address |
//!
//! A tcp NIC listens on 127.0.0.1 unless the user names where with `ICN_VIPL_TCP_LISTEN`:
//! `device` (the device's interface address: other hosts can connect), or an IPv4 address.
//! Listening beyond loopback needs a job key the user set (`ICN_VIA_JOB_KEY` or
//! `ICN_VIA_JOB_KEY_FILE`, see icn-via's `auth`): every connection proves it before anything
//! else is read. The device name comes from the program (MP_Lite always opens
//! `/dev/via_eth0`), so it alone never opens the machine to the network.
//!
//! The environment variable `ICN_VIPL_PROVIDER=shm|tcp` sets the provider of every device
//! (the host address stays the device's): a program that names its device after the
//! Ethernet interface (as MP_Lite does) runs over shared memory with `ICN_VIPL_PROVIDER=shm`,
//! and the loopback device runs over TCP with `ICN_VIPL_PROVIDER=tcp`. An shm NIC only
//! reaches the processes of its own host.

use std::net::Ipv4Addr;

/// icn-via's two providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Shm,
    Tcp,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::Shm => "shm",
            Provider::Tcp => "tcp",
        }
    }
}

/// What a device name resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub provider: Provider,
    pub host: Ipv4Addr,
}

/// Resolves `name` with the override `forced` (the value of `ICN_VIPL_PROVIDER`, if set)
/// and `iface_addr` (an interface's IPv4 address). Errors say what is allowed.
pub fn resolve(
    name: &str,
    forced: Option<&str>,
    iface_addr: impl Fn(&str) -> Option<Ipv4Addr>,
) -> Result<Device, String> {
    let iface = name
        .strip_prefix("/dev/via_")
        .or_else(|| name.strip_prefix("/etc/via_"))
        .filter(|i| !i.is_empty() && i.len() <= 15 && !i.contains('/'))
        .ok_or_else(|| format!("device {name:?}: expected /dev/via_lo or /dev/via_IFACE"))?;
    let (mut provider, host) = if iface == "lo" {
        (Provider::Shm, Ipv4Addr::LOCALHOST)
    } else {
        let host = iface_addr(iface)
            .ok_or_else(|| format!("device {name:?}: interface {iface} has no IPv4 address"))?;
        (Provider::Tcp, host)
    };
    match forced {
        None | Some("") => {}
        Some("shm") => provider = Provider::Shm,
        Some("tcp") => provider = Provider::Tcp,
        Some(other) => {
            return Err(format!(
                "ICN_VIPL_PROVIDER must be shm or tcp, got {other:?}"
            ));
        }
    }
    Ok(Device { provider, host })
}

/// Where a tcp NIC of device `dev` listens, by `ICN_VIPL_TCP_LISTEN` (`choice`; see the
/// module doc). Errors say what is allowed.
pub fn listen_address(dev: &Device, choice: Option<&str>) -> Result<Ipv4Addr, String> {
    match choice {
        None | Some("") | Some("loopback") => Ok(Ipv4Addr::LOCALHOST),
        Some("device") => Ok(dev.host),
        Some(a) => a.parse().map_err(|_| {
            format!("ICN_VIPL_TCP_LISTEN must be loopback, device or an IPv4 address, got {a:?}")
        }),
    }
}

/// The IPv4 address of interface `name` (`getifaddrs`).
pub fn interface_address(name: &str) -> Option<Ipv4Addr> {
    let mut found = None;
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `getifaddrs` fills `list` with a linked list it allocates, freed below with
    // `freeifaddrs`; on failure it returns -1 and we return before touching `list`.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut p = list;
    while !p.is_null() {
        // SAFETY: `p` is a node of the list `getifaddrs` returned, not yet freed; its
        // `ifa_name` is a NUL-terminated string and `ifa_addr` is null or points to a
        // `sockaddr` whose family says its real type (checked before the cast).
        unsafe {
            let ifa = &*p;
            let n = std::ffi::CStr::from_ptr(ifa.ifa_name);
            if n.to_bytes() == name.as_bytes()
                && !ifa.ifa_addr.is_null()
                && i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET
            {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                found = Some(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)));
                break;
            }
            p = ifa.ifa_next;
        }
    }
    // SAFETY: `list` came from a successful `getifaddrs` and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eth0(i: &str) -> Option<Ipv4Addr> {
        (i == "eth0").then_some(Ipv4Addr::new(10, 0, 0, 7))
    }

    #[test]
    fn every_row_of_the_table_and_the_override() {
        let lo = resolve("/dev/via_lo", None, eth0).unwrap();
        assert_eq!((lo.provider, lo.host), (Provider::Shm, Ipv4Addr::LOCALHOST));
        assert_eq!(resolve("/etc/via_lo", None, eth0).unwrap(), lo);
        let e = resolve("/dev/via_eth0", None, eth0).unwrap();
        assert_eq!(
            (e.provider, e.host),
            (Provider::Tcp, Ipv4Addr::new(10, 0, 0, 7))
        );
        assert_eq!(
            resolve("/dev/via_eth0", Some("shm"), eth0)
                .unwrap()
                .provider,
            Provider::Shm
        );
        assert_eq!(
            resolve("/dev/via_lo", Some("tcp"), eth0).unwrap(),
            Device {
                provider: Provider::Tcp,
                host: Ipv4Addr::LOCALHOST
            }
        );
        for bad in [
            "",
            "/dev/via_",
            "/dev/eth0",
            "via_lo",
            "/dev/via_a/b",
            "/dev/via_eth1",
        ] {
            let e = resolve(bad, None, eth0).unwrap_err();
            assert!(
                e.contains("device") || e.contains("interface"),
                "{bad}: {e}"
            );
        }
        let e = resolve("/dev/via_lo", Some("udp"), eth0).unwrap_err();
        assert!(e.contains("shm or tcp"), "{e}");
    }

    #[test]
    fn tcp_listens_on_loopback_unless_the_user_names_an_address() {
        let dev = resolve("/dev/via_eth0", None, eth0).unwrap();
        assert_eq!(listen_address(&dev, None), Ok(Ipv4Addr::LOCALHOST));
        assert_eq!(
            listen_address(&dev, Some("loopback")),
            Ok(Ipv4Addr::LOCALHOST)
        );
        assert_eq!(
            listen_address(&dev, Some("device")),
            Ok(Ipv4Addr::new(10, 0, 0, 7))
        );
        assert_eq!(
            listen_address(&dev, Some("10.9.8.7")),
            Ok(Ipv4Addr::new(10, 9, 8, 7))
        );
        let e = listen_address(&dev, Some("eth0")).unwrap_err();
        assert!(e.contains("ICN_VIPL_TCP_LISTEN"), "{e}");
    }

    #[test]
    fn the_loopback_interface_has_its_address() {
        assert_eq!(interface_address("lo"), Some(Ipv4Addr::LOCALHOST));
        assert_eq!(interface_address("no-such-interface"), None);
    }
}
