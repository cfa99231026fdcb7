/*
 * sync_tensor.c — tensor parallelism combined with data parallelism (sync.h,
 * tp.h): --tp T splits each layer pair over a group of T ranks; the p / T
 * groups are data-parallel replicas of each other.
 *
 *   1. backward      this replica's shard of each micro-batch (the same rows
 *                    on every rank of the group), through the split layers:
 *                    one all-reduce (--tp-algo) over the group per pair in
 *                    forward, one per pair below the first in backward
 *   2. all-reduce    each shard's gradients SUMMED over its data-parallel
 *                    group (--algo), as the replicated mode does the whole
 *                    buffer (sync_replicated.c); --zero 1: reduce-scattered
 *                    instead, and all-gathered after 3 (zero.h)
 *   3. optimizer     on the shard: m and v of the shard only (--zero 1: of
 *                    this rank's block of it)
 *
 * Held per rank: the shard's parameters, gradients, m and v (W_0: 1/T of
 * it). tagtrain's own model (evaluation, checkpoints, --log's figures) is
 * the host view: world rank 0's is made whole from replica 0's shards after
 * each epoch (to_host); on the other ranks its pages are handed back to the
 * kernel, and it is never written there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sync.h"

int tt_sync_tensor_open(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    tp_ctx *t = &s->tp;
    t->T = s->plan.tp_size;
    t->rank = s->plan.tp_rank;
    t->gathers = s->plan.dp_rank == 0;
    t->world = s->plan.world;
    t->group = s->plan.tp;
    const char *shift = getenv("TAGTRAIN_TEST_TP_SHIFT");
    t->shift = shift && !strcmp(shift, "1");
    int rc = ck_comm_create(t->group, CK_MEM_HOST | CK_MEM_SHM, &t->comm);
    if (rc) ck_watch_abort("--tp: ck_comm_create: %s", ck_strerror(rc));
    char aerr[1024];
    int n = 0;
    if (ck_algo_parse_list(cfg->tp_algo, ck_comm_mem(t->comm), &t->algo, 1, &n, aerr, sizeof aerr)) {
        if (s->plan.dp_rank == 0 && t->rank == 0 && s->plan.pp_rank == 0)
            snprintf(err, cap, "--tp-algo on the %s transport: %s", ck_comm_transport_name(t->comm), aerr);
        return 2;
    }
    return 0;
}

static void describe(tt_sync *s, const tt_sync_cfg *cfg)
{
    tt_sync_info *in = &s->info;
    const mlp *m = s->model, *h = s->host;
    tt_sync_describe_allreduce(s, cfg);
    in->tp = s->tp.T;
    in->tp_algo = s->tp.algo->name;
    in->param_bytes = m->nparams * sizeof(float);
    in->w0_bytes = 4 * tp_w0_bytes(m);   /* parameters, gradients, m, v */
    in->w0_bytes_replicated = 4 * tp_w0_bytes(h);
    in->state_replicated = 2 * h->nparams * sizeof(float);
    char dp[200];
    snprintf(dp, sizeof dp, "%.*s", (int)sizeof dp - 1, in->line);
    const int D = s->plan.dp_size;
    snprintf(in->line, sizeof in->line, "tensor parallelism: groups of %d ranks split W_0 and each layer pair (%s on "
             "%s in forward and backward); %d data-parallel replica%s, each shard's %s", s->tp.T, in->tp_algo,
             ck_comm_transport_name(s->tp.comm), D, D == 1 ? "" : "s", dp);
    snprintf(in->title, sizeof in->title, "tagtrain --tp %d --tp-algo %s, --algo %s over %d replica%s", s->tp.T,
             in->tp_algo, in->algo, s->plan.dp_size, s->plan.dp_size == 1 ? "" : "s");
}

static int init(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    int rc = tt_sync_tensor_open(s, cfg, err, cap);
    if (rc) return rc;
    s->host = s->model;
    if (mlp_create_tp(&s->shard, &s->host->cfg, cfg->max_batch, s->tp.T, s->tp.rank))
        ck_watch_abort("rank %d: --tp: out of memory for the shard", s->plan.dp_rank);
    s->shard.reduce = tp_reduce;
    s->shard.reduce_ctx = &s->tp;
    if ((rc = tt_sync_use_shard(s, cfg, err, cap))) return rc;
    describe(s, cfg);
    return 0;
}

int tt_sync_tensor_step(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap)
{
    int rc;
    if (s->zero.dp) {
        /* --zero 1: the shard's gradients reduce-scattered over the data-parallel group, its block stepped,
         * the shard all-gathered; each half covers the shard's buffer. */
        rc = zero_step(&s->zero, s->opt, s->model->params, s->model->grads, 1.0f / (float)st->len, comm_s, err, cap);
        tt_sim_charge(10.0 * (double)s->zero.len);
        s->step_bytes = s->plan.dp_size > 1 ? s->model->nparams * sizeof(float) : 0;
    } else rc = tt_sync_allreduce_step(s, st, comm_s, err, cap);
    /* The step's time and bytes of moving: the group's all-reduces inside backward too. */
    *comm_s += s->tp.comm_s;
    s->step_bytes += s->tp.bytes;
    s->tp.comm_s = 0;
    s->tp.bytes = 0;
    return rc;
}

static int shards_to_host(tt_sync *s, char *err, size_t cap)
{
    (void)err;
    (void)cap;
    tp_gather(&s->tp, s->model, s->host, s->model->params, s->host->params);
    return 0;
}

/* Rank 0's host parameters to every shard; the other ranks' host views given back. */
static int broadcast_shards(tt_sync *s, char *err, size_t cap)
{
    (void)err;
    (void)cap;
    tp_scatter(&s->tp, s->model, s->host, s->host->params, s->model->params);
    tt_sync_release_host(s);
    return 0;
}

static int gather_shard_state(tt_sync *s, const float **m, const float **v)
{
    const float *sm, *sv;
    const int rc = tt_sync_shard_state(s, &sm, &sv);
    tp_gather(&s->tp, s->model, s->host, sm, s->full_m);
    tp_gather(&s->tp, s->model, s->host, sv, s->full_v);
    *m = s->full_m;
    *v = s->full_v;
    return rc;
}

static void take_shard_state(tt_sync *s, const float *m, const float *v)
{
    float *sm, *sv;
    tt_sync_shard_room(s, &sm, &sv);
    tp_take(&s->tp, s->model, s->host, m, sm);
    tp_take(&s->tp, s->model, s->host, v, sv);
    tt_sync_shard_taken(s);
}

void tt_sync_tensor_close(tt_sync *s)
{
    if (s->tp.comm) ck_comm_destroy(s->tp.comm);
    s->tp.comm = NULL;
}

static void destroy(tt_sync *s)
{
    tt_sync_drop_shard(s);
    tt_sync_tensor_close(s);
}

const tt_sync_ops tt_sync_tensor = {
    .init = init,
    .backward = tt_sync_host_backward,
    .step = tt_sync_tensor_step,
    .to_host = shards_to_host,
    .to_device = broadcast_shards,
    .gather_state = gather_shard_state,
    .load_state = take_shard_state,
    .destroy = destroy,
    .broadcast = broadcast_shards,
};
