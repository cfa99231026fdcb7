/*
 * options.c — collcheck's arguments and --help. Parsed before MPI_Init on
 * every rank alike, so --help and --algo list work without mpirun and a bad
 * argument ends every rank with exit 2 without any communication; only the
 * print rank says why.
 *
 * One table (ck_opt) holds every option: its spelling, where its value goes,
 * how it is checked and what --help says of it. The list options and the
 * ones whose words map to values (--inplace both, --device cuda) have a
 * parser of their own; checks between options (--transport against
 * --device, --inputs random against --dtype) come after the table's pass.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_cli.h"
#include "collkit_util.h"

/* Counts and chunks up to 16 Gi: more than any buffer the checker allocates. */
#define MAX_SIZE (1ull << 34)

/* A reason in parentheses follows the value without a colon, as collcheck
 * has always written it: "bad --seed 'x' (want an integer ...)". */
#define WANT(text) "(want " text ")"

static int bad_count(ck_sbuf *e, const char *spec, const char *entry, const char *why)
{
    if (strchr(spec, ',')) ck_sbuf_add(e, "'%s': ", entry);   /* name the entry among several */
    ck_sbuf_add(e, "%s", why);
    return -1;
}

/* "0,1,p-1,p,64K": each entry absolute or relative to p. On a bad entry,
 * err says what is wrong with it. */
static int count_list(const char *spec, cc_options *o, ck_sbuf *e)
{
    char buf[512], why[128];
    if (!*spec) { ck_sbuf_add(e, "an empty list"); return -1; }
    if (strlen(spec) >= sizeof buf) { ck_sbuf_add(e, "too long (at most %zu characters)", sizeof buf - 1); return -1; }
    strcpy(buf, spec);
    o->ncounts = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->ncounts == CC_MAX_COUNTS) {
            snprintf(why, sizeof why, "more than %d counts", CC_MAX_COUNTS);
            return bad_count(e, "", t, why);
        }
        cc_count_spec *c = &o->counts[o->ncounts++];
        const char *num = t;
        c->rel = t[0] == 'p';
        if (c->rel) {
            if (!t[1]) { c->v = 0; continue; }
            if (t[1] != '+' && t[1] != '-') return bad_count(e, spec, t, "not p, p+N or p-N");
            num = t + 2;
        }
        uint64_t v;
        if (ck_parse_size(num, MAX_SIZE, &v, why, sizeof why)) return bad_count(e, spec, t, why);
        c->v = c->rel && t[1] == '-' ? -(long long)v : (long long)v;
    }
    if (!o->ncounts) { ck_sbuf_add(e, "no count named, only commas"); return -1; }
    return 0;
}

/* "f32,i64" or "all" into a bit mask; entries as --algo takes them (empty
 * ones between commas skipped, at least one named). On a bad list, err
 * says what is wrong with it. */
static int parse_mask(const char *spec, int is_dtype, unsigned *mask, ck_sbuf *e)
{
    char buf[256];
    *mask = 0;
    if (!strcmp(spec, "all")) { *mask = is_dtype ? (1u << CK_NUM_DTYPES) - 1 : (1u << CK_NUM_OPS) - 1; return 0; }
    if (!*spec) { ck_sbuf_add(e, "an empty list"); return -1; }
    if (strlen(spec) >= sizeof buf) { ck_sbuf_add(e, "too long (at most %zu characters)", sizeof buf - 1); return -1; }
    strcpy(buf, spec);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ck_dtype dt;
        ck_op op;
        if (is_dtype ? ck_dtype_parse(t, &dt) : ck_op_parse(t, &op)) {
            if (strchr(spec, ',')) ck_sbuf_add(e, "unknown %s '%s'", is_dtype ? "type" : "op", t);
            else ck_sbuf_add(e, "unknown %s", is_dtype ? "type" : "op");
            return -1;
        }
        *mask |= 1u << (is_dtype ? (int)dt : (int)op);
    }
    if (!*mask) { ck_sbuf_add(e, "no %s named, only commas", is_dtype ? "type" : "op"); return -1; }
    return 0;
}

/* The options struct a field belongs to: the list options set the text as
 * given beside their field, for the messages that quote it. */
