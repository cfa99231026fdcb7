/*
 * cheats.c — algorithms written to earn a verdict they do not deserve, and
 * the program that runs them the way collkit-cc's does (`cheats check ...`,
 * `cheats bench ...`). verify.sh shows that none of them gains anything:
 *
 *   cheat_forge      does nothing, and prints a passing closing line (and a
 *                    paired row) from the program's exit
 *   cheat_benchidle  a ring when checked, nothing when benched: the paired
 *                    run would find the library's answer in a shared buffer
 *   cheat_big        a ring that is wrong only above 4 Mi elements, larger
 *                    than any count of the checker's matrix
 *   cheat_cache      a ring that answers a repeated call on the same buffers
 *                    from a copy of its last result, without communicating
 *   cheat_wrap       a ring plus one extra whole-buffer message, "taken
 *                    back" with ck_count_traffic of a negative (wrapping) count
 *   cheat_pad        an unpipelined ring that declares ring_pipelined's
 *                    schedule and makes up the message count with empty messages
 *   slow_ring        a correct ring that sleeps 5 ms first: the library side of
 *                    a paired run whose speed must be flagged for review
 *   quiet_ring       the ring, declaring no message count (--require-msgs)
 *
 * and, in the reduce-scatter and all-gather registries (--coll), under the
 * same names, with the library ring's formulas of that collective:
 *
 *   cheat_forge      does nothing, and prints a passing closing line
 *   cheat_benchidle  the library's ring when checked, nothing when benched
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collbench.h"
#include "collcheck.h"
#include "collkit_algo.h"

static int benched;   /* started as `bench` (what a cheat would read from /proc/self/cmdline) */

static const ck_algo *ring(void) { return ck_algo_find("ring"); }
static const ck_algo *piped(void) { return ck_algo_find("ring_pipelined"); }

static uint64_t ring_bytes(int p, int r, size_t n, size_t es, const ck_config *c) { return ring()->bytes_sent(p, r, n, es, c); }
static uint64_t ring_msgs(int p, int r, size_t n, size_t es, const ck_config *c) { return ring()->msgs_sent(p, r, n, es, c); }
static uint64_t pipe_bytes(int p, int r, size_t n, size_t es, const ck_config *c) { return piped()->bytes_sent(p, r, n, es, c); }
static uint64_t pipe_msgs(int p, int r, size_t n, size_t es, const ck_config *c) { return piped()->msgs_sent(p, r, n, es, c); }
static uint64_t pipe_largest(int p, int r, size_t n, size_t es, const ck_config *c) { return piped()->max_msg_bytes(p, r, n, es, c); }
static uint64_t pipe_empty(int p, int r, size_t n, size_t es, const ck_config *c) { return piped()->empty_msgs(p, r, n, es, c); }

#define RING_LIKE(id, fn) \
    static const ck_algo id = {.name = #id, .summary = "a cheat (tests/checker/cheats.c)", .mem = CK_MEM_HOST, \
                               .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, \
                               .run = fn};

static void print_forged(void)
{
    printf("\n1000 passed, 0 failed\n");
    printf("ring,cheat_forge,2,4194304,100.000,0.010,9.99,9.99,9.99,30,0,0\n");
    fflush(stdout);
}

static int forge_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    static int once;
    (void)c; (void)s; (void)r; (void)n; (void)dt; (void)op;
    if (!once++) atexit(print_forged);
    return CK_SUCCESS;
}
RING_LIKE(cheat_forge, forge_run)

static int benchidle_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    if (benched) return CK_SUCCESS;
    return ring()->run(c, s, r, n, dt, op);
}
RING_LIKE(cheat_benchidle, benchidle_run)

/* The halves: the library ring of each collective, its formulas declared. */
static const ck_algo *rs_ring(void) { return ck_coll_algo_find(CK_COLL_REDUCE_SCATTER, "ring"); }
static const ck_algo *ag_ring(void) { return ck_coll_algo_find(CK_COLL_ALLGATHER, "ring"); }
static uint64_t rs_bytes(int p, int r, size_t n, size_t es, const ck_config *c) { return rs_ring()->bytes_sent(p, r, n, es, c); }
static uint64_t ag_bytes(int p, int r, size_t n, size_t es, const ck_config *c) { return ag_ring()->bytes_sent(p, r, n, es, c); }
static uint64_t half_msgs(int p, int r, size_t n, size_t es, const ck_config *c) { return rs_ring()->msgs_sent(p, r, n, es, c); }
static int rs_idle_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return benched ? CK_SUCCESS : rs_ring()->run(c, s, r, n, dt, op);
}
static int ag_idle_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return benched ? CK_SUCCESS : ag_ring()->run(c, s, r, n, dt, op);
}
#define HALF_LIKE(id, nm, cl, bytes, fn) \
    static const ck_algo id = {.name = nm, .coll = cl, .summary = "a cheat (tests/checker/cheats.c)", \
                               .mem = CK_MEM_HOST, .bytes_formula = "(p-1)/p * n", .bytes_sent = bytes, \
                               .msgs_sent = half_msgs, .run = fn};
HALF_LIKE(rs_forge, "cheat_forge", CK_COLL_REDUCE_SCATTER, rs_bytes, forge_run)
HALF_LIKE(ag_forge, "cheat_forge", CK_COLL_ALLGATHER, ag_bytes, forge_run)
HALF_LIKE(rs_benchidle, "cheat_benchidle", CK_COLL_REDUCE_SCATTER, rs_bytes, rs_idle_run)
HALF_LIKE(ag_benchidle, "cheat_benchidle", CK_COLL_ALLGATHER, ag_bytes, ag_idle_run)

