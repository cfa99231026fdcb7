/*
 * sync_replicated.c — replicated data parallelism (sync.h): every rank holds
 * the whole model and the whole optimizer state; after backward every rank's
 * gradient buffer becomes the SUM over the data-parallel group, and every
 * rank takes the same optimizer step on the same sums.
 *
 *   1. backward      this rank's shard of each micro-batch, gradients summed
 *   2. all-reduce    the gradient buffer made the sum over the ranks (dp.h):
 *                      dense     the whole buffer after backward, one call
 *                      bucketed  (--bucket-mb) slices from the end of the
 *                                buffer, each launched as backward finishes
 *                                it, then waited for
 *                      sparse    (--sparse-grads) the input-layer rows the
 *                                step's samples touch, and the rest, packed
 *   3. optimizer     mean gradient = sum / samples of the step
 *
 * Bytes per step: n floats all-reduced (sparse: the touched rows and the
 * rest, fewer); what the ring all-reduce sends of them is 2 (p-1)/p n floats
 * per rank. Held per rank: the parameters, the gradients and m and v, whole.
 */
#include <stdio.h>
#include <string.h>
#include "sync.h"

static int init(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    mlp *m = s->model;
    if (dp_init(&s->dp, s->comm, s->algo, m, cfg->bucket_mb, cfg->sparse ? DP_SPARSE_GRADS : 0, err, cap))
        ck_watch_abort("rank %d: setup: %s", s->plan.dp_rank, err);
    s->have_dp = 1;
    if (opt_create(s->opt, cfg->opt, m->nparams)) ck_watch_abort("rank %d: optimizer: out of memory", s->plan.dp_rank);
    tt_sync_describe_allreduce(s, cfg);
    return 0;
}

void tt_sync_describe_allreduce(tt_sync *s, const tt_sync_cfg *cfg)
{
    tt_sync_info *in = &s->info;
    const size_t dense = s->model->nparams * sizeof(float);
    in->mode = cfg->sparse ? "sparse" : s->dp.nbuckets ? "bucketed" : "dense";
    in->grad_bytes = dense;
    in->state_bytes = in->state_replicated = 2 * dense;
    const int p = s->plan.dp_size;
    if (p == 1) snprintf(in->line, sizeof in->line, "all-reduce: none (1 rank)");
    else if (cfg->sparse)
        snprintf(in->line, sizeof in->line, "all-reduce: sparse (--sparse-grads): the touched rows of the input layer "
                 "and the rest, up to %.2f MB per step", dense / 1e6);
    else
        snprintf(in->line, sizeof in->line, "all-reduce: %s, %.2f MB per step (the whole gradient buffer)%s", in->mode,
                 dense / 1e6, s->dp.nbuckets ? ", in buckets during backward" : "");
    char how[80];
    if (s->dp.nbuckets)
        snprintf(how, sizeof how, "%d buckets of %g MiB overlapping backward", s->dp.nbuckets, cfg->bucket_mb);
    else snprintf(how, sizeof how, "one all-reduce%s after backward", cfg->sparse ? " of the touched rows" : "");
    snprintf(in->title, sizeof in->title, "tagtrain --algo %s, p = %d, %s", in->algo, p, how);
}

/* With buckets, the optimizer steps each bucket's slice as soon as its sums
 * are in (dp.h's on_summed), while the buckets after it are still in
 * flight: AdamW and SGD are element by element, so the slices stepped at
 * one step count give the parameters of one whole step, bit for bit. */
typedef struct {
    optimizer *o;
    float     *params, *grads, scale;
    int64_t    t;          /* the step count every slice is stepped at */
    size_t     done;       /* elements stepped */
    double     busy_s;     /* seconds spent stepping (not waiting) */
} slice_step;

static void step_slice(size_t start, size_t len, void *ctx)
{
    slice_step *k = ctx;
    const double t0 = ck_now();
    optimizer seg = *k->o;
    seg.n = len;
    seg.m = k->o->m + start;
    seg.v = k->o->v + start;
    seg.t = k->t;
    optimizer_step(&seg, k->params + start, k->grads + start, k->scale);
    k->done += len;
    k->busy_s += ck_now() - t0;
}

int tt_sync_allreduce_step(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap)
{
    mlp *m = s->model;
    slice_step k = {.o = s->opt, .params = m->params, .grads = m->grads, .scale = 1.0f / (float)st->len,
                    .t = s->opt->t};
    if (s->dp.nbuckets > 0) {
        s->dp.on_summed = step_slice;
        s->dp.on_summed_ctx = &k;
    }
    const double t1 = ck_now();
    /* 2. all-reduce: every rank's buffer becomes the SUM over all ranks
     *    (with buckets, each slice stepped as its sums come in). */
    int rc = dp_allreduce_grads(&s->dp, st->x, st->order + st->pos, st->len, err, cap);
    s->dp.on_summed = NULL;
    if (rc) return rc;
    *comm_s = ck_now() - t1 - k.busy_s;
    s->step_bytes = s->dp.last_bytes;
    /* 3. optimizer: the mean gradient is the sum / samples in the step
     *    (what the slices left: everything, without buckets or at p = 1). */
    if (k.done == 0) optimizer_step(s->opt, m->params, m->grads, k.scale);
    else if (k.done != m->nparams) {
        snprintf(err, cap, "the buckets stepped %zu of %zu parameters", k.done, m->nparams);
        return -1;
    } else s->opt->t = k.t + 1;
    tt_sim_charge(10.0 * (double)m->nparams);
    return 0;
}

/* The state is whole on every rank: nothing to gather. */
int tt_sync_whole_state(tt_sync *s, const float **m, const float **v)
{
    *m = s->opt->m;
    *v = s->opt->v;
    return 0;
}

void tt_sync_load_whole(tt_sync *s, const float *m, const float *v)
{
    memcpy(s->opt->m, m, s->model->nparams * sizeof *m);
    memcpy(s->opt->v, v, s->model->nparams * sizeof *v);
}

const tt_sync_ops tt_sync_replicated = {
    .init = init,
    .backward = tt_sync_host_backward,
    .step = tt_sync_allreduce_step,
    .gather_state = tt_sync_whole_state,
    .load_state = tt_sync_load_whole,
};
