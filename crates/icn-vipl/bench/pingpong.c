/* A VIPL pingpong written like `icnlab via pingpong`: for each size, 100 untimed and N timed
 * round trips; prints the mean one-way latency (elapsed / 2N) and the bandwidth. Receives
 * stay posted for the largest size, one deep on the initiator and two deep on the echoer,
 * each side re-posting after its send; completions are polled with VipRecvDone /
 * VipSendDone (the fast path; VipRecvWait blocks with icn-via's spin-then-sleep policy).
 *
 *   pingpong server|client SIZE[,SIZE...] ITERATIONS
 *
 * Device from VIPL_DEVICE (default /dev/via_lo), provider from ICN_VIPL_PROVIDER. Build:
 *   cc -O2 -I crates/icn-vipl/include bench/pingpong.c -L target/release -lvipl */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vipl.h"

#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            fprintf(stderr, "pingpong: %s:%d: %s\n", __FILE__, __LINE__, #c);            \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int blocking; /* PINGPONG_WAIT=1: VipRecvWait / VipSendWait instead of polling */
static VIP_VI_HANDLE vi;
static VIP_MEM_HANDLE h;
static VIP_DESCRIPTOR *sd, *rd[2];
static char *sbuf, *rbuf[2];

static void post_recv(int i, VIP_UINT32 len) {
    memset(rd[i], 0, sizeof *rd[i]);
    rd[i]->CS.SegCount = 1;
    rd[i]->DS[0].Local.Data.Address = rbuf[i];
    rd[i]->DS[0].Local.Handle = h;
    rd[i]->DS[0].Local.Length = len;
    CHECK(VipPostRecv(vi, rd[i], h) == VIP_SUCCESS);
}

static void send_and_reap(VIP_UINT32 len) {
    sd->CS.Control = VIP_CONTROL_OP_SENDRECV;
    sd->CS.SegCount = 1;
    sd->DS[0].Local.Data.Address = sbuf;
    sd->DS[0].Local.Handle = h;
    sd->DS[0].Local.Length = len;
    CHECK(VipPostSend(vi, sd, h) == VIP_SUCCESS);
    VIP_DESCRIPTOR *d;
    VIP_RETURN rc;
    if (blocking) rc = VipSendWait(vi, VIP_INFINITE, &d);
    else while ((rc = VipSendDone(vi, &d)) == VIP_NOT_DONE) {}
    CHECK(rc == VIP_SUCCESS && !(d->CS.Status & VIP_STATUS_ERROR_MASK));
}

static VIP_DESCRIPTOR *recv_one(void) {
    VIP_DESCRIPTOR *d;
    VIP_RETURN rc;
    if (blocking) rc = VipRecvWait(vi, VIP_INFINITE, &d);
    else while ((rc = VipRecvDone(vi, &d)) == VIP_NOT_DONE) {}
    CHECK(rc == VIP_SUCCESS && !(d->CS.Status & VIP_STATUS_ERROR_MASK));
    return d;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: pingpong server|client SIZE[,SIZE...] ITERATIONS\n");
        return 2;
    }
    int server = !strcmp(argv[1], "server");
    long sizes[64];
    int n = 0;
    long max = 0;
    for (char *s = strtok(argv[2], ","); s && n < 64; s = strtok(NULL, ",")) {
        sizes[n] = atol(s);
        if (sizes[n] > max) max = sizes[n];
        n++;
    }
    long iters = atol(argv[3]);
    blocking = getenv("PINGPONG_WAIT") && getenv("PINGPONG_WAIT")[0] == '1';
    const char *dev = getenv("VIPL_DEVICE") ? getenv("VIPL_DEVICE") : "/dev/via_lo";
    VIP_NIC_HANDLE nic;
    CHECK(VipOpenNic(dev, &nic) == VIP_SUCCESS);
    VIP_PROTECTION_HANDLE ptag;
    CHECK(VipCreatePtag(nic, &ptag) == VIP_SUCCESS);
    size_t span = 4096 + 3 * (size_t)(max + 64);
    char *mem;
    CHECK(posix_memalign((void **)&mem, 4096, span) == 0);
    memset(mem, 1, span);
    VIP_MEM_ATTRIBUTES ma = {ptag, VIP_FALSE, VIP_FALSE};
    CHECK(VipRegisterMem(nic, mem, span, &ma, &h) == VIP_SUCCESS);
    sd = (VIP_DESCRIPTOR *)mem;
    rd[0] = (VIP_DESCRIPTOR *)(mem + 64);
    rd[1] = (VIP_DESCRIPTOR *)(mem + 128);
    sbuf = mem + 4096;
    rbuf[0] = sbuf + max + 64;
    rbuf[1] = rbuf[0] + max + 64;
    VIP_VI_ATTRIBUTES va = {VIP_SERVICE_RELIABLE_DELIVERY, 1 << 30, NULL, ptag, VIP_FALSE, VIP_FALSE};
    CHECK(VipCreateVi(nic, &va, NULL, NULL, &vi) == VIP_SUCCESS);
    VIP_NIC_ATTRIBUTES na;
    CHECK(VipQueryNic(nic, &na) == VIP_SUCCESS);
    VIP_NET_ADDRESS *addr = malloc(sizeof(VIP_NET_ADDRESS) + 4 + 64);
    addr->HostAddressLen = 4;
    memcpy(addr->HostAddress, na.LocalNicAddress, 4);
    const char *disc = getenv("PINGPONG_DISC") ? getenv("PINGPONG_DISC") : "vipl-pingpong";
    addr->DiscriminatorLen = (VIP_UINT16)strlen(disc);
    memcpy(addr->HostAddress + 4, disc, strlen(disc));
    post_recv(0, (VIP_UINT32)max);
    if (server) post_recv(1, (VIP_UINT32)max);
    VIP_VI_ATTRIBUTES ra;
    if (server) {
        VIP_CONN_HANDLE conn;
        CHECK(VipConnectWait(nic, addr, 30000, addr, &ra, &conn) == VIP_SUCCESS);
        CHECK(VipConnectAccept(conn, vi) == VIP_SUCCESS);
    } else {
        CHECK(VipConnectRequest(vi, addr, addr, 30000, &ra) == VIP_SUCCESS);
    }
    int next = 0; /* which posted receive the next message lands in */
    for (int k = 0; k < n; k++) {
        VIP_UINT32 len = (VIP_UINT32)sizes[k];
        long total = 100 + iters;
        double t0 = 0;
        for (long i = 0; i < total; i++) {
            if (i == 100) t0 = now_us();
            if (!server) {
                send_and_reap(len);
                VIP_DESCRIPTOR *d = recv_one();
                CHECK(d->CS.Length == len);
                post_recv(0, (VIP_UINT32)max);
            } else {
                VIP_DESCRIPTOR *d = recv_one();
                CHECK(d == rd[next] && d->CS.Length == len);
                send_and_reap(len);
                post_recv(next, (VIP_UINT32)max);
                next ^= 1;
            }
        }
        double us = (now_us() - t0) / (2.0 * iters);
        if (!server) printf("%ld %.3f %.1f\n", sizes[k], us, len / us);
    }
    CHECK(VipDisconnect(vi) == VIP_SUCCESS || 1);
    return 0;
}
