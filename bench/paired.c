/*
 * paired.c — collbench --paired: two algorithms timed against each other in
 * one run, the way a fair comparison is made on a noisy machine (and the
 * way the autograder compares a student's algorithm with the library's):
 *
 *   - the calls alternate in ABBA order (A B, B A, A B, ...), so a slow drift
 *     of the machine (another process, frequency, cache state) weighs on
 *     both equally;
 *   - each call is timed between a barrier and its end on every rank, and the
 *     call's time is the slowest rank's (an all-reduce is done when the last
 *     rank is done);
 *   - the figure is the median over pairs of t(A) / t(B), with its quartiles:
 *     above 1, B is faster than A.
 * Both algorithms run on the checker's inputs, and each is checked once after
 * its timed calls (#wrong, like the sweep's -c 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include "collbench.h"
#include "collcheck.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[0..n), by linear interpolation. */
static double quantile(const double *v, int n, double q)
{
    double x = q * (n - 1);
    int i = (int)x;
    return i + 1 < n ? v[i] + (x - i) * (v[i + 1] - v[i]) : v[n - 1];
}

/* One validated call of `a`, then the number of wrong elements over all ranks. */
static long long check_once(ck_comm *comm, const ck_algo *a, const bm_opts *o, size_t count,
                            const void *host_in, void *host_out, void *dsend, void *drecv)
{
    const size_t bytes = count * ck_dtype_size(o->dtype);
    int rc = ck_upload(comm, dsend, host_in, bytes);
    if (!rc) rc = ck_allreduce(comm, a, dsend, drecv, count, o->dtype, o->op);
    if (!rc) rc = ck_download(comm, host_out, drecv, bytes);
    if (rc)
        bm_abort(comm, "rank %d: '%s' failed: %s (%s)", ck_comm_rank(comm), a->name, ck_strerror(rc),
                 ck_comm_errmsg(comm));
    long long w = (long long)cc_count_wrong(host_out, count, o->dtype, o->op, ck_comm_size(comm)), total = 0;
    bm_allreduce(comm, &w, &total, 1, MPI_LONG_LONG, MPI_SUM, "the count of wrong elements");
    return total;
}

