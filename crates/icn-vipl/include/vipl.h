/*
 * vipl.h - the VI Provider Library (VIPL) interface of the Virtual Interface
 * Architecture Specification, Version 1.0 (Compaq, Intel, Microsoft, 1997),
 * written for icnlab's libvipl (crate icn-vipl) from that specification.
 *
 * Implemented over icn-via's providers: shared memory between the processes of
 * one host, and TCP. Device names and their providers (docs/vipl.md):
 *   /dev/via_lo, /etc/via_lo      shm, host address 127.0.0.1
 *   /dev/via_ethN, /dev/via_<if>  tcp on the IPv4 address of interface ethN / <if>
 * ICN_VIPL_PROVIDER=shm|tcp overrides the provider of every device.
 *
 * Layout (LP64): VIP_DESCRIPTOR is 64 bytes = a 32-byte control segment and two
 * 16-byte segments; a descriptor with more segments is the control segment
 * followed by CS.SegCount segments (for RDMA the first one is the address
 * segment). Descriptors must be VIP_DESCRIPTOR_ALIGNMENT-aligned and lie in
 * memory registered with the handle passed to VipPostSend / VipPostRecv.
 */
#ifndef ICN_VIPL_H
#define ICN_VIPL_H 1

#ifdef __cplusplus
extern "C" {
#endif

#define IN
#define OUT

/* ---------------------------------------------------------------- types */

typedef void *VIP_PVOID;
typedef int VIP_BOOLEAN;
typedef char VIP_CHAR;
typedef unsigned char VIP_UCHAR;
typedef unsigned short VIP_USHORT;
typedef unsigned long VIP_ULONG;
typedef unsigned long long VIP_UINT64;
typedef unsigned int VIP_UINT32;
typedef unsigned short VIP_UINT16;
typedef unsigned char VIP_UINT8;

typedef VIP_PVOID VIP_QOS; /* the specification leaves QoS undefined; ignored */

#define VIP_TRUE (1)
#define VIP_FALSE (0)

/* Timeouts are in milliseconds; VIP_INFINITE (or more) waits for ever. */
#define VIP_INFINITE ((VIP_ULONG)0xFFFFFFFFUL)

/* Opaque handles. */
typedef VIP_PVOID VIP_NIC_HANDLE;
typedef VIP_PVOID VIP_VI_HANDLE;
typedef VIP_PVOID VIP_PROTECTION_HANDLE;
typedef VIP_PVOID VIP_CONN_HANDLE;
typedef VIP_PVOID VIP_CQ_HANDLE;

/* A registered region's handle; peers name a region for RDMA by it. */
typedef VIP_UINT32 VIP_MEM_HANDLE;

/*
 * VI network address: a host address and an endpoint discriminator, each with
 * its length, stored back to back in HostAddress[] (host address first). The
 * structure is variable-length: allocate sizeof(VIP_NET_ADDRESS) +
 * HostAddressLen + DiscriminatorLen bytes. Host addresses here are IPv4
 * addresses (NicAddressLen = 4).
 */
typedef struct {
    VIP_UINT16 HostAddressLen;
    VIP_UINT16 DiscriminatorLen;
    VIP_UINT8 HostAddress[1];
} VIP_NET_ADDRESS;

typedef VIP_USHORT VIP_RELIABILITY_LEVEL;
#define VIP_SERVICE_UNRELIABLE 0x01
#define VIP_SERVICE_RELIABLE_DELIVERY 0x02
#define VIP_SERVICE_RELIABLE_RECEPTION 0x04

/* VipQueryNic. */
typedef struct {
    VIP_CHAR Name[64];
    VIP_ULONG HardwareVersion;
    VIP_ULONG ProviderVersion;
    VIP_UINT16 NicAddressLen;
    const VIP_UINT8 *LocalNicAddress;
    VIP_BOOLEAN ThreadSafe;
    VIP_UINT16 MaxDiscriminatorLen;
    VIP_ULONG MaxRegisterBytes;
    VIP_ULONG MaxRegisterRegions;
    VIP_ULONG MaxRegisterBlockBytes;
    VIP_ULONG MaxVI;
    VIP_ULONG MaxDescriptorsPerQueue;
    VIP_ULONG MaxSegmentsPerDesc;
    VIP_ULONG MaxCQ;
    VIP_ULONG MaxCQEntries;
    VIP_ULONG MaxTransferSize;
    VIP_ULONG NativeMTU;
    VIP_ULONG MaxPtags;
    VIP_RELIABILITY_LEVEL ReliabilityLevelSupport;
    VIP_RELIABILITY_LEVEL RDMAReadSupport;
} VIP_NIC_ATTRIBUTES;

/* ---------------------------------------------------------- descriptors */

#define VIP_DESCRIPTOR_ALIGNMENT 64

typedef union {
    VIP_UINT64 AddressBits;
    VIP_PVOID Address;
} VIP_PVOID64;

/* Control segment (32 bytes). */
typedef struct {
    VIP_PVOID64 Next;          /* consumer's link; not used by the provider */
    VIP_MEM_HANDLE NextHandle; /* consumer's link; not used by the provider */
    VIP_UINT16 SegCount;       /* segments after this one (address + data) */
    VIP_UINT16 Control;        /* VIP_CONTROL_* */
    VIP_UINT32 Reserved;
    VIP_UINT32 ImmediateData;  /* sent with VIP_CONTROL_IMMEDIATE; received */
    VIP_UINT32 Length;         /* set on completion: bytes moved */
    VIP_UINT32 Status;         /* set on completion: VIP_STATUS_* */
} VIP_CONTROL_SEGMENT;

/* Address segment of an RDMA descriptor: the peer's registered memory. */
typedef struct {
    VIP_PVOID64 Data;
    VIP_MEM_HANDLE Handle;
    VIP_UINT32 Reserved;
} VIP_ADDRESS_SEGMENT;

/* Data segment: local registered memory. */
typedef struct {
    VIP_PVOID64 Data;
    VIP_MEM_HANDLE Handle;
    VIP_UINT32 Length;
} VIP_DATA_SEGMENT;

typedef union {
    VIP_ADDRESS_SEGMENT Remote;
    VIP_DATA_SEGMENT Local;
} VIP_DESCRIPTOR_SEGMENT;

/* The descriptor's field names come in two dialects, with one layout. By default, and
 * whenever the program defines VIPL095 before including this header (ARMCI's via.c does),
 * they are VIPL 0.95's: `CS` for the control segment and `DS[]` of `Remote` / `Local`
 * segments, which M-VIA's header always uses and MP_Lite's via.c expects. Headers such as
 * Emulex/Giganet cLAN's give those names only under VIPL095 and otherwise name the two
 * parts `Control` and `Data[]` (data segments; an RDMA address segment is `Data[0]`, its
 * `Length` the address segment's reserved word): define VIPL_CONTROL_DATA_NAMES (and not
 * VIPL095) before including this header for that dialect. */
#if defined(VIPL_CONTROL_DATA_NAMES) && !defined(VIPL095)
typedef struct _VIP_DESCRIPTOR {
    VIP_CONTROL_SEGMENT Control;
    VIP_DATA_SEGMENT Data[2];
} VIP_DESCRIPTOR;
#else
typedef struct _VIP_DESCRIPTOR {
    VIP_CONTROL_SEGMENT CS;
    VIP_DESCRIPTOR_SEGMENT DS[2];
} VIP_DESCRIPTOR;
#endif

/* Control field. */
#define VIP_CONTROL_OP_SENDRECV 0x0000
#define VIP_CONTROL_OP_RDMAWRITE 0x0001
#define VIP_CONTROL_OP_RDMAREAD 0x0002
#define VIP_CONTROL_OP_RESERVED 0x0003
#define VIP_CONTROL_OP_MASK 0x0003
#define VIP_CONTROL_IMMEDIATE 0x0004
#define VIP_CONTROL_QFENCE 0x0008
#define VIP_CONTROL_RESERVED 0xFFF0

/* Status field. */
#define VIP_STATUS_DONE 0x00000001
#define VIP_STATUS_FORMAT_ERROR 0x00000002
#define VIP_STATUS_PROTECTION_ERROR 0x00000004
#define VIP_STATUS_LENGTH_ERROR 0x00000008
#define VIP_STATUS_PARTIAL_ERROR 0x00000010
#define VIP_STATUS_DESC_FLUSHED_ERROR 0x00000020
#define VIP_STATUS_TRANSPORT_ERROR 0x00000040
#define VIP_STATUS_RDMA_PROT_ERROR 0x00000080
#define VIP_STATUS_REMOTE_DESC_ERROR 0x00000100
#define VIP_STATUS_ERROR_MASK 0x000001FE

#define VIP_STATUS_OP_SEND 0x00000000
#define VIP_STATUS_OP_RECEIVE 0x00010000
#define VIP_STATUS_OP_RDMA_WRITE 0x00020000
#define VIP_STATUS_OP_REMOTE_RDMA_WRITE 0x00030000
#define VIP_STATUS_OP_RDMA_READ 0x00040000
#define VIP_STATUS_OP_MASK 0x00070000

#define VIP_STATUS_IMMEDIATE 0x00080000

#define VIP_STATUS_RESERVED 0xFFF0FE00

/* ------------------------------------------------------- VIs and memory */

typedef enum {
    VIP_STATE_IDLE,
    VIP_STATE_CONNECTED,
    VIP_STATE_CONNECT_PENDING,
    VIP_STATE_ERROR
} VIP_VI_STATE;

typedef struct {
    VIP_RELIABILITY_LEVEL ReliabilityLevel;
    VIP_ULONG MaxTransferSize;
    VIP_QOS QoS;
    VIP_PROTECTION_HANDLE Ptag;
    VIP_BOOLEAN EnableRdmaWrite;
    VIP_BOOLEAN EnableRdmaRead;
} VIP_VI_ATTRIBUTES;

typedef struct _VIP_MEM_ATTRIBUTES {
    VIP_PROTECTION_HANDLE Ptag;
    VIP_BOOLEAN EnableRdmaWrite;
    VIP_BOOLEAN EnableRdmaRead;
} VIP_MEM_ATTRIBUTES;

/* ---------------------------------------------------- asynchronous errors */

typedef enum _VIP_ERROR_CODE {
    VIP_ERROR_POST_DESC,
    VIP_ERROR_CONN_LOST,
    VIP_ERROR_RECVQ_EMPTY,
    VIP_ERROR_VI_OVERRUN,
    VIP_ERROR_RDMAW_PROT,
    VIP_ERROR_RDMAW_DATA,
    VIP_ERROR_RDMAW_ABORT,
    VIP_ERROR_RDMAR_PROT,
    VIP_ERROR_COMP_PROT,
    VIP_ERROR_RDMA_TRANSPORT,
    VIP_ERROR_CATASTROPHIC
} VIP_ERROR_CODE;

typedef enum _VIP_RESOURCE_CODE {
    VIP_RESOURCE_NIC,
    VIP_RESOURCE_VI,
    VIP_RESOURCE_CQ,
    VIP_RESOURCE_DESCRIPTOR
} VIP_RESOURCE_CODE;

typedef struct _VIP_ERROR_DESCRIPTOR {
    VIP_NIC_HANDLE NicHandle;
    VIP_VI_HANDLE ViHandle;
    VIP_CQ_HANDLE CQHandle;
    VIP_DESCRIPTOR *DescriptorPtr;
    VIP_ULONG OpCode;
    VIP_RESOURCE_CODE ResourceCode;
    VIP_ERROR_CODE ErrorCode;
} VIP_ERROR_DESCRIPTOR;

/* ----------------------------------------------------------- return codes */

typedef enum {
    VIP_SUCCESS,
    VIP_NOT_DONE,
    VIP_INVALID_PARAMETER,
    VIP_ERROR_RESOURCE,
    VIP_TIMEOUT,
    VIP_REJECT,
    VIP_INVALID_RELIABILITY_LEVEL,
    VIP_INVALID_MTU,
    VIP_INVALID_QOS,
    VIP_INVALID_PTAG,
    VIP_INVALID_RDMAREAD,
    VIP_DESCRIPTOR_ERROR,
    VIP_INVALID_STATE,
    VIP_ERROR_NAMESERVICE,
    VIP_NO_MATCH
} VIP_RETURN;

/* VipQuerySystemManagementInfo. */
#define VIP_SMI_AUTODISCOVERY ((VIP_ULONG)1)

typedef struct {
    VIP_ULONG NumberOfHops;
    VIP_NET_ADDRESS **ADAddrArray;
    VIP_ULONG NumAdAddrs;
} VIP_AUTODISCOVERY_LIST;

/* --------------------------------------------------------------- the NIC */

VIP_RETURN VipOpenNic(IN const VIP_CHAR *DeviceName, OUT VIP_NIC_HANDLE *NicHandle);
VIP_RETURN VipCloseNic(IN VIP_NIC_HANDLE NicHandle);
VIP_RETURN VipQueryNic(IN VIP_NIC_HANDLE NicHandle, OUT VIP_NIC_ATTRIBUTES *NicAttribs);
VIP_RETURN VipErrorCallback(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Context,
                            IN void (*Handler)(IN VIP_PVOID Context,
                                               IN VIP_ERROR_DESCRIPTOR *ErrorDesc));
VIP_RETURN VipQuerySystemManagementInfo(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG InfoType,
                                        OUT VIP_PVOID SysManInfo);

/* ------------------------------------------------ protection and memory */

VIP_RETURN VipCreatePtag(IN VIP_NIC_HANDLE NicHandle, OUT VIP_PROTECTION_HANDLE *Ptag);
VIP_RETURN VipDestroyPtag(IN VIP_NIC_HANDLE NicHandle, IN VIP_PROTECTION_HANDLE Ptag);
VIP_RETURN VipRegisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
                          IN VIP_ULONG Length, IN VIP_MEM_ATTRIBUTES *MemAttribs,
                          OUT VIP_MEM_HANDLE *MemoryHandle);
