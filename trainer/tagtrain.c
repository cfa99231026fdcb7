/*
 * tagtrain — data-parallel training of the Made With ML tagging MLP, with the
 * gradient all-reduce done by any collkit registry algorithm (--algo).
 *
 *   mpirun -np 2 build/bin/tagtrain                      defaults, data found automatically
 *   mpirun -np 4 build/bin/tagtrain --algo ring --epochs 10 --bucket-mb 1
 *   build/bin/tagtrain --folds 5 --fold 2                cross-validation on dataset.csv
 *   build/bin/tagtrain --algo list
 *
 * What happens (trainer/README.md has the whole story; tagtrain_main below
 * reads as these steps):
 *   every rank loads dataset.csv (and holdout.csv, except in cross-validation),
 *   splits dataset.csv into train/val (stratified, seeded), fits the TF-IDF
 *   featurizer on train and featurises everything into CSR rows; rank 0
 *   initialises the parameters and broadcasts them; then, every step,
 *
 *       shard -> mlp_forward -> mlp_backward -> gradients synchronised -> optimizer step
 *
 *   the synchronisation being the mode chosen once at setup (sync.h:
 *   replicated, ZeRO, the device). After each epoch rank 0 evaluates on val
 *   and prints one line; every --save-every epochs (and after the last) it
 *   saves best.ckpt (when the best changed) and last.ckpt; at the end it
 *   evaluates the best model on the holdout. The options are args.c's table;
 *   what is written, runio.c's.
 *
 * Exit status: 0 done; 1 an error (data, files, MPI; the message says which);
 * 2 a bad argument; 3 ranks out of sync (--check-sync); 4 the loss became NaN
 * or infinite (nothing of that epoch is saved).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cblas.h>
#include "collkit.h"
#include "collkit_util.h"
#include "tagtrain.h"
#include "mwml.h"
#include "features.h"
#include "model.h"
#include "optim.h"
#include "eval.h"
#include "ckpt.h"
#include "args.h"
#include "runio.h"
#include "sync.h"

/* Everything a run holds, from the options to the report. */
typedef struct {
    tt_options   o;
    int          p, rank, root, provided;
    tt_plan      plan;
    checkpoint   ck;                      /* --resume: the state it continues */
    int          have_ck;
    char         path_data[4096], path_hold[4096];
    mwml_data    data, hold;
    size_t      *tr_rows, *va_rows, ntr, nva;
    featurizer   feat;
    feat_csr     Xtr, Xva, Xho;
    csr_rows     xtr, xva, xho;
    mlp          model;
    int          have_model;
    optimizer    opt;
    tt_sync      sync;
    int          have_sync;
    size_t      *rows;                    /* this rank's batch rows */
    int         *labels;
    size_t       per_step;                /* samples per optimizer step */
    int          start_epoch, last_epoch, last_saved, best_dirty;
    float       *best;                    /* rank 0: the parameters of the best epoch by val loss */
    ckpt_dir     cdir;
    FILE        *logf;
    char         note[512], repaired[1200];
    const char  *other_file, *other_option;
    int          nan_epoch, inf_hook, end_hook;   /* TAGTRAIN_TEST_NAN (train_epoch) */
    tt_report    rep;
} run;

static int g_rank;

/* The transport the gradients of a data-parallel group move on: --transport
 * when given; for --algo auto, shm when every rank of the group shares one
 * node (the single-copy all-reduce needs it) and mpi otherwise; for a named
 * algorithm, mpi, as collbench and collcheck. */
static const char *pick_transport(const tt_options *o, MPI_Comm group)
{
    int p;
    MPI_Comm_size(group, &p);
    if (o->transport) return o->transport;
    if (o->device) return "mpi";   /* the gradients move on the device's communicator (devstep.h) */
    if (strcmp(o->algo_name, "auto") || p < 2) return "mpi";
#ifdef COLLKIT_SMPI
    return "mpi";   /* simulated ranks are hosts of their own */
#else
    MPI_Comm node;
    int nnode = 0;
    /* MPI_Comm_split_type has no nonblocking form: meet first, bounded. */
    ck_watch_barrier(group, "choosing the transport");
    if (MPI_Comm_split_type(group, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return "mpi";
    MPI_Comm_size(node, &nnode);
    MPI_Comm_free(&node);
    return nnode == p ? "shm" : "mpi";
#endif
}

/* ------------------------------------------------------------ helpers */

/* All ranks agree that every rank succeeded (used after per-rank work that
 * can fail, so a failure on one rank never leaves the others waiting). */
static int all_ok(int ok)
{
    int all = ok;
    ck_watch_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, "the verdict of every rank");
    return all;
}

/* Rank 0's verdict, for every rank. */
static int from_root(int v)
{
    ck_watch_bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, "rank 0's verdict");
    return v;
}

/* After tt_args_parse on every rank: one verdict for all. A bad argument is
 * reported once, by the lowest rank that found it (rank 0 when all did); a
 * command line that differs between ranks is refused
 * (ck_same_command_line); rank 0 prints --help or --algo list. Returns what
 * every rank does: 0 run, 1 exit 0, 2 exit 2. */
static int agree_on_args(int argc, char **argv, tt_options *o)
{
    char argerr[1024];
    const int prc = tt_args_parse(argc, argv, o, argerr, sizeof argerr);
    int bad = prc == CK_OPT_BAD ? g_rank : INT_MAX, first_bad, all_bad;
    ck_watch_allreduce(&bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, "the verdict on the options");
    ck_watch_allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, "the verdict on the options");
    if (first_bad != INT_MAX) {
        if (g_rank == first_bad) {
            if (all_bad == INT_MAX) fprintf(stderr, "tagtrain: rank %d: %s\n", g_rank, argerr);   /* not every rank */
            else fprintf(stderr, "tagtrain: %s\n", argerr);
            fprintf(stderr, "(tagtrain --help lists the options)\n");
        }
        return 2;
    }
    if (prc == CK_OPT_HELP && g_rank == 0) tt_args_help(stdout);
    if (prc == TT_ARGS_LIST && g_rank == 0) ck_algo_print_table(stdout);
    if (prc != CK_OPT_RUN) return 1;
    if (ck_same_command_line(MPI_COMM_WORLD, argc, argv, "tagtrain")) return 2;
    return 0;
}

