/*
 * options.c — collcheck's arguments and --help. Parsed before MPI_Init on
 * every rank alike, so --help and --algo list work without mpirun and a bad
 * argument ends every rank with exit 2 without any communication; only the
 * print rank says why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_cli.h"
#include "collkit_util.h"

/* Counts and chunks up to 16 Gi: more than any buffer the checker allocates. */
#define MAX_SIZE (1ull << 34)

static void usage(FILE *f)
{
    fprintf(f,
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
        "(only in place, only for i64, only when p does not divide the count, ...).\n"
        "  --coll allreduce|reduce_scatter|allgather  the collective checked (default allreduce).\n"
        "                     reduce_scatter: rank r's result is block r of the reduction;\n"
        "                     allgather: every rank's block everywhere (no --op); both with\n"
        "                     exact inputs only (collkit.h: ck_reduce_scatter, ck_allgather)\n"
        "  --algo NAME[,NAME..]|all|list  algorithms of that collective to check (default all)\n"
        "  --count N[,N..]    element counts; N may be p, p-1, p+1 or use K/M (x1024)\n"
        "                     (default 0,1,p-1,p,p+1,%d,%d)\n"
        "  --dtype T[,T..]|all  f32 f64 i32 i64 bf16 (default all)\n"
        "  --op O[,O..]|all     sum prod min max avg (default all; avg on floating types only)\n"
        "  --inplace 0|1|both   out-of-place, in-place or both (default both)\n"
        "  --misaligned 0|1|only  add cases with buffers one element past the allocator's\n"
        "                     64-byte alignment (default 1)\n"
        "  --inputs exact|random|both  exact integer inputs, random floats (sum and avg on\n"
        "                     f32, f64, bf16: results bitwise equal across ranks and within\n"
        "                     the rounding bound of the exact sum), or both (default both)\n"
        "  --repeat N         calls per case, each with other inputs (default 2; a larger N\n"
        "                     is a stress test for races; a failure names its call)\n"
        "  --timeout SEC      watchdog bound for any wait (default: COLLKIT_TIMEOUT, else 30;\n"
        "                     0 = off): a rank that stops ends the run within 1.5 x SEC, named\n"
        "  --chunk BYTES      pipeline chunk for chunked algorithms (default: the library's)\n"
        "  --device host|cuda buffer kind: host memory (MPI) or CUDA device memory (CUDA IPC; default host)\n"
        "  --transport mpi|shm|cuda-ipc  how bytes move: mpi (host, default), shm (host buffers in\n"
        "                     memory the ranks of one node share; adds oneshot and twoshot), cuda-ipc\n"
        "                     (device buffers, the same as --device cuda)\n"
        "  --quick            a smaller matrix (what the test suite runs)\n"
        "  --seed S           another set of exact and random inputs (an integer; default 0): results\n"
        "                     cannot be known before S is chosen, diagnoses decode them the same way\n"
        "  --results FILE     write what every call produced (each rank's result digest and counted\n"
        "                     traffic) for collverify, which checks it outside this process; a file\n"
        "                     that holds something is refused before any case runs\n"
        "  --overwrite        write over an existing --results file\n"
        "  --require-msgs     fail an algorithm whose descriptor declares no message count (msgs_sent)\n"
        "  --leaks            fail a call after which the heap in use grew by its buffers and 256 KiB or\n"
        "                     more (memory taken in every call, never freed); a heuristic, off by\n"
        "                     default: MPI's own buffers for large messages can grow the heap too\n"
        "  -v, --verbose      print every failing rank's diagnosis, not only the first\n"
        "  -h, --help         this text\n"
        "Exit: 0 all passed, 1 a case failed, 2 bad arguments.\n", CC_PRIME, CC_BIG);
}

static int bad_count(ck_sbuf *e, const char *spec, const char *entry, const char *why)
{
    if (strchr(spec, ',')) ck_sbuf_add(e, "'%s': ", entry);   /* name the entry among several */
    ck_sbuf_add(e, "%s", why);
    return -1;
}

