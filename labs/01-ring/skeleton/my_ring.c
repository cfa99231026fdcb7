/*
 * Lab 01 — your ring all-reduce.
 *
 * This file defines one algorithm, `my_ring`, and registers it (the
 * CK_REGISTER_ALGO line at the end). It has no main: `make lab01` builds it
 * with collkit-cc into a program that is collcheck, collbench and tagtrain
 * with your algorithm added, and grades it:
 *     make lab01                                   build + grade
 *     build/bin/ckrun -np 4 build/labs/01-ring/lab check --algo my_ring --quick
 *
 * Fill in the two TODO blocks (HANDOUT.md, steps 2 and 3).
 * Rules (the grader checks them): use only collkit_algo.h — ck_sendrecv,
 * ck_reduce_local, ck_copy, ck_scratch, ck_block, ck_step. No MPI calls, no
 * calls of the library's own algorithms.
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

    /* The skeleton only copies the input: the checker will tell you what is
     * missing. Delete this line once TODO 1 writes every block it should. */
    int rc = ck_copy(comm, out, in, count * es);
    if (rc) return rc;

    /* TODO 1 — reduce-scatter. For s = 0 .. p-2:
     *   ck_step(comm, s, "reduce-scatter");
     *   send block (r - s) mod p to `right`, receive block (r - s - 1) mod p
     *   from `left` into tmp (one ck_sendrecv; use s as the tag), then
     *   out[block] = in[block] op tmp  with ck_reduce_local.
     * ck_block(count, p, b, &offset, &len) gives block b in elements. */

    /* TODO 2 — all-gather. For s = 0 .. p-2:
     *   ck_step(comm, p - 1 + s, "all-gather");
     *   send block (r + 1 - s) mod p from out, receive block (r - s) mod p
     *   straight into out (tag p - 1 + s). */

    (void)right; (void)left; (void)tmp; (void)op;
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
