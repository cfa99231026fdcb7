/*
 * Lab 02 — the reference solution (instructors only: not in the student kit).
 *
 * This file defines `my_pipe` and registers it; `make lab02` builds it with
 * collkit-cc (collcheck + collbench + tagtrain with your algorithm added)
 * and grades it.
 *
 * Step 0 (HANDOUT.md): paste the body of YOUR lab 01 my_ring_run into
 * my_pipe_run below, replacing the placeholder. It will pass the checker's
 * results and bytes but fail its message count: a pipelined ring sends each
 * reduce-scatter block as nc chunks, and the descriptor below says so.
 * Step 1: the chunk loop (TODO 1).
 *
 * Rules (the grader checks them): use only collkit_algo.h. No MPI calls, no
 * calls of the library's own algorithms.
 */
#include "collkit_algo.h"

/* Chunks per block: every block is cut into the same number nc of chunks of
 * at most chunk_bytes, so both ends of a link agree on every message size.
 * Chunk k of a block of len elements is ck_block(len, nc, k, &off, &n).
 * Use this in my_pipe_run: the message count below depends on it. */
static size_t my_pipe_chunks(int p, size_t count, size_t es, const ck_config *cfg)
{
    size_t chunk = cfg->chunk_bytes / es, off0, largest;
    ck_block(count, p, 0, &off0, &largest);          /* block 0 is the largest */
    return ck_num_chunks(largest, chunk ? chunk : 1);
}

enum { WINDOW = 4 };   /* chunk sends in flight per step */

/* One pipelined reduce-scatter step: send the block at `src` in nc chunks to
 * `right` while receiving the block for `dst` from `left` chunk by chunk,
 * reducing chunk k while chunk k+1 arrives. */
static int pipe_step(ck_comm *comm, const char *src, size_t slen, char *dst, const char *own, size_t rlen,
                     size_t nc, char *slot[2], int left, int right, int tag, ck_dtype dt, ck_op op)
{
    const size_t es = ck_dtype_size(dt);
    ck_req rx[2] = {{0}}, tx[WINDOW] = {{0}};
    size_t co, cl;
    int rc;
    ck_block(rlen, nc, 0, &co, &cl);
    if ((rc = ck_irecv(comm, slot[0], cl * es, left, tag, &rx[0]))) return rc;
    for (size_t k = 0; k < nc; k++) {
        if (k + 1 < nc) {                             /* chunk k+1 lands while we reduce k */
            ck_block(rlen, nc, k + 1, &co, &cl);
            if ((rc = ck_irecv(comm, slot[(k + 1) % 2], cl * es, left, tag, &rx[(k + 1) % 2]))) return rc;
        }
        ck_block(slen, nc, k, &co, &cl);              /* send chunk k, at most WINDOW in flight */
        if ((rc = ck_wait(comm, &tx[k % WINDOW]))) return rc;
        if ((rc = ck_isend(comm, src + co * es, cl * es, right, tag, &tx[k % WINDOW]))) return rc;
        ck_block(rlen, nc, k, &co, &cl);
        if ((rc = ck_wait(comm, &rx[k % 2]))) return rc;
        if ((rc = ck_reduce_local(comm, dst + co * es, own + co * es, slot[k % 2], cl, dt, op))) return rc;
    }
    return ck_waitall(comm, tx, WINDOW);              /* the next step may overwrite what we sent */
}

static int my_pipe_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;

    if (p == 1) return ck_copy(comm, out, in, count * es);
    const size_t nc = my_pipe_chunks(p, count, es, ck_comm_config(comm));
    size_t off0, largest;
    ck_block(count, p, 0, &off0, &largest);
    const size_t max_chunk = (largest + nc - 1) / nc;
    char *scratch = ck_scratch(comm, 2 * max_chunk * es);
    if (!scratch) return CK_ERR_NOMEM;
    char *slot[2] = {scratch, scratch + max_chunk * es};

    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        const int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = pipe_step(comm, (s == 0 ? in : out) + soff * es, slen, out + roff * es, in + roff * es, rlen,
                            nc, slot, left, right, s, dt, op))) return rc;
    }
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        const int sb = ((r + 1 - s) % p + p) % p, rb = ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, right, out + roff * es, rlen * es, left, p - 1 + s)))
            return rc;
    }
    return CK_SUCCESS;
}

/* ---- The descriptor. Given. ----
 * Bytes: chunking changes the number of messages, not the bytes — exactly
 * the ring's. Messages: nc per reduce-scatter step, one per all-gather step. */
static uint64_t my_pipe_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, skip_rs, skip_ag;
    ck_block(count, p, (r + 1) % p, &off, &skip_rs);
    ck_block(count, p, (r + 2) % p, &off, &skip_ag);
    return (uint64_t)(2 * count - skip_rs - skip_ag) * es;
}

static uint64_t my_pipe_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r;
    if (p == 1 || count == 0) return 0;
    return (uint64_t)(p - 1) * (my_pipe_chunks(p, count, es, cfg) + 1);
}

/* Per message: no message is larger than the largest block (an all-gather
 * step's one message), and a message is empty only where the data is: a
 * chunk of no elements (a block shorter than nc) in a reduce-scatter step,
 * an empty block in an all-gather step. */
static uint64_t my_pipe_largest(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)cfg;
    size_t off0, largest;
    if (p == 1 || count == 0) return 0;
    ck_block(count, p, 0, &off0, &largest);
    return (uint64_t)largest * es;
}

static uint64_t my_pipe_empty(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    if (p == 1 || count == 0) return 0;
    const size_t nc = my_pipe_chunks(p, count, es, cfg);
    uint64_t n = 0;
    for (int s = 0; s < p - 1; s++) {
        size_t off, rs_len, ag_len;
        ck_block(count, p, ((r - s) % p + p) % p, &off, &rs_len);
        ck_block(count, p, ((r + 1 - s) % p + p) % p, &off, &ag_len);
        n += (rs_len < nc ? nc - rs_len : 0) + (ag_len == 0);
    }
    return n;
}

const ck_algo my_pipe = {
    .name = "my_pipe",
    .summary = "lab 02: your pipelined ring",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = my_pipe_bytes,
    .msgs_sent = my_pipe_msgs,
    .max_msg_bytes = my_pipe_largest,
    .empty_msgs = my_pipe_empty,
    .run = my_pipe_run,
};
CK_REGISTER_ALGO(my_pipe)
