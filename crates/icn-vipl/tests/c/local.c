/* libvipl conformance, one process: NIC, protection tags, memory, VIs, descriptors refused
 * at post, CQs, the name service, timeouts. Usage: local CASE (nic|mem|vi|post|cq|ns|timeout). */
#include <sys/mman.h>

#include "suite.h"

static VIP_NIC_HANDLE open_nic(void) {
    VIP_NIC_HANDLE nic = NULL;
    OK(VipOpenNic(device(), &nic));
    return nic;
}

static void case_nic(void) {
    VIP_NIC_HANDLE nic = NULL;
    EXPECT(VipOpenNic("/dev/nonesuch", &nic), VIP_INVALID_PARAMETER);
    EXPECT(VipOpenNic("/dev/via_nonesuch9", &nic), VIP_INVALID_PARAMETER);
    EXPECT(VipOpenNic(NULL, &nic), VIP_INVALID_PARAMETER);
    EXPECT(VipOpenNic(device(), NULL), VIP_INVALID_PARAMETER);
    nic = open_nic();
    VIP_NIC_ATTRIBUTES a;
    OK(VipQueryNic(nic, &a));
    CHECK(strcmp(a.Name, device()) == 0);
    CHECK(a.NicAddressLen == 4);
    if (strcmp(device(), "/dev/via_lo") == 0)
        CHECK(memcmp(a.LocalNicAddress, "\x7f\0\0\x01", 4) == 0);
    CHECK(a.ThreadSafe == VIP_TRUE);
    CHECK(a.MaxDiscriminatorLen == 64);
    CHECK(a.MaxSegmentsPerDesc == 16);
    CHECK(a.MaxTransferSize == (1UL << 30));
    CHECK(a.MaxRegisterBytes == (1UL << 30));
    CHECK(a.MaxDescriptorsPerQueue == 4096);
    CHECK(a.ReliabilityLevelSupport == (VIP_SERVICE_UNRELIABLE | VIP_SERVICE_RELIABLE_DELIVERY |
                                        VIP_SERVICE_RELIABLE_RECEPTION));
    CHECK(a.RDMAReadSupport == (VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_RELIABLE_RECEPTION));
    EXPECT(VipQueryNic(nic, NULL), VIP_INVALID_PARAMETER);
    VIP_AUTODISCOVERY_LIST l = {7, NULL, 7};
    OK(VipQuerySystemManagementInfo(nic, VIP_SMI_AUTODISCOVERY, &l));
    CHECK(l.NumberOfHops == 0 && l.NumAdAddrs == 0);
    EXPECT(VipQuerySystemManagementInfo(nic, 2, &l), VIP_INVALID_PARAMETER);
    OK(VipErrorCallback(nic, NULL, count_errors));
    OK(VipErrorCallback(nic, NULL, NULL));
    /* a handle of another kind, null, closed */
    VIP_PROTECTION_HANDLE ptag;
    OK(VipCreatePtag(nic, &ptag));
    EXPECT(VipQueryNic(ptag, &a), VIP_INVALID_PARAMETER);
    EXPECT(VipQueryNic(NULL, &a), VIP_INVALID_PARAMETER);
    OK(VipDestroyPtag(nic, ptag));
    OK(VipCloseNic(nic));
    EXPECT(VipQueryNic(nic, &a), VIP_INVALID_PARAMETER);
    EXPECT(VipCloseNic(nic), VIP_INVALID_PARAMETER);
}

