/*
 * tree2 — NCCL's double binary tree (Sanders, Speck & Träff 2009; NCCL 2.4):
 * two complementary binary trees, each reducing and broadcasting half of the
 * buffer, at the same time.
 *
 * Idea. In one binary tree (tree.c) the leaves, half the ranks, only ever
 * send n up and receive n down, while an interior rank sends 3n: the interior
 * links are the bottleneck. Build a second tree in which the leaves of the
 * first are the interior ranks and vice versa, give each tree half of the
 * buffer, and run both at once: every rank now does interior work on one half
 * and leaf work on the other, so the load is even and each rank sends at
 * most 3·n/2 + n/2 = 2n, like the ring, with the tree's log p latency.
 *
 * Tree 1, the in-order binary tree over ranks 0..p-1 (as NCCL builds it).
 * Let b = lowbit(v), the lowest set bit of rank v:
 *   - odd ranks (b = 1) are leaves;
 *   - an even rank v > 0 has children v - b/2 and v + h, h the largest of
 *     b/2, b/4, ... with v + h < p (none if v = p-1);
 *   - its parent is whichever of v ± b has lowest bit 2b, or v - b when that
 *     one is >= p;
 *   - rank 0 is the root, with one child: the largest power of two < p.
 * So every odd rank is a leaf and every even rank interior.
 * Tree 2 is tree 1 on renamed ranks v(r), chosen to flip parity:
 *   p even: mirror, v = p-1-r   (p-1 is odd, so odd r <-> even v);
 *   p odd:  shift,  v = (r+1) mod p (flips parity for every r but p-1).
 * The property relied on: no rank is interior in both trees when p is even,
 * and exactly one (rank p-1, tree 2's root) when p is odd. (tests/unit/
 * test_trees.c checks it for every p up to 1024, and that each is a tree:
 * one root, every child's parent lists it as a child, every rank reached.)
 * Tree 1's root is rank 0, tree 2's rank p-1.
 *
 * Worked example, p = 4, halves H1 (tree 1) and H2 (tree 2).
 *   tree 1: 0 -> 2 -> {1, 3}       (0 root; 2 has children 1 and 3)
 *   tree 2: mirror, v = 3 - r: 3 -> 1 -> {2, 0}
 * Each cell: what the rank SENDS (one segment per half shown; with S
 * segments the rows overlap like tree.c's).
 *
 *   reduce     rank 0          rank 1            rank 2            rank 3
 *   slot 0     H2: x0 -> 1     H1: x1 -> 2       H2: x2 -> 1       H1: x3 -> 2
 *   slot 1                     H2: x1+x2+x0 -> 3 H1: x2+x1+x3 -> 0
 *   broadcast  rank 0          rank 1            rank 2            rank 3
 *   slot 2     H1: sum -> 2                                        H2: sum -> 1
 *   slot 3                     H2: sum -> 2, 0   H1: sum -> 1, 3
 *
 * The topologies (ck_tree_inorder, ck_tree_double) and the engine that runs
 * both trees at once, segment by segment like tree.c, live in trees.c.
 *
 * Bytes sent per rank: over both trees, n/2 to each parent and each child:
 * here rank 0 and rank 3 send n, ranks 1 and 2 send 2n. Never more than 2n
 * (give or take an element: the first half is one element longer when the
 * count is odd). Messages: S per link per tree, S = segments of a half.
 * Cost: tree.c's stages on n/2 bytes. d = ceil(log2 p) levels (the in-order
 * tree is that deep), S = ceil(n/2c) segments of s = n/2S bytes per half,
 * w = min(2, p-1): in a stage a rank receives at most w segments (it has at
 * most 2 children over both trees) and sends at most w:
 *     T = (d + S - 1)·(2α + 2w·s·β + w·s·γ)
 * The table above is p = 4, S = 1: d = 2, 2 stages each way, slots 0..3.
 * For large n this tends to 2S·α + 2n·β + n·γ: half the single tree's
 * bandwidth term, about the ring's, with 2d·α latency for small n.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.13        8.51       12.77       17.02
 *       1M      139.07      405.22      540.29      675.36
 *      64M     8900.61    17424.29    17559.36    17694.43
 */
