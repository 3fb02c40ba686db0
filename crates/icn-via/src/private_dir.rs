//! The user's private directory: where shm NICs listen (a filesystem Unix socket each), where
//! the per-user job key lives ([`crate::auth`]), and where libvipl publishes waiting servers.
//! Nothing in it is reachable by another user, and nothing another user planted is trusted.
//!
//! | which directory | when |
//! |---|---|
//! | `$ICN_VIA_DIR` | set (the user's choice; checked like the others) |
//! | `$XDG_RUNTIME_DIR/icn-via` | `XDG_RUNTIME_DIR` set, a directory of ours that no one else may write |
//! | `<temp dir>/icn-via-<uid>` | otherwise (`$TMPDIR`, else `/tmp`) |
//!
//! The directory is created with `mkdir(…, 0700)` (its parent must exist: nothing is created
//! along a path another user may have prepared), then checked with `lstat`, whoever created
//! it: not a symbolic link, a directory, owned by us, no permission bit for group or others
//! (with an allow-list, [`allowed_uids`], group and others may search and read it, never
//! write). A directory that fails is refused, with an error naming the path and what is wrong:
//! it is never repaired, since a directory another user owns cannot be made safe.
//!
//! Files are created with `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`, mode 0600 (never
//! through a link, never an existing file), and read with `O_NOFOLLOW`, after checking their
//! owner and mode on the open descriptor.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Our real user id.
pub fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// Users whose processes may connect to ours besides ourselves: `ICN_VIA_ALLOW_UIDS`, a
/// comma-separated list of numeric uids (empty or unset: nobody else). A malformed entry is
/// an error naming it.
pub fn allowed_uids() -> io::Result<Vec<u32>> {
    let Ok(s) = std::env::var("ICN_VIA_ALLOW_UIDS") else {
        return Ok(Vec::new());
    };
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<u32>().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("ICN_VIA_ALLOW_UIDS: {t:?} is not a numeric uid"),
                )
            })
        })
        .collect()
}

/// True if processes of `peer` may be our peers: ourselves, or a user on the allow-list.
pub fn peer_allowed(peer: u32) -> io::Result<bool> {
    Ok(peer == uid() || allowed_uids()?.contains(&peer))
}

fn refused(path: &Path, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{}: {what}", path.display()),
    )
}

/// The private directory (see the module table), created if missing and checked.
pub fn dir() -> io::Result<PathBuf> {
    let d = match std::env::var_os("ICN_VIA_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => default_location(),
    };
    ensure(&d)?;
    Ok(d)
}

/// The directory a client looks for a NIC's socket in (see [`dir`]), not created: it must
/// exist, and belong to us or to a user on the allow-list (whose NIC we mean to reach).
pub fn dir_to_dial() -> io::Result<PathBuf> {
    let d = match std::env::var_os("ICN_VIA_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => default_location(),
    };
    let mut owners = allowed_uids()?;
    owners.push(uid());
    match std::fs::symlink_metadata(&d) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{}: no such directory (no NIC listens there yet)",
                d.display()
            ),
        )),
        _ => check_dir(&d, &owners).map(|()| d),
    }
}

fn default_location() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR").filter(|x| !x.is_empty()) {
        let x = PathBuf::from(x);
        let ours = std::fs::symlink_metadata(&x)
            .is_ok_and(|m| m.is_dir() && m.uid() == uid() && m.mode() & 0o022 == 0);
        if ours {
            return x.join("icn-via");
        }
    }
    std::env::temp_dir().join(format!("icn-via-{}", uid()))
}

/// Creates `d` (mode 0700, parent not created) if it does not exist, then checks it: see the
/// module doc. Errors name the path and what is wrong.
pub fn ensure(d: &Path) -> io::Result<()> {
    match DirBuilder::new().mode(0o700).create(d) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(refused(d, format_args!("cannot create the directory: {e}"))),
    }
    check_dir(d, &[uid()])
}

/// Checks that `d` is a directory (not a link to one) owned by one of `owners`, that no one
/// but its owner may write it, and, unless an allow-list is set, read or search it.
pub fn check_dir(d: &Path, owners: &[u32]) -> io::Result<()> {
    let m = std::fs::symlink_metadata(d).map_err(|e| refused(d, e))?;
    if m.file_type().is_symlink() {
        return Err(refused(d, "is a symbolic link; refused"));
    }
    if !m.is_dir() {
        return Err(refused(d, "is not a directory; refused"));
    }
    if !owners.contains(&m.uid()) {
        return Err(refused(
            d,
            format_args!(
                "belongs to uid {}, not to us (uid {}); refused: another user may have \
                 planted it (remove it, or set ICN_VIA_DIR to a directory of ours)",
                m.uid(),
                uid()
            ),
        ));
    }
    let open_bits = if allowed_uids()?.is_empty() {
        0o077
    } else {
        0o022
    };
    if m.mode() & open_bits != 0 {
        return Err(refused(
            d,
            format_args!(
                "has mode {:04o}: group or others may {}; refused (chmod 700 it)",
                m.mode() & 0o7777,
                if m.mode() & 0o022 != 0 {
                    "write in it"
                } else {
                    "enter it"
                }
            ),
        ));
    }
    Ok(())
}