static void case_mem(void) {
    VIP_NIC_HANDLE nic = open_nic(), other = open_nic();
    VIP_PROTECTION_HANDLE ptag, foreign;
    OK(VipCreatePtag(nic, &ptag));
    OK(VipCreatePtag(other, &foreign));
    EXPECT(VipCreatePtag(nic, NULL), VIP_INVALID_PARAMETER);
    EXPECT(VipDestroyPtag(nic, foreign), VIP_INVALID_PTAG);
    char *buf = aligned(8192);
    VIP_MEM_ATTRIBUTES ma = {ptag, VIP_TRUE, VIP_FALSE};
    VIP_MEM_HANDLE h;
    EXPECT(VipRegisterMem(nic, buf, 0, &ma, &h), VIP_INVALID_PARAMETER);
    EXPECT(VipRegisterMem(nic, NULL, 64, &ma, &h), VIP_INVALID_PARAMETER);
    EXPECT(VipRegisterMem(nic, buf, 64, NULL, &h), VIP_INVALID_PARAMETER);
    EXPECT(VipRegisterMem(nic, buf, (1UL << 30) + 1, &ma, &h), VIP_ERROR_RESOURCE);
    VIP_MEM_ATTRIBUTES bad = {foreign, VIP_FALSE, VIP_FALSE};
    EXPECT(VipRegisterMem(nic, buf, 64, &bad, &h), VIP_INVALID_PTAG);
    bad.Ptag = NULL;
    EXPECT(VipRegisterMem(nic, buf, 64, &bad, &h), VIP_INVALID_PTAG);
    OK(VipRegisterMem(nic, buf, 8192, &ma, &h));
    EXPECT(VipDestroyPtag(nic, ptag), VIP_INVALID_STATE); /* in use */
    VIP_MEM_ATTRIBUTES q;
    OK(VipQueryMem(nic, buf + 100, h, &q));
    CHECK(q.Ptag == ptag && q.EnableRdmaWrite == VIP_TRUE && q.EnableRdmaRead == VIP_FALSE);
    EXPECT(VipQueryMem(nic, buf + 8192, h, &q), VIP_INVALID_PARAMETER);
    EXPECT(VipQueryMem(nic, buf, h + 1000, &q), VIP_INVALID_PARAMETER);
    VIP_MEM_ATTRIBUTES rd = {ptag, VIP_FALSE, VIP_TRUE};
    OK(VipSetMemAttributes(nic, buf, h, &rd));
    OK(VipQueryMem(nic, buf, h, &q));
    CHECK(q.EnableRdmaWrite == VIP_FALSE && q.EnableRdmaRead == VIP_TRUE);
    rd.Ptag = foreign;
    EXPECT(VipSetMemAttributes(nic, buf, h, &rd), VIP_INVALID_PTAG);
    EXPECT(VipDeregisterMem(nic, buf + 1, h), VIP_INVALID_PARAMETER);
    OK(VipDeregisterMem(nic, buf, h));
    EXPECT(VipDeregisterMem(nic, buf, h), VIP_INVALID_PARAMETER);
    EXPECT(VipQueryMem(nic, buf, h, &q), VIP_INVALID_PARAMETER);
    OK(VipDestroyPtag(nic, ptag));
    EXPECT(VipDestroyPtag(nic, ptag), VIP_INVALID_PARAMETER);
    OK(VipDestroyPtag(other, foreign));
    free(buf);
    OK(VipCloseNic(other));
    OK(VipCloseNic(nic));
}

