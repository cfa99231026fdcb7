/*
 * pingpong.c — measuring α, β and γ.
 *
 * Ranks 0 and 1 bounce a message of n bytes back and forth through
 * ck_sendrecv — the same call the algorithms make, so the fit describes what
 * they see, not raw MPI. One-way time = round trip / 2, median over the
 * iterations. A weighted least-squares line t(n) = α + β·n through all sizes
 * gives the latency α and the inverse bandwidth β (model.c).
 *
 * γ is timed on rank 0 with ck_reduce_local (f32 sum, dst = a + b) on a buffer
 * too big for the caches, and the local memory-copy bandwidth with ck_copy
 * on the same buffers: the copy is the ceiling drawn on the bandwidth plots
 * (a shared-memory transport cannot move bytes faster than it copies them).
 * With more than two ranks the others wait at a barrier: they idle.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collkit_algo.h"   /* the ping-pong times the point-to-point layer itself */

/* Round trips at size n: fewer for big messages, the same on both ranks. */
static int pp_iters(size_t n, int iters)
{
    double k = 2e8 / (double)(n ? n : 1);
    return k < 3 ? 3 : k < iters ? (int)k : iters;
}

#define MAXPTS 64

/* The sizes: minb, minb·factor, ... up to maxb (at most MAXPTS). */
static int pp_sizes(size_t minb, size_t maxb, int factor, double *sizes)
{
    int npts = 0;
    for (size_t s = minb ? minb : 1; s <= maxb && npts < MAXPTS; s *= (size_t)factor) {
        sizes[npts++] = (double)s;
        if (s > maxb / (size_t)factor) break;
    }
    return npts;
}

/* Ranks 0 and 1: the one-way time at each size (median round trip / 2). */
static void pp_time(ck_comm *comm, const double *sizes, int npts, int iters, double *oneway)
{
    const int rank = ck_comm_rank(comm), peer = 1 - rank;
    size_t maxbytes = (size_t)sizes[npts - 1];
    void *buf = ck_alloc(comm, maxbytes);
    double *rt = malloc(sizeof(double) * (size_t)(iters > 3 ? iters : 3));
    if (!buf || !rt) ck_watch_abort("rank %d: out of memory", rank);
    char *zeros = calloc(1, maxbytes);
    if (zeros) ck_upload(comm, buf, zeros, maxbytes);
    free(zeros);
    for (int i = 0; i < npts; i++) {
        size_t n = (size_t)sizes[i];
        int k = pp_iters(n, iters), rc = 0;
        for (int it = -2; it < k && !rc; it++) {          /* two warm-up round trips */
            double t0 = ck_now();
            if (rank == 0) {
                rc = ck_sendrecv(comm, buf, n, peer, NULL, 0, -1, 90);
                if (!rc) rc = ck_sendrecv(comm, NULL, 0, -1, buf, n, peer, 91);
            } else {
                rc = ck_sendrecv(comm, NULL, 0, -1, buf, n, peer, 90);
                if (!rc) rc = ck_sendrecv(comm, buf, n, peer, NULL, 0, -1, 91);
            }
            if (!rc) rc = ck_sync(comm);   /* device transports: the data has landed */
            if (it >= 0) rt[it] = ck_now() - t0;
        }
        if (rc) ck_watch_abort("rank %d: ping-pong failed: %s", rank, ck_comm_errmsg(comm));
        double med, mn, mx;
        bm_stats(rt, k, &med, &mn, &mx);
        oneway[i] = med / 2;
    }
    ck_free(comm, buf);
    free(rt);
}

/* Rank 0: γ (seconds per byte of an f32 sum) and the memcpy bandwidth
 * (bytes per second; 0 = unknown), at the largest message size clamped to
 * 1..64 MiB: the memcpy line is the ceiling for the largest all-reduces, so
 * it must not be a cache-resident copy (this machine's 16 MiB copy runs
 * about twice as fast as its 64 MiB one). */
static void time_gamma_memcpy(ck_comm *comm, size_t maxbytes, double *gamma, double *memcpy_bw)
{
    size_t g = maxbytes < (1u << 20) ? (1u << 20) : maxbytes > (64u << 20) ? (64u << 20) : maxbytes;
    size_t cnt = g / sizeof(float);
    void *a = ck_alloc(comm, g), *b = ck_alloc(comm, g), *d = ck_alloc(comm, g);
    float *h = calloc(cnt, sizeof(float));
    if (!a || !b || !d || !h) ck_watch_abort("out of memory");
    for (size_t j = 0; j < cnt; j++) h[j] = (float)(j & 255);
    ck_upload(comm, a, h, g);
    ck_upload(comm, b, h, g);
    ck_upload(comm, d, h, g);
    double tr[7], tc[7], med, mn, mx;
    for (int it = -1; it < 7; it++) {
        double t0 = ck_now();
        ck_reduce_local(comm, d, a, b, cnt, CK_F32, CK_SUM);
        ck_sync(comm);
        double t1 = ck_now();
        ck_copy(comm, d, a, g);
        ck_sync(comm);
        double t2 = ck_now();
        if (it >= 0) { tr[it] = t1 - t0; tc[it] = t2 - t1; }
    }
    bm_stats(tr, 7, &med, &mn, &mx);
    *gamma = med / (double)g;
    bm_stats(tc, 7, &med, &mn, &mx);
    /* 0 = unknown: a copy that took no time (SimGrid charges none) has no
     * bandwidth to write into a model file. */
    *memcpy_bw = med > 0 ? (double)g / med : 0;
    ck_free(comm, a); ck_free(comm, b); ck_free(comm, d);
    free(h);
}

