/*
 * rs_direct — pairwise reduce-scatter: every rank sends each other rank its
 * block directly (Open MPI's "pairwise" reduce_scatter_block).
 *
 * Idea. Rank r needs block r of every input. At step s = 1 .. p-1 it sends
 * block (r+s) of its input to rank r+s and receives block r of rank r-s's
 * input, which it adds to the result. No block is forwarded: each crosses
 * one link once, and only its owner reduces it.
 *
 *   p = 4, blocks A B C D     rank 0      rank 1      rank 2      rank 3
 *   step 1                    B0 -> 1     C1 -> 2     D2 -> 3     A3 -> 0
 *   step 2                    C0 -> 2     D1 -> 3     A2 -> 0     B3 -> 1
 *   step 3                    D0 -> 3     A1 -> 0     B2 -> 1     C3 -> 2
 *   owns                      A           B           C           D
 *
 * Bytes sent per rank: every block but its own, (p-1)/p · n, in p-1
 * messages (the ring's volume; every step talks to another peer, so on a
 * network the links it loads change from step to step).
 * Cost: T = (p-1)·α + (p-1)/p·n·β + (p-1)/p·n·γ.
 */
#include "collkit_algo.h"
#include "halves.h"

static int rs_direct_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                         size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    if (p == 1) return recvbuf == in ? CK_SUCCESS : ck_copy(comm, recvbuf, in, len * es);

    char *tmp = ck_scratch(comm, len * es);
    if (!tmp && len) return CK_ERR_NOMEM;
    int rc;
    for (int s = 1; s < p; s++) {
        ck_step(comm, s, "pairwise");
        const int to = (r + s) % p, from = (r - s + p) % p;
        size_t toff, tlen;
        ck_block(count, p, to, &toff, &tlen);
        if ((rc = ck_sendrecv(comm, in + toff * es, tlen * es, to, tmp, len * es, from, s))) return rc;
        /* The first step adds our own input (in place: recvbuf is that input). */
        if ((rc = ck_reduce_local(comm, recvbuf, s == 1 ? in + off * es : recvbuf, tmp, len, dt, op))) return rc;
    }
    return CK_SUCCESS;
}

static double rs_direct_cost(const ck_cost_params *m, int p, double n)
{
    const double f = (double)(p - 1) / p;
    return (p - 1) * m->alpha + f * n * (m->beta + m->gamma);
}

/* Rank q's part of block b reaches rank b at step (b-q) mod p. */
static void rs_direct_diagnose(const ck_fault *f, char *out, size_t cap)
{
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    if (f->missing < 0 || f->missing == f->rank) return;
    ck_sbuf_add(&sb, "rank %d sends its part of block %d to rank %d at pairwise step %d", f->missing, f->rank,
                f->rank, (f->rank - f->missing + f->p) % f->p);
}

const ck_algo ck_rs_direct = {
    .name = "direct",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "pairwise: each block straight to its owner, p-1 steps",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1)/p * n",
    .bytes_sent = ck_rs_bytes_but_own,
    .msgs_sent = ck_halves_msgs,
    .cost_formula = "(p-1)α + (p-1)/p·nβ + (p-1)/p·nγ",
    .cost = rs_direct_cost,
    .diagnose = rs_direct_diagnose,
    .run = rs_direct_run,
};