static void case_vi(void) {
    VIP_NIC_HANDLE nic = open_nic(), other = open_nic();
    VIP_PROTECTION_HANDLE ptag, foreign;
    OK(VipCreatePtag(nic, &ptag));
    OK(VipCreatePtag(other, &foreign));
    VIP_VI_HANDLE vi;
    VIP_VI_ATTRIBUTES a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    EXPECT(VipCreateVi(nic, NULL, NULL, NULL, &vi), VIP_INVALID_PARAMETER);
    a.ReliabilityLevel = 0;
    EXPECT(VipCreateVi(nic, &a, NULL, NULL, &vi), VIP_INVALID_RELIABILITY_LEVEL);
    a.ReliabilityLevel = VIP_SERVICE_UNRELIABLE | VIP_SERVICE_RELIABLE_DELIVERY;
    EXPECT(VipCreateVi(nic, &a, NULL, NULL, &vi), VIP_INVALID_RELIABILITY_LEVEL);
    a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    a.MaxTransferSize = 0;
    EXPECT(VipCreateVi(nic, &a, NULL, NULL, &vi), VIP_INVALID_MTU);
    a.MaxTransferSize = (1UL << 30) + 1;
    EXPECT(VipCreateVi(nic, &a, NULL, NULL, &vi), VIP_INVALID_MTU);
    a = vi_attrs(foreign, VIP_SERVICE_RELIABLE_DELIVERY);
    EXPECT(VipCreateVi(nic, &a, NULL, NULL, &vi), VIP_INVALID_PTAG);
    a = vi_attrs(ptag, VIP_SERVICE_UNRELIABLE);
    a.EnableRdmaRead = VIP_TRUE;
    EXPECT(VipCreateVi(nic, &a, NULL, NULL, &vi), VIP_INVALID_RDMAREAD);
    a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    a.QoS = (VIP_QOS)0x1; /* not defined by the specification: ignored */
    OK(VipCreateVi(nic, &a, NULL, NULL, &vi));
    EXPECT(VipDestroyPtag(nic, ptag), VIP_INVALID_STATE);
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES q;
    VIP_BOOLEAN se, re;
    OK(VipQueryVi(vi, &st, &q, &se, &re));
    CHECK(st == VIP_STATE_IDLE && se == VIP_TRUE && re == VIP_TRUE);
    CHECK(q.ReliabilityLevel == VIP_SERVICE_RELIABLE_DELIVERY && q.Ptag == ptag);
    CHECK(q.MaxTransferSize == (1UL << 20) && q.EnableRdmaWrite && q.EnableRdmaRead);
    EXPECT(VipQueryVi(vi, NULL, &q, &se, &re), VIP_INVALID_PARAMETER);
    a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_RECEPTION);
    a.MaxTransferSize = 4096;
    OK(VipSetViAttributes(vi, &a));
    OK(VipQueryVi(vi, &st, &q, &se, &re));
    CHECK(q.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION && q.MaxTransferSize == 4096);
    a.ReliabilityLevel = 9;
    EXPECT(VipSetViAttributes(vi, &a), VIP_INVALID_RELIABILITY_LEVEL);
    EXPECT(VipDisconnect(vi), VIP_INVALID_STATE); /* idle */
    EXPECT(VipDestroyVi(nic), VIP_INVALID_PARAMETER);
    OK(VipDestroyVi(vi));
    EXPECT(VipDestroyVi(vi), VIP_INVALID_PARAMETER);
    OK(VipDestroyPtag(nic, ptag));
    OK(VipDestroyPtag(other, foreign));
    OK(VipCloseNic(other));
    OK(VipCloseNic(nic));
}

/* Descriptors checked at post: alignment, registration, format (with the status word and
 * the error callback), state. */
