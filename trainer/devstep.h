/*
 * devstep.h — tagtrain --device cuda: the training step of tagtrain.c with
 * the model (parameters, gradients, AdamW moments) in GPU memory, in the
 * same three phases as the host step:
 *
 *   devstep_forward_backward   each micro-batch's shard (dp_shard), forward
 *                              and backward on the device model, gradients
 *                              SUMMED into its device gradient buffer
 *   devstep_allreduce          that buffer all-reduced in place by a registry
 *                              algorithm that takes device buffers, on a
 *                              CUDA communicator (CUDA IPC, or NCCL)
 *   devstep_update             the optimizer step on the device
 *
 * Everything else stays on the host: the data, the epoch order, the random
 * streams (the device model draws dropout from the host's rng), evaluation,
 * checkpoints. devstep_download brings parameters and moments back into the
 * host model and optimizer at the end of an epoch (evaluation, --check-sync,
 * checkpoints in the one format); devstep_upload puts them on the device at
 * the start (rank 0's initialisation, or a resumed checkpoint: a host run's
 * checkpoint resumes on the GPU and back).
 *
 * The device model (device.h) is a plug-in, lib/libtagtrain_cuda.so, opened
 * by devstep_available: tagtrain built with CUDA still starts, and trains on
 * the host, where CUDA is missing.
 */
#ifndef TRAINER_DEVSTEP_H
#define TRAINER_DEVSTEP_H

#include <stddef.h>
#include "collkit.h"
#include "dp.h"
#include "model.h"
#include "optim.h"

typedef struct devstep devstep;

/* --device: "cpu" -> 0, "cuda" -> 1, anything else -1. */
int devstep_parse_device(const char *s);

/* Whether --algo NAME can all-reduce device buffers ("auto" can). 0, or -1
 * with a message in err that names the algorithms that can. */
int devstep_check_algo(const char *name, char *err, size_t errlen);

/* Load the device model's plug-in (no GPU needed): 0, or -1 with the
 * reason (no CUDA in this build, the loader's message, a plug-in from
 * another build). */
int devstep_load(char *why, size_t whylen);

/* Whether this process can train on a GPU: CUDA in this build, the device
 * model's plug-in loads, a CUDA device is there. Not collective. 0, or -1
 * with the reason in why. */
int devstep_available(char *why, size_t whylen);

/* Collective over world: the CUDA communicator, the algorithm (--algo NAME,
 * or auto: nccl where it can run, i.e. this build has NCCL and no two ranks
 * share a GPU; ring over CUDA IPC otherwise, with the reason in
 * devstep_note), and the device model of m's layout over the dataset x
 * (nrows rows; micro-batch shards of up to max_batch rows). Every rank gets
 * the same verdict: 0, or -1 on every rank, with a message in err on the
 * ranks that failed ("" on the others). */
/* The algorithm a run uses: `name`, or for "auto" nccl when have_nccl and
 * no two of the p ranks' GPUs are the same (ids: p PCI bus ids of idlen
 * bytes each, rank order), else ring, with the reason in note ("" for a
 * named algorithm). */
const char *devstep_pick_algo(const char *name, int have_nccl, const char *ids, size_t idlen, int p, char *note,
                              size_t notelen);

int devstep_open(devstep **out, MPI_Comm world, const char *algo_name, const mlp *m, const csr_rows *x, size_t nrows,
                 int max_batch, char *err, size_t errlen);
void devstep_close(devstep *ds);   /* collective; NULL is fine */

ck_comm       *devstep_comm(devstep *ds);         /* the communicator the gradients move on */
const ck_algo *devstep_algo(const devstep *ds);
const char    *devstep_note(const devstep *ds);   /* why auto chose its algorithm; "" for a named one */

/* Host <-> device: the parameters and the optimizer's moments (on
 * download, m and v may be NULL: not fetched). 0, or -1 with err. */
int devstep_upload(devstep *ds, const float *params, const float *m, const float *v, char *err, size_t errlen);
int devstep_download(devstep *ds, float *params, float *m, float *v, char *err, size_t errlen);

/* The step's first phase over the global samples order[first .. first+len):
 * micro-batches of `batch`, this rank's shard of each (dp_shard into rows,
 * their labels from y into labels), forward with dropout from drop, backward.
 * Adds the summed loss and the rows to loss_cnt[0], loss_cnt[1]. */
int devstep_forward_backward(devstep *ds, const dp_ctx *dp, const size_t *order, size_t first, size_t len, int batch,
                             const int *y, size_t *rows, int *labels, rng_t *drop, double loss_cnt[2], char *err,
                             size_t errlen);
/* The gradient buffer all-reduced (SUM) in place; nothing at p = 1. The
 * bytes all-reduced in *bytes. */
int devstep_allreduce(devstep *ds, size_t *bytes, char *err, size_t errlen);
/* optimizer_step on the device: mean gradient = sum * scale; zeroes it. */
int devstep_update(devstep *ds, optimizer *o, float scale, char *err, size_t errlen);

#endif