#define OPTIONS_OF(field, member) ((cc_options *)((char *)(field) - offsetof(cc_options, member)))

static int parse_count(const char *v, void *field, char *err, size_t cap)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, cap);
    cc_options *o = OPTIONS_OF(field, counts);
    if (count_list(v, o, &e)) {
        ck_sbuf_add(&e, " " WANT("N[,N..] with N >= 0, or p, p-1, p+1"));
        return -1;
    }
    o->count_text = v;
    return 0;
}

/* --dtype or --op: the mask, and the list as given beside it. */
static int parse_names(const char *v, unsigned *mask, const char **text, int is_dtype, const char *want, char *err,
                       size_t cap)
{
    ck_sbuf e;
    ck_sbuf_init(&e, err, cap);
    if (parse_mask(v, is_dtype, mask, &e)) {
        ck_sbuf_add(&e, " %s", want);
        return -1;
    }
    *text = v;
    return 0;
}

static int parse_dtype(const char *v, void *field, char *err, size_t cap)
{
    return parse_names(v, field, &OPTIONS_OF(field, dtypes)->dtype_text, 1,
                       WANT("T[,T..] of f32, f64, i32, i64, bf16, or all"), err, cap);
}

static int parse_op(const char *v, void *field, char *err, size_t cap)
{
    return parse_names(v, field, &OPTIONS_OF(field, ops)->op_text, 0, WANT("O[,O..] of sum, prod, min, max, avg, or all"),
                       err, cap);
}

/* A word among names[] into the int field as the same index of values[];
 * else `want` is the reason. */
static int pick(const char *v, const char *const *names, const int *values, int n, const char *want, void *field,
                char *err, size_t cap)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) { *(int *)field = values[i]; return 0; }
    snprintf(err, cap, "%s", want);
    return -1;
}

/* The inplace bits: 1 out-of-place, 2 in-place, 3 both. */
static int parse_inplace(const char *v, void *field, char *err, size_t cap)
{
    static const char *const names[] = {"0", "1", "both"};
    static const int values[] = {1, 2, 3};
    return pick(v, names, values, 3, WANT("0, 1 or both"), field, err, cap);
}

static int parse_misaligned(const char *v, void *field, char *err, size_t cap)
{
    static const char *const names[] = {"0", "1", "only"};
    static const int values[] = {0, 1, 2};
    return pick(v, names, values, 3, WANT("0, 1 or only"), field, err, cap);
}

/* The inputs bits: 1 exact, 2 random, 3 both. */
static int parse_inputs(const char *v, void *field, char *err, size_t cap)
{
    static const char *const names[] = {"exact", "random", "both"};
    static const int values[] = {1, 2, 3};
    return pick(v, names, values, 3, WANT("exact, random or both"), field, err, cap);
}

static int parse_device(const char *v, void *field, char *err, size_t cap)
{
    static const char *const names[] = {"host", "cuda"};
    static const int values[] = {CK_MEM_HOST, CK_MEM_CUDA};
    int mem;
    if (pick(v, names, values, 2, WANT("host or cuda"), &mem, err, cap)) return -1;
    *(unsigned *)field = (unsigned)mem;
    return 0;
}

/* Checked here, applied with --device after the table's pass. "cuda" is
 * an older spelling of cuda-ipc. */
static int parse_transport(const char *v, void *field, char *err, size_t cap)
{
    static const char *const names[] = {"mpi", "shm", "cuda-ipc", "cuda"};
    static const int values[] = {0, 1, 2, 3};
    int k;
    if (pick(v, names, values, 4, WANT("mpi, shm or cuda-ipc"), &k, err, cap)) return -1;
    *(const char **)field = v;
    return 0;
}

static int parse_coll(const char *v, void *field, char *err, size_t cap)
{
    if (!ck_coll_parse(v, field)) return 0;
    snprintf(err, cap, WANT("allreduce, reduce_scatter or allgather"));
    return -1;
}

static int parse_seed(const char *v, void *field, char *err, size_t cap)
{
    if (!cc_parse_seed(v, field)) return 0;
    snprintf(err, cap, WANT("an integer from 0 to 2^64-1"));
    return -1;
}

