/*
 * sync.h — how the ranks keep one model: the gradient (and parameter)
 * synchronisation of a training step, chosen once at setup. tagtrain's loop
 * calls the same hooks whatever the mode:
 *
 *   backward       forward and backward of the step's micro-batches, this
 *                  rank's shard of each: gradients SUMMED into its buffer
 *                  (a mode may start moving them already, bucket by bucket)
 *   step           the gradients made the sum over the data-parallel group,
 *                  the optimizer step, the parameters equal on every rank
 *   to_host        the host copy of the parameters and moments up to date
 *                  (evaluation, --check-sync and checkpoints read it)
 *   to_device      the host's parameters and moments are the truth again
 *   gather_state   the whole optimizer state on rank 0, for a checkpoint
 *   load_state     this rank's part of a whole state (a resumed checkpoint)
 *
 * The implementations, each in a file of its own with its steps and bytes:
 *
 *   sync_replicated.c  every rank the whole model and optimizer state; the
 *                      gradient all-reduced whole after backward (dense), in
 *                      buckets during backward (--bucket-mb), or only the
 *                      rows the step touched (--sparse-grads)
 *   sync_zero.c        ZeRO stage 1 and 2 (--zero): the optimizer state, and
 *                      at stage 2 the gradients, sharded over the ranks
 *   sync_device.c      --device cuda: the model on the GPU, the gradients
 *                      all-reduced there
 *   sync_tensor.c      --tp T: each layer pair split over a tensor-parallel
 *                      group (tp.h), each shard's gradients all-reduced over
 *                      its data-parallel group (--zero 1: reduce-scattered,
 *                      the shard's optimizer state sharded over that group)
 *   sync_pipeline.c    --pp S: the layers cut into stages, micro-batches
 *                      through them as messages (pp.h), each stage's
 *                      gradients all-reduced over its data-parallel group;
 *                      with --tp T too (the hybrid), each stage's layers
 *                      split over a tensor-parallel group as sync_tensor.c's
 *
 * The plan (tt_plan) says which ranks hold which part of the model: the
 * data-parallel group (the ranks that hold the same part and average their
 * gradients), the tensor-parallel group (the ranks that split each layer)
 * and the pipeline-parallel group (the ranks that hold successive layers).
 * Without --tp or --pp every rank holds the whole model: the data-parallel
 * group is every rank, the other two are each rank alone. With --tp T
 * and/or --pp S the ranks form a 3-D mesh (collkit_group.h, ck_mesh_2d twice):
 * replicas of T x S consecutive ranks, in each S stages of T consecutive
 * ranks; the ranks T x S apart hold the same part. A mode that splits the
 * model reads its groups from the plan; tagtrain's loop stays as it is.
 *
 *   T = 2, S = 2, p = 8   tensor-parallel  {0,1} {2,3} {4,5} {6,7}
 *                         pipeline         {0,2} {1,3} {4,6} {5,7}
 *                         data-parallel    {0,4} {1,5} {2,6} {3,7}
 */
#ifndef TRAINER_SYNC_H
#define TRAINER_SYNC_H

#include <mpi.h>
#include <stddef.h>
#include "collkit.h"
#include "devstep.h"
#include "dp.h"
#include "model.h"
#include "optim.h"
#include "rng.h"
#include "pp.h"
#include "tp.h"
#include "zero.h"

typedef struct tt_plan {
    MPI_Comm world;          /* every rank of the job */
    MPI_Comm dp;             /* data-parallel group: same part of the model, gradients averaged */
    int      dp_rank, dp_size;
    MPI_Comm tp;             /* tensor-parallel group: each layer split over it (MPI_COMM_SELF: none) */
    int      tp_rank, tp_size;
    MPI_Comm pp;             /* pipeline-parallel group: successive layers (MPI_COMM_SELF: none) */
    int      pp_rank, pp_size;
    int      split;          /* tt_plan_make split the groups off world: tt_plan_free frees them */
} tt_plan;

/* Every rank the whole model: data parallelism over world. */
void tt_plan_data_parallel(tt_plan *pl, MPI_Comm world);
/* The mesh of a plan (T = S = 1: tt_plan_data_parallel): replicas of T x S
 * consecutive ranks, data parallelism over the ranks T x S apart; within a
 * replica S pipeline stages of T consecutive ranks, each stage's layers split
 * over its T (tensor parallelism), the ranks T apart its pipeline. M
 * micro-batches of each replica's share of a batch of `batch`. Collective
 * over world; 0, or -1 with the reason on every rank alike: T x S not
 * dividing p, a width T does not split, more stages than layers, M not
 * dividing the replica's share. */
int  tt_plan_make(tt_plan *pl, MPI_Comm world, int T, int S, int M, int batch, const mlp_config *model, char *why,
                  size_t cap);
void tt_plan_free(tt_plan *pl);   /* the groups it split off */

