/*
 * tree — binary-tree reduce to the root, then broadcast back down, both
 * pipelined in segments.
 *
 * Idea. Arrange the ranks as a binary heap: rank i has children 2i+1 and
 * 2i+2 (those < p) and parent (i-1)/2; rank 0 is the root. Cut the buffer
 * into segments of chunk_bytes (ck_comm_config()->chunk_bytes, default
 * 256 KiB). Reduce: a rank waits for segment k from each child, adds them to
 * its own input, and sends the partial sum of segment k to its parent while
 * the children are already sending segment k+1 (receives are double-buffered,
 * sends nonblocking). Broadcast: the root sends segment k of the result to its
 * children; a rank forwards segment k down as soon as it has it, while k+1 is
 * on its way from above. With many segments the whole tree works at once, so
 * the time is one segment per level plus one buffer, not one buffer per level.
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
 * Each rank reduces in a fixed order (own input, then child 2i+1, then 2i+2)
 * and everyone receives the root's result, so all ranks hold identical bits.
 *
 * Bytes sent per rank: n to its parent (every rank but the root) plus n to
 * each child: a leaf sends n, an interior rank with two children 3n, the root
 * 2n (one child when p = 2: n). The interior ranks' links carry 3n: this is
 * what the double binary tree (tree2.c) evens out.
 * Cost, with d = floor(log2 p) levels, S segments of s = n/S bytes:
 *     T ≈ 2(d + S - 1)·(α + 2·s·β) + (d + S - 1)·2·s·γ
 *   (2·s·β: an interior rank's link serialises its two children's segments).
 *   For large n this tends to 4·n·β + 2·n·γ, independent of p; for small n
 *   (S = 1) it is 2d·(α + 2nβ): logarithmic latency, unlike the ring's 2(p-1)α.
 */
#include "collkit_algo.h"

enum { TREE_SEND_WINDOW = 4,   /* segments in flight per link */
       TREE_MAX = 2 };         /* tree2 runs two trees at once */

/* This rank's neighbours in one tree ( -1 = none ), and the slice of the
 * buffer that tree reduces. */
typedef struct { int parent, child[2]; size_t off, len; } ck_tree_view;

static void seg_of(const ck_tree_view *v, size_t seg, size_t k, size_t *off, size_t *n)
{
    *off = v->off + k * seg;
    *n = v->len - k * seg < seg ? v->len - k * seg : seg;
}

/* Reduce up then broadcast down `nt` trees at once, each over its own slice,
 * segment by segment. Slices must not overlap. Tags: tree t uses 2t going up
 * and 2t+1 going down, so two trees sharing an edge never mix their messages. */