VIP_RETURN VipDeregisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
                            IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipQueryMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Address,
                       IN VIP_MEM_HANDLE MemHandle, OUT VIP_MEM_ATTRIBUTES *MemAttribs);
VIP_RETURN VipSetMemAttributes(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Address,
                               IN VIP_MEM_HANDLE MemHandle, IN VIP_MEM_ATTRIBUTES *MemAttribs);

/* ------------------------------------------------------------------- VIs */

VIP_RETURN VipCreateVi(IN VIP_NIC_HANDLE NicHandle, IN VIP_VI_ATTRIBUTES *ViAttribs,
                       IN VIP_CQ_HANDLE SendCQHandle, IN VIP_CQ_HANDLE RecvCQHandle,
                       OUT VIP_VI_HANDLE *ViHandle);
VIP_RETURN VipDestroyVi(IN VIP_VI_HANDLE ViHandle);
VIP_RETURN VipQueryVi(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_STATE *State,
                      OUT VIP_VI_ATTRIBUTES *ViAttribs, OUT VIP_BOOLEAN *ViSendQEmpty,
                      OUT VIP_BOOLEAN *ViRecvQEmpty);
VIP_RETURN VipSetViAttributes(IN VIP_VI_HANDLE ViHandle, IN VIP_VI_ATTRIBUTES *ViAttribs);