/* A digest of the rows, to check that every rank read the same data. */
static uint64_t data_digest(uint64_t h, const mwml_data *d)
{
    for (size_t i = 0; i < d->n; i++) {
        const mwml_row *r = &d->rows[i];
        h = ck_fnv1a64_update(h, r->id, strlen(r->id) + 1);
        h = ck_fnv1a64_update(h, r->title, strlen(r->title) + 1);
        h = ck_fnv1a64_update(h, r->description, strlen(r->description) + 1);
        h = ck_fnv1a64_update(h, &r->tag, sizeof r->tag);
    }
    return ck_fnv1a64_update(h, &d->n, sizeof d->n);
}

/* Enter a phase: named in the watchdog's messages, and a point of the test
 * hook (tests/faults): COLLKIT_FAULT="phase/PHASE:RANK:SIG" stops or kills
 * rank RANK as it enters the first phase whose name starts with PHASE
 * ("load", "train (epoch 2)"; collkit_util.h). */
static void enter_phase(const char *phase)
{
    ck_watch_phase(phase);
    char point[96];
    snprintf(point, sizeof point, "phase/%s", phase);
    ck_fault_point(point, g_rank);
}

/* Every exit: the ranks meet, bounded (ck_watch_finalize), before
 * MPI_Finalize, which would wait for a stopped rank forever. A phase of its
 * own, so that the fault hook reaches every way out. */
static int finish(int status)
{
    enter_phase("finish");
    ck_watch_finalize();
    return status;
}

static void fail_abort(const char *what, const char *msg)
{
    fprintf(stderr, "tagtrain: rank %d: %s: %s\n", g_rank, what, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The save directory's checkpoints belong to this run's job, or stay: a
 * best.ckpt or last.ckpt there whose configuration differs from this run's
 * (any option of the model's configuration, args.h; --epochs may differ: a
 * resumed run extends it) is another run's model, and the first save would
 * replace it. 0 when none is there (or --resume names it), else 1 with *file
 * and the first *option that differs. Files that do not load are left to the rules of the
 * save directory (ckpt.h). */
static int other_runs_checkpoint(const ckpt_dir *cd, const tt_options *o, const char *resume, const char **file,
                                 const char **option)
{
    const char *files[2] = {cd->last, cd->best};
    for (int i = 0; i < 2; i++) {
        checkpoint c;
        char why[1024];
        if (ckpt_probe(files[i]) != 1 || (resume && ck_output_same(files[i], resume)) ||
            ckpt_load(files[i], &c, why, sizeof why))
            continue;
        const char *value;
        *option = tt_args_model_differs(o, &c.cfg, 0, &value);
        ckpt_free(&c);
        if (*option) {
            *file = files[i];
            return 1;
        }
    }
    return 0;
}


/* The data audit (mwml_audit_rows) and the split's size, as warnings; 0 when
 * the run may go on (always, unless --strict-data and something was found). */
static int warn_data(const mwml_audit *a, const char *name, const char *hold, size_t nva, const train_config *tc,
                     size_t nrows, int strict)
{
    int n = 0;
    const char *w = strict ? "error" : "warning";
    if (a->dup_ids)
        n++, fprintf(stderr, "tagtrain: %s: %s: %zu row%s an earlier row's id (first: %s)\n", w, name, a->dup_ids,
                     a->dup_ids == 1 ? " repeats" : "s repeat", a->example[0]);
    if (a->dup_text)
        n++, fprintf(stderr, "tagtrain: %s: %s: %zu row%s an earlier row's title and description under another id "
                     "(first: %s)\n", w, name, a->dup_text, a->dup_text == 1 ? " repeats" : "s repeat", a->example[1]);
    if (a->conflicting)
        n++, fprintf(stderr, "tagtrain: %s: %s: %zu repeated row%s another tag than the earlier copy (first: %s)\n", w,
                     name, a->conflicting, a->conflicting == 1 ? " carries" : "s carry", a->example[2]);
    if (a->in_holdout)
        n++, fprintf(stderr, "tagtrain: %s: %s: %zu row%s also in %s: the holdout figure would be measured partly "
                     "on training rows (first: %s)\n", w, name, a->in_holdout, a->in_holdout == 1 ? " is" : "s are",
                     hold, a->example[3]);
    if (nva == 0 && (tc->folds || tc->val_frac > 0))
        n++, fprintf(stderr, "tagtrain: %s: the split leaves no validation rows (%s of %zu rows): there is no val "
                     "loss, and best.ckpt will be the last epoch's model\n", w,
                     tc->folds ? "a fold" : "--val-frac", nrows);
    if (n && strict) fprintf(stderr, "tagtrain: refusing the data (--strict-data)\n");
    return n && strict ? -1 : 0;
}

/* ------------------------------------------------------------ setup */

/* The options, agreed by every rank, and what they need of this job. */
static int start(run *r, int argc, char **argv)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r->p);
    r->rank = g_rank;
    r->root = g_rank == 0;
    r->rep.t_start = ck_now();
    r->cdir.lock_fd = -1;
    /* Every wait below is bounded (COLLKIT_TIMEOUT): a rank that stops in
     * any phase ends the job, named, instead of holding the others. */
    if (ck_watch_init("tagtrain")) fail_abort("start-up", "cannot create the watchdog's communicator");
    enter_phase("options");
    const int prc = agree_on_args(argc, argv, &r->o);
    if (prc) return prc == 1 ? -1 : 2;
    const tt_options *o = &r->o;
#ifdef COLLKIT_SMPI
#define NO_THREADS_WHY " (SimGrid SMPI runs every simulated rank in one thread: no progress thread can run)"
#else
#define NO_THREADS_WHY ""
#endif
    if (o->bucket_mb > 0 && !o->zero && r->p > 1 && r->provided < MPI_THREAD_MULTIPLE) {
        if (r->root)
            fprintf(stderr, "tagtrain: --bucket-mb needs MPI_THREAD_MULTIPLE, which this MPI does not provide%s\n",
                    NO_THREADS_WHY);
        return 2;
    }
    if (o->inject_desync > 0 && r->p < 2) {
        if (r->root) fprintf(stderr, "tagtrain: --inject-desync needs at least 2 ranks\n");
        return 2;
    }
    if (o->device) {
        /* --device cuda: CUDA and a GPU on every rank, said before any data is read. */
        char why[640];
        int ok = devstep_available(why, sizeof why) == 0, first = ok ? INT_MAX : r->rank;
        ck_watch_allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, "the verdict on the GPUs");
        if (first != INT_MAX) {
            if (r->rank == first) fprintf(stderr, "tagtrain: rank %d: --device cuda: %s\n", r->rank, why);
            return 1;
        }
    }
    return 0;
}

