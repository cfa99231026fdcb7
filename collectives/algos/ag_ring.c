/*
 * ag_ring — all-gather around a ring: the second half of the ring
 * all-reduce (ring.c), on its own.
 *
 * Idea. Rank r sends to r+1 and receives from r-1 (mod p). At step
 * s = 0 .. p-2 it sends block (r-s) — its own at step 0, then the one it
 * received the step before — and receives block (r-s-1) straight into
 * recvbuf. Each block travels p-1 hops, every link is busy every step.
 *
 *   p = 4, blocks A B C D     rank 0      rank 1      rank 2      rank 3
 *   step 0 sends              A           B           C           D
 *   step 1 sends              D           A           B           C
 *   step 2 sends              C           D           A           B
 *
 * Bytes sent per rank: every block but (r+1), (p-1)/p · n.
 * Cost: T = (p-1)·α + (p-1)/p·n·β (nothing to reduce).
 */
#include "collkit_algo.h"
#include "halves.h"

static int mod(int a, int p) { return (a % p + p) % p; }

static int ag_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
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
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "all-gather");
        size_t soff, slen, roff, rlen;
        ck_block(count, p, mod(r - s, p), &soff, &slen);
        ck_block(count, p, mod(r - s - 1, p), &roff, &rlen);
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, (r + 1) % p, out + roff * es, rlen * es,
                              mod(r - 1, p), s)))
            return rc;
    }
    return CK_SUCCESS;
}

static uint64_t ag_ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, len;
    ck_block(count, p, (r + 1) % p, &off, &len);
    return (uint64_t)(count - len) * es;
}

static double ag_ring_cost(const ck_cost_params *m, int p, double n)
{
    return (p - 1) * m->alpha + (double)(p - 1) / p * n * m->beta;
}

/* Block b reaches rank q at step (q-b-1) mod p, from rank q-1; f->missing
 * is the rank whose block arrived wrong. */
static void ag_ring_diagnose(const ck_fault *f, char *out, size_t cap)
{
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    const int p = f->p, b = f->missing, q = f->rank;
    if (b < 0) return;
    if (b == q) ck_sbuf_add(&sb, "rank %d copies its own block %d into place before step 0", q, b);
    else
        ck_sbuf_add(&sb, "rank %d receives block %d from rank %d at step %d (%d hop%s from rank %d)", q, b,
                    mod(q - 1, p), mod(q - b - 1, p), mod(q - b, p), mod(q - b, p) == 1 ? "" : "s", b);
}

const ck_algo ck_ag_ring = {
    .name = "ring",
    .coll = CK_COLL_ALLGATHER,
    .summary = "pass the blocks around a ring, p-1 steps",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1)/p * n",
    .bytes_sent = ag_ring_bytes,
    .msgs_sent = ck_halves_msgs,
    .cost_formula = "(p-1)α + (p-1)/p·nβ",
    .cost = ag_ring_cost,
    .diagnose = ag_ring_diagnose,
    .run = ag_ring_run,
};