static void pp_header(ck_comm *comm)
{
    printf("# collbench --pingpong: ranks 0 <-> 1 through ck_sendrecv (transport %s)%s\n",
           ck_comm_transport_name(comm), ck_comm_size(comm) > 2 ? "; the other ranks idle" : "");
    printf("# one-way time = round trip / 2, median over the iterations\n#\n");
    printf("# %12s %8s %12s %12s %12s\n", "size", "iters", "time", "bandwidth", "fit");
    printf("# %12s %8s %12s %12s %12s\n", "(B)", "", "(us)", "(GB/s)", "(us)");
    fflush(stdout);
}

/* Rank 0: the table (and --csv) of the measured times against the fit.
 * 0, or 1 when the CSV could not be written. */
static int pp_table(const bm_opts *o, const double *sizes, const double *oneway, int npts, int iters,
                    const bm_params *m)
{
    int status = 0;
    FILE *csv = o->csv ? bm_out_open(o->csv) : NULL;
    if (o->csv && !csv) status = 1;
    if (csv) fprintf(csv, "bytes,time_us,bw_gbs,fit_us\n");
    for (int i = 0; i < npts; i++) {
        double fit = m->alpha + m->beta * sizes[i];
        printf("  %12.0f %8d %12.3f %12.4f %12.3f\n", sizes[i], pp_iters((size_t)sizes[i], iters),
               oneway[i] * 1e6, sizes[i] / oneway[i] / 1e9, fit * 1e6);
        if (csv)
            fprintf(csv, "%.0f,%.4f,%.5f,%.4f\n", sizes[i], oneway[i] * 1e6, sizes[i] / oneway[i] / 1e9, fit * 1e6);
    }
    if (csv && bm_out_close(csv, o->csv)) status = 1;
    printf("#\n");
    bm_params_print(stdout, "# fit: ", m);
    printf("# (gamma and memcpy timed on rank 0 with ck_reduce_local / ck_copy)\n");
    fflush(stdout);
    return status;
}

int bm_calibrate(ck_comm *comm, const bm_opts *o, size_t minb, size_t maxb, int factor,
                 int iters, int verbose, bm_params *out)
{
    const int rank = ck_comm_rank(comm);
    const ck_bound bound = ck_bound_comm(comm);
    double sizes[MAXPTS], oneway[MAXPTS];
    int status = 0;
    double prm[4] = {0, 0, 0, 0};   /* alpha, beta, gamma, memcpy bw */

    if (ck_comm_size(comm) < 2) return 1;
    const int npts = pp_sizes(minb, maxb, factor, sizes);
    if (verbose && rank == 0) pp_header(comm);
    ck_bounded_barrier(bound, ck_comm_mpi(comm), "the barrier before the ping-pong");
    if (rank < 2) pp_time(comm, sizes, npts, iters, oneway);
    if (rank == 0) {
        if (bm_fit_alpha_beta(sizes, oneway, npts, &prm[0], &prm[1])) {
            fprintf(stderr, "collbench: the alpha-beta fit needs at least two message sizes (-b < -e)\n");
            status = 1;
        }
        time_gamma_memcpy(comm, (size_t)sizes[npts - 1], &prm[2], &prm[3]);
    }
    ck_bounded_bcast(bound, prm, 4, MPI_DOUBLE, 0, ck_comm_mpi(comm),
                     "the ping-pong results (ranks 0 and 1 are timing)");
    ck_bounded_bcast(bound, &status, 1, MPI_INT, 0, ck_comm_mpi(comm), "the ping-pong status");
    out->alpha = prm[0];
    out->beta = prm[1];
    out->gamma = prm[2];
    out->memcpy_bw = prm[3];
    out->chunk = (double)ck_comm_config(comm)->chunk_bytes;
    if (verbose && rank == 0 && pp_table(o, sizes, oneway, npts, iters, out)) status = 1;
    return status;
}

int bm_run_pingpong(ck_comm *comm, const bm_opts *o)
{
    bm_params m;
    if (ck_comm_size(comm) < 2) {
        if (ck_comm_rank(comm) == 0) fprintf(stderr, "collbench: --pingpong needs at least 2 ranks (mpirun -np 2)\n");
        return 2;
    }
    int rc = bm_calibrate(comm, o, o->minbytes, o->maxbytes, o->factor, o->iters, 1, &m);
    if (!rc && o->save_model && ck_comm_rank(comm) == 0) {
        if (bm_params_save(o->save_model, &m, "fitted by collbench --pingpong")) {
            fprintf(stderr, "collbench: cannot write %s\n", o->save_model);
            rc = 1;
        } else {
            printf("# parameters written to %s\n", o->save_model);
        }
    }
    ck_bounded_bcast(ck_bound_comm(comm), &rc, 1, MPI_INT, 0, ck_comm_mpi(comm), "the parameter file status");
    return rc;
}
