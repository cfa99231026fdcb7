/*
 * dp.c — data-parallel step, epoch order, bucketed gradient all-reduce.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dp.h"
#include "rng.h"
#include "collkit_util.h"

/* Under SimGrid SMPI (make sim-bench) the host's time of the step's compute
 * is not simulated (smpi/simulate-computation off, so runs are deterministic):
 * it is charged as modelled flops instead, at the simulated host's speed.
 * Forward and backward: 6 flops per parameter per sample (2 forward, 4
 * backward), as if the input layer were dense; the optimizer: 10 per
 * parameter (AdamW). A model, stated as one: what it shows is how the
 * all-reduce's share of a step grows with p, not this machine's speed. */
#ifdef COLLKIT_SMPI
static void sim_charge(double flops)
{
    smpi_bench_end();
    smpi_execute_flops(flops);
    smpi_bench_begin();
}
#else
static void sim_charge(double flops) { (void)flops; }
#endif

int dp_init(dp_ctx *d, ck_comm *comm, const ck_algo *algo, const mlp *m, int batch, double bucket_mb,
            char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->comm = comm;
    d->algo = algo;
    d->rank = ck_comm_rank(comm);
    d->p = ck_comm_size(comm);
    d->nparams = m->nparams;
    if (bucket_mb > 0) {
        size_t elems = (size_t)(bucket_mb * 1048576.0 / sizeof(float));
        if (elems < 1) elems = 1;
        /* Enough buckets to cover the buffer within the fixed handle table. */
        size_t min_elems = (m->nparams + DP_MAX_BUCKETS - 1) / DP_MAX_BUCKETS;
        d->bucket_elems = elems > min_elems ? elems : min_elems;
        d->nbuckets = (int)((m->nparams + d->bucket_elems - 1) / d->bucket_elems);
    }
    d->max_local = (batch + d->p - 1) / d->p;
    /* The dense staging buffer is allocated on first use: CSR runs never need it. */
    d->xb = NULL;
    d->xb_dim = m->in[0];
    d->yb = malloc((size_t)(d->max_local ? d->max_local : 1) * sizeof(int));
    d->rows = malloc((size_t)(d->max_local ? d->max_local : 1) * sizeof(size_t));
    if (!d->yb || !d->rows) {
        snprintf(err, errlen, "out of memory for the local batch (%d rows)", d->max_local);
        dp_free(d);
        return -1;
    }
    return 0;
}

int dp_enable_compact(dp_ctx *d, const mlp *m, int overlap, char *err, size_t errlen)
{
    if (d->nbuckets > 0) return 0;
    d->overlap = overlap;
    d->mark = calloc((size_t)m->in[0], sizeof *d->mark);
    d->touched = malloc((size_t)m->in[0] * sizeof *d->touched);
    d->pack = malloc((m->nparams ? m->nparams : 1) * sizeof *d->pack);
    if (!d->mark || !d->touched || !d->pack) {
        snprintf(err, errlen, "out of memory for the compact all-reduce (%zu parameters)", m->nparams);
        return -1;
    }
    d->compact = 1;
    return 0;
}

void dp_free(dp_ctx *d)
{
    free(d->xb);
    free(d->yb);
    free(d->rows);
    free(d->mark);
    free(d->touched);
    free(d->pack);
    d->xb = NULL;
    d->yb = NULL;
    d->rows = NULL;
    d->mark = NULL;
    d->touched = NULL;
    d->pack = NULL;
}

size_t dp_epoch_order(size_t n, int p, uint64_t seed, int epoch, size_t **order)
{
    size_t npad = n ? (n + (size_t)p - 1) / (size_t)p * (size_t)p : 0;
    size_t *o = malloc((npad ? npad : 1) * sizeof *o);
    if (!o) { *order = NULL; return 0; }
    for (size_t i = 0; i < n; i++) o[i] = i;
    rng_t r = rng_stream(seed, RNG_SHUFFLE, 0, (uint64_t)epoch);
    for (size_t i = n; i > 1; i--) {   /* Fisher-Yates */
        size_t j = rng_below(&r, i);
        size_t t = o[i - 1]; o[i - 1] = o[j]; o[j] = t;
    }
    for (size_t i = n; i < npad; i++) o[i] = o[i - n];   /* wrap to a multiple of p */
    *order = o;
    return npad;
}

