/* padded_pipe.c — lab 02 gamed: the lab 01 ring never pipelined, padded with
 * nc - 1 empty messages per reduce-scatter step so that the message count is
 * the declared one, and the descriptor's per-message formulas (max_msg_bytes,
 * empty_msgs) deleted so that nothing counts the empty ones. Right results,
 * bytes and message count; the grader must still fail it. */
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
        for (size_t k = 1; !rc && k < my_pipe_chunks(p, count, es, ck_comm_config(comm)); k++)
            rc = ck_sendrecv(comm, tmp, 0, right, tmp, 0, left, s);   /* the padding */
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

const ck_algo my_pipe = {
    .name = "my_pipe",
    .summary = "lab 02: your pipelined ring",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = my_pipe_bytes,
    .msgs_sent = my_pipe_msgs,
    .run = my_pipe_run,
};
CK_REGISTER_ALGO(my_pipe)
