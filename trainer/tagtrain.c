/*
 * tagtrain — data-parallel training of the Made With ML tagging MLP, with the
 * gradient all-reduce done by any collkit registry algorithm (--algo).
 *
 *   mpirun -np 2 build/bin/tagtrain                      defaults, data found automatically
 *   mpirun -np 4 build/bin/tagtrain --algo ring --epochs 10 --bucket-mb 1
 *   build/bin/tagtrain --folds 5 --fold 2                cross-validation on dataset.csv
 *   build/bin/tagtrain --algo list
 *
 * What happens (trainer/README.md has the whole story):
 *   every rank loads dataset.csv (and holdout.csv, except in cross-validation),
 *   splits dataset.csv into train/val (stratified, seeded), fits the TF-IDF
 *   featurizer on train and featurises everything into CSR rows; rank 0
 *   initialises the parameters and broadcasts them; then, every step,
 *
 *       shard -> mlp_forward -> mlp_backward -> dp_allreduce_grads -> optimizer_step
 *
 *   (the loop in tagtrain_main below). After each epoch rank 0 evaluates on
 *   val and prints one line; every --save-every epochs (and after the last)
 *   it saves best.ckpt (when the best changed) and last.ckpt; at the end it
 *   evaluates the best model on the holdout.
 *
 * Exit status: 0 done; 1 an error (data, files, MPI; the message says which);
 * 2 a bad argument; 3 ranks out of sync (--check-sync); 4 the loss became NaN
 * or infinite (nothing of that epoch is saved).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cblas.h>
#include "collkit.h"
#include "collkit_util.h"
#include "tagtrain.h"
#include "mwml.h"
#include "features.h"
#include "model.h"
#include "optim.h"
#include "dp.h"
#include "zero.h"
#include "devstep.h"
#include <sys/resource.h>
#include "eval.h"
#include "ckpt.h"
#include "args.h"

/* Under SimGrid SMPI (make sim-bench) the host's time of the step's compute
 * is not simulated (smpi/simulate-computation off, so runs are deterministic):
 * it is charged as modelled flops instead, at the simulated host's speed.
 * Forward and backward: 6 flops per parameter per sample (2 forward, 4
 * backward), as if the input layer were dense; the optimizer: 10 per
 * parameter (AdamW). A model, stated as one: what it shows is how the
 * all-reduce's share of a step grows with p, not this machine's speed. */
#ifdef COLLKIT_SMPI
static void sim_charge(double flops)
{
    smpi_bench_end();
    smpi_execute_flops(flops);
    smpi_bench_begin();
}
#else
static void sim_charge(double flops) { (void)flops; }
#endif

/* What every output file of tagtrain carries in its first line, so that a
 * rerun may replace it and nothing else (--log, --metrics). */
#define SIGNATURE "\"program\":\"tagtrain\""

static int g_rank;

/* The transport a run uses: --transport when given; for --algo auto, shm
 * when every rank shares one node (the single-copy all-reduce needs it) and
 * mpi otherwise; for a named algorithm, mpi, as collbench and collcheck. */
