/*
 * zero.c — ZeRO stages 1 and 2 over collkit's reduce-scatter and all-gather
 * (zero.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "zero.h"

static const ck_algo *pick(ck_coll coll, const char *name, unsigned mem, const char *opt, char *err, size_t errlen)
{
    const ck_algo *a = NULL;
    int n = 0;
    char why[1024];
    if (ck_coll_algo_parse_list(coll, name, mem, &a, 1, &n, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", opt, why);
        return NULL;
    }
    return a;
}

/* Stage 2's collectives on the progress engine when the library can run it
 * here: it needs MPI_THREAD_MULTIPLE (tagtrain asks for it) and a second
 * thread per rank, which SimGrid's simulated ranks cannot have. Every rank of
 * a job gets the same answer; the banner says which path runs. */
static void decide_overlap(zero_ctx *z)
{
#ifdef COLLKIT_SMPI
    z->why_blocking = "SimGrid SMPI runs every simulated rank in one thread";
#else
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (z->p < 2) z->why_blocking = "";
    else if (level < MPI_THREAD_MULTIPLE) z->why_blocking = "MPI provides less than MPI_THREAD_MULTIPLE";
    else z->overlap = 1;
#endif
}

/* Stage 2's own memory: the gradient shard and the handles of the buckets in
 * flight. Agreed, so that every rank stops here alike rather than one leaving
 * the others to wait for it. */
static int stage2_alloc(zero_ctx *z, char *err, size_t errlen)
{
    z->gshard = calloc(z->len ? z->len : 1, sizeof *z->gshard);
    z->rs_h = calloc((size_t)z->nbuckets, sizeof *z->rs_h);
    z->ag_h = calloc((size_t)z->nbuckets, sizeof *z->ag_h);
    int bad = !z->gshard || !z->rs_h || !z->ag_h, anybad = 0;
    ck_watch_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ck_comm_mpi(z->comm), "the gradient shards' memory");
    if (anybad) {
        snprintf(err, errlen, "out of memory for the gradient shard on a rank (%zu parameters here)", z->len);
        zero_free(z);
        return -1;
    }
    /* The test hook of tests/trainer/zero.sh: a wrong shard step, which the
     * comparison with a replicated run must catch. */
    const char *plant = getenv("COLLKIT_ZERO_PLANT");
    if (plant && *plant) z->plant = atoi(plant);
    return 0;
}

int zero_init(zero_ctx *z, dp_ctx *dp, int stage, const char *rs_name, const char *ag_name, double bucket_mb,
              char *err, size_t errlen)
{
    memset(z, 0, sizeof *z);
    z->stage = stage;
    z->dp = dp;
    z->comm = dp->comm;
    z->rank = ck_comm_rank(dp->comm);
    z->p = ck_comm_size(dp->comm);
    z->n = dp->nparams;
    z->bucket = z->n;
    z->nbuckets = 1;
    z->plant = -1;
    if (stage) {
        const unsigned mem = ck_comm_mem(z->comm);
        if (!(z->rs = pick(CK_COLL_REDUCE_SCATTER, rs_name, mem, "--rs-algo", err, errlen))) return -1;
        if (!(z->ag = pick(CK_COLL_ALLGATHER, ag_name, mem, "--ag-algo", err, errlen))) return -1;
    }
    if (stage == 2) {
        /* Whole pages per bucket, so that a finished bucket's pages can be
         * released without touching its neighbours'. */
        const size_t page = (size_t)sysconf(_SC_PAGESIZE) / sizeof(float);
        const double mb = bucket_mb > 0 ? bucket_mb : ZERO_DEF_BUCKET_MB;
        size_t b = (size_t)(mb * 1048576.0 / sizeof(float));
        b = (b + page - 1) / page * page;
        z->bucket = b ? b : page;
        z->nbuckets = z->n ? (int)((z->n + z->bucket - 1) / z->bucket) : 1;
        if (dp_grads_on_demand(dp, err, errlen)) return -1;
        decide_overlap(z);
    }
    z->len = zero_shard_len(z, z->rank);
    return stage == 2 ? stage2_alloc(z, err, errlen) : 0;
}

