/*
 * dp.c — epoch order, sharding, backward, and the gradient all-reduce: dense
 * (the whole buffer), bucketed (slices launched during backward) or sparse
 * (touched rows); with --trace, the timeline of each step (trace.h).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "dp.h"
#include "rng.h"
#include "collkit_util.h"

int dp_init(dp_ctx *d, ck_comm *comm, const ck_algo *algo, mlp *m, double bucket_mb, unsigned flags,
            char *err, size_t errlen)
{
    const int sparse_grads = (flags & DP_SPARSE_GRADS) != 0;
    memset(d, 0, sizeof *d);
    d->one_clock = -1;
    d->comm = comm;
    d->algo = algo;
    d->rank = ck_comm_rank(comm);
    d->p = ck_comm_size(comm);
    d->nparams = m->nparams;
    if (bucket_mb > 0 && sparse_grads) {
        snprintf(err, errlen, "--sparse-grads and --bucket-mb do not go together (the touched rows are known "
                 "only once the whole backward is done)");
        return -1;
    }
    /* The gradient buffer becomes the communicator's memory (ck_alloc): on
     * the shm transport the peers load it where it is, so the single-copy
     * all-reduces (twoshot, oneshot) need no copy in; on the mpi transport it
     * is aligned host memory, as before. Or, asked, a mapping whose pages
     * exist once written. */
    const size_t gbytes = (m->nparams ? m->nparams : 1) * sizeof(float);
    free(m->grads);   /* first: never two whole gradient buffers at once */
    m->grads = NULL;
    d->model = m;
    if (flags & DP_GRADS_ON_DEMAND) {
        if (dp_grads_on_demand(d, err, errlen)) {
            d->model = NULL;
            return -1;
        }
    } else {
        float *g = ck_alloc(comm, gbytes);
        if (!g) {
            snprintf(err, errlen, "out of memory for the gradient buffer (%zu parameters)", m->nparams);
            d->model = NULL;
            return -1;
        }
        memset(g, 0, gbytes);
        m->grads = d->grads = g;
    }
    if (bucket_mb > 0) {
        size_t elems = (size_t)(bucket_mb * 1048576.0 / sizeof(float));
        if (elems < 1) elems = 1;
        /* Enough buckets to cover the buffer within the fixed handle table. */
        size_t min_elems = (m->nparams + DP_MAX_BUCKETS - 1) / DP_MAX_BUCKETS;
        d->bucket_elems = elems > min_elems ? elems : min_elems;
        d->nbuckets = (int)((m->nparams + d->bucket_elems - 1) / d->bucket_elems);
    }
    if (sparse_grads) {
        d->sparse = 1;
        d->in_dim = m->in[0];
        d->row_len = m->out[0];
        d->mark = calloc((size_t)m->in[0], sizeof *d->mark);
        d->touched = malloc((size_t)m->in[0] * sizeof *d->touched);
        /* From the communicator: on the shm transport the peers load it in place. */
        d->pack = ck_alloc(comm, (m->nparams ? m->nparams : 1) * sizeof *d->pack);
        if (!d->mark || !d->touched || !d->pack) {
            snprintf(err, errlen, "out of memory for the sparse all-reduce (%zu parameters)", m->nparams);
            dp_free(d);
            return -1;
        }
    }
    return 0;
}

int dp_grads_on_demand(dp_ctx *d, char *err, size_t errlen)
{
    if (d->mapped) return 0;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = ((d->nparams ? d->nparams : 1) * sizeof(float) + page - 1) / page * page;
    void *g = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the gradient buffer (%zu parameters)", d->nparams);
        return -1;
    }
    if (d->grads) ck_free(d->comm, d->grads);
    d->model->grads = d->grads = g;
    d->mapped = bytes;
    return 0;
}

void dp_release_grads(dp_ctx *d, size_t off, size_t len)
{
    if (!len) return;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *a = (char *)(d->grads + off), *end = (char *)(d->grads + off + len);
    char *last = (char *)d->grads + d->mapped;
    end = end + (page - (size_t)(end - (char *)d->grads) % page) % page;   /* the partial last page is ours too */
    if (end > last) end = last;
    /* Private anonymous pages read back as zeros once released; if the
     * kernel refuses, zeroing them keeps the meaning, not the memory. */
    if (madvise(a, (size_t)(end - a), MADV_DONTNEED)) memset(a, 0, len * sizeof(float));
}

