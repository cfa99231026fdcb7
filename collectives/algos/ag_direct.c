/*
 * ag_direct — pairwise all-gather: every rank sends its block straight to
 * every other rank (Open MPI's "pairwise"/linear allgather).
 *
 * Idea. At step s = 1 .. p-1 rank r sends its own block to rank r+s and
 * receives block (r-s) from rank r-s, straight into recvbuf. Nothing is
 * forwarded: each block crosses p-1 links once each, from its owner.
 *
 *   p = 4, blocks A B C D     rank 0      rank 1      rank 2      rank 3
 *   step 1                    A -> 1      B -> 2      C -> 3      D -> 0
 *   step 2                    A -> 2      B -> 3      C -> 0      D -> 1
 *   step 3                    A -> 3      B -> 0      C -> 1      D -> 2
 *
 * Bytes sent per rank: its own block p-1 times, (p-1)·n/p for even blocks.
 * Cost: T = (p-1)·α + (p-1)/p·n·β.
 */
#include "collkit_algo.h"
#include "halves.h"

static int ag_direct_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                         size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    char *out = recvbuf;
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    int rc;
    if (sendbuf != out + off * es && (rc = ck_copy(comm, out + off * es, sendbuf, len * es))) return rc;
    for (int s = 1; s < p; s++) {
        ck_step(comm, s, "pairwise");
        const int to = (r + s) % p, from = (r - s + p) % p;
        size_t foff, flen;
        ck_block(count, p, from, &foff, &flen);
        if ((rc = ck_sendrecv(comm, out + off * es, len * es, to, out + foff * es, flen * es, from, s))) return rc;
    }
    return CK_SUCCESS;
}

static uint64_t ag_direct_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    return (uint64_t)(p - 1) * len * es;
}

static double ag_direct_cost(const ck_cost_params *m, int p, double n)
{
    return (p - 1) * m->alpha + (double)(p - 1) / p * n * m->beta;
}

/* Block b reaches rank q from rank b itself at step (q-b) mod p. */
static void ag_direct_diagnose(const ck_fault *f, char *out, size_t cap)
{
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    const int b = f->missing, q = f->rank;
    if (b < 0) return;
    if (b == q) ck_sbuf_add(&sb, "rank %d copies its own block %d into place before step 1", q, b);
    else ck_sbuf_add(&sb, "rank %d receives block %d from rank %d at pairwise step %d", q, b, b, (q - b + f->p) % f->p);
}

const ck_algo ck_ag_direct = {
    .name = "direct",
    .coll = CK_COLL_ALLGATHER,
    .summary = "pairwise: each block straight from its owner, p-1 steps",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1) * n_r (own block)",
    .bytes_sent = ag_direct_bytes,
    .msgs_sent = ck_halves_msgs,
    .cost_formula = "(p-1)α + (p-1)/p·nβ",
    .cost = ag_direct_cost,
    .diagnose = ag_direct_diagnose,
    .run = ag_direct_run,
};
