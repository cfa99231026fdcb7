/*
 * broken.c — all-reduce algorithms with one deliberate bug each, written
 * against collkit.h only and registered at run time the documented way for
 * out-of-tree code (ck_register_algo before collcheck_main). The checker
 * tests run collcheck on each and require both a failure and the right
 * diagnosis:
 *
 *   broken_ring_index      all-gather stores block r-s-1 instead of r-s
 *                          (a block index off by one)
 *   broken_ring_skip       reduce-scatter step 1 copies the incoming partial
 *                          sum instead of adding its own input
 *   broken_ring_wholebuf   a "ring" that passes every whole buffer around:
 *                          right result, (p-1)*n bytes instead of 2(p-1)/p*n
 *   broken_ring_max        reduces with max whatever op was asked
 *   broken_ring_chatty     the ring's exact bytes, but one message per
 *                          element instead of one per step
 *   broken_naive_overrun   the broadcast sends count+1 elements: every rank
 *                          writes one element past the end of recvbuf
 *   broken_deadlock        pairs of ranks both receive before they send
 */
#include <string.h>
#include "collkit_algo.h"

/* ------------------------------------------------------------------ ring
 * The ring of collectives/algos/ring.c (reduce-scatter, then all-gather;
 * rank r sends to r+1), with one of four bugs switched on. */
enum { BUG_BLOCK_INDEX = 1, BUG_SKIP_REDUCE, BUG_WRONG_OP, BUG_CHATTY };

/* One ring step's exchange. BUG_CHATTY sends the block one element per
 * message: the same bytes, but (block length) times the latency. The block a
 * rank receives is the one its left neighbour sends, so both sides agree on
 * the number of pieces. */
static int exchange(ck_comm *comm, const char *sb, size_t sbytes, int dst, char *rb, size_t rbytes, int src,
                    int tag, size_t es, int bug)
{
    if (bug != BUG_CHATTY) return ck_sendrecv(comm, sb, sbytes, dst, rb, rbytes, src, tag);
    for (size_t j = 0; j < sbytes / es || j < rbytes / es; j++) {   /* BUG: a message per element */
        ck_req rq[2];
        int rc;
        memset(rq, 0, sizeof rq);
        if (j < rbytes / es && (rc = ck_irecv(comm, rb + j * es, es, src, tag, &rq[0]))) return rc;
        if (j < sbytes / es && (rc = ck_isend(comm, sb + j * es, es, dst, tag, &rq[1]))) return rc;
        if ((rc = ck_waitall(comm, rq, 2))) return rc;
    }
    return CK_SUCCESS;
}

static int ring_with_bug(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                         ck_dtype dt, ck_op op, int bug)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;
    if (p == 1) return ck_copy(comm, out, in, count * es);
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, max_len * es);
    if (!tmp) return CK_ERR_NOMEM;

    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = exchange(comm, (s == 0 ? in : out) + soff * es, slen * es, (r + 1) % p,
                           tmp, rlen * es, (r - 1 + p) % p, s, es, bug))) return rc;
        if (bug == BUG_SKIP_REDUCE && s == 1)   /* BUG: forgets to add this rank's input */
            rc = ck_copy(comm, out + roff * es, tmp, rlen * es);
        else                                     /* BUG_WRONG_OP: max, whatever op is */
            rc = ck_reduce_local(comm, out + roff * es, in + roff * es, tmp, rlen, dt,
                                 bug == BUG_WRONG_OP ? CK_MAX : op);
        if (rc) return rc;
    }
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        int sb = ((r + 1 - s) % p + p) % p;
        int rb = bug == BUG_BLOCK_INDEX ? ((r - s - 1) % p + p) % p   /* BUG: one block early */
                                        : ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = exchange(comm, out + soff * es, slen * es, (r + 1) % p,
                           out + roff * es, rlen * es, (r - 1 + p) % p, p - 1 + s, es, bug))) return rc;
    }
    return CK_SUCCESS;
}

/* What a correct ring sends: every block but (r+1), then every block but (r+2). */
static uint64_t ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, l1, l2;
    ck_block(count, p, (r + 1) % p, &off, &l1);
    ck_block(count, p, (r + 2) % p, &off, &l2);
    return (uint64_t)(2 * count - l1 - l2) * es;
}

/* A correct ring sends one message per step: 2(p-1). */
static uint64_t ring_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)count; (void)es; (void)cfg;
    return p == 1 ? 0 : 2 * (uint64_t)(p - 1);
}

static int ring_index_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_BLOCK_INDEX); }
static int ring_skip_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_SKIP_REDUCE); }
static int ring_max_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_WRONG_OP); }
static int ring_chatty_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_CHATTY); }

