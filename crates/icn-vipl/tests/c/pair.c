/* libvipl conformance, two processes: connection set-up (the client starts first and its
 * VipConnectRequest waits for the server), sends with several segments and immediate data,
 * descriptor chains, CQs and notify calls, RDMA write with immediate data and RDMA read,
 * the error and status codes of failed transfers, rejection, peer-to-peer connection.
 * Usage: pair CASE server|client (data|rdma|errors|lost|reject|peer|pong|quiet). */
#include <pthread.h>

#include "suite.h"

#define MEM (4 << 20)
#define WAIT 10000 /* ms: generous, the machine may be loaded */

struct side {
    VIP_NIC_HANDLE nic;
    VIP_PROTECTION_HANDLE ptag;
    VIP_CQ_HANDLE cq;
    VIP_VI_HANDLE vi;
    char *mem; /* MEM bytes, registered; descriptors live in its first 64 KiB */
    VIP_MEM_HANDLE h;
    int server;
};

static VIP_DESCRIPTOR *desc(struct side *s, int i) {
    return (VIP_DESCRIPTOR *)(s->mem + 1024 * i);
}
static char *data(struct side *s, size_t off) {
    return s->mem + (64 << 10) + off;
}

/* Set by a case whose VI reaps its receives itself, not through the CQ. */
static int without_cq;

/* NIC, tag, registered memory, a receive CQ, a VI of level `level` (its receive queue on the
 * CQ unless `without_cq`). */
static void setup(struct side *s, int server, VIP_RELIABILITY_LEVEL level, VIP_MEM_ATTRIBUTES *ma) {
    memset(s, 0, sizeof *s);
    s->server = server;
    OK(VipOpenNic(device(), &s->nic));
    OK(VipErrorCallback(s->nic, NULL, count_errors));
    OK(VipCreatePtag(s->nic, &s->ptag));
    s->mem = aligned(MEM);
    VIP_MEM_ATTRIBUTES local = {s->ptag, VIP_FALSE, VIP_FALSE};
    if (ma) ma->Ptag = s->ptag;
    OK(VipRegisterMem(s->nic, s->mem, MEM, ma ? ma : &local, &s->h));
    OK(VipCreateCQ(s->nic, 64, &s->cq));
    VIP_VI_ATTRIBUTES a = vi_attrs(s->ptag, level);
    OK(VipCreateVi(s->nic, &a, NULL, without_cq ? NULL : s->cq, &s->vi));
}

/* Server: waits (after `delay_ms`, so the client is already asking) and accepts. Client:
 * requests, waiting for the server. */
static void connect_pair(struct side *s, const char *tag, int delay_ms) {
    VIP_NET_ADDRESS *me = make_addr(s->nic, tag);
    VIP_VI_ATTRIBUTES ra;
    if (s->server) {
        usleep(delay_ms * 1000);
        VIP_NET_ADDRESS *remote = malloc(sizeof(VIP_NET_ADDRESS) + 4 + 64);
        VIP_CONN_HANDLE conn;
        OK(VipConnectWait(s->nic, me, WAIT, remote, &ra, &conn));
        CHECK(remote->DiscriminatorLen == me->DiscriminatorLen);
        CHECK(memcmp(remote->HostAddress + remote->HostAddressLen,
                     me->HostAddress + me->HostAddressLen, me->DiscriminatorLen) == 0);
        CHECK(ra.ReliabilityLevel == reliability());
        OK(VipConnectAccept(conn, s->vi));
        EXPECT(VipConnectAccept(conn, s->vi), VIP_INVALID_PARAMETER); /* consumed */
        free(remote);
    } else {
        double t0 = now_ms();
        OK(VipConnectRequest(s->vi, me, me, WAIT, &ra));
        /* it waited for the server's VipConnectWait */
        CHECK(now_ms() - t0 >= delay_ms / 2);
        CHECK(ra.ReliabilityLevel == reliability());
    }
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES q;
    VIP_BOOLEAN se, re;
    OK(VipQueryVi(s->vi, &st, &q, &se, &re));
    CHECK(st == VIP_STATE_CONNECTED);
    free(me);
}

static void post_recv(struct side *s, int i, size_t off, VIP_UINT32 len) {
    one_seg(desc(s, i), data(s, off), s->h, len);
    OK(VipPostRecv(s->vi, desc(s, i), s->h));
}

