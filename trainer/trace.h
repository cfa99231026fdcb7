/*
 * trace.h — tagtrain --trace: a timeline of every training step as a Chrome
 * trace-event JSON file (https://ui.perfetto.dev; `colldraw --gantt FILE
 * --call K` draws step K).
 *
 * What is recorded, per rank (dp.c records it):
 *   main thread       each backward layer (from the moment the previous
 *                     layer's gradient was final to the moment this one's
 *                     is: the gradient of layer i needs the error signal
 *                     computed for layer i+1), the wait for the buckets, or
 *                     the blocking all-reduce when there are none; with
 *                     --zero 1 the reduce-scatter, the optimizer step on the
 *                     rank's block and the all-gather (zero.c);
 *   progress thread   each bucket's all-reduce, from when the progress thread
 *                     starts it to its completion, with its launch (the
 *                     moment backward handed it over) as an instant before.
 *   --tp              each all-reduce of the tensor-parallel group (forward's
 *                     and backward's, inside the layers) on a lane of its own,
 *                     "tensor-parallel group": tensor-parallel rank 0's;
 *   --pp              each stage's forwards and backwards (pp.c): "fwd" and
 *                     "bwd" bars, their index the micro-batch, from the moment
 *                     its input was received to the moment its output was
 *                     sent: the gaps between them are the stage's bubble. The
 *                     pipeline's stages are the file's ranks, and call K is
 *                     the pipeline's K-th run (the optimizer step, --accum 1).
 * Events of optimizer step K carry "call":K; their "step" is the layer or
 * bucket number. Times count from rank 0's start, every rank's clock moved
 * onto rank 0's (ck_clock_offsets).
 */
#ifndef TRAINER_TRACE_H
#define TRAINER_TRACE_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

enum { TR_MAIN = 0, TR_PROGRESS = 1, TR_TP = 2 };   /* the lanes (thread ids in the file); TR_TP: --tp's all-reduces */

typedef struct tr_event {
    int    lane, index, step;   /* index: the layer or bucket; step: the optimizer step */
    char   cat[12];             /* "layer", "bucket", "launch", "wait", "allreduce", "rs", "optimizer", "ag", "fwd", "bwd", "tp" */
    double t0, t1;              /* ck_now() seconds; t1 == t0 for an instant */
    size_t bytes;               /* a bucket's or all-reduce's bytes, else 0 */
} tr_event;

typedef struct tr_trace {
    tr_event *ev;
    size_t    n, cap;
    unsigned long long dropped;   /* events past TR_MAX_EVENTS */
    double    zero;             /* ck_now() at the start */
    int       step;             /* the optimizer step being recorded */
} tr_trace;

#define TR_MAX_EVENTS 200000    /* per rank: a few thousand steps of a bucketed run */

/* Start recording: time zero (rank 0's is the file's). */
void tr_start(tr_trace *t);
/* One event; times from ck_now(). Kept until TR_MAX_EVENTS, then counted as dropped. */
void tr_add(tr_trace *t, int lane, const char *cat, int index, double t0, double t1, size_t bytes);
/* Gather every rank's events on rank 0 and write them to f (rank 0's; the
 * others pass NULL), the first line naming the file as tagtrain's and `title`.
 * Collective. Returns 0, or -1 with the reason in err (on rank 0). */
int  tr_write(tr_trace *t, MPI_Comm comm, FILE *f, const char *title, char *err, size_t errlen);
void tr_free(tr_trace *t);

#endif
