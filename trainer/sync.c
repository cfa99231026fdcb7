/*
 * sync.c — what every synchronisation mode shares (sync.h): the plan, the
 * communicator and the host algorithm, the choice of the mode, the host's
 * forward and backward, and the calls that are the same in every mode
 * (the parameter broadcast, sums, --check-sync, --trace).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "collkit_group.h"
#include "sync.h"

/* Under SimGrid SMPI (make sim-bench) the host's time of the step's compute
 * is not simulated (smpi/simulate-computation off, so runs are deterministic):
 * it is charged as modelled flops instead, at the simulated host's speed.
 * Forward and backward: 6 flops per parameter per sample (2 forward, 4
 * backward), as if the input layer were dense; the optimizer: 10 per
 * parameter (AdamW). A model, stated as one: what it shows is how the
 * all-reduce's share of a step grows with p, not this machine's speed. */
#ifdef COLLKIT_SMPI
void tt_sim_charge(double flops)
{
    smpi_bench_end();
    smpi_execute_flops(flops);
    smpi_bench_begin();
}
#else
void tt_sim_charge(double flops) { (void)flops; }
#endif

void tt_plan_data_parallel(tt_plan *pl, MPI_Comm world)
{
    *pl = (tt_plan){.world = world, .dp = world, .tp = MPI_COMM_SELF, .pp = MPI_COMM_SELF, .tp_size = 1,
                    .pp_size = 1};
    MPI_Comm_rank(world, &pl->dp_rank);
    MPI_Comm_size(world, &pl->dp_size);
}

/* One group of the plan, split off world (the caller checked the plan fits). */
static void split_group(const tt_plan *pl, int color, int key, MPI_Comm *out, const char *what)
{
    if (ck_mpi_split(pl->world, color, key, out, what)) ck_watch_abort("%s: MPI_Comm_split failed", what);
}

/* The mesh's arithmetic, two 2-D meshes nested: the job is replicas of T x S
 * ranks (the data-parallel groups: the ranks T x S apart), and each replica
 * S stages of T ranks (the tensor-parallel groups: T consecutive ranks; the
 * pipeline groups: the ranks T apart within a replica). Or the reason it
 * does not fit. */
static int mesh_of(MPI_Comm world, int T, int S, ck_mesh *rep, ck_mesh *in, char *why, size_t cap)
{
    int p, rank;
    MPI_Comm_size(world, &p);
    MPI_Comm_rank(world, &rank);
    if (!ck_mesh_2d(p, T * S, rank, rep, why, cap) && !ck_mesh_2d(T * S, T, rep->mp_rank, in, why, cap)) return 0;
    if (S == 1 || T == 1)
        snprintf(why, cap, "%s %d does not divide the %d ranks (want p = %d x data-parallel replicas)",
                 S == 1 ? "--tp" : "--pp", T * S, p, T * S);
    else
        snprintf(why, cap, "--tp %d x --pp %d = %d does not divide the %d ranks (want p = %d x data-parallel "
                 "replicas)", T, S, T * S, p, T * S);
    return -1;
}

/* The pipeline's own refusals: more stages than layers, micro-batches that do not divide a replica's share. */
static int pipeline_fits(int S, int M, int batch, int D, const mlp_config *model, char *why, size_t cap)
{
    if (S > model->nhidden + 1) {
        snprintf(why, cap, "--pp %d: more stages than the model's %d layers (--hidden gives %d hidden layers)", S,
                 model->nhidden + 1, model->nhidden);
        return -1;
    }
    if (batch % (D * M)) {
        snprintf(why, cap, "--microbatches %d does not divide a replica's share of the batch (--batch %d over %d "
                 "data-parallel replica%s): want --batch a multiple of %d", M, batch, D, D == 1 ? "" : "s", D * M);
        return -1;
    }
    return 0;
}

int tt_plan_make(tt_plan *pl, MPI_Comm world, int T, int S, int M, int batch, const mlp_config *model, char *why,
                 size_t cap)
{
    tt_plan_data_parallel(pl, world);
    if (T == 1 && S == 1) return 0;
    ck_mesh rep, in;
    if (mesh_of(world, T, S, &rep, &in, why, cap) || (T > 1 && mlp_tp_check(model, T, why, cap)) ||
        (S > 1 && pipeline_fits(S, M, batch, rep.D, model, why, cap)))
        return -1;
    /* Colours unique in the job: the tensor-parallel group of stage s of
     * replica r is r S + s; the pipeline of tensor rank t of replica r is r T + t. */
    if (T > 1) split_group(pl, rep.mp_color * S + in.mp_color, in.mp_rank, &pl->tp, "the tensor-parallel groups");
    if (S > 1) split_group(pl, rep.mp_color * T + in.dp_color, in.dp_rank, &pl->pp, "the pipeline groups");
    split_group(pl, rep.dp_color, rep.dp_rank, &pl->dp, "the data-parallel groups");
    pl->split = 1;
    pl->dp_rank = rep.dp_rank;
    pl->dp_size = rep.D;
    pl->tp_rank = in.mp_rank;
    pl->tp_size = T;
    pl->pp_rank = in.dp_rank;
    pl->pp_size = S;
    return 0;
}

