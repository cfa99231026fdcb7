/*
 * tagtrain — data-parallel training of the Made With ML tagging MLP, with the
 * gradient all-reduce done by any collkit registry algorithm (--algo).
 *
 *   mpirun -np 2 build/bin/tagtrain                      defaults, data found automatically
 *   mpirun -np 4 build/bin/tagtrain --algo ring --epochs 10 --bucket-mb 1
 *   build/bin/tagtrain --algo list
 *
 * What happens (see trainer/README.md for the whole story):
 *   every rank loads dataset.csv and holdout.csv, splits dataset.csv into
 *   train/val (stratified, seeded), fits the TF-IDF featurizer on train and
 *   featurises all three; rank 0 initialises the parameters and broadcasts
 *   them; each epoch every rank trains on its shard (dp.c), rank 0 evaluates on
 *   val and prints one line; every --save-every epochs (and after the last)
 *   it saves last.ckpt and, when val loss improved since, best.ckpt; at the
 *   end rank 0 evaluates the best model on holdout.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cblas.h>
#include "collkit.h"
#include "collkit_util.h"
#include "tagtrain.h"
#include "mwml.h"
#include "features.h"
#include "model.h"
#include "optim.h"
#include "dp.h"
#include "eval.h"
#include "ckpt.h"

/* Defaults: tuned on the real data (trainer/README.md has the figures). */
#define DEF_FEATURES  65536
#define DEF_HIDDEN    "64"
#define DEF_DROPOUT   0.5f
#define DEF_SMOOTH    0.0f
#define DEF_LR        1e-2f
#define DEF_WD        0.2f
#define DEF_EPOCHS    25
#define DEF_BATCH     32
#define DEF_SEED      1234
#define DEF_SPLIT_SEED 1234
#define DEF_CHAR_MIN  2
#define DEF_CHAR_MAX  5
#define DEF_SUBLINEAR 1
#define DEF_TITLE_WEIGHT 1
#define DEF_VAL_FRAC  0.2
#define DEF_SAVE_DIR  "runs/latest"
/* A checkpoint of the default model is 48 MiB (parameters, m, v), written
 * and fsynced: every epoch would cost more than the training itself. */
#define DEF_SAVE_EVERY 5

typedef struct {
    train_config tc;
    const char *algo_name, *data, *holdout, *save_dir, *resume, *metrics, *log;
    double bucket_mb;
    int check_sync, threads, stop_after, inject_desync, no_save, quiet, dense_allreduce, overlap;
    int save_every;
    int set_epochs;   /* --epochs given explicitly (matters on --resume) */
} options;

static int g_rank;

static void usage(FILE *f)
{
    fprintf(f,
"usage: mpirun -np P tagtrain [options]\n"
"Train the Made With ML tagger (title + description -> tag) data-parallel over\n"
"collkit; the gradient all-reduce uses the algorithm given by --algo.\n"
"\n"
"data\n"
"  --data FILE          dataset.csv (default: $COLLKIT_DATA, datasets/madewithml/,\n"
"                       ../shared/datasets/madewithml/)\n"
"  --holdout FILE       holdout.csv (same lookup)\n"
"  --val-frac F         share of dataset.csv held out for validation (%.2f)\n"
"  --features DIM       hash buckets of the TF-IDF features (%d)\n"
"  --char-ngrams A,B|off  also character A..B-grams of each word (%d,%d)\n"
"  --sublinear-tf 0|1   tf = 1 + ln(count) (%d)\n"
"  --title-weight N     count the title's n-grams N times (%d)\n"
"  --split-seed S       seed of the stratified train/val split (%d)\n"
"model and optimisation\n"
"  --hidden W1,W2,..    hidden layer widths (%s)\n"
"  --dropout P          dropout on hidden activations, 0 <= P < 1 (%.2f)\n"
"  --label-smoothing E  train against (1-E) onehot + E/4, 0 <= E < 1 (%.2f)\n"
"  --optimizer adam|sgd (adam)\n"
"  --lr LR              peak learning rate (%g)\n"
"  --momentum M         SGD momentum / Adam beta1 (0.9)\n"
"  --weight-decay W     decoupled weight decay, AdamW (%g; 0 for sgd)\n"
"  --schedule cosine|const|step   LR schedule after warmup (cosine)\n"
"  --warmup STEPS       linear warmup steps (10)\n"
"  --epochs N           (%d)\n"
"  --batch B            GLOBAL batch per micro-step, split over the ranks (%d)\n"
"  --accum K            micro-batches per optimizer step (1)\n"
"  --seed S             seeds the init, shuffles and dropout (%d)\n"
"data parallelism\n"
"  --algo NAME          all-reduce algorithm (ring); --algo list shows them\n"
"  --bucket-mb X        DDP-style buckets of X MiB all-reduced during backward (off)\n"
"  --check-sync         after every epoch compare a hash of the parameters and\n"
"                       optimizer state across ranks; stop loudly if they differ\n"
"  --threads N          OpenBLAS threads per rank (1: the default model's matrices\n"
"                       are too small for more threads to pay)\n"
"  --dense-allreduce    all-reduce the whole gradient buffer; by default only the\n"
"                       input-layer rows the step's samples touch are packed\n"
"                       and all-reduced (the same sums; see trainer/README.md)\n"
"  --overlap            run the compact all-reduce on the async engine while the\n"
"                       optimizer updates the rows it does not carry\n"
"output\n"
"  --save DIR           write DIR/last.ckpt and DIR/best.ckpt (the state at the best\n"
"                       val loss so far) (%s); --no-save: write nothing\n"
"  --save-every N       write them every N epochs and after the last one (%d)\n"
"  --resume FILE        continue from a checkpoint (its configuration is used;\n"
"                       --epochs may extend the run)\n"
"  --stop-after N       stop after N epochs, as if interrupted (resume tests)\n"
"  --metrics FILE       holdout metrics as JSON\n"
"  --log FILE           JSON lines: one record per step and per epoch\n"
"  --quiet              only the final summary\n"
"  --help\n",
            DEF_VAL_FRAC, DEF_FEATURES, DEF_CHAR_MIN, DEF_CHAR_MAX, DEF_SUBLINEAR, DEF_TITLE_WEIGHT, DEF_SPLIT_SEED,
            DEF_HIDDEN, DEF_DROPOUT, DEF_SMOOTH, DEF_LR, DEF_WD, DEF_EPOCHS, DEF_BATCH, DEF_SEED,
            DEF_SAVE_DIR, DEF_SAVE_EVERY);
}