void zero_free(zero_ctx *z)
{
    free(z->gshard);
    free(z->rs_h);
    free(z->ag_h);
    z->gshard = NULL;
    z->rs_h = z->ag_h = NULL;
}

static size_t bucket_len(const zero_ctx *z, int j)
{
    const size_t start = (size_t)j * z->bucket;
    return z->n - start < z->bucket ? z->n - start : z->bucket;
}

void zero_segment(const zero_ctx *z, int q, int j, size_t *off, size_t *len, size_t *pos)
{
    if (!z->stage) {   /* replicated: one segment, everything */
        *off = *pos = 0;
        *len = z->n;
        return;
    }
    size_t boff;
    ck_block(bucket_len(z, j), (size_t)z->p, (size_t)q, &boff, len);
    *off = (size_t)j * z->bucket + boff;
    /* Every bucket before j is a full one: rank q's block of each has the same length. */
    size_t full_off, full_len;
    ck_block(z->bucket, (size_t)z->p, (size_t)q, &full_off, &full_len);
    *pos = (size_t)j * full_len;
}

size_t zero_shard_len(const zero_ctx *z, int q)
{
    size_t off, len, pos;
    zero_segment(z, q, z->nbuckets - 1, &off, &len, &pos);
    return pos + len;
}

int zero_opt_create(const zero_ctx *z, optimizer *o, const opt_config *cfg) { return opt_create(o, cfg, z->len); }

/* Reduce-scatter bucket j of the gradient buffer into this rank's shard and
 * release the bucket's pages. Out of place: the reduce-scatter only reads
 * the bucket, so the pages backward never wrote (most of the input layer's
 * rows) are never made real, and releasing the bucket frees what backward
 * wrote; in place, the partial sums would fill every page of it, which the
 * kernel would then zero again at every step. */
static int reduce_bucket(zero_ctx *z, int j)
{
    float *g = z->dp->grads + (size_t)j * z->bucket;
    const size_t blen = bucket_len(z, j);
    size_t off, len, pos;
    zero_segment(z, z->rank, j, &off, &len, &pos);
    ck_counters c0, c1;
    ck_counters_get(z->comm, &c0);
    const double t0 = ck_now();
    int rc = ck_reduce_scatter(z->comm, z->rs, g, z->gshard + pos, blen, CK_F32, CK_SUM);
    const double t1 = ck_now();
    z->rs_s += t1 - t0;
    if (z->trace) tr_add(z->trace, TR_MAIN, "rs", j, t0, t1, blen * sizeof *g);
    ck_counters_get(z->comm, &c1);
    z->rs_bytes += c1.bytes_sent - c0.bytes_sent;
    if (rc) {
        snprintf(z->errmsg, sizeof z->errmsg, "gradient reduce-scatter of bucket %d (%s) failed: %s", j, z->rs->name,
                 ck_comm_errmsg(z->comm));
        return rc;
    }
    dp_release_grads(z->dp, (size_t)j * z->bucket, blen);
    return 0;
}

/* The same reduce-scatter queued on the progress engine: bucket j and the
 * shard's block stay untouched until zero_step waits for it (backward writes
 * only below the buckets it has finished). */
static int launch_bucket(zero_ctx *z, int j)
{
    size_t off, len, pos;
    zero_segment(z, z->rank, j, &off, &len, &pos);
    const size_t blen = bucket_len(z, j);
    const double t = ck_now();
    int rc = ck_reduce_scatter_async(z->comm, z->rs, z->dp->grads + (size_t)j * z->bucket, z->gshard + pos, blen,
                                     CK_F32, CK_SUM, &z->rs_h[j]);
    if (rc)
        snprintf(z->errmsg, sizeof z->errmsg, "cannot start the gradient reduce-scatter of bucket %d (%s): %s", j,
                 z->rs->name, ck_comm_errmsg(z->comm));
    else if (z->trace)
        tr_add(z->trace, TR_PROGRESS, "launch", j, t, t, blen * sizeof(float));
    return rc;
}

