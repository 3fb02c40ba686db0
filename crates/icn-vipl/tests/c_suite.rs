//! The C conformance suite (`tests/c/*.c`): compiled against `include/vipl.h` and the
//! `libvipl.so` of this build with the system C compiler (`$CC`, default `cc`), under
//! AddressSanitizer when the compiler supports it, and run on both providers: one-process
//! cases once per provider, connection cases as two processes (server and client, started
//! client first where the case says so). docs/vipl.md maps each VIPL function and return
//! code to the case that checks it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The directory of this build's `libvipl.so`: `target/<profile>/deps`, next to this test
/// (`cargo test` builds the library's C products there and copies them up only on `cargo
/// build`).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().to_path_buf()
}

fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vipl-c");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// True when `cc -fsanitize=address` links a program here. With `VIPL_REQUIRE_ASAN=1` (CI)
/// a compiler without it fails the suite instead of running it unsanitised.
fn asan() -> bool {
    static ASAN: OnceLock<bool> = OnceLock::new();
    *ASAN.get_or_init(|| {
        let found = asan_probe();
        assert!(
            found || std::env::var("VIPL_REQUIRE_ASAN").as_deref() != Ok("1"),
            "VIPL_REQUIRE_ASAN=1 but `{} -fsanitize=address` does not link (install libasan)",
            cc()
        );
        found
    })
}