/* ------------------------------------------------------------ whole buffer
 * Each rank forwards whole buffers around the ring: at step s it passes on
 * the input of rank r-s and adds what arrives. p-1 steps of n bytes: the
 * result is right, the traffic is p/2 times a real ring's. */
static int ring_wholebuf_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t n = count * ck_dtype_size(dt);
    char *buf = ck_scratch(comm, 2 * n), *fwd = buf, *got = buf + n;
    int rc;
    if (!buf) return CK_ERR_NOMEM;
    if ((rc = ck_copy(comm, fwd, sendbuf, n))) return rc;
    if ((rc = ck_copy(comm, recvbuf, sendbuf, n))) return rc;
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "pass-around");
        if ((rc = ck_sendrecv(comm, fwd, n, (r + 1) % p, got, n, (r - 1 + p) % p, s))) return rc;
        if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, got, count, dt, op))) return rc;
        char *t = fwd; fwd = got; got = t;
    }
    return CK_SUCCESS;
}

/* ---------------------------------------------------------------- overrun
 * Reduce to rank 0, broadcast back — with the classic length bug: the
 * broadcast moves count+1 elements. */
static int naive_overrun_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), n = count * es;
    int rc;
    if (r != 0) {
        ck_step(comm, 0, "reduce");
        if ((rc = ck_sendrecv(comm, sendbuf, n, 0, NULL, 0, -1, 0))) return rc;
        ck_step(comm, 1, "broadcast");
        return ck_sendrecv(comm, NULL, 0, -1, recvbuf, n + es, 0, 1);   /* BUG: n + es */
    }
    char *acc = ck_scratch(comm, 2 * n + es), *tmp = acc + n + es;
    if (!acc) return CK_ERR_NOMEM;
    if ((rc = ck_copy(comm, acc, sendbuf, n)) || (rc = ck_copy(comm, acc + n, sendbuf, es))) return rc;
    for (int src = 1; src < p; src++) {
        ck_step(comm, 0, "reduce");
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, n, src, 0))) return rc;
        if ((rc = ck_reduce_local(comm, acc, acc, tmp, count, dt, op))) return rc;
    }
    ck_step(comm, 1, "broadcast");
    for (int dst = 1; dst < p; dst++)
        if ((rc = ck_sendrecv(comm, acc, n + es, dst, NULL, 0, -1, 1))) return rc;   /* BUG */
    return ck_copy(comm, recvbuf, acc, n + es);                                       /* BUG */
}

static uint64_t naive_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    return (uint64_t)count * es * (r == 0 ? (uint64_t)(p - 1) : 1);
}

/* --------------------------------------------------------------- deadlock
 * Ranks 2k and 2k+1 swap buffers, but both post the receive and wait for it
 * before sending: neither send is ever posted. */
static int deadlock_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                        ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm), peer = r ^ 1;
    const size_t n = count * ck_dtype_size(dt);
    ck_req rq;
    int rc;
    if (peer >= p) return ck_copy(comm, recvbuf, sendbuf, n);
    char *tmp = ck_scratch(comm, n);
    if (!tmp) return CK_ERR_NOMEM;
    ck_step(comm, 0, "exchange");
    if ((rc = ck_irecv(comm, tmp, n, peer, 0, &rq)) || (rc = ck_wait(comm, &rq))) return rc;  /* BUG */
    if ((rc = ck_sendrecv(comm, sendbuf, n, peer, NULL, 0, -1, 0))) return rc;
    return ck_reduce_local(comm, recvbuf, sendbuf, tmp, count, dt, op);
}

static uint64_t deadlock_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return (r ^ 1) < p ? (uint64_t)count * es : 0;
}

const ck_algo broken_algos[] = {
    {.name = "broken_ring_index", .summary = "ring whose all-gather stores each block one slot early", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_index_run},
    {.name = "broken_ring_skip", .summary = "ring whose reduce-scatter step 1 forgets to add its input", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_skip_run},
    {.name = "broken_ring_wholebuf", .summary = "\"ring\" that passes whole buffers around", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_wholebuf_run},
    {.name = "broken_ring_max", .summary = "ring that always reduces with max", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_max_run},
    {.name = "broken_ring_chatty", .summary = "ring that sends each block one element per message", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_chatty_run},
    {.name = "broken_naive_overrun", .summary = "reduce + broadcast that moves count+1 elements", .mem = CK_MEM_HOST,
     .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes, .run = naive_overrun_run},
    {.name = "broken_deadlock", .summary = "pairwise exchange where both sides receive first", .mem = CK_MEM_HOST,
     .bytes_formula = "n (paired ranks)", .bytes_sent = deadlock_bytes, .run = deadlock_run},
};
const int broken_algos_count = (int)(sizeof broken_algos / sizeof broken_algos[0]);
