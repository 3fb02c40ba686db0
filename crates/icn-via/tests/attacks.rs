//! Attacks on a shared machine (issue 33): what another local user, or anyone who can reach a
//! tcp port, can do to a NIC. Nothing: another user's connection, injected frames, RDMA reads
//! and writes are refused on shm and tcp; a planted private directory or symbolic link is
//! refused and nothing is written through it; junk and silent connections neither stall
//! `connect_wait` past its timeout nor grow its descriptors or queues.
//!
//! The cross-user tests need root (they run the intruder, `icn-via-intruder`, as uid 65534
//! with `setpriv`); elsewhere they print `SKIPPED <test>: <reason>` and pass, unless
//! `ICN_VIA_REQUIRE_ROOT_TESTS=1` (CI, which runs as root), where a skip is a failure.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use icn_via::frame::{Header, Kind};
use icn_via::*;

const NOBODY: &str = "65534";

/// True if this test can run as root with a second uid; else prints why it skips (a failure
/// under `ICN_VIA_REQUIRE_ROOT_TESTS=1`).
fn root_or_skip(test: &str) -> bool {
    let why = if icn_via::private_dir::uid() != 0 {
        Some("needs root (runs the intruder as uid 65534 with setpriv)")
    } else if !Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        Some("needs setpriv (util-linux)")
    } else {
        None
    };
    match why {
        None => true,
        Some(why) => {
            assert!(
                std::env::var("ICN_VIA_REQUIRE_ROOT_TESTS").as_deref() != Ok("1"),
                "{test}: {why}, and ICN_VIA_REQUIRE_ROOT_TESTS=1 forbids skipping"
            );
            eprintln!("SKIPPED {test}: {why}");
            false
        }
    }
}