/// Creates `path` holding `bytes`: a new file (`O_EXCL`, never an existing one nor through a
/// link), mode 0600.
pub fn create_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| refused(path, format_args!("cannot create: {e}")))?;
    f.write_all(bytes)
}

/// Reads `path` if it is a regular file (not a link) of ours that no one else may read or
/// write; at most `max` bytes.
pub fn read_file(path: &Path, max: usize) -> io::Result<Vec<u8>> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                refused(path, "is a symbolic link; refused")
            } else {
                e
            }
        })?;
    check_file(path, &f)?;
    let mut out = Vec::new();
    f.take(max as u64 + 1).read_to_end(&mut out)?;
    if out.len() > max {
        return Err(refused(path, format_args!("longer than {max} bytes")));
    }
    Ok(out)
}

fn check_file(path: &Path, f: &File) -> io::Result<()> {
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(refused(path, "is not a regular file; refused"));
    }
    if m.uid() != uid() {
        return Err(refused(
            path,
            format_args!("belongs to uid {}, not to us; refused", m.uid()),
        ));
    }
    if m.mode() & 0o077 != 0 {
        return Err(refused(
            path,
            format_args!(
                "has mode {:04o}: group or others may read or write it; refused (chmod 600 it)",
                m.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}

/// A file name in the private directory for an endpoint `name` (any string of up to 90
/// bytes): bytes other than `[A-Za-z0-9_-]` (and a `.` not in first place) become `%XX`, so
/// distinct names give distinct files and none is `.`, `..` or holds a `/`. A name whose
/// socket path would exceed the 107 bytes a Unix socket address holds becomes `h-` and 32 hex
/// digits of its SHA-256.
pub fn endpoint_file(dir: &Path, name: &str) -> PathBuf {
    let mut f = String::new();
    for (i, b) in name.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0) {
            f.push(b as char);
        } else {
            f.push_str(&format!("%{b:02X}"));
        }
    }
    if f.is_empty() {
        f.push('%');
    }
    let p = dir.join(&f);
    if p.as_os_str().len() <= 107 {
        return p;
    }
    use sha2::Digest;
    let h = sha2::Sha256::digest(name.as_bytes());
    let hex: String = h[..16].iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("h-{hex}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("icn-via-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_new_directory_is_created_0700_and_passes() {
        let d = scratch("new");
        ensure(&d).unwrap();
        let m = std::fs::symlink_metadata(&d).unwrap();
        assert_eq!(m.mode() & 0o777, 0o700);
        ensure(&d).unwrap(); // existing and ours: fine
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn open_modes_symlinks_and_files_are_refused_by_name() {
        let d = scratch("open");
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = ensure(&d).unwrap_err().to_string();
        assert!(
            e.contains(&d.display().to_string()) && e.contains("0755"),
            "{e}"
        );
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = d.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let e = ensure(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let file = d.join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(
            ensure(&file)
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn files_are_created_exclusive_0600_never_through_a_link() {
        let d = scratch("files");
        ensure(&d).unwrap();
        let p = d.join("key");
        create_file(&p, b"secret").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
        assert_eq!(read_file(&p, 64).unwrap(), b"secret");
        // an existing file is never overwritten
        assert!(create_file(&p, b"other").is_err());
        assert_eq!(read_file(&p, 64).unwrap(), b"secret");
        // a link is neither followed to create nor to read
        let target = d.join("target");
        std::fs::write(&target, b"untouched").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_file(&link, b"evil").is_err());
        assert!(
            read_file(&link, 64)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"untouched");
        // a file others may read is refused
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            read_file(&target, 64)
                .unwrap_err()
                .to_string()
                .contains("0644")
        );
        assert!(read_file(&p, 3).unwrap_err().to_string().contains("longer"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn endpoint_names_map_to_distinct_safe_file_names() {
        let d = Path::new("/run/x");
        assert_eq!(endpoint_file(d, "a/b"), Path::new("/run/x/a%2Fb"));
        assert_eq!(endpoint_file(d, "a%2Fb"), Path::new("/run/x/a%252Fb"));
        assert_eq!(endpoint_file(d, ".."), Path::new("/run/x/%2E."));
        assert_eq!(endpoint_file(d, ""), Path::new("/run/x/%"));
        // 90 bytes fit as they are; 40 slashes escape to 120 and are hashed
        assert_eq!(endpoint_file(d, &"x".repeat(90)).as_os_str().len(), 7 + 90);
        let long = endpoint_file(d, &"/".repeat(40));
        assert!(long.as_os_str().len() <= 107, "{long:?}");
        assert!(
            long.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("h-")
        );
        assert_ne!(long, endpoint_file(d, &"/".repeat(41)));
    }
}