/* What the options ask of the synchronisation. */
typedef struct tt_sync_cfg {
    const char *algo;        /* --algo: a registry name, or auto */
    const char *transport;   /* mpi or shm (pick_transport) */
    int         zero;        /* --zero 0, 1, 2 */
    const char *rs_algo, *ag_algo;
    const char *tp_algo;     /* --tp-algo: the tensor-parallel group's all-reduce */
    int         microbatches, pp_sched;   /* --pp: its micro-batches, PP_GPIPE or PP_1F1B */
    int         device;      /* --device cuda */
    double      bucket_mb;
    int         sparse;      /* --sparse-grads */
    int         full_state;  /* rank 0 saves checkpoints: gather_state must give it the whole state */
    const opt_config *opt;   /* the optimizer, its total steps set */
    const csr_rows *x;       /* --device: the training rows, uploaded once */
    size_t      nrows;
    int         max_batch;   /* the largest micro-batch shard of a rank */
} tt_sync_cfg;

/* What a mode is, for the banner, the log and the trace. */
typedef struct tt_sync_info {
    const char *mode;        /* the log's "allreduce": dense, bucketed, sparse, zero1, zero2 */
    const char *algo;        /* the gradient all-reduce's algorithm */
    const char *transport;   /* the transport the gradients move on */
    int         zero;        /* the ZeRO stage (0: none) */
    const char *rs_algo, *ag_algo;   /* ZeRO: its two halves */
    int         grad_buckets;        /* ZeRO 2: its buckets, and their bytes */
    size_t      grad_bucket_bytes;
    size_t      grad_bytes, state_bytes, state_replicated;   /* what a rank holds between steps */
    int         state_sharded;   /* m and v differ from rank to rank by design (--check-sync leaves them) */
    int         device;          /* the model on the GPU (--device cuda) */
    const char *device_note;     /* --device cuda: why auto chose its algorithm; "" else */
    int         tp;              /* --tp: the tensor-parallel width (1: none) */
    const char *tp_algo;
    size_t      param_bytes;     /* the parameters a rank holds (0: the whole model) */
    size_t      w0_bytes, w0_bytes_replicated;   /* W_0 with its gradients and m, v: on a rank, and whole */
    int         pp, microbatches;        /* --pp: stages and micro-batches (pp 1: none) */
    const char *pp_sched;
    size_t      act_bytes;               /* the activations a rank holds (--pp: a stage's, for all its micro-batches) */
    double      bubble_model, bubble_measured;   /* (S-1)/(M+S-1), and the stages' waiting over their time */
    char        line[480];       /* the banner's line on how the gradients move */
    char        title[200];      /* --trace's title */
} tt_sync_info;

/* One optimizer step's samples: global positions order[pos .. pos+len) of
 * the epoch order, in micro-batches of batch; rows and labels are scratch of
 * the model's max_batch. */
typedef struct tt_step {
    const size_t   *order;
    size_t          pos, len;
    int             batch;
    const int      *y;
    const csr_rows *x;
    size_t         *rows;
    int            *labels;
    rng_t          *drop;
} tt_step;

typedef struct tt_sync tt_sync;

typedef struct tt_sync_ops {
    /* After the communicator and algorithm: dp_init and the mode's own
     * setup, the optimizer created, info filled. 0, or an exit status with
     * the reason in err (on the ranks that should say it; "" elsewhere). */
    int  (*init)(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap);
    int  (*backward)(tt_sync *s, const tt_step *st, double loss_cnt[2], char *err, size_t cap);
    /* *comm_s: the seconds of the step spent moving gradients and parameters. */
    int  (*step)(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap);
    int  (*to_host)(tt_sync *s, char *err, size_t cap);     /* NULL: the host holds the model */
    int  (*to_device)(tt_sync *s, char *err, size_t cap);   /* NULL: the host holds the model */
    /* Collective: *m, *v the whole state on rank 0. 0 or -1. */
    int  (*gather_state)(tt_sync *s, const float **m, const float **v);
    void (*load_state)(tt_sync *s, const float *m, const float *v);
    void (*destroy)(tt_sync *s);
    /* Collective: rank 0's host parameters every rank's model. NULL: a
     * broadcast over the data-parallel group, then to_device. */
    int  (*broadcast)(tt_sync *s, char *err, size_t cap);
} tt_sync_ops;