/// A scratch directory every user may enter (the intruder binary is copied there, since the
/// build directory may be closed to uid 65534), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("icn-via-attacks-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let exe = d.join("intruder");
        std::fs::copy(env!("CARGO_BIN_EXE_icn-via-intruder"), &exe).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        Scratch(d)
    }
    fn path(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
    /// The intruder (or the victim) with a clean environment plus `env`; as uid 65534 if
    /// `nobody`.
    fn run(&self, nobody: bool, args: &[&str], env: &[(&str, &Path)]) -> Command {
        let exe = self.path("intruder");
        let mut c = if nobody {
            let mut c = Command::new("setpriv");
            c.args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
            ])
            .arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        c.args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", "/tmp")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts the victim and reads its `READY <address> <handle>` line.
fn start_victim(
    s: &Scratch,
    url: &str,
    wait_ms: u64,
    extra: &[&str],
    env: &[(&str, &Path)],
) -> (Child, String, String) {
    let wait = wait_ms.to_string();
    let mut args = vec!["victim", url, &wait];
    args.extend_from_slice(extra);
    let mut child = s.run(false, &args, env).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(f.first(), Some(&"READY"), "victim said {line:?}");
    let (addr, handle) = (f[1].to_string(), f[2].to_string());
    child.stdout = Some(out.into_inner());
    (child, addr, handle)
}

fn output(c: Child) -> String {
    let o = c.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The victim's verdict: nobody connected, its secret and its posted receive untouched.
fn assert_victim_untouched(what: &str, victim: &str) {
    assert!(
        victim.contains("WAIT timed out"),
        "{what}: victim:\n{victim}"
    );
    assert!(
        victim.contains("SECRET intact"),
        "{what}: victim:\n{victim}"
    );
    assert!(
        victim.contains("RECV untouched"),
        "{what}: victim:\n{victim}"
    );
    assert!(!victim.contains("accepted"), "{what}: victim:\n{victim}");
}

#[test]
fn another_user_cannot_connect_inject_or_rdma_on_shm() {
    if !root_or_skip("another_user_cannot_connect_inject_or_rdma_on_shm") {
        return;
    }
    let s = Scratch::new("shm");
    let dir = s.path("victim-dir");
    let url = format!("shm://victim-{}", std::process::id());
    let (victim, addr, handle) = start_victim(&s, &url, 1500, &[], &[("ICN_VIA_DIR", &dir)]);
    // The intruder trusts root (so its own checks let it try) and aims at the victim's dir.
    let attack = s
        .run(
            true,
            &["attack", &addr, &handle],
            &[
                ("ICN_VIA_DIR", &dir),
                ("ICN_VIA_ALLOW_UIDS", Path::new("0")),
            ],
        )
        .output()
        .unwrap();
    let attack = String::from_utf8_lossy(&attack.stdout).to_string();
    let victim = output(victim);
    eprintln!("intruder (uid 65534):\n{attack}victim (root):\n{victim}");
    assert!(attack.contains("RAW refused"), "intruder:\n{attack}");
    assert!(attack.contains("Permission denied"), "intruder:\n{attack}");
    assert!(attack.contains("VIA refused"), "intruder:\n{attack}");
    assert!(!attack.contains("RDMA"), "intruder:\n{attack}");
    assert_victim_untouched("shm", &victim);
    // the private directory the victim made: root's, 0700
    let m = std::fs::symlink_metadata(&dir).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o700);
}

#[test]
fn another_users_process_is_refused_by_peercred_even_where_the_socket_is_reachable() {
    if !root_or_skip(
        "another_users_process_is_refused_by_peercred_even_where_the_socket_is_reachable",
    ) {
        return;
    }
    let s = Scratch::new("peercred");
    // A directory others may enter (allowed with an allow-list) and a socket made 0666: the
    // file system no longer stops uid 65534; SO_PEERCRED must.
    let dir = s.path("open-dir");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    let url = format!("shm://victim-{}", std::process::id());
    let (victim, addr, handle) = start_victim(
        &s,
        &url,
        1500,
        &["open"],
        &[
            ("ICN_VIA_DIR", &dir),
            ("ICN_VIA_ALLOW_UIDS", Path::new("4242")),
        ],
    );
    let attack = s
        .run(
            true,
            &["attack", &addr, &handle],
            &[
                ("ICN_VIA_DIR", &dir),
                ("ICN_VIA_ALLOW_UIDS", Path::new("0")),
            ],
        )
        .output()
        .unwrap();
    let attack = String::from_utf8_lossy(&attack.stdout).to_string();
    let victim = output(victim);
    eprintln!("intruder (uid 65534):\n{attack}victim (root):\n{victim}");
    assert!(
        attack.contains("RAW connected"),
        "the socket was reachable:\n{attack}"
    );
    assert!(attack.contains("VIA refused"), "intruder:\n{attack}");
    assert!(!attack.contains("RDMA"), "intruder:\n{attack}");
    assert!(
        victim.contains("refused a connection from uid 65534"),
        "victim:\n{victim}"
    );
    assert_victim_untouched("peercred", &victim);
}

#[test]
fn another_user_cannot_connect_inject_or_rdma_on_tcp() {
    if !root_or_skip("another_user_cannot_connect_inject_or_rdma_on_tcp") {
        return;
    }
    let s = Scratch::new("tcp");
    let dir = s.path("victim-dir");
    let (victim, addr, handle) =
        start_victim(&s, "tcp://127.0.0.1:0", 1500, &[], &[("ICN_VIA_DIR", &dir)]);
    let key = dir.join("job.key");
    let attack = s
        .run(true, &["attack", &addr, &handle], &[("VICTIM_KEY", &key)])
        .output()
        .unwrap();
    let attack = String::from_utf8_lossy(&attack.stdout).to_string();
    let victim = output(victim);
    eprintln!("intruder (uid 65534):\n{attack}victim (root):\n{victim}");
    assert!(attack.contains("KEY unreadable"), "intruder:\n{attack}");
    assert!(
        attack.contains("RAW closed by the victim"),
        "intruder:\n{attack}"
    );
    assert!(attack.contains("VIA refused"), "intruder:\n{attack}");
    assert!(attack.contains("job key"), "intruder:\n{attack}");
    assert!(!attack.contains("RDMA"), "intruder:\n{attack}");
    assert_victim_untouched("tcp", &victim);
}

#[test]
fn a_planted_private_directory_or_symlink_is_refused_and_nothing_is_written_through_it() {
    if !root_or_skip(
        "a_planted_private_directory_or_symlink_is_refused_and_nothing_is_written_through_it",
    ) {
        return;
    }
    let s = Scratch::new("plant");
    let precious = s.path("precious");
    std::fs::write(&precious, b"precious").unwrap();
    let rootdir = s.path("rootdir");
    std::fs::create_dir(&rootdir).unwrap();
    std::fs::set_permissions(&rootdir, std::fs::Permissions::from_mode(0o700)).unwrap();
    for (case, tmp) in [("dir", "plant-dir"), ("link", "plant-link")] {
        let tmp = s.path(tmp);
        std::fs::create_dir(&tmp).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
        // what the victim's default directory will be: <TMPDIR>/icn-via-0
        let target = tmp.join("icn-via-0");
        let planted = if case == "dir" {
            s.run(
                true,
                &[
                    "plant",
                    target.to_str().unwrap(),
                    precious.to_str().unwrap(),
                ],
                &[],
            )
        } else {
            s.run(
                true,
                &[
                    "plant-link",
                    target.to_str().unwrap(),
                    rootdir.to_str().unwrap(),
                ],
                &[],
            )
        }
        .output()
        .unwrap();
        assert!(
            String::from_utf8_lossy(&planted.stdout).contains("PLANTED"),
            "{case}: {planted:?}"
        );
        for url in ["tcp://127.0.0.1:0", "shm://planted"] {
            let victim = s
                .run(false, &["victim", url, "100"], &[("TMPDIR", &tmp)])
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&victim.stdout);
            eprintln!("planted {case}, victim {url}: {out}");
            assert!(out.contains("OPEN-FAILED"), "{case} {url}: {out}");
            assert!(
                out.contains(&target.display().to_string()),
                "{case} {url}: {out}"
            );
            let why = if case == "dir" {
                "belongs to uid 65534"
            } else {
                "symbolic link"
            };
            assert!(out.contains(why), "{case} {url}: {out}");
        }
    }
    assert_eq!(std::fs::read(&precious).unwrap(), b"precious");
    assert_eq!(std::fs::read_dir(&rootdir).unwrap().count(), 0);
}