static void send_bytes(struct side *s, int i, size_t off, VIP_UINT32 len) {
    one_seg(desc(s, i), data(s, off), s->h, len);
    OK(VipPostSend(s->vi, desc(s, i), s->h));
}

/* The next receive, through the CQ: the entry names this VI's receive queue. */
static VIP_DESCRIPTOR *next_recv(struct side *s) {
    VIP_VI_HANDLE who;
    VIP_BOOLEAN recvq;
    OK(VipCQWait(s->cq, WAIT, &who, &recvq));
    CHECK(who == s->vi && recvq == VIP_TRUE);
    VIP_DESCRIPTOR *d;
    OK(VipRecvDone(s->vi, &d));
    return d;
}

static VIP_DESCRIPTOR *next_send(struct side *s) {
    VIP_DESCRIPTOR *d;
    OK(VipSendWait(s->vi, WAIT, &d));
    return d;
}

static void teardown(struct side *s) {
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES q;
    VIP_BOOLEAN se, re;
    /* the peer may disconnect first: then ours finds the VI idle */
    VIP_RETURN rc = VipDisconnect(s->vi);
    CHECK(rc == VIP_SUCCESS || rc == VIP_INVALID_STATE);
    OK(VipQueryVi(s->vi, &st, &q, &se, &re));
    CHECK(st == VIP_STATE_IDLE);
    OK(VipDestroyVi(s->vi));
    OK(VipDestroyCQ(s->cq));
    OK(VipDeregisterMem(s->nic, s->mem, s->h));
    OK(VipDestroyPtag(s->nic, s->ptag));
    OK(VipCloseNic(s->nic));
    free(s->mem);
}

static volatile int notified;
static VIP_DESCRIPTOR *notified_desc;
static void on_send(VIP_PVOID ctx, VIP_NIC_HANDLE nic, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d) {
    (void)nic;
    (void)vi;
    CHECK(ctx == (VIP_PVOID)0x5EED);
    notified_desc = d;
    __atomic_store_n(&notified, 1, __ATOMIC_RELEASE);
}
static void on_cq(VIP_PVOID ctx, VIP_NIC_HANDLE nic, VIP_VI_HANDLE vi, VIP_BOOLEAN recvq) {
    (void)nic;
    CHECK(recvq == VIP_TRUE && ctx != NULL);
    *(VIP_VI_HANDLE *)ctx = vi;
    __atomic_store_n(&notified, 2, __ATOMIC_RELEASE);
}
static void on_recv(VIP_PVOID ctx, VIP_NIC_HANDLE nic, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d) {
    (void)nic;
    *(VIP_VI_HANDLE *)ctx = vi;
    notified_desc = d;
    __atomic_store_n(&notified, 3, __ATOMIC_RELEASE);
}
static void await_notified(int v) {
    double t0 = now_ms();
    while (__atomic_load_n(&notified, __ATOMIC_ACQUIRE) != v) {
        CHECK(now_ms() - t0 < WAIT);
        usleep(100);
    }
}

static void fill(char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (char)(seed * 31 + i * 7 + (i >> 8));
}
static int same(const char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (char)(seed * 31 + i * 7 + (i >> 8))) return 0;
    return 1;
}

#define CHAIN 8
#define BIG (1 << 20)

