/*
 * Lab 02 — pipeline the ring.
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

static int my_pipe_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    /* Step 0: replace this placeholder with the body of your lab 01 ring. */
    (void)sendbuf; (void)recvbuf; (void)count; (void)dt; (void)op;
    return ck_fail(comm, CK_ERR_UNSUPPORTED, "my_pipe is not written yet: paste your lab 01 ring here (HANDOUT step 0)");

    /* TODO 1 — in each reduce-scatter step, instead of one ck_sendrecv and
     * one ck_reduce_local, with nc = my_pipe_chunks(p, count, es, ck_comm_config(comm)):
     *   post ck_isend of the chunks of the block you send (a window of a few
     *   in flight is enough), post ck_irecv of chunk 0 into slot[0];
     *   for k = 0 .. nc-1:
     *       post ck_irecv of chunk k+1 into slot[(k+1) % 2]   (if k+1 < nc)
     *       ck_wait for chunk k; reduce it: out = in op slot[k % 2]
     *   ck_waitall on the sends before the step ends (why?).
     * Two slots of the largest chunk's size: ck_scratch(comm, 2 * max_chunk * es).
     * The all-gather stays one ck_sendrecv per step. */
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
