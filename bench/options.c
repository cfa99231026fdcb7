/*
 * options.c — collbench's command line, in nccl-tests' spelling where it has
 * one (-b -e -f -n -w -c -d -o). Parsed before MPI starts, identically on
 * every rank, so a bad option stops every rank with the same exit code 2 and
 * only rank 0 prints the message.
 *
 * One table (ck_opt, collkit_util.h) holds every option once: its spelling,
 * where its value goes, its range and its line of --help. What the table
 * cannot say (two options that do not go together, an --algo list that
 * depends on --coll and the device) is checked after it, in bm_parse_args.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collcheck.h"   /* cc_parse_seed */
#include "collkit_util.h"

/* What the table fills: bm_opts itself where a value goes straight there,
 * and what is turned into bm_opts after parsing (the mode flags, --algo,
 * --device and --transport, the sizes as the parser reads them). */
typedef struct {
    bm_opts     o;
    uint64_t    minbytes, maxbytes, chunk;
    const char *algo_spec;
    int         device;              /* host|cuda */
    int         transport;           /* mpi, shm, cuda-ipc, cuda: 0..3 (-1: not given) */
    int         pingpong, extrapolate, paired, gpus;
} bm_cli;

/* ---------------------------------------------------------------- values */

/* Each parser: 0 with the value in its field, or -1 with why in err. */
static int refuse(char *err, size_t cap, const char *why)
{
    snprintf(err, cap, "%s", why);
    return -1;
}

static int parse_dtype(const char *v, void *field, char *err, size_t cap)
{
    return ck_dtype_parse(v, field) ? refuse(err, cap, "unknown dtype (f32 f64 i32 i64 bf16)") : 0;
}

static int parse_op(const char *v, void *field, char *err, size_t cap)
{
    return ck_op_parse(v, field) ? refuse(err, cap, "unknown op (sum prod min max avg)") : 0;
}

static int parse_coll(const char *v, void *field, char *err, size_t cap)
{
    return ck_coll_parse(v, field) ? refuse(err, cap, "expected allreduce, reduce_scatter or allgather") : 0;
}

static int parse_seed(const char *v, void *field, char *err, size_t cap)
{
    return cc_parse_seed(v, field) ? refuse(err, cap, "want an integer from 0 to 2^64-1") : 0;
}

/* out, in or both: BM_PLACE_* bits. */
static int parse_place(const char *v, void *field, char *err, size_t cap)
{
    int *place = field;
    if (!strcmp(v, "out")) *place = BM_PLACE_OUT;
    else if (!strcmp(v, "in")) *place = BM_PLACE_IN;
    else if (!strcmp(v, "both")) *place = BM_PLACE_OUT | BM_PLACE_IN;
    else return refuse(err, cap, "expected out, in or both");
    return 0;
}

/* --transport's names: shm and mpi move host buffers, cuda-ipc (or cuda,
 * its other name) device buffers. */
static const char *const transports[] = {"mpi", "shm", "cuda-ipc", "cuda"};
enum { TRANSPORT_SHM = 1, TRANSPORT_FIRST_DEVICE = 2 };

/* The index in transports[]. */
static int parse_transport(const char *v, void *field, char *err, size_t cap)
{
    for (int k = 0; k < 4; k++)
        if (!strcmp(v, transports[k])) { *(int *)field = k; return 0; }
    return refuse(err, cap, "expected mpi, shm or cuda-ipc");
}

/* --agree on|off: 1 or 0 (BM_AGREE_DEFAULT until given: the mode decides). */
static int parse_agree(const char *v, void *field, char *err, size_t cap)
{
    if (!strcmp(v, "on")) *(int *)field = 1;
    else if (!strcmp(v, "off")) *(int *)field = 0;
    else return refuse(err, cap, "expected on or off");
    return 0;
}

static int parse_budget(const char *v, void *field, char *err, size_t cap)
{
    char why[128];
    if (!ck_parse_double(v, 0, 1e6, field, why, sizeof why)) return 0;
    snprintf(err, cap, "%s (want seconds, 0 = none)", why);
    return -1;
}

/* ---------------------------------------------------------------- the table */

/* A row: its spelling, its short name (or 0), its type and its field. */
#define OPT(name_, short_, type_, field) \
    .name = name_, .short_name = short_, .type = type_, .off = offsetof(bm_cli, field)
