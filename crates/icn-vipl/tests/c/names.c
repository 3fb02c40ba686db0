/* The descriptor's second dialect of field names (vipl.h, VIPL_CONTROL_DATA_NAMES):
 * `Control` and `Data[]` at the offsets of `CS` and `DS[]` (checked at compile time), and
 * descriptors written through them are read by the library as the default names' are. */
#define VIPL_CONTROL_DATA_NAMES
#include <stddef.h>

#include "suite.h"

_Static_assert(sizeof(VIP_DESCRIPTOR) == 64, "one 64-byte descriptor");
_Static_assert(offsetof(VIP_DESCRIPTOR, Control) == 0, "control segment first");
_Static_assert(offsetof(VIP_DESCRIPTOR, Data) == 32, "segments after 32 bytes");
_Static_assert(offsetof(VIP_DESCRIPTOR, Data[1].Length) == 60, "second segment's length");

int main(void) {
    VIP_NIC_HANDLE nic;
    VIP_PROTECTION_HANDLE ptag;
    OK(VipOpenNic(device(), &nic));
    OK(VipErrorCallback(nic, NULL, count_errors));
    OK(VipCreatePtag(nic, &ptag));
    char *mem = aligned(4096);
    VIP_MEM_ATTRIBUTES ma = {ptag, VIP_FALSE, VIP_FALSE};
    VIP_MEM_HANDLE h;
    OK(VipRegisterMem(nic, mem, 4096, &ma, &h));
    VIP_DESCRIPTOR *d = (VIP_DESCRIPTOR *)mem;
    memset(d, 0, 64);
    d->Control.Control = VIP_CONTROL_OP_SENDRECV;
    d->Control.SegCount = 1;
    d->Data[0].Data.Address = mem + 1024;
    d->Data[0].Handle = h;
    d->Data[0].Length = 5;
    VIP_VI_ATTRIBUTES a = vi_attrs(ptag, VIP_SERVICE_RELIABLE_DELIVERY);
    VIP_VI_HANDLE vi;
    OK(VipCreateVi(nic, &a, NULL, NULL, &vi));
    /* posted on an unconnected VI: the receive queue takes it, read through the header's
     * offsets; a malformed one (18 segments) is refused with the status written back */
    OK(VipPostRecv(vi, d, h));
    VIP_DESCRIPTOR *bad = (VIP_DESCRIPTOR *)(mem + 64);
    memset(bad, 0, 64);
    bad->Control.SegCount = 18;
    EXPECT(VipPostRecv(vi, bad, h), VIP_DESCRIPTOR_ERROR);
    CHECK(bad->Control.Status == (VIP_STATUS_DONE | VIP_STATUS_FORMAT_ERROR));
    CHECK(async_errors[VIP_ERROR_POST_DESC] == 1);
    printf("names: ok\n");
    return 0;
}
