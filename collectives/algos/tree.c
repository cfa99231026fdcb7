/*
 * tree — binary-tree reduce to the root, then broadcast back down, both
 * pipelined in segments.
 *
 * Idea. Arrange the ranks as a binary heap (ck_tree_heap in trees.h): rank r
 * has children 2r+1 and 2r+2 (those < p) and parent (r-1)/2; rank 0 is the
 * root. Cut the buffer into S segments of at most chunk_bytes
 * (ck_comm_config()->chunk_bytes, default 256 KiB; ck_block cuts them evenly).
 *   Reduce, for each segment k: receive segment k from each child, add it to
 *     our own input, send the partial sum to the parent. The receive of k+1
 *     is already posted while we add k, and the send is nonblocking, so the
 *     level below is busy with k+1 while we work on k.
 *   Broadcast, for each segment k: receive the result's segment k from the
 *     parent (straight into recvbuf), send it on to each child.
 * With many segments every level works at once: the time is one segment per
 * level plus the whole buffer once, not the whole buffer once per level.
 *
 * Worked example, p = 4 (rank 0 root, children 1 and 2; rank 1's child is 3),
 * buffer in 2 segments s0 s1, xR.k = rank R's input segment k. Each cell:
 * what the rank SENDS in that time slot (a slot = one segment transfer).
 *
 *   reduce       rank 0        rank 1                 rank 2     rank 3
 *   slot 0                                            x2.0       x3.0
 *   slot 1                     x1.0+x3.0              x2.1       x3.1
 *   slot 2                     x1.1+x3.1
 *   (rank 0 now holds s0 = x0.0+(x1.0+x3.0)+x2.0 and s1 likewise)
 *   broadcast    rank 0        rank 1                 rank 2     rank 3
 *   slot 3       s0 -> 1, 2
 *   slot 4       s1 -> 1, 2    s0 -> 3
 *   slot 5                     s1 -> 3
 *
 * Each rank adds in a fixed order (own input, child 2r+1, child 2r+2) and
 * everyone receives the root's result, so all ranks hold identical bits.
 *
 * Bytes sent per rank: n to its parent (every rank but the root) plus n to
 * each child: a leaf sends n, an interior rank with two children 3n, the root
 * 2n (n when p = 2). Messages: S per link. The interior ranks' links carry
 * 3n: this is what the double binary tree (tree2.c) evens out.
 * Cost, with d = floor(log2 p) levels below the root, S segments of s = n/S
 * bytes and w = min(2, p-1) children on the busiest rank: a stage moves one
 * segment one level; the reduce takes d + S - 1 stages of α + w·s·β + w·s·γ
 * (w segments arrive on one link and are added), the broadcast as many of
 * α + w·s·β (w segments leave on one link):
 *     T = (d + S - 1)·(2α + 2w·s·β + w·s·γ)
 * The table above is p = 4, S = 2: d = 2, 3 stages each way, slots 0..5.
 * For large n this tends to 2S·α + 4n·β + 2n·γ, independent of p; for small n
 * (S = 1) it is 2d·α + ...: logarithmic latency, unlike the ring's 2(p-1)α.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.26        9.02        9.02       18.05
 *       1M      278.14      675.36      675.36      945.50
 *      64M    17801.22    34713.50    34713.50    34983.65
 */
#include <math.h>
#include "trees.h"

enum { TAG_UP = 0, TAG_DOWN = 1 };

