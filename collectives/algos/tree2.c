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
 * and exactly one (rank p-1, tree 2's root) when p is odd. (Listing both
 * trees for every p up to 1024 confirms it, and that each is a tree: one
 * root, every child's parent lists it as a child.) Tree 1's root is rank 0,
 * tree 2's rank p-1.
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
 * Bytes sent per rank: over both trees, n/2 to each parent and each child:
 * here rank 0 and rank 3 send n, ranks 1 and 2 send 2n. Never more than 2n.
 * Cost, d = ceil(log2 p) levels, S segments of s bytes per half:
 *     T ≈ 2(d + S - 1)·(α + 2·s·β) + ... → 2·n·β + n·γ for large n (half the
 *   single tree's), and 2d·α latency for small n.
 */
#include "collkit_algo.h"

/* The pipelined tree engine, in tree.c. */
int ck_trees_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf, ck_dtype dt, ck_op op,
                       int nt, const int nbr[][3], const size_t *off, const size_t *len);

/* Neighbours {parent, child, child} (-1 = none) of rank v in the in-order
 * binary tree over 0..p-1 described above. */
static void inorder_tree(int p, int v, int nbr[3])
{
    nbr[0] = nbr[1] = nbr[2] = -1;
    if (p == 1) return;
    if (v == 0) {
        int h = 1;
        while (2 * h < p) h *= 2;
        nbr[2] = h;
        return;
    }
    int b = v & -v;
    int up = (v & 2 * b) ? v - b : v + b;
    nbr[0] = up < p ? up : v - b;
    if (b > 1) {
        nbr[1] = v - b / 2;
        for (int h = b / 2; h >= 1; h /= 2)
            if (v + h < p) { nbr[2] = v + h; break; }
    }
}

/* Rank r's neighbours in tree t (0 or 1), as real ranks. */
static void dtree(int p, int r, int t, int nbr[3])
{
    if (t == 0) { inorder_tree(p, r, nbr); return; }
    int v = p % 2 == 0 ? p - 1 - r : (r + 1) % p;
    inorder_tree(p, v, nbr);
    for (int i = 0; i < 3; i++)
        if (nbr[i] >= 0) nbr[i] = p % 2 == 0 ? p - 1 - nbr[i] : (nbr[i] - 1 + p) % p;
}

static int tree2_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    if (p == 1) return ck_copy(comm, recvbuf, sendbuf, count * ck_dtype_size(dt));
    int nbr[2][3];
    size_t off[2], len[2];
    for (int t = 0; t < 2; t++) {
        dtree(p, r, t, nbr[t]);
        ck_block(count, 2, t, &off[t], &len[t]);   /* tree 1 gets the (larger) first half */
    }
    return ck_trees_allreduce(comm, sendbuf, recvbuf, dt, op, 2, (const int (*)[3])nbr, off, len);
}

static uint64_t tree2_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    uint64_t total = 0;
    if (p == 1) return 0;
    for (int t = 0; t < 2; t++) {
        int nbr[3];
        size_t off, len;
        dtree(p, r, t, nbr);
        ck_block(count, 2, t, &off, &len);
        total += (uint64_t)len * es * (uint64_t)((nbr[0] >= 0) + (nbr[1] >= 0) + (nbr[2] >= 0));
    }
    return total;
}

const ck_algo ck_algo_tree2 = {
    .name = "tree2",
    .summary = "double binary tree (NCCL): two complementary trees, half the buffer each",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "<= 2n (n/2 per tree link)",
    .bytes_sent = tree2_bytes,
    .run = tree2_run,
};