/* ------------------------------------------------- client/server connect */

VIP_RETURN VipConnectWait(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS *LocalAddr,
                          IN VIP_ULONG Timeout, OUT VIP_NET_ADDRESS *RemoteAddr,
                          OUT VIP_VI_ATTRIBUTES *RemoteViAttribs,
                          OUT VIP_CONN_HANDLE *ConnHandle);
VIP_RETURN VipConnectAccept(IN VIP_CONN_HANDLE ConnHandle, IN VIP_VI_HANDLE ViHandle);
VIP_RETURN VipConnectReject(IN VIP_CONN_HANDLE ConnHandle);
VIP_RETURN VipConnectRequest(IN VIP_VI_HANDLE ViHandle, IN VIP_NET_ADDRESS *LocalAddr,
                             IN VIP_NET_ADDRESS *RemoteAddr, IN VIP_ULONG Timeout,
                             OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);
VIP_RETURN VipDisconnect(IN VIP_VI_HANDLE ViHandle);

/* --------------------------------------------------- peer-to-peer connect */

VIP_RETURN VipConnectPeerRequest(IN VIP_VI_HANDLE ViHandle, IN VIP_NET_ADDRESS *LocalAddr,
                                 IN VIP_NET_ADDRESS *RemoteAddr, IN VIP_ULONG Timeout);