static int tree_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                    size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const size_t S = ck_num_chunks(count, ck_tree_segment(ck_comm_config(comm), es));
    const ck_tree me = ck_tree_heap(p, r);
    const int kids = ck_tree_children(me);      /* child[0], then child[1] */
    const char *in = sendbuf;
    char *out = recvbuf;
    size_t off, len, big;
    int rc;

    if (p == 1) return ck_copy(comm, out, in, count * es);
    ck_block(count, S, 0, &off, &big);          /* segment 0 is the longest */
    char *scratch = ck_scratch(comm, 4 * big * es);
    if (!scratch) return CK_ERR_NOMEM;
    char *slot[2][2];                           /* [child][k % 2]: double-buffered receives */
    for (int i = 0; i < 4; i++) slot[i / 2][i % 2] = scratch + i * big * es;
    ck_req kid_rx[2][2] = {0}, up_tx[2] = {0}, down_rx[2] = {0}, kid_tx[2][2] = {0};   /* [..][k % 2] */

    /* ---- reduce: children -> reduce -> parent, segment by segment. */
    for (int c = 0; c < kids; c++)
        if ((rc = ck_irecv(comm, slot[c][0], big * es, me.child[c], TAG_UP, &kid_rx[c][0]))) return rc;
    for (size_t k = 0; k < S; k++) {
        ck_step(comm, (int)k, "reduce");
        if (k + 1 < S) {                        /* segment k+1 lands in the other buffer meanwhile */
            ck_block(count, S, k + 1, &off, &len);
            for (int c = 0; c < kids; c++)
                if ((rc = ck_irecv(comm, slot[c][(k + 1) % 2], len * es, me.child[c], TAG_UP,
                                   &kid_rx[c][(k + 1) % 2]))) return rc;
        }
        ck_block(count, S, k, &off, &len);
        const char *acc = in + off * es;        /* a leaf sends its input as it is */
        for (int c = 0; c < kids; c++) {
            if ((rc = ck_wait(comm, &kid_rx[c][k % 2]))) return rc;
            if ((rc = ck_reduce_local(comm, out + off * es, acc, slot[c][k % 2], len, dt, op))) return rc;
            acc = out + off * es;
        }
        if (me.parent >= 0) {
            if ((rc = ck_wait(comm, &up_tx[k % 2]))) return rc;   /* segment k-2 has left */
            if ((rc = ck_isend(comm, acc, len * es, me.parent, TAG_UP, &up_tx[k % 2]))) return rc;
        }
    }
    /* The broadcast overwrites recvbuf, which the sends up may still read. */
    if ((rc = ck_waitall(comm, up_tx, 2))) return rc;

    /* ---- broadcast: parent -> children, received straight into recvbuf. */
    if (me.parent >= 0 && (rc = ck_irecv(comm, out, big * es, me.parent, TAG_DOWN, &down_rx[0]))) return rc;
    for (size_t k = 0; k < S; k++) {
        ck_step(comm, (int)(S + k), "broadcast");
        if (me.parent >= 0) {
            if (k + 1 < S) {
                ck_block(count, S, k + 1, &off, &len);
                if ((rc = ck_irecv(comm, out + off * es, len * es, me.parent, TAG_DOWN,
                                   &down_rx[(k + 1) % 2]))) return rc;
            }
            if ((rc = ck_wait(comm, &down_rx[k % 2]))) return rc;
        }
        ck_block(count, S, k, &off, &len);
        for (int c = 0; c < kids; c++) {
            if ((rc = ck_wait(comm, &kid_tx[c][k % 2]))) return rc;
            if ((rc = ck_isend(comm, out + off * es, len * es, me.child[c], TAG_DOWN, &kid_tx[c][k % 2]))) return rc;
        }
    }
    return ck_waitall(comm, &kid_tx[0][0], 4);
}

/* n per link (to the parent, to each child), in S messages: one per segment. */
static uint64_t tree_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return p > 1 ? (uint64_t)ck_tree_links(ck_tree_heap(p, r)) * count * es : 0;
}

static uint64_t tree_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    return p > 1 ? (uint64_t)ck_tree_links(ck_tree_heap(p, r)) * ck_num_chunks(count, ck_tree_segment(cfg, es)) : 0;
}

/* Per message: one segment, the longest ceil(n/S) elements; none is empty
 * (S <= n, so every segment has an element). */
static uint64_t tree_largest(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r;
    if (p == 1 || count == 0) return 0;
    const size_t S = ck_num_chunks(count, ck_tree_segment(cfg, es));
    return (uint64_t)((count + S - 1) / S) * es;
}

static double tree_cost(const ck_cost_params *m, int p, double n)
{
    int d = 0;
    while (2 << d <= p) d++;                    /* d = floor(log2 p) */
    const double S = m->chunk > 0 && n > m->chunk ? ceil(n / m->chunk) : 1, s = n / S, w = p == 2 ? 1 : 2;
    return p == 1 ? 0 : (d + S - 1) * (2 * m->alpha + 2 * w * s * m->beta + w * s * m->gamma);
}

/* The segment, and the missing rank's path up to rank 0 (trees.c). */
static void tree_diagnose(const ck_fault *f, char *out, size_t cap)
{
    ck_tree_diagnose(f, CK_TREE_HEAP, 0, f->count, "", out, cap);
}

const ck_algo ck_algo_tree = {
    .name = "tree", .summary = "binary-tree reduce to rank 0 + broadcast, pipelined in segments",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "n x links (leaf n, <= 3n)", .bytes_sent = tree_bytes, .msgs_sent = tree_msgs,
    .cost_formula = "(d+S-1)(2α + 2w·sβ + w·sγ), d = floor(log2 p), S = ceil(n/c), s = n/S, w = min(2,p-1)",
    .cost = tree_cost, .diagnose = tree_diagnose, .run = tree_run, .max_msg_bytes = tree_largest,
};