static void case_data(int server) {
    struct side s;
    setup(&s, server, reliability(), NULL);
    if (server) {
        /* receives first (VIA has no unexpected messages): a two-segment one, the chain's,
         * one for the 1 MiB message, one for the notify round */
        VIP_DESCRIPTOR *d = desc(&s, 0);
        memset(d, 0, sizeof *d);
        d->CS.SegCount = 2;
        d->DS[0].Local.Data.Address = data(&s, 0);
        d->DS[0].Local.Handle = s.h;
        d->DS[0].Local.Length = 25;
        d->DS[1].Local.Data.Address = data(&s, 1000);
        d->DS[1].Local.Handle = s.h;
        d->DS[1].Local.Length = 100;
        OK(VipPostRecv(s.vi, d, s.h));
        for (int i = 0; i < CHAIN; i++) post_recv(&s, 1 + i, 4096 + 64 * i, 64);
        post_recv(&s, 10, 1 << 20, BIG);
        post_recv(&s, 11, 3 << 20, 64);
    }
    connect_pair(&s, "data", 300);
    if (!server) {
        /* 1. three segments (10 + 20 + 30 B) with immediate data */
        VIP_DESCRIPTOR *d = desc(&s, 0);
        memset(d, 0, 1024);
        d->CS.Control = VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE;
        d->CS.ImmediateData = 0xABCD1234;
        d->CS.SegCount = 3;
        VIP_DATA_SEGMENT *seg = &d->DS[0].Local;
        size_t off[3] = {0, 300, 200}, len[3] = {10, 20, 30};
        for (int i = 0; i < 3; i++) {
            fill(data(&s, off[i]), len[i], i);
            seg[i].Data.Address = data(&s, off[i]);
            seg[i].Handle = s.h;
            seg[i].Length = (VIP_UINT32)len[i];
        }
        OK(VipPostSend(s.vi, d, s.h));
        VIP_DESCRIPTOR *c = next_send(&s);
        CHECK(c == d);
        CHECK(c->CS.Status == VIP_STATUS_DONE); /* send, no error */
        CHECK(c->CS.Length == 60);
        /* 2. a chain of descriptors linked through CS.Next, posted one by one; they
         * complete in posting order */
        VIP_DESCRIPTOR *head = desc(&s, 1);
        for (int i = 0; i < CHAIN; i++) {
            VIP_DESCRIPTOR *e = desc(&s, 1 + i);
            one_seg(e, data(&s, 8192 + 64 * i), s.h, (VIP_UINT32)i); /* 0 .. 7 bytes */
            fill(data(&s, 8192 + 64 * i), i, 100 + i);
            e->CS.Next.Address = i + 1 < CHAIN ? desc(&s, 2 + i) : NULL;
        }
        for (VIP_DESCRIPTOR *e = head; e; e = e->CS.Next.Address) OK(VipPostSend(s.vi, e, s.h));
        for (int i = 0; i < CHAIN; i++) {
            VIP_DESCRIPTOR *done = NULL;
            VIP_RETURN rc;
            while ((rc = VipSendDone(s.vi, &done)) == VIP_NOT_DONE) {}
            OK(rc);
            CHECK(done == desc(&s, 1 + i) && (done->CS.Status & VIP_STATUS_ERROR_MASK) == 0);
        }
        /* 3. 1 MiB in 16 segments of 64 KiB */
        d = desc(&s, 20);
        memset(d, 0, 1024);
        d->CS.SegCount = 16;
        seg = &d->DS[0].Local;
        for (int i = 0; i < 16; i++) {
            char *p = data(&s, (1 << 20) + (size_t)(15 - i) * 65536); /* scattered backwards */
            fill(p, 65536, 1000 + i);
            seg[i].Data.Address = p;
            seg[i].Handle = s.h;
            seg[i].Length = 65536;
        }
        OK(VipPostSend(s.vi, d, s.h));
        CHECK(next_send(&s) == d && d->CS.Status == VIP_STATUS_DONE);
        /* 4. the server answers; a send notify for a last message */
        post_recv(&s, 30, 0, 64);
        CHECK(next_recv(&s) == desc(&s, 30) && desc(&s, 30)->CS.Length == 5);
        CHECK(memcmp(data(&s, 0), "pong!", 5) == 0);
        /* 5's receive goes first: the server disconnects as soon as it has 4's message */
        post_recv(&s, 32, 0, 64);
        OK(VipSendNotify(s.vi, (VIP_PVOID)0x5EED, on_send));
        send_bytes(&s, 31, 512, 7);
        await_notified(1);
        CHECK(notified_desc == desc(&s, 31) && notified_desc->CS.Status == VIP_STATUS_DONE);
        /* 5. the server disconnects: a receive still posted here is flushed */
        VIP_DESCRIPTOR *f;
        OK(VipRecvWait(s.vi, WAIT, &f));
        CHECK(f == desc(&s, 32));
        CHECK(f->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
        CHECK(f->CS.Status & VIP_STATUS_DONE);
    } else {
        VIP_DESCRIPTOR *r = next_recv(&s);
        CHECK(r == desc(&s, 0));
        CHECK(r->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE | VIP_STATUS_IMMEDIATE));
        CHECK(r->CS.Length == 60 && r->CS.ImmediateData == 0xABCD1234);
        /* 60 bytes: 25 in the first segment, 35 in the second, in send order */
        char got[60];
        memcpy(got, data(&s, 0), 25);
        memcpy(got + 25, data(&s, 1000), 35);
        CHECK(same(got, 10, 0) && same(got + 10, 20, 1) && same(got + 30, 30, 2));
        for (int i = 0; i < CHAIN; i++) {
            r = next_recv(&s);
            CHECK(r == desc(&s, 1 + i));
            CHECK(r->CS.Length == (VIP_UINT32)i && r->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE));
            CHECK(same(data(&s, 4096 + 64 * i), i, 100 + i));
        }
        r = next_recv(&s);
        CHECK(r == desc(&s, 10) && r->CS.Length == BIG);
        for (int i = 0; i < 16; i++) CHECK(same(data(&s, (1 << 20) + (size_t)i * 65536), 65536, 1000 + i));
        /* the CQ notify sees the next message */
        VIP_VI_HANDLE who = NULL;
        OK(VipCQNotify(s.cq, &who, on_cq));
        memcpy(data(&s, 2 << 20), "pong!", 5);
        send_bytes(&s, 12, 2 << 20, 5);
        CHECK(next_send(&s) == desc(&s, 12));
        await_notified(2);
        CHECK(who == s.vi);
        VIP_DESCRIPTOR *n;
        OK(VipRecvDone(s.vi, &n));
        CHECK(n == desc(&s, 11) && n->CS.Length == 7);
        OK(VipDisconnect(s.vi));
        VIP_VI_STATE st;
        VIP_VI_ATTRIBUTES q;
        VIP_BOOLEAN se, re;
        OK(VipQueryVi(s.vi, &st, &q, &se, &re));
        CHECK(st == VIP_STATE_IDLE);
    }
    if (!server) usleep(1000);
    teardown(&s);
}