/* Argument errors: every rank parses the same argv, rank 0 says it once. */
static int bad_arg(const char *fmt, const char *a, const char *b)
{
    if (g_rank == 0) {
        fprintf(stderr, "tagtrain: ");
        fprintf(stderr, fmt, a, b);
        fprintf(stderr, "\n(tagtrain --help lists the options)\n");
    }
    return 2;
}

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
    char err[128];
    long long v;
    if (ck_parse_int(s, lo, hi, &v, err, sizeof err)) {
        char got[160];
        snprintf(got, sizeof got, "'%s': %s", s, err);
        bad_arg("%s %s", opt, got);
        return -1;
    }
    *out = (long)v;
    return 0;
}

static int parse_double(const char *opt, const char *s, double lo, double hi, int hi_open, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < lo || (hi_open ? v >= hi : v > hi)) {
        char range[80];
        snprintf(range, sizeof range, "[%g, %g%s", lo, hi, hi_open ? ")" : "]");
        bad_arg("%s: want a number in %s", opt, range);
        if (g_rank == 0) fprintf(stderr, "  got '%s'\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Returns 0 to run, 1 to exit 0 (help, algo list), 2 on a bad argument. */
static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    train_config *t = &o->tc;
    t->feat_dim = DEF_FEATURES;
    t->model.dropout = DEF_DROPOUT;
    t->model.label_smoothing = DEF_SMOOTH;
    t->opt = (opt_config){.kind = OPT_ADAM, .lr = DEF_LR, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                          .weight_decay = DEF_WD, .sched = SCHED_COSINE, .warmup = 10, .min_frac = 0.0f,
                          .step_every = 0, .step_gamma = 0.5f};
    t->epochs = DEF_EPOCHS;
    t->batch = DEF_BATCH;
    t->accum = 1;
    t->seed = DEF_SEED;
    t->val_frac = DEF_VAL_FRAC;
    t->split_seed = DEF_SPLIT_SEED;
    t->feat = (feat_opts){DEF_CHAR_MIN, DEF_CHAR_MAX, DEF_SUBLINEAR, DEF_TITLE_WEIGHT};
    o->algo_name = "ring";
    o->save_dir = DEF_SAVE_DIR;
    o->save_every = DEF_SAVE_EVERY;
    o->threads = 0;
    o->inject_desync = -1;
    char err[256];
    int set_wd = 0;
    if (mlp_parse_hidden(DEF_HIDDEN, &t->model, err, sizeof err)) return 2;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long l;
        double d;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { if (g_rank == 0) usage(stdout); return 1; }
        if (!strcmp(a, "--check-sync")) { o->check_sync = 1; continue; }
        if (!strcmp(a, "--no-save")) { o->no_save = 1; continue; }
        if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
        if (!strcmp(a, "--dense-allreduce")) { o->dense_allreduce = 1; continue; }
        if (!strcmp(a, "--overlap")) { o->overlap = 1; continue; }
        static const char *const valued[] = {
            "--algo", "--data", "--holdout", "--save", "--resume", "--metrics", "--log", "--hidden", "--features",
            "--dropout", "--optimizer", "--schedule", "--lr", "--momentum", "--weight-decay", "--warmup", "--epochs",
            "--batch", "--accum", "--seed", "--val-frac", "--bucket-mb", "--threads", "--stop-after",
            "--inject-desync", "--char-ngrams", "--sublinear-tf", "--title-weight", "--split-seed", "--label-smoothing", "--save-every", NULL};
        int known = 0;
        for (int k = 0; valued[k]; k++) known |= !strcmp(a, valued[k]);
        if (strncmp(a, "--", 2)) return bad_arg("unexpected argument '%s'%s", a, "");
        if (!known) return bad_arg("unknown option '%s'%s", a, "");
        if (i + 1 >= argc) return bad_arg("%s needs a value%s", a, "");
        const char *v = argv[++i];
        if (!strcmp(a, "--algo")) o->algo_name = v;
        else if (!strcmp(a, "--data")) o->data = v;
        else if (!strcmp(a, "--holdout")) o->holdout = v;
        else if (!strcmp(a, "--save")) o->save_dir = v;
        else if (!strcmp(a, "--resume")) o->resume = v;
        else if (!strcmp(a, "--metrics")) o->metrics = v;
        else if (!strcmp(a, "--log")) o->log = v;
        else if (!strcmp(a, "--hidden")) {
            if (mlp_parse_hidden(v, &t->model, err, sizeof err)) return bad_arg("%s%s", err, "");
        } else if (!strcmp(a, "--features")) {
            if (parse_long(a, v, 1, FEAT_MAX_DIM, &l)) return 2;
            t->feat_dim = (int)l;
        } else if (!strcmp(a, "--char-ngrams")) {
            int lo = 0, hi = 0, used = 0;
            if (strcmp(v, "off") && !(sscanf(v, "%d,%d%n", &lo, &hi, &used) == 2 && !v[used] && lo >= 1 &&
                                      lo <= hi && hi <= FEAT_MAX_CHAR_N))
                return bad_arg("--char-ngrams: want off or MIN,MAX with 1 <= MIN <= MAX <= 16, got '%s'%s", v, "");
            t->feat.char_min = lo;
            t->feat.char_max = hi;
        } else if (!strcmp(a, "--sublinear-tf")) {
            if (parse_long(a, v, 0, 1, &l)) return 2;
            t->feat.sublinear = (int)l;
        } else if (!strcmp(a, "--title-weight")) {
            if (parse_long(a, v, 1, FEAT_MAX_TITLE_WEIGHT, &l)) return 2;
            t->feat.title_weight = (int)l;
        } else if (!strcmp(a, "--split-seed")) {
            if (parse_long(a, v, 0, LONG_MAX, &l)) return 2;
            t->split_seed = (uint64_t)l;
        } else if (!strcmp(a, "--label-smoothing")) {
            if (parse_double(a, v, 0, 1, 1, &d)) return 2;
            t->model.label_smoothing = (float)d;
        } else if (!strcmp(a, "--dropout")) {
            if (parse_double(a, v, 0, 1, 1, &d)) return 2;
            t->model.dropout = (float)d;
        } else if (!strcmp(a, "--optimizer")) {
            if (opt_parse_kind(v, &t->opt.kind)) return bad_arg("--optimizer: want adam or sgd, got '%s'%s", v, "");
        } else if (!strcmp(a, "--schedule")) {
            if (opt_parse_sched(v, &t->opt.sched)) return bad_arg("--schedule: want cosine, const or step, got '%s'%s", v, "");
        } else if (!strcmp(a, "--lr")) {
            if (parse_double(a, v, 0, 100, 0, &d)) return 2;
            t->opt.lr = (float)d;
        } else if (!strcmp(a, "--momentum")) {
            if (parse_double(a, v, 0, 1, 1, &d)) return 2;
            t->opt.beta1 = (float)d;
        } else if (!strcmp(a, "--weight-decay")) {
            if (parse_double(a, v, 0, 1, 0, &d)) return 2;
            t->opt.weight_decay = (float)d;
            set_wd = 1;
        } else if (!strcmp(a, "--warmup")) {
            if (parse_long(a, v, 0, 100000000, &l)) return 2;
            t->opt.warmup = l;
        } else if (!strcmp(a, "--epochs")) {
            if (parse_long(a, v, 1, 1000000, &l)) return 2;
            t->epochs = (int)l;
            o->set_epochs = 1;
        } else if (!strcmp(a, "--batch")) {
            if (parse_long(a, v, 1, 1 << 20, &l)) return 2;
            t->batch = (int)l;
        } else if (!strcmp(a, "--accum")) {
            if (parse_long(a, v, 1, 1 << 16, &l)) return 2;
            t->accum = (int)l;
        } else if (!strcmp(a, "--seed")) {
            if (parse_long(a, v, 0, LONG_MAX, &l)) return 2;
            t->seed = (uint64_t)l;
        } else if (!strcmp(a, "--val-frac")) {
            if (parse_double(a, v, 0.01, 0.9, 0, &d)) return 2;
            t->val_frac = d;
        } else if (!strcmp(a, "--bucket-mb")) {
            if (parse_double(a, v, 0, 1 << 20, 0, &d)) return 2;
            o->bucket_mb = d;
        } else if (!strcmp(a, "--threads")) {
            if (parse_long(a, v, 1, 1024, &l)) return 2;
            o->threads = (int)l;
        } else if (!strcmp(a, "--save-every")) {
            if (parse_long(a, v, 1, 1000000, &l)) return 2;
            o->save_every = (int)l;
        } else if (!strcmp(a, "--stop-after")) {
            if (parse_long(a, v, 1, 1000000, &l)) return 2;
            o->stop_after = (int)l;
        } else if (!strcmp(a, "--inject-desync")) {
            /* For the test of --check-sync: perturb rank 1's parameters after this epoch. */
            if (parse_long(a, v, 1, 1000000, &l)) return 2;
            o->inject_desync = (int)l;
        } else {
            return bad_arg("unknown option '%s'%s", a, "");
        }
    }
    /* The default decay is AdamW's; coupled into SGD it would be far too strong. */
    if (!set_wd && t->opt.kind == OPT_SGD) t->opt.weight_decay = 0.0f;
    if (!strcmp(o->algo_name, "list")) { if (g_rank == 0) ck_algo_print_table(stdout); return 1; }
    /* One algorithm for the gradients: a list (or "all") is refused as too many. */
    const ck_algo *algo;
    int nalgo;
    char aerr[1024];
    if (ck_algo_parse_list(o->algo_name, CK_MEM_HOST, &algo, 1, &nalgo, aerr, sizeof aerr))
        return bad_arg("--algo: %s%s", aerr, "");
    t->model.in_dim = t->feat_dim;
    return 0;
}

