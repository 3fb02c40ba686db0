/* Prints the size and field offsets of every vipl.h structure, and the return codes, for
 * tests/c_suite.rs to compare with the Rust definitions (src/types.rs). Compiled as a
 * VIPL 0.95-era program is (ARMCI's via.c defines VIPL095 before the header): VIPL095 keeps
 * the `CS` / `DS[]` names even where the other dialect is asked for; every other C file of
 * the suite gets them by default. */
#define VIPL095
#define VIPL_CONTROL_DATA_NAMES
#include <stddef.h>
#include <stdio.h>
#include "vipl.h"
int main(void) {
    printf("VIP_NET_ADDRESS %zu\n", sizeof(VIP_NET_ADDRESS));
    printf("VIP_NET_ADDRESS.HostAddressLen %zu\n", offsetof(VIP_NET_ADDRESS, HostAddressLen));
    printf("VIP_NET_ADDRESS.DiscriminatorLen %zu\n", offsetof(VIP_NET_ADDRESS, DiscriminatorLen));
    printf("VIP_NET_ADDRESS.HostAddress %zu\n", offsetof(VIP_NET_ADDRESS, HostAddress));
    printf("VIP_NIC_ATTRIBUTES %zu\n", sizeof(VIP_NIC_ATTRIBUTES));
    printf("VIP_NIC_ATTRIBUTES.Name %zu\n", offsetof(VIP_NIC_ATTRIBUTES, Name));
    printf("VIP_NIC_ATTRIBUTES.HardwareVersion %zu\n", offsetof(VIP_NIC_ATTRIBUTES, HardwareVersion));
    printf("VIP_NIC_ATTRIBUTES.ProviderVersion %zu\n", offsetof(VIP_NIC_ATTRIBUTES, ProviderVersion));
    printf("VIP_NIC_ATTRIBUTES.NicAddressLen %zu\n", offsetof(VIP_NIC_ATTRIBUTES, NicAddressLen));
    printf("VIP_NIC_ATTRIBUTES.LocalNicAddress %zu\n", offsetof(VIP_NIC_ATTRIBUTES, LocalNicAddress));
    printf("VIP_NIC_ATTRIBUTES.ThreadSafe %zu\n", offsetof(VIP_NIC_ATTRIBUTES, ThreadSafe));
    printf("VIP_NIC_ATTRIBUTES.MaxDiscriminatorLen %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxDiscriminatorLen));
    printf("VIP_NIC_ATTRIBUTES.MaxRegisterBytes %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxRegisterBytes));
    printf("VIP_NIC_ATTRIBUTES.MaxRegisterRegions %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxRegisterRegions));
    printf("VIP_NIC_ATTRIBUTES.MaxRegisterBlockBytes %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxRegisterBlockBytes));
    printf("VIP_NIC_ATTRIBUTES.MaxVI %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxVI));
    printf("VIP_NIC_ATTRIBUTES.MaxDescriptorsPerQueue %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxDescriptorsPerQueue));
    printf("VIP_NIC_ATTRIBUTES.MaxSegmentsPerDesc %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxSegmentsPerDesc));
    printf("VIP_NIC_ATTRIBUTES.MaxCQ %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxCQ));
    printf("VIP_NIC_ATTRIBUTES.MaxCQEntries %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxCQEntries));
    printf("VIP_NIC_ATTRIBUTES.MaxTransferSize %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxTransferSize));
    printf("VIP_NIC_ATTRIBUTES.NativeMTU %zu\n", offsetof(VIP_NIC_ATTRIBUTES, NativeMTU));
    printf("VIP_NIC_ATTRIBUTES.MaxPtags %zu\n", offsetof(VIP_NIC_ATTRIBUTES, MaxPtags));
    printf("VIP_NIC_ATTRIBUTES.ReliabilityLevelSupport %zu\n", offsetof(VIP_NIC_ATTRIBUTES, ReliabilityLevelSupport));
    printf("VIP_NIC_ATTRIBUTES.RDMAReadSupport %zu\n", offsetof(VIP_NIC_ATTRIBUTES, RDMAReadSupport));
    printf("VIP_CONTROL_SEGMENT %zu\n", sizeof(VIP_CONTROL_SEGMENT));
    printf("VIP_CONTROL_SEGMENT.Next %zu\n", offsetof(VIP_CONTROL_SEGMENT, Next));
    printf("VIP_CONTROL_SEGMENT.NextHandle %zu\n", offsetof(VIP_CONTROL_SEGMENT, NextHandle));
    printf("VIP_CONTROL_SEGMENT.SegCount %zu\n", offsetof(VIP_CONTROL_SEGMENT, SegCount));
    printf("VIP_CONTROL_SEGMENT.Control %zu\n", offsetof(VIP_CONTROL_SEGMENT, Control));
    printf("VIP_CONTROL_SEGMENT.Reserved %zu\n", offsetof(VIP_CONTROL_SEGMENT, Reserved));
    printf("VIP_CONTROL_SEGMENT.ImmediateData %zu\n", offsetof(VIP_CONTROL_SEGMENT, ImmediateData));
    printf("VIP_CONTROL_SEGMENT.Length %zu\n", offsetof(VIP_CONTROL_SEGMENT, Length));
    printf("VIP_CONTROL_SEGMENT.Status %zu\n", offsetof(VIP_CONTROL_SEGMENT, Status));
    printf("VIP_DATA_SEGMENT %zu\n", sizeof(VIP_DATA_SEGMENT));
    printf("VIP_DATA_SEGMENT.Data %zu\n", offsetof(VIP_DATA_SEGMENT, Data));
    printf("VIP_DATA_SEGMENT.Handle %zu\n", offsetof(VIP_DATA_SEGMENT, Handle));
    printf("VIP_DATA_SEGMENT.Length %zu\n", offsetof(VIP_DATA_SEGMENT, Length));
    printf("VIP_DESCRIPTOR %zu\n", sizeof(VIP_DESCRIPTOR));
    printf("VIP_DESCRIPTOR.CS %zu\n", offsetof(VIP_DESCRIPTOR, CS));
    printf("VIP_DESCRIPTOR.DS %zu\n", offsetof(VIP_DESCRIPTOR, DS));
    printf("VIP_VI_ATTRIBUTES %zu\n", sizeof(VIP_VI_ATTRIBUTES));
    printf("VIP_VI_ATTRIBUTES.ReliabilityLevel %zu\n", offsetof(VIP_VI_ATTRIBUTES, ReliabilityLevel));
    printf("VIP_VI_ATTRIBUTES.MaxTransferSize %zu\n", offsetof(VIP_VI_ATTRIBUTES, MaxTransferSize));
    printf("VIP_VI_ATTRIBUTES.QoS %zu\n", offsetof(VIP_VI_ATTRIBUTES, QoS));
    printf("VIP_VI_ATTRIBUTES.Ptag %zu\n", offsetof(VIP_VI_ATTRIBUTES, Ptag));
    printf("VIP_VI_ATTRIBUTES.EnableRdmaWrite %zu\n", offsetof(VIP_VI_ATTRIBUTES, EnableRdmaWrite));
    printf("VIP_VI_ATTRIBUTES.EnableRdmaRead %zu\n", offsetof(VIP_VI_ATTRIBUTES, EnableRdmaRead));
    printf("VIP_MEM_ATTRIBUTES %zu\n", sizeof(VIP_MEM_ATTRIBUTES));
    printf("VIP_MEM_ATTRIBUTES.Ptag %zu\n", offsetof(VIP_MEM_ATTRIBUTES, Ptag));
    printf("VIP_MEM_ATTRIBUTES.EnableRdmaWrite %zu\n", offsetof(VIP_MEM_ATTRIBUTES, EnableRdmaWrite));
    printf("VIP_MEM_ATTRIBUTES.EnableRdmaRead %zu\n", offsetof(VIP_MEM_ATTRIBUTES, EnableRdmaRead));
    printf("VIP_ERROR_DESCRIPTOR %zu\n", sizeof(VIP_ERROR_DESCRIPTOR));
    printf("VIP_ERROR_DESCRIPTOR.NicHandle %zu\n", offsetof(VIP_ERROR_DESCRIPTOR, NicHandle));
    printf("VIP_ERROR_DESCRIPTOR.ViHandle %zu\n", offsetof(VIP_ERROR_DESCRIPTOR, ViHandle));
    printf("VIP_ERROR_DESCRIPTOR.CQHandle %zu\n", offsetof(VIP_ERROR_DESCRIPTOR, CQHandle));
    printf("VIP_ERROR_DESCRIPTOR.DescriptorPtr %zu\n", offsetof(VIP_ERROR_DESCRIPTOR, DescriptorPtr));
    printf("VIP_ERROR_DESCRIPTOR.OpCode %zu\n", offsetof(VIP_ERROR_DESCRIPTOR, OpCode));
    printf("VIP_ERROR_DESCRIPTOR.ResourceCode %zu\n", offsetof(VIP_ERROR_DESCRIPTOR, ResourceCode));
    printf("VIP_ERROR_DESCRIPTOR.ErrorCode %zu\n", offsetof(VIP_ERROR_DESCRIPTOR, ErrorCode));
    printf("VIP_AUTODISCOVERY_LIST %zu\n", sizeof(VIP_AUTODISCOVERY_LIST));
    printf("VIP_AUTODISCOVERY_LIST.NumberOfHops %zu\n", offsetof(VIP_AUTODISCOVERY_LIST, NumberOfHops));
    printf("VIP_AUTODISCOVERY_LIST.ADAddrArray %zu\n", offsetof(VIP_AUTODISCOVERY_LIST, ADAddrArray));
    printf("VIP_AUTODISCOVERY_LIST.NumAdAddrs %zu\n", offsetof(VIP_AUTODISCOVERY_LIST, NumAdAddrs));
    printf("VIP_SUCCESS %d\n", (int)VIP_SUCCESS);
    printf("VIP_NOT_DONE %d\n", (int)VIP_NOT_DONE);
    printf("VIP_INVALID_PARAMETER %d\n", (int)VIP_INVALID_PARAMETER);
    printf("VIP_ERROR_RESOURCE %d\n", (int)VIP_ERROR_RESOURCE);
    printf("VIP_TIMEOUT %d\n", (int)VIP_TIMEOUT);
    printf("VIP_REJECT %d\n", (int)VIP_REJECT);
    printf("VIP_INVALID_RELIABILITY_LEVEL %d\n", (int)VIP_INVALID_RELIABILITY_LEVEL);
    printf("VIP_INVALID_MTU %d\n", (int)VIP_INVALID_MTU);
    printf("VIP_INVALID_QOS %d\n", (int)VIP_INVALID_QOS);
    printf("VIP_INVALID_PTAG %d\n", (int)VIP_INVALID_PTAG);
    printf("VIP_INVALID_RDMAREAD %d\n", (int)VIP_INVALID_RDMAREAD);
    printf("VIP_DESCRIPTOR_ERROR %d\n", (int)VIP_DESCRIPTOR_ERROR);
    printf("VIP_INVALID_STATE %d\n", (int)VIP_INVALID_STATE);
    printf("VIP_ERROR_NAMESERVICE %d\n", (int)VIP_ERROR_NAMESERVICE);
    printf("VIP_NO_MATCH %d\n", (int)VIP_NO_MATCH);
    return 0;
}