/* Which ranks hold which part of the model (sync.h): refused, with the
 * reason, before any data is read. After --resume: its model is the one split. */
static int make_plan(run *r)
{
    char why[512];
    const tt_options *o = &r->o;
    if (!tt_plan_make(&r->plan, MPI_COMM_WORLD, o->tp, o->pp, o->microbatches, o->tc.batch, &o->tc.model, why,
                      sizeof why))
        return 0;
    if (r->root) fprintf(stderr, "tagtrain: %s\n", why);
    return 2;
}

/* --resume: the checkpoint's configuration wins; an option given that says
 * otherwise is refused rather than silently dropped. */
static int resume(run *r)
{
    tt_options *o = &r->o;
    if (!o->resume) return 0;
    enter_phase("resume");
    char err[MWML_ERRLEN];
    checkpoint *ck = &r->ck;
    int ok = ckpt_load(o->resume, ck, err, sizeof err) == 0;
    if (ok && ck->kind != CKPT_STATE) {
        snprintf(err, sizeof err, "%s holds a model (best.ckpt), not a training state: resume from last.ckpt",
                 o->resume);
        ckpt_free(ck);
        ok = 0;
    }
    if (!all_ok(ok)) {
        if (!ok && r->root) fprintf(stderr, "tagtrain: --resume: %s\n", err);
        if (ok) ckpt_free(ck);
        return 1;
    }
    r->have_ck = 1;
    /* Every rank resumes the same state: m and v are not broadcast. */
    const int q = ck_first_differing_rank(MPI_COMM_WORLD, ck->checksum);
    const char *value, *given = tt_args_model_differs(o, &ck->cfg, 1, &value);
    if (q >= 0 || given) {
        if (r->root && q >= 0)
            fprintf(stderr, "tagtrain: --resume %s: rank %d read another file than rank 0 (every rank must resume "
                    "the same checkpoint)\n", o->resume, q);
        else if (r->root)
            fprintf(stderr, "tagtrain: --resume: %s %s differs from the configuration %s was trained with; a resumed "
                    "run keeps its configuration (only --epochs may change): drop %s, or start a new run\n", given,
                    value, o->resume, given);
        return 2;
    }
    const int epochs = o->set_epochs ? o->tc.epochs : ck->cfg.epochs;
    o->tc = ck->cfg;
    o->tc.epochs = epochs;
    if (ck->epochs_done >= epochs && r->root)
        fprintf(stderr, "tagtrain: %s has already done %d of %d epochs; nothing to train (raise --epochs)\n",
                o->resume, ck->epochs_done, epochs);
    return 0;
}

/* The data: loaded and compared on every rank, audited, split. */
static int load_data(run *r)
{
    const tt_options *o = &r->o;
    const train_config *tc = &o->tc;
    const int cv = tc->folds > 0;
    /* OpenBLAS threads: one per rank unless asked. The default model's
     * matrices are too small for more to pay, and p ranks share the cores. */
    openblas_set_num_threads(o->threads ? o->threads : 1);
    enter_phase("load");
    char err[MWML_ERRLEN];
    int ok = mwml_find(o->data, "dataset.csv", r->path_data, sizeof r->path_data, err, sizeof err) == 0 &&
             mwml_load(r->path_data, &r->data, err, sizeof err) == 0;
    /* Cross-validation selects the model: it never reads the holdout. */
    if (ok && !cv)
        ok = mwml_find(o->holdout, "holdout.csv", r->path_hold, sizeof r->path_hold, err, sizeof err) == 0 &&
             mwml_load(r->path_hold, &r->hold, err, sizeof err) == 0;
    if (!all_ok(ok)) {
        if (!ok && r->root) fprintf(stderr, "tagtrain: %s\n", err);
        return 1;
    }
    /* Every rank must train on the same rows (a file that differs between
     * nodes would give each rank its own featurizer and row numbers). */
    const int q = ck_first_differing_rank(MPI_COMM_WORLD, data_digest(data_digest(CK_FNV1A64_INIT, &r->data), &r->hold));
    if (q >= 0) {
        if (r->root)
            fprintf(stderr, "tagtrain: rank %d read other data than rank 0 (%s%s%s): every rank must read the same "
                    "files\n", q, r->path_data, cv ? "" : ", ", r->path_hold);
        return 1;
    }
    ok = (cv ? stratified_kfold(&r->data, tc->folds, tc->fold, tc->split_seed, &r->tr_rows, &r->ntr, &r->va_rows,
                                &r->nva)
             : stratified_split(&r->data, tc->val_frac, tc->split_seed, &r->tr_rows, &r->ntr, &r->va_rows,
                                &r->nva)) == 0;
    mwml_audit audit;
    ok = ok && mwml_audit_rows(&r->data, cv ? NULL : &r->hold, &audit) == 0;
    if (!all_ok(ok) || r->ntr == 0) {
        if (r->root)
            fprintf(stderr, "tagtrain: cannot split %s: %s\n", r->path_data, ok ? "no training rows" : "out of memory");
        return 1;
    }
    const char *dname = strrchr(r->path_data, '/') ? strrchr(r->path_data, '/') + 1 : r->path_data;
    const char *hname = strrchr(r->path_hold, '/') ? strrchr(r->path_hold, '/') + 1 : r->path_hold;
    return from_root(r->root ? warn_data(&audit, dname, hname, r->nva, tc, r->data.n, o->strict_data) : 0) ? 1 : 0;
}

