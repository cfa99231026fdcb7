/*
 * Lab 00 — your first all-reduce, and its cost.
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
    (void)p; (void)r; (void)op;

    /* The skeleton only copies its input: right for p = 1, wrong otherwise.
     * TODO 1 — rank 0:
     *     copy its input to recvbuf; for src = 1 .. p-1: receive src's buffer
     *     into scratch (ck_scratch) with ck_sendrecv (tag 0) and fold it in
     *     with ck_reduce_local(comm, recvbuf, recvbuf, scratch, count, dt, op);
     *     then for dst = 1 .. p-1: send recvbuf to dst (tag 1).
     *   every other rank: send its input to rank 0 (tag 0), then receive the
     *     result from rank 0 into recvbuf (tag 1).
     *   ck_step(comm, step, "reduce" or "broadcast") before each exchange
     *   makes the watchdog's messages and the trace name your steps. */
    return ck_copy(comm, recvbuf, sendbuf, bytes);
}

/* TODO 2 — the time your algorithm takes for n bytes on p ranks, with
 * m->alpha (s per message), m->beta (s per byte sent), m->gamma (s per byte
 * reduced). Count what rank 0 does, one message at a time: it is the
 * bottleneck. (0 at p = 1.) */
static double my_naive_cost(const ck_cost_params *m, int p, double n)
{
    (void)m; (void)p; (void)n;
    return 0;
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
