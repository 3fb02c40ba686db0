/* Helpers of the libvipl conformance suite (the C programs in tests/c, run by tests/c_suite.rs). */
#ifndef SUITE_H
#define SUITE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vipl.h"

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#define EXPECT(call, code)                                                                \
    do {                                                                                  \
        VIP_RETURN rc_ = (call);                                                          \
        if (rc_ != (code)) {                                                              \
            fprintf(stderr, "%s:%d: %s returned %d, expected %s (%d)\n", __FILE__,        \
                    __LINE__, #call, (int)rc_, #code, (int)(code));                       \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#define OK(call) EXPECT(call, VIP_SUCCESS)

static inline double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The device every case opens: VIPL_DEVICE, default /dev/via_lo (the provider comes from
 * ICN_VIPL_PROVIDER, set by the harness). */
static inline const char *device(void) {
    const char *d = getenv("VIPL_DEVICE");
    return d ? d : "/dev/via_lo";
}

/* An address: this NIC's host address and a discriminator made of the case name and the
 * harness's run id (so concurrent runs never meet). */
static inline VIP_NET_ADDRESS *make_addr(VIP_NIC_HANDLE nic, const char *tag) {
    VIP_NIC_ATTRIBUTES a;
    OK(VipQueryNic(nic, &a));
    char disc[64];
    const char *run = getenv("VIPL_RUN");
    int n = snprintf(disc, sizeof disc, "%s/%s", run ? run : "0", tag);
    CHECK(n > 0 && n < 64);
    VIP_NET_ADDRESS *addr = malloc(sizeof(VIP_NET_ADDRESS) + a.NicAddressLen + 64);
    addr->HostAddressLen = a.NicAddressLen;
    addr->DiscriminatorLen = (VIP_UINT16)n;
    memcpy(addr->HostAddress, a.LocalNicAddress, a.NicAddressLen);
    memcpy(addr->HostAddress + a.NicAddressLen, disc, (size_t)n);
    return addr;
}

/* 64-byte aligned, zeroed memory. */
static inline void *aligned(size_t n) {
    void *p = NULL;
    CHECK(posix_memalign(&p, 64, n) == 0);
    memset(p, 0, n);
    return p;
}

/* The reliability level named by VIPL_RELIABILITY (u, d, r; default r). */
static inline VIP_RELIABILITY_LEVEL reliability(void) {
    const char *r = getenv("VIPL_RELIABILITY");
    if (r && r[0] == 'u') return VIP_SERVICE_UNRELIABLE;
    if (r && r[0] == 'd') return VIP_SERVICE_RELIABLE_DELIVERY;
    return VIP_SERVICE_RELIABLE_RECEPTION;
}

static inline VIP_VI_ATTRIBUTES vi_attrs(VIP_PROTECTION_HANDLE ptag, VIP_RELIABILITY_LEVEL r) {
    VIP_VI_ATTRIBUTES a;
    memset(&a, 0, sizeof a);
    a.ReliabilityLevel = r;
    a.MaxTransferSize = 1 << 20;
    a.Ptag = ptag;
    a.EnableRdmaWrite = VIP_TRUE;
    a.EnableRdmaRead = r != VIP_SERVICE_UNRELIABLE;
    return a;
}

#ifndef VIPL_CONTROL_DATA_NAMES
/* A one-segment send/receive descriptor over `len` bytes at `buf`. */
static inline void one_seg(VIP_DESCRIPTOR *d, void *buf, VIP_MEM_HANDLE h, VIP_UINT32 len) {
    memset(d, 0, sizeof *d);
    d->CS.Control = VIP_CONTROL_OP_SENDRECV;
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = buf;
    d->DS[0].Local.Handle = h;
    d->DS[0].Local.Length = len;
}
#endif

/* Asynchronous errors seen by the suite's error callback. */
static int async_errors[16];
static void count_errors(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *e) {
    (void)ctx;
    if ((unsigned)e->ErrorCode < 16) async_errors[e->ErrorCode]++;
}

#endif