void zero_bucket_ready(size_t from, void *ctx)
{
    zero_ctx *z = ctx;
    while (z->done < z->nbuckets && !z->err) {
        const int j = z->nbuckets - 1 - z->done;
        if ((size_t)j * z->bucket < from) break;   /* not final yet */
        if ((z->err = z->overlap ? launch_bucket(z, j) : reduce_bucket(z, j))) break;
        z->done++;
    }
}

/* Bucket j's block of the shard stepped with its part of m and v, at step
 * count t (every segment of a step at the same count). */
static void step_segment(zero_ctx *z, optimizer *o, float *params, int j, int64_t t, float scale)
{
    size_t off, len, pos;
    zero_segment(z, z->rank, j, &off, &len, &pos);
    if (j == z->plant && z->rank == 1) {   /* the planted fault: this block not stepped */
        memset(z->gshard + pos, 0, len * sizeof *z->gshard);
        return;
    }
    optimizer seg = *o;
    seg.n = len;
    seg.m = o->m + pos;
    seg.v = o->v + pos;
    seg.t = t;
    optimizer_step(&seg, params + off, z->gshard + pos, scale);   /* zeroes the shard as it reads it */
    o->t = seg.t;
}

/* Stage 1: the whole buffer reduce-scattered in place, block r stepped. */
static int step_stage1(zero_ctx *z, optimizer *o, float *params, float *grads, float scale, char *err,
                       size_t errlen)
{
    ck_counters c0, c1;
    ck_counters_get(z->comm, &c0);
    const double t0 = ck_now();
    int rc = ck_reduce_scatter(z->comm, z->rs, CK_IN_PLACE, grads, z->n, CK_F32, CK_SUM);
    z->rs_s = ck_now() - t0;
    ck_counters_get(z->comm, &c1);
    z->rs_bytes = c1.bytes_sent - c0.bytes_sent;
    if (rc) {
        snprintf(err, errlen, "gradient reduce-scatter (%s) failed: %s", z->rs->name, ck_comm_errmsg(z->comm));
        return rc;
    }
    /* Only block r of grads is the sum; the other blocks hold this
     * rank's own partial sums, which the next step must not add to. */
    size_t off, len, pos;
    zero_segment(z, z->rank, 0, &off, &len, &pos);
    optimizer_step(o, params + off, grads + off, scale);
    memset(grads, 0, off * sizeof *grads);
    memset(grads + off + len, 0, (z->n - off - len) * sizeof *grads);
    return 0;
}

/* Stage 2, blocking: the buckets a backward without the hook left, then the
 * shard stepped segment by segment. */
static int step_stage2(zero_ctx *z, optimizer *o, float *params, float scale, char *err, size_t errlen)
{
    zero_bucket_ready(0, z);
    z->done = 0;
    if (z->err) {
        const int rc = z->err;
        z->err = 0;
        snprintf(err, errlen, "%s", z->errmsg);
        return rc;
    }
    const int64_t t = o->t;
    for (int j = 0; j < z->nbuckets; j++) step_segment(z, o, params, j, t, scale);
    return 0;
}

/* Stage 2 on the progress engine: the buckets backward left queued, then
 * each bucket's sums waited for in the order they were queued (from the top
 * of the buffer), its block stepped at once and its parameter all-gather
 * queued, so that the all-gathers run while the blocks after it are stepped.
 * Every handle is waited for, a failed one's followers too. */
