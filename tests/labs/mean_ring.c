/*
 * A test file for lab 04's grader: the lab 01 ring that AVERAGES (divides the
 * float sum by p). tagtrain already divides the summed gradient by the
 * step's samples, so at p ranks every step is p times too small: the checker
 * fails it (expected the sum), and the trainer's parameters no longer equal
 * the 1-rank run's under SGD (Adam would hide most of it: its update is
 * nearly invariant to the gradient's scale).
 */
#include "collkit_algo.h"

static int my_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);               /* bytes per element */
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    const char *in = sendbuf;                          /* this rank's input (== out when in place) */
    char *out = recvbuf;                               /* where the result must end up */

    if (p == 1) return ck_copy(comm, out, in, count * es);

    /* Scratch for one received block: block 0 is the largest (ck_block). */
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, max_len * es);
    if (!tmp) return CK_ERR_NOMEM;

    /* Reduce-scatter: after step s, the block received holds the sum of
     * s+2 ranks' inputs; after p-1 steps rank r owns block r+1 complete. */
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        const int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        const char *src = (s == 0 ? in : out) + soff * es;   /* step 0 sends our own input */
        int rc = ck_sendrecv(comm, src, slen * es, right, tmp, rlen * es, left, s);
        if (!rc) rc = ck_reduce_local(comm, out + roff * es, in + roff * es, tmp, rlen, dt, op);
        if (rc) return rc;
    }
    /* All-gather: pass the finished blocks on, received in place. */
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        const int sb = ((r + 1 - s) % p + p) % p, rb = ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        int rc = ck_sendrecv(comm, out + soff * es, slen * es, right, out + roff * es, rlen * es, left, p - 1 + s);
        if (rc) return rc;
    }
    /* The mistake: average in the all-reduce, as if the caller did not divide. */
    if (dt == CK_F32)
        for (size_t i = 0; i < count; i++) ((float *)out)[i] /= (float)p;
    return CK_SUCCESS;
}

/* ---- The descriptor: what the checker holds your ring to. Given. ----
 * A ring sends, per rank, every block but (r+1) in reduce-scatter and every
 * block but (r+2) in all-gather, in 2(p-1) messages: the checker counts what
 * your ranks really send and compares. */
static uint64_t my_ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, skip_rs, skip_ag;
    ck_block(count, p, (r + 1) % p, &off, &skip_rs);
    ck_block(count, p, (r + 2) % p, &off, &skip_ag);
    return (uint64_t)(2 * count - skip_rs - skip_ag) * es;
}

static uint64_t my_ring_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : 2 * (uint64_t)(p - 1);
}

const ck_algo my_ring = {
    .name = "my_ring",
    .summary = "lab 01: your ring all-reduce",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = my_ring_bytes,
    .msgs_sent = my_ring_msgs,
    .run = my_ring_run,
};
CK_REGISTER_ALGO(my_ring)
