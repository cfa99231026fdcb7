/*
 * args.c — tagtrain's options, one row each (args.h). The row says where the
 * value goes, what it may be, what --help says, and whether it is part of
 * the model's configuration (CK_OPT_MODEL): a resumed run keeps those from
 * its checkpoint, and a value given that says otherwise is refused. The
 * checks between options (--folds with --fold, --zero with --sparse-grads,
 * the algorithm's name) follow the parse, in check_combinations.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "collkit.h"
#include "collkit_util.h"
#include "args.h"
#include "devstep.h"
#include "pp.h"
#include "zero.h"

/* Defaults: chosen by 5-fold cross-validation on dataset.csv (trainer/README.md
 * has the figures). The model is then trained on ALL of dataset.csv for a
 * fixed number of epochs: with label smoothing the last epoch scored as well
 * as the best-by-val-loss one in cross-validation, so a validation split
 * would only take a fifth of the training rows away (--val-frac 0.2 keeps one,
 * and best.ckpt is then the best epoch by val loss). */
#define DEF_HIDDEN "128"
/* A training-state checkpoint of the default model is 134 MB (parameters, m,
 * v and the best parameters), written and fsynced: every epoch would cost
 * more than the training itself. */
#define DEF_SAVE_EVERY 6

static void set_defaults(tt_options *o)
{
    memset(o, 0, sizeof *o);
    train_config *t = &o->tc;
    t->feat_dim = 65536;
    t->model.dropout = 0.5f;
    t->model.label_smoothing = 0.1f;
    for (int c = 0; c < MLP_CLASSES; c++) t->model.class_weight[c] = 1.0f;
    t->opt = (opt_config){.kind = OPT_ADAM, .lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                          .weight_decay = 0.2f, .sched = SCHED_COSINE, .warmup = 10, .min_frac = 0.0f,
                          .step_every = 0, .step_gamma = 0.5f};
    t->epochs = 12;
    t->batch = 32;
    t->accum = 1;
    t->seed = 1234;
    t->val_frac = 0.0;
    t->split_seed = 1234;
    t->feat = (feat_opts){.char_min = 2, .char_max = 4, .sublinear = 1, .title_weight = 1, .nb_scale = 1};
    char err[256];
    mlp_parse_hidden(DEF_HIDDEN, &t->model, err, sizeof err);
    o->algo_name = "auto";
    o->rs_algo = o->ag_algo = "ring";
    o->tp = 1;
    o->pp = 1;
    o->microbatches = 4;
    o->pp_sched = PP_1F1B;
    o->tp_algo = "ring";
    o->save_dir = "runs/latest";
    o->save_every = DEF_SAVE_EVERY;
    o->inject_desync = -1;
    o->bucket_mb = 0;
}

/* ------------------------------------------------------------ values the table's types do not cover */

/* A number in [0, 1), checked again as the float the configuration stores:
 * 0.99999999 is below 1 as a double but rounds to 1.0f. */
static int parse_unit_float(const char *v, void *field, char *err, size_t cap)
{
    double d = 0;
    if (ck_parse_double(v, 0, 1, &d, err, cap)) return -1;
    if (d >= 1 || (float)d >= 1.0f) {
        snprintf(err, cap, "want a number in [0, 1) as a 32-bit float");
        return -1;
    }
    *(float *)field = (float)d;
    return 0;
}

static int parse_seed(const char *v, void *field, char *err, size_t cap)
{
    long long s;
    if (ck_parse_int(v, 0, LONG_MAX, &s, err, cap)) return -1;
    *(uint64_t *)field = (uint64_t)s;
    return 0;
}

static int parse_warmup(const char *v, void *field, char *err, size_t cap)
{
    long long s;
    if (ck_parse_int(v, 0, CFG_MAX_WARMUP, &s, err, cap)) return -1;
    *(int64_t *)field = s;
    return 0;
}

/* --hidden: the field is mlp_config's nhidden and the widths after it. */
_Static_assert(offsetof(mlp_config, hidden) == offsetof(mlp_config, nhidden) + sizeof(int),
               "--hidden's field is nhidden followed by hidden[]");
