/*
 * star.c — an all-reduce written OUTSIDE the library, the way a student or a
 * course writes one: it includes collkit_algo.h only, fills the whole
 * descriptor, and registers itself with CK_REGISTER_ALGO; it is built into
 * collcheck + collbench + tagtrain by collkit_add_plugin (what collkit-cc
 * does for files anywhere). The tests prove that filling the descriptor is
 * all it takes: collcheck checks its bytes and messages and prints its own
 * diagnosis, collbench prints its model column.
 *
 * Idea (all-to-all exchange, "star"): every rank sends its whole buffer to
 * every other rank, then adds the p buffers up in rank order. One step, so
 * the latency does not grow with the number of steps; (p-1)·n bytes leave
 * every rank, so it only suits small messages.
 *
 *   rank r:  post receives from every q != r, sends to every q != r
 *            out = x0 op x1 op ... op x(p-1)   (same order on every rank)
 *
 * Bytes sent per rank: (p-1)·n, in p-1 messages.
 * Cost: T = (p-1)·(α + n·β) + (p-1)·n·γ.
 *
 * oot_star_skip is the same with one bug: it never adds the last peer's
 * buffer (rank p-1, or p-2 on rank p-1).
 */
#include "collkit_algo.h"

static int star_common(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                       ck_dtype dt, ck_op op, int skip_last)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t n = count * ck_dtype_size(dt);
    char *in = ck_scratch(comm, (size_t)p * n);
    ck_req req[2 * 64];
    int rc;
    if (p > 64) return ck_fail(comm, CK_ERR_UNSUPPORTED, "oot_star: at most 64 ranks");
    if (!in) return CK_ERR_NOMEM;
    ck_step(comm, 0, "exchange");
    for (int q = 0; q < p; q++) {
        req[q].active = req[p + q].active = 0;
        if (q == r) continue;
        if ((rc = ck_irecv(comm, in + (size_t)q * n, n, q, 0, &req[q]))) return rc;
        if ((rc = ck_isend(comm, sendbuf, n, q, 0, &req[p + q]))) return rc;
    }
    if ((rc = ck_waitall(comm, req, 2 * p))) return rc;
    if ((rc = ck_copy(comm, in + (size_t)r * n, sendbuf, n))) return rc;
    /* Fold in rank order, from a copy of rank 0's buffer, so every rank
     * computes the same expression. */
    if ((rc = ck_copy(comm, recvbuf, in, n))) return rc;
    int last = skip_last ? (r == p - 1 ? p - 2 : p - 1) : -1;
    for (int q = 1; q < p; q++)
        if (q != last && (rc = ck_reduce_local(comm, recvbuf, recvbuf, in + (size_t)q * n, count, dt, op))) return rc;
    return CK_SUCCESS;
}

static int star_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return star_common(c, s, r, n, dt, op, 0);
}

static int star_skip_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return star_common(c, s, r, n, dt, op, 1);
}

static uint64_t star_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)cfg;
    return (uint64_t)(p - 1) * count * es;
}

static uint64_t star_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)es; (void)cfg;
    return count ? (uint64_t)(p - 1) : 0;
}

static double star_cost(const ck_cost_params *m, int p, double n)
{
    return (p - 1) * (m->alpha + n * m->beta) + (p - 1) * n * m->gamma;
}

static void star_diagnose(const ck_fault *f, char *out, size_t cap)
{
    if (f->missing >= 0)
        snprintf(out, cap, "rank %d's buffer reaches rank %d in one direct message (tag 0) and is added "
                 "in rank order as term %d of %d", f->missing, f->rank, f->missing, f->p);
}

#define STAR_FIELDS                                                                     \
    .mem = CK_MEM_HOST, .bytes_formula = "(p-1) * n", .bytes_sent = star_bytes,           \
    .msgs_sent = star_msgs, .cost_formula = "(p-1)(α + nβ) + (p-1)nγ", .cost = star_cost, \
    .diagnose = star_diagnose

const ck_algo oot_star = {.name = "oot_star", .summary = "out-of-tree all-to-all exchange", STAR_FIELDS,
                          .run = star_run};
CK_REGISTER_ALGO(oot_star)
const ck_algo oot_star_skip = {.name = "oot_star_skip", .summary = "oot_star that drops the last peer",
                               STAR_FIELDS, .run = star_skip_run};
CK_REGISTER_ALGO(oot_star_skip)