static int parse_timeout(const char *v, void *field, char *err, size_t cap)
{
    if (!ck_parse_double(v, 0, 1e6, field, err, cap)) return 0;
    const size_t n = strlen(err);
    snprintf(err + n, cap - n, " " WANT("seconds, 0 = off"));
    return -1;
}

static int parse_chunk(const char *v, void *field, char *err, size_t cap)
{
    uint64_t bytes;
    if (ck_parse_size(v, MAX_SIZE, &bytes, err, cap)) return -1;
    if (!bytes) { snprintf(err, cap, WANT("bytes > 0")); return -1; }
    *(size_t *)field = (size_t)bytes;
    return 0;
}

static int parse_results(const char *v, void *field, char *err, size_t cap)
{
    if (!*v) { snprintf(err, cap, "want a file name"); return -1; }
    *(const char **)field = v;
    return 0;
}

#define XSTR(x) STR(x)
#define STR(x)  #x
#define O(field) offsetof(cc_options, field)
#define CUSTOM(field, fn) CK_OPT_CUSTOM, O(field), sizeof(((cc_options *)0)->field), .parse = fn

static const ck_opt options[] = {
    {"--coll", 0, CUSTOM(coll, parse_coll), .arg = "allreduce|reduce_scatter|allgather",
     .help = "the collective checked (default allreduce).\n"
             "reduce_scatter: rank r's result is block r of the reduction;\n"
             "allgather: every rank's block everywhere (no --op); both with\n"
             "exact inputs only (collkit.h: ck_reduce_scatter, ck_allgather)"},
    {"--algo", 0, CK_OPT_STR, O(algo_text), .arg = "NAME[,NAME..]|all|list",
     .help = "algorithms of that collective to check (default all)"},
    {"--count", 0, CUSTOM(counts, parse_count), .arg = "N[,N..]",
     .help = "element counts; N may be p, p-1, p+1 or use K/M (x1024)\n"
             "(default 0,1,p-1,p,p+1," XSTR(CC_PRIME) "," XSTR(CC_BIG) ")"},
    {"--dtype", 0, CUSTOM(dtypes, parse_dtype), .arg = "T[,T..]|all", .help = "f32 f64 i32 i64 bf16 (default all)"},
    {"--op", 0, CUSTOM(ops, parse_op), .arg = "O[,O..]|all",
     .help = "sum prod min max avg (default all; avg on floating types only)"},
    {"--inplace", 0, CUSTOM(inplace, parse_inplace), .arg = "0|1|both",
     .help = "out-of-place, in-place or both (default both)"},
    {"--misaligned", 0, CUSTOM(misaligned, parse_misaligned), .arg = "0|1|only",
     .help = "add cases with buffers one element past the allocator's\n64-byte alignment (default 1)"},
    {"--inputs", 0, CUSTOM(inputs, parse_inputs), .arg = "exact|random|both",
     .help = "exact integer inputs, random floats (sum and avg on\n"
             "f32, f64, bf16: results bitwise equal across ranks and within\n"
             "the rounding bound of the exact sum), or both (default both)"},
    {"--repeat", 0, CK_OPT_INT, O(repeat), .lo = 1, .hi = 1000000,
     .help = "calls per case, each with other inputs (default %D; a larger N\n"
             "is a stress test for races; a failure names its call)"},
    {"--timeout", 0, CUSTOM(timeout, parse_timeout), .arg = "SEC",
     .help = "watchdog bound for any wait (default: COLLKIT_TIMEOUT, else 30;\n"
             "0 = off): a rank that stops ends the run within 1.5 x SEC, named"},
    {"--chunk", 0, CUSTOM(chunk, parse_chunk), .arg = "BYTES",
     .help = "pipeline chunk for chunked algorithms (default: the library's)"},
    {"--device", 0, CUSTOM(mem, parse_device), .arg = "host|cuda",
     .help = "buffer kind: host memory (MPI) or CUDA device memory (CUDA IPC;\ndefault host)"},
    {"--transport", 0, CUSTOM(transport, parse_transport), .arg = "mpi|shm|cuda-ipc",
     .help = "how bytes move: mpi (host, default), shm (host buffers in\n"
             "memory the ranks of one node share; adds oneshot and twoshot),\n"
             "cuda-ipc (device buffers, the same as --device cuda)"},
    {"--quick", 0, CK_OPT_FLAG, O(quick), .help = "a smaller matrix (what the test suite runs)"},
    {"--seed", 0, CUSTOM(seed, parse_seed), .arg = "S",
     .help = "another set of exact and random inputs (an integer; default 0):\n"
             "results cannot be known before S is chosen, diagnoses decode them\nthe same way"},
    {"--results", 0, CUSTOM(results, parse_results), .arg = "FILE",
     .help = "write what every call produced (each rank's result digest and\n"
             "counted traffic) for collverify, which checks it outside this\n"
             "process; a file that holds something is refused before any case runs"},
    {"--overwrite", 0, CK_OPT_FLAG, O(overwrite), .help = "write over an existing --results file"},
    {"--require-msgs", 0, CK_OPT_FLAG, O(require_msgs),
     .help = "fail an algorithm whose descriptor declares no message count\n(msgs_sent)"},
    {"--leaks", 0, CK_OPT_FLAG, O(leaks),
     .help = "fail a call after which the heap in use grew by its buffers and\n"
             "256 KiB or more (memory taken in every call, never freed); a\n"
             "heuristic, off by default: MPI's own buffers for large messages\ncan grow the heap too"},
    {"--verbose", 'v', CK_OPT_FLAG, O(verbose), .help = "print every failing rank's diagnosis, not only the first"},
    {"  -h, --help           this text", .type = CK_OPT_HEADING},
    {NULL},
};