/* The server's region for RDMA: its address and handle travel in a message. */
struct window {
    VIP_UINT64 addr;
    VIP_MEM_HANDLE h, h_norights;
    VIP_UINT64 addr_norights;
};

static void case_rdma(int server) {
    struct side s;
    VIP_MEM_ATTRIBUTES rights = {NULL, VIP_TRUE, VIP_TRUE};
    setup(&s, server, reliability(), &rights);
    /* a second region without RDMA rights */
    char *plain = aligned(4096);
    VIP_MEM_ATTRIBUTES none = {s.ptag, VIP_FALSE, VIP_FALSE};
    VIP_MEM_HANDLE hp;
    OK(VipRegisterMem(s.nic, plain, 4096, &none, &hp));
    if (!server) post_recv(&s, 0, 0, sizeof(struct window));
    else post_recv(&s, 1, 0, 16); /* for the write with immediate */
    connect_pair(&s, "rdma", 100);
    if (server) {
        struct window w = {(VIP_UINT64)(uintptr_t)data(&s, 1 << 20), s.h, hp, (VIP_UINT64)(uintptr_t)plain};
        fill(data(&s, (1 << 20) + 65536), 5000, 77); /* what the client reads */
        memcpy(data(&s, 0), &w, sizeof w);
        send_bytes(&s, 2, 0, sizeof w);
        CHECK(next_send(&s) == desc(&s, 2));
        /* the write with immediate consumes the receive */
        VIP_DESCRIPTOR *r = next_recv(&s);
        CHECK(r == desc(&s, 1));
        CHECK(r->CS.Status ==
              (VIP_STATUS_DONE | VIP_STATUS_OP_REMOTE_RDMA_WRITE | VIP_STATUS_IMMEDIATE));
        CHECK(r->CS.ImmediateData == 4242);
        CHECK(same(data(&s, (1 << 20) + 100), 3000, 5) && same(data(&s, (1 << 20) + 3100), 1000, 6));
        /* the client reads, then writes where it may not; then it disconnects */
        post_recv(&s, 3, 0, 16);
        r = next_recv(&s);
        CHECK(r == desc(&s, 3) && (r->CS.Status & VIP_STATUS_ERROR_MASK) == 0);
        for (int i = 0; i < 4096; i++) CHECK(plain[i] == 0); /* nothing written */
    } else {
        VIP_DESCRIPTOR *r = next_recv(&s);
        struct window w;
        memcpy(&w, data(&s, 0), sizeof w);
        /* RDMA write with immediate data, two local segments, at offset 100 */
        VIP_DESCRIPTOR *d = desc(&s, 1);
        memset(d, 0, 1024);
        d->CS.Control = VIP_CONTROL_OP_RDMAWRITE | VIP_CONTROL_IMMEDIATE;
        d->CS.ImmediateData = 4242;
        d->CS.SegCount = 3;
        d->DS[0].Remote.Data.AddressBits = w.addr + 100;
        d->DS[0].Remote.Handle = w.h;
        VIP_DATA_SEGMENT *seg = &d->DS[1].Local;
        fill(data(&s, 10000), 3000, 5);
        fill(data(&s, 20000), 1000, 6);
        seg[0].Data.Address = data(&s, 10000);
        seg[0].Handle = s.h;
        seg[0].Length = 3000;
        seg[1].Data.Address = data(&s, 20000);
        seg[1].Handle = s.h;
        seg[1].Length = 1000;
        OK(VipPostSend(s.vi, d, s.h));
        CHECK(next_send(&s) == d);
        CHECK(d->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_WRITE));
        CHECK(d->CS.Length == 4000);
        /* RDMA read of 5000 bytes into two local segments */
        d = desc(&s, 2);
        memset(d, 0, 1024);
        d->CS.Control = VIP_CONTROL_OP_RDMAREAD;
        d->CS.SegCount = 3;
        d->DS[0].Remote.Data.AddressBits = w.addr + 65536;
        d->DS[0].Remote.Handle = w.h;
        seg = &d->DS[1].Local;
        seg[0].Data.Address = data(&s, 100000);
        seg[0].Handle = s.h;
        seg[0].Length = 2000;
        seg[1].Data.Address = data(&s, 102000);
        seg[1].Handle = s.h;
        seg[1].Length = 3000;
        OK(VipPostSend(s.vi, d, s.h));
        CHECK(next_send(&s) == d);
        CHECK(d->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_READ));
        CHECK(same(data(&s, 100000), 5000, 77));
        send_bytes(&s, 3, 0, 1); /* the server checks its plain region after this */
        CHECK(next_send(&s) == desc(&s, 3));
        /* a write into the region without rights: refused, the VI breaks */
        d = desc(&s, 4);
        memset(d, 0, 1024);
        d->CS.Control = VIP_CONTROL_OP_RDMAWRITE;
        d->CS.SegCount = 2;
        d->DS[0].Remote.Data.AddressBits = w.addr_norights;
        d->DS[0].Remote.Handle = w.h_norights;
        d->DS[1].Local.Data.Address = data(&s, 10000);
        d->DS[1].Local.Handle = s.h;
        d->DS[1].Local.Length = 64;
        usleep(200 * 1000); /* after the server's check */
        OK(VipPostSend(s.vi, d, s.h));
        CHECK(next_send(&s) == d);
        CHECK(d->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_RDMA_PROT_ERROR | VIP_STATUS_OP_RDMA_WRITE));
        CHECK(async_errors[VIP_ERROR_RDMAW_PROT] == 1);
        VIP_VI_STATE st;
        VIP_VI_ATTRIBUTES q;
        VIP_BOOLEAN se, re;
        OK(VipQueryVi(s.vi, &st, &q, &se, &re));
        CHECK(st == VIP_STATE_ERROR);
        OK(VipDisconnect(s.vi));
        (void)r;
    }
    OK(VipDeregisterMem(s.nic, plain, hp));
    free(plain);
    if (server) {
        /* the client's disconnect reaches us */
        VIP_DESCRIPTOR *f;
        post_recv(&s, 5, 0, 16);
        VIP_RETURN rc = VipRecvWait(s.vi, WAIT, &f);
        CHECK(rc == VIP_INVALID_STATE || (rc == VIP_SUCCESS && (f->CS.Status & VIP_STATUS_ERROR_MASK)));
    }
    teardown(&s);
}

