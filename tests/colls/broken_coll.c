/*
 * broken_coll.c — reduce-scatter and all-gather algorithms with one
 * deliberate bug each, registered the way out-of-tree code registers its
 * own (ck_register_algo with .coll, then collcheck_main). The checker tests
 * run `collcheck --coll ...` on each and require a failure that names the
 * bug:
 *
 *   reduce_scatter broken_ring_skip      step 1 passes the incoming partial
 *                                        sum on without adding its own input:
 *                                        a missing contribution
 *   reduce_scatter broken_ring_block     the all-reduce's schedule, which
 *                                        finishes block r+1 on rank r: the
 *                                        wrong block
 *   allgather      broken_ring_neighbour sends to rank r+2 and receives from
 *                                        r-2 instead of r+1 and r-1: blocks
 *                                        from the wrong neighbour
 *   allgather      broken_ring_short     stops one step early: a block never
 *                                        arrives
 *   allgather      broken_ring_overcopy  copies its own block in with the
 *                                        largest block's length: where p does
 *                                        not divide the count, the last rank
 *                                        writes past the end of recvbuf
 *   reduce_scatter broken_ring_recvfirst every rank waits for its receive
 *                                        before it sends: a deadlock the
 *                                        watchdog names
 *
 * Each borrows the built-in ring's diagnose hook of its collective (the
 * schedule it copies), as collcheck_broken does for the all-reduce.
 */
#include <stdio.h>
#include "collcheck.h"
#include "collkit_algo.h"

static int mod(int a, int p) { return (a % p + p) % p; }

/* A ring reduce-scatter that leaves block (r + shift) on rank r, adding its
 * own input at every step but `skip`. */
static int rs_ring_variant(ck_comm *comm, const char *in, char *out, size_t count, ck_dtype dt, ck_op op,
                           int shift, int skip)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    size_t off, len, o0, max_len;
    ck_block(count, p, r, &off, &len);
    if (p == 1) return out == in ? CK_SUCCESS : ck_copy(comm, out, in, len * es);
    ck_block(count, p, 0, &o0, &max_len);
    char *cur = ck_scratch(comm, 2 * max_len * es), *next = cur + max_len * es;
    if (!cur) return CK_ERR_NOMEM;
    int rc;
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        size_t soff, slen, roff, rlen;
        ck_block(count, p, mod(r + shift - 1 - s, p), &soff, &slen);
        ck_block(count, p, mod(r + shift - 2 - s, p), &roff, &rlen);
        if ((rc = ck_sendrecv(comm, s == 0 ? in + soff * es : cur, slen * es, (r + 1) % p, next, rlen * es,
                              mod(r - 1, p), s)))
            return rc;
        if (s != skip && (rc = ck_reduce_local(comm, next, in + roff * es, next, rlen, dt, op))) return rc;
        char *t = cur;
        cur = next;
        next = t;
    }
    /* cur holds the finished block (r + shift); copy what fits. */
    size_t foff, flen;
    ck_block(count, p, mod(r + shift, p), &foff, &flen);
    return ck_copy(comm, out, cur, (flen < len ? flen : len) * es);
}

static int rs_skip_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    return rs_ring_variant(comm, s, r, count, dt, op, 0, 1);
}

static int rs_block_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    return rs_ring_variant(comm, s, r, count, dt, op, 1, -1);
}

/* A ring all-gather whose neighbours are `stride` ranks away (1 is right);
 * it runs `steps` of the p-1 steps; overcopy: its own block copied in with
 * the largest block's length. */
static int ag_ring_variant(ck_comm *comm, const void *sendbuf, char *out, size_t count, ck_dtype dt, int stride,
                           int steps, int overcopy)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    int rc;
    size_t o0, max_len;
    ck_block(count, p, 0, &o0, &max_len);
    if (sendbuf != out + off * es &&
        (rc = ck_copy(comm, out + off * es, sendbuf, (overcopy ? max_len : len) * es)))   /* BUG when overcopy */
        return rc;
    for (int s = 0; s < steps; s++) {
        ck_step(comm, s, "all-gather");
        size_t soff, slen, roff, rlen;
        ck_block(count, p, mod(r - s, p), &soff, &slen);
        ck_block(count, p, mod(r - s - 1, p), &roff, &rlen);
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, mod(r + stride, p), out + roff * es, rlen * es,
                              mod(r - stride, p), s)))
            return rc;
    }
    return CK_SUCCESS;
}

static int ag_neighbour_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    return ag_ring_variant(comm, s, r, count, dt, 2, ck_comm_size(comm) - 1, 0);
}

static int ag_short_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    const int p = ck_comm_size(comm);
    return ag_ring_variant(comm, s, r, count, dt, 1, p > 1 ? p - 2 : 0, 0);
}

static int ag_overcopy_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    return ag_ring_variant(comm, s, r, count, dt, 1, ck_comm_size(comm) - 1, 1);
}

/* Every rank posts its receive and waits for it before sending (BUG): no
 * send is ever posted. */
static int rs_recvfirst_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    size_t off, len;
    ck_block(count, p, rank, &off, &len);
    if (p == 1) return r == s ? CK_SUCCESS : ck_copy(comm, r, s, len * es);
    char *tmp = ck_scratch(comm, (count / (size_t)p + 1) * es);
    if (!tmp) return CK_ERR_NOMEM;
    ck_req rq;
    int rc;
    ck_step(comm, 0, "reduce-scatter");
    size_t loff, llen;
    ck_block(count, p, mod(rank - 1, p), &loff, &llen);
    if ((rc = ck_irecv(comm, tmp, llen * es, mod(rank - 1, p), 0, &rq)) || (rc = ck_wait(comm, &rq))) return rc;
    return rs_ring_variant(comm, s, r, count, dt, op, 0, -1);
}

static ck_algo broken[] = {
    {.name = "broken_ring_skip", .coll = CK_COLL_REDUCE_SCATTER, .mem = CK_MEM_HOST,
     .summary = "ring reduce-scatter whose step 1 does not add its input", .run = rs_skip_run},
    {.name = "broken_ring_block", .coll = CK_COLL_REDUCE_SCATTER, .mem = CK_MEM_HOST,
     .summary = "ring reduce-scatter that finishes block r+1 on rank r", .run = rs_block_run},
    {.name = "broken_ring_neighbour", .coll = CK_COLL_ALLGATHER, .mem = CK_MEM_HOST,
     .summary = "ring all-gather with neighbours two ranks away", .run = ag_neighbour_run},
    {.name = "broken_ring_short", .coll = CK_COLL_ALLGATHER, .mem = CK_MEM_HOST,
     .summary = "ring all-gather that stops one step early", .run = ag_short_run},
    {.name = "broken_ring_overcopy", .coll = CK_COLL_ALLGATHER, .mem = CK_MEM_HOST,
     .summary = "ring all-gather that copies its own block with the largest block's length", .run = ag_overcopy_run},
    {.name = "broken_ring_recvfirst", .coll = CK_COLL_REDUCE_SCATTER, .mem = CK_MEM_HOST,
     .summary = "ring reduce-scatter whose ranks all receive before they send", .run = rs_recvfirst_run},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        const ck_algo *ring = ck_coll_algo_find(broken[i].coll, "ring");
        broken[i].diagnose = ring->diagnose;
        broken[i].bytes_sent = ring->bytes_sent;
        broken[i].bytes_formula = ring->bytes_formula;
        if (ck_register_algo(&broken[i]) != CK_SUCCESS) {
            fprintf(stderr, "collcheck_broken_coll: cannot register '%s'\n", broken[i].name);
            return 2;
        }
    }
    return collcheck_main(argc, argv);
}