/* A row whose value a function of its own parses. */
#define CUSTOM(name_, short_, field, fn) \
    OPT(name_, short_, CK_OPT_CUSTOM, field), .size = sizeof(((bm_cli *)0)->field), .parse = fn

/* "64M" and the like: binary units, as nccl-tests takes them, and an
 * optional trailing B ("64MB"). Up to 1 TiB, far beyond any buffer this can
 * allocate. */
#define MAX_BYTES 1099511627776.0

static const ck_opt options[] = {
    {.name = "sizes and iterations", .type = CK_OPT_HEADING},
    {OPT("--minbytes", 'b', CK_OPT_SIZE, minbytes), .hi = MAX_BYTES, .arg = "SIZE",
     .help = "smallest message (default 8); SIZE takes K, M, G (x1024), e.g. 64M"},
    {OPT("--maxbytes", 'e', CK_OPT_SIZE, maxbytes), .hi = MAX_BYTES, .arg = "SIZE",
     .help = "largest message (default 64M)"},
    {OPT("--stepfactor", 'f', CK_OPT_INT, o.factor), .lo = 2, .hi = 1 << 20,
     .help = "multiply the size by N each step (default 2, at least 2)"},
    {OPT("--iters", 'n', CK_OPT_INT, o.iters), .lo = 1, .hi = 1 << 24,
     .help = "timed iterations per size (default 20)"},
    {OPT("--warmup_iters", 'w', CK_OPT_INT, o.warmup), .lo = 0, .hi = 1 << 24,
     .help = "untimed iterations first (default 5)"},
    {CUSTOM("--time-budget", 0, o.time_budget, parse_budget), .arg = "S",
     .help = "stop timing a size after about S seconds (at least 3 iterations)"},
    {.name = "what to run", .type = CK_OPT_HEADING},
    {CUSTOM("--coll", 0, o.coll, parse_coll), .arg = "C",
     .help = "allreduce (default), reduce_scatter or allgather: the collective swept;\n"
             "busbw = algbw * (p-1)/p for the two halves (nccl-tests' factor)"},
    {OPT("--algo", 0, CK_OPT_STR, algo_spec), .arg = "LIST",
     .help = "comma-separated registry names, or all (default all); --algo list prints them"},
    {CUSTOM("--dtype", 'd', o.dtype, parse_dtype), .arg = "T", .help = "f32 f64 i32 i64 bf16 (default f32)"},
    {CUSTOM("--op", 'o', o.op, parse_op), .arg = "OP", .help = "sum prod min max avg (default sum)"},
    {CUSTOM("--place", 0, o.place, parse_place), .arg = "P",
     .help = "out, in or both (out-of-place / in-place; default both)"},
    {CUSTOM("--agree", 0, o.agree, parse_agree), .arg = "on|off",
     .help = "the timed calls first agree on their arguments across ranks, as every\n"
             "ck_allreduce does by default (the trainer's calls): on for the sweep,\n"
             "off for --paired (two algorithms against each other, not the library's\n"
             "cost per call); the header, CSV and JSON say which"},
    {OPT("--check", 'c', CK_OPT_INT, o.check), .lo = 0, .hi = 1, .arg = "0|1",
     .help = "check each result with the checker's inputs, #wrong column (default 1;\n"
             "--paired checks every timed call whatever -c says)"},
    {OPT("--device", 0, CK_OPT_CHOICE, device), .choices = "host|cuda", .arg = "D",
     .help = "host or cuda (default host)"},
    {CUSTOM("--transport", 0, transport, parse_transport), .arg = "T",
     .help = "mpi (host, default), shm (host buffers the ranks of one node share;\n"
             "adds oneshot and twoshot) or cuda-ipc (the same as --device cuda)"},
    {OPT("--chunk", 0, CK_OPT_SIZE, chunk), .hi = MAX_BYTES, .arg = "SIZE",
     .help = "pipeline chunk of the chunked algorithms (default: the library's, 256K)"},
    {.name = "modes", .type = CK_OPT_HEADING},
    {OPT("--pingpong", 0, CK_OPT_FLAG, pingpong),
     .help = "ranks 0 and 1 ping-pong over the sizes; fits alpha and beta, times gamma and memcpy"},
    {OPT("--extrapolate", 0, CK_OPT_FLAG, extrapolate),
     .help = "print the model for p = 2 .. --pmax (default 4096) and the crossover sizes"},
    {OPT("--paired", 0, CK_OPT_FLAG, paired),
     .help = "--algo A,B timed against each other: ABBA order, slowest rank per call,\n"
             "median speed t(A)/t(B) per size with quartiles (out-of-place); with\n"
             "--coll, two algorithms of that collective"},
    {CUSTOM("--seed", 0, o.seed, parse_seed), .arg = "S", .help = "another set of the checker's inputs (default 0)"},
    {OPT("--results", 0, CK_OPT_STR, o.results), .arg = "FILE",
     .help = "--paired: write every timed call's record (time, result digest, traffic)\n"
             "for collverify to check outside this process"},
    {OPT("--pmax", 0, CK_OPT_INT, o.extrap_pmax), .lo = 2, .hi = 1 << 20, .help = "largest p for --extrapolate"},
    {OPT("--every-p", 0, CK_OPT_FLAG, o.extrap_every_p),
     .help = "--extrapolate at every p from 2 to --pmax, not only the powers of two"},
    {OPT("--gpus", 0, CK_OPT_FLAG, gpus),
     .help = "print the number of CUDA devices this process can use (CUDA_VISIBLE_DEVICES\n"
             "honoured) and exit: 0; 3 with the reason when there is none; 1 when a\n"
             "device is there and does not work (CUDA's message). No mpirun needed"},
    {.name = "model and output", .type = CK_OPT_HEADING},
    {OPT("--model", 0, CK_OPT_STR, o.model), .arg = "M",
     .help = "auto (calibrate first, default), none, or a file written by --save-model"},
    {OPT("--save-model", 0, CK_OPT_STR, o.save_model), .arg = "FILE",
     .help = "write the fitted alpha, beta, gamma (ping-pong or auto calibration)"},
    {OPT("--csv", 0, CK_OPT_STR, o.csv), .arg = "FILE", .help = "results as CSV"},
    {OPT("--json", 0, CK_OPT_STR, o.json), .arg = "FILE", .help = "results as JSON"},
    {OPT("--trace", 0, CK_OPT_STR, o.trace), .arg = "FILE",
     .help = "run one extra traced call per size and write a Chrome trace (Perfetto)"},
    {OPT("--trace-capacity", 0, CK_OPT_INT, o.trace_capacity), .lo = 16, .hi = 1 << 22,
     .help = "events kept per rank (default 200000)"},
    {OPT("--overwrite", 0, CK_OPT_FLAG, o.overwrite),
     .help = "write over existing --csv, --json, --save-model, --trace and --results\n"
             "files (a file that holds something is refused otherwise, before\n"
             "anything runs; two of these naming one file are refused always)"},
    {NULL},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np P collbench [options]\n"
               "Times all-reduce algorithms from the collkit registry, like nccl-tests' all_reduce_perf.\n\n");
    ck_opt_help(f, options, NULL);
    fprintf(f, "  -h, --help\n");
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    if (ck_is_print_rank()) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "collbench: error: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n(collbench --help lists the options)\n");
        va_end(ap);
    }
    return 2;
}