/* ------------------------------------------------------------ helpers */

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) { snprintf(err, errlen, "path too long"); return -1; }
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) && errno != EEXIST) {
                snprintf(err, errlen, "cannot create directory %.1000s: %s", buf, strerror(errno));
                return -1;
            }
            struct stat st;
            if (stat(buf, &st) || !S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "%.1000s exists and is not a directory", buf);
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    return 0;
}

/* All ranks agree that every rank succeeded (used after per-rank work that
 * can fail, so a failure on one rank never leaves the others waiting). */
static int all_ok(int ok)
{
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static void fail_abort(const char *what, const char *msg)
{
    fprintf(stderr, "tagtrain: rank %d: %s: %s\n", g_rank, what, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Featurised rows in CSR form: row i's non-zeros are idx[ptr[i] .. ptr[i+1]).
 * A TF-IDF row has tens to hundreds of non-zeros out of tens of thousands of
 * buckets, so this is what the model reads (mlp_forward_sparse). */
typedef struct { size_t *ptr; int *idx; float *val; int *y; size_t n; } matrix;

static int featurise(const featurizer *f, const mwml_data *d, const size_t *rows, size_t n, matrix *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->ptr = malloc((n + 1) * sizeof *out->ptr);
    out->y = malloc((n ? n : 1) * sizeof(int));
    float *dense = malloc((size_t)f->dim * sizeof(float));
    size_t cap = 0, nnz = 0;
    if (!out->ptr || !out->y || !dense) { free(dense); return -1; }
    out->ptr[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t row = rows ? rows[i] : i;
        if (feat_transform_rows(f, d, &row, 1, dense)) { free(dense); return -1; }
        for (int k = 0; k < f->dim; k++) {
            if (dense[k] == 0.0f) continue;
            if (nnz == cap) {
                cap = cap ? 2 * cap : 4096;
                int *ni = realloc(out->idx, cap * sizeof *ni);
                if (ni) out->idx = ni;
                float *nv = realloc(out->val, cap * sizeof *nv);
                if (nv) out->val = nv;
                if (!ni || !nv) { free(dense); return -1; }
            }
            out->idx[nnz] = k;
            out->val[nnz++] = dense[k];
        }
        out->ptr[i + 1] = nnz;
        out->y[i] = d->rows[row].tag;
    }
    free(dense);
    return 0;
}

static void matrix_free(matrix *m) { free(m->ptr); free(m->idx); free(m->val); free(m->y); }

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

    options o;
    int prc = parse_args(argc, argv, &o);
    if (prc) { MPI_Finalize(); return prc == 1 ? 0 : 2; }
    train_config *tc = &o.tc;
#ifdef COLLKIT_SMPI
#define NO_THREADS_WHY " (SimGrid SMPI runs every simulated rank in one thread: no progress thread can run)"
#else
#define NO_THREADS_WHY ""
#endif
    if (o.bucket_mb > 0 && p > 1 && provided < MPI_THREAD_MULTIPLE) {
        if (root) fprintf(stderr, "tagtrain: --bucket-mb needs MPI_THREAD_MULTIPLE, which this MPI does not provide%s\n",
                          NO_THREADS_WHY);
        MPI_Finalize();
        return 2;
    }
#ifdef COLLKIT_SMPI
    if (o.overlap && p > 1 && root)
        fprintf(stderr, "tagtrain: --overlap needs MPI_THREAD_MULTIPLE%s: the all-reduce runs without overlap\n",
                NO_THREADS_WHY);
#endif
    if (o.inject_desync > 0 && p < 2) {
        if (root) fprintf(stderr, "tagtrain: --inject-desync needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    /* ---- resume: the checkpoint's configuration wins */
    char err[MWML_ERRLEN];
    checkpoint ck = {0};
    int have_ck = 0;
    if (o.resume) {
        int ok = ckpt_load(o.resume, &ck, err, sizeof err) == 0;
        if (!all_ok(ok)) {
            if (!ok && root) fprintf(stderr, "tagtrain: --resume: %s\n", err);
            MPI_Finalize();
            return 1;
        }
        have_ck = 1;
        int epochs = o.set_epochs ? tc->epochs : ck.cfg.epochs;
        *tc = ck.cfg;
        tc->epochs = epochs;
        if (ck.epochs_done >= tc->epochs && root)
            fprintf(stderr, "tagtrain: %s has already done %d of %d epochs; nothing to train (raise --epochs)\n",
                    o.resume, ck.epochs_done, tc->epochs);
    }

    /* ---- OpenBLAS threads: one per rank unless asked. The default model's
     * matrices are too small for more to pay, and p ranks share the cores. */
    openblas_set_num_threads(o.threads ? o.threads : 1);

    /* ---- data */
    char path_data[4096], path_hold[4096];
    mwml_data data = {0}, hold = {0};
    int ok = mwml_find(o.data, "dataset.csv", path_data, sizeof path_data, err, sizeof err) == 0 &&
             mwml_load(path_data, &data, err, sizeof err) == 0 &&
             mwml_find(o.holdout, "holdout.csv", path_hold, sizeof path_hold, err, sizeof err) == 0 &&
             mwml_load(path_hold, &hold, err, sizeof err) == 0;
    if (!all_ok(ok)) {
        if (!ok && root) fprintf(stderr, "tagtrain: %s\n", err);
        MPI_Finalize();
        return 1;
    }
    size_t *tr_rows = NULL, *va_rows = NULL, ntr = 0, nva = 0;
    featurizer feat = {0};
    matrix Xtr = {0}, Xva = {0}, Xho = {0};
    ok = stratified_split(&data, tc->val_frac, tc->split_seed, &tr_rows, &ntr, &va_rows, &nva) == 0 && ntr > 0;
    if (ok) ok = have_ck ? feat_load_opts(&feat, tc->feat_dim, &tc->feat, ck.idf) == 0
                         : feat_fit_opts(&feat, tc->feat_dim, &tc->feat, &data, tr_rows, ntr) == 0;
    ok = ok && featurise(&feat, &data, tr_rows, ntr, &Xtr) == 0 && featurise(&feat, &data, va_rows, nva, &Xva) == 0 &&
         featurise(&feat, &hold, NULL, hold.n, &Xho) == 0;
    if (!all_ok(ok)) {
        if (!ok && root) fprintf(stderr, "tagtrain: cannot split or featurise the data (too few rows, or out of memory)\n");
        MPI_Finalize();
        return 1;
    }

    /* ---- communicator, model, optimizer */
    ck_comm *comm = NULL;
    int rc = ck_comm_create(MPI_COMM_WORLD, CK_MEM_HOST, &comm);
    if (rc) fail_abort("ck_comm_create", ck_strerror(rc));
    const ck_algo *algo = ck_algo_find(o.algo_name);
    mlp model;
    int eval_batch = 256, local_max = (tc->batch + p - 1) / p;
    if (mlp_create(&model, &tc->model, local_max > eval_batch ? local_max : eval_batch))
        fail_abort("model", "out of memory");
    dp_ctx dp;
    if (dp_init(&dp, comm, algo, &model, tc->batch, o.bucket_mb, err, sizeof err)) fail_abort("setup", err);
    if (!o.dense_allreduce &&
        dp_enable_compact(&dp, &model, o.overlap && provided >= MPI_THREAD_MULTIPLE, err, sizeof err))
        fail_abort("setup", err);
    size_t *eval_rows = malloc((size_t)model.max_batch * sizeof *eval_rows);
    if (!eval_rows) fail_abort("setup", "out of memory");

    size_t npad = (ntr + (size_t)p - 1) / (size_t)p * (size_t)p;
    size_t per_step = (size_t)tc->batch * (size_t)tc->accum;
    int64_t steps_per_epoch = (int64_t)((npad + per_step - 1) / per_step);
    optimizer opt;
    if (!have_ck) tc->opt.total_steps = steps_per_epoch * tc->epochs;
    else if (o.set_epochs) tc->opt.total_steps = steps_per_epoch * tc->epochs;
    if (opt_create(&opt, &tc->opt, model.nparams)) fail_abort("optimizer", "out of memory");

    int start_epoch = 0;
    double best_val = INFINITY;
    if (have_ck) {
        memcpy(model.params, ck.params, model.nparams * sizeof(float));
        memcpy(opt.m, ck.m, model.nparams * sizeof(float));
        memcpy(opt.v, ck.v, model.nparams * sizeof(float));
        opt.t = ck.opt_steps;
        start_epoch = ck.epochs_done;
        best_val = ck.best_val_loss;
    } else if (root) {
        mlp_init_params(&model, tc->seed);
    }
    /* Every rank starts from rank 0's parameters (the checkpoint case too:
     * it costs one broadcast and rules out a rank that read a different file). */
    if (dp_broadcast_params(&dp, model.params, model.nparams)) fail_abort("broadcast", "MPI_Bcast failed");

    /* Best parameters by val loss, kept by rank 0 for the holdout evaluation. */
    float *best = root ? malloc(model.nparams * sizeof(float)) : NULL;
    if (root && !best) fail_abort("best copy", "out of memory");
    if (root) memcpy(best, model.params, model.nparams * sizeof(float));
    /* Optimizer state at the best epoch, for best.ckpt (written every --save-every epochs). */
    float *best_m = root && !o.no_save ? malloc(model.nparams * sizeof(float)) : NULL;
    float *best_v = root && !o.no_save ? malloc(model.nparams * sizeof(float)) : NULL;
    if (root && !o.no_save && (!best_m || !best_v)) fail_abort("best copy", "out of memory");
    checkpoint best_ck = {0};
    int best_dirty = 0;
    if (root && have_ck && o.save_dir && !o.no_save) {
        /* A resumed run's best so far lives in best.ckpt of the save dir. */
        char bp[4200];
        checkpoint bc;
        snprintf(bp, sizeof bp, "%s/best.ckpt", o.save_dir);
        if (ckpt_probe(bp) == 1 && ckpt_load(bp, &bc, err, sizeof err) == 0) {
            if (bc.nparams == model.nparams && bc.best_val_loss == best_val)
                memcpy(best, bc.params, model.nparams * sizeof(float));
            ckpt_free(&bc);
        }
    }

    char last_path[4200] = "", best_path[4200] = "";
    if (root && !o.no_save) {
        ok = mkdir_p(o.save_dir, err, sizeof err) == 0;
        snprintf(last_path, sizeof last_path, "%s/last.ckpt", o.save_dir);
        snprintf(best_path, sizeof best_path, "%s/best.ckpt", o.save_dir);
        if (ok && (ckpt_probe(last_path) < 0 || ckpt_probe(best_path) < 0)) {
            snprintf(err, sizeof err, "%s holds a file named last.ckpt or best.ckpt that is not a tagtrain "
                     "checkpoint: refusing to overwrite it (choose another --save DIR)", o.save_dir);
            ok = 0;
        }
    }
    if (!all_ok(root ? ok : 1)) {
        if (root) fprintf(stderr, "tagtrain: --save: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    FILE *logf = NULL;
    if (root && o.log && !(logf = fopen(o.log, "w"))) {
        fprintf(stderr, "tagtrain: --log %s: %s\n", o.log, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (root && !o.quiet) {
        printf("tagtrain: %d rank%s, algo %s%s, %zu train / %zu val / %zu holdout rows, %d features, "
               "model %d", p, p > 1 ? "s" : "", algo->name, dp.nbuckets ? " (bucketed)" : "", ntr, nva, hold.n,
               tc->feat_dim, tc->feat_dim);
        for (int i = 0; i < tc->model.nhidden; i++) printf("-%d", tc->model.hidden[i]);
        printf("-%d (%zu params, %.2f MiB of gradient), batch %d x accum %d, %s lr %g\n", MLP_CLASSES,
               model.nparams, model.nparams * 4.0 / 1048576.0, tc->batch, tc->accum, opt_kind_name(tc->opt.kind),
               tc->opt.lr);
        printf("  data: %s, %s (%.0f non-zero features per train row)\n", path_data, path_hold,
               ntr ? (double)Xtr.ptr[ntr] / (double)ntr : 0.0);
        if (have_ck) printf("  resumed from %s after epoch %d\n", o.resume, start_epoch);
        fflush(stdout);
    }

    /* ---- training */
    dp_dataset ds = {NULL, Xtr.y, ntr, tc->feat_dim, Xtr.ptr, Xtr.idx, Xtr.val};
    double train_time = 0.0, samples_done = 0.0;
    int last_epoch = tc->epochs;
    if (o.stop_after && start_epoch + o.stop_after < last_epoch) last_epoch = start_epoch + o.stop_after;
    metrics val = {0};
    for (int epoch = start_epoch; epoch < last_epoch; epoch++) {
        size_t *order = NULL;
        size_t n_order = dp_epoch_order(ntr, p, tc->seed, epoch, &order);
        if (!order) fail_abort("epoch order", "out of memory");
        rng_t drop = rng_stream(tc->seed, RNG_DROPOUT, (uint64_t)rank, (uint64_t)epoch);
        double loss_cnt[2] = {0, 0};
        MPI_Barrier(MPI_COMM_WORLD);   /* epoch timings start together */
        double te0 = ck_now(), comm0 = dp.t_comm, comp0 = dp.t_compute;
        int64_t step_in_epoch = 0;
        for (size_t pos = 0; pos < n_order; pos += per_step, step_in_epoch++) {
            size_t len = n_order - pos < per_step ? n_order - pos : per_step;
            double c0 = dp.t_comm, k0 = dp.t_compute;
            float lr = opt_lr_at(&opt.cfg, opt.t);
            rc = dp_step(&dp, &model, &opt, &ds, order, pos, len, tc->batch, &drop, &loss_cnt[0], &loss_cnt[1],
                         err, sizeof err);
            if (rc) fail_abort("training step", err);
            if (logf)
                fprintf(logf, "{\"type\":\"step\",\"epoch\":%d,\"step\":%lld,\"global_step\":%lld,\"samples\":%zu,"
                        "\"lr\":%.6g,\"compute_s\":%.6f,\"comm_s\":%.6f}\n", epoch + 1, (long long)step_in_epoch,
                        (long long)opt.t, len, lr, dp.t_compute - k0, dp.t_comm - c0);
        }
        free(order);
        double te = ck_now() - te0;
        MPI_Allreduce(MPI_IN_PLACE, &te, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double ecomm = dp.t_comm - comm0, ecomp = dp.t_compute - comp0;
        double tm[2] = {ecomm, ecomp};
        if (dp_sum_doubles(&dp, loss_cnt, 2) || dp_sum_doubles(&dp, tm, 2)) fail_abort("epoch sums", "MPI failed");
        train_time += te;
        samples_done += (double)n_order;

        if (o.inject_desync == epoch + 1 && rank == 1) model.params[0] += 1e-3f;
        if (o.check_sync) {
            rc = dp_check_sync(&dp, model.params, model.nparams, &opt, err, sizeof err);
            if (rc) {
                if (root) fprintf(stderr, "tagtrain: --check-sync after epoch %d: %s\n", epoch + 1, err);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        if (root) {
            eval_model_sparse(&model, Xva.ptr, Xva.idx, Xva.val, Xva.y, Xva.n, eval_rows, &val);
            int improved = val.loss < best_val;
            if (improved) {
                best_val = val.loss;
                memcpy(best, model.params, model.nparams * sizeof(float));
            }
            double comm_frac = tm[0] + tm[1] > 0 ? tm[0] / (tm[0] + tm[1]) : 0.0;
            if (!o.quiet)
                printf("epoch %3d/%d  train loss %.4f  val loss %.4f  val acc %.4f  val F1 %.4f  "
                       "%.0f samples/s  comm %.1f%%%s%s\n", epoch + 1, tc->epochs,
                       loss_cnt[1] > 0 ? loss_cnt[0] / loss_cnt[1] : 0.0, val.loss, val.accuracy, val.w_f1,
                       (double)n_order / te, 100.0 * comm_frac, improved ? "  *best" : "",
                       o.check_sync ? "  [sync ok]" : "");
            fflush(stdout);
            if (logf) {
                fprintf(logf, "{\"type\":\"epoch\",\"epoch\":%d,\"train_loss\":%.6f,\"val_loss\":%.6f,"
                        "\"val_accuracy\":%.6f,\"val_f1\":%.6f,\"time_s\":%.6f,\"samples\":%zu,"
                        "\"samples_per_s\":%.3f,\"compute_s\":%.6f,\"comm_s\":%.6f,\"comm_fraction\":%.6f}\n",
                        epoch + 1, loss_cnt[1] > 0 ? loss_cnt[0] / loss_cnt[1] : 0.0, val.loss, val.accuracy,
                        val.w_f1, te, n_order, (double)n_order / te, tm[1] / p, tm[0] / p, comm_frac);
                fflush(logf);
            }
            if (!o.no_save) {
                checkpoint c = {.cfg = *tc, .epochs_done = epoch + 1, .opt_steps = opt.t, .best_val_loss = best_val,
                                .nparams = model.nparams, .params = model.params, .m = opt.m, .v = opt.v,
                                .idf = feat.idf};
                if (improved) {
                    /* Snapshot the best state; best.ckpt is written with the next last.ckpt. */
                    memcpy(best_m, opt.m, model.nparams * sizeof(float));
                    memcpy(best_v, opt.v, model.nparams * sizeof(float));
                    best_ck = c;
                    best_ck.params = best;
                    best_ck.m = best_m;
                    best_ck.v = best_v;
                    best_dirty = 1;
                }
                if ((epoch + 1 - start_epoch) % o.save_every == 0 || epoch + 1 == last_epoch) {
                    ok = ckpt_save(last_path, &c, err, sizeof err) == 0;
                    if (ok && best_dirty) ok = ckpt_save(best_path, &best_ck, err, sizeof err) == 0;
                    best_dirty = 0;
                    if (!ok) fail_abort("checkpoint", err);
                }
            }
        }
    }

    /* ---- summary and holdout */
    double comm_all[2] = {dp.t_comm, dp.t_compute};
    dp_sum_doubles(&dp, comm_all, 2);
    if (root) {
        double comm_frac = comm_all[0] + comm_all[1] > 0 ? comm_all[0] / (comm_all[0] + comm_all[1]) : 0.0;
        metrics ho;
        memcpy(model.params, best, model.nparams * sizeof(float));
        eval_model_sparse(&model, Xho.ptr, Xho.idx, Xho.val, Xho.y, Xho.n, eval_rows, &ho);
        if (!o.quiet) {
            printf("\nholdout (%zu rows, best model by val loss %.4f):\n", hold.n, best_val);
            metrics_print(stdout, &ho, mwml_tags);
        }
        printf("trained %d epoch%s in %.2f s (%.2f s total): %.0f samples/s, comm fraction %.3f, "
               "holdout weighted F1 %.4f\n", last_epoch - start_epoch, last_epoch - start_epoch == 1 ? "" : "s",
               train_time, ck_now() - t_start, train_time > 0 ? samples_done / train_time : 0.0, comm_frac, ho.w_f1);
        if (!o.no_save && last_epoch > start_epoch)
            printf("checkpoints: %s (best by val loss), %s\n", best_path, last_path);
        if (logf) {
            fprintf(logf, "{\"type\":\"summary\",\"ranks\":%d,\"algo\":\"%s\",\"bucketed\":%s,\"epochs\":%d,"
                    "\"train_time_s\":%.6f,\"samples_per_s\":%.3f,\"comm_fraction\":%.6f,\"holdout_f1\":%.6f,"
                    "\"holdout_accuracy\":%.6f,\"steps\":%lld,\"compute_per_step_s\":%.6g,\"comm_per_step_s\":%.6g,"
                    "\"allreduce_bytes_per_step\":%.6g,\"compact\":%s,\"overlap\":%s}\n", p, algo->name,
                    dp.nbuckets ? "true" : "false",
                    last_epoch - start_epoch, train_time, train_time > 0 ? samples_done / train_time : 0.0,
                    comm_frac, ho.w_f1, ho.accuracy, (long long)dp.steps,
                    dp.steps ? comm_all[1] / p / (double)dp.steps : 0.0, dp.steps ? comm_all[0] / p / (double)dp.steps : 0.0,
                    dp.steps ? dp.elems_reduced * 4.0 / (double)dp.steps : 0.0, dp.compact ? "true" : "false",
                    dp.overlap ? "true" : "false");
            fclose(logf);
        }
        if (o.metrics) {
            FILE *mf = fopen(o.metrics, "w");
            if (!mf || metrics_write_json(mf, &ho, mwml_tags) || fclose(mf)) {
                fprintf(stderr, "tagtrain: --metrics %s: cannot write: %s\n", o.metrics, strerror(errno));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        fflush(stdout);
    }

    free(best);
    free(best_m);
    free(best_v);
    free(eval_rows);
    opt_free(&opt);
    dp_free(&dp);
    mlp_free(&model);
    ck_comm_destroy(comm);
    matrix_free(&Xtr); matrix_free(&Xva); matrix_free(&Xho);
    feat_free(&feat);
    free(tr_rows); free(va_rows);
    mwml_free(&data); mwml_free(&hold);
    if (have_ck) ckpt_free(&ck);
    MPI_Finalize();
    return 0;
}