/* "0,1,p-1,p,64K": each entry absolute or relative to p. On a bad entry,
 * err says what is wrong with it. */
static int parse_counts(const char *spec, cc_options *o, char *err, size_t errlen)
{
    char buf[512], why[128];
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    if (!*spec) { ck_sbuf_add(&e, "an empty list"); return -1; }
    if (strlen(spec) >= sizeof buf) { ck_sbuf_add(&e, "too long (at most %zu characters)", sizeof buf - 1); return -1; }
    strcpy(buf, spec);
    o->ncounts = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->ncounts == CC_MAX_COUNTS) {
            snprintf(why, sizeof why, "more than %d counts", CC_MAX_COUNTS);
            return bad_count(&e, "", t, why);
        }
        cc_count_spec *c = &o->counts[o->ncounts++];
        const char *num = t;
        c->rel = t[0] == 'p';
        if (c->rel) {
            if (!t[1]) { c->v = 0; continue; }
            if (t[1] != '+' && t[1] != '-') return bad_count(&e, spec, t, "not p, p+N or p-N");
            num = t + 2;
        }
        uint64_t v;
        if (ck_parse_size(num, MAX_SIZE, &v, why, sizeof why)) return bad_count(&e, spec, t, why);
        c->v = c->rel && t[1] == '-' ? -(long long)v : (long long)v;
    }
    if (!o->ncounts) { ck_sbuf_add(&e, "no count named, only commas"); return -1; }
    return 0;
}

/* "f32,i64" or "all" into a bit mask; entries as --algo takes them (empty
 * ones between commas skipped, at least one named). On a bad list, err
 * says what is wrong with it. */
static int parse_mask(const char *spec, int is_dtype, unsigned *mask, char *err, size_t errlen)
{
    char buf[256];
    ck_sbuf e;
    ck_sbuf_init(&e, err, errlen);
    *mask = 0;
    if (!strcmp(spec, "all")) { *mask = is_dtype ? (1u << CK_NUM_DTYPES) - 1 : (1u << CK_NUM_OPS) - 1; return 0; }
    if (!*spec) { ck_sbuf_add(&e, "an empty list"); return -1; }
    if (strlen(spec) >= sizeof buf) { ck_sbuf_add(&e, "too long (at most %zu characters)", sizeof buf - 1); return -1; }
    strcpy(buf, spec);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ck_dtype dt;
        ck_op op;
        if (is_dtype ? ck_dtype_parse(t, &dt) : ck_op_parse(t, &op)) {
            if (strchr(spec, ',')) ck_sbuf_add(&e, "unknown %s '%s'", is_dtype ? "type" : "op", t);
            else ck_sbuf_add(&e, "unknown %s", is_dtype ? "type" : "op");
            return -1;
        }
        *mask |= 1u << (is_dtype ? (int)dt : (int)op);
    }
    if (!*mask) { ck_sbuf_add(&e, "no %s named, only commas", is_dtype ? "type" : "op"); return -1; }
    return 0;
}

/* "0" / "1" / a word for both (or for "only"), as --inplace and --misaligned take them. */
static int parse_choice(const char *val, const char *third, const int values[3], int *out)
{
    const char *names[3] = {"0", "1", third};
    for (int i = 0; i < 3; i++)
        if (!strcmp(val, names[i])) { *out = values[i]; return 0; }
    return -1;
}