struct tt_sync {
    const tt_sync_ops *ops;
    tt_sync_info info;
    tt_plan      plan;
    ck_comm     *comm;           /* the data-parallel group's host communicator */
    const ck_algo *algo;         /* the host all-reduce */
    int          algo_auto;      /* --algo auto chose it */
    mlp         *model;
    optimizer   *opt;
    dp_ctx       dp;             /* sharding, the gradient buffer, the trace: every mode */
    int          have_dp;
    zero_ctx     zero;           /* sync_zero.c */
    float       *full_m, *full_v;   /* sync_zero.c: rank 0's whole state for checkpoints */
    float       *shard_m, *shard_v; /* --zero 1 with a split model: the shard's whole state (checkpoints) */
    devstep     *ds;             /* sync_device.c */
    tp_ctx       tp;             /* sync_tensor.c: the group, its algorithm ... */
    mlp          shard;          /* ... this rank's shard (model points here) */
    mlp         *host;           /* ... and tagtrain's whole model, world rank 0's the truth after to_host */
    pp_ctx       pp;             /* sync_pipeline.c: the schedule and its slots */
    ck_comm     *pp_comm;        /* ... on the pipeline group's communicator */
    size_t       step_bytes;     /* the last step: bytes all-reduced (the buffer each half covers, ZeRO) */
    long long    sent_bytes;     /* the last step: bytes this rank sent (ZeRO; -1: not recorded) */
};

extern const tt_sync_ops tt_sync_replicated, tt_sync_zero, tt_sync_device, tt_sync_tensor, tt_sync_pipeline;

/* Collective over the plan's data-parallel group: the communicator on
 * cfg->transport, the host algorithm, then the mode the options ask for
 * (the one place that chooses it). 0, or an exit status with the reason in
 * err on the ranks that should say it. */
int  tt_sync_open(tt_sync *s, const tt_plan *plan, const tt_sync_cfg *cfg, mlp *model, optimizer *opt,
                  char *err, size_t cap);
void tt_sync_close(tt_sync *s);   /* collective; a failed or unopened one is fine */

/* Every rank's parameters rank 0's, then the mode's copy of them (the device). */
int  tt_sync_broadcast_params(tt_sync *s, char *err, size_t cap);
/* Sum n doubles over the data-parallel group (losses, times). */
int  tt_sync_sum(tt_sync *s, double *v, int n);
/* --check-sync: the parameters (and the replicated optimizer state) alike on every rank. */
int  tt_sync_check(tt_sync *s, char *err, size_t cap);
/* --trace: record every step from now on; write the timeline gathered on rank 0. */
void tt_sync_trace_start(tt_sync *s);
int  tt_sync_trace_write(tt_sync *s, FILE *f, char *err, size_t cap);
/* Bytes of the gradients resident now (ZeRO 2: the shard, not the pages backward wrote). */
size_t tt_sync_grad_resident(const tt_sync *s);

/* For the implementations: the host's forward and backward of a step, and
 * the modelled compute of a simulated run (make sim-bench). */
int  tt_sync_host_backward(tt_sync *s, const tt_step *st, double loss_cnt[2], char *err, size_t cap);
void tt_sim_charge(double flops);
/* sync_replicated.c's, which the device path shares: the banner's line and
 * the trace's title of a whole-buffer all-reduce, from info.algo; the state
 * whole on every rank. */
void tt_sync_describe_allreduce(tt_sync *s, const tt_sync_cfg *cfg);
int  tt_sync_whole_state(tt_sync *s, const float **m, const float **v);
/* sync_replicated.c's step, which the tensor mode shares: the gradient
 * buffer all-reduced over the data-parallel group, the optimizer step. */
int  tt_sync_allreduce_step(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap);
/* The modes that split the model (tensor, pipeline), once s->shard is this
 * rank's part: the model becomes the shard (tagtrain's the host view, with
 * no gradients), its data-parallel context and optimizer, rank 0's room for
 * the whole state; and undone. */
int  tt_sync_use_shard(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap);
void tt_sync_drop_shard(tt_sync *s);
/* The split modes' optimizer state as the shard's whole m and v: the
 * optimizer's own, or under --zero 1 gathered over the data-parallel group
 * onto its rank 0 (collective over it). 0 or -1. */
int  tt_sync_shard_state(tt_sync *s, const float **m, const float **v);
/* Where a split mode writes its shard of a whole state (a resumed
 * checkpoint's), then tt_sync_shard_taken: the optimizer's m and v, or under
 * --zero 1 the shard's whole, of which the optimizer then takes its block. */
void tt_sync_shard_room(tt_sync *s, float **m, float **v);
void tt_sync_shard_taken(tt_sync *s);
/* The host view's pages given back on a rank that never reads it (not world rank 0). */
void tt_sync_release_host(tt_sync *s);
/* sync_tensor.c's, which the hybrid (--tp with --pp) shares: the plan's
 * tensor-parallel group opened with --tp-algo (an exit status and the reason
 * in err, as init), the step with the group's all-reduces counted in, the
 * group closed. */
int  tt_sync_tensor_open(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap);
int  tt_sync_tensor_step(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap);
void tt_sync_tensor_close(tt_sync *s);
void tt_sync_load_whole(tt_sync *s, const float *m, const float *v);

#endif
