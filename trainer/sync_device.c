/*
 * sync_device.c — --device cuda (sync.h; the step is devstep.h's): the
 * parameters, gradients and optimizer state in GPU memory, the data-parallel
 * all-reduce of replicated training done on the device.
 *
 *   1. backward     this rank's shard of each micro-batch on the device
 *                   model, gradients summed in its device buffer
 *   2. all-reduce   that buffer, in place, by a registry algorithm that
 *                   takes device buffers (CUDA IPC, or NCCL) on the device's
 *                   own communicator
 *   3. optimizer    on the device (queued: its time shows in the next step)
 *
 * The host keeps the data, the epoch order and the random streams; the
 * parameters and moments come back to it at the end of each epoch (to_host:
 * evaluation, --check-sync, checkpoints in the one format) and go to the
 * device from it at the start (to_device: rank 0's initialisation or a
 * checkpoint). Bytes per step: n floats all-reduced, as the dense host mode.
 */
#include <stdio.h>
#include "sync.h"

static int init(tt_sync *s, const tt_sync_cfg *cfg, char *err, size_t cap)
{
    /* The host side as the replicated mode's: the host communicator only
     * broadcasts and sums (its algorithm is the ring), dp shards. */
    int rc = tt_sync_replicated.init(s, cfg, err, cap);
    if (rc) return rc;
    char why[640] = "";
    if (devstep_open(&s->ds, s->plan.dp, cfg->algo, s->model, cfg->x, cfg->nrows, cfg->max_batch, why, sizeof why)) {
        if (why[0]) snprintf(err, cap, "rank %d: --device cuda: %s", s->plan.dp_rank, why);
        return 1;
    }
    s->info.algo = devstep_algo(s->ds)->name;
    s->info.transport = ck_comm_transport_name(devstep_comm(s->ds));
    s->info.device = 1;
    s->info.device_note = devstep_note(s->ds);
    tt_sync_describe_allreduce(s, cfg);
    return 0;
}

static int backward(tt_sync *s, const tt_step *st, double loss_cnt[2], char *err, size_t cap)
{
    return devstep_forward_backward(s->ds, &s->dp, st->order, st->pos, st->len, st->batch, st->y, st->rows, st->labels,
                                    st->drop, loss_cnt, err, cap);
}

static int step(tt_sync *s, const tt_step *st, double *comm_s, char *err, size_t cap)
{
    const double t1 = ck_now();
    if (devstep_allreduce(s->ds, &s->step_bytes, err, cap)) return -1;
    *comm_s = ck_now() - t1;
    return devstep_update(s->ds, s->opt, 1.0f / (float)st->len, err, cap);
}

static int to_host(tt_sync *s, char *err, size_t cap)
{
    return devstep_download(s->ds, s->model->params, s->opt->m, s->opt->v, err, cap);
}

static int to_device(tt_sync *s, char *err, size_t cap)
{
    return devstep_upload(s->ds, s->model->params, s->opt->m, s->opt->v, err, cap);
}

static void destroy(tt_sync *s)
{
    devstep_close(s->ds);
    s->ds = NULL;
}

const tt_sync_ops tt_sync_device = {
    .init = init,
    .backward = backward,
    .step = step,
    .to_host = to_host,
    .to_device = to_device,
    .gather_state = tt_sync_whole_state,
    .load_state = tt_sync_load_whole,
    .destroy = destroy,
};
