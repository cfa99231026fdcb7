/*
 * sync_pipeline.c — pipeline parallelism combined with data parallelism
 * (sync.h, pp.h): --pp S cuts the layers into S stages on S consecutive
 * ranks; the p / S pipelines are data-parallel replicas of each other.
 *
 *   1. backward      each batch of this replica's shard through the pipeline
 *                    in --microbatches M pieces (--pp-schedule gpipe or 1f1b):
 *                    activations forward, their gradients backward, as
 *                    point-to-point messages; the stage's gradients SUMMED
 *   2. all-reduce    each stage's gradients summed over its data-parallel
 *                    group (--algo), as sync_replicated.c does the whole buffer
 *                    (--zero 1: reduce-scattered, all-gathered after 3)
 *   3. optimizer     on the stage's layers: their m and v only (--zero 1:
 *                    this rank's block of them)
 *
 * A stage's layers are one slice of the whole parameter buffer, so the moves
 * to and from tagtrain's whole model (world rank 0's host view, as for --tp)
 * are a gather and a broadcast of slices; checkpoints keep the one format.
 *
 * The hybrid (--tp T with --pp S, p = T x S x replicas): each stage's layers
 * split over a tensor-parallel group of T ranks as --tp splits the whole
 * model (tp.h; the group's all-reduces inside each micro-batch's forward and
 * backward), the messages between tensor rank t of one stage and tensor
 * rank t of the next. A cut after a column-split layer sends each rank's
 * columns of the activations, which are the rows the next stage's
 * row-split layer holds; a cut after a row-split (or whole) layer sends the
 * whole activations, the same from every rank of the group. The whole model
 * is made of the stages, each made whole from its shards first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_group.h"
#include "sync.h"

static void describe(tt_sync *s, const tt_sync_cfg *cfg, int l0, int l1)
{
    const int S = s->plan.pp_size, T = s->plan.tp_size, D = s->plan.dp_size;
    tt_sync_describe_allreduce(s, cfg);
    tt_sync_info *in = &s->info;
    in->pp = S;
    in->pp_sched = pp_schedule_name(cfg->pp_sched);
    in->microbatches = cfg->microbatches;
    in->param_bytes = s->model->nparams * sizeof(float);
    in->state_replicated = 2 * s->host->nparams * sizeof(float);
    in->act_bytes = pp_act_bytes(&s->pp);
    in->bubble_model = (double)(S - 1) / (double)(cfg->microbatches + S - 1);
    char tp[160] = "";
    if (T > 1) {
        in->tp = T;
        in->tp_algo = s->tp.algo->name;
        /* W_0 (parameters, gradients, m, v) is the first stage's: none on the others. */
        in->w0_bytes = l0 == 0 ? 4 * tp_w0_bytes(s->model) : 0;
        in->w0_bytes_replicated = 4 * tp_w0_bytes(s->host);
        snprintf(tp, sizeof tp, ", each split over a tensor-parallel group of %d ranks (%s on %s)", T, in->tp_algo,
                 ck_comm_transport_name(s->tp.comm));
    }
    char dp[200];
    snprintf(dp, sizeof dp, "%.*s", (int)sizeof dp - 1, in->line);
    snprintf(in->line, sizeof in->line, "pipeline parallelism: %d stages (this rank: layers %d..%d)%s, %d "
             "micro-batch%s, %s schedule (bubble (S-1)/(M+S-1) = %.3f); %d data-parallel replica%s, each stage's %s",
             S, l0, l1 - 1, tp, cfg->microbatches, cfg->microbatches == 1 ? "" : "es", in->pp_sched,
             in->bubble_model, D, D == 1 ? "" : "s", dp);
    char tpt[80] = "";
    if (T > 1) snprintf(tpt, sizeof tpt, " --tp %d --tp-algo %s", T, in->tp_algo);
    snprintf(in->title, sizeof in->title, "tagtrain --pp %d --microbatches %d --pp-schedule %s%s", S,
             cfg->microbatches, in->pp_sched, tpt);
}

/* The stage's messages go on the plan's pipeline group. Test hook
 * (tests/trainer/hybrid.sh): TAGTRAIN_TEST_PP_BOUNDARY=1 wires the stage
 * boundaries wrong, tensor rank t of stage s to rank t + 1 (mod T) of stage
 * s + 1, so that a cut after a column-split layer hands each rank's columns
 * to the rank that holds the other rows; the sizes match, nothing hangs,
 * only the model is wrong. Collective over world when the hook is set. */