/* The TF-IDF features of every row (a resumed run: the checkpoint's idf). */
static int featurise(run *r)
{
    const train_config *tc = &r->o.tc;
    enter_phase("featurise");
    int ok = (r->have_ck ? feat_load_opts(&r->feat, tc->feat_dim, &tc->feat, r->ck.idf)
                         : feat_fit_opts(&r->feat, tc->feat_dim, &tc->feat, &r->data, r->tr_rows, r->ntr)) == 0;
    ok = ok && feat_transform_csr(&r->feat, &r->data, r->tr_rows, r->ntr, &r->Xtr) == 0 &&
         feat_transform_csr(&r->feat, &r->data, r->va_rows, r->nva, &r->Xva) == 0 &&
         (tc->folds || feat_transform_csr(&r->feat, &r->hold, NULL, r->hold.n, &r->Xho) == 0);
    if (!all_ok(ok)) {
        if (!ok && r->root) fprintf(stderr, "tagtrain: cannot featurise the data: out of memory\n");
        return 1;
    }
    r->xtr = (csr_rows){r->Xtr.ptr, r->Xtr.idx, r->Xtr.val};
    r->xva = (csr_rows){r->Xva.ptr, r->Xva.idx, r->Xva.val};
    r->xho = (csr_rows){r->Xho.ptr, r->Xho.idx, r->Xho.val};
    return 0;
}

/* The model, the gradient synchronisation the options chose (sync.h), the
 * optimizer, and the parameters every rank starts from: rank 0's (the
 * checkpoint case too: it costs one broadcast and rules out a rank that
 * read a different file). */
static int setup_training(run *r)
{
    tt_options *o = &r->o;
    train_config *tc = &o->tc;
    enter_phase("setup");
    const int dp = r->plan.dp_size, local_max = (tc->batch + dp - 1) / dp, eval_batch = 256;
    if (mlp_create(&r->model, &tc->model, local_max > eval_batch ? local_max : eval_batch))
        fail_abort("model", "out of memory");
    r->have_model = 1;
    const size_t npad = (r->ntr + (size_t)dp - 1) / (size_t)dp * (size_t)dp;
    r->per_step = (size_t)tc->batch * (size_t)tc->accum;
    const int64_t steps_per_epoch = (int64_t)((npad + r->per_step - 1) / r->per_step);
    if (!r->have_ck || o->set_epochs) tc->opt.total_steps = steps_per_epoch * tc->epochs;
    const tt_sync_cfg cfg = {.algo = o->algo_name, .transport = pick_transport(o, r->plan.dp), .zero = o->zero,
                             .rs_algo = o->rs_algo, .ag_algo = o->ag_algo, .tp_algo = o->tp_algo,
                             .microbatches = o->microbatches, .pp_sched = o->pp_sched,
                             .device = o->device,
                             .bucket_mb = o->bucket_mb, .sparse = o->sparse_grads,
                             .full_state = r->root && !o->no_save, .opt = &tc->opt, .x = &r->xtr, .nrows = r->ntr,
                             .max_batch = local_max};
    char err[1024];
    r->have_sync = 1;
    const int rc = tt_sync_open(&r->sync, &r->plan, &cfg, &r->model, &r->opt, err, sizeof err);
    if (rc) {
        if (err[0]) fprintf(stderr, "tagtrain: %s\n", err);
        return rc;
    }
    r->rows = malloc((size_t)r->model.max_batch * sizeof *r->rows);
    r->labels = malloc((size_t)r->model.max_batch * sizeof *r->labels);
    if (!r->rows || !r->labels) fail_abort("setup", "out of memory");
    tt_report *rep = &r->rep;
    rep->best_val = INFINITY;
    if (r->have_ck) {
        memcpy(r->model.params, r->ck.params, r->model.nparams * sizeof(float));
        r->sync.ops->load_state(&r->sync, r->ck.m, r->ck.v);   /* this rank's part (all of it, replicated) */
        r->opt.t = r->ck.opt_steps;
        r->start_epoch = r->ck.epochs_done;
        rep->best_val = r->ck.best_val_loss;
        rep->best_epoch = r->ck.best_epoch;
    } else if (r->root) {
        mlp_init_params(&r->model, tc->seed);
    }
    if (tt_sync_broadcast_params(&r->sync, err, sizeof err)) fail_abort("setup", err);
    if (r->root) {
        r->best = malloc(r->model.nparams * sizeof(float));
        if (!r->best) fail_abort("best copy", "out of memory");
        memcpy(r->best, r->have_ck && rep->best_epoch > 0 ? r->ck.best : r->model.params,
               r->model.nparams * sizeof(float));
    }
    return 0;
}

/* Each output must be a file of its own: not one this run reads (the data,
 * the checkpoint it resumes), not one it saves (the save directory's
 * best.ckpt and last.ckpt: a log there would be refused only at the first
 * save, after the training), not another output's (two writers interleave).
 * Not even with --overwrite, which is about a user's earlier files, not this
 * run's own. 0, or -1 with the clash in err. */
