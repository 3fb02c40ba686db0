//! The provider loaded by Debian's libfabric, as users load it (`FI_PROVIDER_PATH`), and the
//! ABI checked against the installed headers. Needs `libfabric-dev libfabric-bin` (and for
//! the MPI test `openmpi-bin libopenmpi-dev`): ignored by default, run by `.ci/run`'s ofi
//! block with `cargo test --release -p icn-ofi --test libfabric -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `target/<profile>`: the test binary lives in its `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// The directory holding `libicnvia-fi.so` (build.rs's link to the cdylib).
fn provider_path() -> PathBuf {
    let d = profile_dir().join("ofi");
    assert!(
        d.join("libicnvia-fi.so").exists(),
        "{} missing: build icn-ofi first",
        d.display()
    );
    d
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ofi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{text}",
        out.status
    );
    text
}

/// Every struct of the ABI and the fields the provider reads or writes: size and offsets
/// from the installed headers (a C program) against the Rust definitions in `sys`.
#[test]
#[ignore = "needs libfabric-dev and cc; .ci/run's ofi block runs it"]
fn abi_layout_matches_the_installed_headers() {
    use icnvia_fi::sys::*;
    use std::mem::{offset_of, size_of};
    macro_rules! layout {
        ($($t:ident { $($f:ident),* }),* $(,)?) => {{
            let mut c = String::new();
            let mut rust = String::new();
            $(
                c.push_str(&format!("printf(\"{} %zu\\n\", sizeof(struct {}));\n", stringify!($t), stringify!($t)));
                rust.push_str(&format!("{} {}\n", stringify!($t), size_of::<$t>()));
                $(
                    c.push_str(&format!(
                        "printf(\"{}.{} %zu\\n\", offsetof(struct {}, {}));\n",
                        stringify!($t), stringify!($f), stringify!($t), layout!(@cname $f)
                    ));
                    rust.push_str(&format!("{}.{} {}\n", stringify!($t), stringify!($f), offset_of!($t, $f)));
                )*
            )*
            (c, rust)
        }};
        (@cname type_) => { "type" };
        (@cname $f:ident) => { stringify!($f) };
    }
    let (c_body, expected) = layout!(
        fid {
            fclass,
            context,
            ops
        },
        fi_provider {
            version,
            fi_version,
            context,
            name,
            getinfo,
            fabric,
            cleanup
        },
        fi_info {
            next,
            caps,
            mode,
            addr_format,
            src_addrlen,
            dest_addrlen,
            src_addr,
            dest_addr,
            handle,
            tx_attr,
            rx_attr,
            ep_attr,
            domain_attr,
            fabric_attr,
            nic
        },
        fi_tx_attr {
            caps,
            mode,
            op_flags,
            msg_order,
            comp_order,
            inject_size,
            size,
            iov_limit,
            rma_iov_limit,
            tclass
        },
        fi_rx_attr {
            caps,
            mode,
            op_flags,
            msg_order,
            comp_order,
            total_buffered_recv,
            size,
            iov_limit
        },
        fi_ep_attr {
            type_,
            protocol,
            protocol_version,
            max_msg_size,
            tx_ctx_cnt,
            rx_ctx_cnt,
            auth_key
        },
        fi_domain_attr {
            name,
            threading,
            control_progress,
            data_progress,
            resource_mgmt,
            av_type,
            mr_mode,
            mr_key_size,
            cq_data_size,
            mr_iov_limit,
            caps,
            mode,
            mr_cnt,
            tclass
        },
        fi_fabric_attr {
            fabric,
            name,
            prov_name,
            prov_version,
            api_version
        },
        fid_fabric {
            fid,
            ops,
            api_version
        },
        fid_domain { fid, ops, mr },
        fid_ep {
            fid,
            ops,
            cm,
            msg,
            rma,
            tagged,
            atomic,
            collective
        },
        fid_pep { fid, ops, cm },
        fid_eq { fid, ops },
        fid_cq { fid, ops },
        fid_mr { fid, mem_desc, key },
        fi_ops {
            size,
            close,
            bind,
            control,
            ops_open,
            tostr,
            ops_set
        },
        fi_ops_fabric {
            size,
            domain,
            passive_ep,
            eq_open,
            wait_open,
            trywait,
            domain2
        },
        fi_ops_domain {
            size,
            av_open,
            cq_open,
            endpoint,
            scalable_ep,
            cntr_open,
            poll_open,
            stx_ctx,
            srx_ctx,
            query_atomic,
            query_collective,
            endpoint2
        },
        fi_ops_mr {
            size,
            reg,
            regv,
            regattr
        },
        fi_ops_ep {
            size,
            cancel,
            getopt,
            setopt,
            tx_ctx,
            rx_ctx,
            rx_size_left,
            tx_size_left
        },
        fi_ops_cm {
            size,
            setname,
            getname,
            getpeer,
            connect,
            listen,
            accept,
            reject,
            shutdown,
            join
        },
        fi_ops_msg {
            size,
            recv,
            recvv,
            recvmsg,
            send,
            sendv,
            sendmsg,
            inject,
            senddata,
            injectdata
        },
        fi_ops_rma {
            size,
            read,
            readv,
            readmsg,
            write,
            writev,
            writemsg,
            inject,
            writedata,
            injectdata
        },
        fi_ops_tagged {
            size,
            recv,
            recvv,
            recvmsg,
            send,
            sendv,
            sendmsg,
            inject,
            senddata,
            injectdata
        },
        fi_ops_cq {
            size,
            read,
            readfrom,
            readerr,
            sread,
            sreadfrom,
            signal,
            strerror
        },
        fi_ops_eq {
            size,
            read,
            readerr,
            write,
            sread,
            strerror
        },
        fi_eq_attr {
            size,
            flags,
            wait_obj
        },
        fi_cq_attr {
            size,
            flags,
            format,
            wait_obj
        },
        fi_eq_cm_entry { fid, info, data },
        fi_eq_err_entry {
            fid,
            context,
            data,
            err,
            prov_errno,
            err_data,
            err_data_size
        },
        fi_cq_entry { op_context },
        fi_cq_msg_entry {
            op_context,
            flags,
            len
        },
        fi_cq_data_entry {
            op_context,
            flags,
            len,
            buf,
            data
        },
        fi_cq_tagged_entry {
            op_context,
            flags,
            len,
            buf,
            data,
            tag
        },
        fi_cq_err_entry {
            op_context,
            flags,
            len,
            buf,
            data,
            tag,
            olen,
            err,
            prov_errno,
            err_data,
            err_data_size
        },
        fi_msg {
            msg_iov,
            desc,
            iov_count,
            addr,
            context,
            data
        },
        fi_msg_rma {
            msg_iov,
            desc,
            iov_count,
            addr,
            rma_iov,
            rma_iov_count,
            context,
            data
        },
        fi_rma_iov { addr, len, key },
        fi_mr_attr {
            mr_iov,
            iov_count,
            access,
            offset,
            requested_key,
            context,
            iface
        },
    );
    // The constants the provider uses, too.
    let consts = [
        ("FI_MSG", FI_MSG as u64),
        ("FI_RMA", FI_RMA as u64),
        ("FI_TAGGED", FI_TAGGED as u64),
        ("FI_READ", FI_READ as u64),
        ("FI_WRITE", FI_WRITE as u64),
        ("FI_RECV", FI_RECV as u64),
        ("FI_SEND", FI_SEND as u64),
        ("FI_REMOTE_READ", FI_REMOTE_READ as u64),
        ("FI_REMOTE_WRITE", FI_REMOTE_WRITE as u64),
        ("FI_LOCAL_COMM", FI_LOCAL_COMM),
        ("FI_REMOTE_COMM", FI_REMOTE_COMM),
        ("FI_SOURCE", FI_SOURCE),
        ("FI_PEEK", FI_PEEK as u64),
        ("FI_COMPLETION", FI_COMPLETION as u64),
        ("FI_INJECT", FI_INJECT as u64),
        ("FI_SELECTIVE_COMPLETION", FI_SELECTIVE_COMPLETION),
        ("FI_REMOTE_CQ_DATA", FI_REMOTE_CQ_DATA as u64),
        ("FI_MR_LOCAL", FI_MR_LOCAL as u64),
        ("FI_MR_VIRT_ADDR", FI_MR_VIRT_ADDR as u64),
        ("FI_MR_ALLOCATED", FI_MR_ALLOCATED as u64),
        ("FI_MR_PROV_KEY", FI_MR_PROV_KEY as u64),
        ("FI_CONNREQ", FI_CONNREQ as u64),
        ("FI_CONNECTED", FI_CONNECTED as u64),
        ("FI_SHUTDOWN", FI_SHUTDOWN as u64),
        ("FI_EP_MSG", FI_EP_MSG as u64),
        ("FI_SOCKADDR_IN", FI_SOCKADDR_IN as u64),
        ("FI_ENABLE", FI_ENABLE as u64),
        ("FI_OPT_CM_DATA_SIZE", FI_OPT_CM_DATA_SIZE as u64),
        ("FI_CLASS_CONNREQ", FI_CLASS_CONNREQ as u64),
        ("FI_EAVAIL", icnvia_fi::error::FI_EAVAIL as u64),
        ("FI_EAGAIN", icnvia_fi::error::FI_EAGAIN as u64),
        ("FI_ETRUNC", icnvia_fi::error::FI_ETRUNC as u64),
        ("FI_ECANCELED", icnvia_fi::error::FI_ECANCELED as u64),
        ("FI_ENOSYS", icnvia_fi::error::FI_ENOSYS as u64),
        ("FI_ENODATA", icnvia_fi::error::FI_ENODATA as u64),
        ("FI_EOPBADSTATE", icnvia_fi::error::FI_EOPBADSTATE as u64),
        ("FI_ETOOSMALL", icnvia_fi::error::FI_ETOOSMALL as u64),
        ("FI_ECONNREFUSED", icnvia_fi::error::FI_ECONNREFUSED as u64),
    ];
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <rdma/fabric.h>\n#include <rdma/fi_domain.h>\n\
         #include <rdma/fi_endpoint.h>\n#include <rdma/fi_cm.h>\n#include <rdma/fi_eq.h>\n#include <rdma/fi_rma.h>\n\
         #include <rdma/fi_tagged.h>\n#include <rdma/fi_errno.h>\n#include <rdma/providers/fi_prov.h>\nint main(void) {\n",
    );
    c.push_str(&c_body);
    let mut want = expected;
    for (name, v) in consts {
        c.push_str(&format!(
            "printf(\"{name} %llu\\n\", (unsigned long long)({name}));\n"
        ));
        want.push_str(&format!("{name} {v}\n"));
    }
    c.push_str("return 0;\n}\n");
    let dir = scratch("abi");
    std::fs::write(dir.join("abi.c"), c).unwrap();
    run(Command::new("cc")
        .arg("-o")
        .arg(dir.join("abi"))
        .arg(dir.join("abi.c")));
    let got = run(&mut Command::new(dir.join("abi")));
    for (g, w) in got.lines().zip(want.lines()) {
        assert_eq!(g, w, "C headers (left) vs Rust (right)");
    }
    assert_eq!(got.lines().count(), want.lines().count());
}

