/*
 * tp.h — tensor parallelism (--tp T): the MLP's layers split over a group of
 * T ranks, Megatron-style, and what moves between the shards and the whole
 * model.
 *
 * The split (model.h, mlp_create_tp): layers pair up, (0, 1), (2, 3), ...;
 * the first of a pair is split by its COLUMNS (rank t holds units
 * [t H/T, (t+1) H/T) of W and b), the second by its ROWS (rank t holds the
 * matching H/T input rows of W; its bias is whole). Layer 0 is W_0, 99.99 %
 * of the default model: T ranks hold and compute 1/T of it each.
 *
 *   forward    z = x W_0[:, mine] + b_0[mine]      no communication (x is whole)
 *              a = dropout(relu(z))                the whole layer's mask drawn, mine kept
 *              y = a W_1[mine, :] (+ b_1 on t = 0)  a partial sum: ALL-REDUCE (--tp-algo)
 *   backward   dW_1[mine, :] = a^T dy, da = dy W_1[mine, :]^T    dy is whole: no communication
 *              dW_0[:, mine] from da                x needs no gradient: none either
 *              (a pair deeper in: the column layer's input gradient, a partial sum: ALL-REDUCE)
 *
 * So one all-reduce of [batch x width] per pair in forward, one per pair
 * with an input gradient in backward, over the tensor-parallel group, with
 * the registry algorithm --tp-algo (a student's too). The data-parallel
 * replicas (p / T of them) all-reduce each shard's gradients over their own
 * group, as the replicated mode does for the whole buffer.
 *
 * Every rank of a group draws the same samples (the data-parallel shard of
 * its replica) and the same dropout stream: the rng is the replica's, and a
 * split layer's mask is drawn whole and cut, so the group computes what one
 * rank would.
 *
 * The whole model (checkpoints, evaluation, the host view tagtrain reads):
 * world rank 0's, gathered from the shards of replica 0's group
 * (tp_gather), and scattered back (tp_scatter: broadcast a piece at a time,
 * each rank keeping its part); one checkpoint format whatever the plan.
 */
#ifndef TRAINER_TP_H
#define TRAINER_TP_H

#include <mpi.h>
#include "collkit.h"
#include "model.h"

typedef struct tp_ctx {
    int          T, rank;     /* the group's size and this rank's place in it */
    int          gathers;     /* replica 0's group: its shards make world rank 0's whole model */
    MPI_Comm     world;
    MPI_Comm     group;       /* the plan's tensor-parallel communicator */
    ck_comm     *comm;        /* ... as a collkit communicator (shm where the group shares a node) */
    const ck_algo *algo;      /* --tp-algo */
    int          shift;       /* test hook (TAGTRAIN_TEST_TP_SHIFT): the last rank's columns one too early */
    double       comm_s;      /* seconds in the group's all-reduces, since the last tp_take_time */
    size_t       bytes;       /* bytes all-reduced, likewise */
    int          failed;
    char         err[512];
} tp_ctx;

/* The model's reduce hook: SUM over the group, in place (model.h). */
void tp_reduce(float *buf, size_t n, void *ctx);

/* A shard `sh` holds its part of layers sh->l0 .. sh->l1-1: all of them
 * under --tp alone, a pipeline stage's under --tp with --pp (the hybrid).
 *
 * Rank 0's whole buffer (laid out as `full`) to every rank's shard (laid out
 * as `sh`): collective over world. src is read on world rank 0 only. */
void tp_scatter(const tp_ctx *t, const mlp *sh, const mlp *full, const float *src, float *dst);
/* The shards of replica 0's group to its rank 0's buffer of the shard's
 * layers whole (dst, laid out as full's slice from layer sh->l0: the whole
 * buffer without --pp); collective over that group, a no-op on the other
 * replicas' ranks. */
void tp_gather(const tp_ctx *t, const mlp *sh, const mlp *full, const float *src, float *dst);
/* This rank's shard of a whole buffer every rank holds (a checkpoint's m, v). */
void tp_take(const tp_ctx *t, const mlp *sh, const mlp *full, const float *src, float *dst);

/* Bytes of W_0 and of the whole parameter buffer on this rank (the shard's). */
size_t tp_w0_bytes(const mlp *m);

#endif