static int outputs_apart(const run *r, char *err, size_t cap)
{
    const tt_options *o = &r->o;
    const char *outs[3][2] = {{"--log", o->log}, {"--trace", o->trace}, {"--metrics", o->metrics}};
    const char *uses[5][2] = {{"--data", r->path_data}, {"--holdout", r->path_hold}, {"--resume", o->resume},
                              {"--save's last.ckpt", o->no_save ? NULL : r->cdir.last},
                              {"--save's best.ckpt", o->no_save ? NULL : r->cdir.best}};
    for (int i = 0; i < 3; i++) {
        if (!outs[i][1]) continue;
        for (int k = 0; k < 5 + i; k++) {
            const char *const *u = k < 5 ? uses[k] : outs[k - 5];
            if (u[1] && u[1][0] && ck_output_same(outs[i][1], u[1])) {
                snprintf(err, cap, "%s %s: the same file as %s %s (every output needs a file of its own)", outs[i][0],
                         outs[i][1], u[0], u[1]);
                return -1;
            }
        }
    }
    return 0;
}

/* Rank 0's outputs, all checked before any training and before anything
 * saved is touched: the save directory (locked, cleaned of a killed run's
 * temporary files, writable; a folder the user named keeps its run's
 * checkpoints, the default one holds the latest run, as its name says), the
 * output files, then, on a resumed run, best.ckpt made to match the state
 * (after a crash it may be missing, or from a later epoch). 0, or the exit
 * status with the reason in err: 2 for a refusal the user must answer with
 * other arguments (as for a bad option: ckrun --restarts does not retry
 * it), 1 for a failure. */
static int open_outputs_root(run *r, char *err, size_t cap)
{
    const tt_options *o = &r->o;
    char why[2048];
    if (!o->no_save) {
        if (ckpt_dir_open(&r->cdir, o->save_dir, r->note, sizeof r->note, why, sizeof why))
            return snprintf(err, cap, "--save: %s", why), 1;
        if (!o->overwrite && other_runs_checkpoint(&r->cdir, o, r->have_ck ? o->resume : NULL, &r->other_file,
                                                   &r->other_option) && !o->default_save)
            return snprintf(err, cap, "--save: %s is the checkpoint of another run (its %s differs from this run's): "
                            "not replaced; --resume %s to continue that run, --overwrite to replace it, or another "
                            "--save DIR", r->other_file, r->other_option, r->cdir.last), 2;
    }
    if (outputs_apart(r, err, cap)) return 2;
    /* A resumed run, or a restart by ckrun --restarts: the same job going on. */
    const char *restart = getenv("CKRUN_RESTART");
    const int continued = o->resume != NULL || (restart && strcmp(restart, "0") && *restart);
    if ((o->log && tt_output_start("--log", o->log, o->overwrite, continued, &r->logf, err, cap)) ||
        (o->trace && tt_output_start("--trace", o->trace, o->overwrite, continued, NULL, err, cap)) ||
        (o->metrics && tt_output_start("--metrics", o->metrics, o->overwrite, continued, NULL, err, cap)))
        return 1;
    if (r->have_ck && !o->no_save && ckpt_dir_sync_best(&r->cdir, &r->ck, r->repaired, sizeof r->repaired, why,
                                                        sizeof why))
        return snprintf(err, cap, "--save: %s", why), 1;
    return 0;
}

static int open_outputs(run *r)
{
    char err[4096] = "";
    const int rc = r->root ? open_outputs_root(r, err, sizeof err) : 0;
    if (all_ok(rc == 0)) return 0;
    /* Nothing trained, nothing saved: every rank leaves cleanly. */
    if (r->root) fprintf(stderr, "tagtrain: %s\n", err);
    return from_root(rc);
}

/* The banner and the log's run record, from the report. */
static void begin_report(run *r)
{
    if (r->have_ck) ckpt_free(&r->ck);
    r->have_ck = 0;
    if (r->o.trace) tt_sync_trace_start(&r->sync);
    tt_report *rep = &r->rep;
    const tt_options *o = &r->o;
    rep->p = r->p;
    rep->cv = o->tc.folds > 0;
    rep->quiet = o->quiet;
    rep->check_sync = o->check_sync;
    rep->tc = &o->tc;
    rep->sync = &r->sync.info;
    rep->algo_auto = r->sync.algo_auto;
    rep->nparams = r->model.nparams;
    rep->ntr = r->ntr;
    rep->nva = r->nva;
    rep->nhold = r->hold.n;
    rep->nnz_per_row = r->ntr ? (double)r->Xtr.ptr[r->ntr] / (double)r->ntr : 0.0;
    rep->path_data = r->path_data;
    rep->path_hold = r->path_hold;
    rep->resume = o->resume;
    rep->start_epoch = r->start_epoch;
    rep->save_note = r->note;
    rep->other_option = r->other_file ? r->other_option : NULL;
    rep->repaired = r->repaired;
    rep->cdir = o->no_save ? NULL : &r->cdir;
    if (r->root && !o->quiet) report_banner(stdout, rep);
    if (r->logf) log_run(r->logf, rep);
    r->last_epoch = o->tc.epochs;
    if (o->stop_after && r->start_epoch + o->stop_after < r->last_epoch) r->last_epoch = r->start_epoch + o->stop_after;
    r->last_saved = r->start_epoch;
    /* Test hook (tests/trainer/cli.sh): TAGTRAIN_TEST_NAN=E makes every
     * rank's parameters NaN before epoch E, as a diverging run would;
     * TAGTRAIN_TEST_NAN=E:inf makes epoch E's train loss +inf instead (the
     * loss of a probability that underflowed to 0); TAGTRAIN_TEST_NAN=E:end
     * makes a parameter NaN after epoch E's last step, as a last update that
     * overflowed would: the train loss, measured before it, stays finite. */
    const char *nan_hook = getenv("TAGTRAIN_TEST_NAN");
    r->nan_epoch = nan_hook ? atoi(nan_hook) : 0;
    r->inf_hook = nan_hook && strstr(nan_hook, ":inf") != NULL;
    r->end_hook = nan_hook && strstr(nan_hook, ":end") != NULL;
}