/* --zero 1 with a split model: the shard's optimizer state sharded over its
 * data-parallel group (zero.h, as --zero 1 does the whole model's). 0, or 2
 * with the reason in err on the group's rank 0 of replica 0's first ranks. */
static int shard_zero(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    char why[512];
    if (zero_init(&s->zero, &s->dp, cfg->zero, cfg->rs_algo, cfg->ag_algo, cfg->bucket_mb, why, sizeof why)) {
        if (s->plan.dp_rank == 0 && s->plan.tp_rank == 0 && s->plan.pp_rank == 0) snprintf(err, cap, "%s", why);
        return 2;
    }
    if (zero_opt_create(&s->zero, s->opt, cfg->opt)) ck_watch_abort("optimizer: out of memory");
    return 0;
}

int tt_sync_use_shard(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    s->model = &s->shard;
    free(s->host->grads);   /* the host view keeps no gradients: backward writes the shard's */
    s->host->grads = NULL;
    if (dp_init(&s->dp, s->comm, s->algo, s->model, 0, 0, err, cap))
        ck_watch_abort("rank %d: setup: %s", s->plan.dp_rank, err);
    s->have_dp = 1;
    if (cfg->full_state && (!(s->full_m = malloc(s->host->nparams * sizeof(float))) ||
                            !(s->full_v = malloc(s->host->nparams * sizeof(float)))))
        ck_watch_abort("out of memory for the whole optimizer state");
    if (cfg->zero) return shard_zero(s, cfg, err, cap);
    if (opt_create(s->opt, cfg->opt, s->model->nparams)) ck_watch_abort("optimizer: out of memory");
    return 0;
}

void tt_sync_drop_shard(tt_sync *s)
{
    if (s->zero.dp) zero_free(&s->zero);
    /* The data-parallel context holds the shard's gradients: first. */
    if (s->have_dp) dp_free(&s->dp);
    s->have_dp = 0;
    if (s->model == &s->shard) mlp_free(&s->shard);
    if (s->host) s->model = s->host;
    free(s->full_m);
    free(s->full_v);
    free(s->shard_m);
    free(s->shard_v);
    s->full_m = s->full_v = s->shard_m = s->shard_v = NULL;
}

/* Room for the shard's whole m and v (--zero 1: the optimizer holds a block of them). */
static void shard_room(tt_sync *s)
{
    const size_t n = s->model->nparams ? s->model->nparams : 1;
    if (!s->shard_m && (!(s->shard_m = malloc(n * sizeof(float))) || !(s->shard_v = malloc(n * sizeof(float)))))
        ck_watch_abort("out of memory for the shard's optimizer state");
}

int tt_sync_shard_state(tt_sync *s, const float **m, const float **v)
{
    *m = s->opt->m;
    *v = s->opt->v;
    if (!s->zero.dp) return 0;
    if (s->plan.dp_rank == 0) shard_room(s);
    *m = s->shard_m;
    *v = s->shard_v;
    return zero_gather_state(&s->zero, s->opt, s->shard_m, s->shard_v);
}

void tt_sync_shard_room(tt_sync *s, float **m, float **v)
{
    *m = s->opt->m;
    *v = s->opt->v;
    if (!s->zero.dp) return;
    shard_room(s);
    *m = s->shard_m;
    *v = s->shard_v;
}

void tt_sync_shard_taken(tt_sync *s)
{
    if (s->zero.dp) zero_load_state(&s->zero, s->opt, s->shard_m, s->shard_v);
}

/* --zero 1 with a split model, for the banner and the log: the state a rank
 * holds is its block of its shard's (state_replicated stays the whole model's). */