/// `fi_info -p icnvia -v`: the provider is listed, with the attributes it has.
#[test]
#[ignore = "needs libfabric-bin; .ci/run's ofi block runs it"]
fn fi_info_lists_the_provider_truthfully() {
    let out = run(Command::new("fi_info")
        .args(["-p", "icnvia", "-v"])
        .env("FI_PROVIDER_PATH", provider_path()));
    // Two core entries (shm, tcp) and ofi_rxm's RDM over each.
    let core: Vec<&str> = out
        .split("---")
        .filter(|e| e.contains("prov_name: icnvia\n") || e.contains("prov_name: icnvia\r"))
        .collect();
    assert!(out.contains("type: FI_EP_MSG"), "{out}");
    assert!(
        out.contains("prov_name: icnvia;ofi_rxm"),
        "ofi_rxm does not layer on it:\n{out}"
    );
    let mut fabrics: Vec<&str> = core
        .iter()
        .flat_map(|e| e.lines().filter_map(|l| l.trim().strip_prefix("name: ")))
        .collect();
    fabrics.dedup();
    for e in &core {
        assert!(
            e.contains(
                "mr_mode: [ FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY ]"
            ),
            "{e}"
        );
        assert!(e.contains("inject_size: 0"), "{e}");
        assert!(e.contains("max_msg_size: 1073741824"), "{e}");
        assert!(
            !e.contains("FI_TAGGED") && !e.contains("FI_ATOMIC"),
            "offers what it has not: {e}"
        );
        assert!(e.contains("data_progress: FI_PROGRESS_MANUAL"), "{e}");
    }
    assert_eq!(core.len(), 2, "one core entry per link:\n{out}");
    assert!(
        fabrics.contains(&"shm") && fabrics.contains(&"tcp"),
        "{fabrics:?}"
    );
}

