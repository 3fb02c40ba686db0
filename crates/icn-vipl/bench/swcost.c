/* The software cost of a message through libvipl, the C twin of examples/swcost_rust.rs:
 * both VIs of one shm connection driven by this one thread (A sends, B receives and
 * answers, A receives), so everything counted is library work. A message larger than the
 * shm ring (256 KiB) needs its reader running while it is written, so beyond 64 KiB B
 * answers from a second thread. Run under callgrind for instruction counts per message
 * (bench/overhead.sh).
 *
 *   swcost MESSAGES SIZE */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vipl.h"

#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            fprintf(stderr, "swcost: %s:%d: %s\n", __FILE__, __LINE__, #c);              \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

struct end {
    VIP_VI_HANDLE vi;
    VIP_MEM_HANDLE h;
    char *mem;
    VIP_DESCRIPTOR *sd, *rd;
};

static VIP_NIC_HANDLE nic;
static VIP_PROTECTION_HANDLE ptag;
static VIP_NET_ADDRESS *addr;
static struct end a, b;
static size_t size;

static void make(struct end *e) {
    CHECK(posix_memalign((void **)&e->mem, 4096, 4096 + 2 * size) == 0);
    memset(e->mem, 3, 4096 + 2 * size);
    VIP_MEM_ATTRIBUTES ma = {ptag, VIP_FALSE, VIP_FALSE};
    CHECK(VipRegisterMem(nic, e->mem, 4096 + 2 * size, &ma, &e->h) == VIP_SUCCESS);
    VIP_VI_ATTRIBUTES va = {VIP_SERVICE_RELIABLE_DELIVERY, 1 << 30, NULL, ptag, VIP_FALSE, VIP_FALSE};
    CHECK(VipCreateVi(nic, &va, NULL, NULL, &e->vi) == VIP_SUCCESS);
    e->sd = (VIP_DESCRIPTOR *)e->mem;
    e->rd = (VIP_DESCRIPTOR *)(e->mem + 64);
}

static void post_recv(struct end *e) {
    VIP_DESCRIPTOR *d = e->rd;
    d->CS.Control = VIP_CONTROL_OP_SENDRECV;
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = e->mem + 4096 + size;
    d->DS[0].Local.Handle = e->h;
    d->DS[0].Local.Length = (VIP_UINT32)size;
    CHECK(VipPostRecv(e->vi, d, e->h) == VIP_SUCCESS);
}

static void post_send(struct end *e) {
    VIP_DESCRIPTOR *d = e->sd;
    d->CS.Control = VIP_CONTROL_OP_SENDRECV;
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = e->mem + 4096;
    d->DS[0].Local.Handle = e->h;
    d->DS[0].Local.Length = (VIP_UINT32)size;
    CHECK(VipPostSend(e->vi, d, e->h) == VIP_SUCCESS);
}

static void recv_wait(struct end *e) {
    VIP_DESCRIPTOR *d;
    CHECK(VipRecvWait(e->vi, 30000, &d) == VIP_SUCCESS);
    CHECK(d == e->rd && !(d->CS.Status & VIP_STATUS_ERROR_MASK) && d->CS.Length == size);
}

static void reap(struct end *e) {
    VIP_DESCRIPTOR *d;
    while (VipSendDone(e->vi, &d) == VIP_SUCCESS) CHECK(!(d->CS.Status & VIP_STATUS_ERROR_MASK));
}

/* B's half of the loop, on its own thread (large messages). */
static void *answer_b(void *arg) {
    long n = *(long *)arg;
    for (long i = 0; i < n; i++) {
        recv_wait(&b);
        post_recv(&b);
        post_send(&b);
        if (i % 32 == 31) reap(&b);
    }
    return NULL;
}

static void *accept_b(void *arg) {
    (void)arg;
    VIP_CONN_HANDLE conn;
    VIP_VI_ATTRIBUTES ra;
    CHECK(VipConnectWait(nic, addr, 30000, NULL, &ra, &conn) == VIP_SUCCESS);
    CHECK(VipConnectAccept(conn, b.vi) == VIP_SUCCESS);
    return NULL;
}

int main(int argc, char **argv) {
    CHECK(argc == 3);
    long n = atol(argv[1]);
    size = (size_t)atol(argv[2]);
    CHECK(VipOpenNic("/dev/via_lo", &nic) == VIP_SUCCESS);
    CHECK(VipCreatePtag(nic, &ptag) == VIP_SUCCESS);
    make(&a);
    make(&b);
    addr = malloc(sizeof(VIP_NET_ADDRESS) + 4 + 64);
    addr->HostAddressLen = 4;
    memcpy(addr->HostAddress, "\x7f\0\0\x01", 4);
    int len = snprintf((char *)addr->HostAddress + 4, 60, "swcost-%d", (int)getpid());
    addr->DiscriminatorLen = (VIP_UINT16)len;
    pthread_t t;
    pthread_create(&t, NULL, accept_b, NULL);
    VIP_VI_ATTRIBUTES ra;
    CHECK(VipConnectRequest(a.vi, addr, addr, 30000, &ra) == VIP_SUCCESS);
    pthread_join(t, NULL);
    post_recv(&a);
    post_recv(&b);
    if (size > 65536) {
        CHECK(pthread_create(&t, NULL, answer_b, &n) == 0);
        for (long i = 0; i < n; i++) {
            post_send(&a);
            recv_wait(&a);
            post_recv(&a);
            if (i % 32 == 31) reap(&a);
        }
        pthread_join(t, NULL);
    } else {
        for (long i = 0; i < n; i++) {
            post_send(&a);
            recv_wait(&b);
            post_recv(&b);
            post_send(&b);
            recv_wait(&a);
            post_recv(&a);
            if (i % 32 == 31) {
                reap(&a);
                reap(&b);
            }
        }
    }
    printf("swcost: %ld round trips of %zu B\n", n, size);
    return 0;
}
