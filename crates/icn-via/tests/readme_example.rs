//! The README's two-process example is `examples/hello.rs`, verbatim, and it runs: server and
//! client as two processes on both providers, the client started first.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn the_readme_example_is_the_example_file() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{dir}/README.md")).unwrap();
    let file = std::fs::read_to_string(format!("{dir}/examples/hello.rs")).unwrap();
    let start = readme
        .find("<!-- examples/hello.rs begins -->\n```rust\n")
        .expect("README has the example's begin marker");
    let body = &readme[start..];
    let body = &body[body.find("```rust\n").unwrap() + 8..];
    let end = body
        .find("```\n<!-- examples/hello.rs ends -->")
        .expect("README has the example's end marker");
    assert_eq!(
        &body[..end],
        file,
        "the README's example differs from examples/hello.rs"
    );
}

#[test]
fn the_readme_example_runs_as_two_processes_on_both_providers() {
    // cargo test builds the examples next to the test binaries' directory
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().unwrap().parent().unwrap();
    let hello = target.join("examples/hello");
    if !hello.exists() {
        // `cargo test --test readme_example` alone does not build examples
        let mut c = Command::new(env!("CARGO"));
        c.args(["build", "-q", "-p", "icn-via", "--example", "hello"]);
        if target.ends_with("release") {
            c.arg("--release");
        }
        assert!(
            c.status().unwrap().success(),
            "building examples/hello failed"
        );
    }
    assert!(hello.exists(), "{} not built", hello.display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for url in [
        format!("shm:///icn-via-hello/{}", std::process::id()),
        format!("tcp://127.0.0.1:{port}"),
    ] {
        let run = |role: &str| {
            Command::new(&hello)
                .args([role, &url])
                .env("HELLO_ROUNDS", "2000")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let client = run("client");
        std::thread::sleep(Duration::from_millis(200));
        let server = run("server");
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut outs = Vec::new();
        for mut child in [client, server] {
            while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            outs.push(child.wait_with_output().unwrap());
        }
        for o in &outs {
            assert!(
                o.status.success(),
                "{url}: {}\n{}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let line = String::from_utf8_lossy(&outs[0].stdout);
        assert!(
            line.starts_with("2000 round trips of 8 B over ") && line.contains(" us one-way"),
            "{url}: {line}"
        );
    }
}