/* Failed transfers: a message longer than the receive, a message with no receive posted. */
static void case_errors(int server) {
    struct side s;
    VIP_RELIABILITY_LEVEL level = reliability();
    setup(&s, server, level, NULL);
    if (server) {
        post_recv(&s, 0, 0, 50);   /* too short for the first message */
        post_recv(&s, 1, 100, 64); /* unreliable: the VI survives, this takes the third */
    }
    connect_pair(&s, "errors", 100);
    if (server) {
        VIP_DESCRIPTOR *r = next_recv(&s);
        CHECK(r == desc(&s, 0));
        CHECK(r->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_LENGTH_ERROR | VIP_STATUS_OP_RECEIVE));
        if (level == VIP_SERVICE_UNRELIABLE) {
            r = next_recv(&s);
            CHECK(r == desc(&s, 1) && r->CS.Length == 3 && r->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE));
            CHECK(memcmp(data(&s, 100), "end", 3) == 0);
        }
    } else {
        send_bytes(&s, 0, 0, 100);
        VIP_DESCRIPTOR *d = next_send(&s);
        if (level == VIP_SERVICE_RELIABLE_RECEPTION) {
            CHECK(d->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_REMOTE_DESC_ERROR));
            CHECK(async_errors[VIP_ERROR_RECVQ_EMPTY] == 1);
        } else {
            /* unreliable and reliable delivery complete the send before it is placed */
            CHECK((d->CS.Status & VIP_STATUS_DONE) != 0);
        }
        if (level == VIP_SERVICE_UNRELIABLE) {
            /* the VI survives: a message with no receive left is dropped, the next lands */
            memcpy(data(&s, 200), "end", 3);
            usleep(100 * 1000);
            send_bytes(&s, 1, 200, 3);
            CHECK(next_send(&s) == desc(&s, 1) && desc(&s, 1)->CS.Status == VIP_STATUS_DONE);
        } else {
            /* the VI broke: later sends complete flushed (or are refused) */
            VIP_VI_STATE st;
            VIP_VI_ATTRIBUTES q;
            VIP_BOOLEAN se, re;
            double t0 = now_ms();
            do {
                OK(VipQueryVi(s.vi, &st, &q, &se, &re));
                usleep(1000);
            } while (st != VIP_STATE_ERROR && now_ms() - t0 < WAIT);
            CHECK(st == VIP_STATE_ERROR);
            one_seg(desc(&s, 2), data(&s, 0), s.h, 8);
            VIP_RETURN rc = VipPostSend(s.vi, desc(&s, 2), s.h);
            CHECK(rc == VIP_INVALID_STATE);
        }
    }
    if (server) usleep(300 * 1000);
    teardown(&s);
}