#include <math.h>
#include <stdio.h>
#include "trees.h"

/* This rank's place in the two trees: tree 1 reduces the first half of the
 * buffer (ck_block: the longer one), tree 2 the second. */
static void tree2_parts(int p, int r, size_t count, ck_tree_part parts[2])
{
    for (int t = 0; t < 2; t++) {
        parts[t].node = ck_tree_double(p, r, t);
        ck_block(count, 2, t, &parts[t].off, &parts[t].len);
    }
}

static int tree2_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    if (p == 1) return ck_copy(comm, recvbuf, sendbuf, count * ck_dtype_size(dt));
    ck_tree_part parts[2];
    tree2_parts(p, r, count, parts);
    return ck_trees_allreduce(comm, sendbuf, recvbuf, dt, op, 2, parts);
}

static uint64_t tree2_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    uint64_t bytes = 0, msgs = 0;
    ck_tree_part parts[2];
    if (p == 1) return 0;
    tree2_parts(p, r, count, parts);
    ck_trees_traffic(cfg, es, 2, parts, &bytes, &msgs);
    return bytes;
}

static uint64_t tree2_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    uint64_t bytes = 0, msgs = 0;
    ck_tree_part parts[2];
    if (p == 1) return 0;
    tree2_parts(p, r, count, parts);
    ck_trees_traffic(cfg, es, 2, parts, &bytes, &msgs);
    return msgs;
}

/* Per message: one segment of a half, the longest ceil(len/S) elements of
 * either; none is empty (a half of no elements has no segments). */
static uint64_t tree2_largest(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    ck_tree_part parts[2];
    size_t most = 0;
    if (p == 1) return 0;
    tree2_parts(p, r, count, parts);
    for (int t = 0; t < 2; t++) {
        const size_t S = ck_num_chunks(parts[t].len, ck_tree_segment(cfg, es));
        if (S && (parts[t].len + S - 1) / S > most) most = (parts[t].len + S - 1) / S;
    }
    return (uint64_t)most * es;
}

static double tree2_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    int d = 0;
    while (1 << d < p) d++;
    const double h = n / 2, S = m->chunk > 0 && h > m->chunk ? ceil(h / m->chunk) : 1, s = h / S;
    const double w = p == 2 ? 1 : 2;
    return (d + S - 1) * (2 * m->alpha + 2 * w * s * m->beta + w * s * m->gamma);
}

/* Which tree's half holds the element, which of its segments, and the path
 * up that tree. */
static void tree2_diagnose(const ck_fault *f, char *out, size_t cap)
{
    if (f->p < 2 || f->elem >= f->count) return;
    ck_tree_part parts[2];
    char what[96];
    tree2_parts(f->p, f->rank, f->count, parts);
    const int t = f->elem >= parts[1].off;
    snprintf(what, sizeof what, "tree %d's half (elements %zu..%zu, root rank %d), ", t + 1, parts[t].off,
             parts[t].off + parts[t].len - 1, t ? f->p - 1 : 0);
    ck_tree_diagnose(f, t ? CK_TREE_INORDER_FLIPPED : CK_TREE_INORDER, parts[t].off, parts[t].len, what, out, cap);
}

const ck_algo ck_algo_tree2 = {
    .name = "tree2",
    .summary = "double binary tree (NCCL): two complementary trees, half the buffer each",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "<= 2n (n/2 per tree link)",
    .bytes_sent = tree2_bytes,
    .msgs_sent = tree2_msgs,
    .cost_formula = "(d+S-1)(2α + 2w·sβ + w·sγ), d = ceil(log2 p), S = ceil(n/2c), s = n/2S, w = min(2,p-1)",
    .cost = tree2_cost,
    .diagnose = tree2_diagnose,
    .run = tree2_run,
    .max_msg_bytes = tree2_largest,
};
