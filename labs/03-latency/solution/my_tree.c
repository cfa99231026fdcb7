/*
 * Lab 03, part B — the reference solution (instructors only: not in the student kit).
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
    const char *in = sendbuf;
    char *out = recvbuf;
    size_t off, len, big;
    int rc;

    if (p == 1) return ck_copy(comm, out, in, count * es);
    ck_block(count, S, 0, &off, &big);             /* segment 0 is the longest */
    char *scratch = ck_scratch(comm, 4 * big * es);
    if (!scratch) return CK_ERR_NOMEM;
    ck_req rx[2][2] = {{{0}}}, up[2] = {{0}}, down[2] = {{0}}, tx[2][2] = {{{0}}};   /* [..][k % 2] */
#define SLOT(c, k) (scratch + ((size_t)(c) * 2 + (k) % 2) * big * es)

    /* Reduce: children -> reduce -> parent. */
    for (size_t k = 0; k < S; k++) {
        ck_step(comm, (int)k, "reduce");
        for (size_t j = k; j <= k + 1 && j < S; j++)   /* post k (first time) and k+1 */
            for (int c = 0; c < 2; c++)
                if (child[c] >= 0 && !rx[c][j % 2].active) {
                    ck_block(count, S, j, &off, &len);
                    if ((rc = ck_irecv(comm, SLOT(c, j), len * es, child[c], 0, &rx[c][j % 2]))) return rc;
                }
        ck_block(count, S, k, &off, &len);
        const char *acc = in + off * es;
        for (int c = 0; c < 2; c++) {
            if (child[c] < 0) continue;
            if ((rc = ck_wait(comm, &rx[c][k % 2]))) return rc;
            if ((rc = ck_reduce_local(comm, out + off * es, acc, SLOT(c, k), len, dt, op))) return rc;
            acc = out + off * es;
        }
        if (parent >= 0) {
            if ((rc = ck_wait(comm, &up[k % 2]))) return rc;
            if ((rc = ck_isend(comm, acc, len * es, parent, 0, &up[k % 2]))) return rc;
        } else if (acc != out + off * es && (rc = ck_copy(comm, out + off * es, acc, len * es))) {
            return rc;
        }
    }
    if ((rc = ck_waitall(comm, up, 2))) return rc;      /* before recvbuf is overwritten */

    /* Broadcast: parent -> children, straight into recvbuf. */
    for (size_t k = 0; k < S; k++) {
        ck_step(comm, (int)(S + k), "broadcast");
        ck_block(count, S, k, &off, &len);
        if (parent >= 0) {
            if (k == 0 && (rc = ck_irecv(comm, out, len * es, parent, 1, &down[0]))) return rc;
            if (k + 1 < S) {
                size_t o2, l2;
                ck_block(count, S, k + 1, &o2, &l2);
                if ((rc = ck_irecv(comm, out + o2 * es, l2 * es, parent, 1, &down[(k + 1) % 2]))) return rc;
            }
            if ((rc = ck_wait(comm, &down[k % 2]))) return rc;
        }
        for (int c = 0; c < 2; c++) {
            if (child[c] < 0) continue;
            if ((rc = ck_wait(comm, &tx[c][k % 2]))) return rc;
            if ((rc = ck_isend(comm, out + off * es, len * es, child[c], 1, &tx[c][k % 2]))) return rc;
        }
    }
#undef SLOT
    return ck_waitall(comm, &tx[0][0], 4);
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
