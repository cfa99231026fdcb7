/*
 * ring_pipelined — the ring all-reduce with every ring step cut into chunks
 * and run nonblocking, so moving one chunk overlaps reducing the previous one.
 *
 * Idea. Same schedule as `ring` (read ring.c first): p blocks (ck_block),
 * reduce-scatter for p-1 steps, all-gather for p-1 steps, rank r sending to
 * r+1 and receiving from r-1. In `ring` a step is one big blocking sendrecv
 * followed by one big reduction: the link idles while the rank reduces, and
 * the reduction reads a scratch block far too large to stay in cache. Here
 * each block is cut into nc nearly equal chunks of at most chunk_bytes
 * (ck_comm_config()->chunk_bytes, default 256 KiB, COLLKIT_CHUNK to change),
 *     nc = ceil(largest block / chunk elements),   chunk k = ck_block(block, nc, k)
 * so every block (uneven ones too) has the same nc chunks and the two sides of
 * a link agree on every message size. Within a step:
 *     post recv chunk 0 and 1 (two scratch slots: double buffering)
 *     post sends of chunks 0 .. W-1
 *     for k = 0 .. nc-1:
 *         wait recv k; reduce it into recvbuf  <- recv k+1 is landing meanwhile
 *         post recv k+2 into the slot just freed
 *         when send k is done, post send k+W   <- at most W sends in flight
 * All-gather chunks are received straight into recvbuf (no scratch, no
 * reduce). A step ends when all its sends are done, so a later step never
 * overwrites data an earlier send is still reading (in place included).
 *
 * Worked example, p = 4, blocks A B C D each in nc = 2 chunks (A = A.0 A.1).
 * "B0+B1" is a partial sum. Each cell: what the rank SENDS at that step, in
 * order; the receiving rank reduces chunk .0 while chunk .1 is still arriving.
 *
 *   reduce-scatter   rank 0            rank 1            rank 2            rank 3
 *   step 0           A0.0  A0.1        B1.0  B1.1        C2.0  C2.1        D3.0  D3.1
 *   step 1           (D3+D0).0 .1      (A0+A1).0 .1      (B1+B2).0 .1      (C2+C3).0 .1
 *   step 2           (C2+C3+C0).0 .1   (D3+D0+D1).0 .1   (A0+A1+A2).0 .1   (B1+B2+B3).0 .1
 *   now owns         B                 C                 D                 A
 *   all-gather       rank 0            rank 1            rank 2            rank 3
 *   step 3           B.0 B.1           C.0 C.1           D.0 D.1           A.0 A.1
 *   step 4           A.0 A.1           B.0 B.1           C.0 C.1           D.0 D.1
 *   step 5           D.0 D.1           A.0 A.1           B.0 B.1           C.0 C.1
 *
 * Bytes sent per rank: exactly the ring's, 2(p-1)/p * n: chunking changes
 * the number of messages (2(p-1)·nc per rank), not the bytes.
 * Cost, with b = n/p bytes per block in nc = ceil(b/c) chunks of c' = b/nc
 * bytes (c = chunk bytes):
 *   reduce-scatter step   nc·α + b·max(β,γ) + c'·min(β,γ)
 *       chunk k is reduced while chunk k+1 arrives, so per byte only the
 *       slower of the two counts, plus one chunk of the faster that cannot
 *       hide (the first arrival, or the last reduction);
 *   all-gather step       nc·α + b·β
 *   T = (p-1)·(2·nc·α + b·(β + max(β,γ)) + c'·min(β,γ))
 * With nc = 1 this is the ring's 2(p-1)·α + (p-1)·b·(2β + γ). Against the
 * ring, a reduce-scatter step saves (b - c')·min(β,γ) and pays (nc-1)·α more
 * per step: small chunks cost latency, big chunks lose overlap and the
 * scratch falls out of cache. 256 KiB keeps both slots in a typical L2.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.13       12.19       16.20       60.24
 *       1M      125.96      208.61      225.72      305.76
 *      64M     7235.99    10873.65    11621.04    13739.52
 */
#include <math.h>
#include "collkit_algo.h"
#include "ring_schedule.h"   /* the ring's blocks by step, bytes and diagnosis */

