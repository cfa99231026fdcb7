/*
 * dp.h — data parallelism over collkit.
 *
 * Every rank holds the whole (small) featurised dataset and the whole model.
 * One optimizer step:
 *   1. the step's global samples are a slice of the epoch order (below):
 *      `accum` micro-batches of `batch` positions each;
 *   2. rank r takes the positions j with j % p == r of each micro-batch (the
 *      strided split of torch's DistributedSampler), runs forward and backward
 *      and ADDS its per-sample gradients into the one gradient buffer;
 *   3. after the last micro-batch the buffer is all-reduced (sum) with the
 *      chosen registry algorithm, then scaled by 1/(samples in the step);
 *   4. every rank takes the same optimizer step.
 * Summing first and dividing once by the global count makes p ranks compute
 * the same mean gradient as one rank with the whole batch, up to the order of
 * float additions (see tests/trainer/test_dp.c for the tolerance).
 *
 * Epoch order (DistributedSampler, padding variant): a permutation of 0..n-1
 * drawn from (seed, epoch) — the same on every rank — padded by wrapping
 * around to a multiple of p so every rank gets the same number of samples
 * (ceil(n/p) each). The last micro-batch of an epoch may be short; ranks that
 * get no row in it still join the all-reduce with their accumulated gradient.
 *
 * Bucketed mode (bucket_elems > 0, DDP style): the gradient buffer is cut from
 * its END into slices of bucket_elems; the backward pass reports how far the
 * final part of the buffer reaches (mlp_backward's ready hook) and each slice
 * is handed to ck_allreduce_async as soon as it is complete, so the all-reduce
 * of the later layers runs while earlier layers are still computing. All are
 * waited for before the optimizer step. Only the last micro-batch of an
 * accumulation launches buckets (earlier ones only accumulate, like DDP's
 * no_sync).
 *
 * Dropout streams: rank r in epoch e draws from rng_stream(seed, DROPOUT, r, e).
 * Runs with different p therefore drop different units; data-parallel
 * equivalence holds for dropout 0.
 */
#ifndef TRAINER_DP_H
#define TRAINER_DP_H

#include <stddef.h>
#include <stdint.h>
#include "collkit.h"
#include "model.h"
#include "optim.h"

#define DP_MAX_BUCKETS 4096

typedef struct {
    const float *X;     /* [n x dim] dense features (unused when ptr is set) */
    const int   *y;     /* [n] labels */
    size_t       n;
    int          dim;
    /* Optional CSR form of the same features: row i's non-zeros are
     * idx[ptr[i] .. ptr[i+1]) with values val[...]. When ptr is set the
     * model's input layer reads it directly (mlp_forward_sparse). */
    const size_t *ptr;
    const int    *idx;
    const float  *val;
} dp_dataset;

typedef struct {
    ck_comm       *comm;
    const ck_algo *algo;
    int            rank, p;
    size_t         bucket_elems;       /* 0: one blocking all-reduce after backward */

    /* bucketed mode, per step */
    size_t         nparams;
    int            nbuckets, launched;
    ck_async      *handle[DP_MAX_BUCKETS];
    int            err;                /* first CK_* failure inside the backward hook */

    /* per-rank local batch buffers */
    float         *xb;                 /* dense input: [max_local x xb_dim], allocated on first use */
    int            xb_dim;
    int           *yb;
    size_t        *rows;               /* CSR input: dataset rows of the local batch */
    int            max_local;

    /* Compact all-reduce (CSR input, no buckets, p > 1): only the rows of the
     * input-layer weight gradient that some sample of the global step touches
     * can be non-zero. Every rank holds the whole dataset and the same epoch
     * order, so every rank derives the same list of those rows without
     * communicating; they and the rest of the buffer (b_0, W_1, ...) are packed
     * into one contiguous buffer, which is what --algo all-reduces. The sums
     * are the ones the full-buffer all-reduce would compute (the rows left out
     * are exactly zero on every rank). The optimizer update of those zero-
     * gradient rows needs nothing from the all-reduce, so it runs while the
     * all-reduce is in flight (ck_allreduce_async). */
    int            compact;
    int            overlap;            /* all-reduce in flight while the untouched rows are updated */
    uint32_t      *mark;               /* [in_dim] step stamp of the last step that touched the row */
    uint32_t       stamp;
    int           *touched;            /* [in_dim] touched rows of W_0, in first-touch order */
    float         *pack;               /* [nparams] worst case */
    double         elems_reduced;      /* floats all-reduced so far (this rank) */

    /* timing (seconds, this rank) */
    double         t_compute, t_comm;
    int64_t        steps;
} dp_ctx;

/* Set up for a model of m->nparams parameters and global micro-batch `batch`.
 * bucket_mb <= 0 disables buckets. Returns 0, or -1 with a message in err. */
int  dp_init(dp_ctx *d, ck_comm *comm, const ck_algo *algo, const mlp *m, int batch, double bucket_mb,
             char *err, size_t errlen);
/* Use the compact step (see above) for CSR datasets; call after dp_init.
 * Without it, or with buckets, the whole gradient buffer is all-reduced and
 * updated in one pass. overlap != 0: the all-reduce goes to
 * ck_allreduce_async and the untouched rows are updated while it runs (needs
 * MPI_THREAD_MULTIPLE). At p = 1 the step does the same optimizer work in the
 * same order, without the all-reduce, so p = 1 and p > 1 do the same per-rank
 * work (what a weak-scaling efficiency compares). */
int  dp_enable_compact(dp_ctx *d, const mlp *m, int overlap, char *err, size_t errlen);
void dp_free(dp_ctx *d);

/* The epoch order: writes ceil(n/p)*p indices into a malloc'd *order. Returns its length. */
size_t dp_epoch_order(size_t n, int p, uint64_t seed, int epoch, size_t **order);

/* Make every rank's parameters equal rank 0's (MPI_Bcast on the communicator). */
int  dp_broadcast_params(dp_ctx *d, float *params, size_t n);

/* One optimizer step over order[pos .. pos+len) (len <= accum*batch): local
 * forward/backward per micro-batch, gradient all-reduce, scale, step.
 * Adds this rank's summed loss and sample count to *loss_sum / *count.
 * Returns 0, or a CK_* status with a message in err. */
int  dp_step(dp_ctx *d, mlp *m, optimizer *o, const dp_dataset *ds, const size_t *order, size_t pos,
             size_t len, int batch, rng_t *dropout_rng, double *loss_sum, double *count,
             char *err, size_t errlen);

/* FNV-1a 64 over the bytes of a float buffer. */
uint64_t dp_hash(const float *x, size_t n);
/* Compare a hash of params (and optimizer state, when o != NULL) across
 * ranks. Returns 0 when all ranks agree, else -1 with a message naming the
 * ranks that differ. Collective. */
int  dp_check_sync(dp_ctx *d, const float *params, size_t n, const optimizer *o, char *err, size_t errlen);

/* Sum `n` doubles across ranks (small reductions: losses, counts, metrics). */
int  dp_sum_doubles(dp_ctx *d, double *v, int n);

#endif
