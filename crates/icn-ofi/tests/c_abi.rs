//! The provider driven through its C entry points exactly as libfabric's inline wrappers
//! call them (`fi_prov_ini` → `getinfo`/`fabric` → the ops tables of each object), without
//! libfabric: connection set-up with data both ways, messages, RDMA write and read into
//! registered memory, a rejected connection with data, a protection error, and every
//! object closed. Every `unsafe` block of `abi.rs` runs here.

use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use icnvia_fi::sys::*;

const V1_17: u32 = (1 << 16) | 17;

fn err(r: isize) -> String {
    std::io::Error::from_raw_os_error(-r as i32).to_string()
}

macro_rules! ok {
    ($e:expr) => {{
        let r = $e as isize;
        assert!(r >= 0, "{} = {r} ({})", stringify!($e), err(r));
        r
    }};
}

/// getinfo for `link` with hints as an MPI-over-rxm stack gives them.
unsafe fn getinfo(link: &CStr) -> *mut fi_info {
    unsafe {
        let prov = &*icnvia_fi::fi_prov_ini();
        assert_eq!(CStr::from_ptr(prov.name), c"icnvia");
        let mut dom: fi_domain_attr = std::mem::zeroed();
        dom.name = link.as_ptr() as *mut _;
        dom.mr_mode = (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY) as i32;
        let mut ep: fi_ep_attr = std::mem::zeroed();
        ep.type_ = FI_EP_MSG;
        let mut hints: fi_info = std::mem::zeroed();
        hints.caps = (FI_MSG | FI_RMA) as u64;
        hints.domain_attr = &mut dom;
        hints.ep_attr = &mut ep;
        let mut info = null_mut();
        ok!((prov.getinfo.unwrap())(
            V1_17,
            null(),
            null(),
            0,
            &hints,
            &mut info
        ));
        assert!(!info.is_null());
        assert!((*info).next.is_null(), "one link asked, one info");
        assert_eq!(CStr::from_ptr((*(*info).domain_attr).name), link);
        assert_eq!((*(*info).ep_attr).type_, FI_EP_MSG);
        assert_eq!((*info).addr_format, FI_SOCKADDR_IN);
        info
    }
}

unsafe fn close(f: *mut fid) {
    unsafe { ok!(((*(*f).ops).close.unwrap())(f)) };
}

/// Reads one EQ event within 20 s: (event, bytes, the cm entry's info, its data).
unsafe fn eq_event(eq: *mut fid_eq) -> (u32, isize, *mut fi_info, Vec<u8>) {
    unsafe {
        let mut buf = [0u64; 64];
        let mut ev = 0u32;
        let n = ((*(*eq).ops).sread.unwrap())(
            eq,
            &mut ev,
            buf.as_mut_ptr() as *mut c_void,
            512,
            20_000,
            0,
        );
        assert!(n > 0, "eq sread: {n} ({})", err(n));
        let entry = &*(buf.as_ptr() as *const fi_eq_cm_entry);
        let hdr = std::mem::size_of::<fi_eq_cm_entry>();
        let data =
            std::slice::from_raw_parts((buf.as_ptr() as *const u8).add(hdr), n as usize - hdr)
                .to_vec();
        (ev, n, entry.info, data)
    }
}

/// Polls `cqs` until `want` completions came (or an error: returned as Err).
unsafe fn completions(
    cqs: &[*mut fid_cq],
    want: usize,
) -> Result<Vec<fi_cq_data_entry>, fi_cq_err_entry> {
    unsafe {
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while got.len() < want {
            assert!(
                Instant::now() < deadline,
                "only {} of {want} completions",
                got.len()
            );
            for &cq in cqs {
                let mut e: [fi_cq_data_entry; 4] = std::mem::zeroed();
                let n = ((*(*cq).ops).read.unwrap())(cq, e.as_mut_ptr() as *mut c_void, 4);
                if n > 0 {
                    got.extend_from_slice(&e[..n as usize]);
                } else if n == -(FI_EAVAIL as isize) {
                    let mut ee: fi_cq_err_entry = std::mem::zeroed();
                    ok!(((*(*cq).ops).readerr.unwrap())(cq, &mut ee, 0));
                    return Err(ee);
                } else {
                    assert_eq!(n, -(FI_EAGAIN as isize), "cq read: {}", err(n));
                }
            }
        }
        Ok(got)
    }
}