/* ------------------------------------------------------------ training */

/* One optimizer step: forward and backward, the gradients synchronised and
 * the optimizer step (the mode's), timed and logged. The step's time, in the
 * log's order: forward and backward; with --breakdown, the wait for the
 * slower rank (a barrier of every rank, so the collective after it starts
 * with all ranks in it and times the collective proper, as collbench's
 * timed calls do); the collective (the mode's comm_s: with buckets, what of
 * it backward did not hide); and the optimizer with the rest of the mode's
 * step. Without --breakdown the wait is inside the collective. Apart, the
 * gradient all-reduce's calls as they ran (calls_s: with buckets their runs
 * on the progress thread, hidden or not), and with --breakdown taken apart
 * into the wait for the last rank to start each call and the rest (the
 * collective proper: the figure to set beside collbench's time for the same
 * calls, which starts its calls together). */
static void train_step(run *r, const tt_step *st, int epoch, int64_t k, double loss_cnt[2])
{
    tt_sync *s = &r->sync;
    tt_report *rep = &r->rep;
    char err[1024];
    const float lr = opt_lr_at(&r->opt.cfg, r->opt.t);
    const double t0 = ck_now();
    if (s->ops->backward(s, st, loss_cnt, err, sizeof err)) fail_abort("training step", err);
    const double t1 = ck_now();
    if (r->o.breakdown && r->p > 1) ck_watch_barrier(MPI_COMM_WORLD, "the --breakdown wait for the slower rank");
    const double t2 = ck_now();
    double comm = 0;
    s->dp.calls_s = -1;   /* set only where the step all-reduces the gradients (dp_allreduce_grads) */
    if (s->ops->step(s, st, &comm, err, sizeof err)) fail_abort("training step", err);
    const double t3 = ck_now();
    double entry = -1, proper = -1;   /* the calls taken apart (--breakdown; after the step, outside its time) */
    if (r->o.breakdown && s->dp.calls_s >= 0) dp_calls_apart(&s->dp, &entry, &proper);
    const double fb = t1 - t0, wait = t2 - t1, optim = t3 - t2 - comm;
    const double compute = fb + optim;
    rep->t_compute += compute;
    rep->t_comm += comm;
    rep->bytes_total += (double)s->step_bytes;
    rep->steps_done++;
    if (r->logf) {
        const tt_step_rec rec = {.epoch = epoch + 1, .step = k, .global_step = r->opt.t, .samples = st->len,
                                 .lr = lr, .compute_s = compute, .comm_s = comm, .allreduce_bytes = s->step_bytes,
                                 .sent_bytes = s->sent_bytes, .step_s = t3 - t0, .fb_s = fb,
                                 .wait_s = r->o.breakdown ? wait : -1, .optimizer_s = optim,
                                 .calls_s = s->dp.calls_s, .calls_entry_s = entry, .calls_proper_s = proper};
        log_step(r->logf, &rec);
    }
}

/* One epoch of steps over this epoch's order; the losses and times summed
 * over the ranks into loss_cnt and *e. */
static void train_epoch(run *r, int epoch, double loss_cnt[2], tt_epoch_rec *e)
{
    const train_config *tc = &r->o.tc;
    tt_sync *s = &r->sync;
    tt_report *rep = &r->rep;
    char err[1024];
    if (epoch + 1 == r->nan_epoch && !r->inf_hook && !r->end_hook) {
        r->model.params[r->model.nparams - 1] = NAN;
        if (s->ops->to_device && s->ops->to_device(s, err, sizeof err)) fail_abort("device", err);
    }
    size_t *order = NULL;
    /* Per data-parallel replica: the ranks of a tensor-parallel group draw the same. */
    const size_t n_order = dp_epoch_order(r->ntr, r->plan.dp_size, tc->seed, epoch, &order);
    if (!order) fail_abort("epoch order", "out of memory");
    rng_t drop = rng_stream(tc->seed, RNG_DROPOUT, (uint64_t)r->plan.dp_rank, (uint64_t)epoch);
    char phase[64];
    snprintf(phase, sizeof phase, "train (epoch %d)", epoch + 1);
    enter_phase(phase);
    ck_watch_barrier(MPI_COMM_WORLD, "the start of the epoch");   /* epoch timings start together */
    const double te0 = ck_now(), comm0 = rep->t_comm, comp0 = rep->t_compute;
    tt_step st = {.order = order, .batch = tc->batch, .y = r->Xtr.y, .x = &r->xtr, .rows = r->rows,
                  .labels = r->labels, .drop = &drop};
    int64_t k = 0;
    for (st.pos = 0; st.pos < n_order; st.pos += r->per_step, k++) {
        st.len = n_order - st.pos < r->per_step ? n_order - st.pos : r->per_step;
        train_step(r, &st, epoch, k, loss_cnt);
    }
    free(order);
    double te = ck_now() - te0;
    ck_watch_allreduce(MPI_IN_PLACE, &te, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, "the epoch's time");
    /* The host model and optimizer take the mode's state (evaluation, --check-sync and checkpoints read them). */
    if (s->ops->to_host && s->ops->to_host(s, err, sizeof err)) fail_abort("device", err);
    if (epoch + 1 == r->nan_epoch && r->end_hook) r->model.params[r->model.nparams - 1] = NAN;
    double tm[2] = {rep->t_comm - comm0, rep->t_compute - comp0};
    if (tt_sync_sum(s, loss_cnt, 2) || tt_sync_sum(s, tm, 2)) fail_abort("epoch sums", "MPI failed");
    rep->train_time += te;
    rep->samples_done += (double)n_order;
    if (epoch > r->start_epoch) {
        rep->steady_time += te;
        rep->steady_samples += (double)n_order;
    }
    ck_fault_point("ckpt/epoch", r->rank);
    const double train_loss = epoch + 1 == r->nan_epoch && r->inf_hook ? INFINITY
                              : loss_cnt[1] > 0 ? loss_cnt[0] / loss_cnt[1] : 0.0;
    *e = (tt_epoch_rec){.epoch = epoch + 1, .train_loss = train_loss, .time_s = te, .samples = n_order,
                        .comm_s = tm[0], .compute_s = tm[1]};
}

