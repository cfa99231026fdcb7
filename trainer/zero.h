/*
 * zero.h — ZeRO (Rajbhandari et al. 2020) stages 1 and 2: the optimizer
 * state, and at stage 2 the gradients too, sharded over the ranks. The
 * gradient all-reduce of replicated data parallelism is a reduce-scatter
 * followed by an all-gather; ZeRO puts the optimizer step between the halves:
 *
 *   reduce-scatter the gradient sums   rank r holds its shard of the sum
 *   optimizer step on the shard        with m and v of the shard only
 *   all-gather the parameters          every rank holds every updated block
 *
 * Stage 1: one reduce-scatter of the whole gradient buffer after backward;
 * rank r's shard is block r of it (collkit's partition, ck_block). Every
 * rank sends what the ring all-reduce sends, (p-1)/p of the buffer in each
 * half, and keeps 1/p of the optimizer state: for Adam two floats per
 * parameter become 2/p.
 *
 * Stage 2: the buffer is cut into buckets of a fixed size from its start;
 * backward finishes them from the end (mlp_backward's ready hook), and each
 * finished bucket is reduce-scattered at once, while backward goes on with
 * the layers below. Rank r's shard is block r of EVERY bucket (each bucket
 * sharded evenly, as PyTorch's FSDP shards each unit's flat parameter): the
 * sums of its block land in a gradient shard of 1/p of the buffer (an
 * out-of-place reduce-scatter), and the bucket's pages are handed back to the
 * kernel (dp_release_grads), which reads them as zeros at the next backward.
 * What a
 * rank holds of the gradients between steps is the shard, 1/p; during the
 * last backward of a step, the pages backward writes (the input layer's
 * gradient touches only the rows of the batch's features) and the bucket
 * being reduce-scattered. The cost is the kernel zero-filling those pages
 * again every step. Earlier micro-batches of a step (--accum) only
 * accumulate, as DDP's no_sync does.
 *
 * On the progress engine (overlap: MPI_THREAD_MULTIPLE, p > 1, not under
 * SimGrid) stage 2's collectives do not block: each finished bucket's
 * reduce-scatter is queued (ck_reduce_scatter_async) and backward goes on;
 * after backward, zero_step waits for the buckets in the order they were
 * queued, steps each one's block as soon as its sums are in and queues that
 * bucket's parameter all-gather, so that the all-gathers run while the later
 * blocks are stepped; the step ends with the wait for them. Without the engine, the
 * same calls block, in the same order. The trace tells which ran: the
 * reduce-scatters on the progress lane, or on the main one.
 *
 * The updates are the optimizer's, element by element, on the same sums up
 * to the order of float additions: a sharded run equals a replicated one
 * within a small tolerance (tests/trainer/zero.sh).
 *
 * Checkpoints keep one format: zero_gather_state collects the shards on rank
 * 0, which saves the whole state as a replicated run does; a resumed run (at
 * any p, any stage) takes its shard of it (zero_load_state).
 */
#ifndef TRAINER_ZERO_H
#define TRAINER_ZERO_H

#include <stddef.h>
#include <stdint.h>
#include "collkit.h"
#include "dp.h"
#include "optim.h"
#include "trace.h"

/* Stage 2's bucket when --bucket-mb is not given. */
#define ZERO_DEF_BUCKET_MB 4.0

