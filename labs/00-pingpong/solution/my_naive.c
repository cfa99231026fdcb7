/*
 * Lab 00 — the reference solution (instructors only: not in the student kit).
 *
 * This file defines `my_naive` and registers it; `make lab00` builds it with
 * collkit-cc (collcheck + collbench + tagtrain with your algorithm added)
 * and grades it. Two TODOs (HANDOUT.md, steps 3 and 4):
 *   TODO 1  the algorithm: reduce everything to rank 0, then rank 0 sends
 *           the result back to every rank, with ck_sendrecv;
 *   TODO 2  its α-β-γ cost: how long that takes, as a formula.
 * Rules (the grader checks them): use only collkit_algo.h. No MPI calls, no
 * calls of the library's own algorithms.
 */
#include "collkit_algo.h"

static int my_naive_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
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

/* Rank 0 receives p-1 buffers one after the other, reducing each, then sends
 * p-1 results one after the other: 2(p-1) messages of n bytes in a row on its
 * link, and p-1 reductions of n bytes. */
static double my_naive_cost(const ck_cost_params *m, int p, double n)
{
    return 2 * (p - 1) * (m->alpha + n * m->beta) + (p - 1) * n * m->gamma;
}

/* ---- The rest of the descriptor: what the checker holds you to. Given. ----
 * Rank 0 sends the result to p-1 ranks; every other rank sends its input once. */
static uint64_t my_naive_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return p == 1 ? 0 : (uint64_t)count * es * (r == 0 ? (uint64_t)(p - 1) : 1);
}

static uint64_t my_naive_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : (r == 0 ? (uint64_t)(p - 1) : 1);
}

const ck_algo my_naive = {
    .name = "my_naive",
    .summary = "lab 00: reduce to rank 0, broadcast from rank 0",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "root (p-1)n, others n",
    .bytes_sent = my_naive_bytes,
    .msgs_sent = my_naive_msgs,
    .cost_formula = "yours",
    .cost = my_naive_cost,
    .run = my_naive_run,
};
CK_REGISTER_ALGO(my_naive)