static int parse_hidden(const char *v, void *field, char *err, size_t cap)
{
    mlp_config m = {0};
    if (mlp_parse_hidden(v, &m, err, cap)) return -1;
    memcpy(field, &m.nhidden, sizeof(int) * (1 + MLP_MAX_HIDDEN));
    return 0;
}

/* --char-ngrams: feat_opts' char_min and char_max. */
static int parse_char_ngrams(const char *v, void *field, char *err, size_t cap)
{
    int lo = 0, hi = 0, used = 0;
    if (strcmp(v, "off") &&
        !(sscanf(v, "%d,%d%n", &lo, &hi, &used) == 2 && !v[used] && lo >= 1 && lo <= hi && hi <= FEAT_MAX_CHAR_N)) {
        snprintf(err, cap, "want off or MIN,MAX with 1 <= MIN <= MAX <= 16");
        return -1;
    }
    ((int *)field)[0] = lo;
    ((int *)field)[1] = hi;
    return 0;
}

static int parse_class_weight(const char *v, void *field, char *err, size_t cap)
{
    float w[MLP_CLASSES];
    int used = 0;
    if (sscanf(v, "%f,%f,%f,%f%n", &w[0], &w[1], &w[2], &w[3], &used) != 4 || v[used]) {
        snprintf(err, cap, "want 4 comma-separated weights (computer-vision, mlops, nlp, other)");
        return -1;
    }
    for (int c = 0; c < MLP_CLASSES; c++)
        if (!(w[c] > 0.0f && w[c] <= CFG_MAX_CLASS_WEIGHT)) {
            snprintf(err, cap, "every weight must be in (0, 100]");
            return -1;
        }
    memcpy(field, w, sizeof w);
    return 0;
}

static int parse_device(const char *v, void *field, char *err, size_t cap)
{
    if ((*(int *)field = devstep_parse_device(v)) >= 0) return 0;
    snprintf(err, cap, "want cpu or cuda");
    return -1;
}

/* ------------------------------------------------------------ the table */

