/*
 * zero.c — ZeRO stage 1 over collkit's reduce-scatter and all-gather (zero.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int zero_init(zero_ctx *z, ck_comm *comm, int stage, const char *rs_name, const char *ag_name, size_t n, char *err,
              size_t errlen)
{
    memset(z, 0, sizeof *z);
    z->stage = stage;
    z->comm = comm;
    z->rank = ck_comm_rank(comm);
    z->p = ck_comm_size(comm);
    z->n = n;
    z->off = 0;
    z->len = n;
    if (!stage) return 0;
    const unsigned mem = ck_comm_mem(comm);
    if (!(z->rs = pick(CK_COLL_REDUCE_SCATTER, rs_name, mem, "--rs-algo", err, errlen))) return -1;
    if (!(z->ag = pick(CK_COLL_ALLGATHER, ag_name, mem, "--ag-algo", err, errlen))) return -1;
    ck_block(n, (size_t)z->p, (size_t)z->rank, &z->off, &z->len);
    return 0;
}

int zero_opt_create(const zero_ctx *z, optimizer *o, const opt_config *cfg) { return opt_create(o, cfg, z->len); }

int zero_step(zero_ctx *z, optimizer *o, float *params, float *grads, float scale, double *comm_s, char *err,
              size_t errlen)
{
    ck_counters c0, c1;
    ck_counters_get(z->comm, &c0);
    const double t0 = ck_now();
    int rc = ck_reduce_scatter(z->comm, z->rs, CK_IN_PLACE, grads, z->n, CK_F32, CK_SUM);
    if (rc) {
        snprintf(err, errlen, "gradient reduce-scatter (%s) failed: %s", z->rs->name, ck_comm_errmsg(z->comm));
        return rc;
    }
    const double t1 = ck_now();
    /* Only block r of grads is the sum; the other blocks hold this rank's
     * own partial sums, which the next step must not add to. */
    optimizer_step(o, params + z->off, grads + z->off, scale);
    memset(grads, 0, z->off * sizeof *grads);
    memset(grads + z->off + z->len, 0, (z->n - z->off - z->len) * sizeof *grads);
    const double t2 = ck_now();
    rc = ck_allgather(z->comm, z->ag, CK_IN_PLACE, params, z->n, CK_F32);
    if (rc) {
        snprintf(err, errlen, "parameter all-gather (%s) failed: %s", z->ag->name, ck_comm_errmsg(z->comm));
        return rc;
    }
    const double t3 = ck_now();
    *comm_s = (t1 - t0) + (t3 - t2);
    if (z->trace) {
        tr_add(z->trace, TR_MAIN, "rs", 0, t0, t1, z->n * sizeof *grads);
        tr_add(z->trace, TR_MAIN, "optimizer", 0, t1, t2, z->len * sizeof *grads);
        tr_add(z->trace, TR_MAIN, "ag", 0, t2, t3, z->n * sizeof *params);
    }
    ck_counters_get(z->comm, &c1);
    z->last_bytes = c1.bytes_sent - c0.bytes_sent;
    return 0;
}

int zero_gather_state(const zero_ctx *z, const optimizer *o, float *full_m, float *full_v)
{
    int *counts = malloc(2 * (size_t)z->p * sizeof *counts), *displs = counts ? counts + z->p : NULL;
    int bad = !counts || z->n > (size_t)0x7fffffff, anybad = 0;
    MPI_Comm mc = ck_comm_mpi(z->comm);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, mc);
    if (anybad) {
        free(counts);
        return -1;
    }
    for (int q = 0; q < z->p; q++) {
        size_t off, len;
        ck_block(z->n, (size_t)z->p, (size_t)q, &off, &len);
        counts[q] = (int)len;
        displs[q] = (int)off;
    }
    int rc = MPI_Gatherv(o->m, (int)z->len, MPI_FLOAT, full_m, counts, displs, MPI_FLOAT, 0, mc) != MPI_SUCCESS ||
             MPI_Gatherv(o->v, (int)z->len, MPI_FLOAT, full_v, counts, displs, MPI_FLOAT, 0, mc) != MPI_SUCCESS;
    free(counts);
    return rc ? -1 : 0;
}

size_t zero_state_bytes(const zero_ctx *z) { return 2 * z->len * sizeof(float); }
size_t zero_replicated_state_bytes(const zero_ctx *z) { return 2 * z->n * sizeof(float); }