static void defaults(cc_options *o)
{
    memset(o, 0, sizeof *o);
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

int cc_parse_args(int argc, char **argv, cc_options *o, int quiet)
{
    FILE *err = quiet ? NULL : stderr;
    const char *algo_spec = "all", *transport = NULL;
    char why[1024];
    defaults(o);
#define BAD(...) do { if (err) { fprintf(err, "collcheck: " __VA_ARGS__); fprintf(err, "\n(collcheck --help for the options)\n"); } return 2; } while (0)
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *val = NULL, name[64];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { if (!quiet) usage(stdout); return 0; }
        if (!strcmp(a, "--quick")) { o->quick = 1; continue; }
        if (!strcmp(a, "--require-msgs")) { o->require_msgs = 1; continue; }
        if (!strcmp(a, "--leaks")) { o->leaks = 1; continue; }
        if (!strcmp(a, "--overwrite")) { o->overwrite = 1; continue; }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) { o->verbose = 1; continue; }
        if (strncmp(a, "--", 2)) BAD("unexpected argument '%s'", a);
        char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        if (n >= sizeof name) BAD("unknown option '%s'", a);
        memcpy(name, a, n);
        name[n] = '\0';
        static const char *const known[] = {"--algo", "--coll", "--count", "--dtype", "--op", "--inplace",
                                            "--misaligned", "--timeout", "--chunk", "--device", "--repeat",
                                            "--inputs", "--transport", "--seed", "--results"};
        int found = 0;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) found |= !strcmp(name, known[k]);
        if (!found) BAD("unknown option '%s'", name);
        if (eq) val = eq + 1;
        else if (i + 1 < argc) val = argv[++i];
        else BAD("option %s needs a value", name);
        if (!strcmp(name, "--algo")) algo_spec = val;
        else if (!strcmp(name, "--coll")) {
            if (ck_coll_parse(val, &o->coll)) BAD("bad --coll '%s' (want allreduce, reduce_scatter or allgather)", val);
        }
        else if (!strcmp(name, "--count")) {
            if (parse_counts(val, o, why, sizeof why))
                BAD("bad --count '%s'%s%s (want N[,N..] with N >= 0, or p, p-1, p+1)", val, *why ? ": " : "", why);
            o->count_text = val;
        } else if (!strcmp(name, "--dtype")) {
            if (parse_mask(val, 1, &o->dtypes, why, sizeof why))
                BAD("bad --dtype '%s': %s (want T[,T..] of f32, f64, i32, i64, bf16, or all)", val, why);
            o->dtype_text = val;
        } else if (!strcmp(name, "--op")) {
            if (parse_mask(val, 0, &o->ops, why, sizeof why))
                BAD("bad --op '%s': %s (want O[,O..] of sum, prod, min, max, avg, or all)", val, why);
            o->op_text = val;
        }
        else if (!strcmp(name, "--inplace")) {
            static const int v[3] = {1, 2, 3};
            if (parse_choice(val, "both", v, &o->inplace)) BAD("bad --inplace '%s' (want 0, 1 or both)", val);
        } else if (!strcmp(name, "--misaligned")) {
            static const int v[3] = {0, 1, 2};
            if (parse_choice(val, "only", v, &o->misaligned)) BAD("bad --misaligned '%s' (want 0, 1 or only)", val);
        } else if (!strcmp(name, "--inputs")) {
            if (!strcmp(val, "exact")) o->inputs = 1;
            else if (!strcmp(val, "random")) o->inputs = 2;
            else if (!strcmp(val, "both")) o->inputs = 3;
            else BAD("bad --inputs '%s' (want exact, random or both)", val);
        } else if (!strcmp(name, "--repeat")) {
            long long v;
            if (ck_parse_int(val, 1, 1000000, &v, why, sizeof why)) BAD("bad --repeat '%s': %s", val, why);
            o->repeat = (int)v;
            o->repeat_given = 1;
        } else if (!strcmp(name, "--seed")) {
            if (cc_parse_seed(val, &o->seed)) BAD("bad --seed '%s' (want an integer from 0 to 2^64-1)", val);
        } else if (!strcmp(name, "--results")) {
            if (!*val) BAD("bad --results '': want a file name");
            o->results = val;
        } else if (!strcmp(name, "--timeout")) {
            if (ck_parse_double(val, 0, 1e6, &o->timeout, why, sizeof why))
                BAD("bad --timeout '%s': %s (want seconds, 0 = off)", val, why);
        } else if (!strcmp(name, "--chunk")) {
            uint64_t v;
            if (ck_parse_size(val, MAX_SIZE, &v, why, sizeof why)) BAD("bad --chunk '%s': %s", val, why);
            if (!v) BAD("bad --chunk '%s' (want bytes > 0)", val);
            o->chunk = (size_t)v;
        } else if (!strcmp(name, "--device")) {
            if (!strcmp(val, "host")) o->mem = CK_MEM_HOST;
            else if (!strcmp(val, "cuda")) o->mem = CK_MEM_CUDA;
            else BAD("bad --device '%s' (want host or cuda)", val);
        } else if (!strcmp(name, "--transport")) {
            if (strcmp(val, "mpi") && strcmp(val, "shm") && strcmp(val, "cuda-ipc") && strcmp(val, "cuda"))
                BAD("bad --transport '%s' (want mpi, shm or cuda-ipc)", val);
            transport = val;
        } else BAD("unknown option '%s'", name);
    }
    if (transport) {
        /* The transport and the buffer kind go together: shm and mpi move
         * host buffers, cuda-ipc device buffers. */
        int dev = !strcmp(transport, "cuda-ipc") || !strcmp(transport, "cuda");
        if (o->mem == CK_MEM_CUDA && !dev) BAD("--transport %s moves host buffers, not --device cuda", transport);
        o->mem = dev ? CK_MEM_CUDA : !strcmp(transport, "shm") ? CK_MEM_HOST | CK_MEM_SHM : CK_MEM_HOST;
    }
    if (!strcmp(algo_spec, "list")) {
        if (!quiet) ck_coll_algo_print_table(o->coll, stdout);
        return 0;
    }
    if (ck_coll_algo_parse_list(o->coll, algo_spec, o->mem, o->algos, CC_MAX_ALGOS, &o->nalgos, why, sizeof why))
        BAD("--algo: %s", why);
    /* Random floats test the order of a sum across ranks, which only an
     * all-reduce's ranks must agree on; an all-gather reduces nothing. */
    if (o->coll != CK_COLL_ALLREDUCE) {
        if (o->inputs == 2) BAD("--inputs random checks all-reduce only (--coll %s takes exact inputs)", ck_coll_name(o->coll));
        o->inputs = 1;
    }
    if (o->coll == CK_COLL_ALLGATHER) {
        if (strcmp(o->op_text, "all") && o->ops != 1u << CK_SUM)
            BAD("--op: an all-gather reduces nothing (leave --op out, or give sum)");
        o->ops = 1u << CK_SUM;
    }
    unsigned valid_ops = o->ops;
    if (!(o->dtypes & ((1u << CK_F32) | (1u << CK_F64) | (1u << CK_BF16)))) valid_ops &= ~(1u << CK_AVG);
    if (!valid_ops) BAD("--op avg is defined for floating types only (f32, f64, bf16)");
    /* Random floats are checked for sum and avg on f32, f64 and bf16, in
     * aligned buffers: with only those inputs, other choices leave no case
     * (the counts, which depend on p, are the driver's to check). Named here,
     * not as an empty run ("0 passed, 0 failed" reads as success). */
    if (o->inputs == 2) {
        const unsigned floats = (1u << CK_F32) | (1u << CK_F64) | (1u << CK_BF16);
        const unsigned sums = (1u << CK_SUM) | (1u << CK_AVG);
        if (!(o->dtypes & floats))
            BAD("no case to run: --inputs random checks f32, f64 and bf16 only, and --dtype '%s' selects none of them",
                o->dtype_text);
        if (!(o->ops & sums))
            BAD("no case to run: --inputs random checks sum and avg only, and --op '%s' selects neither", o->op_text);
        if (o->misaligned == 2)
            BAD("no case to run: --inputs random has no misaligned cases, and --misaligned only leaves no other");
    }
    return -1;
#undef BAD
}
