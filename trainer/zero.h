/*
 * zero.h — ZeRO stage 1 (Rajbhandari et al. 2020): the optimizer state
 * sharded over the ranks. The gradient all-reduce of replicated data
 * parallelism is a reduce-scatter followed by an all-gather; stage 1 puts the
 * optimizer step between the two halves:
 *
 *   reduce-scatter the gradient sums   rank r holds block r of the sum
 *   optimizer step on block r          with m and v of block r only
 *   all-gather the parameters          every rank holds every updated block
 *
 * The blocks are collkit's partition (ck_block over the flat parameter
 * buffer). Every rank sends what the ring all-reduce sends, (p-1)/p of the
 * buffer in each half, and keeps 1/p of the optimizer state: for Adam two
 * floats per parameter become 2/p. The updates are Adam's, element by
 * element, on the same sums up to the order of float additions: a sharded
 * run equals a replicated one within a small tolerance (tests/trainer/zero.sh).
 *
 * Checkpoints keep one format: zero_gather_state collects the shards on rank
 * 0, which saves the whole state as a replicated run does; a resumed run
 * (at any p) takes its block of it.
 */
#ifndef TRAINER_ZERO_H
#define TRAINER_ZERO_H

#include <stddef.h>
#include <stdint.h>
#include "collkit.h"
#include "optim.h"
#include "trace.h"

typedef struct {
    int            stage;      /* 0: off (replicated), 1: optimizer state sharded */
    ck_comm       *comm;
    const ck_algo *rs, *ag;    /* the reduce-scatter and all-gather algorithms */
    int            rank, p;
    size_t         n;          /* parameters */
    size_t         off, len;   /* this rank's block of them */
    uint64_t       last_bytes; /* bytes this rank sent in the last step (both halves) */
    tr_trace      *trace;      /* --trace: each step's three phases recorded there; NULL: off */
} zero_ctx;

/* Stage 0 or 1; rs_name, ag_name name algorithms of the reduce_scatter and
 * allgather registries that run on comm's memory. Returns 0, or -1 with a
 * message in err. */
int zero_init(zero_ctx *z, ck_comm *comm, int stage, const char *rs_name, const char *ag_name, size_t n, char *err,
              size_t errlen);

/* The optimizer for this rank's block (opt_create over z->len parameters). */
int zero_opt_create(const zero_ctx *z, optimizer *o, const opt_config *cfg);

/* One step after backward: reduce-scatter grads (the SUM over ranks lands
 * in this rank's block), optimizer_step on the block with gradient
 * scale * grads, the rest of grads zeroed for the next accumulation, and the
 * parameters all-gathered. *comm_s gets the seconds spent in the two
 * collectives. Returns 0, or a CK_* status with a message in err. */
int zero_step(zero_ctx *z, optimizer *o, float *params, float *grads, float scale, double *comm_s, char *err,
              size_t errlen);

/* The whole m and v on rank 0 (full_m, full_v: n floats there; ignored
 * elsewhere), gathered from every rank's block. Collective. Returns 0 or -1. */
int zero_gather_state(const zero_ctx *z, const optimizer *o, float *full_m, float *full_v);

/* Bytes of optimizer state this rank holds (m and v), and what a replicated
 * run holds. */
size_t zero_state_bytes(const zero_ctx *z);
size_t zero_replicated_state_bytes(const zero_ctx *z);

#endif