size_t dp_grads_resident(const dp_ctx *d)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (!d->grads) return 0;
    const uintptr_t a = (uintptr_t)d->grads / page * page;
    const uintptr_t e = ((uintptr_t)(d->grads + d->nparams) + page - 1) / page * page;
    const size_t npages = (size_t)(e - a) / page;
    unsigned char *vec = malloc(npages ? npages : 1);
    size_t resident = 0;
    if (vec && mincore((void *)a, (size_t)(e - a), vec) == 0)
        for (size_t i = 0; i < npages; i++) resident += vec[i] & 1;
    free(vec);
    return resident * page;
}

void dp_free(dp_ctx *d)
{
    if (d->model && d->mapped) {
        munmap(d->grads, d->mapped);
        d->model->grads = NULL;
        d->model = NULL;
        d->grads = NULL;
        d->mapped = 0;
    }
    if (d->model) {
        ck_free(d->comm, d->grads);
        d->model->grads = NULL;   /* mlp_free must not free it again */
        d->model = NULL;
        d->grads = NULL;
    }
    free(d->mark);
    free(d->touched);
    if (d->pack) ck_free(d->comm, d->pack);
    tr_free(&d->trace);
    d->tracing = 0;
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

int dp_shard(const dp_ctx *d, const size_t *order, size_t first, size_t n, size_t *rows)
{
    int b = 0;
    for (size_t j = first; j < first + n; j++)
        if ((int)(j % (size_t)d->p) == d->rank) rows[b++] = order[j];
    return b;
}

int dp_broadcast_params(dp_ctx *d, float *params, size_t n)
{
    const size_t part = INT_MAX / 4;
    for (size_t off = 0; off < n; off += part) {
        size_t len = n - off < part ? n - off : part;
        ck_watch_bcast(params + off, (int)len, MPI_FLOAT, 0, ck_comm_mpi(d->comm), "rank 0's parameters");
    }
    return 0;
}

int dp_sum_doubles(dp_ctx *d, double *v, int n)
{
    ck_watch_allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, ck_comm_mpi(d->comm), "the sums of the epoch");
    return 0;
}

/* Bucket j covers grads[start_j, end_j) counted from the end of the buffer. */
static void bucket_range(const dp_ctx *d, int j, size_t *start, size_t *len)
{
    size_t end = d->nparams - (size_t)j * d->bucket_elems;
    *start = end > d->bucket_elems ? end - d->bucket_elems : 0;
    *len = end - *start;
}

void dp_bucket_ready(size_t from, void *ctx)
{
    dp_ctx *d = ctx;
    if (d->p == 1) return;
    while (d->launched < d->nbuckets && !d->err) {
        size_t start, len;
        bucket_range(d, d->launched, &start, &len);
        if (start < from) break;   /* not final yet */
        const double t = ck_now();
        int s = ck_allreduce_async(d->comm, d->algo, CK_IN_PLACE, d->grads + start, len, CK_F32, CK_SUM,
                                   &d->handle[d->launched]);
        if (s) { d->err = s; break; }
        if (d->tracing) tr_add(&d->trace, TR_PROGRESS, "launch", d->launched, t, t, len * sizeof(float));
        d->launched++;
    }
}

/* The hook dp_backward gives mlp_backward: grads[from ..) is final. Layer i's
 * gradient is final once `from` reaches its weights' start; the layers are
 * laid out first to last, so backward finishes them from the last. */
static void dp_ready(size_t from, void *ctx)
{
    dp_ctx *d = ctx;
    if (d->tracing) {
        const double now = ck_now();
        for (; d->layer >= 0 && from <= d->model->w_off[d->layer]; d->layer--) {
            tr_add(&d->trace, TR_MAIN, "layer", d->layer, d->t_layer, now, 0);
            d->t_layer = now;
        }
    }
    if (d->launching) {
        if (d->on_ready) d->on_ready(from, d->on_ready_ctx);
        else dp_bucket_ready(from, d);
    }
}

