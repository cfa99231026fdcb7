/*
 * test_dp — data-parallel equivalence and the nonblocking all-reduce engine.
 * Run at p = 2, 3, 4 (see CMakeLists.txt).
 *
 * 1. For EVERY host algorithm in the registry: K optimizer steps on p ranks
 *    with global batch B give the same parameters as one rank with batch B
 *    (the one-rank reference is computed on each rank with a communicator of
 *    MPI_COMM_SELF, so nothing but the data-parallel path differs). Tried with
 *    plain and accumulated (--accum 2) steps and uneven shards, in the three
 *    all-reduce modes: dense (the whole buffer: the default), bucketed
 *    (slices launched from the backward hook) and sparse (--sparse-grads: the
 *    touched rows of the input layer).
 *
 *    Tolerance: |w_p - w_1| <= 1e-6 * (1 + |w_1|) per parameter. Both runs
 *    add exactly the same per-sample gradient terms, but in different orders
 *    (each rank sums its own rows, then the algorithm sums the ranks in its
 *    own order), and float addition is not associative: every sum can differ
 *    by a few ulps (~1e-7 relative). SGD with momentum is linear in the
 *    gradient, so after K = 4 steps of lr 0.1 these differences stay near
 *    1e-8 (measured: at most 2e-8 over all algorithms at p = 2..4); 1e-6
 *    leaves a wide margin without hiding real bugs (a dropped or doubled
 *    sample, a wrong scale, a stale bucket, a row left out of the sparse pack
 *    all move parameters by > 1e-3 here). Dropout is 0: dropout streams are
 *    per rank by design.
 *
 * 2. Bytes: the dense and bucketed modes all-reduce the whole buffer every
 *    step, the sparse mode less whenever some input row goes untouched.
 *
 * 3. All ranks hold identical parameters (dp_check_sync), and the check does
 *    fail when one rank's parameters are perturbed.
 *
 * 4. ck_allreduce_async directly: several requests in flight, FIFO, results
 *    equal to blocking ck_allreduce; a count that differs across ranks comes
 *    back as CK_ERR_MISMATCH from ck_allreduce_wait instead of hanging.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit.h"
#include "collkit_shm.h"
#include "dp.h"
#include "optim.h"
#include "check.h"

static int rank, p;

enum { N = 36, D = 12, K = 4 };   /* N divisible by 2, 3, 4: no wrap padding, same samples for every p */

/* The dataset: N rows of D inputs in CSR form (about 30% non-zero), labels. */
static size_t Xptr[N + 1];
static int Xidx[N * D];
static float Xval[N * D];
static int Y[N];
static double g_bytes;   /* bytes all-reduced by the last train() */

enum { DENSE = 0, BUCKETED = 1, SPARSE = 2 };
static const char *const mode_name[3] = {"dense", "bucketed", "sparse"};

/* K optimizer steps from the same init, written as tagtrain's step is:
 * shard -> forward -> backward (bucket hook) -> all-reduce -> optimizer.
 * Leaves the parameters in out. */
static int train(ck_comm *comm, const ck_algo *algo, int batch, int accum, int mode, float *out, size_t *np,
                 char *err)
{
    mlp_config mc = {.in_dim = D, .nhidden = 2, .hidden = {10, 6}, .dropout = 0.0f,
                     .class_weight = {1.0f, 1.0f, 1.0f, 1.0f}};
    mlp m;
    if (mlp_create(&m, &mc, batch)) return -1;
    mlp_init_params(&m, 5);
    opt_config oc = {.kind = OPT_SGD, .lr = 0.1f, .beta1 = 0.9f, .sched = SCHED_CONST};
    optimizer o;
    opt_create(&o, &oc, m.nparams);
    dp_ctx d;
    /* 16 floats per bucket: many buckets, boundaries inside layers. */
    if (dp_init(&d, comm, algo, &m, mode == BUCKETED ? 16.0 * 4 / 1048576.0 : 0,
                mode == SPARSE ? DP_SPARSE_GRADS : 0, err, 256))
        return -1;
    const csr_rows x = {Xptr, Xidx, Xval};
    size_t *order, rows[64];
    int labels[64];
    size_t n = dp_epoch_order(N, ck_comm_size(comm), 9, 0, &order);
    rng_t r = rng_stream(1, RNG_DROPOUT, 0, 0);
    size_t per = (size_t)batch * accum, pos = 0;
    int rc = 0;
    g_bytes = 0;
    for (int s = 0; s < K && !rc; s++, pos = (pos + per) % n) {
        size_t len = n - pos < per ? n - pos : per;
        for (size_t mb = 0; mb < len; mb += (size_t)batch) {
            size_t mlen = len - mb < (size_t)batch ? len - mb : (size_t)batch;
            int b = dp_shard(&d, order, pos + mb, mlen, rows);
            for (int k = 0; k < b; k++) labels[k] = Y[rows[k]];
            mlp_forward(&m, &x, rows, labels, b, 1, &r);
            mlp_backward(&m, labels, b, mb + mlen == len && d.nbuckets ? dp_bucket_ready : NULL, &d, d.bucket_elems);
        }
        rc = dp_allreduce_grads(&d, &x, order + pos, len, err, 256);
        g_bytes += (double)d.last_bytes;
        if (!rc) optimizer_step(&o, m.params, m.grads, 1.0f / (float)len);
    }
    memcpy(out, m.params, m.nparams * sizeof(float));
    *np = m.nparams;
    if (!rc && ck_comm_size(comm) > 1) {
        /* identical on all ranks, and the check can tell when not */
        char e2[256];
        CHECK(dp_check_sync(&d, m.params, o.m, o.v, m.nparams, e2, sizeof e2) == 0, "%s: ranks out of sync: %s",
              algo->name, e2);
        if (rank == 1) m.params[m.nparams / 2] += 1e-6f;
        int bad = dp_check_sync(&d, m.params, o.m, o.v, m.nparams, e2, sizeof e2);
        CHECK(bad != 0 && strstr(e2, "rank 1"), "%s: perturbed rank 1 not detected (%s)", algo->name, e2);
    }
    free(order);
    dp_free(&d);
    opt_free(&o);
    mlp_free(&m);
    return rc;
}