/* ---------------------------------------------------------------- after the table */

static void set_defaults(bm_cli *c)
{
    memset(c, 0, sizeof *c);
    c->o.mode = BM_MODE_SWEEP;
    c->minbytes = 8;
    c->maxbytes = 64u << 20;
    c->o.factor = 2;
    c->o.iters = 20;
    c->o.warmup = 5;
    c->o.check = 1;
    c->o.dtype = CK_F32;
    c->o.op = CK_SUM;
    c->o.place = BM_PLACE_OUT | BM_PLACE_IN;
    c->o.model = "auto";
    c->o.trace_capacity = 200000;
    c->o.extrap_pmax = 4096;
    c->algo_spec = "all";
    c->transport = -1;
    c->o.agree = BM_AGREE_DEFAULT;
}

/* The mode, the sizes and the memory from what the table filled. */
static int resolve(bm_cli *c, const char **given)
{
    bm_opts *o = &c->o;
    const int modes = c->pingpong + c->extrapolate + c->paired + c->gpus;
    if (modes > 1) return fail("--pingpong, --extrapolate, --paired and --gpus are modes: give one");
    o->mode = c->pingpong ? BM_MODE_PINGPONG : c->extrapolate ? BM_MODE_EXTRAPOLATE : c->paired ? BM_MODE_PAIRED
            : c->gpus ? BM_MODE_GPUS : BM_MODE_SWEEP;
    if (o->agree == BM_AGREE_DEFAULT) o->agree = o->mode != BM_MODE_PAIRED;
    o->minbytes = (size_t)c->minbytes;
    o->maxbytes = (size_t)c->maxbytes;
    o->chunk = (size_t)c->chunk;
    if (given[ck_opt_find(options, "--chunk") - options] && o->chunk == 0)
        return fail("--chunk must be at least 1 byte");
    o->mem = c->device ? CK_MEM_CUDA : CK_MEM_HOST;
    if (c->transport >= 0) {
        const int dev = c->transport >= TRANSPORT_FIRST_DEVICE;
        if (o->mem == CK_MEM_CUDA && !dev)
            return fail("--transport %s moves host buffers, not --device cuda", transports[c->transport]);
        o->mem = dev ? CK_MEM_CUDA : c->transport == TRANSPORT_SHM ? CK_MEM_HOST | CK_MEM_SHM : CK_MEM_HOST;
    }
    return 0;
}