static const char preamble[] =
    "usage: mpirun -np P collcheck [options]\n"
    "       collcheck --algo list\n"
    "Checks collective algorithms (all-reduce by default): exact results on verifiable inputs (a wrong\n"
    "result is decoded: which ranks' contributions it holds, which element, which\n"
    "op, the previous call's result), random-float results within the rounding\n"
    "bound and bitwise identical on every rank, guard bytes (around both buffers\n"
    "and the ck_scratch space asked for, host memory), an unchanged send\n"
    "buffer, requests left posted and send/receive size mismatches, bytes sent\n"
    "against the declared formula, messages sent against the declared count (where\n"
    "the algorithm declares one), and hangs. Every case runs --repeat times (other\n"
    "inputs each call: state kept between calls shows); its line is printed before\n"
    "it runs, so a crash leaves the case it was in on the screen. A failed call is\n"
    "made again three times with the same inputs (the same wrong result, wrong only\n"
    "on a first call, state, or a result that changes: nondeterministic), and each\n"
    "algorithm with failures ends with a pattern line: what its failed cases share\n"
    "(only in place, only for i64, only when p does not divide the count, ...).\n";

static void defaults(cc_options *o)
{
    memset(o, 0, sizeof *o);
    o->algo_text = "all";
    o->dtypes = (1u << CK_NUM_DTYPES) - 1;
    o->ops = (1u << CK_NUM_OPS) - 1;
    o->inplace = 3;
    o->misaligned = 1;
    o->timeout = -1;   /* not given: the library's (COLLKIT_TIMEOUT, else 30 s) */
    o->mem = CK_MEM_HOST;
    o->repeat = 2;
    o->inputs = 3;
    o->dtype_text = o->op_text = "all";
}

static void usage(FILE *f)
{
    cc_options d;
    defaults(&d);
    fputs(preamble, f);
    ck_opt_help(f, options, &d);
    fputs("Exit: 0 all passed, 1 a case failed, 2 bad arguments.\n", f);
}

void cc_say_bad(FILE *f, const char *prog, const char *err)
{
    char text[1400];
    snprintf(text, sizeof text, "%s", err);
    const size_t name = strcspn(text, " ");
    const int value_refused = !strncmp(text, "--", 2) && !strncmp(text + name, " '", 2);
    char *paren = value_refused ? strstr(text, "': (") : NULL;
    if (paren) memmove(paren + 1, paren + 2, strlen(paren + 2) + 1);   /* "'x': (want" -> "'x' (want" */
    fprintf(f, "%s: %s%s\n", prog, value_refused ? "bad " : "", text);
}

