/*
 * colldraw.h — draw a collective (all-reduce, reduce-scatter, all-gather) as it runs: per step, every rank's buffer
 * as a row of blocks coloured by whose contributions they hold, and the
 * messages of the step as arrows. See draw/README.md.
 *
 * The model below is what one run recorded, gathered on rank 0; render.c
 * turns it into SVG frames, an HTML page and a text dump without MPI.
 */
#ifndef COLLKIT_COLLDRAW_H
#define COLLKIT_COLLDRAW_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CD_MAX_RANKS 32     /* one bit per rank in a cell's mask; more rows are unreadable anyway */
#define CD_MAX_COUNT 512    /* elements drawn: beyond this a cell is narrower than a pixel */
#define CD_MAX_SHARED 2     /* shared regions drawn per rank (ck_show_shared): input copy, staging */
#define CD_NAME 24          /* a region's name, with its terminating zero */

/* One element of one rank's buffer after a step. */
typedef struct cd_cell {
    uint32_t mask;      /* the ranks whose contributions it holds (decoded exactly) */
    int      wrong;     /* 1: not a set of this element's contributions (all-gather: any but its block's
                           owner's), or in the last frame not what the collective leaves there */
    int      first;     /* 1: wrong here and right (or absent) in the frame before: where it went wrong */
    int      garbled;   /* 1: no set of this element's (or any element's) contributions */
    long     from;      /* wrong: the element whose contributions it holds, -1 when none */
    int      spare;     /* 1: the collective leaves it undefined (a reduce-scatter's result outside the
                           rank's own block): drawn faded, never wrong for lacking a rank */
} cd_cell;

typedef struct cd_msg {
    int    src, dst;
    int    src_row, dst_row; /* 0: the rank's buffer, k + 1: its shared region k */
    int    load;             /* 1: dst loaded it from src's memory (no message) */
    size_t bytes;
    long   elem, nelem;     /* the elements it carries (of the drawn buffer), elem -1 when unknown */
} cd_msg;

#define CD_NO_STEP (-2)     /* the result of a call that named no step */

typedef struct cd_frame {
    int      step;          /* the algorithm's ck_step; -1 for the input frame, CD_NO_STEP */
    char     phase[64];     /* "reduce-scatter", "input", "result" ... */
    cd_cell *cells;         /* p * count, rank-major */
    cd_cell *shared;        /* p * CD_MAX_SHARED * count: region k of rank r, cell i the element i it holds
                               (mask 0: holds none), NULL when no region was shown */
    cd_msg  *msgs;
    int      nmsgs;
} cd_frame;

typedef struct cd_model {
    char      algo[64];
    int       coll;          /* the collective drawn (ck_coll: all-reduce, reduce-scatter, all-gather) */
    char      transport[16];
    int       p;
    size_t    count;
    int       inplace;
    int       viewer;        /* 0: the frames draw every message; R + 1: only what rank R receives (--view R) */
    int       nshared;       /* regions shown (ck_show_shared), drawn as rows under each rank's buffer */
    char      shared[CD_MAX_SHARED][CD_NAME];
    int       status;        /* what the collective returned on the first failing rank (0: success) */
    char      error[512];    /* its message, "" when none */
    cd_frame *frames;
    int       nframes;
} cd_model;

/* Output files into dir (cd_out_dir): frame-NN.svg, index.html, frames.txt.
 * Returns 0, or -1 with the reason in err. */
int  cd_write_all(const cd_model *m, const char *dir, int overwrite, char *err, size_t errlen);
/* Make dir ready for output: created if missing; an existing one must be empty, or hold only what
 * colldraw writes there (a drawing: frame-NN.svg, frames.txt, index.html; gantt: gantt.svg) and
 * overwrite be set (--overwrite), so a user's files are never written over. dry: only check, before
 * the run (nothing is made or removed). Returns 0, or -1 with the reason in err. */
int  cd_out_dir(const char *dir, int gantt, int overwrite, int dry, char *err, size_t errlen);
/* The text dump (frames.txt): the frames as sets and messages, no algorithm
 * name, so two algorithms that do the same thing give the same text. */
void cd_write_text(const cd_model *m, FILE *f);
/* One frame as a standalone SVG document. */
void cd_write_svg(const cd_model *m, int k, FILE *f);
/* graph.svg: the first step's messages as arrows between ranks drawn as nodes: trees as trees
 * (roots ringed), anything else on a circle. Written beside the frames when a step sends. */
#define CD_GRAPH (-3)
void cd_write_graph(const cd_model *m, FILE *f);

/* A Gantt timeline of call `call` of a collbench Chrome trace (or of
 * training step `call` of a tagtrain trace), as SVG.
 * Returns 0, or -1 with the reason in err. */
int  cd_gantt(const char *trace, int call, const char *out_svg, char *err, size_t errlen);

/* The whole command line; `tool` is the word a multi-tool program was called
 * with ("draw"), NULL for the colldraw binary (used when it relaunches itself
 * under ckrun for --np). Returns the exit status: 0 drawn and right, 1 drawn
 * and wrong (or the algorithm failed), 2 bad arguments or unwritable output. */
int  colldraw_main(int argc, char **argv, const char *tool);

#ifdef __cplusplus
}
#endif
#endif
