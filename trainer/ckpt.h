/*
 * ckpt.h — trainer checkpoints: the file format, and the policy of the save
 * directory (which files, in which order, what a restart repairs).
 *
 * Two kinds of file, one format:
 *   last.ckpt  (CKPT_STATE) the whole training state at an epoch boundary:
 *              configuration, progress, parameters, optimizer state m and v,
 *              the parameters of the best epoch so far and the featurizer —
 *              what a resumed run needs to continue bit-identically, and
 *              what best.ckpt is rebuilt from when it is missing or stale;
 *   best.ckpt  (CKPT_MODEL) the model of the best epoch by val loss:
 *              configuration, that epoch and its val loss, its parameters,
 *              the featurizer — what tagpredict and the holdout use.
 *
 * File layout (little-endian):
 *   offset 0   8 bytes  magic "CKTAGCK\x01"
 *          8   u32      format version (3)
 *         12   u32      kind (1: model, 2: training state)
 *         16   u64      payload length in bytes
 *         24   u64      FNV-1a 64 checksum of the payload
 *         32   payload: configuration; epochs done (model: the epoch of its
 *              parameters), optimizer steps, best val loss, best epoch;
 *              parameter count; parameters; [state: m, v, best parameters];
 *              idf vector.
 * The random streams are pure functions of (seed, purpose, rank, epoch) (see
 * rng.h), so seed + epochs done IS the RNG state at an epoch boundary.
 *
 * Writing is atomic: a temporary file beside the target (NAME.tmp.PID, or
 * NAME.tmp.PID0, PID1, ... when that name is taken),
 * fsync, rename over the target, fsync of the directory. A crash leaves
 * either the old file or the new one, never half of one — and possibly the
 * temporary file, which the next run in that directory removes.
 *
 * Loading refuses, with a message that says which: something that is not a
 * regular file (a FIFO would block the reader), a file that is not a
 * checkpoint, another format version, a truncated file, a checksum mismatch,
 * and — after the checksum, because a checksum only proves the bytes are the
 * ones written, not that the writer was sane — any field out of its range
 * (batch 0, a NaN learning rate, ...) with the field's name, sizes that do not
 * fit together, and parameters that are not finite.
 */
#ifndef TRAINER_CKPT_H
#define TRAINER_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"
#include "optim.h"
#include "features.h"

/* Ranges of the configuration, shared by the command line and the loader. */
#define CFG_MAX_BATCH   (1 << 20)
#define CFG_MAX_ACCUM   (1 << 16)
#define CFG_MAX_EPOCHS  1000000
#define CFG_MAX_LR      100.0
#define CFG_MAX_WARMUP  100000000
#define CFG_MAX_VAL_FRAC 0.9
#define CFG_MAX_FOLDS   100
#define CFG_MAX_CLASS_WEIGHT 100.0
#define CFG_MAX_WIDTH   65536
/* Optimizer steps (taken, or planned by a schedule): exact in a double, and
 * far from overflowing the step counter. */
#define CFG_MAX_STEPS   ((int64_t)1 << 53)

typedef struct {
    mlp_config model;
    opt_config opt;
    int        feat_dim;
    int        epochs;        /* the run's planned total */
    int        batch;         /* global micro-batch */
    int        accum;
    uint64_t   seed;          /* init, shuffles, dropout */
    double     val_frac;      /* share of dataset.csv held out for validation (0: none) */
    uint64_t   split_seed;    /* the train/val split */
    int        folds, fold;   /* cross-validation: val = fold `fold` (0-based) of `folds`; folds 0: val_frac */
    feat_opts  feat;          /* which n-grams, tf weighting, title weight */
} train_config;

typedef enum { CKPT_MODEL = 1, CKPT_STATE = 2 } ckpt_kind;

