/*
 * collbench.h — what the collbench modes share: the options and the
 * entry point of each mode (sweep.c, pingpong.c, trace.c).
 */
#ifndef COLLBENCH_H
#define COLLBENCH_H

#include <stddef.h>
#include <stdint.h>
#include "collkit.h"
#include "model.h"

#define BM_MAX_ALGOS 64

enum { BM_PLACE_OUT = 1, BM_PLACE_IN = 2 };
enum { BM_AGREE_DEFAULT = -1 };   /* --agree not given: on for the sweep, off for --paired */
enum { BM_MODE_SWEEP, BM_MODE_PINGPONG, BM_MODE_EXTRAPOLATE, BM_MODE_LIST, BM_MODE_PAIRED, BM_MODE_GPUS };

typedef struct bm_opts {
    int         mode;
    size_t      minbytes, maxbytes;   /* -b, -e */
    int         factor;               /* -f */
    int         iters, warmup;        /* -n, -w */
    int         check;                /* -c */
    double      time_budget;          /* --time-budget: seconds per measurement, 0 = run all -n iterations */
    ck_dtype    dtype;
    ck_op       op;
    int         place;                /* BM_PLACE_* bits */
    unsigned    mem;                  /* CK_MEM_HOST, CK_MEM_HOST | CK_MEM_SHM or CK_MEM_CUDA (--device, --transport) */
    const ck_algo *algos[BM_MAX_ALGOS];
    int         nalgos;
    const char *csv, *json;           /* result files, NULL = none */
    const char *model;                /* "auto", "none" or a parameter file */
    const char *save_model;           /* --save-model FILE */
    const char *trace;                /* --trace FILE */
    int         trace_capacity;       /* events per rank */
    size_t      chunk;                /* --chunk: pipeline chunk bytes (0: the library's default) */
    int         extrap_pmax;          /* --extrapolate: largest p */
    int         extrap_every_p;       /* --every-p: p = 2, 3, 4, ... instead of 2, 4, 8, ... */
    uint64_t    seed;                 /* --seed: the checker's inputs (cc_set_seed) */
    const char *results;              /* --results FILE (--paired): every timed call's record, for collverify */
    ck_coll     coll;                 /* --coll: the collective swept (default all-reduce) */
    int         overwrite;            /* --overwrite: existing output files may be written over */
    int         agree;                /* --agree: the timed calls agree on their arguments across ranks first */
} bm_opts;

/* Parse the command line (no MPI needed). Returns 0 to run, 1 when help was
 * printed, 2 on an error (message already printed, on rank 0 only). */
/* The whole command line (calls MPI_Init/MPI_Finalize itself). Programs that
 * carry their own algorithms register them with ck_register_algo() first. */
int collbench_main(int argc, char **argv);

int bm_parse_args(int argc, char **argv, bm_opts *o);

/* Median, min and max of v[0..n) (v is sorted in place). */
void bm_stats(double *v, int n, double *med, double *mn, double *mx);

/* Each rank's node, node[0..p) on every rank: consecutive blocks of
 * COLLKIT_RANKS_PER_NODE ranks where that is set, else the ranks that share
 * memory (MPI_Comm_split_type). 0, or -1 after saying why (a bad value). */
int bm_nodes(ck_comm *comm, int *node);
/* The same as the model's node size (bm_node_blocks) in *k. */
int bm_node_ranks(ck_comm *comm, int *k);

/* Ping-pong through ck_sendrecv between two ranks of one node and two of
 * different nodes (each where there is such a pair), plus γ and memcpy timed
 * on rank 0. Fills *out on every rank, its link classes and the run's node
 * size included. `verbose` prints the table. 0, 1 on a failure, 2 when
 * COLLKIT_RANKS_PER_NODE is not a number of ranks (said). */
int bm_calibrate(ck_comm *comm, const bm_opts *o, size_t minb, size_t maxb, int factor,
                 int iters, int verbose, bm_params *out);
int bm_run_pingpong(ck_comm *comm, const bm_opts *o);
int bm_run_sweep(ck_comm *comm, const bm_opts *o, const bm_params *model);
int bm_run_extrapolate(const bm_opts *o, const bm_params *model);
/* --paired: the two algorithms of --algo against each other (paired.c). */
int bm_run_paired(ck_comm *comm, const bm_opts *o);
/* The header's line saying whether the timed calls agreed on their arguments (--agree). */
const char *bm_agree_note(int agree);
/* qsort's comparison of doubles, and the q-quantile of sorted v[0..n) by
 * linear interpolation (the paired figures; collverify recomputes them). */
int    bm_cmp_double(const void *a, const void *b);
double bm_quantile(const double *v, int n, double q);

/* Every wait among the benchmark's ranks (a barrier before every timed
 * iteration, the reduction of the times, the status agreement) is one of
 * the library's bounded collectives, ck_bounded_*(ck_bound_comm(comm), ...):
 * a plain MPI_Barrier would wait forever for a rank that is stopped or
 * gone; a bounded one names the ranks that did not answer and ends the job
 * (ck_watch_abort, as any failure the benchmark cannot go on from), so a
 * stalled rank makes collbench fail within the communicator's bound, never
 * hang. Their polling does not sleep at first: the barrier before a timed
 * iteration releases every rank at once. Without a bound (timeout 0, the
 * default under SimGrid SMPI) they are the blocking collectives. */

/* Result files (outfile.c): open for writing (message on failure), and
 * close with every write error reported (a full disk is an error, not a
 * short file). */
FILE *bm_out_open(const char *path);
int   bm_out_close(FILE *f, const char *path);

/* Trace (trace.c): bm_trace_begin switches recording on for one call,
 * bm_trace_end keeps its events (tagged with the call's index) and switches
 * recording off again, so timed iterations are never recorded.
 * bm_trace_write gathers every rank's events to rank 0, aligns the clocks
 * and writes one Chrome trace-event JSON file; labels[i] names call i. */
void bm_trace_begin(ck_comm *comm);
void bm_trace_end(ck_comm *comm, int call);
void bm_trace_set_capacity(size_t events_per_rank);
int  bm_trace_write(ck_comm *comm, const char *path, char (*labels)[64], int nlabels);

#endif