/* A bad command line, said once (by the print rank), with where to look. */
static int bad(FILE *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(FILE *err, const char *fmt, ...)
{
    if (!err) return 2;
    char text[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cc_say_bad(err, "collcheck", text);
    fprintf(err, "(collcheck --help for the options)\n");
    return 2;
}

/* The transport and the buffer kind go together: shm and mpi move host
 * buffers, cuda-ipc device buffers. */
static int apply_transport(cc_options *o, FILE *err)
{
    const char *t = o->transport;
    if (!t) return 0;
    const int dev = !strcmp(t, "cuda-ipc") || !strcmp(t, "cuda");
    if (o->mem == CK_MEM_CUDA && !dev) return bad(err, "--transport %s moves host buffers, not --device cuda", t);
    o->mem = dev ? CK_MEM_CUDA : !strcmp(t, "shm") ? CK_MEM_HOST | CK_MEM_SHM : CK_MEM_HOST;
    return 0;
}

/* What the collective allows: random floats test the order of a sum across
 * ranks, which only an all-reduce's ranks must agree on; an all-gather
 * reduces nothing; avg is defined for floating types only. */
static int check_collective(cc_options *o, FILE *err)
{
    if (o->coll != CK_COLL_ALLREDUCE) {
        if (o->inputs == 2)
            return bad(err, "--inputs random checks all-reduce only (--coll %s takes exact inputs)", ck_coll_name(o->coll));
        o->inputs = 1;
    }
    if (o->coll == CK_COLL_ALLGATHER) {
        if (strcmp(o->op_text, "all") && o->ops != 1u << CK_SUM)
            return bad(err, "--op: an all-gather reduces nothing (leave --op out, or give sum)");
        o->ops = 1u << CK_SUM;
    }
    unsigned valid_ops = o->ops;
    if (!(o->dtypes & ((1u << CK_F32) | (1u << CK_F64) | (1u << CK_BF16)))) valid_ops &= ~(1u << CK_AVG);
    if (!valid_ops) return bad(err, "--op avg is defined for floating types only (f32, f64, bf16)");
    return 0;
}

/* Random floats are checked for sum and avg on f32, f64 and bf16, in
 * aligned buffers: with only those inputs, other choices leave no case (the
 * counts, which depend on p, are the driver's to check). Named here, not as
 * an empty run ("0 passed, 0 failed" reads as success). */
static int check_random_only(const cc_options *o, FILE *err)
{
    if (o->inputs != 2) return 0;
    const unsigned floats = (1u << CK_F32) | (1u << CK_F64) | (1u << CK_BF16);
    const unsigned sums = (1u << CK_SUM) | (1u << CK_AVG);
    if (!(o->dtypes & floats))
        return bad(err, "no case to run: --inputs random checks f32, f64 and bf16 only, and --dtype '%s' selects none "
                   "of them", o->dtype_text);
    if (!(o->ops & sums))
        return bad(err, "no case to run: --inputs random checks sum and avg only, and --op '%s' selects neither",
                   o->op_text);
    if (o->misaligned == 2)
        return bad(err, "no case to run: --inputs random has no misaligned cases, and --misaligned only leaves no other");
    return 0;
}

int cc_parse_args(int argc, char **argv, cc_options *o, int quiet)
{
    FILE *err = quiet ? NULL : stderr;
    const char *given[sizeof options / sizeof options[0]] = {0};
    char why[1024];
    defaults(o);
    switch (ck_opt_parse(options, argc, argv, o, given, why, sizeof why)) {
    case CK_OPT_HELP:
        if (!quiet) usage(stdout);
        return 0;
    case CK_OPT_BAD: return bad(err, "%s", why);
    }
    o->repeat_given = given[ck_opt_find(options, "--repeat") - options] != NULL;
    if (apply_transport(o, err)) return 2;
    if (!strcmp(o->algo_text, "list")) {
        if (!quiet) ck_coll_algo_print_table(o->coll, stdout);
        return 0;
    }
    if (ck_coll_algo_parse_list(o->coll, o->algo_text, o->mem, o->algos, CC_MAX_ALGOS, &o->nalgos, why, sizeof why))
        return bad(err, "--algo: %s", why);
    if (check_collective(o, err) || check_random_only(o, err)) return 2;
    return -1;
}
