/*
 * Lab 03, part B — a pipelined binary tree.
 *
 * Defines `my_tree` and registers it. TODO: reduce up the tree and broadcast
 * down it, segment by segment (HANDOUT.md, part B). Rules as for my_rd.c.
 *
 * Given: the tree is a binary heap — rank r's children are 2r+1 and 2r+2
 * (those < p), its parent (r-1)/2, rank 0 is the root — and the buffer is cut
 * into S segments of at most chunk_bytes: segment k is
 * ck_block(count, S, k, &off, &len), with S = my_tree_segments(...).
 */
#include "collkit_algo.h"

static size_t my_tree_segments(size_t count, size_t es, const ck_config *cfg)
{
    size_t seg = cfg->chunk_bytes / es;
    return ck_num_chunks(count, seg ? seg : 1);
}

static int my_tree_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const int parent = r == 0 ? -1 : (r - 1) / 2;
    const int child[2] = {2 * r + 1 < p ? 2 * r + 1 : -1, 2 * r + 2 < p ? 2 * r + 2 : -1};
    const size_t S = my_tree_segments(count, es, ck_comm_config(comm));
    (void)op; (void)parent; (void)child; (void)S;

    /* TODO — reduce, for each segment k (tag 0):
     *   receive segment k from each child into scratch (post the receive of
     *   k+1 before you reduce k: two scratch slots per child), add it to your
     *   input (own input first, then child[0], then child[1]), send the sum
     *   to the parent with ck_isend (and wait for that send before reusing
     *   its slot);
     * broadcast, for each segment k (tag 1):
     *   receive segment k of the result from the parent straight into
     *   recvbuf (not on the root), send it on to each child.
     * Wait for every send before returning. The skeleton only copies. */
    return ck_copy(comm, recvbuf, sendbuf, count * es);
}

/* ---- Given: n bytes per tree link (to the parent, to each child), one
 * message per segment and link. ---- */
static int my_tree_links(int p, int r) { return (r > 0) + (2 * r + 1 < p) + (2 * r + 2 < p); }

static uint64_t my_tree_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return (uint64_t)my_tree_links(p, r) * count * es;
}

static uint64_t my_tree_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    return count ? (uint64_t)my_tree_links(p, r) * my_tree_segments(count, es, cfg) : 0;
}

const ck_algo my_tree = {
    .name = "my_tree",
    .summary = "lab 03: your pipelined binary tree",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_formula = "n x links (leaf n, <= 3n)",
    .bytes_sent = my_tree_bytes,
    .msgs_sent = my_tree_msgs,
    .run = my_tree_run,
};
CK_REGISTER_ALGO(my_tree)