unsafe fn reg(dom: *mut fid_domain, buf: &mut [u8], access: u64) -> *mut fid_mr {
    unsafe {
        let mut mr = null_mut();
        ok!(((*(*dom).mr).reg.unwrap())(
            &mut (*dom).fid,
            buf.as_ptr() as *const c_void,
            buf.len(),
            access,
            0,
            0,
            0,
            &mut mr,
            null_mut()
        ));
        mr
    }
}

unsafe fn endpoint(
    dom: *mut fid_domain,
    info: *mut fi_info,
    eq: *mut fid_eq,
    cq: *mut fid_cq,
) -> *mut fid_ep {
    unsafe {
        let mut ep = null_mut();
        ok!(((*(*dom).ops).endpoint.unwrap())(
            dom,
            info,
            &mut ep,
            0x5ee as *mut c_void
        ));
        let bind = (*(*ep).fid.ops).bind.unwrap();
        ok!(bind(&mut (*ep).fid, &mut (*eq).fid, 0));
        ok!(bind(
            &mut (*ep).fid,
            &mut (*cq).fid,
            (FI_TRANSMIT | FI_RECV) as u64
        ));
        ok!(((*(*ep).fid.ops).control.unwrap())(
            &mut (*ep).fid,
            FI_ENABLE as i32,
            null_mut()
        ));
        ep
    }
}