static void describe_shard_zero(tt_sync *s)
{
    tt_sync_info *in = &s->info;
    const zero_ctx *z = &s->zero;
    in->mode = "zero1";
    in->zero = 1;
    in->rs_algo = z->rs->name;
    in->ag_algo = z->ag->name;
    in->state_bytes = zero_state_bytes(z);
    in->state_sharded = 1;
    if (in->w0_bytes) {   /* W_0 (at the shard's start) keeps whole parameters and gradients, the block's m and v */
        size_t off, n, pos;
        zero_segment(z, s->plan.dp_rank, 0, &off, &n, &pos);
        const size_t w0 = in->w0_bytes / (4 * sizeof(float)), mine = off >= w0 ? 0 : off + n < w0 ? n : w0 - off;
        in->w0_bytes = 2 * (w0 + mine) * sizeof(float);
    }
    const size_t len = strlen(in->line);
    snprintf(in->line + len, sizeof in->line - len, "; --zero 1 instead: the shard's gradients reduce-scattered (%s), "
             "its block of %zu parameters stepped, all-gathered (%s)", z->rs->name, z->len, z->ag->name);
}

void tt_sync_release_host(tt_sync *s)
{
    int world_rank;
    MPI_Comm_rank(s->plan.world, &world_rank);
    if (world_rank == 0) return;
    /* Pages read as zeros if touched again (the test hooks may): never used here. */
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = ((uintptr_t)s->host->params + page - 1) / page * page;
    const uintptr_t e = (uintptr_t)(s->host->params + s->host->nparams) / page * page;
    if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

void tt_plan_free(tt_plan *pl)
{
    if (!pl->split) return;
    MPI_Comm_free(&pl->dp);
    if (pl->tp != MPI_COMM_SELF) MPI_Comm_free(&pl->tp);
    if (pl->pp != MPI_COMM_SELF) MPI_Comm_free(&pl->pp);
    tt_plan_data_parallel(pl, pl->world);
}

/* The host all-reduce: a named algorithm, or for auto the single-copy
 * twoshot where the ranks map each other's memory (the fastest host
 * all-reduce of a gradient-sized buffer in make bench), else the ring. The
 * device path's host communicator only broadcasts and sums: ring. A named
 * algorithm is checked again against the transport the communicator got:
 * shm asked for across nodes falls back to mpi, where the single-copy
 * algorithms cannot run. Every rank reaches the same verdict. */
static int pick_algo(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    char aerr[1024];
    int nalgo = 0;
    s->algo_auto = !strcmp(cfg->algo, "auto");
    const char *name = s->algo_auto ? (ck_comm_mem(s->comm) & CK_MEM_SHM ? "twoshot" : "ring") : cfg->algo;
    if (cfg->device) name = "ring";
    if (!ck_algo_parse_list(name, ck_comm_mem(s->comm), &s->algo, 1, &nalgo, aerr, sizeof aerr)) return 0;
    if (s->plan.dp_rank == 0)
        snprintf(err, cap, "--algo on the %s transport: %s", ck_comm_transport_name(s->comm), aerr);
    return 2;
}

int tt_sync_open(tt_sync *s, const tt_plan *plan, const tt_sync_cfg *cfg, mlp *model, optimizer *opt,
                 char *err, size_t cap)
{
    memset(s, 0, sizeof *s);
    err[0] = '\0';
    s->plan = *plan;
    s->model = model;
    s->opt = opt;
    s->sent_bytes = -1;
    /* The one place the mode is chosen. */
    s->ops = cfg->device ? &tt_sync_device : plan->pp_size > 1 ? &tt_sync_pipeline
             : plan->tp_size > 1 ? &tt_sync_tensor : cfg->zero ? &tt_sync_zero : &tt_sync_replicated;
    const unsigned mem = !strcmp(cfg->transport, "shm") ? CK_MEM_HOST | CK_MEM_SHM : CK_MEM_HOST;
    int rc = ck_comm_create(plan->dp, mem, &s->comm);
    if (rc) ck_watch_abort("ck_comm_create: %s", ck_strerror(rc));
    if ((rc = pick_algo(s, cfg, err, cap))) return rc;
    s->info.algo = s->algo->name;
    s->info.transport = ck_comm_transport_name(s->comm);
    s->info.device_note = "";
    s->info.tp = s->info.pp = 1;
    int irc = s->ops->init(s, cfg, err, cap);
    if (!irc && s->zero.dp && s->model == &s->shard) describe_shard_zero(s);
    /* The activations of a rank's training micro-batch, in every mode (--pp
     * sets its own: all its slots), so that plans compare in the log; the
     * whole model's buffers are sized for evaluation's larger batches. */
    if (!irc && !s->info.act_bytes && s->model->max_batch > 0)
        s->info.act_bytes = mlp_act_bytes(s->model) / (size_t)s->model->max_batch * (size_t)cfg->max_batch;
    return irc;
}

void tt_sync_close(tt_sync *s)
{
    if (s->ops && s->ops->destroy) s->ops->destroy(s);
    if (s->have_dp) dp_free(&s->dp);
    s->have_dp = 0;
    opt_free(s->opt);
    if (s->comm) ck_comm_destroy(s->comm);
    s->comm = NULL;
}

int tt_sync_broadcast_params(tt_sync *s, char *err, size_t cap)
{
    if (s->ops->broadcast) return s->ops->broadcast(s, err, cap);
    if (dp_broadcast_params(&s->dp, s->model->params, s->model->nparams)) {
        snprintf(err, cap, "broadcast: MPI_Bcast failed");
        return -1;
    }
    return s->ops->to_device ? s->ops->to_device(s, err, cap) : 0;
}

int tt_sync_sum(tt_sync *s, double *v, int n)
{
    /* --pp: the loss is the last stage's, so the sum runs over every rank. */
    if (s->plan.pp_size > 1) {
        ck_watch_allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, s->plan.world, "the sums of the epoch");
        return 0;
    }
    return dp_sum_doubles(&s->dp, v, n);
}