static const char *pick_transport(const tt_options *o, int p)
{
    if (o->transport) return o->transport;
    if (o->device) return "mpi";   /* the gradients move on the device's communicator (devstep.h) */
    if (strcmp(o->algo_name, "auto") || p < 2) return "mpi";
#ifdef COLLKIT_SMPI
    return "mpi";   /* simulated ranks are hosts of their own */
#else
    MPI_Comm node;
    int nnode = 0;
    /* MPI_Comm_split_type has no nonblocking form: meet first, bounded. */
    ck_watch_barrier(MPI_COMM_WORLD, "choosing the transport");
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return "mpi";
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

/* An output file (--log, --trace, --metrics). Never blocks and never destroys a
 * user's file: a FIFO nobody reads is refused instead of waited on; a
 * checkpoint is never written over; an
 * existing non-empty regular file is written over only with --overwrite (the
 * rule of every collkit tool, ck_output_free), or by a resumed run when its
 * first line says tagtrain wrote it (the files of the run being continued, as
 * ckrun --restarts does: the log is appended to, so the job's history stays);
 * devices (/dev/null) are fine. */
static FILE *open_output(const char *opt, const char *path, int overwrite, int resumed, int at_end, char *err,
                         size_t errlen)
{
    struct stat st;
    int fd = -1, append = 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) { snprintf(err, errlen, "%s %s: is a directory", opt, path); return NULL; }
        if (S_ISSOCK(st.st_mode)) { snprintf(err, errlen, "%s %s: is a socket", opt, path); return NULL; }
        if (S_ISFIFO(st.st_mode)) {
            fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0) {
                snprintf(err, errlen, "%s %s: %s", opt, path,
                         errno == ENXIO ? "a FIFO that nobody reads (refusing to wait for a reader)" : strerror(errno));
                return NULL;
            }
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        } else if (S_ISREG(st.st_mode) && ckpt_probe(path) == 1) {
            /* Not even with --overwrite: a checkpoint is a run's saved work,
             * and a log written over it (a slip of the path) would lose it. */
            snprintf(err, errlen, "%s %s holds a tagtrain checkpoint: never written over, not even with --overwrite "
                     "(give another file)", opt, path);
            return NULL;
        } else if (S_ISREG(st.st_mode) && st.st_size > 0 && !overwrite) {
            /* Without --overwrite, only a continued run's own log goes on (appended). */
            char head[512] = "";
            FILE *f = fopen(path, "r");
            size_t k = f ? fread(head, 1, sizeof head - 1, f) : 0;
            if (f) fclose(f);
            head[k] = '\0';
            char *nl = strchr(head, '\n');
            if (nl) *nl = '\0';
            if (!resumed || !strstr(head, SIGNATURE)) {
                snprintf(err, errlen, "%s %s exists (%lld bytes): not written over (give another file, or --overwrite)%s",
                         opt, path, (long long)st.st_size,
                         resumed ? "; it is no file tagtrain wrote, which a resumed run would continue" : "");
                return NULL;
            }
            append = !at_end;   /* the records of the attempts before stay: the job's whole history */
        }
    }
    /* An output written only at the end (--metrics, --trace) is opened now
     * (a bad path stops the run before it trains) but emptied only when it
     * is written (output_begin): a run that fails before then leaves the
     * file as it was, e.g. the metrics of the run a resumed one continues. */
    if (fd < 0 && at_end) fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : at_end ? NULL : fopen(path, append ? "a+" : "w");
    if (!f) {
        snprintf(err, errlen, "%s %s: cannot open for writing: %s", opt, path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    /* An attempt killed mid-record left a line without its end: end it, so
     * the next record starts a line of its own. */
    if (append && fseek(f, -1, SEEK_END) == 0 && fgetc(f) != '\n') {
        fseek(f, 0, SEEK_END);
        fputc('\n', f);
    }
    return f;
}

/* The path a file has, or would have once made: realpath of the file, or
 * of its folder and then its name (an output not written yet). "" when the
 * folder does not resolve either (the open will say why). */
static void canonical(const char *path, char *out, size_t cap)
{
    char real[PATH_MAX];
    out[0] = '\0';
    if (realpath(path, real)) { snprintf(out, cap, "%s", real); return; }
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    const char *name = slash ? slash + 1 : path;
    if (*name && strcmp(name, ".") && strcmp(name, "..") && realpath(dir, real))
        snprintf(out, cap, "%s/%s", strcmp(real, "/") ? real : "", name);
}

/* Whether two paths name one file: the same inode when both exist (a hard
 * link, a symbolic link, ./x and x), else the same place once made. A
 * character device (/dev/null, /dev/stdout) may take several outputs. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return !S_ISCHR(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb) return 0;
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    canonical(a, ca, sizeof ca);
    canonical(b, cb, sizeof cb);
    return ca[0] && !strcmp(ca, cb);
}

/* The save directory's checkpoints belong to this run's job, or stay: a
 * best.ckpt or last.ckpt there whose configuration differs from this run's
 * (any option of the model's configuration, args.h; --epochs may differ: a resumed run extends
 * it) is another run's model, and the first save would replace it. 0 when
 * none is there (or --resume names it), else 1 with *file and the first
 * *option that differs. Files that do not load are left to the rules of the
 * save directory (ckpt.h). */
static int other_runs_checkpoint(const ckpt_dir *cd, const tt_options *o, const char *resume, const char **file,
                                 const char **option)
{
    const char *files[2] = {cd->last, cd->best};
    for (int i = 0; i < 2; i++) {
        checkpoint c;
        char why[1024];
        if (ckpt_probe(files[i]) != 1 || (resume && same_file(files[i], resume)) ||
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

/* Empty an output opened with at_end, before writing it (a device or a FIFO
 * has nothing to empty). 0, or -1 with errno. */
static int output_begin(FILE *f)
{
    struct stat st;
    return fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? ftruncate(fileno(f), 0) : 0;
}

/* Flush and check: every failed write is an error. */
static int output_ok(FILE *f, const char *opt, const char *path, char *err, size_t errlen)
{
    if (fflush(f) == 0 && !ferror(f)) return 1;
    snprintf(err, errlen, "%s %s: write failed: %s", opt, path, strerror(errno ? errno : EIO));
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

/* One JSON-lines record of the log, started. */
static void log_record(ck_json *j, FILE *f, const char *type)
{
    ck_json_open(j, f, CK_JSON_COMPACT);
    ck_json_str(j, "type", type);
}

/* ------------------------------------------------------------ main */

int tagtrain_main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const int rank = g_rank, root = rank == 0;
    double t_start = ck_now();
    /* Every wait below is bounded (COLLKIT_TIMEOUT): a rank that stops in
     * any phase ends the job, named, instead of holding the others. */
    if (ck_watch_init("tagtrain")) fail_abort("start-up", "cannot create the watchdog's communicator");
    enter_phase("options");

    tt_options o;
    int prc = agree_on_args(argc, argv, &o);
    if (prc) return finish(prc == 1 ? 0 : 2);
    train_config *tc = &o.tc;
#ifdef COLLKIT_SMPI
#define NO_THREADS_WHY " (SimGrid SMPI runs every simulated rank in one thread: no progress thread can run)"
#else
#define NO_THREADS_WHY ""
#endif
    if (o.bucket_mb > 0 && !o.zero && p > 1 && provided < MPI_THREAD_MULTIPLE) {
        if (root) fprintf(stderr, "tagtrain: --bucket-mb needs MPI_THREAD_MULTIPLE, which this MPI does not provide%s\n",
                          NO_THREADS_WHY);
        return finish(2);
    }
    if (o.inject_desync > 0 && p < 2) {
        if (root) fprintf(stderr, "tagtrain: --inject-desync needs at least 2 ranks\n");
        return finish(2);
    }

    if (o.device) {
        /* --device cuda: CUDA and a GPU on every rank, said before any data is read. */
        char why[640];
        int ok = devstep_available(why, sizeof why) == 0, first = ok ? INT_MAX : rank;
        ck_watch_allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, "the verdict on the GPUs");
        if (first != INT_MAX) {
            if (rank == first) fprintf(stderr, "tagtrain: rank %d: --device cuda: %s\n", rank, why);
            return finish(1);
        }
    }

    /* ---- resume: the checkpoint's configuration wins */
    char err[MWML_ERRLEN];
    checkpoint ck = {0};
    int have_ck = 0;
    if (o.resume) {
        enter_phase("resume");
        int ok = ckpt_load(o.resume, &ck, err, sizeof err) == 0;
        if (ok && ck.kind != CKPT_STATE) {
            snprintf(err, sizeof err, "%s holds a model (best.ckpt), not a training state: resume from last.ckpt",
                     o.resume);
            ckpt_free(&ck);
            ok = 0;
        }
        if (!all_ok(ok)) {
            if (!ok && root) fprintf(stderr, "tagtrain: --resume: %s\n", err);
            if (ok) ckpt_free(&ck);
            return finish(1);
        }
        have_ck = 1;
        /* Every rank resumes the same state: m and v are not broadcast. */
        const int q = ck_first_differing_rank(MPI_COMM_WORLD, ck.checksum);
        /* The checkpoint's configuration wins; an option given that says
         * otherwise is refused rather than silently dropped. */
        const char *value, *given = tt_args_model_differs(&o, &ck.cfg, 1, &value);
        if (q >= 0 || given) {
            if (root && q >= 0)
                fprintf(stderr, "tagtrain: --resume %s: rank %d read another file than rank 0 (every rank must "
                        "resume the same checkpoint)\n", o.resume, q);
            else if (root)
                fprintf(stderr, "tagtrain: --resume: %s %s differs from the configuration %s was trained with; a "
                        "resumed run keeps its configuration (only --epochs may change): drop %s, or start a new "
                        "run\n", given, value, o.resume, given);
            ckpt_free(&ck);
            return finish(2);
        }
        int epochs = o.set_epochs ? tc->epochs : ck.cfg.epochs;
        *tc = ck.cfg;
        tc->epochs = epochs;
        if (ck.epochs_done >= tc->epochs && root)
            fprintf(stderr, "tagtrain: %s has already done %d of %d epochs; nothing to train (raise --epochs)\n",
                    o.resume, ck.epochs_done, tc->epochs);
    }
    const int cv = tc->folds > 0;

    /* ---- OpenBLAS threads: one per rank unless asked. The default model's
     * matrices are too small for more to pay, and p ranks share the cores. */
    openblas_set_num_threads(o.threads ? o.threads : 1);

    /* ---- data: load, audit, split, featurise into CSR rows */
    enter_phase("load");
    char path_data[4096], path_hold[4096] = "";
    mwml_data data = {0}, hold = {0};
    int ok = mwml_find(o.data, "dataset.csv", path_data, sizeof path_data, err, sizeof err) == 0 &&
             mwml_load(path_data, &data, err, sizeof err) == 0;
    /* Cross-validation selects the model: it never reads the holdout. */
    if (ok && !cv)
        ok = mwml_find(o.holdout, "holdout.csv", path_hold, sizeof path_hold, err, sizeof err) == 0 &&
             mwml_load(path_hold, &hold, err, sizeof err) == 0;
    if (!all_ok(ok)) {
        if (!ok && root) fprintf(stderr, "tagtrain: %s\n", err);
        mwml_free(&data);
        mwml_free(&hold);
        if (have_ck) ckpt_free(&ck);
        return finish(1);
    }
    {
        /* Every rank must train on the same rows (a file that differs between
         * nodes would give each rank its own featurizer and row numbers). */
        const int q = ck_first_differing_rank(MPI_COMM_WORLD, data_digest(data_digest(CK_FNV1A64_INIT, &data), &hold));
        if (q >= 0) {
            if (root)
                fprintf(stderr, "tagtrain: rank %d read other data than rank 0 (%s%s%s): every rank must read the "
                        "same files\n", q, path_data, cv ? "" : ", ", path_hold);
            mwml_free(&data);
            mwml_free(&hold);
            if (have_ck) ckpt_free(&ck);
            return finish(1);
        }
    }
    size_t *tr_rows = NULL, *va_rows = NULL, ntr = 0, nva = 0;
    ok = (cv ? stratified_kfold(&data, tc->folds, tc->fold, tc->split_seed, &tr_rows, &ntr, &va_rows, &nva)
             : stratified_split(&data, tc->val_frac, tc->split_seed, &tr_rows, &ntr, &va_rows, &nva)) == 0;
    mwml_audit audit;
    ok = ok && mwml_audit_rows(&data, cv ? NULL : &hold, &audit) == 0;
    if (!all_ok(ok) || ntr == 0) {
        if (root) fprintf(stderr, "tagtrain: cannot split %s: %s\n", path_data, ok ? "no training rows" : "out of memory");
        return finish(1);
    }
    const char *dname = strrchr(path_data, '/') ? strrchr(path_data, '/') + 1 : path_data;
    const char *hname = strrchr(path_hold, '/') ? strrchr(path_hold, '/') + 1 : path_hold;
    if (from_root(root ? warn_data(&audit, dname, hname, nva, tc, data.n, o.strict_data) : 0)) {
        return finish(1);
    }
    enter_phase("featurise");
    featurizer feat = {0};
    feat_csr Xtr = {0}, Xva = {0}, Xho = {0};
    ok = (have_ck ? feat_load_opts(&feat, tc->feat_dim, &tc->feat, ck.idf)
                  : feat_fit_opts(&feat, tc->feat_dim, &tc->feat, &data, tr_rows, ntr)) == 0;
    ok = ok && feat_transform_csr(&feat, &data, tr_rows, ntr, &Xtr) == 0 &&
         feat_transform_csr(&feat, &data, va_rows, nva, &Xva) == 0 &&
         (cv || feat_transform_csr(&feat, &hold, NULL, hold.n, &Xho) == 0);
    if (!all_ok(ok)) {
        if (!ok && root) fprintf(stderr, "tagtrain: cannot featurise the data: out of memory\n");
        return finish(1);
    }
    const csr_rows xtr = {Xtr.ptr, Xtr.idx, Xtr.val}, xva = {Xva.ptr, Xva.idx, Xva.val}, xho = {Xho.ptr, Xho.idx, Xho.val};

    /* ---- communicator, model, data parallelism, optimizer */
    enter_phase("setup");
    ck_comm *comm = NULL;
    int rc = ck_comm_create(MPI_COMM_WORLD, tt_transport_mem(pick_transport(&o, p)), &comm);
    if (rc) fail_abort("ck_comm_create", ck_strerror(rc));
    /* auto: the single-copy twoshot where the ranks map each other's memory
     * (the fastest host all-reduce of a gradient-sized buffer in make bench),
     * else the ring. */
    const int algo_auto = !strcmp(o.algo_name, "auto");
    const ck_algo *algo = NULL;
    {
        /* A named algorithm is checked again against the transport the
         * communicator got: shm asked for across nodes falls back to mpi,
         * where the single-copy algorithms cannot run. */
        char aerr[1024];
        int nalgo = 0;
        const char *name = algo_auto ? (ck_comm_mem(comm) & CK_MEM_SHM ? "twoshot" : "ring") : o.algo_name;
        if (o.device) name = "ring";   /* the host communicator only broadcasts and sums: devstep.h has the gradients' */
        if (ck_algo_parse_list(name, ck_comm_mem(comm), &algo, 1, &nalgo, aerr, sizeof aerr)) {
            /* Every rank reaches the same verdict (the transport is agreed): a clean exit. */
            if (root) fprintf(stderr, "tagtrain: --algo on the %s transport: %s\n", ck_comm_transport_name(comm), aerr);
            ck_comm_destroy(comm);
            return finish(2);
        }
    }
    mlp model;
    int eval_batch = 256, local_max = (tc->batch + p - 1) / p;
    if (mlp_create(&model, &tc->model, local_max > eval_batch ? local_max : eval_batch))
        fail_abort("model", "out of memory");
    dp_ctx dp;
    /* --zero 2's --bucket-mb is its own (zero.h), not DDP's; its gradient buffer is mapped on demand. */
    if (dp_init(&dp, comm, algo, &model, o.zero ? 0 : o.bucket_mb,
                (o.sparse_grads ? DP_SPARSE_GRADS : 0) | (o.zero == 2 ? DP_GRADS_ON_DEMAND : 0), err, sizeof err))
        fail_abort("setup", err);
    zero_ctx zero;
    if (zero_init(&zero, &dp, o.zero, o.rs_algo, o.ag_algo, o.bucket_mb, err, sizeof err)) {
        /* Every rank reaches the same verdict: a clean exit. */
        if (root) fprintf(stderr, "tagtrain: %s\n", err);
        ck_comm_destroy(comm);
        return finish(2);
    }
    size_t *rows = malloc((size_t)model.max_batch * sizeof *rows);   /* this rank's batch rows */
    int *labels = malloc((size_t)model.max_batch * sizeof *labels);
    if (!rows || !labels) fail_abort("setup", "out of memory");

    size_t npad = (ntr + (size_t)p - 1) / (size_t)p * (size_t)p;
    size_t per_step = (size_t)tc->batch * (size_t)tc->accum;
    int64_t steps_per_epoch = (int64_t)((npad + per_step - 1) / per_step);
    optimizer opt;
    if (!have_ck || o.set_epochs) tc->opt.total_steps = steps_per_epoch * tc->epochs;
    if (zero_opt_create(&zero, &opt, &tc->opt)) fail_abort("optimizer", "out of memory");
    /* --zero: rank 0 gathers the whole optimizer state for its checkpoints. */
    float *full_m = NULL, *full_v = NULL;
    if (zero.stage && root && !o.no_save) {
        full_m = malloc((model.nparams ? model.nparams : 1) * sizeof(float));
        full_v = malloc((model.nparams ? model.nparams : 1) * sizeof(float));
        if (!full_m || !full_v) fail_abort("optimizer", "out of memory");
    }

    int start_epoch = 0, best_epoch = 0;
    double best_val = INFINITY;
    if (have_ck) {
        memcpy(model.params, ck.params, model.nparams * sizeof(float));
        zero_load_state(&zero, &opt, ck.m, ck.v);   /* this rank's shard (all of it, replicated) */
        opt.t = ck.opt_steps;
        start_epoch = ck.epochs_done;
        best_val = ck.best_val_loss;
        best_epoch = ck.best_epoch;
    } else if (root) {
        mlp_init_params(&model, tc->seed);
    }
    /* Every rank starts from rank 0's parameters (the checkpoint case too:
     * it costs one broadcast and rules out a rank that read a different file). */
    if (dp_broadcast_params(&dp, model.params, model.nparams)) fail_abort("broadcast", "MPI_Bcast failed");
    /* --device cuda: the model on the GPU, from those parameters and moments (devstep.h). */
    devstep *ds = NULL;
    if (o.device) {
        if (devstep_open(&ds, MPI_COMM_WORLD, o.algo_name, &model, &xtr, ntr, local_max, err, sizeof err)) {
            if (err[0]) fprintf(stderr, "tagtrain: rank %d: --device cuda: %s\n", rank, err);
            dp_free(&dp);
            ck_comm_destroy(comm);
            return finish(1);
        }
        if (devstep_upload(ds, model.params, opt.m, opt.v, err, sizeof err)) fail_abort("device", err);
        algo = devstep_algo(ds);
    }
    ck_comm *gcomm = ds ? devstep_comm(ds) : comm;   /* where the gradients move */

    /* The best parameters by val loss, kept by rank 0 for best.ckpt and the holdout. */
    float *best = root ? malloc(model.nparams * sizeof(float)) : NULL;
    if (root && !best) fail_abort("best copy", "out of memory");
    if (root) memcpy(best, have_ck && best_epoch > 0 ? ck.best : model.params, model.nparams * sizeof(float));

    /* ---- outputs, all checked before any training and before anything saved
     * is touched: the save directory (locked, cleaned of a killed run's
     * temporary files, writable), the log and the metrics file (opened now, so
     * a bad path stops the run here, not after it); then, on a resumed run,
     * best.ckpt made to match the state. */
    ckpt_dir cdir = {.lock_fd = -1};
    FILE *logf = NULL, *metf = NULL, *tracef = NULL;
    char note[512] = "", repaired[1200] = "";
    const char *failed = "";
    ok = 1;
    const char *other_file = NULL, *other_option = NULL;
    /* A refusal the user must answer with other arguments (exit 2, as for
     * a bad option: ckrun --restarts does not retry it), not a failure. */
    int refusal = 0;
    if (root && !o.no_save) {
        ok = ckpt_dir_open(&cdir, o.save_dir, note, sizeof note, err, sizeof err) == 0;
        /* A folder the user named keeps its run's checkpoints; the default
         * one holds the latest run, as its name says: replaced, with a note. */
        if (ok && !o.overwrite && other_runs_checkpoint(&cdir, &o, have_ck ? o.resume : NULL, &other_file,
                                                        &other_option) && !o.default_save) {
            snprintf(err, sizeof err, "%s is the checkpoint of another run (its %s differs from this run's): not "
                     "replaced; --resume %s to continue that run, --overwrite to replace it, or another --save DIR",
                     other_file, other_option, cdir.last);
            ok = 0;
            refusal = 1;
        }
        if (!ok) failed = "--save: ";
    }
    /* A resumed run, or a restart by ckrun --restarts: the same job going on. */
    const char *restart = getenv("CKRUN_RESTART");
    const int continued = o.resume != NULL || (restart && strcmp(restart, "0") && *restart);
    /* Each output must be a file of its own: not one this run reads (the
     * data, the checkpoint it resumes), not one it saves (the save
     * directory's best.ckpt and last.ckpt: a log there would be refused only
     * at the first save, after the training), not another output's (two
     * writers interleave). Not even with --overwrite, which is about a
     * user's earlier files, not this run's own. */
    const char *outs[3][2] = {{"--log", o.log}, {"--trace", o.trace}, {"--metrics", o.metrics}};
    const char *uses[5][2] = {{"--data", path_data}, {"--holdout", path_hold}, {"--resume", o.resume},
                              {"--save's last.ckpt", o.no_save ? NULL : cdir.last},
                              {"--save's best.ckpt", o.no_save ? NULL : cdir.best}};
    for (int i = 0; i < 3 && root && ok; i++) {
        if (!outs[i][1]) continue;
        for (int k = 0; k < 5 + i && ok; k++) {
            const char *const *u = k < 5 ? uses[k] : outs[k - 5];
            if (u[1] && u[1][0] && same_file(outs[i][1], u[1])) {
                snprintf(err, sizeof err, "%s %s: the same file as %s %s (every output needs a file of its own)",
                         outs[i][0], outs[i][1], u[0], u[1]);
                ok = 0;
                refusal = 1;
            }
        }
    }
    if (root && ok && o.log) ok = (logf = open_output("--log", o.log, o.overwrite, continued, 0, err, sizeof err)) != NULL;
    if (root && ok && o.trace)
        ok = (tracef = open_output("--trace", o.trace, o.overwrite, continued, 1, err, sizeof err)) != NULL;
    if (root && ok && o.metrics)
        ok = (metf = open_output("--metrics", o.metrics, o.overwrite, continued, 1, err, sizeof err)) != NULL;
    /* A resumed run: best.ckpt must be the best model last.ckpt records
     * (after a crash it may be missing, or from a later epoch). */
    if (root && ok && have_ck && !o.no_save) {
        ok = ckpt_dir_sync_best(&cdir, &ck, repaired, sizeof repaired, err, sizeof err) == 0;
        if (!ok) failed = "--save: ";
    }
    if (!all_ok(ok)) {
        /* Nothing trained, nothing saved: every rank leaves cleanly. */
        refusal = from_root(refusal);
        if (root) fprintf(stderr, "tagtrain: %s%s\n", failed, err);
        if (logf) fclose(logf);
        if (metf) fclose(metf);
        if (tracef) fclose(tracef);
        if (root) ckpt_dir_close(&cdir);
        devstep_close(ds);
        dp_free(&dp);
        ck_comm_destroy(comm);
        return finish(refusal ? 2 : 1);
    }
    if (have_ck) ckpt_free(&ck);
    if (o.trace) dp_trace_start(&dp);
    if (o.trace) zero.trace = &dp.trace;   /* --zero: its two halves and the step between them */
    if (zero.stage == 2) {   /* --zero 2: backward's finished buckets reduce-scattered, not all-reduced */
        dp.on_ready = zero_bucket_ready;
        dp.on_ready_ctx = &zero;
        dp.on_ready_chunk = zero.bucket;
    }

    const size_t dense_bytes = model.nparams * sizeof(float);
    const char *ar_mode = zero.stage == 2 ? "zero2" : zero.stage ? "zero1" : o.sparse_grads ? "sparse"
                          : dp.nbuckets ? "bucketed" : "dense";
    /* What one rank holds between steps: the parameters whole, the gradients
     * whole (--zero 2: its shard), the optimizer's m and v for its shard (all
     * of them when replicated). */
    const size_t state_bytes = zero_state_bytes(&zero), state_full = zero_replicated_state_bytes(&zero);
    const size_t grad_bytes = zero_grad_bytes(&zero);
    const double nnz_per_row = ntr ? (double)Xtr.ptr[ntr] / (double)ntr : 0.0;   /* banner and log */
    if (root && !o.quiet) {
        printf("tagtrain: %d rank%s, algo %s%s on the %s transport, %zu train / %zu val", p, p > 1 ? "s" : "",
               algo->name, algo_auto ? " (auto)" : "", ck_comm_transport_name(gcomm), ntr, nva);
        if (cv) printf(" rows (fold %d of %d; holdout not read)", tc->fold + 1, tc->folds);
        else printf(" / %zu holdout rows", hold.n);
        printf(", %d features, model %d", tc->feat_dim, tc->feat_dim);
        for (int i = 0; i < tc->model.nhidden; i++) printf("-%d", tc->model.hidden[i]);
        printf("-%d (%zu params), batch %d x accum %d, %s lr %g\n", MLP_CLASSES, model.nparams, tc->batch, tc->accum,
               opt_kind_name(tc->opt.kind), tc->opt.lr);
        if (zero.stage == 1)
            printf("  zero 1: gradients reduce-scattered (%s), this rank's block of %zu parameters stepped, "
                   "parameters all-gathered (%s); %.2f MB each way per step\n", zero.rs->name, zero.len, zero.ag->name,
                   dense_bytes / 1e6);
        else if (zero.stage == 2)
            printf("  zero 2: gradients reduce-scattered (%s) in %d bucket%s of %.2f MB as backward finishes them, "
                   "this rank's shard of %zu parameters stepped, parameters all-gathered (%s); %.2f MB each way per "
                   "step; during backward, besides the shard: the gradient pages backward writes and one bucket\n",
                   zero.rs->name, zero.nbuckets, zero.nbuckets == 1 ? "" : "s", zero.bucket * sizeof(float) / 1e6,
                   zero.len, zero.ag->name, dense_bytes / 1e6);
        else if (p == 1) printf("  all-reduce: none (1 rank)\n");
        else if (o.sparse_grads)
            printf("  all-reduce: sparse (--sparse-grads): the touched rows of the input layer and the rest, "
                   "up to %.2f MB per step\n", dense_bytes / 1e6);
        else
            printf("  all-reduce: %s, %.2f MB per step (the whole gradient buffer)%s\n", ar_mode, dense_bytes / 1e6,
                   dp.nbuckets ? ", in buckets during backward" : "");
        printf("  memory per rank: parameters %.2f MB, gradients %.2f MB, optimizer state %.2f MB", dense_bytes / 1e6,
               grad_bytes / 1e6, state_bytes / 1e6);
        if (zero.stage == 1) printf(" (replicated: %.2f MB)", state_full / 1e6);
        if (zero.stage == 2)
            printf(" (replicated: gradients %.2f MB, optimizer state %.2f MB)", dense_bytes / 1e6, state_full / 1e6);
        printf("\n  data: %s%s%s (%.0f non-zero features per train row)\n", path_data, cv ? "" : ", ", path_hold,
               nnz_per_row);
        if (ds) printf("  device: cuda (parameters, gradients and optimizer state in GPU memory)%s%s\n",
                       devstep_note(ds)[0] ? "; " : "", devstep_note(ds));
        if (have_ck) printf("  resumed from %s after epoch %d\n", o.resume, start_epoch);
        if (note[0]) printf("  %s\n", note);
        if (other_file)
            printf("  note: this run replaces the checkpoints of another run (its %s differs) in %s at its first "
                   "save: the default --save holds the latest run; --save DIR keeps a run's own\n", other_option,
                   cdir.dir);
        if (repaired[0]) printf("  repaired %s: %s; rewritten from the training state\n", cdir.best, repaired);
        fflush(stdout);
    }
    if (logf) {
        ck_json j;
        log_record(&j, logf, "run");
        ck_json_str(&j, "program", "tagtrain");
        ck_json_int(&j, "ranks", p);
        ck_json_str(&j, "algo", algo->name);
        ck_json_str(&j, "transport", ck_comm_transport_name(gcomm));
        ck_json_str(&j, "allreduce", ar_mode);
        ck_json_str(&j, "device", ds ? "cuda" : "cpu");
        ck_json_int(&j, "params", (long long)model.nparams);
        ck_json_int(&j, "gradient_bytes", (long long)dense_bytes);
        ck_json_int(&j, "zero", zero.stage);
        if (zero.stage) {
            ck_json_str(&j, "rs_algo", zero.rs->name);
            ck_json_str(&j, "ag_algo", zero.ag->name);
        }
        ck_json_int(&j, "param_bytes_per_rank", (long long)dense_bytes);
        ck_json_int(&j, "grad_bytes_per_rank", (long long)grad_bytes);
        if (zero.stage == 2) {
            ck_json_int(&j, "grad_buckets", zero.nbuckets);
            ck_json_int(&j, "grad_bucket_bytes", (long long)(zero.bucket * sizeof(float)));
        }
        ck_json_int(&j, "optim_state_bytes_per_rank", (long long)state_bytes);
        ck_json_int(&j, "optim_state_bytes_replicated", (long long)state_full);
        ck_json_int(&j, "train_rows", (long long)ntr);
        ck_json_int(&j, "val_rows", (long long)nva);
        ck_json_num(&j, "nnz_per_row", nnz_per_row);
        ck_json_int(&j, "batch", tc->batch);
        ck_json_int(&j, "accum", tc->accum);
        ck_json_int(&j, "epochs", tc->epochs);
        ck_json_int(&j, "seed", (long long)tc->seed);
        if (cv) { ck_json_int(&j, "folds", tc->folds); ck_json_int(&j, "fold", tc->fold + 1); }
        ck_json_end(&j);
    }

    /* ---- training */
    double train_time = 0.0, samples_done = 0.0, t_compute = 0.0, t_comm = 0.0, bytes_total = 0.0;
    /* The epochs after the first: the first of a run pays the warm-up (page
     * faults, and on a GPU the CUDA context's lazy module loading, cuBLAS's
     * first calls, the IPC mappings: 0.21 s of 0.23 on an H100), so the
     * steady rate is what benchmarks compare, as nccl-tests leaves out its
     * warm-up iterations. */
    double steady_time = 0.0, steady_samples = 0.0;
    int64_t steps_done = 0;
    int last_epoch = tc->epochs, best_dirty = 0, status = 0, last_saved = start_epoch;
    if (o.stop_after && start_epoch + o.stop_after < last_epoch) last_epoch = start_epoch + o.stop_after;
    metrics val = {0};
    double best_f1 = 0.0;
    /* Test hook (tests/trainer/cli.sh): TAGTRAIN_TEST_NAN=E makes every
     * rank's parameters NaN before epoch E, as a diverging run would;
     * TAGTRAIN_TEST_NAN=E:inf makes epoch E's train loss +inf instead (the
     * loss of a probability that underflowed to 0); TAGTRAIN_TEST_NAN=E:end
     * makes a parameter NaN after epoch E's last step, as a last update that
     * overflowed would: the train loss, measured before it, stays finite. */
    const char *nan_hook = getenv("TAGTRAIN_TEST_NAN");
    const int nan_epoch = nan_hook ? atoi(nan_hook) : 0;
    const int inf_hook = nan_hook && strstr(nan_hook, ":inf") != NULL;
    const int end_hook = nan_hook && strstr(nan_hook, ":end") != NULL;
    for (int epoch = start_epoch; epoch < last_epoch && !status; epoch++) {
        if (epoch + 1 == nan_epoch && !inf_hook && !end_hook) {
            model.params[model.nparams - 1] = NAN;
            if (ds && devstep_upload(ds, model.params, opt.m, opt.v, err, sizeof err)) fail_abort("device", err);
        }
        size_t *order = NULL;
        size_t n_order = dp_epoch_order(ntr, p, tc->seed, epoch, &order);
        if (!order) fail_abort("epoch order", "out of memory");
        rng_t drop = rng_stream(tc->seed, RNG_DROPOUT, (uint64_t)rank, (uint64_t)epoch);
        double loss_cnt[2] = {0, 0};
        char phase[64];
        snprintf(phase, sizeof phase, "train (epoch %d)", epoch + 1);
        enter_phase(phase);
        ck_watch_barrier(MPI_COMM_WORLD, "the start of the epoch");   /* epoch timings start together */
        double te0 = ck_now(), comm0 = t_comm, comp0 = t_compute;
        int64_t step_in_epoch = 0;
        for (size_t pos = 0; pos < n_order; pos += per_step, step_in_epoch++) {
            /* One optimizer step over the global samples order[pos .. pos+len). */
            const size_t len = n_order - pos < per_step ? n_order - pos : per_step;
            const float lr = opt_lr_at(&opt.cfg, opt.t);
            const double t0 = ck_now();

            /* 1. forward + backward, micro-batch by micro-batch: this rank's
             *    share (dp_shard) of each, gradients SUMMED into model.grads. */
            if (ds) {   /* --device cuda: the same on the GPU */
                if (devstep_forward_backward(ds, &dp, order, pos, len, tc->batch, Xtr.y, rows, labels, &drop, loss_cnt,
                                             err, sizeof err))
                    fail_abort("training step", err);
            } else for (size_t mb = 0; mb < len; mb += (size_t)tc->batch) {
                const size_t mlen = len - mb < (size_t)tc->batch ? len - mb : (size_t)tc->batch;
                const int last_micro = mb + mlen == len;
                const int b = dp_shard(&dp, order, pos + mb, mlen, rows);
                for (int r = 0; r < b; r++) labels[r] = Xtr.y[rows[r]];
                loss_cnt[0] += mlp_forward(&model, &xtr, rows, labels, b, 1, &drop);
                loss_cnt[1] += b;
                /* The bucket hook launches all-reduces (--zero 2: runs reduce-scatters) of finished
                 * gradient slices during the last backward. */
                dp_backward(&dp, labels, b, last_micro);
                sim_charge(6.0 * (double)b * (double)model.nparams);
            }
            const double t1 = ck_now();

            double t2, t3;
            if (zero.stage) {
                /* 2+3. --zero: reduce-scatter (--zero 2: its buckets already, in backward), this
                 *      rank's shard stepped, all-gather. */
                double cs = 0;
                if ((rc = zero_step(&zero, &opt, model.params, model.grads, 1.0f / (float)len, &cs, err, sizeof err)))
                    fail_abort("training step", err);
                sim_charge(10.0 * (double)zero.len);
                t3 = ck_now();
                t2 = t1 + cs;   /* the collectives' time (the hook's included) as comm, the rest as compute */
                dp.last_bytes = p > 1 ? dense_bytes : 0;   /* the buffer each half covers */
            } else if (ds) {
                /* 2+3. --device cuda: the device gradient buffer all-reduced, the
                 * optimizer on the GPU (queued: its time shows in the next step's compute). */
                if (devstep_allreduce(ds, &dp.last_bytes, err, sizeof err)) fail_abort("training step", err);
                t2 = ck_now();
                if (devstep_update(ds, &opt, 1.0f / (float)len, err, sizeof err)) fail_abort("training step", err);
                t3 = ck_now();
            } else {
                /* 2. all-reduce: every rank's buffer becomes the SUM over all ranks. */
                rc = dp_allreduce_grads(&dp, &xtr, order + pos, len, err, sizeof err);
                if (rc) fail_abort("training step", err);
                t2 = ck_now();

                /* 3. optimizer: the mean gradient is the sum / samples in the step. */
                optimizer_step(&opt, model.params, model.grads, 1.0f / (float)len);
                sim_charge(10.0 * (double)model.nparams);
                t3 = ck_now();
            }

            t_compute += (t1 - t0) + (t3 - t2);
            t_comm += t2 - t1;
            bytes_total += (double)dp.last_bytes;
            steps_done++;
            if (logf) {
                ck_json j;
                log_record(&j, logf, "step");
                ck_json_int(&j, "epoch", epoch + 1);
                ck_json_int(&j, "step", step_in_epoch);
                ck_json_int(&j, "global_step", opt.t);
                ck_json_int(&j, "samples", (long long)len);
                ck_json_num(&j, "lr", lr);
                ck_json_num(&j, "compute_s", (t1 - t0) + (t3 - t2));
                ck_json_num(&j, "comm_s", t2 - t1);
                ck_json_int(&j, "allreduce_bytes", (long long)dp.last_bytes);
                if (zero.stage) ck_json_int(&j, "sent_bytes", (long long)zero.last_bytes);
                ck_json_end(&j);
            }
        }
        free(order);
        double te = ck_now() - te0;
        ck_watch_allreduce(MPI_IN_PLACE, &te, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, "the epoch's time");
        /* --device cuda: the host model and optimizer take the device's state
         * (evaluation, --check-sync and checkpoints read them). */
        if (ds && devstep_download(ds, model.params, opt.m, opt.v, err, sizeof err)) fail_abort("device", err);
        if (epoch + 1 == nan_epoch && end_hook) model.params[model.nparams - 1] = NAN;
        double tm[2] = {t_comm - comm0, t_compute - comp0};
        if (dp_sum_doubles(&dp, loss_cnt, 2) || dp_sum_doubles(&dp, tm, 2)) fail_abort("epoch sums", "MPI failed");
        train_time += te;
        samples_done += (double)n_order;
        if (epoch > start_epoch) { steady_time += te; steady_samples += (double)n_order; }
        ck_fault_point("ckpt/epoch", rank);

        if (o.inject_desync == epoch + 1 && rank == 1) model.params[0] += 1e-3f;
        if (o.check_sync) {
            /* Sharded optimizer state differs from rank to rank by design. */
            rc = dp_check_sync(&dp, model.params, zero.stage ? NULL : opt.m, zero.stage ? NULL : opt.v, model.nparams,
                               err, sizeof err);
            if (rc) {
                if (root) fprintf(stderr, "tagtrain: --check-sync after epoch %d: %s\n", epoch + 1, err);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        /* --zero 1: the whole optimizer state on rank 0 for the save below
         * (collective, so decided here on every rank alike). */
        const int saving = !o.no_save && ((epoch + 1) % o.save_every == 0 || epoch + 1 == last_epoch);
        if (zero.stage && saving && zero_gather_state(&zero, &opt, full_m, full_v))
            fail_abort("checkpoint", "gathering the optimizer state failed");
        /* Rank 0 validates, decides, saves; every rank follows its verdict. */
        snprintf(phase, sizeof phase, "eval (epoch %d)", epoch + 1);
        enter_phase(phase);
        if (root) {
            const double train_loss = epoch + 1 == nan_epoch && inf_hook ? INFINITY
                                      : loss_cnt[1] > 0 ? loss_cnt[0] / loss_cnt[1] : 0.0;
            eval_model(&model, &xva, Xva.y, nva, rows, &val);
            const int improved = nva ? val.loss < best_val : 1;   /* no val rows: the last epoch is the best */
            /* The losses are measured before the epoch's last update (train)
             * or only with validation rows (val): the parameters themselves
             * are checked too, or a last step that overflowed would become the
             * best model and the saved state. */
            size_t bad_param = 0;
            while (bad_param < model.nparams && isfinite(model.params[bad_param])) bad_param++;
            if (!isfinite(train_loss) || (nva && !isfinite(val.loss)) || bad_param < model.nparams) {
                char saved[4400] = "", what[96];
                if (!o.no_save && last_saved)
                    snprintf(saved, sizeof saved, " (%s is from epoch %d)", cdir.last, last_saved);
                if (!isfinite(train_loss)) snprintf(what, sizeof what, "the train loss is %g", train_loss);
                else if (nva && !isfinite(val.loss)) snprintf(what, sizeof what, "the val loss is %g", val.loss);
                else snprintf(what, sizeof what, "parameter %zu is %g", bad_param, model.params[bad_param]);
                fprintf(stderr, "tagtrain: epoch %d: %s: training diverged (try a lower --lr); "
                        "stopping, and nothing of this epoch is saved%s\n", epoch + 1, what, saved);
                status = 4;
            }
            if (!status && improved) {
                best_val = nva ? val.loss : INFINITY;
                best_epoch = epoch + 1;
                best_f1 = val.w_f1;
                memcpy(best, model.params, model.nparams * sizeof(float));
                best_dirty = 1;
            }
            double comm_frac = tm[0] + tm[1] > 0 ? tm[0] / (tm[0] + tm[1]) : 0.0;
            if (!o.quiet && !status) {
                printf("epoch %3d/%d  train loss %.4f", epoch + 1, tc->epochs, train_loss);
                if (nva) printf("  val loss %.4f  val acc %.4f  val F1 %.4f", val.loss, val.accuracy, val.w_f1);
                printf("  %.0f samples/s  comm %.1f%%%s%s\n", (double)n_order / te, 100.0 * comm_frac,
                       improved && nva ? "  *best" : "", o.check_sync ? "  [sync ok]" : "");
                fflush(stdout);
            }
            if (logf && !status) {
                ck_json j;
                log_record(&j, logf, "epoch");
                ck_json_int(&j, "epoch", epoch + 1);
                ck_json_num(&j, "train_loss", train_loss);
                ck_json_num(&j, "val_loss", nva ? val.loss : NAN);
                ck_json_num(&j, "val_accuracy", nva ? val.accuracy : NAN);
                ck_json_num(&j, "val_f1", nva ? val.w_f1 : NAN);
                ck_json_num(&j, "time_s", te);
                ck_json_int(&j, "samples", (long long)n_order);
                ck_json_num(&j, "samples_per_s", (double)n_order / te);
                ck_json_num(&j, "compute_s", tm[1] / p);
                ck_json_num(&j, "comm_s", tm[0] / p);
                ck_json_num(&j, "comm_fraction", comm_frac);
                ck_json_end(&j);
                if (!output_ok(logf, "--log", o.log, err, sizeof err)) {
                    fprintf(stderr, "tagtrain: %s\n", err);
                    status = 1;
                }
            }
            if (!status && saving) {
                snprintf(phase, sizeof phase, "save (epoch %d)", epoch + 1);
                enter_phase(phase);
                checkpoint st = {.kind = CKPT_STATE, .cfg = *tc, .epochs_done = epoch + 1, .opt_steps = opt.t,
                                 .best_val_loss = best_val, .best_epoch = best_epoch, .nparams = model.nparams,
                                 .params = model.params, .m = zero.stage ? full_m : opt.m,
                                 .v = zero.stage ? full_v : opt.v, .best = best, .idf = feat.idf};
                const int remade = cdir.remade;
                if (ckpt_dir_save(&cdir, &st, best_dirty, err, sizeof err)) {
                    fprintf(stderr, "tagtrain: checkpoint: %s\n", err);
                    status = 1;
                }
                if (cdir.remade > remade)
                    fprintf(stderr, "tagtrain: warning: %s was removed during the run: made again for epoch %d's "
                            "checkpoints\n", cdir.dir, epoch + 1);
                last_saved = epoch + 1;
                best_dirty = 0;
            }
        }
        status = from_root(status);
    }

    /* ---- summary, and the best model on the holdout (or the fold) */
    enter_phase("holdout and report");
    double comm_all[2] = {t_comm, t_compute};
    dp_sum_doubles(&dp, comm_all, 2);
    /* Peak resident memory, the largest rank's: what --zero 1 saves shows
     * here; and resident memory now, after the last step: what a rank holds
     * between steps, in all and of the gradients (--zero 2: the shard, not
     * the pages backward wrote during the step). */
    struct rusage ru;
    double rss[3] = {getrusage(RUSAGE_SELF, &ru) ? 0.0 : (double)ru.ru_maxrss * 1024.0, 0.0,
                     (double)zero_grad_resident_bytes(&zero)};
    FILE *statm = fopen("/proc/self/statm", "r");
    long pages_total, pages_resident;
    if (statm && fscanf(statm, "%ld %ld", &pages_total, &pages_resident) == 2)
        rss[1] = (double)pages_resident * (double)sysconf(_SC_PAGESIZE);
    if (statm) fclose(statm);
    ck_watch_allreduce(MPI_IN_PLACE, rss, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, "the resident memory");
    const double peak_rss = rss[0];
    if (root && !status) {
        double comm_frac = comm_all[0] + comm_all[1] > 0 ? comm_all[0] / (comm_all[0] + comm_all[1]) : 0.0;
        const double sps = train_time > 0 ? samples_done / train_time : 0.0;
        const double steady_sps = steady_time > 0 ? steady_samples / steady_time : sps;   /* one epoch: all */
        const int trained = last_epoch - start_epoch;
        metrics ho = {0};
        memcpy(model.params, best, model.nparams * sizeof(float));
        if (cv) {
            printf("cross-validation fold %d/%d: best epoch %d (val loss %.4f): val weighted F1 %.4f; last epoch "
                   "val F1 %.4f\n", tc->fold + 1, tc->folds, best_epoch, best_val, best_f1, val.w_f1);
        } else {
            eval_model(&model, &xho, Xho.y, Xho.n, rows, &ho);
            if (!o.quiet) {
                if (nva) printf("\nholdout (%zu rows, best model: epoch %d, val loss %.4f):\n", hold.n, best_epoch, best_val);
                else printf("\nholdout (%zu rows, the model of the last epoch, %d: no validation rows):\n", hold.n,
                            best_epoch);
                metrics_print(stdout, &ho, mwml_tags);
            }
        }
        printf("trained %d epoch%s in %.2f s (%.2f s total): %.0f samples/s", trained, trained == 1 ? "" : "s",
               train_time, ck_now() - t_start, sps);
        if (trained > 1) printf(" (%.0f after the first epoch)", steady_sps);
        printf(", comm fraction %.3f", comm_frac);
        if (!cv) printf(", holdout weighted F1 %.4f", ho.w_f1);
        printf("\npeak resident memory per rank: %.1f MB (the largest rank's); after training %.1f MB, of it "
               "gradients %.2f MB\n", peak_rss / 1e6, rss[1] / 1e6, rss[2] / 1e6);
        if (!o.no_save && trained > 0)
            printf("checkpoints: %s (%s), %s\n", cdir.best, nva ? "best by val loss" : "the last epoch", cdir.last);
        if (logf) {
            ck_json j;
            log_record(&j, logf, "summary");
            ck_json_int(&j, "ranks", p);
            ck_json_str(&j, "algo", algo->name);
            ck_json_str(&j, "transport", ck_comm_transport_name(gcomm));
            ck_json_str(&j, "allreduce", ar_mode);
            ck_json_int(&j, "epochs", trained);
            ck_json_num(&j, "train_time_s", train_time);
            ck_json_num(&j, "samples_per_s", sps);
            ck_json_num(&j, "comm_fraction", comm_frac);
            ck_json_int(&j, "steps", steps_done);
            ck_json_num(&j, "compute_per_step_s", steps_done ? comm_all[1] / p / (double)steps_done : 0.0);
            ck_json_num(&j, "comm_per_step_s", steps_done ? comm_all[0] / p / (double)steps_done : 0.0);
            ck_json_num(&j, "allreduce_bytes_per_step", steps_done ? bytes_total / (double)steps_done : 0.0);
            ck_json_num(&j, "steady_samples_per_s", steady_sps);
            ck_json_num(&j, "peak_rss_bytes", peak_rss);
            ck_json_num(&j, "rss_after_training_bytes", rss[1]);
            ck_json_num(&j, "grad_resident_bytes", rss[2]);
            ck_json_int(&j, "best_epoch", best_epoch);
            ck_json_num(&j, "best_val_loss", best_val);
            ck_json_num(&j, "best_val_f1", nva ? best_f1 : NAN);
            ck_json_num(&j, "last_val_f1", nva ? val.w_f1 : NAN);
            if (!cv) {
                ck_json_num(&j, "holdout_f1", ho.w_f1);
                ck_json_num(&j, "holdout_accuracy", ho.accuracy);
            }
            ck_json_end(&j);
        }
        if (metf && output_begin(metf)) {
            fprintf(stderr, "tagtrain: --metrics %s: cannot empty it: %s\n", o.metrics, strerror(errno));
            status = 1;
        } else if (metf) {
            ck_json j;
            ck_json_open(&j, metf, CK_JSON_COMPACT);
            ck_json_str(&j, "program", "tagtrain");
            ck_json_str(&j, "set", "holdout");
            ck_json_int(&j, "best_epoch", best_epoch);
            metrics_json(&j, &ho, mwml_tags);
            ck_json_end(&j);
            if (!output_ok(metf, "--metrics", o.metrics, err, sizeof err)) {
                fprintf(stderr, "tagtrain: %s\n", err);
                status = 1;
            }
        }
        /* The report on stdout is a result too: a full disk or a closed pipe is an error. */
        if (!output_ok(stdout, "stdout", "(the report)", err, sizeof err) && !status) {
            fprintf(stderr, "tagtrain: %s\n", err);
            status = 1;
        }
    }
    if (metf && fclose(metf) && !status) {
        fprintf(stderr, "tagtrain: --metrics %s: write failed: %s\n", o.metrics, strerror(errno));
        status = 1;
    }
    if (logf) {
        if (!output_ok(logf, "--log", o.log, err, sizeof err) && !status) {
            fprintf(stderr, "tagtrain: %s\n", err);
            status = 1;
        }
        if (fclose(logf) && !status) {
            fprintf(stderr, "tagtrain: --log %s: write failed: %s\n", o.log, strerror(errno));
            status = 1;
        }
    }
    if (o.trace) {   /* every rank's timeline, gathered on rank 0 */
        char title[200], how[80];
        if (dp.nbuckets) snprintf(how, sizeof how, "%d buckets of %g MiB overlapping backward", dp.nbuckets, o.bucket_mb);
        else snprintf(how, sizeof how, "one all-reduce%s after backward", o.sparse_grads ? " of the touched rows" : "");
        if (zero.stage)
            snprintf(title, sizeof title, "tagtrain --zero %d --rs-algo %s --ag-algo %s, p = %d", zero.stage, zero.rs->name,
                     zero.ag->name, p);
        else snprintf(title, sizeof title, "tagtrain --algo %s, p = %d, %s", algo->name, p, how);
        if (tracef && output_begin(tracef)) {
            fprintf(stderr, "tagtrain: --trace %s: cannot empty it: %s\n", o.trace, strerror(errno));
            if (!status) status = 1;
        }
        if (dp_trace_write(&dp, tracef, title, err, sizeof err) && root && !status) {
            fprintf(stderr, "tagtrain: --trace %s: %s\n", o.trace, err);
            status = 1;
        }
        if (tracef) {
            const int wrote = output_ok(tracef, "--trace", o.trace, err, sizeof err);
            if ((fclose(tracef) || !wrote) && !status) {
                fprintf(stderr, "tagtrain: --trace %s: write failed\n", o.trace);
                status = 1;
            }
        }
    }
    status = from_root(status);

    free(best);
    free(rows);
    free(labels);
    opt_free(&opt);
    free(full_m);
    free(full_v);
    devstep_close(ds);
    zero_free(&zero);
    dp_free(&dp);
    mlp_free(&model);
    ck_comm_destroy(comm);
    feat_csr_free(&Xtr); feat_csr_free(&Xva); feat_csr_free(&Xho);
    feat_free(&feat);
    free(tr_rows); free(va_rows);
    mwml_free(&data); mwml_free(&hold);
    if (root) ckpt_dir_close(&cdir);
    return finish(status);
}