/* The peer goes away without disconnecting: the survivor's wait ends and the error
 * callback hears VIP_ERROR_CONN_LOST. */
static void case_lost(int server) {
    struct side s;
    setup(&s, server, reliability(), NULL);
    if (!server) post_recv(&s, 0, 0, 64);
    connect_pair(&s, "lost", 100);
    if (server) {
        usleep(100 * 1000);
        _exit(0); /* no disconnect, no cleanup */
    }
    VIP_DESCRIPTOR *d = NULL;
    VIP_RETURN rc = VipRecvWait(s.vi, WAIT, &d);
    if (rc == VIP_SUCCESS) {
        CHECK(d == desc(&s, 0) && (d->CS.Status & VIP_STATUS_ERROR_MASK) != 0);
        rc = VipRecvWait(s.vi, WAIT, &d);
    }
    CHECK(rc == VIP_INVALID_STATE || rc == VIP_TIMEOUT);
    if (reliability() != VIP_SERVICE_UNRELIABLE || rc == VIP_INVALID_STATE)
        CHECK(async_errors[VIP_ERROR_CONN_LOST] >= 1);
    teardown(&s);
}

/* A server that rejects, then one whose VI's reliability level differs from the client's. */
static void case_reject(int server) {
    struct side s;
    setup(&s, server, server ? VIP_SERVICE_RELIABLE_DELIVERY : VIP_SERVICE_RELIABLE_RECEPTION, NULL);
    VIP_NET_ADDRESS *me = make_addr(s.nic, "reject");
    VIP_VI_ATTRIBUTES ra;
    if (server) {
        VIP_NET_ADDRESS *remote = malloc(sizeof(VIP_NET_ADDRESS) + 4 + 64);
        VIP_CONN_HANDLE conn;
        OK(VipConnectWait(s.nic, me, WAIT, remote, &ra, &conn));
        CHECK(ra.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION);
        OK(VipConnectReject(conn));
        EXPECT(VipConnectReject(conn), VIP_INVALID_PARAMETER);
        OK(VipConnectWait(s.nic, me, WAIT, remote, &ra, &conn));
        EXPECT(VipConnectAccept(conn, s.vi), VIP_INVALID_RELIABILITY_LEVEL);
        free(remote);
    } else {
        EXPECT(VipConnectRequest(s.vi, me, me, WAIT, &ra), VIP_REJECT);
        EXPECT(VipConnectRequest(s.vi, me, me, WAIT, &ra), VIP_REJECT);
    }
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES q;
    VIP_BOOLEAN se, re;
    OK(VipQueryVi(s.vi, &st, &q, &se, &re));
    CHECK(st == VIP_STATE_IDLE);
    free(me);
    teardown(&s);
}