enum { RP_SEND_WINDOW = 4 };   /* sends in flight per step */

/* One ring step as seen by one rank. */
typedef struct {
    ck_comm    *comm;
    int         t, rs, left, right;
    size_t      nc, es;
    const char *send;        /* the block we send */
    size_t      slen;
    char       *recv;        /* where the received block ends up, in recvbuf */
    const char *own;         /* our input for that block (reduce-scatter) */
    size_t      rlen;
    char       *slot[2];     /* double-buffered receive scratch */
} rp_step;

/* Reduce-scatter chunks land in a scratch slot, all-gather chunks straight
 * in their place in recvbuf. */
static int post_recv(rp_step *st, size_t k, ck_req *q)
{
    size_t co, cl;
    ck_block(st->rlen, st->nc, k, &co, &cl);
    void *dst = st->rs ? (void *)st->slot[k % 2] : (void *)(st->recv + co * st->es);
    return ck_irecv(st->comm, dst, cl * st->es, st->left, st->t, q);
}

static int post_send(rp_step *st, size_t k, ck_req *q)
{
    size_t co, cl;
    ck_block(st->slen, st->nc, k, &co, &cl);
    return ck_isend(st->comm, st->send + co * st->es, cl * st->es, st->right, st->t, q);
}

static int run_step(rp_step *st, ck_dtype dt, ck_op op)
{
    ck_comm *comm = st->comm;
    const size_t nc = st->nc, W = RP_SEND_WINDOW;
    ck_req rq[2], sq[RP_SEND_WINDOW];
    int rc;
    for (int i = 0; i < 2; i++) rq[i].active = 0;
    for (int i = 0; i < RP_SEND_WINDOW; i++) sq[i].active = 0;

    for (size_t k = 0; k < nc && k < 2; k++)
        if ((rc = post_recv(st, k, &rq[k]))) return rc;
    for (size_t k = 0; k < nc && k < W; k++)
        if ((rc = post_send(st, k, &sq[k]))) return rc;

    for (size_t k = 0; k < nc; k++) {
        if ((rc = ck_wait(comm, &rq[k % 2]))) return rc;
        if (st->rs) {   /* chunk k+1 keeps arriving while we reduce chunk k */
            size_t co, cl;
            ck_block(st->rlen, nc, k, &co, &cl);
            size_t e = co * st->es;
            if ((rc = ck_reduce_local(comm, st->recv + e, st->own + e, st->slot[k % 2], cl, dt, op))) return rc;
        }
        if (k + 2 < nc && (rc = post_recv(st, k + 2, &rq[k % 2]))) return rc;
        if (k + W < nc) {
            if ((rc = ck_wait(comm, &sq[k % W]))) return rc;
            if ((rc = post_send(st, k + W, &sq[k % W]))) return rc;
        }
    }
    /* The step ends when its sends are done: a later step may overwrite them. */
    return ck_waitall(comm, sq, RP_SEND_WINDOW);
}

static int rp_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                  size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;

    if (p == 1) return ck_copy(comm, out, in, count * es);

    size_t chunk = ck_comm_config(comm)->chunk_bytes / es;
    if (chunk == 0) chunk = 1;
    size_t off0, lmax;
    ck_block(count, p, 0, &off0, &lmax);            /* block 0 is the largest */
    const size_t nc = ck_num_chunks(lmax, chunk);   /* >= 1 since count >= 1 */
    const size_t cmax = (lmax + nc - 1) / nc;       /* largest chunk, <= chunk */

    char *scratch = ck_scratch(comm, 2 * cmax * es);
    if (!scratch) return CK_ERR_NOMEM;

    rp_step st = {.comm = comm, .left = (r - 1 + p) % p, .right = (r + 1) % p,
                  .nc = nc, .es = es, .slot = {scratch, scratch + cmax * es}};
    for (int t = 0; t < 2 * (p - 1); t++) {
        const int rs = t < p - 1, s = rs ? t : t - (p - 1);
        const int sb = rs ? ring_rs_send(p, r, s) : ring_ag_send(p, r, s);
        const int rb = rs ? ring_rs_recv(p, r, s) : ring_ag_recv(p, r, s);
        size_t soff, roff;
        ck_block(count, p, sb, &soff, &st.slen);
        ck_block(count, p, rb, &roff, &st.rlen);
        st.t = t;
        st.rs = rs;
        /* Step 0 sends our own input; every later step sends what the previous
         * step left in recvbuf (a partial sum, then a finished block). */
        st.send = (t == 0 ? in : out) + soff * es;
        st.recv = out + roff * es;
        st.own = in + roff * es;
        ck_step(comm, t, rs ? "reduce-scatter" : "all-gather");
        if ((rc = run_step(&st, dt, op))) return rc;
    }
    return CK_SUCCESS;
}