void dp_backward(dp_ctx *d, const int *labels, int b, int last_micro)
{
    d->launching = last_micro && (d->nbuckets > 0 || d->on_ready);
    const size_t chunk = d->on_ready ? d->on_ready_chunk : d->bucket_elems;
    if (d->tracing) {
        if (d->step_done) d->trace.step++;   /* the first backward of the next optimizer step */
        d->step_done = last_micro;
        d->layer = d->model->cfg.nhidden;
        d->t_layer = ck_now();
    }
    /* Without buckets the hook only takes times: chunk 0 releases whole
     * layers, the same arithmetic as no hook at all (model.c). */
    mlp_backward(d->model, labels, b, d->launching || d->tracing ? dp_ready : NULL, d,
                 d->launching ? chunk : 0);
    d->launching = 0;
}

void dp_trace_start(dp_ctx *d)
{
    tr_start(&d->trace);
    d->tracing = 1;
    d->step_done = 0;
}

int dp_trace_write(dp_ctx *d, FILE *f, const char *title, char *err, size_t errlen)
{
    return tr_write(&d->trace, ck_comm_mpi(d->comm), f, title, err, errlen);
}

/* The rows of W_0 that some sample of the step touches: every rank walks the
 * same samples in the same order, so every rank gets the same list. */
static size_t touched_rows(dp_ctx *d, const csr_rows *x, const size_t *step_rows, size_t n)
{
    if (++d->stamp == 0) {   /* wrapped: old stamps could look current */
        memset(d->mark, 0, (size_t)d->in_dim * sizeof *d->mark);
        d->stamp = 1;
    }
    size_t nt = 0;
    for (size_t j = 0; j < n; j++) {
        size_t row = step_rows[j];
        for (size_t e = x->ptr[row]; e < x->ptr[row + 1]; e++) {
            int k = x->idx[e];
            if (d->mark[k] != d->stamp) { d->mark[k] = d->stamp; d->touched[nt++] = k; }
        }
    }
    return nt;
}

/* --sparse-grads: pack the touched rows of W_0 (offset 0 of the buffer) and
 * everything after W_0, all-reduce that, unpack. */
static int allreduce_sparse(dp_ctx *d, const csr_rows *x, const size_t *step_rows, size_t n)
{
    const size_t H = (size_t)d->row_len, w0 = (size_t)d->in_dim * H;
    const size_t nt = touched_rows(d, x, step_rows, n), rest = d->nparams - w0;
    const size_t count = nt * H + rest;
    float *q = d->pack;
    for (size_t t = 0; t < nt; t++, q += H) memcpy(q, d->grads + (size_t)d->touched[t] * H, H * sizeof(float));
    memcpy(q, d->grads + w0, rest * sizeof(float));
    int rc = ck_allreduce(d->comm, d->algo, CK_IN_PLACE, d->pack, count, CK_F32, CK_SUM);
    if (rc) return rc;
    q = d->pack;
    for (size_t t = 0; t < nt; t++, q += H) memcpy(d->grads + (size_t)d->touched[t] * H, q, H * sizeof(float));
    memcpy(d->grads + w0, q, rest * sizeof(float));
    d->last_bytes = count * sizeof(float);
    return 0;
}

