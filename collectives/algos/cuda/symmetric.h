/*
 * symmetric.h — symmetric buffers for the device-only algorithms that move
 * data by loads from peers' memory (oneshot, twoshot): one device buffer per
 * rank, IPC-mapped into every other rank, the flag barriers between launches
 * and the launch of their kernels (symmetric.c, symmetric_kernels.cu).
 * Algorithm files include this and collkit_algo.h, nothing private.
 */
#ifndef COLLKIT_SYMMETRIC_H
#define COLLKIT_SYMMETRIC_H

#include <string.h>
#include "collkit_cuda.h"
#include "../single_copy.h"   /* CK_SYM_HALF, ck_sym_launch_elems, ck_sym_allreduce: shared with the host version */

#ifdef __cplusplus
extern "C" {
#endif

/* Each rank's symmetric buffer: a flags area, then two halves of CK_SYM_HALF
 * bytes (single_copy.h; alternate launches use alternate halves). An
 * all-reduce moves in launches of at most CK_SYM_HALF bytes. */
#define CK_SYM_THREADS       512
/* Blocks per SM at most: with 512 threads that is 1024 resident threads per
 * SM on every GPU since Volta (the kernels are compiled for it with
 * __launch_bounds__), so the whole grid is resident at once — which the
 * barriers need: a block spinning for its partner must not keep a block
 * that has yet to start off the GPU. */
#define CK_SYM_BLOCKS_PER_SM 2
#define CK_SYM_VEC           16    /* bytes per load and store: one uint4 */

/* ---- the pure parts, shared with the kernels (and tests/unit) */

#ifdef __CUDACC__
#define CK_SYM_HD __host__ __device__
#else
#define CK_SYM_HD
#endif

/* Blocks of one launch. Blocks pair up across ranks by index in the flag
 * barriers, so the grid must be the same on every rank: it depends only on
 * the launch's count, p, the element size and max_blocks, which setup made
 * the same everywhere (ck_sym_max_blocks). Within that cap, enough blocks that each thread has about
 * one 16-byte vector of the largest piece a block handles (the whole launch
 * in oneshot, one rank's slice in twoshot): loads in flight across every SM
 * are what saturates NVLink. */
static inline CK_SYM_HD unsigned ck_sym_grid(size_t count, int p, size_t esize, int two_shot, unsigned max_blocks)
{
    const size_t per_vec = CK_SYM_VEC / esize;
    const size_t work = two_shot ? (count + (size_t)p - 1) / (size_t)p : count;
    const size_t vecs = (work + per_vec - 1) / per_vec;
    size_t g = (vecs + CK_SYM_THREADS - 1) / CK_SYM_THREADS;
    if (g > max_blocks) g = max_blocks;
    return (unsigned)(g < 1 ? 1 : g);
}

/* Elements [off, off + len) of a launch, split for 16-byte access: a head of
 * scalars up to the first element whose offset is a multiple of 16 bytes,
 * nvec whole vectors of per_vec elements, a tail of scalars. Element 0 of
 * every half is 16-byte aligned in every rank's buffer, so the same split
 * is aligned in all of them. Work item i (i < head + nvec + tail) is head
 * element i, then vector i - head, then tail element; item i goes to thread
 * i mod (grid * threads): one map for every range, so in twoshot a slice is
 * handled by the same blocks on its owner (reduce-scatter) and on its
 * readers (all-gather). */
static inline CK_SYM_HD void ck_sym_split(size_t off, size_t len, size_t per_vec,
                                          size_t *head, size_t *nvec, size_t *tail)
{
    size_t h = (per_vec - off % per_vec) % per_vec;
    if (h > len) h = len;
    *head = h;
    *nvec = (len - h) / per_vec;
    *tail = len - h - *nvec * per_vec;
}

/* The most ranks on any one GPU, from the ranks' PCI bus ids: every rank
 * computes the same answer from the same ids. */
static inline int ck_sym_max_sharing(const char *const *ids, int p)
{
    int most = p > 0 ? 1 : 0;
    for (int a = 0; a < p; a++) {
        int n = 0;
        for (int b = 0; b < p; b++) n += !strcmp(ids[a], ids[b]);
        if (n > most) most = n;
    }
    return most;
}

/* max_blocks: the grid cap. Every block of every rank must be resident at
 * once (the barriers). One rank per GPU may fill it: CK_SYM_BLOCKS_PER_SM
 * per SM of the smallest GPU (`sms`). Ranks that share a GPU run side by
 * side under MPS, so each gets its share of the SMs: one rank's grid filling
 * the GPU would keep the others' blocks from starting, and the barriers
 * would wait into the timeout. (Without MPS the ranks' kernels are
 * time-sliced; the smaller grid then costs little.) */
static inline unsigned ck_sym_max_blocks(int sms, int sharing)
{
    long cap = (long)sms * CK_SYM_BLOCKS_PER_SM / (sharing > 0 ? sharing : 1);
    return (unsigned)(cap < 1 ? 1 : cap);
}

/* ---- between symmetric.c and symmetric_kernels.cu */

/* Arguments of one launch (identical on every rank except rank, out, err). */
typedef struct ck_sym_launch {
    char *const *peers;      /* device array: peers[q] = rank q's symmetric buffer, mapped here */
    int          p, rank;
    unsigned     blocks;     /* the grid (ck_sym_grid) */
    unsigned     max_blocks; /* the flags area's block dimension */
    size_t       flags_off;  /* start-barrier flags: [block][rank] u32; mid-barrier flags follow */
    size_t       data_off;   /* offset of this launch's half */
    void        *out;        /* this launch's part of recvbuf */
    size_t       count;      /* elements in this launch */
    int          dt, op;
    unsigned     gen;        /* launch number, the same on every rank: barrier generation */
    unsigned long long timeout_ns;   /* 0: wait forever */
    int         *err;        /* mapped host word: set to 1 when a barrier timed out */
    int         *gave_up;    /* the same news in device memory, checked by every launch */
} ck_sym_launch;

cudaError_t ck_sym_launch_kernel(const ck_sym_launch *a, int two_shot, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