int dp_broadcast_params(dp_ctx *d, float *params, size_t n)
{
    const size_t part = INT_MAX / 4;
    for (size_t off = 0; off < n; off += part) {
        size_t len = n - off < part ? n - off : part;
        if (MPI_Bcast(params + off, (int)len, MPI_FLOAT, 0, ck_comm_mpi(d->comm)) != MPI_SUCCESS) return -1;
    }
    return 0;
}

int dp_sum_doubles(dp_ctx *d, double *v, int n)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, ck_comm_mpi(d->comm)) == MPI_SUCCESS ? 0 : -1;
}

/* Bucket j covers grads[start_j, end_j) counted from the end of the buffer. */
static void bucket_range(const dp_ctx *d, int j, size_t *start, size_t *len)
{
    size_t end = d->nparams - (size_t)j * d->bucket_elems;
    *start = end > d->bucket_elems ? end - d->bucket_elems : 0;
    *len = end - *start;
}

typedef struct { dp_ctx *d; float *grads; } ready_ctx;

/* mlp_backward hook: grads[from ..] are final; launch every bucket inside. */
static void on_ready(size_t from, void *arg)
{
    ready_ctx *rc = arg;
    dp_ctx *d = rc->d;
    while (d->launched < d->nbuckets && !d->err) {
        size_t start, len;
        bucket_range(d, d->launched, &start, &len);
        if (start < from) break;
        int s = ck_allreduce_async(d->comm, d->algo, CK_IN_PLACE, rc->grads + start, len, CK_F32, CK_SUM,
                                   &d->handle[d->launched]);
        if (s) { d->err = s; break; }
        d->elems_reduced += (double)len;
        d->launched++;
    }
}

/* Mark the rows of W_0 that some sample of the step touches; every rank walks
 * the same samples in the same order, so every rank gets the same list. */
static size_t touched_rows(dp_ctx *d, const mlp *m, const dp_dataset *ds, const size_t *order, size_t pos, size_t len)
{
    if (++d->stamp == 0) {   /* wrapped: old stamps could look current */
        memset(d->mark, 0, (size_t)m->in[0] * sizeof *d->mark);
        d->stamp = 1;
    }
    size_t nt = 0;
    for (size_t j = 0; j < len; j++) {
        size_t row = order[pos + j];
        for (size_t e = ds->ptr[row]; e < ds->ptr[row + 1]; e++) {
            int k = ds->idx[e];
            if (d->mark[k] != d->stamp) { d->mark[k] = d->stamp; d->touched[nt++] = k; }
        }
    }
    return nt;
}

/* Optimizer update of the W_0 rows the step did not touch: their gradient is
 * zero on every rank, so this needs nothing from the all-reduce and runs while
 * it is in flight. Runs of untouched rows are updated as one range. */
static void update_untouched(dp_ctx *d, mlp *m, optimizer *o, const opt_consts *k)
{
    const size_t H = (size_t)m->out[0], D = (size_t)m->in[0], w0 = m->w_off[0];
    size_t r = 0;
    while (r < D) {
        while (r < D && d->mark[r] == d->stamp) r++;
        size_t r0 = r;
        while (r < D && d->mark[r] != d->stamp) r++;
        if (r > r0) opt_update_nograd(o, k, m->params, w0 + r0 * H, (r - r0) * H);
    }
}

/* The compact step (dp.h): pack the touched rows of W_0 and the rest of the
 * buffer, all-reduce that, and meanwhile update the untouched rows; then
 * unpack and update the rest. *tc gets the exposed communication time (pack,
 * unpack and the wait; the all-reduce itself when it cannot overlap). */