static void case_post(void) {
    VIP_NIC_HANDLE nic = open_nic();
    OK(VipErrorCallback(nic, NULL, count_errors));
    VIP_PROTECTION_HANDLE ptag, ptag2;
    OK(VipCreatePtag(nic, &ptag));
    OK(VipCreatePtag(nic, &ptag2));
    VIP_VI_ATTRIBUTES a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    VIP_VI_HANDLE vi;
    OK(VipCreateVi(nic, &a, NULL, NULL, &vi));
    char *mem = aligned(4096), *mem2 = aligned(4096);
    VIP_MEM_ATTRIBUTES ma = {ptag, VIP_FALSE, VIP_FALSE}, ma2 = {ptag2, VIP_FALSE, VIP_FALSE};
    VIP_MEM_HANDLE h, h2;
    OK(VipRegisterMem(nic, mem, 4096, &ma, &h));
    OK(VipRegisterMem(nic, mem2, 4096, &ma2, &h2));
    VIP_DESCRIPTOR *d = (VIP_DESCRIPTOR *)mem;
    one_seg(d, mem + 1024, h, 64);
    /* sends need a connection */
    EXPECT(VipPostSend(vi, d, h), VIP_INVALID_STATE);
    EXPECT(VipPostSend(vi, NULL, h), VIP_INVALID_PARAMETER);
    EXPECT(VipPostRecv(vi, (VIP_DESCRIPTOR *)(mem + 8), h), VIP_INVALID_PARAMETER); /* misaligned */
    EXPECT(VipPostRecv(vi, d, h + 77), VIP_INVALID_PARAMETER); /* unknown region */
    VIP_DESCRIPTOR *d2 = (VIP_DESCRIPTOR *)mem2;
    one_seg(d2, mem2 + 1024, h2, 64);
    EXPECT(VipPostRecv(vi, d2, h2), VIP_INVALID_PARAMETER); /* region of another tag */
    VIP_DESCRIPTOR *last = (VIP_DESCRIPTOR *)(mem + 4096 - 64);
    one_seg(last, mem, h, 8);
    last->CS.SegCount = 3; /* segments would run past the region */
    EXPECT(VipPostRecv(vi, last, h), VIP_INVALID_PARAMETER);
    /* format errors: reserved operation, RDMA on the receive queue, too many segments */
    one_seg(d, mem + 1024, h, 64);
    d->CS.Control = VIP_CONTROL_OP_RESERVED;
    EXPECT(VipPostRecv(vi, d, h), VIP_DESCRIPTOR_ERROR);
    CHECK(d->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_FORMAT_ERROR));
    one_seg(d, mem + 1024, h, 64);
    d->CS.Control = VIP_CONTROL_OP_RDMAWRITE;
    EXPECT(VipPostRecv(vi, d, h), VIP_DESCRIPTOR_ERROR);
    one_seg(d, mem + 1024, h, 64);
    d->CS.SegCount = 18;
    EXPECT(VipPostRecv(vi, d, h), VIP_DESCRIPTOR_ERROR);
    one_seg(d, mem + 1024, h, 64);
    d->CS.Control = 0x0100; /* reserved bit */
    EXPECT(VipPostRecv(vi, d, h), VIP_DESCRIPTOR_ERROR);
    CHECK(async_errors[VIP_ERROR_POST_DESC] == 4);
    /* a segment outside its region: the descriptor completes with a protection error (and
     * the error callback hears VIP_ERROR_COMP_PROT) */
    VIP_DESCRIPTOR *p = (VIP_DESCRIPTOR *)(mem + 512);
    one_seg(p, mem + 4000, h, 200);
    OK(VipPostRecv(vi, p, h));
    VIP_DESCRIPTOR *got = NULL;
    OK(VipRecvDone(vi, &got));
    CHECK(got == p);
    CHECK(p->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_PROTECTION_ERROR | VIP_STATUS_OP_RECEIVE));
    CHECK(async_errors[VIP_ERROR_COMP_PROT] == 1);
    /* receives may be posted before connecting */
    one_seg(d, mem + 1024, h, 64);
    d->CS.Status = 0xFFFF;
    OK(VipPostRecv(vi, d, h));
    CHECK(d->CS.Status == 0);
    /* a VI remembers the region it last posted from: a change of the region's tag, and its
     * deregistration, are seen by the next post all the same */
    OK(VipSetMemAttributes(nic, mem2, h2, &ma));
    OK(VipPostRecv(vi, d2, h2)); /* now of the VI's tag */
    OK(VipSetMemAttributes(nic, mem2, h2, &ma2));
    EXPECT(VipPostRecv(vi, d2, h2), VIP_INVALID_PARAMETER);
    char *mem3 = aligned(4096);
    VIP_MEM_HANDLE h3;
    OK(VipRegisterMem(nic, mem3, 4096, &ma, &h3));
    VIP_DESCRIPTOR *d3 = (VIP_DESCRIPTOR *)mem3;
    one_seg(d3, mem + 2048, h, 64);
    OK(VipPostRecv(vi, d3, h3));
    /* not while the posted descriptor lies there: its status is written there later */
    EXPECT(VipDeregisterMem(nic, mem3, h3), VIP_INVALID_PARAMETER);
    char *mem4 = aligned(4096);
    VIP_MEM_HANDLE h4;
    OK(VipRegisterMem(nic, mem4, 4096, &ma, &h4));
    VIP_DESCRIPTOR *d4 = (VIP_DESCRIPTOR *)mem4, *reaped = NULL;
    one_seg(d4, mem4 + 4000, h4, 200); /* outside the region: completes at once, in error */
    OK(VipPostRecv(vi, d4, h4));
    OK(VipRecvDone(vi, &reaped));
    CHECK(reaped == d4);
    OK(VipDeregisterMem(nic, mem4, h4)); /* reaped: nothing of it pending */
    EXPECT(VipPostRecv(vi, d4, h4), VIP_INVALID_PARAMETER);
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES q;
    VIP_BOOLEAN se, re;
    OK(VipQueryVi(vi, &st, &q, &se, &re));
    CHECK(st == VIP_STATE_IDLE && se == VIP_TRUE && re == VIP_FALSE);
    VIP_DESCRIPTOR *out = NULL;
    EXPECT(VipRecvDone(vi, &out), VIP_NOT_DONE);
    EXPECT(VipSendDone(vi, &out), VIP_NOT_DONE);
    EXPECT(VipRecvDone(vi, NULL), VIP_INVALID_PARAMETER);
    OK(VipDestroyVi(vi));
    OK(VipDeregisterMem(nic, mem3, h3)); /* its descriptor went with the VI */
    OK(VipDeregisterMem(nic, mem, h));
    OK(VipDeregisterMem(nic, mem2, h2));
    OK(VipDestroyPtag(nic, ptag));
    OK(VipDestroyPtag(nic, ptag2));
    OK(VipCloseNic(nic));
    free(mem);
    free(mem2);
    free(mem3);
    free(mem4);
}