fn asan_probe() -> bool {
    let d = out_dir();
    let src = d.join("probe.c");
    std::fs::write(&src, "int main(void){return 0;}\n").unwrap();
    Command::new(cc())
        .args(["-fsanitize=address", "-o"])
        .arg(d.join("probe"))
        .arg(&src)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Compiles `tests/c/<name>.c` (once per test binary) and returns the program.
fn program(name: &str) -> PathBuf {
    static BUILT: OnceLock<std::sync::Mutex<Vec<String>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let mut b = built.lock().unwrap_or_else(|e| e.into_inner());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = out_dir().join(format!("{name}-{}", std::process::id()));
    if !b.iter().any(|n| n == name) {
        let lib = lib_dir();
        assert!(
            lib.join("libvipl.so").exists(),
            "no libvipl.so in {}",
            lib.display()
        );
        let mut c = Command::new(cc());
        c.args([
            "-std=c11",
            "-D_GNU_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-g",
            "-O1",
        ])
        .arg("-I")
        .arg(manifest.join("include"))
        .arg("-I")
        .arg(manifest.join("tests/c"));
        if asan() {
            c.arg("-fsanitize=address");
        }
        c.arg("-o")
            .arg(&exe)
            .arg(manifest.join(format!("tests/c/{name}.c")))
            .arg("-L")
            .arg(&lib)
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lvipl")
            .arg("-lpthread");
        let out = c.output().expect("run the C compiler");
        assert!(
            out.status.success(),
            "compiling {name}.c failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        b.push(name.to_string());
    }
    exe
}

/// A run id no other run of this test binary shares (the programs put it in their
/// discriminators).
fn run_id() -> String {
    static RUN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// One program's environment: provider, a private rendezvous directory, the run id.
fn command(exe: &Path, provider: &str, run: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let rdv = out_dir().join(format!("rdv-{}", std::process::id()));
    let mut c = Command::new(exe);
    // cargo's LD_LIBRARY_PATH also names target/<profile>, where `cargo build` leaves an
    // older libvipl.so; the program finds this build's through its rpath.
    c.args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env("ICN_VIPL_PROVIDER", provider)
        .env("ICN_VIPL_RENDEZVOUS", &rdv)
        .env("VIPL_RUN", run)
        .env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Waits for `child` up to `limit`, killing it after that; its output.
fn finish(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

fn assert_ok(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const PROVIDERS: [&str; 2] = ["shm", "tcp"];
const LIMIT: Duration = Duration::from_secs(60);

/// Runs `local CASE` on both providers.
fn local(case: &str) {
    let exe = program("local");
    for p in PROVIDERS {
        let out = finish(
            command(&exe, p, &run_id(), &[case], &[]).spawn().unwrap(),
            LIMIT,
        );
        assert_ok(&format!("local {case} on {p}"), &out);
    }
}

/// Runs `pair CASE server` and `pair CASE client` at once on `provider` (client started
/// first), with `env`.
fn pair(case: &str, provider: &str, env: &[(&str, &str)]) {
    let exe = program("pair");
    let run = run_id();
    let client = command(&exe, provider, &run, &[case, "client"], env)
        .spawn()
        .unwrap();
    let server = command(&exe, provider, &run, &[case, "server"], env)
        .spawn()
        .unwrap();
    let s = finish(server, LIMIT);
    let c = finish(client, LIMIT);
    let what = format!("pair {case} on {provider} {env:?}");
    assert_ok(&format!("{what}, server"), &s);
    assert_ok(&format!("{what}, client"), &c);
}

#[test]
fn nic_open_query_close_and_handle_checks() {
    local("nic");
}

#[test]
fn protection_tags_and_memory_registration() {
    local("mem");
}

#[test]
fn vi_attributes_are_checked_queried_and_set() {
    local("vi");
}

#[test]
fn descriptors_refused_at_post_with_format_errors_and_the_callback() {
    local("post");
}

#[test]
fn completion_queues_without_traffic() {
    local("cq");
}

#[test]
fn the_name_service_maps_names_to_addresses_and_back() {
    local("ns");
}

#[test]
fn connect_wait_and_request_honour_their_timeouts() {
    local("timeout");
}

/// Issue 33: unmapped or read-only memory refused at registration, deregistration under a
/// posted descriptor refused with everything intact, `MaxDescriptorsPerQueue` exact; under
/// AddressSanitizer where the compiler has it (CI requires it: `VIPL_REQUIRE_ASAN=1`).
#[test]
fn misuse_at_the_c_boundary_returns_vip_codes_and_never_crashes() {
    local("misuse");
}

const LEVELS: [&str; 3] = ["u", "d", "r"];

#[test]
fn sends_segments_chains_cqs_notify_and_flush_between_two_processes() {
    for p in PROVIDERS {
        for r in LEVELS {
            pair("data", p, &[("VIPL_RELIABILITY", r)]);
        }
    }
}

#[test]
fn rdma_write_with_immediate_read_and_a_write_without_rights() {
    for p in PROVIDERS {
        for r in ["d", "r"] {
            pair("rdma", p, &[("VIPL_RELIABILITY", r)]);
        }
    }
}

#[test]
fn length_errors_and_missing_receives_under_each_reliability_level() {
    for p in PROVIDERS {
        for r in LEVELS {
            pair("errors", p, &[("VIPL_RELIABILITY", r)]);
        }
    }
}

#[test]
fn a_peer_gone_without_disconnecting_ends_the_wait_and_calls_back() {
    for p in PROVIDERS {
        for r in ["d", "r"] {
            pair("lost", p, &[("VIPL_RELIABILITY", r)]);
        }
    }
}

#[test]
fn rejected_requests_and_a_reliability_mismatch() {
    for p in PROVIDERS {
        pair("reject", p, &[]);
    }
}

#[test]
fn peer_to_peer_connection_either_side_first() {
    for p in PROVIDERS {
        pair("peer", p, &[]);
    }
}

/// Every structure of `vipl.h` has the size and field offsets of its Rust twin
/// (`src/types.rs`), and the return codes agree (what the C compiler says is the truth).
#[test]
fn the_header_and_the_rust_types_agree_field_by_field() {
    use vipl::types::*;
    let want: Vec<(&str, usize)> = vec![
        ("VIP_NET_ADDRESS", std::mem::size_of::<VIP_NET_ADDRESS>()),
        (
            "VIP_NET_ADDRESS.HostAddressLen",
            std::mem::offset_of!(VIP_NET_ADDRESS, HostAddressLen),
        ),
        (
            "VIP_NET_ADDRESS.DiscriminatorLen",
            std::mem::offset_of!(VIP_NET_ADDRESS, DiscriminatorLen),
        ),
        (
            "VIP_NET_ADDRESS.HostAddress",
            std::mem::offset_of!(VIP_NET_ADDRESS, HostAddress),
        ),
        (
            "VIP_NIC_ATTRIBUTES",
            std::mem::size_of::<VIP_NIC_ATTRIBUTES>(),
        ),
        (
            "VIP_NIC_ATTRIBUTES.Name",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, Name),
        ),
        (
            "VIP_NIC_ATTRIBUTES.HardwareVersion",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, HardwareVersion),
        ),
        (
            "VIP_NIC_ATTRIBUTES.ProviderVersion",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, ProviderVersion),
        ),
        (
            "VIP_NIC_ATTRIBUTES.NicAddressLen",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, NicAddressLen),
        ),
        (
            "VIP_NIC_ATTRIBUTES.LocalNicAddress",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, LocalNicAddress),
        ),
        (
            "VIP_NIC_ATTRIBUTES.ThreadSafe",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, ThreadSafe),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxDiscriminatorLen",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxDiscriminatorLen),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxRegisterBytes",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxRegisterBytes),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxRegisterRegions",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxRegisterRegions),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxRegisterBlockBytes",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxRegisterBlockBytes),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxVI",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxVI),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxDescriptorsPerQueue",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxDescriptorsPerQueue),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxSegmentsPerDesc",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxSegmentsPerDesc),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxCQ",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxCQ),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxCQEntries",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxCQEntries),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxTransferSize",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxTransferSize),
        ),
        (
            "VIP_NIC_ATTRIBUTES.NativeMTU",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, NativeMTU),
        ),
        (
            "VIP_NIC_ATTRIBUTES.MaxPtags",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, MaxPtags),
        ),
        (
            "VIP_NIC_ATTRIBUTES.ReliabilityLevelSupport",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, ReliabilityLevelSupport),
        ),
        (
            "VIP_NIC_ATTRIBUTES.RDMAReadSupport",
            std::mem::offset_of!(VIP_NIC_ATTRIBUTES, RDMAReadSupport),
        ),
        (
            "VIP_CONTROL_SEGMENT",
            std::mem::size_of::<VIP_CONTROL_SEGMENT>(),
        ),
        (
            "VIP_CONTROL_SEGMENT.Next",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, Next),
        ),
        (
            "VIP_CONTROL_SEGMENT.NextHandle",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, NextHandle),
        ),
        (
            "VIP_CONTROL_SEGMENT.SegCount",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, SegCount),
        ),
        (
            "VIP_CONTROL_SEGMENT.Control",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, Control),
        ),
        (
            "VIP_CONTROL_SEGMENT.Reserved",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, Reserved),
        ),
        (
            "VIP_CONTROL_SEGMENT.ImmediateData",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, ImmediateData),
        ),
        (
            "VIP_CONTROL_SEGMENT.Length",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, Length),
        ),
        (
            "VIP_CONTROL_SEGMENT.Status",
            std::mem::offset_of!(VIP_CONTROL_SEGMENT, Status),
        ),
        ("VIP_DATA_SEGMENT", std::mem::size_of::<VIP_DATA_SEGMENT>()),
        (
            "VIP_DATA_SEGMENT.Data",
            std::mem::offset_of!(VIP_DATA_SEGMENT, Data),
        ),
        (
            "VIP_DATA_SEGMENT.Handle",
            std::mem::offset_of!(VIP_DATA_SEGMENT, Handle),
        ),
        (
            "VIP_DATA_SEGMENT.Length",
            std::mem::offset_of!(VIP_DATA_SEGMENT, Length),
        ),
        ("VIP_DESCRIPTOR", std::mem::size_of::<VIP_DESCRIPTOR>()),
        (
            "VIP_DESCRIPTOR.CS",
            std::mem::offset_of!(VIP_DESCRIPTOR, CS),
        ),
        (
            "VIP_DESCRIPTOR.DS",
            std::mem::offset_of!(VIP_DESCRIPTOR, DS),
        ),
        (
            "VIP_VI_ATTRIBUTES",
            std::mem::size_of::<VIP_VI_ATTRIBUTES>(),
        ),
        (
            "VIP_VI_ATTRIBUTES.ReliabilityLevel",
            std::mem::offset_of!(VIP_VI_ATTRIBUTES, ReliabilityLevel),
        ),
        (
            "VIP_VI_ATTRIBUTES.MaxTransferSize",
            std::mem::offset_of!(VIP_VI_ATTRIBUTES, MaxTransferSize),
        ),
        (
            "VIP_VI_ATTRIBUTES.QoS",
            std::mem::offset_of!(VIP_VI_ATTRIBUTES, QoS),
        ),
        (
            "VIP_VI_ATTRIBUTES.Ptag",
            std::mem::offset_of!(VIP_VI_ATTRIBUTES, Ptag),
        ),
        (
            "VIP_VI_ATTRIBUTES.EnableRdmaWrite",
            std::mem::offset_of!(VIP_VI_ATTRIBUTES, EnableRdmaWrite),
        ),
        (
            "VIP_VI_ATTRIBUTES.EnableRdmaRead",
            std::mem::offset_of!(VIP_VI_ATTRIBUTES, EnableRdmaRead),
        ),
        (
            "VIP_MEM_ATTRIBUTES",
            std::mem::size_of::<VIP_MEM_ATTRIBUTES>(),
        ),
        (
            "VIP_MEM_ATTRIBUTES.Ptag",
            std::mem::offset_of!(VIP_MEM_ATTRIBUTES, Ptag),
        ),
        (
            "VIP_MEM_ATTRIBUTES.EnableRdmaWrite",
            std::mem::offset_of!(VIP_MEM_ATTRIBUTES, EnableRdmaWrite),
        ),
        (
            "VIP_MEM_ATTRIBUTES.EnableRdmaRead",
            std::mem::offset_of!(VIP_MEM_ATTRIBUTES, EnableRdmaRead),
        ),
        (
            "VIP_ERROR_DESCRIPTOR",
            std::mem::size_of::<VIP_ERROR_DESCRIPTOR>(),
        ),
        (
            "VIP_ERROR_DESCRIPTOR.NicHandle",
            std::mem::offset_of!(VIP_ERROR_DESCRIPTOR, NicHandle),
        ),
        (
            "VIP_ERROR_DESCRIPTOR.ViHandle",
            std::mem::offset_of!(VIP_ERROR_DESCRIPTOR, ViHandle),
        ),
        (
            "VIP_ERROR_DESCRIPTOR.CQHandle",
            std::mem::offset_of!(VIP_ERROR_DESCRIPTOR, CQHandle),
        ),
        (
            "VIP_ERROR_DESCRIPTOR.DescriptorPtr",
            std::mem::offset_of!(VIP_ERROR_DESCRIPTOR, DescriptorPtr),
        ),
        (
            "VIP_ERROR_DESCRIPTOR.OpCode",
            std::mem::offset_of!(VIP_ERROR_DESCRIPTOR, OpCode),
        ),
        (
            "VIP_ERROR_DESCRIPTOR.ResourceCode",
            std::mem::offset_of!(VIP_ERROR_DESCRIPTOR, ResourceCode),
        ),
        (
            "VIP_ERROR_DESCRIPTOR.ErrorCode",
            std::mem::offset_of!(VIP_ERROR_DESCRIPTOR, ErrorCode),
        ),
        (
            "VIP_AUTODISCOVERY_LIST",
            std::mem::size_of::<VIP_AUTODISCOVERY_LIST>(),
        ),
        (
            "VIP_AUTODISCOVERY_LIST.NumberOfHops",
            std::mem::offset_of!(VIP_AUTODISCOVERY_LIST, NumberOfHops),
        ),
        (
            "VIP_AUTODISCOVERY_LIST.ADAddrArray",
            std::mem::offset_of!(VIP_AUTODISCOVERY_LIST, ADAddrArray),
        ),
        (
            "VIP_AUTODISCOVERY_LIST.NumAdAddrs",
            std::mem::offset_of!(VIP_AUTODISCOVERY_LIST, NumAdAddrs),
        ),
        ("VIP_SUCCESS", ret::VIP_SUCCESS as usize),
        ("VIP_NOT_DONE", ret::VIP_NOT_DONE as usize),
        ("VIP_INVALID_PARAMETER", ret::VIP_INVALID_PARAMETER as usize),
        ("VIP_ERROR_RESOURCE", ret::VIP_ERROR_RESOURCE as usize),
        ("VIP_TIMEOUT", ret::VIP_TIMEOUT as usize),
        ("VIP_REJECT", ret::VIP_REJECT as usize),
        (
            "VIP_INVALID_RELIABILITY_LEVEL",
            ret::VIP_INVALID_RELIABILITY_LEVEL as usize,
        ),
        ("VIP_INVALID_MTU", ret::VIP_INVALID_MTU as usize),
        ("VIP_INVALID_QOS", ret::VIP_INVALID_QOS as usize),
        ("VIP_INVALID_PTAG", ret::VIP_INVALID_PTAG as usize),
        ("VIP_INVALID_RDMAREAD", ret::VIP_INVALID_RDMAREAD as usize),
        ("VIP_DESCRIPTOR_ERROR", ret::VIP_DESCRIPTOR_ERROR as usize),
        ("VIP_INVALID_STATE", ret::VIP_INVALID_STATE as usize),
        ("VIP_ERROR_NAMESERVICE", ret::VIP_ERROR_NAMESERVICE as usize),
        ("VIP_NO_MATCH", ret::VIP_NO_MATCH as usize),
    ];
    let exe = program("layout");
    let out = finish(
        command(&exe, "shm", &run_id(), &[], &[]).spawn().unwrap(),
        LIMIT,
    );
    assert_ok("layout", &out);
    let text = String::from_utf8(out.stdout).unwrap();
    let got: Vec<(&str, usize)> = text
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k, v.parse().unwrap())
        })
        .collect();
    assert_eq!(got, want);
    // the descriptor is one 64-byte line; two segments follow the control segment
    assert_eq!(std::mem::size_of::<VIP_DESCRIPTOR>(), 64);
}