#define F(x) offsetof(tt_options, x)
#define T(x) offsetof(tt_options, tc.x)
#define MODEL CK_OPT_MODEL
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
static const ck_opt table[] = {
    {.name = "data", .type = CK_OPT_HEADING},
    {"--data", 0, CK_OPT_STR, F(data), .arg = "FILE", .help = "dataset.csv (default: $COLLKIT_DATA, else "
     "datasets/madewithml/ or\n../shared/datasets/madewithml/ in this program's folder or above)"},
    {"--holdout", 0, CK_OPT_STR, F(holdout), .arg = "FILE", .help = "holdout.csv (same lookup)"},
    {"--val-frac", 0, CK_OPT_DOUBLE, T(val_frac), .lo = 0, .hi = CFG_MAX_VAL_FRAC, .arg = "F", .flags = MODEL,
     .help = "share of dataset.csv held out for validation, 0..0.9 (%D;\n0: no validation, best.ckpt is the last epoch)"},
    {"--folds", 0, CK_OPT_INT, T(folds), .lo = 2, .hi = CFG_MAX_FOLDS, .arg = "K", .flags = MODEL,
     .help = "cross-validation: K stratified folds of dataset.csv, with --fold"},
    {"--fold", 0, CK_OPT_INT, T(fold), .lo = 1, .hi = CFG_MAX_FOLDS, .arg = "I", .flags = MODEL,
     .help = "validate on fold I (1..K), train on the rest; holdout.csv is not read"},
    {"--strict-data", 0, CK_OPT_FLAG, F(strict_data), .help = "refuse data the audit warns about (repeated ids or "
     "texts,\nconflicting tags, holdout rows in dataset.csv, no val rows)"},
    {"--features", 0, CK_OPT_INT, T(feat_dim), .lo = 1, .hi = FEAT_MAX_DIM, .arg = "DIM", .flags = MODEL,
     .help = "hash buckets of the TF-IDF features (%D)"},
    {"--char-ngrams", 0, CK_OPT_CUSTOM, T(feat.char_min), .size = 2 * sizeof(int), .parse = parse_char_ngrams,
     .arg = "A,B|off", .flags = MODEL, .help = "also character A..B-grams of each word (2,4)"},
    {"--sublinear-tf", 0, CK_OPT_INT, T(feat.sublinear), .lo = 0, .hi = 1, .arg = "0|1", .flags = MODEL,
     .help = "tf = 1 + ln(count) (%D)"},
    {"--title-weight", 0, CK_OPT_INT, T(feat.title_weight), .lo = 1, .hi = FEAT_MAX_TITLE_WEIGHT, .flags = MODEL,
     .help = "count the title's n-grams N times (%D)"},
    {"--nb-scale", 0, CK_OPT_INT, T(feat.nb_scale), .lo = 0, .hi = 1, .arg = "0|1", .flags = MODEL,
     .help = "scale each bucket's idf by its largest |log-count ratio| over\nthe classes on the training rows, as "
     "NBSVM does (%D)"},
    {"--split-seed", 0, CK_OPT_CUSTOM, T(split_seed), .size = sizeof(uint64_t), .parse = parse_seed, .arg = "S",
     .flags = MODEL, .help = "seed of the stratified train/val split and folds (1234)"},
    {.name = "model and optimisation", .type = CK_OPT_HEADING},
    {"--hidden", 0, CK_OPT_CUSTOM, T(model.nhidden), .size = sizeof(int) * (1 + MLP_MAX_HIDDEN),
     .parse = parse_hidden, .arg = "W1,W2,..", .flags = MODEL, .help = "hidden layer widths (" DEF_HIDDEN ")"},
    {"--dropout", 0, CK_OPT_CUSTOM, T(model.dropout), .size = sizeof(float), .parse = parse_unit_float, .arg = "P",
     .flags = MODEL, .help = "dropout on hidden activations, 0 <= P < 1 (0.50)"},
    {"--label-smoothing", 0, CK_OPT_CUSTOM, T(model.label_smoothing), .size = sizeof(float),
     .parse = parse_unit_float, .arg = "E", .flags = MODEL,
     .help = "train against (1-E) onehot + E/4, 0 <= E < 1 (0.10)"},
    {"--class-weight", 0, CK_OPT_CUSTOM, T(model.class_weight), .size = sizeof(float) * MLP_CLASSES,
     .parse = parse_class_weight, .arg = "W,W,W,W", .flags = MODEL,
     .help = "loss weight of computer-vision, mlops, nlp, other (1,1,1,1)"},
    {"--optimizer", 0, CK_OPT_CHOICE, T(opt.kind), .choices = "adam|sgd", .flags = MODEL, .help = "(%D)"},
    {"--lr", 0, CK_OPT_FLOAT, T(opt.lr), .lo = 0, .hi = CFG_MAX_LR, .arg = "LR", .flags = MODEL,
     .help = "peak learning rate (%D)"},
    {"--momentum", 0, CK_OPT_CUSTOM, T(opt.beta1), .size = sizeof(float), .parse = parse_unit_float, .arg = "M",
     .flags = MODEL, .help = "SGD momentum / Adam beta1 (0.9)"},
    {"--weight-decay", 0, CK_OPT_FLOAT, T(opt.weight_decay), .lo = 0, .hi = 1, .arg = "W", .flags = MODEL,
     .help = "decoupled weight decay, AdamW (%D; 0 for sgd)"},
    {"--schedule", 0, CK_OPT_CHOICE, T(opt.sched), .choices = "const|cosine|step", .arg = "cosine|const|step",
     .flags = MODEL, .help = "LR schedule after warmup (%D)"},
    {"--warmup", 0, CK_OPT_CUSTOM, T(opt.warmup), .size = sizeof(int64_t), .parse = parse_warmup, .arg = "STEPS",
     .flags = MODEL, .help = "linear warmup steps (10)"},
    {"--epochs", 0, CK_OPT_INT, T(epochs), .lo = 1, .hi = CFG_MAX_EPOCHS, .arg = "N", .help = "(%D)"},
    {"--batch", 0, CK_OPT_INT, T(batch), .lo = 1, .hi = CFG_MAX_BATCH, .arg = "B", .flags = MODEL,
     .help = "GLOBAL batch per micro-step, split over the ranks (%D)"},
    {"--accum", 0, CK_OPT_INT, T(accum), .lo = 1, .hi = CFG_MAX_ACCUM, .arg = "K", .flags = MODEL,
     .help = "micro-batches per optimizer step (%D)"},
    {"--seed", 0, CK_OPT_CUSTOM, T(seed), .size = sizeof(uint64_t), .parse = parse_seed, .arg = "S", .flags = MODEL,
     .help = "seeds the init, shuffles and dropout (1234)"},
    {.name = "data parallelism", .type = CK_OPT_HEADING},
    {"--algo", 0, CK_OPT_STR, F(algo_name), .arg = "NAME", .help = "all-reduce algorithm, or auto (%D): --algo list "
     "shows them;\nauto is twoshot on the shm transport when every rank is\non one node, else ring on the mpi "
     "transport"},
    {"--device", 0, CK_OPT_CUSTOM, F(device), .size = sizeof(int), .parse = parse_device, .arg = "cpu|cuda",
     .help = "where the model trains (cpu). cuda: parameters, gradients and\noptimizer state in GPU memory (one GPU "
     "per rank, or ranks\nsharing one), the gradients all-reduced by a device algorithm:\n--algo nccl, ring, "
     "twoshot... (--algo list: those with cuda);\nauto is nccl where it can run, else ring over CUDA IPC. Not\nyet "
     "with --zero, --sparse-grads, --bucket-mb or --transport"},
    {"--transport", 0, CK_OPT_STR, F(transport), .arg = "T", .help = "mpi or shm: how the gradient moves between "
     "ranks (mpi for\na named --algo); shm: the ranks of one node map each\nother's gradient buffer (falls back to "
     "mpi across nodes)"},
    {"--bucket-mb", 0, CK_OPT_DOUBLE, F(bucket_mb), .lo = 0, .hi = 1 << 20, .arg = "X", .help = "DDP-style buckets "
     "of X MiB all-reduced during backward (off);\nwith --zero 2, the size of its buckets (" TEXT(ZERO_DEF_BUCKET_MB) ")"},
    {"--zero", 0, CK_OPT_STR, F(zero_arg), .arg = "0|1|2", .help = "1: ZeRO stage 1, the optimizer state sharded "
     "over the ranks:\ngradients reduce-scattered, each rank steps its block of the\nparameters, parameters "
     "all-gathered (0: replicated, the default);\n2: the gradients sharded too: each bucket reduce-scattered as\n"
     "backward finishes it, each rank keeping 1/p of the gradients"},
    {"--rs-algo", 0, CK_OPT_STR, F(rs_algo), .arg = "NAME", .help = "--zero's reduce-scatter algorithm (%D): "
     "collcheck --coll\nreduce_scatter --algo list shows them"},
    {"--ag-algo", 0, CK_OPT_STR, F(ag_algo), .arg = "NAME", .help = "--zero's all-gather algorithm (%D): collcheck "
     "--coll allgather\n--algo list shows them"},
    {"--sparse-grads", 0, CK_OPT_FLAG, F(sparse_grads), .help = "all-reduce only the input-layer rows the step's "
     "samples touch\n(an optimisation; the default all-reduces the whole gradient\nbuffer, as DDP does; see "
     "trainer/README.md)"},
    {"--check-sync", 0, CK_OPT_FLAG, F(check_sync), .help = "after every epoch compare a hash of the parameters "
     "and\noptimizer state across ranks; stop loudly if they differ"},
    {"--breakdown", 0, CK_OPT_FLAG, F(breakdown), .help = "--log each step's wait for the slower rank apart (a "
     "barrier\nbefore the collective; trainer/README.md, Timing)"},
    {"--threads", 0, CK_OPT_INT, F(threads), .lo = 1, .hi = 1024, .arg = "N", .help = "OpenBLAS threads per rank "
     "(1: the default model's matrices\nare too small for more threads to pay)"},
    {.name = "model parallelism", .type = CK_OPT_HEADING},
    {"--tp", 0, CK_OPT_INT, F(tp), .lo = 1, .hi = 1024, .arg = "T", .help = "tensor parallelism over groups of T "
     "consecutive ranks (%D: none):\nthe hidden layers split Megatron-style, layer 0 (W_0) by\ncolumns, layer 1 by "
     "rows, ...; p / T data-parallel replicas\n(with --pp S: p / (T S), each stage split over T ranks).\nT must "
     "divide p and the widths it splits. --zero 1 shards\neach shard's optimizer state over its replicas. Not yet "
     "with\n--zero 2, --device cuda, --sparse-grads or --bucket-mb"},
    {"--tp-algo", 0, CK_OPT_STR, F(tp_algo), .arg = "NAME", .help = "--tp's all-reduce, in forward and backward "
     "(%D): any\nregistry name (--algo list), on the shm transport where the\ngroup shares a node"},
    {"--pp", 0, CK_OPT_INT, F(pp), .lo = 1, .hi = MLP_MAX_HIDDEN + 1, .arg = "S", .help = "pipeline parallelism "
     "over groups of S consecutive ranks (%D: none):\nthe layers cut into S stages, activations forward and their\n"
     "gradients backward as messages; p / S data-parallel replicas\n(with --tp T: p / (T S)). S must divide p, at "
     "most one stage\na layer. --zero 1 as with --tp. Not yet with --zero 2,\n--device cuda, --sparse-grads or "
     "--bucket-mb"},
    {"--microbatches", 0, CK_OPT_INT, F(microbatches), .lo = 1, .hi = 1 << 16, .arg = "M", .help = "--pp: each "
     "replica's batch in M micro-batches (%D); the bubble\nis (S-1)/(M+S-1) of a step"},
    {"--pp-schedule", 0, CK_OPT_CUSTOM, F(pp_sched), .size = sizeof(int), .parse = pp_schedule_parse, .arg = "gpipe|1f1b|NAME", .help = "--pp's "
     "order (1f1b): gpipe runs every forward, then every\nbackward; 1f1b one forward, one backward once the pipe is "
     "full,\nkeeping fewer micro-batches' activations; NAME a program's own\n(CK_REGISTER_SCHEDULE, collkit_pp.h). Not --schedule,\nwhich is the learning rate's"},
    {.name = "output", .type = CK_OPT_HEADING},
    {"--save", 0, CK_OPT_STR, F(save_dir), .arg = "DIR", .help = "write DIR/best.ckpt (the model at the best val "
     "loss so far) and\nDIR/last.ckpt (the training state) (%D)"},
    {"--no-save", 0, CK_OPT_FLAG, F(no_save), .help = "write no checkpoint"},
    {"--save-every", 0, CK_OPT_INT, F(save_every), .lo = 1, .hi = CFG_MAX_EPOCHS, .arg = "N",
     .help = "write them every N epochs and after the last one (%D)"},
    {"--resume", 0, CK_OPT_STR, F(resume), .arg = "FILE", .help = "continue from a last.ckpt (its configuration is "
     "used;\n--epochs may extend the run)"},
    {"--stop-after", 0, CK_OPT_INT, F(stop_after), .lo = 1, .hi = CFG_MAX_EPOCHS, .arg = "N",
     .help = "stop after N epochs, as if interrupted (resume tests)"},
    {"--metrics", 0, CK_OPT_STR, F(metrics), .arg = "FILE", .help = "holdout metrics as JSON"},
    {"--log", 0, CK_OPT_STR, F(log), .arg = "FILE", .help = "JSON lines: the run, one record per step and per "
     "epoch, a summary"},
    {"--trace", 0, CK_OPT_STR, F(trace), .arg = "FILE", .help = "every step's timeline as a Chrome trace (Perfetto): "
     "per rank the\nbackward layers, each bucket's all-reduce from launch to completion\n(--zero 1: reduce-scatter, "
     "optimizer step, all-gather);\ncolldraw --gantt FILE --call K draws step K"},
    {"--overwrite", 0, CK_OPT_FLAG, F(overwrite), .help = "write over an existing --log, --trace or --metrics file "
     "(one that\nholds something is refused otherwise, before training; a resumed run,\nor a restart by ckrun "
     "--restarts, continues the --log tagtrain wrote\nand rewrites its --trace and --metrics);\nnever over a "
     "checkpoint, the data, or another file of the same run;\nand let a run save over the checkpoints of another "
     "configuration\nin the --save DIR it names (refused otherwise, before training)"},
    {"--quiet", 0, CK_OPT_FLAG, F(quiet), .help = "only the final summary"},
    /* For the test of --check-sync: perturb rank 1's parameters after this epoch. */
    {"--inject-desync", 0, CK_OPT_INT, F(inject_desync), .lo = 1, .hi = CFG_MAX_EPOCHS, .flags = CK_OPT_HIDE},
    {NULL},
};
#undef F
#undef T
#undef MODEL
#undef TEXT
#undef TEXT_
enum { NROWS = sizeof table / sizeof table[0] };
_Static_assert((int)NROWS <= (int)TT_ARGS_MAX_ROWS, "tt_options.given[] holds a value per row of the table");

