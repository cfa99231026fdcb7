/*
 * ring — reduce-scatter then all-gather around a ring (Patarasuk & Yuan 2009;
 * the algorithm behind Horovod's and NCCL's ring all-reduce).
 *
 * Idea. Cut the buffer into p blocks (ck_block: the first count%p blocks get
 * one extra element). Rank r sends to r+1 and receives from r-1 (mod p).
 *   Reduce-scatter, steps s = 0 .. p-2: send block (r-s), receive block
 *     (r-s-1) and add the local copy of it. After p-1 steps rank r holds the
 *     full sum of block (r+1).
 *   All-gather, steps s = 0 .. p-2: send block (r+1-s), receive block (r-s)
 *     and store it. After p-1 steps every rank holds every block.
 * Every link carries traffic at every step, and no rank ever sends more than
 * one block at a time: bandwidth-optimal.
 *
 * Worked example, p = 4, blocks A B C D, xR = block x of rank R's input.
 * "B0+B1" means a partial sum. Each cell: what the rank SENDS at that step.
 *
 *   reduce-scatter    rank 0      rank 1      rank 2       rank 3
 *   step 0            A0          B1          C2           D3
 *   step 1            D3+D0       A0+A1       B1+B2        C2+C3
 *   step 2            C2+C3+C0    D3+D0+D1    A0+A1+A2     B1+B2+B3
 *   now owns          B (all 4)   C (all 4)   D (all 4)    A (all 4)
 *
 *   all-gather        rank 0      rank 1      rank 2       rank 3
 *   step 0            B           C           D            A
 *   step 1            A           B           C            D
 *   step 2            D           A           B            C
 *
 * Bytes sent per rank: 2(p-1)/p * n (exactly: n minus one block, twice).
 * Cost (α latency, β seconds/byte, γ seconds/byte reduced):
 *     T = 2(p-1)·α + 2(p-1)/p·n·β + (p-1)/p·n·γ
 * The latency term grows with p, so for small messages a tree or recursive
 * doubling wins; for large ones the bandwidth term is what matters and it is
 * optimal: it does not grow with p.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.13       12.19       16.20       60.24
 *       1M      135.07      208.61      225.72      305.76
 *      64M     8392.61    12594.91    13437.77    15788.64
 */
#include "collkit_algo.h"
#include "ring_schedule.h"   /* the block formulas above, and the ring's bytes and diagnosis */

static int ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                    size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;

    if (p == 1) return ck_copy(comm, out, in, count * es);

    /* The largest block (block 0) bounds the receive scratch. */
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, max_len * es);
    if (!tmp) return CK_ERR_NOMEM;

    /* Reduce-scatter. Block b of `out` is written exactly once here (by the
     * reduction at the step that receives it), so reading the untouched input
     * from `in` works both in place and out of place. */
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        int sb = ring_rs_send(p, r, s), rb = ring_rs_recv(p, r, s);
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        const char *src = (s == 0 ? in : out) + soff * es;   /* step 0 sends our own input */
        if ((rc = ck_sendrecv(comm, src, slen * es, right, tmp, rlen * es, left, s))) return rc;
        if ((rc = ck_reduce_local(comm, out + roff * es, in + roff * es, tmp, rlen, dt, op))) return rc;
    }

    /* All-gather: pass the finished blocks around, received straight into out. */
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        int sb = ring_ag_send(p, r, s), rb = ring_ag_recv(p, r, s);
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, right,
                              out + roff * es, rlen * es, left, p - 1 + s))) return rc;
    }
    return CK_SUCCESS;
}

static uint64_t ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return ring_schedule_bytes(p, r, count, es);
}

/* One message per step, empty blocks included: 2(p-1). */
static uint64_t ring_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : 2 * (uint64_t)(p - 1);
}

static double ring_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    const double f = (double)(p - 1) / p;
    return 2 * (p - 1) * m->alpha + 2 * f * n * m->beta + f * n * m->gamma;
}

static void ring_diagnose(const ck_fault *f, char *out, size_t cap)
{
    size_t off, len;
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    ring_schedule_where(f, ring_block_of(f->p, f->count, f->elem, &off, &len), &sb);
}

const ck_algo ck_algo_ring = {
    .name = "ring",
    .summary = "reduce-scatter + all-gather around a ring, 2(p-1) steps",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = ring_bytes,
    .msgs_sent = ring_msgs,
    .cost_formula = "2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ",
    .cost = ring_cost,
    .diagnose = ring_diagnose,
    .run = ring_run,
};