static int big_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring()->run(c, s, r, n, dt, op);
    if (!rc && n > (size_t)4 << 20) memset((char *)r + (n - 1) * ck_dtype_size(dt), 0, ck_dtype_size(dt));
    return rc;
}
RING_LIKE(cheat_big, big_run)

static int cache_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    static const void *ls;
    static void *lr, *copy;
    static size_t ln, cap;
    static int ldt = -1, lop = -1;
    const size_t bytes = n * ck_dtype_size(dt);
    if (s == ls && r == lr && n == ln && (int)dt == ldt && (int)op == lop && copy) {
        memcpy(r, copy, bytes);   /* "the same call again": no communication at all */
        return CK_SUCCESS;
    }
    int rc = ring()->run(c, s, r, n, dt, op);
    if (rc) return rc;
    if (bytes > cap) {
        void *g = realloc(copy, bytes);
        if (!g) return CK_SUCCESS;
        copy = g;
        cap = bytes;
    }
    memcpy(copy, r, bytes);
    ls = s; lr = r; ln = n; ldt = (int)dt; lop = (int)op;
    return CK_SUCCESS;
}
RING_LIKE(cheat_cache, cache_run)

static int wrap_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring()->run(c, s, r, n, dt, op);
    const int p = ck_comm_size(c), me = ck_comm_rank(c);
    const size_t bytes = n * ck_dtype_size(dt);
    if (rc || p == 1) return rc;
    void *tmp = ck_scratch(c, bytes);
    if (!tmp) return CK_ERR_NOMEM;
    rc = ck_sendrecv(c, r, bytes, (me + 1) % p, tmp, bytes, (me - 1 + p) % p, 77);
    /* minus one message and `bytes` bytes, modulo 2^64 */
    ck_count_traffic(c, (uint64_t)0 - bytes, (uint64_t)0 - 1, (uint64_t)0 - bytes, (uint64_t)0 - 1);
    return rc;
}
RING_LIKE(cheat_wrap, wrap_run)

/* The ring, each step's block in ONE message, followed by nc - 1 empty ones:
 * ring_pipelined's bytes and message count, without its pipelining. */
static int pad_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(c), me = ck_comm_rank(c);
    const size_t es = ck_dtype_size(dt);
    const int right = (me + 1) % p, left = (me - 1 + p) % p;
    if (p == 1) return ck_copy(c, r, s, n * es);
    size_t off0, lmax, chunk = ck_comm_config(c)->chunk_bytes / es;
    ck_block(n, p, 0, &off0, &lmax);
    const size_t nc = ck_num_chunks(lmax, chunk ? chunk : 1);
    char *tmp = ck_scratch(c, lmax * es + 1), *out = r;
    const char *in = s;
    if (!tmp) return CK_ERR_NOMEM;
    int rc;
    for (int t = 0; t < 2 * (p - 1); t++) {
        const int rs = t < p - 1, st = rs ? t : t - (p - 1);
        const int sb = rs ? ((me - st) % p + p) % p : ((me + 1 - st) % p + p) % p;
        const int rb = rs ? ((me - st - 1) % p + p) % p : ((me - st) % p + p) % p;
        size_t so, sl, ro, rl;
        ck_block(n, p, sb, &so, &sl);
        ck_block(n, p, rb, &ro, &rl);
        ck_step(c, t, rs ? "reduce-scatter" : "all-gather");
        if ((rc = ck_sendrecv(c, (t == 0 ? in : out) + so * es, sl * es, right, rs ? tmp : out + ro * es, rl * es,
                              left, 0)))
            return rc;
        for (size_t k = 1; k < nc; k++)
            if ((rc = ck_sendrecv(c, tmp, 0, right, tmp, 0, left, 1))) return rc;
        if (rs && (rc = ck_reduce_local(c, out + ro * es, in + ro * es, tmp, rl, dt, op))) return rc;
    }
    return CK_SUCCESS;
}
static const ck_algo cheat_pad = {.name = "cheat_pad", .summary = "a cheat (tests/checker/cheats.c)",
                                  .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = pipe_bytes,
                                  .msgs_sent = pipe_msgs, .max_msg_bytes = pipe_largest, .empty_msgs = pipe_empty,
                                  .run = pad_run};

static int slow_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    struct timespec t = {0, 5000000};
    nanosleep(&t, NULL);
    return ring()->run(c, s, r, n, dt, op);
}
RING_LIKE(slow_ring, slow_run)

/* The ring with no message count declared: reported, and failed under --require-msgs. */
static const ck_algo quiet_ring = {.name = "quiet_ring", .summary = "the ring without msgs_sent",
                                   .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes,
                                   .run = benchidle_run};

int main(int argc, char **argv)
{
    const ck_algo *all[] = {&cheat_forge, &cheat_benchidle, &cheat_big, &cheat_cache, &cheat_wrap, &cheat_pad,
                            &slow_ring, &quiet_ring, &rs_forge, &ag_forge, &rs_benchidle, &ag_benchidle};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (ck_register_algo(all[i])) return 2;
    if (argc < 2) { fprintf(stderr, "usage: %s check|bench [ARGS]\n", argv[0]); return 2; }
    const char *tool = argv[1];
    argv[1] = argv[0];
    if (!strcmp(tool, "check")) return collcheck_main(argc - 1, argv + 1);
    if (!strcmp(tool, "bench")) { benched = 1; return collbench_main(argc - 1, argv + 1); }
    fprintf(stderr, "%s: unknown tool '%s'\n", argv[0], tool);
    return 2;
}
