/*
 * cuda_internal.h — what the GPU files share: the CUDA IPC transport's state
 * (so the device-only algorithms can reach its stream and symmetric buffers)
 * and the kernel launchers in kernels.cu.
 */
#ifndef COLLKIT_CUDA_INTERNAL_H
#define COLLKIT_CUDA_INTERNAL_H

#include <cuda_runtime_api.h>
#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Staging ring, per ordered pair of ranks: NSLOT slots of SLOT bytes in the
 * receiver's device memory. Messages larger than a slot move in chunks. */
#define CK_CUDA_SLOT  ((size_t)1 << 20)
#define CK_CUDA_NSLOT 4

/* Symmetric buffers for oneshot/twoshot: two halves of SYM_HALF bytes
 * (alternate launches use alternate halves), after a flags area. */
#define CK_SYM_HALF     ((size_t)4 << 20)
#define CK_SYM_MAXB     32     /* blocks per peer kernel: fixed, so every rank launches the same grid */
#define CK_SYM_THREADS  512

/* Arguments of one oneshot/twoshot launch (identical on every rank except
 * rank, out and err). */
typedef struct ck_peer_launch {
    char *const *peers;      /* device array: peers[q] = rank q's symmetric allocation, mapped here */
    int          p, rank;
    size_t       flags_off;  /* start-barrier flags: [block][rank] u32; mid-barrier flags follow */
    size_t       data_off;   /* offset of this launch's half */
    void        *out;        /* this chunk of recvbuf */
    size_t       count;      /* elements in this chunk */
    int          dt, op;
    unsigned     gen;        /* launch number, the same on every rank: barrier generation */
    unsigned long long timeout_ns;   /* 0: wait forever */
    int         *err;        /* mapped host word: set to 1 when a barrier timed out */
} ck_peer_launch;

/* The symmetric state, created on first use (collectively). */
typedef struct ck_cuda_sym {
    int      ready;
    char    *base;           /* my allocation (flags + two halves) */
    size_t   bytes;
    char   **peer_base;      /* host: rank q's allocation in my address space (mine for q == rank) */
    char   **d_peer_base;    /* device copy of peer_base, for the kernels */
    unsigned gen;            /* launches so far */
    int     *err;            /* pinned, mapped host word (host address) */
    int     *d_err;          /* the same word, device address */
} ck_cuda_sym;

typedef struct ck_cuda_tr ck_cuda_tr;

/* Accessors for the other GPU files (self is comm->tr.self of a CUDA comm). */
cudaStream_t ck_cuda_stream(void *self);
int          ck_cuda_device(void *self);
/* Select the transport's device on the calling thread. */
int          ck_cuda_use(void *self);
/* Run oneshot (two_shot = 0) or twoshot (1) over the symmetric buffers. */
int          ck_cuda_peer_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                                    size_t count, ck_dtype dt, ck_op op, int two_shot);
/* PCI bus ids of every rank's device ("0000:3b:00.0"), rank-major, 32 chars each.
 * Gathered at creation; used to tell when ranks share a GPU. */
const char  *ck_cuda_pci_ids(void *self);

/* kernels.cu */
cudaError_t ck_cuda_reduce(void *dst, const void *a, const void *b, size_t count,
                           ck_dtype dt, ck_op op, cudaStream_t s);
cudaError_t ck_cuda_divide(void *buf, size_t count, ck_dtype dt, int divisor, cudaStream_t s);
cudaError_t ck_cuda_launch_peer(const ck_peer_launch *a, int two_shot, cudaStream_t s);
int         ck_cuda_peer_blocks(size_t count, int p, int two_shot);

#ifdef __cplusplus
}
#endif
#endif
