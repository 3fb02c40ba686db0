/* libvipl conformance, two processes: connection set-up (the client starts first and its
 * VipConnectRequest waits for the server), sends with several segments and immediate data,
 * descriptor chains, CQs and notify calls, RDMA write with immediate data and RDMA read,
 * the error and status codes of failed transfers, rejection, peer-to-peer connection.
 * Usage: pair CASE server|client (data|rdma|errors|lost|reject|peer). */
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

/* NIC, tag, registered memory, a receive CQ, a VI of level `level`. */
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
    OK(VipCreateVi(s->nic, &a, NULL, s->cq, &s->vi));
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
    OK(VipQueryVi(s->vi, &st, &q, &se, &re));
    if (st != VIP_STATE_IDLE) OK(VipDisconnect(s->vi));
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

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "server") && strcmp(argv[2], "client"))) {
        fprintf(stderr, "usage: pair CASE server|client\n");
        return 2;
    }
    int server = !strcmp(argv[2], "server");
    const char *c = argv[1];
    if (!strcmp(c, "data")) case_data(server);
    else {
        fprintf(stderr, "pair: unknown case %s\n", c);
        return 2;
    }
    printf("pair %s %s: ok\n", c, argv[2]);
    return 0;
}