static double max_err(const float *a, const float *ref, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - ref[i]) / (1.0 + fabs(ref[i]));
        if (!(e <= worst)) worst = e;   /* NaN counts as worst */
    }
    return worst;
}

static void async_engine(ck_comm *comm)
{
    enum { NB = 5 };
    const size_t counts[NB] = {0, 1, 7, 1000, 33333};
    float *buf[NB], *ref[NB];
    ck_async *h[NB];
    const ck_algo *algos[NB], *host[64];
    int na = 0;
    for (int i = 0; i < ck_algo_count() && na < 64; i++)
        if (ck_algo_at(i)->mem & CK_MEM_HOST) host[na++] = ck_algo_at(i);
    for (int b = 0; b < NB; b++) {
        algos[b] = host[b % na];   /* spread the registry over the requests: FIFO must hold across algorithms */
        buf[b] = malloc((counts[b] + 1) * sizeof(float));
        ref[b] = malloc((counts[b] + 1) * sizeof(float));
        for (size_t i = 0; i < counts[b]; i++) buf[b][i] = ref[b][i] = (float)((i * 7 + (size_t)rank * 3 + b) % 13);
    }
    int rc = 0;
    for (int b = 0; b < NB && !rc; b++)
        rc = ck_allreduce_async(comm, algos[b], CK_IN_PLACE, buf[b], counts[b], CK_F32, CK_SUM, &h[b]);
    CHECK(rc == 0, "ck_allreduce_async: %s (%s)", ck_strerror(rc), ck_comm_errmsg(comm));
    if (rc) MPI_Abort(MPI_COMM_WORLD, 1);
    /* Meanwhile the main thread may call blocking collectives on the parent. */
    for (int b = 0; b < NB; b++)
        ck_allreduce(comm, ck_algo_find("ring"), CK_IN_PLACE, ref[b], counts[b], CK_F32, CK_SUM);
    for (int b = NB - 1; b >= 0; b--) {   /* waiting out of order is allowed */
        int w = ck_allreduce_wait(h[b]);
        CHECK(w == 0, "wait %d (%s): %s", b, algos[b]->name, ck_comm_errmsg(comm));
        CHECK(!memcmp(buf[b], ref[b], counts[b] * sizeof(float)), "async %s count %zu differs from blocking",
              algos[b]->name, counts[b]);
    }
    for (int b = 0; b < NB; b++) { free(buf[b]); free(ref[b]); }

    /* Mismatched counts: an error from wait, not a hang. */
    float v[8] = {0};
    ck_async *hm;
    rc = ck_allreduce_async(comm, ck_algo_find("ring"), CK_IN_PLACE, v, rank == 0 ? 8 : 7, CK_F32, CK_SUM, &hm);
    if (!rc) rc = ck_allreduce_wait(hm);
    CHECK(rc == CK_ERR_MISMATCH && strstr(ck_comm_errmsg(comm), "count differs"),
          "count mismatch: got %s '%s'", ck_strerror(rc), ck_comm_errmsg(comm));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) printf("FAIL: MPI does not provide MPI_THREAD_MULTIPLE\n0 passed, 1 failed\n");
        MPI_Finalize();
        return 1;
    }
    rng_t r = rng_stream(3, 77, 0, 0);
    for (int i = 0, e = 0; i < N; i++) {
        for (int k = 0; k < D; k++)
            if (rng_uniform(&r) < 0.3f) { Xidx[e] = k; Xval[e] = rng_uniform(&r); e++; }
        Xptr[i + 1] = (size_t)e;
        Y[i] = (int)rng_below(&r, 4);
    }

    ck_comm *world, *self;
    ck_comm_create(MPI_COMM_WORLD, CK_MEM_HOST, &world);
    ck_comm_create(MPI_COMM_SELF, CK_MEM_HOST, &self);
    const double tol = 1e-6;
    float *ref = malloc(4096 * sizeof(float)), *got = malloc(4096 * sizeof(float));
    int sparse_less = 0, nhost = 0;
    size_t np = 0;
    char err[256];
    struct { int batch, accum; } cases[] = {{12, 1}, {8, 2}, {5, 1}};   /* 5: uneven shards */
    for (int i = 0; i < ck_algo_count(); i++) {
        const ck_algo *a = ck_algo_at(i);
        if (!(a->mem & CK_MEM_HOST)) continue;
        nhost++;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int B = cases[c].batch, A = cases[c].accum;
            int rc = train(self, a, B, A, DENSE, ref, &np, err);
            CHECK(rc == 0, "reference run failed: %s", err);
            double e[3], bytes[3];
            for (int mode = 0; mode < 3; mode++) {
                rc = train(world, a, B, A, mode, got, &np, err);
                CHECK(rc == 0, "%s p=%d %s run failed: %s", a->name, p, mode_name[mode], err);
                bytes[mode] = g_bytes;
                e[mode] = max_err(got, ref, np);
                CHECK(e[mode] <= tol, "%s p=%d batch %d accum %d %s: max relative parameter error %.3g > %.0e",
                      a->name, p, B, A, mode_name[mode], e[mode], tol);
                /* One rank, same mode: no all-reduce at all, the same result. */
                rc = train(self, a, B, A, mode, got, &np, err);
                CHECK(rc == 0 && max_err(got, ref, np) <= tol && g_bytes == 0,
                      "%s batch %d accum %d %s on 1 rank differs (%.3g) or all-reduced %.0f bytes", a->name, B, A,
                      mode_name[mode], max_err(got, ref, np), g_bytes);
            }
            const double full = (double)K * np * sizeof(float);
            CHECK(bytes[DENSE] == full && bytes[BUCKETED] == full, "%s: dense %.0f / bucketed %.0f bytes, want %.0f",
                  a->name, bytes[DENSE], bytes[BUCKETED], full);
            CHECK(bytes[SPARSE] > 0 && bytes[SPARSE] <= full, "%s: sparse all-reduced %.0f bytes of %.0f", a->name,
                  bytes[SPARSE], full);
            if (B == 5) sparse_less += bytes[SPARSE] < full;
            if (rank == 0)
                printf("%-16s p=%d batch %2d accum %d: vs 1 rank: dense %.2e, bucketed %.2e, sparse %.2e "
                       "(%.0f of %.0f bytes)\n", a->name, p, B, A, e[0], e[1], e[2], bytes[SPARSE], full);
        }
    }
    /* With 5 samples a step, some input rows go untouched: the sparse buffer is smaller. */
    CHECK(sparse_less == nhost, "sparse all-reduce never smaller than the full buffer (%d of %d algorithms)",
          sparse_less, nhost);
    /* Sanity of the tolerance: a genuinely different run (one step fewer) is far outside it. */
    {
        float *other = malloc(4096 * sizeof(float));
        train(self, ck_algo_find("ring"), 12, 1, DENSE, ref, &np, err);
        train(self, ck_algo_find("ring"), 11, 1, DENSE, other, &np, err);
        CHECK(max_err(other, ref, np) > 100 * tol, "the tolerance cannot tell batch 11 from batch 12");
        free(other);
    }
    /* Buckets and the sparse pack do not go together. */
    {
        mlp_config mc = {.in_dim = D, .nhidden = 1, .hidden = {4}, .class_weight = {1, 1, 1, 1}};
        mlp m;
        dp_ctx d;
        mlp_create(&m, &mc, 4);
        CHECK(dp_init(&d, world, ck_algo_find("ring"), &m, 1.0, DP_SPARSE_GRADS, err, sizeof err) != 0 && strstr(err, "sparse"),
              "buckets with --sparse-grads refused: %s", err);
        mlp_free(&m);
    }
    /* On the shm transport dp_init puts the gradient buffer in the shared
     * heap (the peers load it in place), and dp_free hands it back. */
    {
        mlp_config mc = {.in_dim = D, .nhidden = 1, .hidden = {4}, .class_weight = {1, 1, 1, 1}};
        mlp m;
        dp_ctx d;
        ck_comm *shm = NULL;
        CHECK(ck_comm_create(MPI_COMM_WORLD, CK_MEM_SHM, &shm) == CK_SUCCESS, "shm communicator");
        mlp_create(&m, &mc, 4);
        int ok = dp_init(&d, shm, ck_algo_find("twoshot"), &m, 0, 0, err, sizeof err) == 0;
        CHECK(ok, "dp_init on shm: %s", err);
        if (ok) {
            CHECK(ck_shm_offset(shm, m.grads, m.nparams * sizeof(float)) >= 0 && d.grads == m.grads,
                  "the gradient buffer is in the shared heap");
            dp_free(&d);
            CHECK(m.grads == NULL, "dp_free takes the gradient buffer back");
        }
        mlp_free(&m);
        ck_comm_destroy(shm);
    }
    async_engine(world);
    free(ref); free(got);
    ck_comm_destroy(self);
    ck_comm_destroy(world);
    int tot[2] = {passed, failed};
    MPI_Allreduce(MPI_IN_PLACE, tot, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", tot[0], tot[1]);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