static void open_messages(tt_sync *s)
{
    const char *hook = getenv("TAGTRAIN_TEST_PP_BOUNDARY");
    MPI_Comm msg = s->plan.pp;
    const int T = s->plan.tp_size, wrong = hook && !strcmp(hook, "1") && T > 1;
    if (wrong && ck_mpi_split(s->plan.world, s->plan.dp_rank * T + (s->plan.tp_rank + s->plan.pp_rank) % T,
                              s->plan.pp_rank, &msg, "the test's wrong stage boundaries"))
        ck_watch_abort("--pp: MPI_Comm_split failed");
    const int rc = ck_comm_create(msg, CK_MEM_HOST, &s->pp_comm);   /* a communicator of its own: msg is freed */
    if (rc) ck_watch_abort("--pp: ck_comm_create: %s", ck_strerror(rc));
    if (wrong) MPI_Comm_free(&msg);
}

static int init(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    const int S = s->plan.pp_size, stage = s->plan.pp_rank, T = s->plan.tp_size;
    int rc = T > 1 ? tt_sync_tensor_open(s, cfg, err, cap) : 0;
    if (rc) return rc;
    open_messages(s);
    s->host = s->model;
    int l0, l1;
    pp_stage_layers(s->host->nlayers, S, stage, &l0, &l1);
    /* The hybrid: the stage's layers split over its tensor-parallel group as --tp alone splits the whole model. */
    if (mlp_create_part(&s->shard, &s->host->cfg, cfg->max_batch, T, s->plan.tp_rank, l0, l1))
        ck_watch_abort("--pp: out of memory for stage %d", stage);
    if (T > 1) {
        s->shard.reduce = tp_reduce;
        s->shard.reduce_ctx = &s->tp;
    }
    if ((rc = tt_sync_use_shard(s, cfg, err, cap))) return rc;
    if (pp_open(&s->pp, s->pp_comm, S, stage, cfg->microbatches, cfg->pp_sched, s->model))
        ck_watch_abort("--pp: out of memory for the micro-batches' activations");
    s->pp.charge = tt_sim_charge;   /* forward 2, backward 4 flops per parameter and sample, as sync.c models */
    describe(s, cfg, l0, l1);
    return 0;
}

static int backward(tt_sync *s, const tt_step *st, double loss_cnt[2], char *err, size_t cap)
{
    (void)err;
    (void)cap;
    /* The loss once per replica: the last stage's tensor-parallel rank 0 (its group computes the same). */
    const int last = s->plan.pp_rank == s->plan.pp_size - 1 && s->plan.tp_rank == 0;
    for (size_t mb = 0; mb < st->len; mb += (size_t)st->batch) {
        const size_t mlen = st->len - mb < (size_t)st->batch ? st->len - mb : (size_t)st->batch;
        const int b = dp_shard(&s->dp, st->order, st->pos + mb, mlen, st->rows);
        for (int r = 0; r < b; r++) st->labels[r] = st->y[st->rows[r]];
        const double loss = pp_run(&s->pp, s->model, st->x, st->rows, st->labels, b, st->drop);
        /* The loss is the last stage's; tt_sync_sum adds it over every rank. */
        if (last) {
            loss_cnt[0] += loss;
            loss_cnt[1] += b;
        }
    }
    return 0;
}

/* A stage's slice of the whole buffer: where it starts, and its floats. */
static void slice(const tt_sync *s, int stage, int *off, int *n)
{
    int l0, l1;
    pp_stage_layers(s->host->nlayers, s->plan.pp_size, stage, &l0, &l1);
    *off = (int)s->host->w_off[l0];
    *n = (int)((l1 < s->host->nlayers ? s->host->w_off[l1] : s->host->nparams) - s->host->w_off[l0]);
}

/* Replica 0's stages to world rank 0's whole buffer; under --tp, each stage
 * made whole first on its tensor-parallel rank 0 from its group's shards. */