/// Descriptors open in this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// A VIA `Connect` frame (discriminator `disc`), as a client without the job key sends it.
fn junk_connect(disc: &[u8]) -> Vec<u8> {
    let mut b = Header {
        imm: Reliability::ReliableDelivery.code(),
        handle: 1 << 20,
        len: disc.len() as u32,
        ..Header::new(Kind::Connect)
    }
    .encode()
    .to_vec();
    b.extend_from_slice(disc);
    b
}

#[test]
fn a_raw_client_without_the_job_key_is_dropped_before_any_frame_is_read() {
    let nic = Nic::open("tcp://127.0.0.1:0").unwrap();
    let ptag = nic.create_ptag();
    let vi = nic
        .create_vi(
            ViAttributes::new(ptag, Reliability::ReliableDelivery),
            None,
            None,
        )
        .unwrap();
    let inbox = nic.register_mem(64, MemAttributes::local(ptag)).unwrap();
    vi.post_recv(Descriptor::recv([Segment::new(inbox.handle(), 0, 64)]))
        .unwrap();
    let hp = nic.address().strip_prefix("tcp://").unwrap().to_string();
    let client = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(&hp).unwrap();
        let mut b = junk_connect(b"peer");
        b.extend_from_slice(
            &Header {
                seq: 1,
                len: 8,
                ..Header::new(Kind::Send)
            }
            .encode(),
        );
        b.extend_from_slice(b"INJECTED");
        s.write_all(&b).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut r = [0u8; 64];
        s.read(&mut r)
    });
    let e = nic.connect_wait(b"peer", Some(Duration::from_millis(500)));
    assert!(matches!(e, Err(ViaError::Timeout)), "{:?}", e.err());
    // closed by the NIC, unanswered (0 bytes) or reset
    match client.join().unwrap() {
        Ok(n) => assert_eq!(n, 0, "the NIC answered an unauthenticated client"),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }
    assert!(
        vi.recv_done().is_none(),
        "an injected send completed a receive"
    );
    let mut b = [1u8; 64];
    inbox.read(0, &mut b).unwrap();
    assert_eq!(b, [0u8; 64]);
}

