/*
 * ckpt.h — trainer checkpoints.
 *
 * File layout (little-endian):
 *   offset 0   8 bytes  magic "CKTAGCK\x01"
 *          8   u32      format version (2)
 *         12   u32      0
 *         16   u64      payload length in bytes
 *         24   u64      FNV-1a 64 checksum of the payload
 *         32   payload: the training configuration, progress (epochs done,
 *                       optimizer steps, best val loss), the random-stream
 *                       seed, parameters, optimizer state m and v, and the
 *                       featurizer (dim, n-gram options, idf vector) — everything tagpredict
 *                       needs and everything a resumed run needs to continue
 *                       bit-identically.
 * The random streams are pure functions of (seed, purpose, rank, epoch) (see
 * rng.h), so seed + epochs done IS the RNG state at an epoch boundary.
 *
 * Writing is atomic: a temporary file in the same directory, fsync, rename
 * over the target, fsync of the directory. A crash leaves either the old file
 * or the new one, never half of one. Loading refuses, with a message that says
 * which: a file that is not a checkpoint, another format version, a truncated
 * file, a checksum mismatch, or fields that do not fit together.
 */
#ifndef TRAINER_CKPT_H
#define TRAINER_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"
#include "optim.h"
#include "features.h"

typedef struct {
    mlp_config model;
    opt_config opt;
    int        feat_dim;
    int        epochs;        /* the run's planned total */
    int        batch;         /* global micro-batch */
    int        accum;
    uint64_t   seed;          /* init, shuffles, dropout */
    double     val_frac;
    uint64_t   split_seed;    /* the train/val split */
    feat_opts  feat;          /* which n-grams, tf weighting, title weight */
} train_config;

typedef struct {
    train_config cfg;
    int          epochs_done;
    int64_t      opt_steps;
    double       best_val_loss;
    size_t       nparams;
    float       *params, *m, *v;   /* [nparams] each */
    float       *idf;              /* [cfg.feat_dim] */
} checkpoint;

#define CKPT_MAGIC "CKTAGCK\x01"

/* Write atomically. 0, or -1 with a message in err. Refuses to replace an
 * existing file at `path` that is not a checkpoint. */
int  ckpt_save(const char *path, const checkpoint *c, char *err, size_t errlen);
/* Read and verify; on success the caller owns the arrays (ckpt_free). */
int  ckpt_load(const char *path, checkpoint *c, char *err, size_t errlen);
void ckpt_free(checkpoint *c);
/* 1 when `path` exists and starts with the checkpoint magic, 0 when it does
 * not exist, -1 when it exists and is something else. */
int  ckpt_probe(const char *path);

#endif