static void gather(tt_sync *s, const float *src, float *dst)
{
    if (s->plan.dp_rank != 0) return;
    const int S = s->plan.pp_size, stage = s->plan.pp_rank;
    int counts[2 * (MLP_MAX_HIDDEN + 1)];
    for (int q = 0; q < S; q++) slice(s, q, &counts[S + q], &counts[q]);
    float *whole = NULL;
    if (s->plan.tp_size > 1) {
        if (s->plan.tp_rank == 0 && !(whole = malloc((size_t)counts[stage] * sizeof *whole)))
            ck_watch_abort("--pp: out of memory for stage %d whole", stage);
        tp_gather(&s->tp, s->model, s->host, src, whole);
        src = whole;
    }
    if (s->plan.tp_rank == 0)
        ck_watch_gatherv(src, counts[stage], MPI_FLOAT, dst, counts, counts + S, MPI_FLOAT, 0, s->plan.pp,
                         "--pp: the stages to rank 0's model");
    free(whole);
}

static int stages_to_host(tt_sync *s, char *err, size_t cap)
{
    (void)err;
    (void)cap;
    gather(s, s->model->params, s->host->params);
    /* The bubble measured so far, over the stages of the pipeline. */
    double t[2] = {s->pp.wait_s, s->pp.run_s};
    ck_watch_allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_SUM, s->plan.pp, "--pp: the bubble");
    s->info.bubble_measured = t[1] > 0 ? t[0] / t[1] : 0.0;
    return 0;
}

/* Rank 0's whole buffer to every stage, a piece at a time (every rank keeps its slice). */
static void scatter(tt_sync *s, const float *src, float *dst)
{
    int world_rank, off, n;
    MPI_Comm_rank(s->plan.world, &world_rank);
    slice(s, s->plan.pp_rank, &off, &n);
    enum { PIECE = 1 << 18 };
    float *buf = malloc(PIECE * sizeof *buf);
    if (!buf) ck_watch_abort("--pp: out of memory");
    for (size_t a = 0; a < s->host->nparams; a += PIECE) {
        const size_t e = a + PIECE < s->host->nparams ? a + PIECE : s->host->nparams;
        float *piece = world_rank == 0 ? (float *)src + a : buf;
        ck_watch_bcast(piece, (int)(e - a), MPI_FLOAT, 0, s->plan.world, "--pp: the model to its stages");
        const size_t lo = a > (size_t)off ? a : (size_t)off, hi = e < (size_t)(off + n) ? e : (size_t)(off + n);
        if (hi > lo) memcpy(dst + (lo - (size_t)off), piece + (lo - a), (hi - lo) * sizeof(float));
    }
    free(buf);
}

static int broadcast_stages(tt_sync *s, char *err, size_t cap)
{
    (void)err;
    (void)cap;
    if (s->plan.tp_size > 1) tp_scatter(&s->tp, s->model, s->host, s->host->params, s->model->params);
    else scatter(s, s->host->params, s->model->params);
    tt_sync_release_host(s);
    return 0;
}

static int gather_stage_state(tt_sync *s, const float **m, const float **v)
{
    const float *sm, *sv;
    const int rc = tt_sync_shard_state(s, &sm, &sv);
    gather(s, sm, s->full_m);
    gather(s, sv, s->full_v);
    *m = s->full_m;
    *v = s->full_v;
    return rc;
}

static void take_stage_state(tt_sync *s, const float *m, const float *v)
{
    float *sm, *sv;
    tt_sync_shard_room(s, &sm, &sv);
    if (s->plan.tp_size > 1) {
        tp_take(&s->tp, s->model, s->host, m, sm);
        tp_take(&s->tp, s->model, s->host, v, sv);
    } else {
        int off, n;
        slice(s, s->plan.pp_rank, &off, &n);
        memcpy(sm, m + off, (size_t)n * sizeof *m);
        memcpy(sv, v + off, (size_t)n * sizeof *v);
    }
    tt_sync_shard_taken(s);
}

static void destroy(tt_sync *s)
{
    pp_close(&s->pp);
    tt_sync_drop_shard(s);
    if (s->pp_comm) ck_comm_destroy(s->pp_comm);
    s->pp_comm = NULL;
    tt_sync_tensor_close(s);
}

const tt_sync_ops tt_sync_pipeline = {
    .init = init,
    .backward = backward,
    .step = tt_sync_tensor_step,   /* the tensor-parallel group's all-reduces counted in (none without --tp) */
    .to_host = stages_to_host,
    .to_device = broadcast_stages,
    .gather_state = gather_stage_state,
    .load_state = take_stage_state,
    .destroy = destroy,
    .broadcast = broadcast_stages,
};