/* Peer to peer: both sides request; one message each way. */
static void case_peer(int server) {
    struct side s;
    setup(&s, server, reliability(), NULL);
    VIP_NET_ADDRESS *a = make_addr(s.nic, server ? "peer-a" : "peer-b");
    VIP_NET_ADDRESS *b = make_addr(s.nic, server ? "peer-b" : "peer-a");
    VIP_VI_ATTRIBUTES ra;
    EXPECT(VipConnectPeerDone(s.vi, &ra), VIP_INVALID_STATE); /* nothing pending */
    EXPECT(VipConnectPeerRequest(s.vi, a, a, WAIT), VIP_INVALID_PARAMETER);
    post_recv(&s, 0, 0, 64);
    if (!server) usleep(300 * 1000); /* one side late: the other waits */
    OK(VipConnectPeerRequest(s.vi, a, b, WAIT));
    EXPECT(VipConnectPeerRequest(s.vi, a, b, WAIT), VIP_INVALID_STATE); /* one at a time */
    VIP_RETURN rc;
    int polls = 0;
    while ((rc = VipConnectPeerDone(s.vi, &ra)) == VIP_NOT_DONE) {
        polls++;
        usleep(1000);
    }
    OK(rc);
    CHECK(ra.ReliabilityLevel == reliability());
    EXPECT(VipConnectPeerWait(s.vi, &ra), VIP_INVALID_STATE); /* reported once */
    /* the receive is reported by VipRecvNotify, from a library thread */
    VIP_VI_HANDLE who = NULL;
    OK(VipRecvNotify(s.vi, &who, on_recv));
    EXPECT(VipRecvNotify(s.vi, &who, NULL), VIP_INVALID_PARAMETER);
    memcpy(data(&s, 100), server ? "from-a" : "from-b", 6);
    send_bytes(&s, 1, 100, 6);
    CHECK(next_send(&s) == desc(&s, 1));
    await_notified(3);
    VIP_DESCRIPTOR *r = notified_desc;
    CHECK(who == s.vi);
    CHECK(r == desc(&s, 0) && r->CS.Length == 6);
    CHECK(r->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE));
    CHECK(memcmp(data(&s, 0), server ? "from-b" : "from-a", 6) == 0);
    (void)polls;
    usleep(100 * 1000);
    free(a);
    free(b);
    teardown(&s);
}

/* MP_Lite pong's pattern, for the trace test: receives pre-posted before the connection
 * (four of 64 KiB, each reposted when consumed), three round trips of 8 B, both sides
 * sending 64 KiB at once into each other's pre-posted receives, an RDMA write with
 * immediate data of 64 KiB consuming one receive, a 1-byte goodbye; the receives still
 * posted at the end are flushed by the disconnect. Sends: client 3x8 + 65536 + 65536
 * (write), server 3x8 + 65536 + 16 (window) + 1. */
static void got(struct side *s, VIP_UINT32 len, VIP_UINT32 op) {
    VIP_DESCRIPTOR *r = next_recv(s);
    CHECK((r->CS.Status & VIP_STATUS_ERROR_MASK) == 0);
    CHECK((r->CS.Status & VIP_STATUS_OP_MASK) == op);
    if (op == VIP_STATUS_OP_RECEIVE) CHECK(r->CS.Length == len);
    int i = (int)(((char *)r - s->mem) / 1024);
    CHECK(i >= 0 && i < 4);
    post_recv(s, i, (size_t)i << 16, 65536);
}

static void sent(struct side *s, int i, size_t off, VIP_UINT32 len) {
    send_bytes(s, i, off, len);
    CHECK(next_send(s) == desc(s, i));
}