/// Runs `fi_pingpong` server and client with `args`; the client's output.
fn pingpong(args: &[&str], link: &str) -> String {
    let path = provider_path();
    // A control port of our own for each run: tests may run in parallel.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let port = (20000 + (std::process::id() * 16 + n) % 40000).to_string();
    let mut server = Command::new("fi_pingpong")
        .args(args)
        .args(["-B", &port])
        .env("FI_PROVIDER_PATH", &path)
        .env("FI_ICNVIA_LINK", link)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fi_pingpong (libfabric-bin)");
    std::thread::sleep(Duration::from_millis(300));
    let client = Command::new("fi_pingpong")
        .args(args)
        .args(["-P", &port, "127.0.0.1"])
        .env("FI_PROVIDER_PATH", &path)
        .env("FI_ICNVIA_LINK", link)
        .output()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = server.kill();
    let s = server.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&client.stdout).into_owned()
        + &String::from_utf8_lossy(&client.stderr);
    assert!(
        client.status.success() && s.status.success(),
        "fi_pingpong {args:?} on {link}: client {}, server {}:\n{text}\n{}",
        client.status,
        s.status,
        String::from_utf8_lossy(&s.stderr)
    );
    text
}

/// The rows of fi_pingpong's table: (size as printed, e.g. "1.5k", sent, acked).
fn rows(out: &str) -> Vec<(String, String, String)> {
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 3 && f[0].starts_with(|c: char| c.is_ascii_digit()))
                .then(|| (f[0].to_string(), f[1].to_string(), f[2].to_string()))
        })
        .collect()
}

