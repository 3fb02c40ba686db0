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

/// True when `cc -fsanitize=address` links a program here.
fn asan() -> bool {
    static ASAN: OnceLock<bool> = OnceLock::new();
    *ASAN.get_or_init(|| {
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
    })
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

const LEVELS: [&str; 3] = ["u", "d", "r"];

#[test]
fn sends_segments_chains_cqs_notify_and_flush_between_two_processes() {
    for p in PROVIDERS {
        for r in LEVELS {
            pair("data", p, &[("VIPL_RELIABILITY", r)]);
        }
    }
}
