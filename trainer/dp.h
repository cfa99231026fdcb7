/*
 * dp.h — data parallelism over collkit: what a rank needs besides the model
 * to take part in a data-parallel step. The step itself is written out in
 * tagtrain.c; its pieces are here:
 *
 *   dp_epoch_order     the epoch's sample order, the same on every rank;
 *   dp_shard           this rank's samples of a micro-batch;
 *   dp_backward        the backward of a micro-batch: mlp_backward with the
 *                      bucket hook on the step's last one, and the timeline
 *                      of layers and buckets when --trace records it;
 *   dp_bucket_ready    mlp_backward's hook for DDP-style buckets (--bucket-mb);
 *   dp_allreduce_grads the gradient all-reduce (SUM) with the registry
 *                      algorithm --algo names.
 *
 * Epoch order (DistributedSampler, padding variant): a permutation of 0..n-1
 * drawn from (seed, epoch) — the same on every rank — padded by wrapping
 * around to a multiple of p so every rank gets the same number of samples
 * (ceil(n/p) each).
 *
 * Sharding: `--batch B` is the GLOBAL micro-batch; rank r takes the positions
 * j with j % p == r (the strided split of DistributedSampler). The last
 * micro-batch of an epoch may be short; a rank that gets no row in it still
 * joins the all-reduce with what it accumulated.
 *
 * The all-reduce, by default (canonical DDP): the WHOLE gradient buffer, every
 * step, nparams floats — what lab 04 and PyTorch DDP do, and a size collbench
 * can be run at for comparison. Every rank's buffer holds the SUM of its
 * samples' gradients; after the all-reduce every rank holds the sum over all
 * samples of the step, which the optimizer divides by the step's sample count.
 * Summing first and dividing once makes p ranks compute the mean gradient of
 * one rank with the whole batch, up to the order of float additions
 * (tests/trainer/test_dp.c).
 *
 * Buckets (bucket_mb > 0): the buffer is cut from its END into slices;
 * mlp_backward reports how far the final part of the buffer reaches and each
 * complete slice goes to ck_allreduce_async while backward continues; the
 * all-reduce then only waits for them. Only the last micro-batch of a step
 * launches buckets (earlier ones only accumulate, like DDP's no_sync).
 *
 * Sparse gradients (--sparse-grads, an optimisation, off by default): the
 * input layer reads CSR rows, so only the rows of W_0 that some sample of the
 * global step touches can have a non-zero gradient — a few thousand of 65536
 * for the default model. Every rank holds the whole dataset and the same
 * epoch order, so every rank lists the same touched rows without
 * communicating; those rows and the rest of the buffer (b_0, W_1, ...) are
 * packed into one contiguous buffer, which is what --algo all-reduces, and
 * unpacked. The rows left out are exactly zero on every rank, so the sums are
 * the ones of the dense all-reduce and the optimizer step is the same; the
 * message size changes every step (it is no longer "the gradient buffer").
 */
#ifndef TRAINER_DP_H
#define TRAINER_DP_H

#include <stddef.h>
#include <stdint.h>
#include "collkit.h"
#include "model.h"
#include "trace.h"

#define DP_MAX_BUCKETS 4096

typedef struct {
    ck_comm       *comm;
    const ck_algo *algo;
    int            rank, p;
    size_t         nparams;
    float         *grads;              /* the model's gradient buffer (from ck_alloc, owned here) */
    size_t         mapped;             /* > 0: grads is mapped on demand, this many bytes (dp_grads_on_demand) */
    mlp           *model;              /* whose grads dp_init replaced */

    /* buckets: launched from mlp_backward, waited for in dp_allreduce_grads */
    size_t         bucket_elems;       /* 0: one blocking all-reduce after backward */
    int            nbuckets, launched;
    ck_async      *handle[DP_MAX_BUCKETS];
    int            err;                /* first CK_* failure inside the backward hook */

    /* --sparse-grads */
    int            sparse;
    int            in_dim, row_len;    /* W_0 is [in_dim x row_len] at offset 0 */
    uint32_t      *mark, stamp;        /* [in_dim] stamp of the last step that touched the row */
    int           *touched;            /* [in_dim] touched rows of W_0, in first-touch order */
    float         *pack;               /* [nparams] worst case */

    size_t         last_bytes;         /* bytes all-reduced by the last dp_allreduce_grads (0 at p = 1) */
    double         calls_s;            /* the last dp_allreduce_grads' calls, each from its start to its end:
                                        * the blocking call (sparse: with its packing), or the buckets' runs
                                        * on the progress thread summed (overlapping backward or not) */
    int            ncalls;             /* ... how many, and each one's start and end (ck_now) */
    double         call_t0[DP_MAX_BUCKETS], call_t1[DP_MAX_BUCKETS], call_last[DP_MAX_BUCKETS];
    int            one_clock;          /* dp_calls_apart: 1 the ranks share a node (and a clock), 0 not, -1 not known */

    /* --trace (dp_trace_start): the timeline of every step (trace.h) */
    int            tracing, launching, step_done;
    /* Another taker of finished gradient slices instead of the all-reduce
     * buckets (--zero 2's bucket reduce-scatters): called as the bucket hook
     * is, in slices of on_ready_chunk elements, during the last backward. */
    void         (*on_ready)(size_t from, void *ctx);
    void          *on_ready_ctx;
    size_t         on_ready_chunk;
    tr_trace       trace;
    int            layer;              /* the layer whose gradient backward is computing */
    double         t_layer;            /* when the layer before it was done */
} dp_ctx;

