/*
 * collcheck.c — the checker's command line: runs a matrix of all-reduce cases
 * (count x dtype x op x in-place x alignment) through ck_allreduce for each
 * selected algorithm, and checks every case four ways:
 *
 *   result    bit-exact against cc_expected, with a diagnosis when wrong;
 *   guards    64 bytes before and after every buffer (recv and send) must be
 *             untouched, and an out-of-place send buffer must be unchanged;
 *   traffic   bytes sent per rank (counted by the point-to-point layer) must
 *             equal the algorithm's declared bytes_sent formula, exactly;
 *   hangs     the communicator's watchdog turns a hang into CK_ERR_TIMEOUT
 *             with "rank R waited for rank Q at step S"; the checker's own
 *             agreement among ranks is polled with a deadline too, so the run
 *             ends within a bound whatever the algorithm does.
 *
 * Rank 0 prints one line per case and the closing line "N passed, M failed";
 * the exit code is 0 only when nothing failed (2 for bad arguments).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check_internal.h"
#include "collkit_util.h"

#define GUARD      64      /* guard bytes before and after every buffer */
#define GUARD_BYTE 0xCB
#define FILL_BYTE  0xA5    /* out-of-place recvbuf before the call: "never written" is recognisable */
#define MAX_ALGOS  64
#define MAX_COUNTS 32
#define PRIME      1021
#define BIG        1048577 /* >= 1 Mi, odd: uneven blocks for every p > 1 */

typedef struct {
    int    rel;      /* 1: p + v (v may be negative) */
    long long v;
} count_spec;

typedef struct {
    const ck_algo *algos[MAX_ALGOS];
    int        nalgos;
    count_spec counts[MAX_COUNTS];
    int        ncounts;          /* 0: the default matrix */
    unsigned   dtypes, ops;      /* bit masks */
    int        inplace;          /* bit 0: out-of-place, bit 1: in-place */
    int        misaligned;       /* 0 off, 1 add misaligned cases, 2 only misaligned */
    double     timeout;
    size_t     chunk;
    int        quick, verbose;
    unsigned   mem;
} options;

typedef struct {
    size_t   count;
    ck_dtype dt;
    ck_op    op;
    int      inplace, misaligned;
} case_t;

/* What one rank reports about one case (gathered to rank 0 on failure). */
typedef struct {
    int  fail, status, poisoned;
    char msg[1500];
} case_res;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mpirun -np P collcheck [options]\n"
        "       collcheck --algo list\n"
        "Checks all-reduce algorithms: exact results on verifiable inputs, guard bytes,\n"
        "an unchanged send buffer, bytes sent against the declared formula, and hangs.\n"
        "  --algo NAME[,NAME..]|all|list  algorithms to check (default all)\n"
        "  --count N[,N..]    element counts; N may be p, p-1, p+1 or use K/M (x1024)\n"
        "                     (default 0,1,p-1,p,p+1,%d,%d)\n"
        "  --dtype T[,T..]|all  f32 f64 i32 i64 bf16 (default all)\n"
        "  --op O[,O..]|all     sum prod min max avg (default all; avg on floating types only)\n"
        "  --inplace 0|1|both   out-of-place, in-place or both (default both)\n"
        "  --misaligned 0|1|only  add cases with buffers one element past the allocator's\n"
        "                     64-byte alignment (default 1)\n"
        "  --timeout SEC      watchdog bound for any wait (default 30; 0 = off)\n"
        "  --chunk BYTES      pipeline chunk for chunked algorithms (default: the library's)\n"
        "  --device host|cuda buffer kind: host memory (MPI) or CUDA device memory (CUDA IPC; default host)\n"
        "  --quick            a smaller matrix (what the test suite runs)\n"
        "  -v, --verbose      print every failing rank's diagnosis, not only the first\n"
        "  -h, --help         this text\n"
        "Exit: 0 all passed, 1 a case failed, 2 bad arguments.\n", PRIME, BIG);
}

/* Counts and chunks up to 16 Gi: more than any buffer the checker allocates. */
static int parse_size(const char *s, long long *out)
{
    uint64_t v;
    if (ck_parse_size(s, 1ull << 34, &v, NULL, 0)) return -1;
    *out = (long long)v;
    return 0;
}