unsafe fn whole_stack(link: &CStr) {
    unsafe {
        let prov = &*icnvia_fi::fi_prov_ini();
        let info = getinfo(link);
        let mut fab = null_mut();
        ok!((prov.fabric.unwrap())(
            (*info).fabric_attr,
            &mut fab,
            null_mut()
        ));
        let fops = &*(*fab).ops;
        let mut eq_attr: fi_eq_attr = std::mem::zeroed();
        eq_attr.wait_obj = FI_WAIT_UNSPEC;
        let (mut seq, mut ceq) = (null_mut(), null_mut());
        ok!((fops.eq_open.unwrap())(
            fab,
            &mut eq_attr,
            &mut seq,
            null_mut()
        ));
        ok!((fops.eq_open.unwrap())(
            fab,
            &mut eq_attr,
            &mut ceq,
            null_mut()
        ));
        let mut dom = null_mut();
        ok!((fops.domain.unwrap())(fab, info, &mut dom, null_mut()));
        let mut cq_attr: fi_cq_attr = std::mem::zeroed();
        cq_attr.format = FI_CQ_FORMAT_DATA;
        let (mut scq, mut ccq) = (null_mut(), null_mut());
        ok!(((*(*dom).ops).cq_open.unwrap())(
            dom,
            &mut cq_attr,
            &mut scq,
            null_mut()
        ));
        ok!(((*(*dom).ops).cq_open.unwrap())(
            dom,
            &mut cq_attr,
            &mut ccq,
            null_mut()
        ));
        // A wait object the provider does not have is refused, not faked.
        let mut fd_attr = cq_attr;
        fd_attr.wait_obj = FI_WAIT_FD;
        let mut none = null_mut();
        assert_eq!(
            ((*(*dom).ops).cq_open.unwrap())(dom, &mut fd_attr, &mut none, null_mut()),
            -(FI_ENOSYS as i32)
        );

        // Server: passive endpoint listening.
        let mut pep = null_mut();
        ok!((fops.passive_ep.unwrap())(fab, info, &mut pep, null_mut()));
        ok!(((*(*pep).fid.ops).bind.unwrap())(
            &mut (*pep).fid,
            &mut (*seq).fid,
            0
        ));
        let mut cm_size = 0usize;
        let mut sz = std::mem::size_of::<usize>();
        ok!(((*(*pep).ops).getopt.unwrap())(
            &mut (*pep).fid,
            FI_OPT_ENDPOINT as i32,
            FI_OPT_CM_DATA_SIZE as i32,
            &mut cm_size as *mut usize as *mut c_void,
            &mut sz
        ));
        assert_eq!(cm_size, 256);
        ok!(((*(*pep).cm).listen.unwrap())(pep));
        let mut name = [0u8; 16];
        let mut len = 2usize;
        assert_eq!(
            ((*(*pep).cm).getname.unwrap())(
                &mut (*pep).fid,
                name.as_mut_ptr() as *mut c_void,
                &mut len
            ),
            -(FI_ETOOSMALL as i32)
        );
        assert_eq!(len, 16);
        ok!(((*(*pep).cm).getname.unwrap())(
            &mut (*pep).fid,
            name.as_mut_ptr() as *mut c_void,
            &mut len
        ));

        // Client: endpoint, a receive posted, connect with data.
        let mut cbuf = vec![0u8; 4096];
        let cmr = reg(
            dom,
            &mut cbuf,
            (FI_SEND | FI_RECV | FI_READ | FI_WRITE) as u64,
        );
        let cdesc = (*cmr).mem_desc;
        let cep = endpoint(dom, info, ceq, ccq);
        // Sending before connecting is a state error.
        assert_eq!(
            ((*(*cep).msg).send.unwrap())(
                cep,
                cbuf.as_ptr() as *const c_void,
                8,
                cdesc,
                0,
                null_mut()
            ),
            -(FI_EOPBADSTATE as isize)
        );
        ok!(((*(*cep).msg).recv.unwrap())(
            cep,
            cbuf.as_mut_ptr() as *mut c_void,
            64,
            cdesc,
            0,
            0xc1 as *mut c_void
        ));
        ok!(((*(*cep).cm).connect.unwrap())(
            cep,
            name.as_ptr() as *const c_void,
            b"hello".as_ptr() as *const c_void,
            5
        ));

        let (ev, _, req, data) = eq_event(seq);
        assert_eq!((ev, data.as_slice()), (FI_CONNREQ, &b"hello"[..]));
        assert!(!(*req).handle.is_null() && (*req).dest_addrlen == 16);
        let mut sbuf = vec![0u8; 4096];
        let smr = reg(
            dom,
            &mut sbuf,
            (FI_SEND | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE) as u64,
        );
        let sdesc = (*smr).mem_desc;
        let sep = endpoint(dom, req, seq, scq);
        icnvia_fi::abi::free_info(req);
        ok!(((*(*sep).msg).recv.unwrap())(
            sep,
            sbuf.as_mut_ptr() as *mut c_void,
            64,
            sdesc,
            0,
            0x51 as *mut c_void
        ));
        ok!(((*(*sep).cm).accept.unwrap())(
            sep,
            b"welcome".as_ptr() as *const c_void,
            7
        ));
        assert_eq!(eq_event(seq).0, FI_CONNECTED);
        let (ev, _, _, data) = eq_event(ceq);
        assert_eq!((ev, data.as_slice()), (FI_CONNECTED, &b"welcome"[..]));

        // A message each way, with the entries' fields.
        cbuf[100..105].copy_from_slice(b"ping!");
        ok!(((*(*cep).msg).send.unwrap())(
            cep,
            cbuf[100..].as_ptr() as *const c_void,
            5,
            cdesc,
            0,
            0xc2 as *mut c_void
        ));
        let mut got = completions(&[ccq, scq], 2).unwrap();
        got.sort_by_key(|e| e.op_context as usize);
        assert_eq!(got[0].op_context as usize, 0x51);
        assert_eq!(
            (got[0].len, got[0].buf as usize),
            (5, sbuf.as_ptr() as usize)
        );
        assert_eq!(got[0].flags, (FI_RECV | FI_MSG) as u64);
        assert_eq!(
            (got[1].op_context as usize, got[1].flags),
            (0xc2, (FI_SEND | FI_MSG) as u64)
        );
        assert_eq!(&sbuf[..5], b"ping!");

        // RDMA write into the server's region at its address, then read it back elsewhere.
        let key = (*smr).key;
        cbuf[200..206].copy_from_slice(b"rdma-w");
        let target = sbuf.as_ptr() as u64 + 1000;
        ok!(((*(*cep).rma).write.unwrap())(
            cep,
            cbuf[200..].as_ptr() as *const c_void,
            6,
            cdesc,
            0,
            target,
            key,
            0xc3 as *mut c_void
        ));
        let got = completions(&[ccq, scq], 1).unwrap();
        assert_eq!(
            (got[0].op_context as usize, got[0].flags),
            (0xc3, (FI_RMA | FI_WRITE) as u64)
        );
        assert_eq!(&sbuf[1000..1006], b"rdma-w");
        ok!(((*(*cep).rma).read.unwrap())(
            cep,
            cbuf[300..].as_mut_ptr() as *mut c_void,
            6,
            cdesc,
            0,
            target,
            key,
            0xc4 as *mut c_void
        ));
        let got = completions(&[ccq, scq], 1).unwrap();
        assert_eq!(
            (got[0].op_context as usize, got[0].flags),
            (0xc4, (FI_RMA | FI_READ) as u64)
        );
        assert_eq!(&cbuf[300..306], b"rdma-w");

        // Arguments the provider cannot take are refused at once.
        assert_eq!(
            ((*(*cep).msg).send.unwrap())(
                cep,
                cbuf.as_ptr() as *const c_void,
                8,
                null_mut(),
                0,
                null_mut()
            ),
            -(FI_EINVAL as isize)
        );
        assert_eq!(
            ((*(*cep).msg).inject.unwrap())(cep, cbuf.as_ptr() as *const c_void, 8, 0),
            -(FI_ENOSYS as isize)
        );
        assert_eq!(
            ((*(*cep).tagged).send.unwrap())(
                cep,
                cbuf.as_ptr() as *const c_void,
                8,
                cdesc,
                0,
                1,
                null_mut()
            ),
            -(FI_ENOSYS as isize)
        );
        assert_eq!(
            ((*(*cep).rma).read.unwrap())(
                cep,
                cbuf.as_mut_ptr() as *mut c_void,
                8,
                cdesc,
                0,
                0,
                1 << 40,
                null_mut()
            ),
            -(FI_EINVAL as isize)
        );

        // A second client is rejected, with data; its EQ reports it as an error event.
        let cep2 = endpoint(dom, info, ceq, ccq);
        ok!(((*(*cep2).cm).connect.unwrap())(
            cep2,
            name.as_ptr() as *const c_void,
            null(),
            0
        ));
        let (ev, _, req, _) = eq_event(seq);
        assert_eq!(ev, FI_CONNREQ);
        ok!(((*(*pep).cm).reject.unwrap())(
            pep,
            (*req).handle,
            b"busy".as_ptr() as *const c_void,
            4
        ));
        icnvia_fi::abi::free_info(req);
        let mut buf = [0u64; 8];
        let mut ev = 0;
        let deadline = Instant::now() + Duration::from_secs(20);
        let n = loop {
            let n =
                ((*(*ceq).ops).read.unwrap())(ceq, &mut ev, buf.as_mut_ptr() as *mut c_void, 64, 0);
            if n != -(FI_EAGAIN as isize) || Instant::now() > deadline {
                break n;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(n, -(FI_EAVAIL as isize));
        let mut ee: fi_eq_err_entry = std::mem::zeroed();
        ok!(((*(*ceq).ops).readerr.unwrap())(ceq, &mut ee, 0));
        assert_eq!(
            (ee.err, ee.fid as usize),
            (FI_ECONNREFUSED as i32, cep2 as usize)
        );
        assert_eq!(
            std::slice::from_raw_parts(ee.err_data as *const u8, ee.err_data_size),
            b"busy"
        );
        close(&mut (*cep2).fid);

        // An RDMA write with a key that is no registration fails with a protection error
        // (reliable VIs: the connection breaks, so the server sees FI_SHUTDOWN).
        ok!(((*(*cep).rma).write.unwrap())(
            cep,
            cbuf.as_ptr() as *const c_void,
            8,
            cdesc,
            0,
            target,
            key ^ 0x5a5a,
            0xc5 as *mut c_void
        ));
        let e = completions(&[ccq, scq], 1).unwrap_err();
        assert_eq!(e.op_context as usize, 0xc5);
        assert_ne!(e.err, 0);
        let mut msg = [0i8; 128];
        let s = ((*(*ccq).ops).strerror.unwrap())(
            ccq,
            e.prov_errno,
            null(),
            msg.as_mut_ptr(),
            msg.len(),
        );
        assert!(!CStr::from_ptr(s).to_bytes().is_empty());

        for f in [
            &mut (*cep).fid as *mut fid,
            &mut (*sep).fid,
            &mut (*pep).fid,
            &mut (*cmr).fid,
            &mut (*smr).fid,
            &mut (*scq).fid,
            &mut (*ccq).fid,
            &mut (*dom).fid,
            &mut (*seq).fid,
            &mut (*ceq).fid,
            &mut (*fab).fid,
        ] {
            close(f);
        }
        icnvia_fi::abi::free_info(info);
    }
}

#[test]
fn whole_stack_over_shm() {
    // SAFETY: the test passes the provider only what libfabric's contract allows.
    unsafe { whole_stack(c"shm") }
}

#[test]
fn whole_stack_over_tcp() {
    // SAFETY: as above.
    unsafe { whole_stack(c"tcp") }
}

#[test]
fn getinfo_refuses_what_is_not_offered() {
    // SAFETY: valid hints and out pointer, as fi_getinfo passes them.
    unsafe {
        let prov = &*icnvia_fi::fi_prov_ini();
        let mut ep: fi_ep_attr = std::mem::zeroed();
        ep.type_ = FI_EP_RDM;
        let mut hints: fi_info = std::mem::zeroed();
        hints.ep_attr = &mut ep;
        let mut info = null_mut();
        assert_eq!(
            (prov.getinfo.unwrap())(V1_17, null(), null(), 0, &hints, &mut info),
            -(FI_ENODATA as i32)
        );
        // Without hints both links come, shm first; a destination node fills dest_addr.
        let r = (prov.getinfo.unwrap())(
            V1_17,
            c"127.0.0.1".as_ptr(),
            c"4000".as_ptr(),
            0,
            null(),
            &mut info,
        );
        assert_eq!(r, 0);
        assert_eq!(CStr::from_ptr((*(*info).fabric_attr).name), c"shm");
        let next = (*info).next;
        assert_eq!(CStr::from_ptr((*(*next).fabric_attr).name), c"tcp");
        assert_eq!(
            icnvia_fi::addr::decode(std::slice::from_raw_parts(
                (*info).dest_addr as *const u8,
                16
            )),
            Some("127.0.0.1:4000".parse().unwrap())
        );
        // A source address is always there (loopback, any port): ofi_rxm reads it unchecked.
        assert_eq!(
            icnvia_fi::addr::decode(std::slice::from_raw_parts(
                (*info).src_addr as *const u8,
                16
            )),
            Some("127.0.0.1:0".parse().unwrap())
        );
        icnvia_fi::abi::free_info(info);
        let mut fab = null_mut();
        let mut attr: fi_fabric_attr = std::mem::zeroed();
        attr.name = c"verbs".as_ptr() as *mut _;
        assert_eq!(
            (prov.fabric.unwrap())(&mut attr, &mut fab, null_mut()),
            -(FI_ENODATA as i32)
        );
    }
}