/// The descriptor's other dialect of field names (`VIPL_CONTROL_DATA_NAMES`, `Control` and
/// `Data[]`): same offsets as `CS` / `DS[]` (static assertions in `c/names.c`), and
/// descriptors written through them post and are refused as the default ones are.
#[test]
fn the_control_data_field_names_are_the_same_descriptor() {
    for p in PROVIDERS {
        let exe = program("names");
        let out = finish(
            command(&exe, p, &run_id(), &[], &[]).spawn().unwrap(),
            LIMIT,
        );
        assert_ok(&format!("names on {p}"), &out);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "names: ok\n");
    }
}

/// `ICN_VIA_TRACE`: the two processes of the data case write one SimGrid TI file each and
/// an index; every message of the run is there once as a send on one side and a receive of
/// the same size, in the same order, on the other, and the counts and bytes are the run's
/// (11 messages, 1 048 671 B from client to server; one of 5 B back).
#[test]
fn a_traced_run_records_every_message_once_on_each_side() {
    for p in PROVIDERS {
        let dir = out_dir().join(format!("trace-{p}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        pair(
            "data",
            p,
            &[
                ("VIPL_RELIABILITY", "r"),
                ("ICN_VIA_TRACE", dir.to_str().unwrap()),
            ],
        );
        let index = std::fs::read_to_string(dir.join("index")).unwrap();
        assert_eq!(index, "rank-0.ti\nrank-1.ti\n");
        let ops = |r: usize| -> Vec<(String, usize, u64)> {
            let text = std::fs::read_to_string(dir.join(format!("rank-{r}.ti"))).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.first(), Some(&format!("{r} init").as_str()));
            assert_eq!(lines.last(), Some(&format!("{r} finalize").as_str()));
            lines
                .iter()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    assert_eq!(f[0], r.to_string(), "{l}");
                    match f[1] {
                        "isend" | "irecv" => {
                            assert_eq!(f[3], "0", "tag: {l}");
                            Some((
                                f[1].to_string(),
                                f[2].parse().unwrap(),
                                f[4].parse().unwrap(),
                            ))
                        }
                        // wait SRC DST TAG: a receive's (SRC is the peer) or a send's
                        "wait" => {
                            assert_eq!(f[4], "0", "tag: {l}");
                            let (src, dst): (usize, usize) =
                                (f[2].parse().unwrap(), f[3].parse().unwrap());
                            Some(if dst == r {
                                ("rwait".to_string(), src, 0)
                            } else {
                                assert_eq!(src, r, "{l}");
                                ("swait".to_string(), dst, 0)
                            })
                        }
                        "compute" => {
                            assert!(f[2].parse::<f64>().unwrap() >= 1000.0, "{l}");
                            None
                        }
                        "init" | "finalize" => None,
                        other => panic!("unexpected action {other}: {l}"),
                    }
                })
                .collect()
        };
        let (a, b) = (ops(0), ops(1));
        let count = |o: &[(String, usize, u64)], what: &str, peer: usize| {
            o.iter().filter(|x| x.0 == what && x.1 == peer).count()
        };
        for (mine, theirs, me, peer) in [(&a, &b, 0, 1), (&b, &a, 1, 0)] {
            // every message once: each send of mine is one receive posted and one waited
            // for on the other side (receives flushed unmatched are left out)
            let sends = count(mine, "isend", peer);
            assert_eq!(
                count(theirs, "irecv", me),
                sends,
                "{p}: rank {me} to {peer}"
            );
            assert_eq!(
                count(theirs, "rwait", me),
                sends,
                "{p}: rank {me} to {peer}"
            );
            assert!(count(mine, "swait", peer) <= sends, "{p}: rank {me}");
        }
        let mut totals: Vec<(usize, u64)> = [&a, &b]
            .iter()
            .map(|o| {
                let s: Vec<u64> = o.iter().filter(|x| x.0 == "isend").map(|x| x.2).collect();
                (s.len(), s.iter().sum())
            })
            .collect();
        totals.sort();
        assert_eq!(totals, vec![(1, 5), (11, 60 + 28 + 1_048_576 + 7)], "{p}");
    }
}

