/*
 * Lab 03, part A — recursive doubling, for any number of ranks.
 *
 * Defines `my_rd` and registers it (`make lab03` builds and grades this file
 * together with my_tree.c). TODO 1: the rounds; TODO 2: the fold for rank
 * counts that are not a power of two; TODO 3: the cost. HANDOUT.md, part A.
 * Rules (the grader checks them): only collkit_algo.h; no MPI calls, no
 * calls of the library's own algorithms.
 *
 * The fold, given: p = p' + rem with p' the largest power of two <= p. The
 * first 2·rem ranks pair up (2i, 2i+1): before the rounds the even one sends
 * its input to the odd one, which combines it and plays "virtual rank" i in
 * the rounds; the even one sits them out and receives the result at the end.
 * Ranks >= 2·rem play virtual rank r - rem.
 */
#include "collkit_algo.h"

static int pow2_floor(int p) { int q = 1; while (2 * q <= p) q *= 2; return q; }
static int log2i(int q) { int k = 0; while ((1 << k) < q) k++; return k; }
/* Virtual rank of r (-1: the even rank of a folded pair) and back. */
static int to_virtual(int r, int rem) { return r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem; }
static int to_real(int v, int rem) { return v < rem ? 2 * v + 1 : v + rem; }

static int my_rd_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t bytes = count * ck_dtype_size(dt);
    const int pp = pow2_floor(p), rem = p - pp, v = to_virtual(r, rem);
    (void)op; (void)v; (void)to_real;

    /* TODO 2 — the fold (tags 0 and 1): the even rank of a pair sends its
     *   input to r + 1 and later receives the result from it; the odd one
     *   receives its partner's input into scratch and starts from
     *   partner op own (lower rank first, so every rank computes the same
     *   expression).
     * TODO 1 — rounds k = 0 .. log2(p')-1 (tag 2 + k), for ranks with v >= 0:
     *   swap the whole partial result with the rank playing v ^ (1 << k),
     *   and combine: the lower virtual rank's data goes first.
     * The skeleton only copies its input: right for p = 1 only. */
    return ck_copy(comm, recvbuf, sendbuf, bytes);
}

/* TODO 3 — the α-β-γ cost of your algorithm for n bytes on p ranks (0 at
 * p = 1): log2(p') rounds, each one message of n bytes and one reduction of
 * n bytes; when p is not a power of two, the fold adds what? */
static double my_rd_cost(const ck_cost_params *m, int p, double n)
{
    (void)m; (void)p; (void)n; (void)log2i;
    return 0;
}

/* ---- Given: what the checker holds you to. The rounds move n bytes each;
 * in a folded pair the even rank sends n (its input), the odd one n more
 * (the result back). ---- */
static uint64_t my_rd_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    const int pp = pow2_floor(p), rem = p - pp, rounds = log2i(pp);
    const uint64_t n = (uint64_t)count * es;
    if (r < 2 * rem) return r % 2 ? (uint64_t)(rounds + 1) * n : n;
    return (uint64_t)rounds * n;
}

static uint64_t my_rd_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)es; (void)cfg;
    const int pp = pow2_floor(p), rem = p - pp, rounds = log2i(pp);
    if (count == 0) return 0;
    if (r < 2 * rem) return r % 2 ? (uint64_t)rounds + 1 : 1;
    return (uint64_t)rounds;
}

const ck_algo my_rd = {
    .name = "my_rd",
    .summary = "lab 03: your recursive doubling (+ fold)",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "log2(p') * n (+n fold)",
    .bytes_sent = my_rd_bytes,
    .msgs_sent = my_rd_msgs,
    .cost_formula = "yours",
    .cost = my_rd_cost,
    .run = my_rd_run,
};
CK_REGISTER_ALGO(my_rd)