static int step_overlapped(zero_ctx *z, optimizer *o, float *params, float scale, char *err, size_t errlen)
{
    zero_bucket_ready(0, z);
    const int launched = z->done;
    int rc = z->err;
    if (rc) snprintf(err, errlen, "%s", z->errmsg);
    z->done = z->err = 0;
    const int64_t t = o->t;
    for (int k = 0; k < launched; k++) {
        const int j = z->nbuckets - 1 - k;
        const size_t blen = bucket_len(z, j);
        double s0, s1;
        const double w0 = ck_now();
        int s = ck_allreduce_wait_timed(z->rs_h[j], &s0, &s1);
        z->rs_h[j] = NULL;
        z->rs_s += ck_now() - w0;
        if (z->trace) tr_add(z->trace, TR_PROGRESS, "rs", j, s0, s1, blen * sizeof *params);
        if (s && !rc)
            snprintf(err, errlen, "gradient reduce-scatter of bucket %d (%s) failed: %s", j, z->rs->name,
                     ck_comm_errmsg(z->comm));
        if (!rc) rc = s;
        if (rc) continue;
        dp_release_grads(z->dp, (size_t)j * z->bucket, blen);
        step_segment(z, o, params, j, t, scale);
        rc = ck_allgather_async(z->comm, z->ag, CK_IN_PLACE, params + (size_t)j * z->bucket, blen, CK_F32, &z->ag_h[j]);
        if (rc)
            snprintf(err, errlen, "cannot start the parameter all-gather of bucket %d (%s): %s", j, z->ag->name,
                     ck_comm_errmsg(z->comm));
    }
    return rc;
}

/* The all-gathers step_overlapped queued, waited for at the end of the step
 * (waiting instead just before the next forward was measured no faster: no
 * work lies between the two, docs/training.md). */
static int wait_gathers(zero_ctx *z, char *err, size_t errlen)
{
    int rc = 0;
    const double t0 = ck_now();
    for (int j = z->nbuckets - 1; j >= 0; j--) {   /* the order they were queued in */
        if (!z->ag_h[j]) continue;
        double s0, s1;
        int s = ck_allreduce_wait_timed(z->ag_h[j], &s0, &s1);
        z->ag_h[j] = NULL;
        if (z->trace) tr_add(z->trace, TR_PROGRESS, "ag", j, s0, s1, bucket_len(z, j) * sizeof(float));
        if (s && !rc)
            snprintf(err, errlen, "parameter all-gather of bucket %d (%s) failed: %s", j, z->ag->name,
                     ck_comm_errmsg(z->comm));
        if (!rc) rc = s;
    }
    const double t1 = ck_now();
    z->ag_s = t1 - t0;
    if (z->trace) tr_add(z->trace, TR_MAIN, "wait", 0, t0, t1, 0);
    return rc;
}

/* The blocking all-gather of every bucket's parameters, in place. */
static int gather_params(zero_ctx *z, float *params, char *err, size_t errlen)
{
    int rc = 0;
    for (int j = 0; j < z->nbuckets && !rc; j++)
        rc = ck_allgather(z->comm, z->ag, CK_IN_PLACE, params + (size_t)j * z->bucket, bucket_len(z, j), CK_F32);
    if (rc) snprintf(err, errlen, "parameter all-gather (%s) failed: %s", z->ag->name, ck_comm_errmsg(z->comm));
    return rc;
}