/// Issue 33: a receiver that takes its message and then makes no call for 1.5 s: the
/// sender's reliable send still completes within its 1 s `VipSendWait`, on both providers
/// and both reliable levels, and the recording (`ICN_VIA_TRACE`) holds the send, its wait
/// and the receive: one message each way of the connection, 11 bytes.
#[test]
fn a_send_completes_and_is_recorded_though_the_receiver_never_calls_again() {
    for p in PROVIDERS {
        for r in ["d", "r"] {
            let dir = out_dir().join(format!("quiet-{p}-{r}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            pair(
                "quiet",
                p,
                &[
                    ("VIPL_RELIABILITY", r),
                    ("ICN_VIA_TRACE", dir.to_str().unwrap()),
                ],
            );
            assert_eq!(recorded_sends(&dir), (1, 11), "{p} {r}");
            let all: String = (0..2)
                .map(|k| std::fs::read_to_string(dir.join(format!("rank-{k}.ti"))).unwrap())
                .collect();
            let waits = all
                .lines()
                .filter(|l| l.split_whitespace().nth(1) == Some("wait"));
            assert_eq!(
                waits.count(),
                2,
                "{p} {r}: the send's wait and the receive's:\n{all}"
            );
        }
    }
}

/// The isend lines of a recorded run: (messages, bytes), over every rank file of `dir`.
fn recorded_sends(dir: &Path) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    for r in 0..2 {
        let text = std::fs::read_to_string(dir.join(format!("rank-{r}.ti"))).unwrap();
        for l in text.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.get(1) == Some(&"isend") {
                n += 1;
                bytes += f[4].parse::<u64>().unwrap();
            }
        }
    }
    (n, bytes)
}

