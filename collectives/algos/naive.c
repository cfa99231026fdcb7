/*
 * naive — reduce to rank 0, then broadcast from rank 0, point to point.
 *
 * Idea. The textbook baseline: rank 0 receives every other rank's whole
 * buffer in turn and folds it into the result, then sends the result back to
 * each rank in turn. Simple and obviously correct, and rank 0's link does all
 * the work: that is what the other algorithms improve on.
 *
 * Worked example, p = 4, whole buffers X0..X3. Each cell: what moves.
 *
 *   step   rank 0                    rank 1       rank 2       rank 3
 *   1      recv X1, acc = X0+X1      send X1
 *   2      recv X2, acc += X2                     send X2
 *   3      recv X3, acc += X3                                  send X3
 *   4      send acc to 1             recv acc
 *   5      send acc to 2                          recv acc
 *   6      send acc to 3                                       recv acc
 *
 * Bytes sent: rank 0 sends (p-1)·n, every other rank n.
 * Cost: T = 2(p-1)·(α + n·β) + (p-1)·n·γ — linear in p in both terms.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.26       12.77       17.02       63.84
 *       1M      266.14      798.43     1064.58     3992.16
 *      64M    16781.22    50343.65    67124.86   251718.24
 */
#include "collkit_algo.h"

static int naive_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t bytes = count * ck_dtype_size(dt);
    int rc;

    if (r != 0) {
        ck_step(comm, r, "reduce");
        if ((rc = ck_sendrecv(comm, sendbuf, bytes, 0, NULL, 0, -1, 0))) return rc;
        ck_step(comm, p - 1 + r, "broadcast");
        return ck_sendrecv(comm, NULL, 0, -1, recvbuf, bytes, 0, 1);
    }

    if ((rc = ck_copy(comm, recvbuf, sendbuf, bytes))) return rc;
    void *tmp = p > 1 ? ck_scratch(comm, bytes) : NULL;
    if (p > 1 && !tmp) return CK_ERR_NOMEM;
    for (int src = 1; src < p; src++) {
        ck_step(comm, src, "reduce");
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, bytes, src, 0))) return rc;
        if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, tmp, count, dt, op))) return rc;
    }
    for (int dst = 1; dst < p; dst++) {
        ck_step(comm, p - 1 + dst, "broadcast");
        if ((rc = ck_sendrecv(comm, recvbuf, bytes, dst, NULL, 0, -1, 1))) return rc;
    }
    return CK_SUCCESS;
}

static uint64_t naive_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    return (uint64_t)count * es * (r == 0 ? (uint64_t)(p - 1) : 1);
}

static uint64_t naive_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es; (void)cfg;
    if (p == 1 || count == 0) return 0;
    return r == 0 ? (uint64_t)(p - 1) : 1;
}

static double naive_cost(const ck_cost_params *m, int p, double n)
{
    return 2 * (p - 1) * (m->alpha + n * m->beta) + (p - 1) * n * m->gamma;
}

/* Rank q's buffer reaches rank 0 at step q; rank r gets the result back at
 * broadcast step p-1+r. */
static void naive_diagnose(const ck_fault *f, char *out, size_t cap)
{
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    if (f->missing > 0)
        ck_sbuf_add(&sb, "rank 0 receives rank %d's buffer and adds it at reduce step %d; ", f->missing, f->missing);
    else if (f->missing == 0)
        ck_sbuf_add(&sb, "rank 0 starts the sum from its own input before reduce step 1; ");
    if (f->rank == 0) ck_sbuf_add(&sb, "rank 0 holds the result after reduce step %d", f->p - 1);
    else ck_sbuf_add(&sb, "rank %d receives the result from rank 0 at broadcast step %d", f->rank, f->p - 1 + f->rank);
}

const ck_algo ck_algo_naive = {
    .name = "naive",
    .summary = "reduce to rank 0, then broadcast from rank 0 (point to point)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "root (p-1)n, others n",
    .bytes_sent = naive_bytes,
    .msgs_sent = naive_msgs,
    .cost_formula = "2(p-1)(α + nβ) + (p-1)nγ",
    .cost = naive_cost,
    .diagnose = naive_diagnose,
    .run = naive_run,
};