static int parse_counts(const char *spec, options *o)
{
    char buf[512];
    if (strlen(spec) >= sizeof buf || !*spec) return -1;
    strcpy(buf, spec);
    o->ncounts = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->ncounts == MAX_COUNTS) return -1;
        count_spec *c = &o->counts[o->ncounts++];
        if (t[0] == 'p') {
            c->rel = 1;
            if (!t[1]) c->v = 0;
            else if ((t[1] == '+' || t[1] == '-') && parse_size(t + 2, &c->v) == 0) { if (t[1] == '-') c->v = -c->v; }
            else return -1;
        } else {
            c->rel = 0;
            if (parse_size(t, &c->v)) return -1;
        }
    }
    return o->ncounts ? 0 : -1;
}

static int parse_mask(const char *spec, int is_dtype, unsigned *mask)
{
    char buf[256];
    *mask = 0;
    if (!strcmp(spec, "all")) { *mask = is_dtype ? (1u << CK_NUM_DTYPES) - 1 : (1u << CK_NUM_OPS) - 1; return 0; }
    if (strlen(spec) >= sizeof buf || !*spec) return -1;
    strcpy(buf, spec);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ck_dtype dt;
        ck_op op;
        if (is_dtype ? ck_dtype_parse(t, &dt) : ck_op_parse(t, &op)) return -1;
        *mask |= 1u << (is_dtype ? (int)dt : (int)op);
    }
    return 0;
}

/* All ranks parse the same argv; only rank 0 (by the launcher's environment,
 * before MPI_Init) prints. Returns -1 to go on, or the exit code. */
static int parse_args(int argc, char **argv, options *o, int quiet)
{
    FILE *err = quiet ? NULL : stderr;
    const char *algo_spec = "all";
    memset(o, 0, sizeof *o);
    o->dtypes = (1u << CK_NUM_DTYPES) - 1;
    o->ops = (1u << CK_NUM_OPS) - 1;
    o->inplace = 3;
    o->misaligned = 1;
    o->timeout = 30;
    o->mem = CK_MEM_HOST;
#define BAD(...) do { if (err) { fprintf(err, "collcheck: " __VA_ARGS__); fprintf(err, "\n(collcheck --help for the options)\n"); } return 2; } while (0)
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *val = NULL, name[64];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { if (!quiet) usage(stdout); return 0; }
        if (!strcmp(a, "--quick")) { o->quick = 1; continue; }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) { o->verbose = 1; continue; }
        if (strncmp(a, "--", 2)) BAD("unexpected argument '%s'", a);
        char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        if (n >= sizeof name) BAD("unknown option '%s'", a);
        memcpy(name, a, n);
        name[n] = '\0';
        static const char *const known[] = {"--algo", "--count", "--dtype", "--op", "--inplace",
                                            "--misaligned", "--timeout", "--chunk", "--device"};
        int found = 0;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) found |= !strcmp(name, known[k]);
        if (!found) BAD("unknown option '%s'", name);
        if (eq) val = eq + 1;
        else if (i + 1 < argc) val = argv[++i];
        else BAD("option %s needs a value", name);
        char *end;
        if (!strcmp(name, "--algo")) algo_spec = val;
        else if (!strcmp(name, "--count")) { if (parse_counts(val, o)) BAD("bad --count '%s' (want N[,N..] with N >= 0, or p, p-1, p+1)", val); }
        else if (!strcmp(name, "--dtype")) { if (parse_mask(val, 1, &o->dtypes)) BAD("bad --dtype '%s' (want f32, f64, i32, i64, bf16 or all)", val); }
        else if (!strcmp(name, "--op")) { if (parse_mask(val, 0, &o->ops)) BAD("bad --op '%s' (want sum, prod, min, max, avg or all)", val); }
        else if (!strcmp(name, "--inplace")) {
            if (!strcmp(val, "0")) o->inplace = 1;
            else if (!strcmp(val, "1")) o->inplace = 2;
            else if (!strcmp(val, "both")) o->inplace = 3;
            else BAD("bad --inplace '%s' (want 0, 1 or both)", val);
        } else if (!strcmp(name, "--misaligned")) {
            if (!strcmp(val, "0")) o->misaligned = 0;
            else if (!strcmp(val, "1")) o->misaligned = 1;
            else if (!strcmp(val, "only")) o->misaligned = 2;
            else BAD("bad --misaligned '%s' (want 0, 1 or only)", val);
        } else if (!strcmp(name, "--timeout")) {
            o->timeout = strtod(val, &end);
            if (end == val || *end || o->timeout < 0 || o->timeout > 1e6) BAD("bad --timeout '%s' (want seconds >= 0)", val);
        } else if (!strcmp(name, "--chunk")) {
            long long v;
            if (parse_size(val, &v) || v <= 0) BAD("bad --chunk '%s' (want bytes > 0)", val);
            o->chunk = (size_t)v;
        } else if (!strcmp(name, "--device")) {
            if (!strcmp(val, "host")) o->mem = CK_MEM_HOST;
            else if (!strcmp(val, "cuda")) o->mem = CK_MEM_CUDA;
            else BAD("bad --device '%s' (want host or cuda)", val);
        } else BAD("unknown option '%s'", name);
    }
    if (!strcmp(algo_spec, "list")) {
        if (!quiet) ck_algo_print_table(stdout);
        return 0;
    }
    char why[1024];
    if (ck_algo_parse_list(algo_spec, o->mem, o->algos, MAX_ALGOS, &o->nalgos, why, sizeof why))
        BAD("--algo: %s", why);
    unsigned valid_ops = o->ops;
    if (!(o->dtypes & ((1u << CK_F32) | (1u << CK_F64) | (1u << CK_BF16)))) valid_ops &= ~(1u << CK_AVG);
    if (!valid_ops) BAD("--op avg is defined for floating types only (f32, f64, bf16)");
    return -1;