static const char *given(const tt_options *o, const char *name)
{
    return o->given[ck_opt_find(table, name) - table];
}

void tt_args_help(FILE *f)
{
    tt_options d;
    set_defaults(&d);
    fprintf(f, "usage: mpirun -np P tagtrain [options]\n"
               "Train the Made With ML tagger (title + description -> tag) data-parallel over\n"
               "collkit; the gradient all-reduce uses the algorithm given by --algo.\n\n");
    ck_opt_help(f, table, &d);
    fprintf(f, "  --help\n"
               "faults: every wait is bounded by COLLKIT_TIMEOUT (30 s): a rank that stops or dies in any\n"
               "phase ends the job, named; ckrun --restarts N reruns it from DIR/last.ckpt\n");
}

unsigned tt_transport_mem(const char *transport)
{
    return !strcmp(transport, "shm") ? CK_MEM_HOST | CK_MEM_SHM : CK_MEM_HOST;
}

/* The options that must agree with each other. 0, or -1 with the reason. */
static int check_combinations(tt_options *o, char *err, size_t cap)
{
    const train_config *t = &o->tc;
    const char *z = o->zero_arg;
    if (z && strcmp(z, "0") && strcmp(z, "1") && strcmp(z, "2"))
        return snprintf(err, cap, "--zero: want 0 (replicated), 1 (optimizer state sharded) or 2 (gradients too), "
                        "got '%s'", z), -1;
    o->zero = z ? z[0] - '0' : 0;
    if (o->transport && strcmp(o->transport, "mpi") && strcmp(o->transport, "shm"))
        return snprintf(err, cap, "--transport: want mpi or shm, got '%s'", o->transport), -1;
    if (!t->folds != !given(o, "--fold")) return snprintf(err, cap, "--folds K and --fold I go together"), -1;
    if (t->fold > t->folds) return snprintf(err, cap, "--fold: want 1..%d (the --folds given)", t->folds), -1;
    if (t->folds && o->metrics)
        return snprintf(err, cap, "--metrics writes the holdout's metrics, and a --folds run never reads the holdout "
                        "(the fold's scores are in the summary record of --log)"), -1;
    if (o->sparse_grads && o->bucket_mb > 0)
        return snprintf(err, cap, "--sparse-grads and --bucket-mb do not go together: the touched rows are known "
                        "only once the whole backward is done"), -1;
    if (o->zero == 1 && (o->sparse_grads || o->bucket_mb > 0))
        return snprintf(err, cap, "--zero 1 reduce-scatters the whole gradient buffer after backward: not with %s",
                        o->sparse_grads ? "--sparse-grads" : "--bucket-mb"), -1;
    if (o->zero == 2 && o->sparse_grads)
        return snprintf(err, cap, "--zero 2 reduce-scatters the whole gradient buffer, bucket by bucket: not with "
                        "--sparse-grads"), -1;
    /* The device step all-reduces the whole buffer after backward, on its own communicator. */
    if (o->device && (o->zero || o->sparse_grads || o->bucket_mb > 0 || o->transport))
        return snprintf(err, cap, "--device cuda does not take %s yet: on the GPU the whole gradient buffer is "
                        "all-reduced after backward, over CUDA IPC or NCCL (--algo); use --device cpu for it",
                        o->zero ? "--zero" : o->sparse_grads ? "--sparse-grads" : o->bucket_mb > 0 ? "--bucket-mb"
                                                                                      : "--transport"), -1;
    if (o->pp == 1 && (given(o, "--microbatches") || given(o, "--pp-schedule")))
        return snprintf(err, cap, "%s goes with --pp S (pipeline parallelism)",
                        given(o, "--microbatches") ? "--microbatches" : "--pp-schedule"), -1;
    if (o->pp > 1 && (o->zero == 2 || o->device || o->sparse_grads || o->bucket_mb > 0))
        return snprintf(err, cap, "--pp does not take %s yet: each stage's gradients are synchronised whole after "
                        "the pipeline's backward, on the host", o->zero ? "--zero 2" : o->device
                        ? "--device cuda" : o->sparse_grads ? "--sparse-grads" : "--bucket-mb"), -1;
    if (o->tp > 1 && (o->zero == 2 || o->device || o->sparse_grads || o->bucket_mb > 0))
        return snprintf(err, cap, "--tp does not take %s yet: its shards are synchronised whole after backward, on "
                        "the host", o->zero ? "--zero 2" : o->device ? "--device cuda" : o->sparse_grads
                        ? "--sparse-grads" : "--bucket-mb"), -1;
    return 0;
}

