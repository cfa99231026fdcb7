/*
 * Lab 02 — pipeline the ring.
 *
 * This program is collcheck with one more algorithm in the registry:
 * `my_pipe`, defined below. It starts as lab 01's ring (correct, not
 * pipelined). Do TODO 1 (HANDOUT.md, step 1), then run:
 *     mpirun -np 4 build/bin/lab02_pipe --algo my_pipe --quick --chunk 64
 *
 * Chunk k of nc over a block of len elements is ck_block(len, nc, k, ...).
 * Rules: use only the collkit.h point-to-point layer. No MPI calls.
 */
#include "collkit_algo.h"
#include "collcheck.h"

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

    /* Chunks: every block is cut into the same number nc of chunks of at
     * most chunk_bytes, so both ends of a link agree on each message size. */
    size_t chunk = ck_comm_config(comm)->chunk_bytes / es;
    if (chunk == 0) chunk = 1;
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);          /* block 0 is the largest */
    const size_t nc = ck_num_chunks(max_len, chunk);
    const size_t max_chunk = (max_len + nc - 1) / nc;
    char *scratch = ck_scratch(comm, 2 * max_chunk * es > max_len * es ? 2 * max_chunk * es : max_len * es);
    if (!scratch) return CK_ERR_NOMEM;
    char *slot[2] = {scratch, scratch + max_chunk * es};   /* two receive slots */

    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        const char *src = (s == 0 ? in : out) + soff * es;

        /* TODO 1 — replace these two calls by the chunk loop:
         *   post ck_isend of every chunk k of src (ck_block(slen, nc, k, ...)),
         *   post ck_irecv of chunk 0 into slot[0],
         *   for k = 0 .. nc-1:
         *       post ck_irecv of chunk k+1 into slot[(k+1) % 2]   (if k+1 < nc)
         *       ck_wait for chunk k; reduce it: out = in op slot[k % 2]
         *   ck_waitall on the sends.
         * ck_req arrays on the stack: nc can be large, so allocate the send
         * requests with malloc (or send in windows of a few chunks). */
        if ((rc = ck_sendrecv(comm, src, slen * es, right, scratch, rlen * es, left, s))) return rc;
        if ((rc = ck_reduce_local(comm, out + roff * es, in + roff * es, scratch, rlen, dt, op))) return rc;
    }
    (void)slot;

    /* All-gather: unchanged from lab 01 (pipelining it is optional). */
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        int sb = ((r + 1 - s) % p + p) % p, rb = ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, right,
                              out + roff * es, rlen * es, left, p - 1 + s))) return rc;
    }
    return CK_SUCCESS;
}

static ck_algo my_pipe = {
    .name = "my_pipe",
    .summary = "lab 02: your pipelined ring",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .run = my_pipe_run,
};

int main(int argc, char **argv)
{
    /* Chunking changes the number of messages, not the bytes: a pipelined
     * ring sends exactly what the plain ring sends. */
    my_pipe.bytes_sent = ck_algo_find("ring")->bytes_sent;
    if (ck_register_algo(&my_pipe) != CK_SUCCESS) return 2;
    return collcheck_main(argc, argv);
}
