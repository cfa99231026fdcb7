/*
 * sync_zero.c — ZeRO stages 1 and 2 (--zero; the algorithm is zero.h's):
 * the gradient all-reduce split into its two halves with the optimizer step
 * between them, so that each rank keeps and steps only its shard of the
 * optimizer state (stage 2: of the gradients too).
 *
 *   1. backward        this rank's shard of each micro-batch, gradients
 *                      summed; stage 2: each bucket reduce-scattered as
 *                      backward finishes it (zero_bucket_ready), on the
 *                      progress thread when the library can run one
 *   2. reduce-scatter  stage 1: the whole buffer after backward; rank r
 *                      holds the sums of its block (--rs-algo)
 *   3. optimizer       on the block, with m and v of the block only
 *   4. all-gather      every rank's updated block to every rank (--ag-algo);
 *                      stage 2 on the progress thread: each bucket's queued
 *                      as soon as its block is stepped, while the blocks
 *                      after it are, and waited for at the end of the step
 *
 * Bytes per step: each half covers the n-float buffer, (p-1)/p of it sent
 * per rank, what the ring all-reduce sends in all. Held per rank between
 * steps: the parameters whole, m and v of 1/p of them; stage 2 also only
 * 1/p of the gradients. A checkpoint gathers the whole state on rank 0
 * (one format at any p and any stage).
 */
#include <stdio.h>
#include <stdlib.h>
#include "sync.h"

static void describe(tt_sync *s)
{
    const zero_ctx *z = &s->zero;
    tt_sync_info *in = &s->info;
    const double mb = s->model->nparams * sizeof(float) / 1e6;
    in->mode = z->stage == 2 ? "zero2" : "zero1";
    in->zero = z->stage;
    in->rs_algo = z->rs->name;
    in->ag_algo = z->ag->name;
    in->grad_buckets = z->nbuckets;
    in->grad_bucket_bytes = z->bucket * sizeof(float);
    in->grad_bytes = zero_grad_bytes(z);
    in->state_bytes = zero_state_bytes(z);
    in->state_replicated = zero_replicated_state_bytes(z);
    in->state_sharded = 1;
    if (z->stage == 1)
        snprintf(in->line, sizeof in->line, "zero 1: gradients reduce-scattered (%s), this rank's block of %zu "
                 "parameters stepped, parameters all-gathered (%s); %.2f MB each way per step", z->rs->name, z->len,
                 z->ag->name, mb);
    else
        snprintf(in->line, sizeof in->line, "zero 2: gradients reduce-scattered (%s) in %d bucket%s of %.2f MB as "
                 "backward finishes them, this rank's shard of %zu parameters stepped, parameters all-gathered (%s); "
                 "%.2f MB each way per step; %s%s%s; during backward, besides the shard: the gradient pages backward "
                 "writes and the buckets in flight", z->rs->name, z->nbuckets, z->nbuckets == 1 ? "" : "s",
                 z->bucket * sizeof(float) / 1e6, z->len, z->ag->name, mb,
                 z->overlap ? "overlapped on the progress thread" : "blocking",
                 z->why_blocking && *z->why_blocking ? ": " : "", z->why_blocking ? z->why_blocking : "");
    snprintf(in->title, sizeof in->title, "tagtrain --zero %d --rs-algo %s --ag-algo %s, p = %d", z->stage,
             z->rs->name, z->ag->name, s->plan.dp_size);
}

static int init(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    mlp *m = s->model;
    const int rank = s->plan.dp_rank;
    /* --zero 2's --bucket-mb is its own (zero.h), not DDP's; its gradient buffer is mapped on demand. */
    if (dp_init(&s->dp, s->comm, s->algo, m, 0, cfg->zero == 2 ? DP_GRADS_ON_DEMAND : 0, err, cap))
        ck_watch_abort("rank %d: setup: %s", rank, err);
    s->have_dp = 1;
    char why[512];
    if (zero_init(&s->zero, &s->dp, cfg->zero, cfg->rs_algo, cfg->ag_algo, cfg->bucket_mb, why, sizeof why)) {
        /* Every rank reaches the same verdict: rank 0 says it. */
        if (rank == 0) snprintf(err, cap, "%s", why);
        return 2;
    }
    if (cfg->zero == 2) {   /* backward's finished buckets reduce-scattered, not all-reduced */
        s->dp.on_ready = zero_bucket_ready;
        s->dp.on_ready_ctx = &s->zero;
        s->dp.on_ready_chunk = s->zero.bucket;
    }
    if (zero_opt_create(&s->zero, s->opt, cfg->opt)) ck_watch_abort("rank %d: optimizer: out of memory", rank);
    /* Rank 0 gathers the whole optimizer state for its checkpoints. */
    if (rank == 0 && cfg->full_state) {
        const size_t n = m->nparams ? m->nparams : 1;
        s->full_m = malloc(n * sizeof(float));
        s->full_v = malloc(n * sizeof(float));
        if (!s->full_m || !s->full_v) ck_watch_abort("rank 0: optimizer: out of memory");
    }
    describe(s);
    return 0;
}

static int step(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap)
{
    /* 2-4. reduce-scatter (stage 2: its buckets already, in backward), this
     *      rank's shard stepped, all-gather; the collectives' time (the
     *      hook's included) is the step's communication. */
    int rc = zero_step(&s->zero, s->opt, s->model->params, s->model->grads, 1.0f / (float)st->len, comm_s, err, cap);
    if (rc) return rc;
    tt_sim_charge(10.0 * (double)s->zero.len);
    s->step_bytes = s->plan.dp_size > 1 ? s->model->nparams * sizeof(float) : 0;   /* the buffer each half covers */
    s->sent_bytes = (long long)s->zero.last_bytes;
    return 0;
}

static int gather_state(tt_sync *s, const float **m, const float **v)
{
    *m = s->full_m;
    *v = s->full_v;
    return zero_gather_state(&s->zero, s->opt, s->full_m, s->full_v);
}

static void load_state(tt_sync *s, const float *m, const float *v) { zero_load_state(&s->zero, s->opt, m, v); }

static void destroy(tt_sync *s)
{
    zero_free(&s->zero);
    free(s->full_m);
    free(s->full_v);
    s->full_m = s->full_v = NULL;
}

const tt_sync_ops tt_sync_zero = {
    .init = init,
    .backward = tt_sync_host_backward,
    .step = step,
    .gather_state = gather_state,
    .load_state = load_state,
    .destroy = destroy,
};