/* The registry decides which names exist and says what is wrong. */
static int parse_algos(const char *spec, bm_opts *o)
{
    char err[1024];
    if (!strcmp(spec, "list")) { o->mode = BM_MODE_LIST; return 0; }
    if (ck_coll_algo_parse_list(o->coll, spec, o->mem, o->algos, BM_MAX_ALGOS, &o->nalgos, err, sizeof err))
        return fail("--algo: %s", err);
    return 0;
}

/* Options that do not go together. */
static int check_combinations(const bm_opts *o)
{
    if (o->minbytes > o->maxbytes)
        return fail("-b %zu is larger than -e %zu: the smallest size must not exceed the largest", o->minbytes,
                    o->maxbytes);
    if (o->op == CK_AVG && !ck_dtype_is_float(o->dtype))
        return fail("-o avg is defined for floating types only, not %s", ck_dtype_name(o->dtype));
    if (o->mode == BM_MODE_PINGPONG && o->minbytes == 0) return fail("--pingpong needs -b of at least 1 byte");
    return 0;
}

static int check_modes(const bm_opts *o)
{
    if (o->mode == BM_MODE_PAIRED && o->nalgos != 2)
        return fail("--paired compares exactly two algorithms: --algo A,B (got %d)", o->nalgos);
    if (o->results && o->mode != BM_MODE_PAIRED) return fail("--results works with --paired only");
    if (o->trace && o->mode != BM_MODE_SWEEP) return fail("--trace works with the all-reduce sweep only");
    if (o->json && o->mode != BM_MODE_SWEEP) return fail("--json works with the all-reduce sweep only (use --csv)");
    if (o->extrap_every_p && o->mode != BM_MODE_EXTRAPOLATE) return fail("--every-p works with --extrapolate only");
    return 0;
}

/* The output files: a user's file is never replaced unasked (ck_output_free).
 * --results is checked by collbench itself (collbench.c): collverify parses
 * the same options, and there the file is its input. Rank 0 writes them, so
 * only its file system is asked (another node may not have the folder); the
 * others end with the job when it exits. */
static int check_outputs(const bm_opts *o)
{
    if (!ck_is_print_rank()) return 0;
    const char *all[5][2] = {{"--csv", o->csv}, {"--json", o->json}, {"--save-model", o->save_model},
                             {"--trace", o->trace}, {"--results", o->results}};
    for (int i = 0; i < 4; i++) {
        char why[1200];
        if (all[i][1] && ck_output_free(all[i][1], o->overwrite, why, sizeof why))
            return fail("%s %s", all[i][0], why);
    }
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (all[i][1] && all[j][1] && ck_output_same(all[i][1], all[j][1]))
                return fail("%s and %s name one file (%s): give each its own", all[i][0], all[j][0], all[j][1]);
    return 0;
}

int bm_parse_args(int argc, char **argv, bm_opts *o)
{
    bm_cli c;
    const char *given[NOPTIONS] = {0};
    char err[512];
    int rc;
    set_defaults(&c);
    switch (ck_opt_parse(options, argc, argv, &c, given, err, sizeof err)) {
    case CK_OPT_HELP:
        if (ck_is_print_rank()) usage(stdout);
        return 1;
    case CK_OPT_BAD: return fail("%s", err);
    default: break;
    }
    if ((rc = resolve(&c, given))) return rc;
    *o = c.o;
    if ((rc = check_combinations(o)) || (rc = parse_algos(c.algo_spec, o)) || (rc = check_modes(o)) ||
        (rc = check_outputs(o)))
        return rc;
    return 0;
}