#[test]
#[ignore = "needs libfabric-bin; .ci/run's ofi block runs it"]
fn fi_pingpong_msg_runs_over_shm_and_tcp() {
    for link in ["shm", "tcp"] {
        let out = pingpong(
            &["-p", "icnvia", "-e", "msg", "-I", "20", "-S", "all"],
            link,
        );
        let r = rows(&out);
        // Sizes 1 B ... 8 MiB by fi_pingpong's table (through ofi_rxm: eager, segmented and,
        // from 128 KiB, rendezvous by RDMA read), each with every message acknowledged.
        assert!(
            r.len() >= 20 && r.iter().any(|x| x.0 == "1m"),
            "{link}: {out}"
        );
        for (size, sent, ack) in &r {
            assert_eq!(format!("={sent}"), *ack, "{link} size {size}: {out}");
        }
    }
}

#[test]
#[ignore = "needs libfabric-bin; .ci/run's ofi block runs it"]
fn fi_pingpong_rdm_runs_through_ofi_rxm() {
    for link in ["shm", "tcp"] {
        let out = pingpong(
            &["-p", "icnvia;ofi_rxm", "-e", "rdm", "-I", "20", "-S", "all"],
            link,
        );
        let r = rows(&out);
        assert!(
            r.len() >= 20 && r.iter().any(|x| x.0 == "1m"),
            "{link}: {out}"
        );
        for (size, sent, ack) in &r {
            assert_eq!(format!("={sent}"), *ack, "{link} size {size}: {out}");
        }
    }
}

/// The project's MPI program under Open MPI's `mtl ofi` over the provider sends the same
/// messages and bytes as under `vader` (each rank's `expected<rank>.txt`, the busy-time
/// line aside).
#[test]
#[ignore = "needs openmpi-bin, libopenmpi-dev, libfabric1; .ci/run's ofi block runs it"]
fn mpi_exchange_over_the_provider_sends_what_it_sends_over_vader() {
    let dir = scratch("mpi");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../icn-tirecord/c/mpi_exchange.c");
    let exe = dir.join("mpi_exchange");
    run(Command::new("mpicc")
        .arg("-O2")
        .arg("-o")
        .arg(&exe)
        .arg(&src));
    let path = provider_path();
    let mut outs = Vec::new();
    for (name, mca) in [
        (
            "vader",
            vec!["--mca", "pml", "ob1", "--mca", "btl", "self,vader"],
        ),
        (
            "icnvia-shm",
            vec![
                "--mca",
                "pml",
                "cm",
                "--mca",
                "mtl",
                "ofi",
                "--mca",
                "mtl_ofi_provider_include",
                "icnvia;ofi_rxm",
            ],
        ),
        (
            "icnvia-tcp",
            vec![
                "--mca",
                "pml",
                "cm",
                "--mca",
                "mtl",
                "ofi",
                "--mca",
                "mtl_ofi_provider_include",
                "icnvia;ofi_rxm",
            ],
        ),
    ] {
        let out = dir.join(name);
        std::fs::create_dir_all(&out).unwrap();
        let link = name.strip_prefix("icnvia-").unwrap_or("shm");
        run(Command::new("mpirun")
            .args(["--allow-run-as-root", "--oversubscribe", "-np", "2"])
            .args(&mca)
            .args([
                "-x",
                "FI_PROVIDER_PATH",
                "-x",
                "FI_PROVIDER",
                "-x",
                "FI_ICNVIA_LINK",
            ])
            .arg(&exe)
            .arg(&out)
            .env("FI_PROVIDER_PATH", &path)
            .env("FI_PROVIDER", "icnvia;ofi_rxm")
            .env("FI_ICNVIA_LINK", link));
        let mut text = String::new();
        for rank in 0..2 {
            let t = std::fs::read_to_string(out.join(format!("expected{rank}.txt"))).unwrap();
            text.extend(
                t.lines()
                    .filter(|l| !l.starts_with("computed"))
                    .map(|l| format!("{l}\n")),
            );
        }
        outs.push((name, text));
    }
    assert!(outs[0].1.contains("alltoallv 0 1"), "{}", outs[0].1);
    for (name, text) in &outs[1..] {
        assert_eq!(text, &outs[0].1, "{name} against vader");
    }
}