int zero_step(zero_ctx *z, optimizer *o, float *params, float *grads, float scale, double *comm_s, char *err,
              size_t errlen)
{
    const double ts = ck_now();
    if (z->overlap) {   /* every handle waited for, after a failure too */
        /* The queued calls' bytes join z->comm's counters as each is waited
         * for: every reduce-scatter and all-gather of this step, in here. */
        ck_counters c0, c1;
        ck_counters_get(z->comm, &c0);
        int rc = step_overlapped(z, o, params, scale, err, errlen);
        if (z->trace) tr_add(z->trace, TR_MAIN, "optimizer", 0, ts, ck_now(), z->len * sizeof *params);
        char later[8];   /* the first failure's message is kept; the all-gathers are still waited for */
        const int rc2 = wait_gathers(z, rc ? later : err, rc ? sizeof later : errlen);
        if (!rc) rc = rc2;
        *comm_s = z->rs_s + z->ag_s;
        z->rs_s = z->ag_s = 0;
        ck_counters_get(z->comm, &c1);
        z->last_bytes = c1.bytes_sent - c0.bytes_sent;
        return rc;
    }
    int rc = z->stage == 1 ? step_stage1(z, o, params, grads, scale, err, errlen)
                           : step_stage2(z, o, params, scale, err, errlen);
    if (rc) return rc;
    ck_counters c0, c1;
    ck_counters_get(z->comm, &c0);
    const double t2 = ck_now();
    if ((rc = gather_params(z, params, err, errlen))) return rc;
    const double t3 = ck_now();
    *comm_s = z->rs_s + (t3 - t2);
    if (z->trace) {   /* stage 2's reduce-scatters were recorded bucket by bucket during backward */
        if (z->stage == 1) tr_add(z->trace, TR_MAIN, "rs", 0, ts, ts + z->rs_s, z->n * sizeof *grads);
        tr_add(z->trace, TR_MAIN, "optimizer", 0, z->stage == 1 ? ts + z->rs_s : ts, t2, z->len * sizeof *grads);
        tr_add(z->trace, TR_MAIN, "ag", 0, t2, t3, z->n * sizeof *params);
    }
    ck_counters_get(z->comm, &c1);
    z->last_bytes = z->rs_bytes + (c1.bytes_sent - c0.bytes_sent);
    z->rs_s = 0;
    z->rs_bytes = 0;
    return 0;
}

int zero_gather_state(const zero_ctx *z, const optimizer *o, float *full_m, float *full_v)
{
    int *counts = malloc(2 * (size_t)z->p * sizeof *counts), *displs = counts ? counts + z->p : NULL;
    float *tmp = z->rank == 0 ? malloc((z->n ? z->n : 1) * sizeof *tmp) : NULL;
    int bad = !counts || (z->rank == 0 && !tmp) || z->n > (size_t)0x7fffffff, anybad = 0;
    MPI_Comm mc = ck_comm_mpi(z->comm);
    ck_watch_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, mc, "the optimizer state's gathering buffers");
    if (anybad) {
        free(counts);
        free(tmp);
        return -1;
    }
    size_t at = 0;
    for (int q = 0; q < z->p; q++) {
        counts[q] = (int)zero_shard_len(z, q);
        displs[q] = (int)at;
        at += (size_t)counts[q];
    }
    /* Every rank's shard lands whole in tmp (rank order), then goes to its
     * segments of the full layout. */
    for (int k = 0; k < 2; k++) {
        float *full = k ? full_v : full_m;
        /* Bounded: a rank that stops here ends the job, named. */
        ck_watch_gatherv(k ? o->v : o->m, (int)z->len, MPI_FLOAT, tmp, counts, displs, MPI_FLOAT, 0, mc,
                         "the optimizer state for the checkpoint");
        for (int q = 0; q < z->p && z->rank == 0; q++)
            for (int j = 0; j < z->nbuckets; j++) {
                size_t off, len, pos;
                zero_segment(z, q, j, &off, &len, &pos);
                memcpy(full + off, tmp + displs[q] + pos, len * sizeof *full);
            }
    }
    free(counts);
    free(tmp);
    return 0;
}

void zero_load_state(const zero_ctx *z, optimizer *o, const float *full_m, const float *full_v)
{
    for (int j = 0; j < z->nbuckets; j++) {
        size_t off, len, pos;
        zero_segment(z, z->rank, j, &off, &len, &pos);
        memcpy(o->m + pos, full_m + off, len * sizeof *full_m);
        memcpy(o->v + pos, full_v + off, len * sizeof *full_v);
    }
}

size_t zero_state_bytes(const zero_ctx *z) { return 2 * z->len * sizeof(float); }
size_t zero_replicated_state_bytes(const zero_ctx *z) { return 2 * z->n * sizeof(float); }
size_t zero_grad_bytes(const zero_ctx *z) { return (z->stage == 2 ? z->len : z->n) * sizeof(float); }
size_t zero_grad_resident_bytes(const zero_ctx *z)
{
    return dp_grads_resident(z->dp) + (z->stage == 2 ? z->len * sizeof(float) : 0);
}