#[test]
fn junk_and_silent_connections_neither_stall_connect_wait_nor_grow_its_state() {
    for provider in ["tcp", "shm"] {
        let server = Nic::open(&server_url(provider)).unwrap();
        let addr = server.address().to_string();
        let before = open_fds();
        // Silent connections: connected, never a byte. Twice the handshake slots.
        let mut silent_tcp = Vec::new();
        let mut silent_shm = Vec::new();
        let dial_raw = |n: usize,
                        tcp: &mut Vec<std::net::TcpStream>,
                        shm: &mut Vec<std::os::unix::net::UnixStream>| {
            for _ in 0..n {
                match addr.strip_prefix("tcp://") {
                    Some(hp) => tcp.push(std::net::TcpStream::connect(hp).unwrap()),
                    None => {
                        let d = private_dir::dir_to_dial().unwrap();
                        let p =
                            private_dir::endpoint_file(&d, addr.strip_prefix("shm://").unwrap());
                        shm.push(std::os::unix::net::UnixStream::connect(p).unwrap());
                    }
                }
            }
        };
        dial_raw(
            2 * icn_via::MAX_HANDSHAKES,
            &mut silent_tcp,
            &mut silent_shm,
        );
        // Nothing matches: the wait ends at its timeout, not 5 s per silent connection.
        let t0 = Instant::now();
        let e = server.connect_wait(b"nobody", Some(Duration::from_millis(300)));
        let waited = t0.elapsed();
        assert!(
            matches!(e, Err(ViaError::Timeout)),
            "{provider}: {:?}",
            e.err()
        );
        assert!(
            waited < Duration::from_secs(2),
            "{provider}: connect_wait(300 ms) took {waited:?} with silent connections"
        );
        // Junk: 1 500 connection requests without the key exchange (tcp) or without an area
        // (shm), each closed at once.
        if provider == "tcp" {
            let hp = addr.strip_prefix("tcp://").unwrap().to_string();
            let junk = std::thread::spawn(move || {
                for i in 0..1500u32 {
                    if let Ok(mut s) = std::net::TcpStream::connect(&hp) {
                        let _ = s.write_all(&junk_connect(&i.to_le_bytes()));
                    }
                }
            });
            while !junk.is_finished() {
                let _ = server.connect_wait(b"nobody", Some(Duration::from_millis(20)));
            }
            junk.join().unwrap();
        }
        // A legitimate client still gets in, within its timeout.
        let cnic = Nic::open(&client_url(provider)).unwrap();
        let cptag = cnic.create_ptag();
        let cvi = cnic
            .create_vi(
                ViAttributes::new(cptag, Reliability::ReliableDelivery),
                None,
                None,
            )
            .unwrap();
        let sptag = server.create_ptag();
        let svi = server
            .create_vi(
                ViAttributes::new(sptag, Reliability::ReliableDelivery),
                None,
                None,
            )
            .unwrap();
        let client = std::thread::spawn(move || {
            cnic.connect_request(&cvi, &addr, b"legit", Some(Duration::from_secs(10)))
                .map(|()| (cnic, cvi))
        });
        let req = server
            .connect_wait(b"legit", Some(Duration::from_secs(10)))
            .unwrap();
        req.accept(&svi).unwrap();
        let (_cnic, _cvi) = client.join().unwrap().unwrap();
        // Bounded: handshakes in progress and requests pending stay under their caps, and so
        // do the descriptors (two per handshake, one per pending request, the client's).
        let (handshakes, pending) = server.connection_backlog();
        assert!(
            handshakes <= icn_via::MAX_HANDSHAKES,
            "{provider}: {handshakes}"
        );
        assert!(pending <= icn_via::MAX_PENDING, "{provider}: {pending}");
        let grown = open_fds().saturating_sub(before);
        // this test's own silent sockets, two per handshake, one per pending request, and a
        // few for the legitimate pair
        let bound = 4 * icn_via::MAX_HANDSHAKES + icn_via::MAX_PENDING + 16;
        assert!(
            grown <= bound,
            "{provider}: {grown} more descriptors after 1 500 junk requests (bound {bound})"
        );
        drop((silent_tcp, silent_shm));
    }
}

#[test]
fn rdma_to_an_unknown_handle_or_a_region_of_another_tag_is_an_error_and_touches_nothing() {
    for provider in ["tcp", "shm"] {
        for wrong in ["handle", "tag"] {
            // reliable reception: the initiator's status says what the target did (on
            // delivery a write is acknowledged on arrival)
            let (c, s) = pair(provider, Reliability::ReliableReception);
            let victim = if wrong == "tag" {
                // RDMA-enabled, but tagged with another protection tag than the VI's
                let other = s.nic.create_ptag();
                s.nic.register_mem(64, MemAttributes::rdma(other)).unwrap()
            } else {
                s.region(64, true)
            };
            victim.write(0, &[7u8; 64]).unwrap();
            let handle = if wrong == "handle" {
                MemHandle::from_raw(victim.handle().raw() ^ 0x5a5a_5a5a)
            } else {
                victim.handle()
            };
            let mine = c.region(64, false);
            mine.write(0, &[9u8; 64]).unwrap();
            let remote = RemoteAddr { handle, offset: 0 };
            c.vi.post_send(Descriptor::rdma_write(
                remote,
                [Segment::new(mine.handle(), 0, 64)],
            ))
            .unwrap();
            let server = std::thread::spawn(move || {
                // serve the peer's RDMA until the VI breaks or a second passes
                let end = Instant::now() + Duration::from_secs(1);
                while Instant::now() < end {
                    s.vi.progress();
                    std::thread::sleep(Duration::from_millis(1));
                }
                (s, victim)
            });
            let done = c.vi.send_wait(T).unwrap();
            assert_eq!(
                done.status,
                CompletionStatus::RdmaProtectionError,
                "{provider}, wrong {wrong}"
            );
            let (_s, victim) = server.join().unwrap();
            let mut b = [0u8; 64];
            victim.read(0, &mut b).unwrap();
            assert_eq!(
                b, [7u8; 64],
                "{provider}, wrong {wrong}: the region changed"
            );
        }
    }
}
