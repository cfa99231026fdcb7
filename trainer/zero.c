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
    }
    z->len = zero_shard_len(z, z->rank);
    if (stage == 2) {
        /* Agreed, so that every rank stops here alike rather than one
         * leaving the others to wait for it. */
        z->gshard = calloc(z->len ? z->len : 1, sizeof *z->gshard);
        int bad = !z->gshard, anybad = 0;
        ck_watch_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ck_comm_mpi(z->comm), "the gradient shards' memory");
        if (anybad) {
            snprintf(err, errlen, "out of memory for the gradient shard on a rank (%zu parameters here)", z->len);
            zero_free(z);
            return -1;
        }
    }
    return 0;
}

void zero_free(zero_ctx *z)
{
    free(z->gshard);
    z->gshard = NULL;
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

void zero_bucket_ready(size_t from, void *ctx)
{
    zero_ctx *z = ctx;
    while (z->done < z->nbuckets && !z->err) {
        const int j = z->nbuckets - 1 - z->done;
        if ((size_t)j * z->bucket < from) break;   /* not final yet */
        if ((z->err = reduce_bucket(z, j))) break;
        z->done++;
    }
}

int zero_step(zero_ctx *z, optimizer *o, float *params, float *grads, float scale, double *comm_s, char *err,
              size_t errlen)
{
    ck_counters c0, c1;
    int rc = 0;
    const double ts = ck_now();
    if (z->stage == 1) {
        z->rs_bytes = 0;
        ck_counters_get(z->comm, &c0);
        const double t0 = ck_now();
        rc = ck_reduce_scatter(z->comm, z->rs, CK_IN_PLACE, grads, z->n, CK_F32, CK_SUM);
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
    } else {
        zero_bucket_ready(0, z);   /* the buckets a backward without the hook left */
        z->done = 0;
        if (z->err) {
            rc = z->err;
            z->err = 0;
            snprintf(err, errlen, "%s", z->errmsg);
            return rc;
        }
        /* The shard is one segment per bucket: each stepped with its part
         * of m and v, all at the same step count. */
        const int64_t t = o->t;
        for (int j = 0; j < z->nbuckets; j++) {
            size_t off, len, pos;
            zero_segment(z, z->rank, j, &off, &len, &pos);
            optimizer seg = *o;
            seg.n = len;
            seg.m = o->m + pos;
            seg.v = o->v + pos;
            seg.t = t;
            optimizer_step(&seg, params + off, z->gshard + pos, scale);   /* zeroes the shard as it reads it */
            o->t = seg.t;
        }
    }
    ck_counters_get(z->comm, &c0);
    const double t2 = ck_now();
    for (int j = 0; j < z->nbuckets && !rc; j++)
        rc = ck_allgather(z->comm, z->ag, CK_IN_PLACE, params + (size_t)j * z->bucket, bucket_len(z, j), CK_F32);
    if (rc) {
        snprintf(err, errlen, "parameter all-gather (%s) failed: %s", z->ag->name, ck_comm_errmsg(z->comm));
        return rc;
    }
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