static void case_cq(void) {
    VIP_NIC_HANDLE nic = open_nic(), other = open_nic();
    VIP_CQ_HANDLE cq, cq2, foreign;
    EXPECT(VipCreateCQ(nic, 0, &cq), VIP_INVALID_PARAMETER);
    EXPECT(VipCreateCQ(nic, (1UL << 20) + 1, &cq), VIP_INVALID_PARAMETER);
    EXPECT(VipCreateCQ(nic, 8, NULL), VIP_INVALID_PARAMETER);
    OK(VipCreateCQ(nic, 8, &cq));
    OK(VipCreateCQ(nic, 8, &cq2));
    OK(VipCreateCQ(other, 8, &foreign));
    VIP_PROTECTION_HANDLE ptag;
    OK(VipCreatePtag(nic, &ptag));
    VIP_VI_ATTRIBUTES a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    VIP_VI_HANDLE vi;
    EXPECT(VipCreateVi(nic, &a, foreign, NULL, &vi), VIP_INVALID_PARAMETER);
    OK(VipCreateVi(nic, &a, cq, cq2, &vi));
    EXPECT(VipDestroyCQ(cq), VIP_INVALID_STATE);
    EXPECT(VipDestroyCQ(cq2), VIP_INVALID_STATE);
    VIP_VI_HANDLE who;
    VIP_BOOLEAN recvq;
    EXPECT(VipCQDone(cq, &who, &recvq), VIP_NOT_DONE);
    EXPECT(VipCQDone(cq, NULL, &recvq), VIP_INVALID_PARAMETER);
    double t0 = now_ms();
    EXPECT(VipCQWait(cq, 50, &who, &recvq), VIP_TIMEOUT);
    CHECK(now_ms() - t0 >= 49);
    OK(VipResizeCQ(cq, 16));
    EXPECT(VipResizeCQ(cq, 0), VIP_INVALID_PARAMETER);
    OK(VipDestroyVi(vi));
    OK(VipDestroyCQ(cq));
    OK(VipDestroyCQ(cq2));
    EXPECT(VipDestroyCQ(cq), VIP_INVALID_PARAMETER);
    OK(VipDestroyCQ(foreign));
    OK(VipDestroyPtag(nic, ptag));
    OK(VipCloseNic(other));
    OK(VipCloseNic(nic));
}