typedef struct {
    ckpt_kind    kind;
    train_config cfg;
    int          epochs_done;      /* state: epochs trained; model: the epoch its parameters are from */
    int64_t      opt_steps;        /* state: optimizer steps taken; model: 0 */
    double       best_val_loss;    /* the best val loss so far (+inf: none yet, or no validation rows) */
    int          best_epoch;       /* its epoch, 1-based (0: none yet) */
    size_t       nparams;
    float       *params;           /* [nparams] */
    float       *m, *v, *best;     /* [nparams] each; state only (best: the parameters of best_epoch) */
    float       *idf;              /* [cfg.feat_dim] */
    uint64_t     checksum;         /* set by ckpt_load: the file's payload checksum */
} checkpoint;

#define CKPT_MAGIC "CKTAGCK\x01"

/* Write atomically. 0, or -1 with a message in err. Refuses to replace an
 * existing file at `path` that is not a checkpoint. */
int  ckpt_save(const char *path, const checkpoint *c, char *err, size_t errlen);
/* Read and verify; on success the caller owns the arrays (ckpt_free). */
int  ckpt_load(const char *path, checkpoint *c, char *err, size_t errlen);
void ckpt_free(checkpoint *c);
/* 1 when `path` is a regular file that starts with the checkpoint magic, 0
 * when nothing is there, -1 when something else is (never blocks). */
int  ckpt_probe(const char *path);
/* 0 when every field of c is in range; else -1 and "NAME = VALUE (want ...)". */
int  ckpt_check_config(const train_config *c, char *err, size_t errlen);

/* ---- the save directory */

typedef struct {
    char *dir, *last, *best;       /* DIR, DIR/last.ckpt, DIR/best.ckpt */
    int   lock_fd;                 /* PARENT/.NAME.tagtrain-lock, flock'ed for the run */
    int   remade;                  /* saves that found DIR removed and made it again */
} ckpt_dir;

/* Make DIR ready before any training: create it; lock it (two runs writing
 * one directory would interleave their files; the lock is a file beside
 * DIR, so it holds even when DIR is removed and made again; DIR itself when
 * the parent may not be written); refuse when last.ckpt or
 * best.ckpt is there and is not a checkpoint; remove temporary files of
 * checkpoint writes a killed run left behind; and prove that a file can be
 * created there, so a read-only or missing directory stops the run now, not
 * after the training. note gets a line for the user when something was
 * cleaned ("" otherwise). 0, or -1 with a message in err. */
int  ckpt_dir_open(ckpt_dir *cd, const char *dir, char *note, size_t notelen, char *err, size_t errlen);
void ckpt_dir_close(ckpt_dir *cd);
/* Save at an epoch boundary: both files are written and synced under
 * temporary names first (best.ckpt's only when the best changed since the
 * last save), so a failed write (a full disk) removes them and leaves the
 * directory as it was; then best.ckpt is renamed into place, then last.ckpt.
 * In that order a crash between the two renames leaves a best.ckpt that is at
 * least as new as last.ckpt's record of it, so tagpredict never answers from
 * a model older than the training state. A state the loader would refuse
 * (non-finite parameters or optimizer state, a field out of range) is not
 * written: the files there stay the last state that can be resumed. A DIR
 * removed since ckpt_dir_open is made again (cd->remade counts it). */
int  ckpt_dir_save(ckpt_dir *cd, const checkpoint *state, int best_changed, char *err, size_t errlen);
/* On a resumed start: make best.ckpt hold exactly the best model the training
 * state records (rewritten when missing, unreadable or any other model).
 * *what gets "" when it already did, else what was repaired. 0 or -1. */
int  ckpt_dir_sync_best(ckpt_dir *cd, const checkpoint *state, char *what, size_t whatlen, char *err,
                        size_t errlen);

/* The crash tests (tests/trainer/kill.sh) kill a save at exact moments by
 * the kit's one test hook, COLLKIT_FAULT (collkit_util.h): "ckpt/write" (a
 * temporary checkpoint file half written), "ckpt/rename" (complete and
 * synced, not yet renamed), "ckpt/between" (best.ckpt renamed, last.ckpt not
 * yet written); tagtrain adds "ckpt/epoch" (an epoch trained, not yet
 * validated or saved). */

#endif
