/*
 * wrong_halves — lab 07's two ring halves, each with one index bug that a
 * student makes in the step term of one block index. Both are right at
 * step 0 (where s = 0 makes the index right) and wrong from step 1 on, so the
 * drawing must show nothing wrong before frame 2 and the wrong block there.
 *   reduce-scatter  sends block r-1 every step instead of block r-1-s: from
 *                   step 1 the receiver adds its input of block r-2-s to a
 *                   block it was not sent (a sum of two elements' values);
 *   all-gather      receives into block r-1-2s instead of r-1-s: from step 1
 *                   a block lands where another belongs.
 * (Neither receives into the block it sends in the same step, so the run is
 * the same every time.)
 */
#include "collkit_algo.h"

static int mod(int a, int p) { return (a % p + p) % p; }

static int wrong_rs_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    char *in = (char *)sendbuf;   /* drawn in place only: the partial sums go where their block's input was */
    size_t off, len, off0, max_len;
    ck_block(count, p, r, &off, &len);
    if (p == 1) return (char *)recvbuf == in ? CK_SUCCESS : ck_copy(comm, recvbuf, in, len * es);
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, max_len * es);
    if (!tmp) return CK_ERR_NOMEM;
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        size_t soff, slen, roff, rlen;
        ck_block(count, p, mod(r - 1, p), &soff, &slen);   /* the bug: r - 1 - s */
        ck_block(count, p, mod(r - 2 - s, p), &roff, &rlen);
        int rc = ck_sendrecv(comm, in + soff * es, slen * es, (r + 1) % p, tmp, rlen * es, mod(r - 1, p), s);
        char *dst = s == p - 2 ? recvbuf : in + roff * es;
        if (!rc) rc = ck_reduce_local(comm, dst, in + roff * es, tmp, rlen, dt, op);
        if (rc) return rc;
    }
    return CK_SUCCESS;
}

static int wrong_ag_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    char *out = recvbuf;
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    int rc = sendbuf == out + off * es ? CK_SUCCESS : ck_copy(comm, out + off * es, sendbuf, len * es);
    for (int s = 0; s < p - 1 && !rc; s++) {
        ck_step(comm, s, "all-gather");
        size_t soff, slen, roff, rlen;
        ck_block(count, p, mod(r - s, p), &soff, &slen);
        ck_block(count, p, mod(r - 1 - 2 * s, p), &roff, &rlen);   /* the bug: r - 1 - s */
        rc = ck_sendrecv(comm, out + soff * es, slen * es, (r + 1) % p, out + roff * es, rlen * es, mod(r - 1, p), s);
    }
    return rc;
}

const ck_algo wrong_ring_rs = {
    .name = "wrong_ring",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "lab 07's reduce-scatter sending block r-1 at every step",
    .mem = CK_MEM_HOST,
    .bytes_formula = "(p-1)/p * n",
    .run = wrong_rs_run,
};
CK_REGISTER_ALGO(wrong_ring_rs)

const ck_algo wrong_ring_ag = {
    .name = "wrong_ring",
    .coll = CK_COLL_ALLGATHER,
    .summary = "lab 07's all-gather receiving block r-1-s into block r-1-2s",
    .mem = CK_MEM_HOST,
    .bytes_formula = "(p-1)/p * n",
    .run = wrong_ag_run,
};
CK_REGISTER_ALGO(wrong_ring_ag)
