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

int tt_sync_allreduce_step(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap)
{
    const double t1 = ck_now();
    /* 2. all-reduce: every rank's buffer becomes the SUM over all ranks. */
    int rc = dp_allreduce_grads(&s->dp, st->x, st->order + st->pos, st->len, err, cap);
    if (rc) return rc;
    *comm_s = ck_now() - t1;
    s->step_bytes = s->dp.last_bytes;
    /* 3. optimizer: the mean gradient is the sum / samples in the step. */
    optimizer_step(s->opt, s->model->params, s->model->grads, 1.0f / (float)st->len);
    tt_sim_charge(10.0 * (double)s->model->nparams);
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