static int trees_run(ck_comm *comm, const void *sendbuf, void *recvbuf, ck_dtype dt, ck_op op,
                     int nt, const ck_tree_view *tv)
{
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    char *out = recvbuf;
    const size_t W = TREE_SEND_WINDOW;
    int rc;

    if (nt < 1 || nt > TREE_MAX) return CK_ERR_INTERNAL;
    size_t seg = ck_comm_config(comm)->chunk_bytes / es, maxlen = 0, nseg[TREE_MAX], maxseg = 0;
    if (seg == 0) seg = 1;
    for (int t = 0; t < nt; t++) maxlen = tv[t].len > maxlen ? tv[t].len : maxlen;
    if (seg > maxlen) seg = maxlen ? maxlen : 1;
    for (int t = 0; t < nt; t++) {
        nseg[t] = ck_num_chunks(tv[t].len, seg);
        maxseg = nseg[t] > maxseg ? nseg[t] : maxseg;
    }

    /* Scratch: tree t, child c, slot b (double buffer) -> one segment each. */
    char *scratch = ck_scratch(comm, (size_t)nt * 4 * seg * es);
    if (!scratch) return CK_ERR_NOMEM;
#define SLOT(t, c, b) (scratch + ((size_t)(t) * 4 + (size_t)(c) * 2 + (size_t)(b)) * seg * es)

    ck_req rq[TREE_MAX][2][2], sq[TREE_MAX][2][TREE_SEND_WINDOW];
    for (int t = 0; t < TREE_MAX; t++)
        for (int c = 0; c < 2; c++) {
            rq[t][c][0].active = rq[t][c][1].active = 0;
            for (size_t w = 0; w < W; w++) sq[t][c][w].active = 0;
        }

    /* ---- reduce: children -> parent. sq[t][0] holds the sends to the parent. */
    for (int t = 0; t < nt; t++)
        for (int c = 0; c < 2; c++)
            for (size_t k = 0; k < 2 && k < nseg[t] && tv[t].child[c] >= 0; k++) {
                size_t so, sl;
                seg_of(&tv[t], seg, k, &so, &sl);
                if ((rc = ck_irecv(comm, SLOT(t, c, k), sl * es, tv[t].child[c], 2 * t, &rq[t][c][k]))) return rc;
            }
    /* Within a segment, serve first the trees where this rank waits for
     * nobody (leaf going up, root going down): its messages then leave before
     * it blocks on another tree, so with two trees both run at once instead
     * of taking turns. */
    int up_order[TREE_MAX], down_order[TREE_MAX], nu = 0, nd = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int t = 0; t < nt; t++) {
            int leaf = tv[t].child[0] < 0 && tv[t].child[1] < 0, root = tv[t].parent < 0;
            if (leaf == !pass) up_order[nu++] = t;
            if (root == !pass) down_order[nd++] = t;
        }

    for (size_t k = 0; k < maxseg; k++) {
        ck_step(comm, (int)k, "reduce");
        for (int i = 0; i < nt; i++) {
            const int t = up_order[i];
            if (k >= nseg[t]) continue;
            const ck_tree_view *v = &tv[t];
            size_t so, sl;
            seg_of(v, seg, k, &so, &sl);
            const char *acc = in + so * es;   /* a leaf forwards its input as is */
            for (int c = 0; c < 2; c++) {
                if (v->child[c] < 0) continue;
                if ((rc = ck_wait(comm, &rq[t][c][k % 2]))) return rc;
                if ((rc = ck_reduce_local(comm, out + so * es, acc, SLOT(t, c, k % 2), sl, dt, op))) return rc;
                acc = out + so * es;
                if (k + 2 < nseg[t]) {
                    size_t no, nl;
                    seg_of(v, seg, k + 2, &no, &nl);
                    if ((rc = ck_irecv(comm, SLOT(t, c, k % 2), nl * es, v->child[c], 2 * t, &rq[t][c][k % 2]))) return rc;
                }
            }
            if (v->parent >= 0) {
                ck_req *q = &sq[t][0][k % W];
                if ((rc = ck_wait(comm, q))) return rc;
                if ((rc = ck_isend(comm, acc, sl * es, v->parent, 2 * t, q))) return rc;
            } else if (acc != out + so * es) {
                if ((rc = ck_copy(comm, out + so * es, acc, sl * es))) return rc;   /* a root alone */
            }
        }
    }
    /* The broadcast overwrites recvbuf: the partial sums sent up must be out. */
    for (int t = 0; t < nt; t++)
        if ((rc = ck_waitall(comm, sq[t][0], TREE_SEND_WINDOW))) return rc;

    /* ---- broadcast: parent -> children, received straight into recvbuf. */
    for (int t = 0; t < nt; t++)
        for (size_t k = 0; k < 2 && k < nseg[t] && tv[t].parent >= 0; k++) {
            size_t so, sl;
            seg_of(&tv[t], seg, k, &so, &sl);
            if ((rc = ck_irecv(comm, out + so * es, sl * es, tv[t].parent, 2 * t + 1, &rq[t][0][k]))) return rc;
        }
    for (size_t k = 0; k < maxseg; k++) {
        ck_step(comm, (int)(maxseg + k), "broadcast");
        for (int i = 0; i < nt; i++) {
            const int t = down_order[i];
            if (k >= nseg[t]) continue;
            const ck_tree_view *v = &tv[t];
            size_t so, sl;
            seg_of(v, seg, k, &so, &sl);
            if (v->parent >= 0) {
                if ((rc = ck_wait(comm, &rq[t][0][k % 2]))) return rc;
                if (k + 2 < nseg[t]) {
                    size_t no, nl;
                    seg_of(v, seg, k + 2, &no, &nl);
                    if ((rc = ck_irecv(comm, out + no * es, nl * es, v->parent, 2 * t + 1, &rq[t][0][k % 2]))) return rc;
                }
            }
            for (int c = 0; c < 2; c++) {
                if (v->child[c] < 0) continue;
                ck_req *q = &sq[t][c][k % W];
                if ((rc = ck_wait(comm, q))) return rc;
                if ((rc = ck_isend(comm, out + so * es, sl * es, v->child[c], 2 * t + 1, q))) return rc;
            }
        }
    }
    for (int t = 0; t < nt; t++)
        for (int c = 0; c < 2; c++)
            if ((rc = ck_waitall(comm, sq[t][c], TREE_SEND_WINDOW))) return rc;
#undef SLOT
    return CK_SUCCESS;
}

/* The engine's entry point for tree2.c, in plain arrays: for tree t,
 * nbr[t] = {parent, child, child} of this rank (-1 = none) and the slice
 * [off[t], off[t] + len[t]) of the buffer that tree reduces. */
int ck_trees_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf, ck_dtype dt, ck_op op,
                       int nt, const int nbr[][3], const size_t *off, const size_t *len)
{
    ck_tree_view tv[TREE_MAX];
    if (nt < 1 || nt > TREE_MAX) return CK_ERR_INTERNAL;
    for (int t = 0; t < nt; t++)
        tv[t] = (ck_tree_view){nbr[t][0], {nbr[t][1], nbr[t][2]}, off[t], len[t]};
    return trees_run(comm, sendbuf, recvbuf, dt, op, nt, tv);
}

static ck_tree_view heap_view(int p, int r, size_t count)
{
    ck_tree_view v = {.parent = r == 0 ? -1 : (r - 1) / 2, .off = 0, .len = count};
    for (int c = 0; c < 2; c++) {
        long kid = 2L * r + 1 + c;
        v.child[c] = kid < p ? (int)kid : -1;
    }
    return v;
}

static int tree_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                    size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    if (p == 1) return ck_copy(comm, recvbuf, sendbuf, count * ck_dtype_size(dt));
    ck_tree_view v = heap_view(p, r, count);
    return trees_run(comm, sendbuf, recvbuf, dt, op, 1, &v);
}

static uint64_t tree_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    ck_tree_view v = heap_view(p, r, count);
    int links = (v.parent >= 0) + (v.child[0] >= 0) + (v.child[1] >= 0);
    return (uint64_t)count * es * (uint64_t)links;
}

const ck_algo ck_algo_tree = {
    .name = "tree",
    .summary = "binary-tree reduce to rank 0 + broadcast, pipelined in segments",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "n x links (leaf n, <= 3n)",
    .bytes_sent = tree_bytes,
    .run = tree_run,
};
