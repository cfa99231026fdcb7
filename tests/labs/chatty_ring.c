/*
 * A test file for the grader: the lab 01 ring with two habits of a student
 * in the middle of debugging. Every rank prints a line on every call (rank
 * 0's lands between the checker's case label and its verdict, and has the
 * word FAIL in it), and the last rank drops the block of its last
 * all-gather step (wrong from n = 2 at p = 2). The grade must quote the
 * checker's verdict with its case, not the debugging output, and not take
 * the case whose verdict was pushed to the next line for one that never
 * finished.
 */
#include <stdio.h>
#include "collkit_algo.h"

static int my_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    const char *in = sendbuf;
    char *out = recvbuf;

    printf("rank %d: count %zu, FAIL-safe path off\n", r, count);   /* debugging output */
    fflush(stdout);
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
        const int sb = ((r + 1 - s) % p + p) % p, rb = ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        char *dst = r == p - 1 && s == p - 2 ? tmp : out + roff * es;   /* BUG: the last rank drops it */
        int rc = ck_sendrecv(comm, out + soff * es, slen * es, right, dst, rlen * es, left, p - 1 + s);
        if (rc) return rc;
    }
    return CK_SUCCESS;
}

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
    .summary = "lab 01 ring that prints while it runs, wrong on its last rank",
    .mem = CK_MEM_HOST,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = my_ring_bytes,
    .msgs_sent = my_ring_msgs,
    .run = my_ring_run,
};
CK_REGISTER_ALGO(my_ring)
