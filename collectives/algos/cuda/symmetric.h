/*
 * symmetric.h — symmetric buffers for the device-only algorithms that move
 * data by loads from peers' memory (oneshot, twoshot): one device buffer per
 * rank, IPC-mapped into every other rank, the flag barriers between launches
 * and the launch of their kernels (symmetric.c, symmetric_kernels.cu).
 * Algorithm files include this and collkit_algo.h, nothing private.
 */
#ifndef COLLKIT_SYMMETRIC_H
#define COLLKIT_SYMMETRIC_H

#include "collkit_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each rank's symmetric buffer: a flags area, then two halves of SYM_HALF
 * bytes (alternate launches use alternate halves). An all-reduce moves in
 * launches of at most SYM_HALF bytes. */
#define CK_SYM_HALF     ((size_t)4 << 20)
#define CK_SYM_MAXB     32     /* blocks per peer kernel: fixed, so every rank launches the same grid */
#define CK_SYM_THREADS  512

/* Elements one launch reduces: the input is cut into launches of this many. */
static inline size_t ck_sym_launch_elems(size_t esize) { return CK_SYM_HALF / esize; }

/* All-reduce through the symmetric buffers, as oneshot (two_shot = 0) or
 * twoshot (1). Collective; sets the buffers up on the first call on a
 * communicator (kept in ck_algo_state, freed by ck_comm_destroy). Returns
 * once the result is in recvbuf (it waits for the stream). */
int ck_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op, int two_shot);

/* ---- between symmetric.c and symmetric_kernels.cu */

/* Arguments of one launch (identical on every rank except rank, out, err). */
typedef struct ck_sym_launch {
    char *const *peers;      /* device array: peers[q] = rank q's symmetric buffer, mapped here */
    int          p, rank;
    size_t       flags_off;  /* start-barrier flags: [block][rank] u32; mid-barrier flags follow */
    size_t       data_off;   /* offset of this launch's half */
    void        *out;        /* this launch's part of recvbuf */
    size_t       count;      /* elements in this launch */
    int          dt, op;
    unsigned     gen;        /* launch number, the same on every rank: barrier generation */
    unsigned long long timeout_ns;   /* 0: wait forever */
    int         *err;        /* mapped host word: set to 1 when a barrier timed out */
} ck_sym_launch;

cudaError_t ck_sym_launch_kernel(const ck_sym_launch *a, int two_shot, cudaStream_t s);
int         ck_sym_blocks(size_t count, int p, int two_shot);

#ifdef __cplusplus
}
#endif
#endif