/* Chunking does not change the bytes: exactly the ring's. */
static uint64_t rp_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return ring_schedule_bytes(p, r, count, es);
}

/* The number of chunks per block, exactly as rp_run cuts them. */
static size_t rp_chunks(int p, size_t count, size_t es, const ck_config *cfg)
{
    size_t chunk = cfg->chunk_bytes / es, off0, lmax;
    ck_block(count, p, 0, &off0, &lmax);
    return ck_num_chunks(lmax, chunk ? chunk : 1);
}

/* nc chunk messages per step, empty chunks included, 2(p-1) steps. */
static uint64_t rp_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r;
    if (p == 1 || count == 0) return 0;
    return 2 * (uint64_t)(p - 1) * rp_chunks(p, count, es, cfg);
}

/* Per message: none above the largest chunk, and a chunk message is empty
 * only where a block has fewer elements than nc (its chunks of none). */
static uint64_t rp_largest(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r;
    if (p == 1 || count == 0) return 0;
    size_t off0, lmax;
    ck_block(count, p, 0, &off0, &lmax);
    const size_t nc = rp_chunks(p, count, es, cfg);
    return (uint64_t)((lmax + nc - 1) / nc) * es;
}

static uint64_t rp_empty(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    if (p == 1 || count == 0) return 0;
    const size_t nc = rp_chunks(p, count, es, cfg);
    uint64_t n = 0;
    for (int s = 0; s < p - 1; s++) {
        size_t off, rs_len, ag_len;
        ck_block(count, p, ring_rs_send(p, r, s), &off, &rs_len);
        ck_block(count, p, ring_ag_send(p, r, s), &off, &ag_len);
        n += (rs_len < nc ? nc - rs_len : 0) + (ag_len < nc ? nc - ag_len : 0);
    }
    return n;
}

static double rp_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    const double b = n / p, nc = m->chunk > 0 && b > m->chunk ? ceil(b / m->chunk) : 1, c = b / nc;
    return (p - 1) * (2 * nc * m->alpha + b * (m->beta + fmax(m->beta, m->gamma)) + c * fmin(m->beta, m->gamma));
}

/* The ring's schedule, plus which chunk of the block the element rides in. */
static void rp_diagnose(const ck_fault *f, char *out, size_t cap)
{
    size_t off, len, co, cl, k = 0;
    const int blk = ring_block_of(f->p, f->count, f->elem, &off, &len);
    const size_t nc = rp_chunks(f->p, f->count, f->esize, f->cfg);
    for (; k + 1 < nc; k++) {
        ck_block(len, nc, k, &co, &cl);
        if (f->elem - off < co + cl) break;
    }
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    ck_sbuf_add(&sb, "element %zu rides in chunk %zu of %zu of block %d; ", f->elem, k, nc, blk);
    ring_schedule_where(f, blk, &sb);
}

const ck_algo ck_algo_ring_pipelined = {
    .name = "ring_pipelined",
    .summary = "ring with each block cut into chunks, nonblocking: reduce overlaps receive",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n",
    .bytes_sent = rp_bytes,
    .msgs_sent = rp_msgs,
    .max_msg_bytes = rp_largest,
    .empty_msgs = rp_empty,
    .cost_formula = "(p-1)·(2·nc·α + n/p·(β + max(β,γ)) + c'·min(β,γ))",
    .cost = rp_cost,
    .diagnose = rp_diagnose,
    .run = rp_run,
};