int dp_allreduce_grads(dp_ctx *d, const csr_rows *x, const size_t *step_rows, size_t n, char *err, size_t errlen)
{
    int rc = 0;
    d->last_bytes = 0;
    d->calls_s = 0;
    d->ncalls = 0;
    if (d->p == 1) return 0;
    if (d->nbuckets > 0) {
        dp_bucket_ready(0, d);   /* nothing left unlaunched, even if a hook call was missed */
        const double tw = ck_now();
        for (int j = 0; j < d->launched; j++) {
            /* The first failure is the answer: the buckets after it wait
             * for the same missing rank, each for a whole watchdog bound. */
            double t0, t1;
            int s = ck_allreduce_wait_timed(d->handle[j], &t0, &t1);
            d->calls_s += t1 - t0;
            d->call_t0[d->ncalls] = t0;
            d->call_t1[d->ncalls++] = t1;
            if (d->tracing) {
                size_t start, len;
                bucket_range(d, j, &start, &len);
                tr_add(&d->trace, TR_PROGRESS, "bucket", j, t0, t1, len * sizeof(float));
            }
            if (s) {
                snprintf(err, errlen, "bucket %d all-reduce (%s) failed: %s", j, d->algo->name, ck_comm_errmsg(d->comm));
                return s;
            }
        }
        if (!rc && d->err) {
            rc = d->err;
            snprintf(err, errlen, "cannot start a bucket all-reduce (%s): %s", d->algo->name, ck_comm_errmsg(d->comm));
        }
        if (d->tracing) tr_add(&d->trace, TR_MAIN, "wait", 0, tw, ck_now(), 0);
        d->launched = 0;
        d->err = 0;
        d->last_bytes = rc ? 0 : d->nparams * sizeof(float);
        return rc;
    }
    const double t0 = ck_now();
    if (d->sparse) {
        rc = allreduce_sparse(d, x, step_rows, n);
    } else {
        rc = ck_allreduce(d->comm, d->algo, CK_IN_PLACE, d->grads, d->nparams, CK_F32, CK_SUM);
        if (!rc) d->last_bytes = d->nparams * sizeof(float);
    }
    d->call_t0[0] = t0;
    d->call_t1[0] = ck_now();
    d->calls_s = d->call_t1[0] - t0;
    d->ncalls = 1;
    if (d->tracing) tr_add(&d->trace, TR_MAIN, "allreduce", 0, t0, ck_now(), d->last_bytes);
    if (rc) snprintf(err, errlen, "gradient all-reduce (%s) failed: %s", d->algo->name, ck_comm_errmsg(d->comm));
    return rc;
}

/* Whether every rank of the communicator is on this rank's node: then their
 * ck_now() clocks are one (CLOCK_MONOTONIC of one kernel). */
static int same_node(MPI_Comm c, int p)
{
    MPI_Comm node;
    int n = 0, one, all;
    MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    one = n == p;
    ck_watch_allreduce(&one, &all, 1, MPI_INT, MPI_MIN, c, "whether the ranks share a node");
    return all;
}

void dp_calls_apart(dp_ctx *d, double *entry, double *proper)
{
    *entry = *proper = -1;
    if (d->p == 1 || d->ncalls <= 0) return;
    MPI_Comm c = ck_comm_mpi(d->comm);
    if (d->one_clock < 0) d->one_clock = same_node(c, d->p);
    if (!d->one_clock) return;
    ck_watch_allreduce(d->call_t0, d->call_last, d->ncalls, MPI_DOUBLE, MPI_MAX, c, "the calls' start times");
    *entry = *proper = 0;
    for (int j = 0; j < d->ncalls; j++) {
        /* the last rank's start is at or after this rank's: the MAX over all */
        *entry += d->call_last[j] - d->call_t0[j];
        *proper += d->call_t1[j] > d->call_last[j] ? d->call_t1[j] - d->call_last[j] : 0;
    }
}

uint64_t dp_hash(const float *x, size_t n) { return ck_fnv1a64(x, n * sizeof *x); }

int dp_check_sync(dp_ctx *d, const float *params, const float *m, const float *v, size_t n, char *err,
                  size_t errlen)
{
    uint64_t mine[3] = {dp_hash(params, n), m ? dp_hash(m, n) : 0, v ? dp_hash(v, n) : 0};
    uint64_t *all = malloc((size_t)d->p * sizeof mine);
    if (!all) { snprintf(err, errlen, "out of memory in the sync check"); return -1; }
    ck_watch_allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, ck_comm_mpi(d->comm), "the sync check");
    int bad = -1;
    for (int r = 1; r < d->p && bad < 0; r++)
        if (memcmp(all + 3 * r, all, sizeof mine)) bad = r;
    if (bad >= 0) {
        int k = all[3 * bad] != all[0] ? 0 : all[3 * bad + 1] != all[1] ? 1 : 2;
        static const char *const what[3] = {"parameters", "optimizer state (m)", "optimizer state (v)"};
        snprintf(err, errlen, "ranks out of sync: rank %d's %s hash %016llx differs from rank 0's %016llx",
                 bad, what[k], (unsigned long long)all[3 * bad + k], (unsigned long long)all[k]);
    }
    free(all);
    return bad >= 0 ? -1 : 0;
}
