/*
 * trees.c — the tree topologies and the two-tree pipelined engine declared in
 * trees.h. tree.c is the slide for one pipelined tree and tree2.c the slide
 * for the double binary tree (the in-order tree and the mirror / shift
 * renaming are explained there); this file is the shared machinery.
 *
 * The property tree2 relies on: no rank is interior in both trees of
 * ck_tree_double when p is even, and only rank p-1 when p is odd.
 * tests/unit/test_trees.c checks it, and that every builder gives a tree
 * (one root, parents and children agree, all ranks reachable), for every p
 * up to 1024.
 */
#include <stdarg.h>
#include <stdio.h>
#include "trees.h"

/* ------------------------------------------------------ topologies */

ck_tree ck_tree_heap(int p, int r)
{
    ck_tree n = {r == 0 ? -1 : (r - 1) / 2, {-1, -1}};
    for (int c = 0; c < 2; c++)
        if (2L * r + 1 + c < p) n.child[c] = 2 * r + 1 + c;
    return n;
}

ck_tree ck_tree_inorder(int p, int v)
{
    ck_tree n = {-1, {-1, -1}};
    if (p <= 1) return n;
    if (v == 0) {
        int h = 1;
        while (2 * h < p) h *= 2;
        n.child[0] = h;
        return n;
    }
    const int b = v & -v, up = (v & 2 * b) ? v - b : v + b;
    n.parent = up < p ? up : v - b;
    if (b > 1) {
        n.child[0] = v - b / 2;
        for (int h = b / 2; h >= 1; h /= 2)
            if (v + h < p) { n.child[1] = v + h; break; }
    }
    return n;
}

/* Tree 2's renaming and its inverse. */
static int flip(int p, int r) { return p % 2 == 0 ? p - 1 - r : (r + 1) % p; }
static int unflip(int p, int v) { return v < 0 ? -1 : p % 2 == 0 ? p - 1 - v : (v - 1 + p) % p; }

ck_tree ck_tree_double(int p, int r, int t)
{
    if (t == 0) return ck_tree_inorder(p, r);
    ck_tree n = ck_tree_inorder(p, flip(p, r));
    return (ck_tree){unflip(p, n.parent), {unflip(p, n.child[0]), unflip(p, n.child[1])}};
}

ck_tree ck_tree_build(ck_tree_kind kind, int p, int r)
{
    switch (kind) {
    case CK_TREE_HEAP:    return ck_tree_heap(p, r);
    case CK_TREE_INORDER: return ck_tree_inorder(p, r);
    default:              return ck_tree_double(p, r, 1);
    }
}

int ck_tree_children(ck_tree n) { return (n.child[0] >= 0) + (n.child[1] >= 0); }
int ck_tree_links(ck_tree n) { return ck_tree_children(n) + (n.parent >= 0); }

int ck_tree_level(ck_tree_kind kind, int p, int r)
{
    int level = 0;
    for (int v = r; level <= p; level++) {   /* the bound only stops a broken tree */
        v = ck_tree_build(kind, p, v).parent;
        if (v < 0) break;
    }
    return level;
}

size_t ck_tree_segment(const ck_config *cfg, size_t esize)
{
    const size_t chunk = cfg ? cfg->chunk_bytes : 256 * 1024;
    const size_t seg = esize ? chunk / esize : chunk;
    return seg ? seg : 1;
}

size_t ck_tree_segment_of(size_t len, size_t S, size_t i)
{
    /* ck_block: the first len % S segments have q + 1 elements, the rest q. */
    if (S == 0 || i >= len) return 0;
    const size_t q = len / S, big = len % S;
    return i < big * (q + 1) ? i / (q + 1) : big + (i - big * (q + 1)) / q;
}

/* ------------------------------------------------------ the engine */

enum { SEND_WINDOW = 4 };   /* segments in flight per link */

/* Segment k of tree part t (S segments), as an offset into the buffer. */
static void segment(const ck_tree_part *t, size_t S, size_t k, size_t *off, size_t *len)
{
    ck_block(t->len, S, k, off, len);
    *off += t->off;
}