typedef struct {
    int            stage;      /* 0: off (replicated), 1: optimizer state sharded, 2: gradients too */
    ck_comm       *comm;
    dp_ctx        *dp;         /* whose gradient buffer is stepped (stage 2: mapped on demand) */
    const ck_algo *rs, *ag;    /* the reduce-scatter and all-gather algorithms */
    int            rank, p;
    size_t         n;          /* parameters */
    size_t         bucket;     /* elements per bucket: n (one bucket) below stage 2 */
    int            nbuckets;
    size_t         len;        /* this rank's shard: its block of every bucket */

    /* stage 2 */
    float         *gshard;     /* [len] this rank's gradient sums, bucket by bucket */
    int            done;       /* buckets reduce-scattered (overlap: queued) in this step, from the top */
    int            err;        /* the first CK_* failure inside the backward hook */
    char           errmsg[256];
    double         rs_s;       /* seconds in this step's reduce-scatters so far */
    uint64_t       rs_bytes;   /* bytes sent by them */

    /* stage 2 on the progress engine (zero_init decides, every rank alike) */
    int            overlap;    /* 1: each bucket's reduce-scatter and all-gather asynchronous */
    const char    *why_blocking;   /* overlap 0 at stage 2: why ("" when p is 1) */
    ck_async     **rs_h;       /* [nbuckets] the reduce-scatters in flight */
    ck_async     **ag_h;       /* [nbuckets] the all-gathers in flight */
    double         ag_s;       /* seconds waited for them at the end of the step */
    int            plant;      /* test hook (COLLKIT_ZERO_PLANT): rank 1 skips this bucket's step; -1: off */

    uint64_t       last_bytes; /* bytes this rank sent in the last step (both halves; blocking only) */
    tr_trace      *trace;      /* --trace: each step's three phases recorded there; NULL: off */
} zero_ctx;

/* Stage 0, 1 or 2 over dp's communicator and gradient buffer; rs_name,
 * ag_name name algorithms of the reduce_scatter and allgather registries that
 * run on the communicator's memory; bucket_mb is stage 2's bucket (<= 0: the
 * default; rounded up to whole pages). Stage 2 makes dp's gradient buffer one
 * mapped on demand (dp_grads_on_demand; dp_init with DP_GRADS_ON_DEMAND never
 * allocates the other kind first). Collective only in what every rank
 * decides alike. Returns 0, or -1 with a message in err. */
int  zero_init(zero_ctx *z, dp_ctx *dp, int stage, const char *rs_name, const char *ag_name, double bucket_mb,
               char *err, size_t errlen);
void zero_free(zero_ctx *z);

/* Rank q's block of bucket j: the parameters [*off, *off + *len), which are
 * elements [*pos, *pos + *len) of rank q's shard. */
void zero_segment(const zero_ctx *z, int q, int j, size_t *off, size_t *len, size_t *pos);
/* The length of rank q's shard. */
size_t zero_shard_len(const zero_ctx *z, int q);

/* The optimizer for this rank's shard (opt_create over z->len parameters). */
int zero_opt_create(const zero_ctx *z, optimizer *o, const opt_config *cfg);

/* Stage 2's mlp_backward hook (ctx: the zero_ctx; pass z->bucket as the
 * chunk): every bucket that grads[from ..) now covers is reduce-scattered,
 * its block copied into the gradient shard and its pages released (with
 * overlap: queued, and zero_step waits for it and releases it). Give it to
 * the last backward of a step only. */
void zero_bucket_ready(size_t from, void *ctx);

/* One step after backward: the gradient sums of this rank's shard (stage 1:
 * the reduce-scatter of grads now; stage 2: the buckets the hook did, and any
 * it did not yet), optimizer_step on the shard with gradient scale * sums,
 * grads ready for the next accumulation (zeroed), and the parameters
 * all-gathered. *comm_s gets the seconds spent in the collectives of the
 * step, the hook's included (with overlap: the seconds waited for them).
 * Returns 0, or a CK_* status with a message in err. */
int zero_step(zero_ctx *z, optimizer *o, float *params, float *grads, float scale, double *comm_s, char *err,
              size_t errlen);

/* The whole m and v on rank 0 (full_m, full_v: n floats there; ignored
 * elsewhere), gathered from every rank's shard. Collective. Returns 0 or -1. */
int zero_gather_state(const zero_ctx *z, const optimizer *o, float *full_m, float *full_v);
/* This rank's shard of a whole m and v (a checkpoint's, n floats each). */
void zero_load_state(const zero_ctx *z, optimizer *o, const float *full_m, const float *full_v);

/* Bytes this rank holds between steps, and what a replicated run holds. */
size_t zero_state_bytes(const zero_ctx *z);   /* optimizer state (m and v) */
size_t zero_replicated_state_bytes(const zero_ctx *z);
size_t zero_grad_bytes(const zero_ctx *z);    /* gradients: the whole buffer, or the shard at stage 2 */
/* The same, measured now: the gradient buffer's pages in memory
 * (dp_grads_resident) and the shard. */
size_t zero_grad_resident_bytes(const zero_ctx *z);

#endif
