/* runio.h — what tagtrain writes, in one place: its output files (the rule
 * of every collkit tool, ck_output_*, with tagtrain's own addition), the
 * --log schema (one function per record type), the banner, the epoch line
 * and the summary, all from one report struct. */
#ifndef TRAINER_RUNIO_H
#define TRAINER_RUNIO_H

#include <stdint.h>
#include <stdio.h>
#include "ckpt.h"
#include "eval.h"
#include "sync.h"

/* Everything the banner, the log and the summary say. */
typedef struct tt_report {
    /* the run, fixed at setup */
    int                 p, cv, quiet, check_sync;
    const train_config *tc;
    const tt_sync_info *sync;
    int                 algo_auto;
    size_t              nparams, ntr, nva, nhold;
    double              nnz_per_row;
    const char         *path_data, *path_hold;
    const char         *resume;          /* --resume's file when resumed, else NULL */
    int                 start_epoch;
    const char         *save_note;       /* what opening the save directory did ("" for nothing) */
    const char         *other_option;    /* the default --save holds another configuration's run: its option */
    const char         *repaired;        /* best.ckpt repaired on resume: how ("" for not) */
    const ckpt_dir     *cdir;            /* the save directory; NULL with --no-save */
    /* the training so far */
    double              t_start, train_time, samples_done, steady_time, steady_samples;
    double              t_comm, t_compute, bytes_total;
    int64_t             steps_done;
    int                 trained;
    /* the model chosen, and how it scores */
    int                 best_epoch;
    double              best_val, best_f1;
    metrics             val, ho;
    /* the end, over every rank */
    double              comm_all[2];     /* communication and compute seconds, summed */
    double              rss[3];          /* peak, after training, gradients resident: the largest rank's */
} tt_report;

/* One optimizer step and one epoch, as the log and the epoch line say them. */
typedef struct tt_step_rec {
    int       epoch;          /* 1-based */
    int64_t   step, global_step;
    size_t    samples;
    double    lr, compute_s, comm_s;
    size_t    allreduce_bytes;
    long long sent_bytes;     /* -1: not recorded (only ZeRO records it) */
    /* where the step's time went (tagtrain.c's train_step): the whole step,
     * forward and backward, the wait for the slower rank (-1: not measured,
     * no --breakdown) and the optimizer with the rest of the mode's step;
     * comm_s is the collective, compute_s = fb_s + optimizer_s; calls_s
     * the gradient all-reduce's calls as they ran (dp.h; -1: none), and
     * (--breakdown) their wait for the last rank to start them and the rest
     * (dp_calls_apart; -1: not measured) */
    double    step_s, fb_s, wait_s, optimizer_s, calls_s, calls_entry_s, calls_proper_s;
} tt_step_rec;

typedef struct tt_epoch_rec {
    int    epoch;             /* 1-based */
    double train_loss, time_s;
    size_t samples;
    double comm_s, compute_s; /* summed over the ranks */
    int    improved;
} tt_epoch_rec;

void report_banner(FILE *f, const tt_report *r);
void report_epoch(FILE *f, const tt_report *r, const tt_epoch_rec *e);
void report_summary(FILE *f, const tt_report *r);

void log_run(FILE *f, const tt_report *r);
void log_step(FILE *f, const tt_step_rec *s);
void log_epoch(FILE *f, const tt_report *r, const tt_epoch_rec *e);
void log_summary(FILE *f, const tt_report *r);
/* --metrics: the holdout's figures. */
void write_metrics(FILE *f, const tt_report *r);

/* An output file (--log, --trace, --metrics), checked before any training:
 * the rule of every collkit tool (ck_output_free: a file that holds
 * something is written over only with --overwrite), and tagtrain's own on
 * top of it: a checkpoint is never written over, not even with --overwrite;
 * a continued run (--resume, or a restart by ckrun --restarts) may go on
 * with a file whose first line says tagtrain wrote it (the log is appended
 * to, so the job's history stays). An output written at the end (--trace,
 * --metrics: f is NULL) is only checked now, and opened (emptied) when it is
 * written (tt_output_open): a run that fails before then leaves it as it
 * was; --log is opened now, into *f. 0, or -1 with "OPT PATH ..." in err. */
int tt_output_start(const char *opt, const char *path, int overwrite, int continued, FILE **f, char *err,
                    size_t cap);
/* Open an output written at the end, now, to write it: NULL with the reason in err. */
FILE *tt_output_open(const char *opt, const char *path, char *err, size_t cap);
/* Flush and check: every failed write is an error. 1 when all arrived, else
 * 0 with "OPT PATH: write failed: why" in err. */
int tt_output_ok(FILE *f, const char *opt, const char *path, char *err, size_t cap);

#endif