static void case_ns(void) {
    VIP_NIC_HANDLE nic = open_nic();
    VIP_NET_ADDRESS *addr = malloc(sizeof(VIP_NET_ADDRESS) + 4 + 64);
    EXPECT(VipNSGetHostByName(nic, "localhost", addr, 0), VIP_ERROR_NAMESERVICE);
    EXPECT(VipNSShutdown(nic), VIP_ERROR_NAMESERVICE);
    OK(VipNSInit(nic, NULL));
    addr->DiscriminatorLen = 3;
    OK(VipNSGetHostByName(nic, "localhost", addr, 0));
    CHECK(addr->HostAddressLen == 4 && memcmp(addr->HostAddress, "\x7f\0\0\x01", 4) == 0);
    CHECK(addr->DiscriminatorLen == 3); /* left alone */
    EXPECT(VipNSGetHostByName(nic, "localhost", addr, 9), VIP_ERROR_NAMESERVICE);
    EXPECT(VipNSGetHostByName(nic, "no-such-host.invalid", addr, 0), VIP_ERROR_NAMESERVICE);
    EXPECT(VipNSGetHostByName(nic, NULL, addr, 0), VIP_INVALID_PARAMETER);
    addr->DiscriminatorLen = 0;
    char name[256];
    VIP_ULONG len = sizeof name;
    OK(VipNSGetHostByAddr(nic, addr, name, &len));
    CHECK(len == strlen(name) + 1 && len > 1);
    /* the name maps back to the address */
    VIP_NET_ADDRESS *back = malloc(sizeof(VIP_NET_ADDRESS) + 4 + 64);
    OK(VipNSGetHostByName(nic, name, back, 0));
    CHECK(memcmp(back->HostAddress, "\x7f\0\0\x01", 4) == 0);
    VIP_ULONG small = 1;
    EXPECT(VipNSGetHostByAddr(nic, addr, name, &small), VIP_ERROR_RESOURCE);
    CHECK(small == len);
    addr->HostAddressLen = 2;
    EXPECT(VipNSGetHostByAddr(nic, addr, name, &len), VIP_INVALID_PARAMETER);
    OK(VipNSShutdown(nic));
    addr->HostAddressLen = 4;
    EXPECT(VipNSGetHostByAddr(nic, addr, name, &len), VIP_ERROR_NAMESERVICE);
    OK(VipCloseNic(nic));
    free(addr);
    free(back);
}

/* Blocking calls honour their timeouts: nobody connects, nobody waits, nothing arrives. */
static void case_timeout(void) {
    VIP_NIC_HANDLE nic = open_nic();
    VIP_PROTECTION_HANDLE ptag;
    OK(VipCreatePtag(nic, &ptag));
    VIP_VI_ATTRIBUTES a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    VIP_VI_HANDLE vi;
    OK(VipCreateVi(nic, &a, NULL, NULL, &vi));
    VIP_NET_ADDRESS *addr = make_addr(nic, "timeout-nobody");
    VIP_NET_ADDRESS *remote = malloc(sizeof(VIP_NET_ADDRESS) + 4 + 64);
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    double t0 = now_ms();
    EXPECT(VipConnectWait(nic, addr, 100, remote, &ra, &conn), VIP_TIMEOUT);
    double waited = now_ms() - t0;
    CHECK(waited >= 99);
    t0 = now_ms();
    EXPECT(VipConnectRequest(vi, addr, addr, 150, &ra), VIP_TIMEOUT);
    waited = now_ms() - t0;
    CHECK(waited >= 149);
    EXPECT(VipConnectWait(nic, NULL, 10, remote, &ra, &conn), VIP_INVALID_PARAMETER);
    EXPECT(VipConnectRequest(vi, addr, NULL, 10, &ra), VIP_INVALID_PARAMETER);
    OK(VipDestroyVi(vi));
    OK(VipDestroyPtag(nic, ptag));
    OK(VipCloseNic(nic));
    free(addr);
    free(remote);
}

/* Misuse at the C boundary (issue 33): memory that is not mapped, or not writable, is refused
 * at registration; memory a posted descriptor lies in cannot be deregistered (the library
 * writes the descriptor's status there when it completes); every queue holds exactly
 * MaxDescriptorsPerQueue descriptors. Each is a VIP_* code, never a crash (run under
 * AddressSanitizer by the harness). */
