/*
 * model.h — the α-β-γ cost model of every all-reduce algorithm.
 *
 *   α  latency of one message (s)
 *   β  transfer time per byte (s/B), 1/β is the point-to-point bandwidth
 *   γ  local reduction time per byte of result (s/B)
 *
 * α and β come from a ping-pong between two ranks (least-squares fit of
 * t(n) = α + n·β), γ from timing ck_reduce_local. Each algorithm states its
 * own cost (ck_algo.cost, in its file); with the fitted parameters collbench
 * prints the prediction next to the measurement and extrapolates to
 * thousands of ranks. This file holds the fitting, the crossovers and the
 * parameter files: arithmetic only, no MPI calls, tested on its own.
 */
#ifndef COLLBENCH_MODEL_H
#define COLLBENCH_MODEL_H

#include <stddef.h>
#include <stdio.h>
#include "collkit.h"

typedef struct bm_params {
    double alpha;       /* s */
    double beta;        /* s per byte sent */
    double gamma;       /* s per byte reduced */
    double memcpy_bw;   /* B/s of a local memory copy (the ceiling drawn on the plots); 0 if unknown */
    double chunk;       /* pipeline chunk in bytes (ck_config.chunk_bytes) */
    /* Link classes. alpha and beta above are the link inside a node (or the
     * only link known); alpha_inter and beta_inter the link between nodes,
     * valid where links has BM_LINK_INTER. node_ranks is the run's node
     * size: consecutive blocks of node_ranks ranks share a node (1 where the
     * placement is not such blocks: every neighbour then counts as remote);
     * 0 or >= p: one node. Not in a parameter file: the run sets it. */
    double alpha_inter, beta_inter;
    unsigned links;     /* BM_LINK_* measured or read */
    int node_ranks;
} bm_params;

enum { BM_LINK_INTRA = 1u << 0, BM_LINK_INTER = 1u << 1 };

/* The nodes of p ranks when node[r] says each rank's node: the block size k
 * where consecutive blocks of k ranks form the nodes (the last may be
 * shorter), p when all share one, 1 for any other placement. */
int bm_node_blocks(const int *node, int p);

/* Where the ranks span nodes but the model knows one link only (a file, or
 * a ping-pong inside one node), or knows only the inter-node link while the
 * ranks share one node: the sentence to warn with, else NULL. */
const char *bm_link_mismatch(const bm_params *m, int p);

/* The algorithm's own cost function (ck_algo.cost, written in its file) with
 * these parameters: predicted seconds for n bytes on p ranks, or NAN when
 * the algorithm declares no cost. Where the ranks span nodes (node_ranks
 * in 1..p-1) and the inter-node link is known, each step is priced with the
 * link it crosses: recursive doubling and Rabenseifner at power-of-two p and
 * node size split into their steps inside and across nodes, a two-level
 * hier:INTRA/INTER into its node and cross-node parts; any other algorithm
 * has a step that crosses nodes in every round and waits for it, so it is
 * priced on the inter-node link throughout. */
double bm_predict(const ck_algo *a, const bm_params *m, int p, double n);

/* Weighted least-squares fit of t = α + β·n to k points, weights 1/t² (so a
 * 10 µs point counts as much as a 10 ms one: the fit minimises relative
 * error). Negative coefficients are clamped to 0 and the other refitted.
 * Returns 0, or -1 when fewer than 2 distinct sizes are given. */
int bm_fit_alpha_beta(const double *n, const double *t, int k, double *alpha, double *beta);

/* Crossovers: where the fastest algorithm among `algos` changes, for p ranks,
 * by their cost functions (algorithms without one are never the fastest),
 * between n_lo and n_hi bytes. The leader changes only when another algorithm
 * is faster by more than `tol` (0.02 = 2 %: near-ties, such as a pipelined
 * algorithm and its plain form below one chunk, do not flicker; 0 = exact). Writes up to
 * max entries: below size[i] the best is algos[from[i]], from size[i] on it is
 * algos[to[i]]. Returns the number found; best_at_lo receives the index of
 * the best algorithm at n_lo. Returns -1, with best_at_lo -1, when no
 * algorithm has a finite predicted time at n_lo (no cost function, or
 * parameters that make it NaN or inf) or n_lo .. n_hi is not a range of
 * sizes > 0: callers must not index algos with it. */
#define BM_CROSSOVER_TOL 0.02
int bm_crossovers(const ck_algo *const *algos, int nalgos, const bm_params *m, int p,
                  double n_lo, double n_hi, double tol, double *size, int *from, int *to, int max,
                  int *best_at_lo);

/* Parameter files ("key value" lines, '#' comments; every key once, every
 * value a finite number >= 0; no NUL bytes). 0 on success; on error -1 with a message in err naming the
 * file, the line and the key ("m.txt:1: alpha_us 'nan': ..."). */
int bm_params_save(const char *path, const bm_params *m, const char *comment);
int bm_params_load(const char *path, bm_params *m, char *err, size_t errlen);
void bm_params_print(FILE *out, const char *prefix, const bm_params *m);

/* Human size: 8 B, 64 KB (binary units, as the sweep sizes are). */
const char *bm_size_str(double bytes, char *buf, size_t len);

#endif