#undef BAD
}

/* ------------------------------------------------------------ the matrix */

static int add_count(size_t *c, int n, long long v)
{
    if (v < 0) return n;
    for (int i = 0; i < n; i++)
        if (c[i] == (size_t)v) return n;
    c[n++] = (size_t)v;
    return n;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The cases for p ranks. Returns the number written to out (malloc'd). */
static int build_matrix(const options *o, int p, case_t **out)
{
    size_t counts[MAX_COUNTS + 8];
    int nc = 0;
    if (o->ncounts) {
        for (int i = 0; i < o->ncounts; i++)
            nc = add_count(counts, nc, o->counts[i].rel ? p + o->counts[i].v : o->counts[i].v);
    } else {
        const long long def[] = {0, 1, p - 1, p, p + 1, PRIME};
        for (int i = 0; i < 6; i++) nc = add_count(counts, nc, def[i]);
        if (!o->quick) nc = add_count(counts, nc, BIG);
    }
    qsort(counts, (size_t)nc, sizeof counts[0], cmp_size);

    int cap = nc * CK_NUM_DTYPES * CK_NUM_OPS * 2 * 2 + 4, n = 0;
    case_t *c = malloc((size_t)cap * sizeof *c);
    if (!c) return 0;
    int first_dt = -1, first_op = -1;
    for (int dt = 0; dt < CK_NUM_DTYPES; dt++) {
        if (!(o->dtypes >> dt & 1)) continue;
        for (int op = 0; op < CK_NUM_OPS; op++) {
            if (!(o->ops >> op & 1) || (op == CK_AVG && !ck_dtype_is_float((ck_dtype)dt))) continue;
            if (first_dt < 0 || (dt == CK_F32 && first_dt != CK_F32)) { first_dt = dt; first_op = op; }
            for (int k = 0; k < nc; k++)
                for (int ip = 0; ip < 2; ip++) {
                    if (!(o->inplace >> ip & 1)) continue;
                    if (o->misaligned < 2) c[n++] = (case_t){counts[k], (ck_dtype)dt, (ck_op)op, ip, 0};
                }
        }
    }
    /* Misaligned buffers: one per (dtype, op) at the prime count (the largest
     * count <= the prime when --count is given); --quick: one op per dtype;
     * --misaligned only: every case. */
    for (int dt = 0; dt < CK_NUM_DTYPES && o->misaligned; dt++) {
        if (!(o->dtypes >> dt & 1)) continue;
        for (int op = 0; op < CK_NUM_OPS; op++) {
            if (!(o->ops >> op & 1) || (op == CK_AVG && !ck_dtype_is_float((ck_dtype)dt))) continue;
            for (int k = 0; k < nc; k++) {
                int pick = o->misaligned == 2;
                if (!pick) {
                    size_t best = 0;
                    for (int j = 0; j < nc; j++)
                        if (counts[j] <= PRIME && counts[j] > best) best = counts[j];
                    pick = counts[k] == best && best > 0;
                }
                if (!pick) continue;
                for (int ip = 0; ip < 2; ip++)
                    if (o->inplace >> ip & 1) c[n++] = (case_t){counts[k], (ck_dtype)dt, (ck_op)op, ip, 1};
            }
            if (o->quick && o->misaligned < 2) break;
        }
    }
    /* --quick keeps the >= 1 Mi count to one case: it is the one that crosses
     * the pipelining and eager/rendezvous thresholds. */
    if (o->quick && !o->ncounts && first_dt >= 0 && (o->inplace & 1) && o->misaligned < 2)
        c[n++] = (case_t){BIG, (ck_dtype)first_dt, (ck_op)first_op, 0, 0};
    *out = c;
    return n;
}

/* ------------------------------------------------------------ one case */

/* A buffer under test: host image (guards + data) and the device copy. */
typedef struct {
    size_t total, data_off;
    unsigned char *host, *back;   /* before the call / read back after */
    void *dev;
} gbuf;

static int gbuf_alloc(ck_comm *comm, gbuf *g, size_t bytes, size_t shift)
{
    memset(g, 0, sizeof *g);
    g->data_off = GUARD + shift;
    g->total = g->data_off + bytes + GUARD;
    g->host = malloc(g->total);
    g->back = malloc(g->total);
    g->dev = ck_alloc(comm, g->total);
    if (!g->host || !g->back || !g->dev) return -1;
    memset(g->host, GUARD_BYTE, g->total);
    return 0;
}

static void gbuf_free(ck_comm *comm, gbuf *g)
{
    free(g->host);
    free(g->back);
    ck_free(comm, g->dev);
}

/* Bytes written outside the data: report the farthest one after the end and
 * the farthest one before the start, in elements. */
static void check_guards(const gbuf *g, size_t bytes, size_t es, const char *what, char *msg, size_t cap, size_t *len)
{
    const unsigned char *b = g->back;
    size_t last = 0, first = 0;
    for (size_t k = g->data_off + bytes; k < g->total; k++)
        if (b[k] != GUARD_BYTE) last = k - (g->data_off + bytes) + 1;
    for (size_t k = 0; k < g->data_off; k++)
        if (b[k] != GUARD_BYTE) { first = g->data_off - k; break; }
    if (last)
        *len += (size_t)snprintf(msg + *len, *len < cap ? cap - *len : 0,
                                 "%sguard after %s overwritten: wrote %zu element%s past the end",
                                 *len ? "; " : "", what, (last + es - 1) / es, (last + es - 1) / es == 1 ? "" : "s");
    if (first)
        *len += (size_t)snprintf(msg + *len, *len < cap ? cap - *len : 0,
                                 "%sguard before %s overwritten: wrote %zu element%s before the start",
                                 *len ? "; " : "", what, (first + es - 1) / es, (first + es - 1) / es == 1 ? "" : "s");
    if (*len >= cap) *len = cap - 1;
}

static void run_case(ck_comm *comm, const ck_algo *algo, const case_t *cs, case_res *res)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(cs->dt), bytes = cs->count * es;
    /* Misaligned: one element past 64-byte alignment for recv, three for send,
     * so the two buffers are also misaligned relative to each other. Offsets
     * stay whole elements: a double at a 4-byte address is undefined
     * behaviour in C (and UBSan says so), not a case an algorithm must handle. */
    const size_t rshift = cs->misaligned ? es : 0, sshift = cs->misaligned ? 3 * es : 0;
    gbuf r, s;
    size_t len = 0;
    memset(res, 0, sizeof *res);
    memset(&s, 0, sizeof s);
    int ok = gbuf_alloc(comm, &r, bytes, rshift) == 0;
    if (!cs->inplace) ok &= gbuf_alloc(comm, &s, bytes, sshift) == 0;
    void *rdev = NULL;
    const void *sdev = CK_IN_PLACE;
    const unsigned char *own = NULL;
    if (ok) {
        if (cs->inplace) {
            cc_fill(r.host + r.data_off, cs->count, cs->dt, cs->op, rank, p);
            own = r.host + r.data_off;
        } else {
            memset(r.host + r.data_off, FILL_BYTE, bytes);
            cc_fill(s.host + s.data_off, cs->count, cs->dt, cs->op, rank, p);
            own = s.host + s.data_off;
            ok &= ck_upload(comm, s.dev, s.host, s.total) == CK_SUCCESS;
            sdev = (char *)s.dev + s.data_off;
        }
        ok &= ck_upload(comm, r.dev, r.host, r.total) == CK_SUCCESS;
        rdev = (char *)r.dev + r.data_off;
    }
    if (!ok) {
        /* A NULL buffer makes ck_allreduce reject the call on this rank and
         * tell the others, so no rank is left waiting. */
        snprintf(res->msg, sizeof res->msg, "rank %d: could not allocate or upload %zu B buffers", rank, bytes);
        res->fail = 1;
        rdev = NULL;
        sdev = NULL;
    }

    ck_counters_reset(comm);
    int rc = ck_allreduce(comm, algo, sdev, rdev, cs->count, cs->dt, cs->op);
    ck_counters ctr;
    ck_counters_get(comm, &ctr);
    res->status = rc;
    if (rc == CK_ERR_TIMEOUT || rc == CK_ERR_TRANSPORT) res->poisoned = 1;
    if (!ok) goto out;
    if (rc != CK_SUCCESS) {
        res->fail = 1;
        snprintf(res->msg, sizeof res->msg, "rank %d: ck_allreduce returned '%s': %s", rank,
                 ck_strerror(rc), ck_comm_errmsg(comm));
        goto out;
    }

    const size_t cap = sizeof res->msg;
    ck_download(comm, r.back, r.dev, r.total);
    check_guards(&r, bytes, es, "recvbuf", res->msg, cap, &len);
    if (!cs->inplace) {
        ck_download(comm, s.back, s.dev, s.total);
        check_guards(&s, bytes, es, "sendbuf", res->msg, cap, &len);
        for (size_t i = 0; i < cs->count; i++)
            if (memcmp(s.back + s.data_off + i * es, s.host + s.data_off + i * es, es)) {
                char was[64], now[64];
                cc_format(was, sizeof was, s.host + s.data_off, i, cs->dt);
                cc_format(now, sizeof now, s.back + s.data_off, i, cs->dt);
                len += (size_t)snprintf(res->msg + len, len < cap ? cap - len : 0,
                                        "%ssend buffer modified: element %zu changed from %s to %s "
                                        "(an out-of-place all-reduce must not write sendbuf)",
                                        len ? "; " : "", i, was, now);
                if (len >= cap) len = cap - 1;
                break;
            }
    }
    {
        char diag[1200];
        size_t first = cc_diagnose(diag, sizeof diag, r.back + r.data_off, own, cs->inplace ? -1 : FILL_BYTE,
                                   cs->count, cs->dt, cs->op, rank, p, algo,
                                   ck_comm_config(comm));
        if (first < cs->count) {
            len += (size_t)snprintf(res->msg + len, len < cap ? cap - len : 0, "%s%s", len ? "; " : "", diag);
            if (len >= cap) len = cap - 1;
        }
    }
    if (!(algo->flags & CK_ALGO_REFERENCE)) {
        if (!algo->bytes_sent) {
            len += (size_t)snprintf(res->msg + len, len < cap ? cap - len : 0,
                                    "%straffic: '%s' declares no bytes_sent formula", len ? "; " : "", algo->name);
        } else {
            uint64_t want = algo->bytes_sent(p, rank, cs->count, es, ck_comm_config(comm));
            if (want != ctr.bytes_sent)
                len += (size_t)snprintf(res->msg + len, len < cap ? cap - len : 0,
                                        "%straffic: rank %d sent %llu B in %llu messages, but '%s' declares %llu B "
                                        "(%s; %.2fx the declared volume)",
                                        len ? "; " : "", rank, (unsigned long long)ctr.bytes_sent,
                                        (unsigned long long)ctr.msgs_sent, algo->name, (unsigned long long)want,
                                        algo->bytes_formula ? algo->bytes_formula : "no formula text",
                                        want ? (double)ctr.bytes_sent / (double)want : 0.0);
        }
        if (len >= cap) len = cap - 1;
    }
    res->fail = len > 0;
out:
    gbuf_free(comm, &r);
    if (!cs->inplace) gbuf_free(comm, &s);
}

/* ------------------------------------------------------------ agreement */

/* Poll a nonblocking collective until done or the deadline (limit <= 0: none).
 * The checker never blocks in an MPI collective: a rank that is gone or stuck
 * must not hang the others. */
static int wait_bounded(MPI_Request *rq, double limit)
{
    double t0 = ck_now();
    struct timespec nap = {0, 200000};
    for (unsigned long spin = 0;; spin++) {
        int done = 0;
        if (MPI_Test(rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
        if (done) return 0;
        if (limit > 0 && ck_now() - t0 > limit) return 1;
        if (spin > 1000) nanosleep(&nap, NULL);
    }
}

static void case_label(char *out, size_t cap, const case_t *c, const ck_algo *a, int width)
{
    snprintf(out, cap, "%-*s n=%-8zu %-4s %-4s %-12s%s", width, a->name, c->count, ck_dtype_name(c->dt),
             ck_op_name(c->op), c->inplace ? "in-place" : "out-of-place", c->misaligned ? " misaligned" : "");
}

static void finish_abort(int rank, int passed, int failed, const char *why)
{
    if (rank == 0) {
        printf("collcheck: %s\n", why);
        printf("%d passed, %d failed\n", passed, failed);
        fflush(stdout);
        fflush(stderr);
        struct timespec t = {0, 300000000};   /* let the launcher forward the output */
        nanosleep(&t, NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The other ranks give rank 0 time to print, then end themselves. */
    struct timespec t = {3, 0};
    nanosleep(&t, NULL);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int setup_comm(ck_comm **comm, const options *o)
{
    int rc = ck_comm_create(MPI_COMM_WORLD, o->mem, comm);
    if (rc) return rc;
    ck_config *cfg = ck_comm_config(*comm);
    cfg->timeout_s = o->timeout;
    if (o->chunk) cfg->chunk_bytes = o->chunk;
    cfg->validate = 1;
    return CK_SUCCESS;
}

int collcheck_main(int argc, char **argv)
{
    options o;
    /* Parse before MPI_Init: --help and --algo list work without mpirun, and
     * bad arguments end every rank the same way without any communication. */
    int code = parse_args(argc, argv, &o, !ck_is_print_rank());
    if (code >= 0) return code;

    int was_init = 0;
    MPI_Initialized(&was_init);
    if (!was_init) MPI_Init(&argc, &argv);
    /* Errors come back as codes (CK_ERR_TRANSPORT), e.g. a message longer than
     * the posted receive, instead of killing the job from inside MPI. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm ctl;
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl);

    ck_comm *comm = NULL;
    int rc = setup_comm(&comm, &o);
    if (rc) {
        if (rank == 0)
            fprintf(stderr, "collcheck: cannot create a communicator for %s buffers: %s\n",
                    o.mem == CK_MEM_HOST ? "host" : "cuda", ck_strerror(rc));
        MPI_Comm_free(&ctl);
        if (!was_init) MPI_Finalize();
        return 2;
    }
    ck_config *cfg = ck_comm_config(comm);

    case_t *cases = NULL;
    int ncases = build_matrix(&o, p, &cases);
    int width = 6;
    for (int a = 0; a < o.nalgos; a++)
        if ((int)strlen(o.algos[a]->name) > width) width = (int)strlen(o.algos[a]->name);
    if (rank == 0) {
        printf("collcheck: %d rank%s, %s buffers (%s transport), %d cases per algorithm, "
               "timeout %g s, chunk %zu B\n", p, p == 1 ? "" : "s", o.mem == CK_MEM_HOST ? "host" : "cuda",
               ck_comm_transport_name(comm), ncases, cfg->timeout_s, cfg->chunk_bytes);
        fflush(stdout);
    }

    /* The agreement deadline: longer than any single watchdog wait, so a rank
     * that timed out has time to arrive and say so. */
    const double limit = o.timeout > 0 ? 2 * o.timeout + 10 : 0;
    int passed = 0, failed = 0;
    case_res *all = rank == 0 ? malloc((size_t)p * sizeof *all) : NULL;
    case_res res;
    for (int a = 0; a < o.nalgos; a++) {
        const ck_algo *algo = o.algos[a];
        if (rank == 0 && (algo->flags & CK_ALGO_REFERENCE)) {
            printf("%-*s traffic: not counted (reference)\n", width, algo->name);
            fflush(stdout);
        }
        for (int k = 0; k < ncases; k++) {
            const case_t *cs = &cases[k];
            char label[160];
            case_label(label, sizeof label, cs, algo, width);
            run_case(comm, algo, cs, &res);

            int loc[2] = {res.fail, res.poisoned}, glob[2] = {0, 0};
            MPI_Request rq;
            int w = MPI_Iallreduce(loc, glob, 2, MPI_INT, MPI_MAX, ctl, &rq) == MPI_SUCCESS ? wait_bounded(&rq, limit) : -1;
            if (w == 0 && glob[0]) {
                if (MPI_Igather(&res, (int)sizeof res, MPI_BYTE, all, (int)sizeof res, MPI_BYTE, 0, ctl, &rq) != MPI_SUCCESS)
                    w = -1;
                else
                    w = wait_bounded(&rq, limit);
            }
            if (w != 0) {
                char why[512];
                snprintf(why, sizeof why, "rank %d gave up after %.0f s waiting for the other ranks to finish "
                         "'%s' (a rank is stuck where no watchdog reaches)", rank, limit, label);
                if (rank != 0) fprintf(stderr, "collcheck: %s\n", why);
                else printf("%s  FAIL  %s\n", label, res.fail ? res.msg : "(no result from the other ranks)");
                finish_abort(rank, passed, failed + 1, why);
            }
            if (!glob[0]) {
                passed++;
                if (rank == 0) { printf("%s  PASS\n", label); fflush(stdout); }
                continue;
            }
            failed++;
            if (rank == 0) {
                /* The first failing rank speaks; a rank whose watchdog fired
                 * goes first, since its message names the stuck step. */
                int who = -1, nf = 0;
                for (int q = 0; q < p; q++)
                    if (all[q].fail) {
                        nf++;
                        if (who < 0 || (all[q].status == CK_ERR_TIMEOUT && all[who].status != CK_ERR_TIMEOUT)) who = q;
                    }
                printf("%s  FAIL  %s", label, who >= 0 ? all[who].msg : "?");
                if (nf > 1) {
                    printf(" [failed on %d of %d ranks:", nf, p);
                    for (int q = 0; q < p; q++)
                        if (all[q].fail) printf(" %d", q);
                    printf("]");
                }
                printf("\n");
                if (o.verbose)
                    for (int q = 0; q < p; q++)
                        if (all[q].fail && q != who) printf("    %s\n", all[q].msg);
                fflush(stdout);
            }
            if (glob[1])
                finish_abort(rank, passed, failed,
                             "stopping: after a watchdog timeout or transport error messages may still be in "
                             "flight, so later cases could not be trusted");
            /* A failed algorithm may have left unmatched messages behind:
             * start the next case on a fresh communicator. */
            ck_comm_destroy(comm);
            if (setup_comm(&comm, &o)) finish_abort(rank, passed, failed, "cannot recreate the communicator");
            cfg = ck_comm_config(comm);
        }
    }
    if (rank == 0) {
        printf("%d passed, %d failed\n", passed, failed);
        fflush(stdout);
    }
    free(all);
    free(cases);
    ck_comm_destroy(comm);
    MPI_Comm_free(&ctl);
    if (!was_init) MPI_Finalize();
    return failed ? 1 : 0;
}
