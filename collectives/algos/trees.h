/*
 * trees.h — tree topologies and the pipelined two-tree engine, shared by
 * tree.c and tree2.c (the role Open MPI's coll_base_topo plays for its tree
 * collectives). Not an algorithm: algos.def does not list it.
 *
 *   ck_tree_heap      binary heap: children 2r+1, 2r+2, root 0 (tree.c)
 *   ck_tree_inorder   NCCL's in-order binary tree, root 0 (tree2.c, tree 1)
 *   ck_tree_double    the double binary tree: tree 1 = in-order, tree 2 =
 *                     in-order on renamed ranks (mirror for p even, shift
 *                     for p odd), so that interior and leaf ranks swap roles
 *   ck_trees_allreduce  reduce up + broadcast down one or two trees at once,
 *                     each over its own slice of the buffer, in segments
 *
 * Segments: a slice of len elements is cut into S = ck_num_chunks(len, seg)
 * segments by ck_block (the same even cut ring_pipelined uses), seg =
 * ck_tree_segment(): chunk_bytes / element size, at least 1.
 */
#ifndef COLLKIT_TREES_H
#define COLLKIT_TREES_H

#include "collkit_algo.h"

/* One rank's neighbours in one tree; -1 = none. Children fill child[0] first. */
typedef struct ck_tree {
    int parent;
    int child[2];
} ck_tree;

typedef enum { CK_TREE_HEAP, CK_TREE_INORDER, CK_TREE_INORDER_FLIPPED } ck_tree_kind;

ck_tree ck_tree_heap(int p, int r);
ck_tree ck_tree_inorder(int p, int r);
/* Tree t (0 or 1) of the double binary tree: t = 0 is ck_tree_inorder, t = 1
 * the in-order tree on renamed ranks, rooted at rank p-1. */
ck_tree ck_tree_double(int p, int r, int t);
/* Any of the above by kind (CK_TREE_INORDER_FLIPPED = ck_tree_double t = 1). */
ck_tree ck_tree_build(ck_tree_kind kind, int p, int r);

int ck_tree_children(ck_tree n);   /* 0, 1 or 2 */
int ck_tree_links(ck_tree n);      /* children + (parent >= 0): messages per segment */
int ck_tree_level(ck_tree_kind kind, int p, int r);   /* edges from r up to the root */

/* Segment length in elements for chunk_bytes (a NULL cfg: the 256 KiB default). */
size_t ck_tree_segment(const ck_config *cfg, size_t esize);
/* The segment (of S, cut by ck_block) that holds element i of len. */
size_t ck_tree_segment_of(size_t len, size_t S, size_t i);

/* ------------------------------------------------------ the engine */

/* This rank's place in one tree and the slice [off, off + len) that tree
 * reduces. Slices of the trees run together must not overlap. */
typedef struct ck_tree_part {
    ck_tree node;
    size_t  off, len;
} ck_tree_part;

enum { CK_TREES_MAX = 2 };

/* Reduce up, then broadcast down, nt (1 or 2) trees at once, segment by
 * segment, with nonblocking sends and double-buffered receives. Tree t uses
 * tag 2t going up and 2t+1 going down. p must be > 1. */
int ck_trees_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf, ck_dtype dt, ck_op op,
                       int nt, const ck_tree_part *parts);
/* What ck_trees_allreduce sends from this rank, exactly: every segment once
 * per link of its tree. */
void ck_trees_traffic(const ck_config *cfg, size_t esize, int nt, const ck_tree_part *parts,
                      uint64_t *bytes, uint64_t *msgs);

/* ------------------------------------------------------ diagnosis */

/* The diagnosis hook's work for a tree that reduces elements [off, off + len)
 * of the buffer (all of it in tree.c, a half in tree2.c): which segment holds
 * f->elem; then the path of the missing (or doubled) rank's input up to the
 * root and the parent that adds it, or, with neither, the parent that hands
 * the result to f->rank. Writes "element E is in <what>segment k of S; ...". */
void ck_tree_diagnose(const ck_fault *f, ck_tree_kind kind, size_t off, size_t len, const char *what,
                      char *out, size_t cap);

#endif /* COLLKIT_TREES_H */
