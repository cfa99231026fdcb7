/*
 * wrong_gather_ring — lab 01's ring with one bug: in the all-gather each
 * rank receives the finished block its left neighbour sends, block r - s,
 * into block r + 2 - s instead of block r - s. The drawing must show that
 * block wrong from the first all-gather step on, and nothing wrong before it.
 * (The receive never lands in the block being sent, so the run is the same
 * every time.)
 */
#include "collkit_algo.h"

static int wrong_gather_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt,
                                 ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    const char *in = sendbuf;
    char *out = recvbuf;
    if (p == 1) return ck_copy(comm, out, in, count * es);
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, max_len * es);
    if (!tmp) return CK_ERR_NOMEM;
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        const int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        int rc = ck_sendrecv(comm, (s == 0 ? in : out) + soff * es, slen * es, right, tmp, rlen * es, left, s);
        if (!rc) rc = ck_reduce_local(comm, out + roff * es, in + roff * es, tmp, rlen, dt, op);
        if (rc) return rc;
    }
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        const int sb = ((r + 1 - s) % p + p) % p, rb = ((r + 2 - s) % p + p) % p;   /* the bug: rb should be r - s */
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        int rc = ck_sendrecv(comm, out + soff * es, slen * es, right, out + roff * es, rlen * es, left, p - 1 + s);
        if (rc) return rc;
    }
    return CK_SUCCESS;
}

const ck_algo wrong_gather_ring = {
    .name = "wrong_gather_ring",
    .summary = "lab 01's ring forwarding the wrong block in the all-gather",
    .mem = CK_MEM_HOST,
    .bytes_formula = "2(p-1)/p * n",
    .run = wrong_gather_ring_run,
};
CK_REGISTER_ALGO(wrong_gather_ring)