static int compact_step(dp_ctx *d, mlp *m, optimizer *o, const dp_dataset *ds, const size_t *order, size_t pos,
                        size_t len, double *tc)
{
    const size_t H = (size_t)m->out[0];
    const size_t nt = touched_rows(d, m, ds, order, pos, len);
    const size_t rest = m->nparams - m->b_off[0];   /* b_0, W_1, b_1, ... : contiguous */
    const size_t count = nt * H + rest;
    float *G0 = m->grads + m->w_off[0];
    const opt_consts k = opt_begin_step(o);
    int rc = 0;
    if (d->p > 1) {
        double t0 = ck_now();
        float *q = d->pack;
        for (size_t t = 0; t < nt; t++, q += H) memcpy(q, G0 + (size_t)d->touched[t] * H, H * sizeof(float));
        memcpy(q, m->grads + m->b_off[0], rest * sizeof(float));
        ck_async *h = NULL;
        if (d->overlap) {
            rc = ck_allreduce_async(d->comm, d->algo, CK_IN_PLACE, d->pack, count, CK_F32, CK_SUM, &h);
            *tc += ck_now() - t0;
            if (!rc) update_untouched(d, m, o, &k);
            t0 = ck_now();
            if (!rc) rc = ck_allreduce_wait(h);
        } else {
            rc = ck_allreduce(d->comm, d->algo, CK_IN_PLACE, d->pack, count, CK_F32, CK_SUM);
        }
        if (rc) return rc;
        d->elems_reduced += (double)count;
        q = d->pack;
        for (size_t t = 0; t < nt; t++, q += H) memcpy(G0 + (size_t)d->touched[t] * H, q, H * sizeof(float));
        memcpy(m->grads + m->b_off[0], q, rest * sizeof(float));
        *tc += ck_now() - t0;
    }
    sim_charge(10.0 * (double)m->nparams);
    if (d->p == 1 || !d->overlap) update_untouched(d, m, o, &k);
    /* Mean over the samples of the whole step on all ranks. */
    const float scale = 1.0f / (float)len;
    for (size_t t = 0; t < nt; t++)
        opt_update_range(o, &k, m->params, m->grads, scale, m->w_off[0] + (size_t)d->touched[t] * H, H);
    opt_update_range(o, &k, m->params, m->grads, scale, m->b_off[0], rest);
    return 0;
}

