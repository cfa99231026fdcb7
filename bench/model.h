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
} bm_params;

/* The algorithm's own cost function (ck_algo.cost, written in its file) with
 * these parameters: predicted seconds for n bytes on p ranks, or NAN when
 * the algorithm declares no cost. */
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