VIP_RETURN VipConnectPeerDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);
VIP_RETURN VipConnectPeerWait(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);

/* ------------------------------------------------------------- data path */

VIP_RETURN VipPostSend(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR *DescriptorPtr,
                       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipPostRecv(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR *DescriptorPtr,
                       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipSendDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipRecvDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipSendWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG Timeout,
                       OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipRecvWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG Timeout,
                       OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipSendNotify(IN VIP_VI_HANDLE ViHandle, IN VIP_PVOID Context,
                         IN void (*Handler)(IN VIP_PVOID Context, IN VIP_NIC_HANDLE NicHandle,
                                            IN VIP_VI_HANDLE ViHandle,
                                            IN VIP_DESCRIPTOR *DescriptorPtr));
VIP_RETURN VipRecvNotify(IN VIP_VI_HANDLE ViHandle, IN VIP_PVOID Context,
                         IN void (*Handler)(IN VIP_PVOID Context, IN VIP_NIC_HANDLE NicHandle,
                                            IN VIP_VI_HANDLE ViHandle,
                                            IN VIP_DESCRIPTOR *DescriptorPtr));

/* ----------------------------------------------------- completion queues */

VIP_RETURN VipCreateCQ(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG EntryCount,
                       OUT VIP_CQ_HANDLE *CQHandle);
VIP_RETURN VipDestroyCQ(IN VIP_CQ_HANDLE CQHandle);
VIP_RETURN VipResizeCQ(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG EntryCount);
VIP_RETURN VipCQDone(IN VIP_CQ_HANDLE CQHandle, OUT VIP_VI_HANDLE *ViHandle,
                     OUT VIP_BOOLEAN *RecvQueue);
VIP_RETURN VipCQWait(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG Timeout, OUT VIP_VI_HANDLE *ViHandle,
                     OUT VIP_BOOLEAN *RecvQueue);
VIP_RETURN VipCQNotify(IN VIP_CQ_HANDLE CQHandle, IN VIP_PVOID Context,
                       IN void (*Handler)(IN VIP_PVOID Context, IN VIP_NIC_HANDLE NicHandle,
                                          IN VIP_VI_HANDLE ViHandle, IN VIP_BOOLEAN RecvQueue));

/* ---------------------------------------------------------- name service */

VIP_RETURN VipNSInit(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID NSInitInfo);
VIP_RETURN VipNSGetHostByName(IN VIP_NIC_HANDLE NicHandle, IN VIP_CHAR *Name,
                              OUT VIP_NET_ADDRESS *Address, IN VIP_ULONG NameIndex);
VIP_RETURN VipNSGetHostByAddr(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS *Address,
                              OUT VIP_CHAR *Name, IN OUT VIP_ULONG *NameLen);
VIP_RETURN VipNSShutdown(IN VIP_NIC_HANDLE NicHandle);

#ifdef __cplusplus
}
#endif

#endif /* ICN_VIPL_H */