int ck_trees_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf, ck_dtype dt, ck_op op,
                       int nt, const ck_tree_part *parts)
{
    const size_t es = ck_dtype_size(dt), seg = ck_tree_segment(ck_comm_config(comm), es);
    const char *in = sendbuf;
    char *out = recvbuf;
    size_t S[CK_TREES_MAX], maxS = 0, slot = 1, so, sl;
    int rc;

    if (nt < 1 || nt > CK_TREES_MAX) return CK_ERR_INTERNAL;
    for (int t = 0; t < nt; t++) {
        S[t] = ck_num_chunks(parts[t].len, seg);
        maxS = S[t] > maxS ? S[t] : maxS;
        if (S[t]) {
            ck_block(parts[t].len, S[t], 0, &so, &sl);   /* segment 0 is the longest */
            slot = sl > slot ? sl : slot;
        }
    }

    /* Receive slots: tree t, child c, double buffer b. */
    char *scratch = ck_scratch(comm, (size_t)nt * 4 * slot * es), *buf[CK_TREES_MAX][2][2];
    if (!scratch) return CK_ERR_NOMEM;
    ck_req rq[CK_TREES_MAX][2][2], sq[CK_TREES_MAX][2][SEND_WINDOW];
    for (int t = 0; t < CK_TREES_MAX; t++)
        for (int c = 0; c < 2; c++) {
            for (int b = 0; b < 2; b++) {
                buf[t][c][b] = t < nt ? scratch + (size_t)(4 * t + 2 * c + b) * slot * es : NULL;
                rq[t][c][b].active = 0;
            }
            for (int w = 0; w < SEND_WINDOW; w++) sq[t][c][w].active = 0;
        }

    /* Within a segment, serve first the trees where this rank waits for
     * nobody (leaf going up, root going down): its messages then leave before
     * it blocks on the other tree, so both trees run at once instead of
     * taking turns. */
    int up_order[CK_TREES_MAX], down_order[CK_TREES_MAX], nu = 0, nd = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int t = 0; t < nt; t++) {
            const int leaf = ck_tree_children(parts[t].node) == 0, root = parts[t].node.parent < 0;
            if (leaf == !pass) up_order[nu++] = t;
            if (root == !pass) down_order[nd++] = t;
        }

    /* ---- reduce: children -> reduce -> parent. Segments k and k+1 are
     * always posted; sq[t][0] holds the sends to the parent. */
    for (int t = 0; t < nt; t++)
        for (int c = 0; c < 2; c++)
            for (size_t k = 0; k < 2 && k < S[t] && parts[t].node.child[c] >= 0; k++) {
                segment(&parts[t], S[t], k, &so, &sl);
                if ((rc = ck_irecv(comm, buf[t][c][k], sl * es, parts[t].node.child[c], 2 * t, &rq[t][c][k]))) return rc;
            }
    for (size_t k = 0; k < maxS; k++) {
        ck_step(comm, (int)k, "reduce");
        for (int i = 0; i < nt; i++) {
            const int t = up_order[i];
            const ck_tree n = parts[t].node;
            if (k >= S[t]) continue;
            segment(&parts[t], S[t], k, &so, &sl);
            const char *acc = in + so * es;   /* a leaf forwards its input as is */
            for (int c = 0; c < 2; c++) {
                if (n.child[c] < 0) continue;
                if ((rc = ck_wait(comm, &rq[t][c][k % 2]))) return rc;
                if ((rc = ck_reduce_local(comm, out + so * es, acc, buf[t][c][k % 2], sl, dt, op))) return rc;
                acc = out + so * es;
                if (k + 2 < S[t]) {
                    size_t no, nl;
                    segment(&parts[t], S[t], k + 2, &no, &nl);
                    if ((rc = ck_irecv(comm, buf[t][c][k % 2], nl * es, n.child[c], 2 * t, &rq[t][c][k % 2]))) return rc;
                }
            }
            if (n.parent >= 0) {
                ck_req *q = &sq[t][0][k % SEND_WINDOW];
                if ((rc = ck_wait(comm, q))) return rc;
                if ((rc = ck_isend(comm, acc, sl * es, n.parent, 2 * t, q))) return rc;
            } else if ((rc = ck_copy(comm, out + so * es, acc, sl * es))) {   /* a root alone */
                return rc;
            }
        }
    }
    /* The broadcast overwrites recvbuf: the partial sums sent up must be out. */
    for (int t = 0; t < nt; t++)
        if ((rc = ck_waitall(comm, sq[t][0], SEND_WINDOW))) return rc;

    /* ---- broadcast: parent -> children, received straight into recvbuf. */
    for (int t = 0; t < nt; t++)
        for (size_t k = 0; k < 2 && k < S[t] && parts[t].node.parent >= 0; k++) {
            segment(&parts[t], S[t], k, &so, &sl);
            if ((rc = ck_irecv(comm, out + so * es, sl * es, parts[t].node.parent, 2 * t + 1, &rq[t][0][k]))) return rc;
        }
    for (size_t k = 0; k < maxS; k++) {
        ck_step(comm, (int)(maxS + k), "broadcast");
        for (int i = 0; i < nt; i++) {
            const int t = down_order[i];
            const ck_tree n = parts[t].node;
            if (k >= S[t]) continue;
            segment(&parts[t], S[t], k, &so, &sl);
            if (n.parent >= 0) {
                if ((rc = ck_wait(comm, &rq[t][0][k % 2]))) return rc;
                if (k + 2 < S[t]) {
                    size_t no, nl;
                    segment(&parts[t], S[t], k + 2, &no, &nl);
                    if ((rc = ck_irecv(comm, out + no * es, nl * es, n.parent, 2 * t + 1, &rq[t][0][k % 2]))) return rc;
                }
            }
            for (int c = 0; c < 2; c++) {
                if (n.child[c] < 0) continue;
                ck_req *q = &sq[t][c][k % SEND_WINDOW];
                if ((rc = ck_wait(comm, q))) return rc;
                if ((rc = ck_isend(comm, out + so * es, sl * es, n.child[c], 2 * t + 1, q))) return rc;
            }
        }
    }
    for (int t = 0; t < nt; t++)
        for (int c = 0; c < 2; c++)
            if ((rc = ck_waitall(comm, sq[t][c], SEND_WINDOW))) return rc;
    return CK_SUCCESS;
}