/// MP_Lite pong's pattern (`pair.c`, case `pong`: receives pre-posted before the
/// connection, both sides sending 64 KiB at once into them, an RDMA write with immediate
/// data of 64 KiB consuming a receive, receives left posted and flushed at the end),
/// recorded on each provider, replays in `cluster` (`workload.kind = "ti"`) on the fabrics
/// of the THNPC-II-like and MyVIA/Myrinet experiments to the end, with the recorded run's
/// message count and bytes: 11 messages, 3 x 8 + 65 536 + 65 536 from the client and
/// 3 x 8 + 65 536 + 16 + 1 from the server. Recorded as blocking send/recv where they
/// complete, the two simultaneous 64 KiB sends deadlocked such a replay.
#[test]
fn a_recorded_pong_replays_on_the_thnpc_and_myvia_machines_with_its_messages_and_bytes() {
    use icn_cluster::model::{Cluster, ClusterConfig};
    use icn_engine::Model;
    use icn_engine::model::NoProgress;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for p in PROVIDERS {
        let dir = out_dir().join(format!("trace-pong-{p}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        pair("pong", p, &[("ICN_VIA_TRACE", dir.to_str().unwrap())]);
        let recorded = recorded_sends(&dir);
        assert_eq!(
            recorded,
            (11, 24 + 65_536 + 65_536 + 24 + 65_536 + 16 + 1),
            "{p}"
        );
        for machine in ["cluster-thnpc.toml", "cluster-myvia.toml"] {
            let exp: toml::Table = toml::from_str(
                &std::fs::read_to_string(repo.join("experiments").join(machine)).unwrap(),
            )
            .unwrap();
            // The machine is the experiment's fabric; the TI replay hands whole messages
            // to it (its NIC is the zero one).
            let t: toml::Table = toml::from_str(&format!(
                "[workload]\nkind = \"ti\"\nfile = \"{}\"\n[nic]\nkind = \"zero\"\n",
                dir.join("index").display()
            ))
            .unwrap();
            let mut t = t;
            t.insert("fabric".into(), exp["fabric"].clone());
            let cfg: ClusterConfig = toml::Value::Table(t).try_into().unwrap();
            let ctx = icn_engine::Context::default();
            let prepared = Cluster::prepare(&cfg, &ctx)
                .unwrap_or_else(|e| panic!("{p} {machine}: {} {}", e.key, e.message));
            let m = Cluster::run_prepared(&prepared, 1, &NoProgress)
                .unwrap_or_else(|e| panic!("{p} {machine}: {e:?}"));
            let get = |name: &str| {
                m.scalars
                    .iter()
                    .find(|s| s.name == name)
                    .unwrap_or_else(|| panic!("{name}"))
                    .value
            };
            assert_eq!(
                (get("messages") as u64, get("bytes") as u64),
                recorded,
                "{p} {machine}"
            );
            assert!(get("completion_us") > 0.0, "{p} {machine}");
        }
    }
}