int dp_step(dp_ctx *d, mlp *m, optimizer *o, const dp_dataset *ds, const size_t *order, size_t pos,
            size_t len, int batch, rng_t *dropout_rng, double *loss_sum, double *count,
            char *err, size_t errlen)
{
    const int D = ds->dim;
    double t0 = ck_now(), tc = 0.0;
    int rc = 0;
    if (!m->grads_zero) mlp_zero_grads(m);   /* the fused optimizer step leaves it zeroed */
    d->launched = 0;
    d->err = 0;
    ready_ctx rctx = {d, m->grads};
    const int csr = ds->ptr != NULL;
    if (!csr && !d->xb) {
        d->xb = malloc((size_t)(d->max_local ? d->max_local : 1) * (size_t)D * sizeof(float));
        if (!d->xb) {
            snprintf(err, errlen, "out of memory for the local batch (%d rows x %d features)", d->max_local, D);
            return CK_ERR_NOMEM;
        }
    }
    for (size_t mb = 0; mb < len; mb += (size_t)batch) {
        size_t mlen = len - mb < (size_t)batch ? len - mb : (size_t)batch;
        int last = mb + mlen >= len;
        int b = 0;
        for (size_t j = 0; j < mlen; j++) {
            size_t gpos = pos + mb + j;
            if ((int)(gpos % (size_t)d->p) != d->rank) continue;
            size_t row = order[gpos];
            if (csr) d->rows[b] = row;
            else memcpy(d->xb + (size_t)b * D, ds->X + row * (size_t)D, (size_t)D * sizeof(float));
            d->yb[b] = ds->y[row];
            b++;
        }
        if (csr) {
            mlp_sparse sp = {ds->ptr, ds->idx, ds->val, d->rows};
            *loss_sum += mlp_forward_sparse(m, &sp, d->yb, b, 1, dropout_rng);
        } else {
            *loss_sum += mlp_forward(m, d->xb, d->yb, b, 1, dropout_rng);
        }
        *count += b;
        sim_charge(6.0 * (double)b * (double)m->nparams);
        if (last && d->nbuckets > 0 && d->p > 1)
            mlp_backward(m, d->yb, b, on_ready, &rctx, d->bucket_elems);
        else
            mlp_backward(m, d->yb, b, NULL, NULL, 0);
    }
    if (csr && d->compact) {
        /* Its own optimizer update, in two parts (with --overlap the first runs during the all-reduce). */
        rc = compact_step(d, m, o, ds, order, pos, len, &tc);
        if (rc) {
            snprintf(err, errlen, "gradient all-reduce (%s) failed: %s", d->algo->name, ck_comm_errmsg(d->comm));
            return rc;
        }
        m->grads_zero = 1;
        d->t_comm += tc;
        d->t_compute += ck_now() - t0 - tc;
        d->steps++;
        return 0;
    }
    if (d->p > 1) {
        double tw = ck_now();
        if (d->nbuckets > 0) {
            on_ready(0, &rctx);   /* nothing left unlaunched, even if a hook was missed */
            for (int j = 0; j < d->launched; j++) {
                int s = ck_allreduce_wait(d->handle[j]);
                if (s && !rc) {
                    rc = s;
                    snprintf(err, errlen, "bucket %d all-reduce (%s) failed: %s", j, d->algo->name,
                             ck_comm_errmsg(d->comm));
                }
            }
            if (!rc && d->err) {
                rc = d->err;
                snprintf(err, errlen, "cannot start bucketed all-reduce (%s): %s", d->algo->name,
                         ck_comm_errmsg(d->comm));
            }
        } else {
            rc = ck_allreduce(d->comm, d->algo, CK_IN_PLACE, m->grads, m->nparams, CK_F32, CK_SUM);
            d->elems_reduced += (double)m->nparams;
            if (rc) snprintf(err, errlen, "gradient all-reduce (%s) failed: %s", d->algo->name, ck_comm_errmsg(d->comm));
        }
        tc = ck_now() - tw;
        if (rc) return rc;
    }
    /* Mean over the samples of the whole step on all ranks (len: no counting needed). */
    const float scale = 1.0f / (float)len;
    sim_charge(10.0 * (double)m->nparams);
    opt_step_fused(o, m->params, m->grads, scale);
    m->grads_zero = 1;
    d->t_comm += tc;
    d->t_compute += ck_now() - t0 - tc;
    d->steps++;
    return 0;
}

uint64_t dp_hash(const float *x, size_t n) { return ck_fnv1a64(x, n * sizeof *x); }

int dp_check_sync(dp_ctx *d, const float *params, size_t n, const optimizer *o, char *err, size_t errlen)
{
    uint64_t mine[3] = {dp_hash(params, n), o ? dp_hash(o->m, o->n) : 0, o ? dp_hash(o->v, o->n) : 0};
    uint64_t *all = malloc((size_t)d->p * sizeof mine);
    if (!all) { snprintf(err, errlen, "out of memory in the sync check"); return -1; }
    if (MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, ck_comm_mpi(d->comm)) != MPI_SUCCESS) {
        free(all);
        snprintf(err, errlen, "MPI_Allgather failed in the sync check");
        return -1;
    }
    int bad = -1;
    for (int r = 1; r < d->p && bad < 0; r++)
        if (memcmp(all + 3 * r, all, sizeof mine)) bad = r;
    if (bad >= 0) {
        const char *what = all[3 * bad] != all[0] ? "parameters" : "optimizer state";
        snprintf(err, errlen, "ranks out of sync: rank %d's %s hash %016llx differs from rank 0's %016llx",
                 bad, what, (unsigned long long)all[3 * bad + (what[0] == 'o' ? 1 : 0)],
                 (unsigned long long)all[what[0] == 'o' ? 1 : 0]);
    }
    free(all);
    return bad >= 0 ? -1 : 0;
}