int tt_sync_check(tt_sync *s, char *err, size_t cap)
{
    const int whole = !s->info.state_sharded;
    return dp_check_sync(&s->dp, s->model->params, whole ? s->opt->m : NULL, whole ? s->opt->v : NULL,
                         s->model->nparams, err, cap);
}

/* --tp with --trace: each all-reduce of the tensor-parallel group, in
 * forward and backward, recorded on a lane of its own. */
static void traced_tp_reduce(float *buf, size_t n, void *ctx)
{
    tt_sync *s = (tt_sync *)((char *)ctx - offsetof(tt_sync, tp));
    const double t0 = ck_now();
    tp_reduce(buf, n, ctx);
    /* A forward after the last backward of a step (dp.c: no layer left) is the next step's. */
    const int next = s->dp.step_done && s->dp.layer < 0;
    s->dp.trace.step += next;
    tr_add(&s->dp.trace, TR_TP, "tp", 0, t0, ck_now(), n * sizeof(float));
    s->dp.trace.step -= next;
}

void tt_sync_trace_start(tt_sync *s)
{
    dp_trace_start(&s->dp);
    s->zero.trace = &s->dp.trace;   /* ZeRO: its two halves and the step between them */
    s->pp.trace = &s->dp.trace;     /* --pp: each stage's forwards and backwards */
    /* --tp: the group's all-reduces (with --pp, in each micro-batch's copy of the stage too) */
    if (s->shard.reduce == tp_reduce) s->shard.reduce = traced_tp_reduce;
    for (int k = 0; k < s->pp.nslots; k++)
        if (s->pp.slot[k].reduce == tp_reduce) s->pp.slot[k].reduce = traced_tp_reduce;
}

int tt_sync_trace_write(tt_sync *s, FILE *f, char *err, size_t cap)
{
    /* --tp: the timeline of tensor-parallel rank 0 of each replica (its
     * data-parallel group holds world rank 0, which writes the file). */
    /* --pp: every stage of replica 0's pipeline (of tensor-parallel rank 0's ranks), a rank each. */
    if (s->plan.pp_size > 1)
        return s->plan.dp_rank || s->plan.tp_rank ? 0 : tr_write(&s->dp.trace, s->plan.pp, f, s->info.title, err, cap);
    if (s->plan.tp_rank != 0 || s->plan.pp_rank != 0) return 0;
    return dp_trace_write(&s->dp, f, s->info.title, err, cap);
}

size_t tt_sync_grad_resident(const tt_sync *s)
{
    return s->zero.dp ? zero_grad_resident_bytes(&s->zero) : dp_grads_resident(&s->dp);
}

int tt_sync_host_backward(tt_sync *s, const tt_step *st, double loss_cnt[2], char *err, size_t cap)
{
    (void)err;
    (void)cap;
    mlp *m = s->model;
    for (size_t mb = 0; mb < st->len; mb += (size_t)st->batch) {
        const size_t mlen = st->len - mb < (size_t)st->batch ? st->len - mb : (size_t)st->batch;
        const int last_micro = mb + mlen == st->len;
        const int b = dp_shard(&s->dp, st->order, st->pos + mb, mlen, st->rows);
        for (int r = 0; r < b; r++) st->labels[r] = st->y[st->rows[r]];
        loss_cnt[0] += mlp_forward(m, st->x, st->rows, st->labels, b, 1, st->drop);
        loss_cnt[1] += b;
        /* The bucket hook launches all-reduces (--zero 2: runs reduce-scatters) of finished
         * gradient slices during the last backward. */
        dp_backward(&s->dp, st->labels, b, last_micro);
        tt_sim_charge(6.0 * (double)b * (double)m->nparams);
    }
    return 0;
}
