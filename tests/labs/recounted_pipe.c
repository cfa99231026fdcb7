/* recounted_pipe.c — lab 02 gamed: the lab 01 ring never pipelined, and the
 * descriptor's "given" message count changed to what the unpipelined ring
 * sends (2 per step). Right results and bytes, and a message count that
 * meets its own formula; the grader, which counts against lab 02's schedule
 * and not the file's, must still fail it. */
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
    (void)es; (void)cfg;
    return (uint64_t)(p - 1) * 2;
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
