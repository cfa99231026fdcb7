/*
 * cuda_plugin.h — the GPU part of collkit as a plug-in: the CUDA IPC
 * transport, the device side of oneshot/twoshot and nccl live in
 * libcollkit_cuda.so, which libcollkit opens the first time a program asks
 * for device memory (ck_comm_create with CK_MEM_CUDA) or runs nccl. A
 * program built where the CUDA Toolkit is installed then starts, and runs
 * everything on host memory, on a machine without CUDA: only the device
 * parts say why they are not available (the loader's message).
 *
 * The plug-in calls back into the library (ck_fail, ck_algo_state, the
 * protocol engine ...): programs export their symbols (-rdynamic, an
 * interface link option of collkit) and the plug-in is linked with
 * -Bsymbolic, so that its own definitions never bind to the program's.
 */
#ifndef COLLKIT_CUDA_PLUGIN_H
#define COLLKIT_CUDA_PLUGIN_H

#include <stdint.h>
#include "transport.h"

/* The interface between the library and the plug-in, as a number both are
 * built with: the plug-in exports it (ck_cuda_plugin_stamp) and the loader
 * refuses one whose number differs. A program built against one collkit
 * (libcollkit.a is in it) and a plug-in of another (a kit replaced under the
 * students' programs, a lib/ copied from elsewhere) would otherwise call
 * each other with other structures and crash, or worse. The sizes follow
 * the structures the two share; CK_CUDA_PLUGIN_IFACE goes up by one when a
 * function between them changes without a size changing. */
#define CK_CUDA_PLUGIN_IFACE 1
#define CK_CUDA_PLUGIN_STAMP                                                           \
    ((uint64_t)CK_CUDA_PLUGIN_IFACE << 48 | (uint64_t)sizeof(ck_algo) << 32 |          \
     (uint64_t)sizeof(ck_transport) << 16 | (uint64_t)(sizeof(ck_config) + sizeof(ck_counters)))

#ifdef COLLKIT_HAVE_CUDA
/* What the library takes from the plug-in. */
typedef struct {
    int (*transport_create)(MPI_Comm mpi_comm, double timeout_s, ck_transport *out);
    int (*sym_allreduce)(ck_comm *comm, const void *sendbuf, void *recvbuf,
                         size_t count, ck_dtype dt, ck_op op, int two_shot);
    const ck_algo *nccl;      /* NULL in a build without NCCL */
    const ck_algo *rs_nccl;   /* ncclReduceScatter (NULL without NCCL) */
    const ck_algo *ag_nccl;   /* ncclAllGather (NULL without NCCL) */
    int (*gpu_count)(int *ndev, char *why, size_t whylen);   /* ck_gpu_count's CUDA half */
} ck_cuda_plugin_api;

/* Opens the plug-in once per process (thread-safe) and returns its entry
 * points, or NULL with *why (may be NULL) set to the loader's reason, e.g.
 * "libcudart.so.13: cannot open shared object file". */
const ck_cuda_plugin_api *ck_cuda_plugin(const char **why);
#endif

#endif