/* dp_init's flags. */
enum {
    DP_SPARSE_GRADS    = 1u << 0,   /* the touched-rows all-reduce (not with buckets) */
    DP_GRADS_ON_DEMAND = 1u << 1,   /* the gradient buffer from dp_grads_on_demand from the start */
};
/* Set up for model m (its parameter layout and gradient buffer). The
 * gradient buffer is replaced by one (zeroed) from the communicator's memory
 * (ck_alloc: on the shm transport, the shared heap the peers load from), or
 * with DP_GRADS_ON_DEMAND by a mapping (dp_grads_on_demand); dp_free frees it
 * and sets m->grads to NULL, so call it before mlp_free. bucket_mb <= 0: no
 * buckets. Returns 0, or -1 with a message in err. */
int  dp_init(dp_ctx *d, ck_comm *comm, const ck_algo *algo, mlp *m, double bucket_mb, unsigned flags,
             char *err, size_t errlen);
void dp_free(dp_ctx *d);

/* Replace the gradient buffer by an anonymous mapping whose pages exist only
 * once written (ZeRO stage 2, zero.h: a rank keeps 1/p of the gradients, and
 * the buffer's pages come and go bucket by bucket); nothing to do when it is
 * one already. Host memory of this process, not the communicator's: what the
 * single-copy all-reduces load from their peers cannot live there. Returns
 * 0, or -1 with a message in err. */
int  dp_grads_on_demand(dp_ctx *d, char *err, size_t errlen);
/* Hand grads[off, off + len) back to the kernel: it reads as zeros again and
 * holds no memory until written. off is at a page boundary of the buffer (a
 * whole number of pages from its start); the partial page at the end of the
 * range goes too, so the range must not share a page with live data. Only for
 * a buffer from dp_grads_on_demand. */
void dp_release_grads(dp_ctx *d, size_t off, size_t len);

/* Bytes of the gradient buffer's pages that are in memory now (mincore):
 * what a rank really holds of it (the whole buffer, pages shared with its
 * neighbours included, unless it is mapped on demand). */
size_t dp_grads_resident(const dp_ctx *d);

/* The epoch order: writes ceil(n/p)*p indices into a malloc'd *order. Returns its length. */
size_t dp_epoch_order(size_t n, int p, uint64_t seed, int epoch, size_t **order);

/* This rank's samples among global positions first .. first+n-1 of the epoch
 * order: writes their dataset rows to rows[] and returns how many. */
int  dp_shard(const dp_ctx *d, const size_t *order, size_t first, size_t n, size_t *rows);

/* Backward of one micro-batch of b rows (the model's forward just ran on it):
 * gradients added into the buffer. On the last micro-batch of a step
 * (last_micro) the buckets are launched as their slices become final. */
void dp_backward(dp_ctx *d, const int *labels, int b, int last_micro);

/* --trace: record from now on. dp_trace_write gathers the timeline on rank 0 and writes it to f
 * (rank 0's file; NULL elsewhere), collective; 0, or -1 with err on rank 0. */
void dp_trace_start(dp_ctx *d);
int  dp_trace_write(dp_ctx *d, FILE *f, const char *title, char *err, size_t errlen);

/* mlp_backward's ready hook (ctx: the dp_ctx): launches every complete bucket.
 * Pass it (with d->bucket_elems as the chunk) to the last backward of a step
 * when d->nbuckets > 0. */
void dp_bucket_ready(size_t from, void *ctx);

/* Make every rank's gradient buffer the SUM over all ranks: the dense
 * all-reduce, or the wait for the buckets, or (sparse) the packed touched
 * rows of the step whose global samples are step_rows[0..n) of x. At p = 1
 * there is nothing to do. Sets d->last_bytes. Returns 0, or a CK_* status
 * with a message in err. */
int  dp_allreduce_grads(dp_ctx *d, const csr_rows *x, const size_t *step_rows, size_t n, char *err, size_t errlen);

/* tagtrain --breakdown, after a step that called dp_allreduce_grads
 * (collective over the communicator): its calls taken apart across the
 * ranks. *entry: the time this rank's calls waited for the last rank to
 * start each one, summed (with buckets, launched as this rank's backward
 * finishes them, the other rank's backward may be behind); *proper: the
 * rest, each call from the moment every rank had started it to its end, the
 * figure to set beside collbench's (which starts its calls together). The
 * starts are compared on one clock, so only where the ranks share a node
 * (found once); elsewhere both are -1. */
void dp_calls_apart(dp_ctx *d, double *entry, double *proper);
/* Make every rank's parameters equal rank 0's (MPI_Bcast on the communicator). */
int  dp_broadcast_params(dp_ctx *d, float *params, size_t n);

/* FNV-1a 64 over the bytes of a float buffer. */
uint64_t dp_hash(const float *x, size_t n);
/* Compare hashes of params, m and v (m, v may be NULL) across ranks. Returns
 * 0 when all ranks agree, else -1 with a message naming the first rank that
 * differs. Collective. */
int  dp_check_sync(dp_ctx *d, const float *params, const float *m, const float *v, size_t n, char *err,
                   size_t errlen);

/* Sum `n` doubles across ranks (small reductions: losses, counts, times). */
int  dp_sum_doubles(dp_ctx *d, double *v, int n);

#endif