void ck_trees_traffic(const ck_config *cfg, size_t esize, int nt, const ck_tree_part *parts,
                      uint64_t *bytes, uint64_t *msgs)
{
    const size_t seg = ck_tree_segment(cfg, esize);
    *bytes = *msgs = 0;
    for (int t = 0; t < nt; t++) {
        const uint64_t links = (uint64_t)ck_tree_links(parts[t].node);
        *bytes += links * parts[t].len * esize;
        *msgs += links * ck_num_chunks(parts[t].len, seg);
    }
}

/* ------------------------------------------------------ diagnosis */

/* The path between r and the root: "r -> parent -> ... -> root" going up,
 * "root -> ... -> parent -> r" going down. */
static void path(ck_sbuf *out, ck_tree_kind kind, int p, int r, int down)
{
    int hops[64], n = 0;
    for (int v = r; v >= 0 && n < 64; v = ck_tree_build(kind, p, v).parent) hops[n++] = v;
    for (int i = 0; i < n; i++) ck_sbuf_add(out, "%s%d", i ? " -> " : "", hops[down ? n - 1 - i : i]);
}

void ck_tree_diagnose(const ck_fault *f, ck_tree_kind kind, size_t off, size_t len, const char *what,
                      char *out, size_t cap)
{
    const int p = f->p, who = f->missing >= 0 ? f->missing : f->doubled;
    if (cap == 0) return;
    out[0] = '\0';
    if (p < 2 || who >= p || f->rank < 0 || f->rank >= p || f->elem < off || f->elem - off >= len) return;
    const size_t S = ck_num_chunks(len, ck_tree_segment(f->cfg, f->esize));
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    ck_sbuf_add(&sb, "element %zu is in %ssegment %zu of %zu; ", f->elem, what,
                ck_tree_segment_of(len, S, f->elem - off), S);
    if (who >= 0) {
        const int up = ck_tree_build(kind, p, who).parent;
        if (up < 0) {
            ck_sbuf_add(&sb, "rank %d is the root: it starts the sum from its own input%s",
                who, f->missing >= 0 ? "" : " and must not add it again");
            return;
        }
        ck_sbuf_add(&sb, "rank %d's input %s up ", who, f->missing >= 0 ? "should go" : "goes");
        path(&sb, kind, p, who, 0);
        ck_sbuf_add(&sb, f->missing >= 0 ? "; its parent, rank %d (level %d), adds it"
                                         : " and must be added once, by its parent, rank %d (level %d)",
            up, ck_tree_level(kind, p, up));
        return;
    }
    const int up = ck_tree_build(kind, p, f->rank).parent;
    if (up < 0) {
        ck_sbuf_add(&sb, "rank %d is the root: it computes the result itself", f->rank);
        return;
    }
    ck_sbuf_add(&sb, "rank %d gets the result from its parent, rank %d, on the way down ", f->rank, up);
    path(&sb, kind, p, f->rank, 1);
}