static void case_misuse(void) {
    VIP_NIC_HANDLE nic = open_nic();
    VIP_PROTECTION_HANDLE ptag;
    OK(VipCreatePtag(nic, &ptag));
    VIP_MEM_ATTRIBUTES ma = {ptag, VIP_FALSE, VIP_FALSE};
    VIP_MEM_HANDLE h;
    /* unmapped: page 1, and a range running past the end of a mapping */
    EXPECT(VipRegisterMem(nic, (void *)0x1000, 4096, &ma, &h), VIP_INVALID_PARAMETER);
    long page = sysconf(_SC_PAGESIZE);
    char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED);
    CHECK(munmap(two + page, page) == 0);
    EXPECT(VipRegisterMem(nic, two, 2 * page, &ma, &h), VIP_INVALID_PARAMETER);
    OK(VipRegisterMem(nic, two, page, &ma, &h)); /* the mapped page alone is fine */
    OK(VipDeregisterMem(nic, two, h));
    /* read-only memory: a receive or a status write into it would fault */
    CHECK(mprotect(two, page, PROT_READ) == 0);
    EXPECT(VipRegisterMem(nic, two, page, &ma, &h), VIP_INVALID_PARAMETER);
    CHECK(munmap(two, page) == 0);

    /* deregistration under a posted receive is refused, and everything stays as it was */
    VIP_VI_ATTRIBUTES a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    VIP_VI_HANDLE vi;
    OK(VipCreateVi(nic, &a, NULL, NULL, &vi));
    char *mem = aligned(4096);
    OK(VipRegisterMem(nic, mem, 4096, &ma, &h));
    VIP_DESCRIPTOR *d = (VIP_DESCRIPTOR *)mem;
    one_seg(d, mem + 1024, h, 64);
    OK(VipPostRecv(vi, d, h));
    EXPECT(VipDeregisterMem(nic, mem, h), VIP_INVALID_PARAMETER);
    VIP_MEM_ATTRIBUTES q;
    OK(VipQueryMem(nic, mem, h, &q)); /* still registered */
    CHECK(q.Ptag == ptag);
    VIP_DESCRIPTOR *got = NULL;
    EXPECT(VipRecvDone(vi, &got), VIP_NOT_DONE); /* still posted */
    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES qa;
    VIP_BOOLEAN se, re;
    OK(VipQueryVi(vi, &st, &qa, &se, &re));
    CHECK(re == VIP_FALSE); /* the receive queue is not empty */
    /* once the VI (and its descriptor) is gone, the region deregisters */
    OK(VipDestroyVi(vi));
    OK(VipDeregisterMem(nic, mem, h));

    /* MaxDescriptorsPerQueue is what a queue holds */
    VIP_NIC_ATTRIBUTES na;
    OK(VipQueryNic(nic, &na));
    size_t n = na.MaxDescriptorsPerQueue;
    CHECK(n >= 1 && n <= 65536);
    OK(VipCreateVi(nic, &a, NULL, NULL, &vi));
    char *many = aligned((n + 1) * 64 + 64);
    OK(VipRegisterMem(nic, many, (n + 1) * 64 + 64, &ma, &h));
    for (size_t i = 0; i < n; i++) {
        VIP_DESCRIPTOR *di = (VIP_DESCRIPTOR *)(many + i * 64);
        one_seg(di, many + (n + 1) * 64, h, 8);
        OK(VipPostRecv(vi, di, h));
    }
    VIP_DESCRIPTOR *extra = (VIP_DESCRIPTOR *)(many + n * 64);
    one_seg(extra, many + (n + 1) * 64, h, 8);
    EXPECT(VipPostRecv(vi, extra, h), VIP_ERROR_RESOURCE);
    EXPECT(VipDeregisterMem(nic, many, h), VIP_INVALID_PARAMETER);
    OK(VipDestroyVi(vi));
    OK(VipDeregisterMem(nic, many, h));
    free(many);
    free(mem);
    OK(VipDestroyPtag(nic, ptag));
    OK(VipCloseNic(nic));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: local nic|mem|vi|post|cq|ns|timeout|misuse\n");
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "nic")) case_nic();
    else if (!strcmp(c, "mem")) case_mem();
    else if (!strcmp(c, "vi")) case_vi();
    else if (!strcmp(c, "post")) case_post();
    else if (!strcmp(c, "cq")) case_cq();
    else if (!strcmp(c, "ns")) case_ns();
    else if (!strcmp(c, "timeout")) case_timeout();
    else if (!strcmp(c, "misuse")) case_misuse();
    else {
        fprintf(stderr, "local: unknown case %s\n", c);
        return 2;
    }
    printf("local %s: ok\n", c);
    return 0;
}