/* Rank 0: the epoch validated; a diverged run stopped (status 4: the losses
 * are measured before the epoch's last update (train) or only with
 * validation rows (val), so the parameters are checked too, or a last step
 * that overflowed would become the best model and the saved state); the
 * best kept; the epoch line and record. */
static int judge_epoch(run *r, tt_epoch_rec *e)
{
    tt_report *rep = &r->rep;
    const mlp *m = &r->model;
    eval_model(&r->model, &r->xva, r->Xva.y, r->nva, r->rows, &rep->val);
    size_t bad = 0;
    while (bad < m->nparams && isfinite(m->params[bad])) bad++;
    if (!isfinite(e->train_loss) || (r->nva && !isfinite(rep->val.loss)) || bad < m->nparams) {
        char saved[4400] = "", what[96];
        if (!r->o.no_save && r->last_saved)
            snprintf(saved, sizeof saved, " (%s is from epoch %d)", r->cdir.last, r->last_saved);
        if (!isfinite(e->train_loss)) snprintf(what, sizeof what, "the train loss is %g", e->train_loss);
        else if (r->nva && !isfinite(rep->val.loss)) snprintf(what, sizeof what, "the val loss is %g", rep->val.loss);
        else snprintf(what, sizeof what, "parameter %zu is %g", bad, m->params[bad]);
        fprintf(stderr, "tagtrain: epoch %d: %s: training diverged (try a lower --lr); stopping, and nothing of this "
                "epoch is saved%s\n", e->epoch, what, saved);
        return 4;
    }
    e->improved = r->nva ? rep->val.loss < rep->best_val : 1;   /* no val rows: the last epoch is the best */
    if (e->improved) {
        rep->best_val = r->nva ? rep->val.loss : INFINITY;
        rep->best_epoch = e->epoch;
        rep->best_f1 = rep->val.w_f1;
        memcpy(r->best, m->params, m->nparams * sizeof(float));
        r->best_dirty = 1;
    }
    if (!r->o.quiet) report_epoch(stdout, rep, e);
    if (!r->logf) return 0;
    log_epoch(r->logf, rep, e);
    char err[4200];
    if (tt_output_ok(r->logf, "--log", r->o.log, err, sizeof err)) return 0;
    fprintf(stderr, "tagtrain: %s\n", err);
    return 1;
}

/* Rank 0: best.ckpt (when the best changed) and last.ckpt, with the whole
 * optimizer state m, v. */
static int save_epoch(run *r, int epoch, const float *m, const float *v)
{
    char phase[64], err[4200];
    snprintf(phase, sizeof phase, "save (epoch %d)", epoch + 1);
    enter_phase(phase);
    const checkpoint st = {.kind = CKPT_STATE, .cfg = r->o.tc, .epochs_done = epoch + 1, .opt_steps = r->opt.t,
                           .best_val_loss = r->rep.best_val, .best_epoch = r->rep.best_epoch,
                           .nparams = r->model.nparams, .params = r->model.params, .m = (float *)m, .v = (float *)v,
                           .best = r->best, .idf = r->feat.idf};
    const int remade = r->cdir.remade, rc = ckpt_dir_save(&r->cdir, &st, r->best_dirty, err, sizeof err);
    if (rc) fprintf(stderr, "tagtrain: checkpoint: %s\n", err);
    if (r->cdir.remade > remade)
        fprintf(stderr, "tagtrain: warning: %s was removed during the run: made again for epoch %d's checkpoints\n",
                r->cdir.dir, epoch + 1);
    r->last_saved = epoch + 1;
    r->best_dirty = 0;
    return rc ? 1 : 0;
}

/* After an epoch's training: --check-sync, then rank 0 validates, decides,
 * saves; every rank follows its verdict. */