int bm_run_paired(ck_comm *comm, const bm_opts *o)
{
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm), n = o->iters;
    const size_t es = ck_dtype_size(o->dtype);
    const ck_algo *ab[2] = {o->algos[0], o->algos[1]};
    const size_t maxbytes = o->maxbytes / es * es;
    void *host_in = malloc(maxbytes + 1), *host_out = malloc(maxbytes + 1);
    void *dsend = ck_alloc(comm, maxbytes + 1), *drecv = ck_alloc(comm, maxbytes + 1);
    double *t = malloc(sizeof(double) * 4 * (size_t)n);   /* t[alg*n + i], then the maxima */
    double *ratio = malloc(sizeof(double) * (size_t)n);
    int ok = host_in && host_out && dsend && drecv && t && ratio, all_ok, status = 0;
    bm_allreduce(comm, &ok, &all_ok, 1, MPI_INT, MPI_MIN, "the buffer allocation");
    FILE *csv = NULL;
    if (all_ok && rank == 0 && o->csv && !(csv = bm_out_open(o->csv))) status = 1;
    if (!all_ok) {
        if (rank == 0) fprintf(stderr, "collbench: cannot allocate buffers of %zu bytes\n", maxbytes);
        status = 1;
    }
    if (rank == 0 && !status) {
        printf("# collbench --paired: A = %s, B = %s; %d ranks, %s %s, out-of-place, %s buffers\n", ab[0]->name,
               ab[1]->name, p, ck_dtype_name(o->dtype), ck_op_name(o->op), o->mem == CK_MEM_CUDA ? "cuda" : "host");
        printf("# %d pairs per size in ABBA order; a call's time is the slowest rank's; speed = t(A) / t(B),\n"
               "# above 1: B is faster. Median over pairs, [first .. third quartile].\n#\n", n);
        printf("# %12s %12s %12s %8s %18s %7s %7s\n", "size (B)", "t(A) us", "t(B) us", "speed", "[q1 .. q3]",
               "#wrongA", "#wrongB");
        if (csv) fprintf(csv, "algo_a,algo_b,p,bytes,time_a_us,time_b_us,speed,speed_q1,speed_q3,pairs,wrong_a,wrong_b\n");
        fflush(stdout);
    }
    ck_config *cfg = ck_comm_config(comm);
    for (size_t s = o->minbytes; !status && s <= o->maxbytes; s = s ? s * (size_t)o->factor : es) {
        const size_t count = s / es, bytes = count * es;
        cc_fill(host_in, count, o->dtype, o->op, rank, p);
        if (ck_upload(comm, dsend, host_in, bytes)) bm_abort(comm, "rank %d: upload failed", rank);
        for (int a = 0; a < 2; a++)
            for (int w = 0; w < o->warmup; w++) {
                int rc = ck_allreduce(comm, ab[a], dsend, drecv, count, o->dtype, o->op);
                if (rc) bm_abort(comm, "rank %d: '%s' failed in warm-up: %s (%s)", rank, ab[a]->name,
                                 ck_strerror(rc), ck_comm_errmsg(comm));
            }
        cfg->validate = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 2; k++) {
                const int a = (i % 2) ^ k;   /* A B, then B A: ABBA */
                bm_barrier(comm, "the barrier before a timed call");
                double t0 = ck_now();
                int rc = ck_allreduce(comm, ab[a], dsend, drecv, count, o->dtype, o->op);
                t[a * n + i] = ck_now() - t0;
                if (rc) bm_abort(comm, "rank %d: '%s' failed: %s (%s)", rank, ab[a]->name, ck_strerror(rc),
                                 ck_comm_errmsg(comm));
            }
        cfg->validate = 1;
        bm_reduce(comm, t, rank == 0 ? t + 2 * n : NULL, 2 * n, MPI_DOUBLE, MPI_MAX, "the reduction of the times");
        long long wrong[2];
        for (int a = 0; a < 2; a++) wrong[a] = check_once(comm, ab[a], o, count, host_in, host_out, dsend, drecv);
        if (wrong[0] || wrong[1]) status = 1;
        if (rank != 0) continue;
        const double *ta = t + 2 * n, *tb = t + 3 * n;
        for (int i = 0; i < n; i++) ratio[i] = tb[i] > 0 ? ta[i] / tb[i] : 0;
        qsort(ratio, (size_t)n, sizeof *ratio, cmp_double);
        double sa[2];
        for (int a = 0; a < 2; a++) {
            qsort(t + (2 + a) * n, (size_t)n, sizeof *t, cmp_double);
            sa[a] = quantile(t + (2 + a) * n, n, 0.5);
        }
        const double med = quantile(ratio, n, 0.5), q1 = quantile(ratio, n, 0.25), q3 = quantile(ratio, n, 0.75);
        char iq[40];
        snprintf(iq, sizeof iq, "[%.3f .. %.3f]", q1, q3);
        printf("  %12zu %12.2f %12.2f %8.3f %18s %7lld %7lld\n", bytes, sa[0] * 1e6, sa[1] * 1e6, med, iq, wrong[0],
               wrong[1]);
        fflush(stdout);
        if (csv)
            fprintf(csv, "%s,%s,%d,%zu,%.3f,%.3f,%.4f,%.4f,%.4f,%d,%lld,%lld\n", ab[0]->name, ab[1]->name, p, bytes,
                    sa[0] * 1e6, sa[1] * 1e6, med, q1, q3, n, wrong[0], wrong[1]);
    }
    if (csv && bm_out_close(csv, o->csv)) status = 1;
    if (rank == 0 && status == 1 && all_ok) printf("# a result was wrong or a file could not be written\n");
    bm_bcast(comm, &status, 1, MPI_INT, "the final status");
    free(host_in); free(host_out); free(t); free(ratio);
    ck_free(comm, dsend);
    ck_free(comm, drecv);
    return status;
}
