/*
 * sync.c — what every synchronisation mode shares (sync.h): the plan, the
 * communicator and the host algorithm, the choice of the mode, the host's
 * forward and backward, and the calls that are the same in every mode
 * (the parameter broadcast, sums, --check-sync, --trace).
 */
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

/* The mesh of `width` model-parallel ranks (the caller checked it fits):
 * the model-parallel group in *mp, the data-parallel one in the plan. */
static void split_mesh(tt_plan *pl, const ck_mesh *m, MPI_Comm *mp, const char *what)
{
    if (ck_mpi_split(pl->world, m->mp_color, m->mp_rank, mp, what) ||
        ck_mpi_split(pl->world, m->dp_color, m->dp_rank, &pl->dp, "the data-parallel groups"))
        ck_watch_abort("%s: MPI_Comm_split failed", what);
    pl->split = 1;
    pl->dp_rank = m->dp_rank;
    pl->dp_size = m->D;
}

/* A mesh of width T over world's ranks, or the reason it does not fit. */
static int mesh_of(MPI_Comm world, int T, const char *opt, ck_mesh *m, char *why, size_t cap)
{
    int p, rank;
    MPI_Comm_size(world, &p);
    MPI_Comm_rank(world, &rank);
    if (!ck_mesh_2d(p, T, rank, m, why, cap)) return 0;
    snprintf(why, cap, "%s %d does not divide the %d ranks (want p = %d x data-parallel replicas)", opt, T, p, T);
    return -1;
}

int tt_plan_tensor(tt_plan *pl, MPI_Comm world, int T, const mlp_config *model, char *why, size_t cap)
{
    tt_plan_data_parallel(pl, world);
    if (T == 1) return 0;
    ck_mesh m;
    if (mesh_of(world, T, "--tp", &m, why, cap) || mlp_tp_check(model, T, why, cap)) return -1;
    split_mesh(pl, &m, &pl->tp, "the tensor-parallel groups");
    pl->tp_rank = m.mp_rank;
    pl->tp_size = T;
    return 0;
}

int tt_plan_pipeline(tt_plan *pl, MPI_Comm world, int S, int M, int batch, const mlp_config *model, char *why,
                     size_t cap)
{
    tt_plan_data_parallel(pl, world);
    if (S == 1) return 0;
    ck_mesh m;
    if (mesh_of(world, S, "--pp", &m, why, cap)) return -1;
    if (S > model->nhidden + 1) {
        snprintf(why, cap, "--pp %d: more stages than the model's %d layers (--hidden gives %d hidden layers)", S,
                 model->nhidden + 1, model->nhidden);
        return -1;
    }
    if (batch % (m.D * M)) {
        snprintf(why, cap, "--microbatches %d does not divide a replica's share of the batch (--batch %d over %d "
                 "data-parallel replica%s): want --batch a multiple of %d", M, batch, m.D, m.D == 1 ? "" : "s",
                 m.D * M);
        return -1;
    }
    split_mesh(pl, &m, &pl->pp, "the pipeline groups");
    pl->pp_rank = m.mp_rank;
    pl->pp_size = S;
    return 0;
}

void tt_sync_use_shard(tt_sync *s, const tt_sync_cfg *cfg)
{
    char err[1024];
    s->model = &s->shard;
    free(s->host->grads);   /* the host view keeps no gradients: backward writes the shard's */
    s->host->grads = NULL;
    if (dp_init(&s->dp, s->comm, s->algo, s->model, 0, 0, err, sizeof err))
        ck_watch_abort("rank %d: setup: %s", s->plan.dp_rank, err);
    s->have_dp = 1;
    if (opt_create(s->opt, cfg->opt, s->model->nparams)) ck_watch_abort("optimizer: out of memory");
    if (cfg->full_state && (!(s->full_m = malloc(s->host->nparams * sizeof(float))) ||
                            !(s->full_v = malloc(s->host->nparams * sizeof(float)))))
        ck_watch_abort("out of memory for the whole optimizer state");
}

void tt_sync_drop_shard(tt_sync *s)
{
    /* The data-parallel context holds the shard's gradients: first. */
    if (s->have_dp) dp_free(&s->dp);
    s->have_dp = 0;
    if (s->model == &s->shard) mlp_free(&s->shard);
    if (s->host) s->model = s->host;
    free(s->full_m);
    free(s->full_v);
    s->full_m = s->full_v = NULL;
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

/* The host all-reduce: a named algorithm, or for auto the library's choice
 * from the transport and the nodes (ck_algo_auto: on one node the
 * single-copy twoshot where the ranks map each other's memory, the fastest
 * host all-reduce of a gradient-sized buffer in make bench, else the ring;
 * across nodes the hierarchical all-reduce, the reason said). The
 * device path's host communicator only broadcasts and sums: ring. A named
 * algorithm is checked again against the transport the communicator got:
 * shm asked for across nodes falls back to mpi, where the single-copy
 * algorithms cannot run. Every rank reaches the same verdict. */
static int pick_algo(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    char aerr[1024];
    int nalgo = 0;
    s->algo_auto = !strcmp(cfg->algo, "auto");
    char why[320];
    const char *name = s->algo_auto ? ck_algo_auto(s->comm, s->model->nparams * sizeof(float), why, sizeof why)->name
                                    : cfg->algo;
    ck_topo topo;
    ck_comm_topo(s->comm, &topo);
    if (s->algo_auto && topo.nodes > 1 && s->plan.dp_rank == 0) fprintf(stderr, "tagtrain: --algo %s\n", why);
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
    s->ops = cfg->device ? &tt_sync_device : cfg->zero ? &tt_sync_zero
             : plan->tp_size > 1 ? &tt_sync_tensor : plan->pp_size > 1 ? &tt_sync_pipeline : &tt_sync_replicated;
    const unsigned mem = !strcmp(cfg->transport, "shm") ? CK_MEM_HOST | CK_MEM_SHM : CK_MEM_HOST;
    int rc = ck_comm_create(plan->dp, mem, &s->comm);
    if (rc) ck_watch_abort("ck_comm_create: %s", ck_strerror(rc));
    if ((rc = pick_algo(s, cfg, err, cap))) return rc;
    s->info.algo = s->algo->name;
    s->info.transport = ck_comm_transport_name(s->comm);
    s->info.device_note = "";
    s->info.tp = s->info.pp = 1;
    int irc = s->ops->init(s, cfg, err, cap);
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

void tt_sync_trace_start(tt_sync *s)
{
    dp_trace_start(&s->dp);
    s->zero.trace = &s->dp.trace;   /* ZeRO: its two halves and the step between them */
}

int tt_sync_trace_write(tt_sync *s, FILE *f, char *err, size_t cap)
{
    /* --tp: the timeline of tensor-parallel rank 0 of each replica (its
     * data-parallel group holds world rank 0, which writes the file). */
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