static int end_epoch(run *r, int epoch, tt_epoch_rec *e)
{
    const tt_options *o = &r->o;
    tt_sync *s = &r->sync;
    char err[1024];
    if (o->inject_desync == epoch + 1 && r->rank == 1) r->model.params[0] += 1e-3f;
    if (o->check_sync && tt_sync_check(s, err, sizeof err)) {
        if (r->root) fprintf(stderr, "tagtrain: --check-sync after epoch %d: %s\n", epoch + 1, err);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* The whole optimizer state on rank 0 for the save (collective under
     * ZeRO, so decided here on every rank alike). */
    const int saving = !o->no_save && ((epoch + 1) % o->save_every == 0 || epoch + 1 == r->last_epoch);
    const float *m = NULL, *v = NULL;
    if (saving && s->ops->gather_state(s, &m, &v)) fail_abort("checkpoint", "gathering the optimizer state failed");
    char phase[64];
    snprintf(phase, sizeof phase, "eval (epoch %d)", epoch + 1);
    enter_phase(phase);
    int status = 0;
    if (r->root) {
        status = judge_epoch(r, e);
        if (!status && saving) status = save_epoch(r, epoch, m, v);
    }
    return from_root(status);
}

/* ------------------------------------------------------------ the report */

/* Peak resident memory, the largest rank's: what --zero 1 saves shows here;
 * and resident memory now, after the last step: what a rank holds between
 * steps, in all and of the gradients (--zero 2: the shard, not the pages
 * backward wrote during the step). */
static void measure_memory(run *r)
{
    struct rusage ru;
    double *rss = r->rep.rss;
    rss[0] = getrusage(RUSAGE_SELF, &ru) ? 0.0 : (double)ru.ru_maxrss * 1024.0;
    rss[1] = 0.0;
    rss[2] = (double)tt_sync_grad_resident(&r->sync);
    FILE *statm = fopen("/proc/self/statm", "r");
    long pages_total, pages_resident;
    if (statm && fscanf(statm, "%ld %ld", &pages_total, &pages_resident) == 2)
        rss[1] = (double)pages_resident * (double)sysconf(_SC_PAGESIZE);
    if (statm) fclose(statm);
    ck_watch_allreduce(MPI_IN_PLACE, rss, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, "the resident memory");
}

/* Rank 0: the best model on the holdout (or the fold's scores), the summary,
 * its record, --metrics. The report on stdout is a result too: a full disk
 * or a closed pipe is an error. */
static int report_root(run *r)
{
    const tt_options *o = &r->o;
    tt_report *rep = &r->rep;
    char err[4200];
    int status = 0;
    rep->trained = r->last_epoch - r->start_epoch;
    memcpy(r->model.params, r->best, r->model.nparams * sizeof(float));
    if (!rep->cv) eval_model(&r->model, &r->xho, r->Xho.y, r->Xho.n, r->rows, &rep->ho);
    report_summary(stdout, rep);
    if (r->logf) log_summary(r->logf, rep);
    if (o->metrics) {
        FILE *f = tt_output_open("--metrics", o->metrics, err, sizeof err);
        if (f) {
            write_metrics(f, rep);
            const int wrote = tt_output_ok(f, "--metrics", o->metrics, err, sizeof err);
            if (fclose(f) && wrote) snprintf(err, sizeof err, "--metrics %s: write failed: %s", o->metrics,
                                             strerror(errno));
            else if (wrote) err[0] = '\0';
        }
        if (!f || err[0]) {
            fprintf(stderr, "tagtrain: %s\n", err);
            status = 1;
        }
    }
    if (!tt_output_ok(stdout, "stdout", "(the report)", err, sizeof err) && !status) {
        fprintf(stderr, "tagtrain: %s\n", err);
        status = 1;
    }
    return status;
}

/* --trace: every rank's timeline, gathered on rank 0 (collective). */
static int write_trace(run *r, int status)
{
    const char *path = r->o.trace;
    char err[4200] = "";
    FILE *f = r->root ? tt_output_open("--trace", path, err, sizeof err) : NULL;
    if (!from_root(!r->root || f)) {
        if (r->root) fprintf(stderr, "tagtrain: %s\n", err);
        return status ? status : 1;
    }
    int rc = tt_sync_trace_write(&r->sync, f, err, sizeof err);
    if (rc && r->root && !status) fprintf(stderr, "tagtrain: --trace %s: %s\n", path, err);
    if (f && (fclose(f) || rc) && !status) {
        if (!rc) fprintf(stderr, "tagtrain: --trace %s: write failed\n", path);
        return 1;
    }
    return status;
}

/* The end of a run: the summary and its outputs, whatever the status. */
static int report(run *r, int status)
{
    enter_phase("holdout and report");
    tt_report *rep = &r->rep;
    rep->comm_all[0] = rep->t_comm;
    rep->comm_all[1] = rep->t_compute;
    tt_sync_sum(&r->sync, rep->comm_all, 2);
    measure_memory(r);
    if (r->root && !status) status = report_root(r);
    if (r->logf) {
        char err[4200];
        if (!tt_output_ok(r->logf, "--log", r->o.log, err, sizeof err) && !status) {
            fprintf(stderr, "tagtrain: %s\n", err);
            status = 1;
        }
        if (fclose(r->logf) && !status) {
            fprintf(stderr, "tagtrain: --log %s: write failed: %s\n", r->o.log, strerror(errno));
            status = 1;
        }
        r->logf = NULL;
    }
    if (r->o.trace) status = write_trace(r, status);
    return from_root(status);
}

/* Everything a run holds, released (the collective parts on every rank alike). */
static void release(run *r)
{
    if (r->logf) fclose(r->logf);
    if (r->have_ck) ckpt_free(&r->ck);
    free(r->best);
    free(r->rows);
    free(r->labels);
    if (r->have_sync) tt_sync_close(&r->sync);
    if (r->have_model) mlp_free(&r->model);
    feat_csr_free(&r->Xtr);
    feat_csr_free(&r->Xva);
    feat_csr_free(&r->Xho);
    feat_free(&r->feat);
    free(r->tr_rows);
    free(r->va_rows);
    mwml_free(&r->data);
    mwml_free(&r->hold);
    if (r->root) ckpt_dir_close(&r->cdir);
    tt_plan_free(&r->plan);
}

/* ------------------------------------------------------------ main */

int tagtrain_main(int argc, char **argv)
{
    static run r;   /* large (paths, the report): not on the stack */
    memset(&r, 0, sizeof r);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &r.provided);

    /* setup: the options, the data, the model and its synchronisation, the outputs */
    int status = start(&r, argc, argv);
    if (!status) status = resume(&r);
    if (!status) status = make_plan(&r);
    if (!status) status = load_data(&r);
    if (!status) status = featurise(&r);
    if (!status) status = setup_training(&r);
    if (!status) status = open_outputs(&r);

    /* per epoch: train, evaluate, save; then the report */
    if (!status) {
        begin_report(&r);
        for (int epoch = r.start_epoch; epoch < r.last_epoch && !status; epoch++) {
            double loss_cnt[2] = {0, 0};
            tt_epoch_rec e;
            train_epoch(&r, epoch, loss_cnt, &e);
            status = end_epoch(&r, epoch, &e);
        }
        status = report(&r, status);
    }

    release(&r);
    return finish(status < 0 ? 0 : status);   /* the one way out */
}