static void case_pong(int server) {
    struct side s;
    VIP_MEM_ATTRIBUTES rights = {NULL, VIP_TRUE, VIP_FALSE};
    setup(&s, server, reliability(), &rights);
    for (int i = 0; i < 4; i++) post_recv(&s, i, (size_t)i << 16, 65536);
    connect_pair(&s, "pong", 100);
    for (int k = 0; k < 3; k++) {
        if (server) {
            got(&s, 8, VIP_STATUS_OP_RECEIVE);
            sent(&s, 10, 1 << 20, 8);
        } else {
            sent(&s, 10, 1 << 20, 8);
            got(&s, 8, VIP_STATUS_OP_RECEIVE);
        }
    }
    /* both at once: each send goes into the other's pre-posted receive */
    send_bytes(&s, 11, 1 << 20, 65536);
    got(&s, 65536, VIP_STATUS_OP_RECEIVE);
    CHECK(next_send(&s) == desc(&s, 11));
    if (server) {
        struct window w = {(VIP_UINT64)(uintptr_t)data(&s, 2 << 20), s.h, s.h, 0};
        memcpy(data(&s, 1 << 20), &w, 16);
        sent(&s, 12, 1 << 20, 16);
        got(&s, 0, VIP_STATUS_OP_REMOTE_RDMA_WRITE);
        CHECK(same(data(&s, 2 << 20), 65536, 9));
        sent(&s, 13, 1 << 20, 1);
    } else {
        got(&s, 16, VIP_STATUS_OP_RECEIVE);
        struct window w;
        memcpy(&w, data(&s, 0), sizeof w); /* the first buffer holds the fifth message */
        VIP_DESCRIPTOR *d = desc(&s, 12);
        memset(d, 0, 1024);
        d->CS.Control = VIP_CONTROL_OP_RDMAWRITE | VIP_CONTROL_IMMEDIATE;
        d->CS.ImmediateData = 7;
        d->CS.SegCount = 2;
        d->DS[0].Remote.Data.AddressBits = w.addr;
        d->DS[0].Remote.Handle = w.h;
        fill(data(&s, 1 << 20), 65536, 9);
        d->DS[1].Local.Data.Address = data(&s, 1 << 20);
        d->DS[1].Local.Handle = s.h;
        d->DS[1].Local.Length = 65536;
        OK(VipPostSend(s.vi, d, s.h));
        CHECK(next_send(&s) == d);
        got(&s, 1, VIP_STATUS_OP_RECEIVE);
    }
    teardown(&s);
}

/* Issue 33: the server receives one message and then makes no VIPL call for 1.5 s (it
 * computes). The client's reliable send completes anyway, within a 1 s VipSendWait: the
 * server's ack keeper acknowledges for it. Before, the send completed only at the server's
 * next call, 1.5 s later, and a recording ended with the receive but not the send. */
static void case_quiet(int server) {
    struct side s;
    without_cq = 1; /* the receive taken by VipRecvWait, then nothing */
    setup(&s, server, reliability(), NULL);
    if (server) post_recv(&s, 0, 0, 64);
    connect_pair(&s, "quiet", 100);
    if (server) {
        VIP_DESCRIPTOR *d;
        OK(VipRecvWait(s.vi, WAIT, &d));
        CHECK(d == desc(&s, 0) && d->CS.Length == 11);
        CHECK(memcmp(data(&s, 0), "not waiting", 11) == 0);
        usleep(1500 * 1000); /* no call into the library meanwhile */
    } else {
        memcpy(data(&s, 0), "not waiting", 11);
        send_bytes(&s, 0, 0, 11);
        double t0 = now_ms();
        VIP_DESCRIPTOR *d;
        OK(VipSendWait(s.vi, 1000, &d));
        CHECK(d == desc(&s, 0) && (d->CS.Status & VIP_STATUS_DONE));
        CHECK(now_ms() - t0 < 1000);
    }
    teardown(&s);
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "server") && strcmp(argv[2], "client"))) {
        fprintf(stderr, "usage: pair CASE server|client\n");
        return 2;
    }
    int server = !strcmp(argv[2], "server");
    const char *c = argv[1];
    if (!strcmp(c, "data")) case_data(server);
    else if (!strcmp(c, "rdma")) case_rdma(server);
    else if (!strcmp(c, "errors")) case_errors(server);
    else if (!strcmp(c, "lost")) case_lost(server);
    else if (!strcmp(c, "reject")) case_reject(server);
    else if (!strcmp(c, "peer")) case_peer(server);
    else if (!strcmp(c, "pong")) case_pong(server);
    else if (!strcmp(c, "quiet")) case_quiet(server);
    else {
        fprintf(stderr, "pair: unknown case %s\n", c);
        return 2;
    }
    printf("pair %s %s: ok\n", c, argv[2]);
    return 0;
}