/* One algorithm for the gradients: a list (or "all") is refused as too many. */
static int check_algo(const tt_options *o, char *err, size_t cap)
{
    const ck_algo *algo;
    int nalgo;
    char aerr[1024];
    if (o->device) {
        if (devstep_check_algo(o->algo_name, aerr, sizeof aerr))
            return snprintf(err, cap, "--algo with --device cuda: %s", aerr), -1;
    } else if (strcmp(o->algo_name, "auto") &&
               ck_algo_parse_list(o->algo_name, tt_transport_mem(o->transport ? o->transport : "mpi"), &algo, 1,
                                  &nalgo, aerr, sizeof aerr))
        return snprintf(err, cap, "--algo: %s%s", aerr,
                        !o->transport && ck_algo_find(o->algo_name) ? " (--transport shm runs it on host buffers)"
                                                                    : ""), -1;
    if (o->tp > 1 && ck_algo_parse_list(o->tp_algo, CK_MEM_HOST | CK_MEM_SHM, &algo, 1, &nalgo, aerr, sizeof aerr))
        return snprintf(err, cap, "--tp-algo: %s", aerr), -1;
    return 0;
}

int tt_args_parse(int argc, char **argv, tt_options *o, char *err, size_t cap)
{
    set_defaults(o);
    int rc = ck_opt_parse(table, argc, argv, o, o->given, err, cap);
    if (rc != CK_OPT_RUN) return rc;
    if (check_combinations(o, err, cap)) return CK_OPT_BAD;
    train_config *t = &o->tc;
    if (t->folds) t->fold--;   /* 0-based from here on */
    o->set_epochs = given(o, "--epochs") != NULL;
    o->default_save = given(o, "--save") == NULL;
    /* The default decay is AdamW's; coupled into SGD it would be far too strong. */
    if (!given(o, "--weight-decay") && t->opt.kind == OPT_SGD) t->opt.weight_decay = 0.0f;
    if (!strcmp(o->algo_name, "list")) return TT_ARGS_LIST;
    if (check_algo(o, err, cap)) return CK_OPT_BAD;
    t->model.in_dim = t->feat_dim;
    return CK_OPT_RUN;
}

const char *tt_args_model_differs(const tt_options *o, const train_config *other, int given_only,
                                  const char **value)
{
    /* The other configuration in an options struct of its own: the rows'
     * offsets are into tt_options. */
    tt_options b = *o;
    b.tc = *other;
    for (const ck_opt *r = table; r->name; r++) {
        if (!(r->flags & CK_OPT_MODEL) || (given_only && !o->given[r - table])) continue;
        if (ck_opt_differs(r, o, &b)) {
            *value = o->given[r - table];
            return r->name;
        }
    }
    return NULL;
}
