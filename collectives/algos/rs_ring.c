/*
 * rs_ring — reduce-scatter around a ring: the first half of the ring
 * all-reduce (ring.c), on its own.
 *
 * Idea. Cut the buffer into p blocks (ck_block); rank r sends to r+1 and
 * receives from r-1 (mod p). Block b travels once around the ring, starting
 * at rank b+1 and gathering one input per hop, so that it arrives complete
 * at its owner, rank b:
 *   step s = 0 .. p-2: send block (r-1-s), receive block (r-2-s) and add
 *   the local input of it. The last step receives block r: the result.
 * (ring.c's reduce-scatter starts block b at rank b and leaves it on rank
 * b-1, because its all-gather passes the blocks on anyway; here the owner
 * must be rank b, so every block starts one rank later.)
 *
 * Worked example, p = 4, blocks A B C D, xR = block x of rank R's input.
 * Each cell: what the rank SENDS at that step.
 *
 *   step      rank 0      rank 1      rank 2       rank 3
 *   0         D0          A1          B2           C3
 *   1         C3+C0       D0+D1       A1+A2        B2+B3
 *   2         B2+B3+B0    C3+C0+C1    D0+D1+D2     A1+A2+A3
 *   owns      A (all 4)   B (all 4)   C (all 4)    D (all 4)
 *
 * Bytes sent per rank: every block but its own, (p-1)/p * n.
 * Cost: T = (p-1)·α + (p-1)/p·n·β + (p-1)/p·n·γ — half the ring all-reduce's
 * bandwidth term, the same per-byte optimum (every link busy every step).
 */
#include "collkit_algo.h"
#include "halves.h"

static int mod(int a, int p) { return (a % p + p) % p; }

static int rs_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    size_t off, len;
    ck_block(count, p, r, &off, &len);
    if (p == 1) return recvbuf == in ? CK_SUCCESS : ck_copy(comm, recvbuf, in, len * es);

    /* The partial sums: in place, in the buffer itself (block b's partial
     * where block b's input was: the other blocks are ours to overwrite),
     * with one block of scratch for what arrives; out of place sendbuf is
     * read-only, so two block-sized buffers, swapped every step. */
    const int inplace = (const char *)recvbuf >= in && (const char *)recvbuf < in + count * es;
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);   /* block 0 is the largest */
    char *scratch = ck_scratch(comm, (inplace ? 1 : 2) * max_len * es);
    if (!scratch) return CK_ERR_NOMEM;
    char *cur = scratch, *next = scratch + (inplace ? 0 : max_len * es);
    int rc;
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        size_t soff, slen, roff, rlen;
        ck_block(count, p, mod(r - 1 - s, p), &soff, &slen);
        ck_block(count, p, mod(r - 2 - s, p), &roff, &rlen);
        const char *src = s == 0 || inplace ? in + soff * es : cur;   /* step 0 sends our own input */
        if ((rc = ck_sendrecv(comm, src, slen * es, (r + 1) % p, next, rlen * es, mod(r - 1, p), s))) return rc;
        /* The last step's block is ours: add our input straight into recvbuf
         * (in place it is that input, read once, element by element). */
        char *dst = s == p - 2 ? recvbuf : inplace ? (char *)in + roff * es : next;
        if ((rc = ck_reduce_local(comm, dst, in + roff * es, next, rlen, dt, op))) return rc;
        char *t = cur;
        cur = next;
        next = t;
    }
    return CK_SUCCESS;
}

static double rs_ring_cost(const ck_cost_params *m, int p, double n)
{
    const double f = (double)(p - 1) / p;
    return (p - 1) * m->alpha + f * n * m->beta + f * n * m->gamma;
}

/* Block b (rank b's, where the checker looks) starts at rank b+1 and meets
 * rank q at step (q-b-2) mod p. */
static void rs_ring_diagnose(const ck_fault *f, char *out, size_t cap)
{
    const int p = f->p, b = f->rank;
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    if (p == 1) return;
    if (f->missing >= 0 && mod(f->missing - b - 2, p) == p - 1)
        ck_sbuf_add(&sb, "rank %d starts block %d (sends its own input at step 0); ", f->missing, b);
    else if (f->missing >= 0)
        ck_sbuf_add(&sb, "rank %d adds its input to block %d at step %d; ", f->missing, b,
                    mod(f->missing - b - 2, p));
    ck_sbuf_add(&sb, "rank %d finishes block %d at step %d with the partial sum from rank %d", b, b, p - 2,
                mod(b - 1, p));
}

const ck_algo ck_rs_ring = {
    .name = "ring",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "each block once around a ring, gathering one input per hop, p-1 steps",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "(p-1)/p * n",
    .bytes_sent = ck_rs_bytes_but_own,
    .msgs_sent = ck_halves_msgs,
    .cost_formula = "(p-1)α + (p-1)/p·nβ + (p-1)/p·nγ",
    .cost = rs_ring_cost,
    .diagnose = rs_ring_diagnose,
    .run = rs_ring_run,
};
