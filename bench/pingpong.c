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

int bm_calibrate(ck_comm *comm, const bm_opts *o, size_t minb, size_t maxb, int factor,
                 int iters, int verbose, bm_params *out)
{
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm);
    double sizes[MAXPTS], oneway[MAXPTS];
    int npts = 0, status = 0;
    double prm[4] = {0, 0, 0, 0};   /* alpha, beta, gamma, memcpy bw */

    if (p < 2) return 1;
    for (size_t s = minb ? minb : 1; s <= maxb && npts < MAXPTS; s *= (size_t)factor) {
        sizes[npts++] = (double)s;
        if (s > maxb / (size_t)factor) break;
    }
    if (verbose && rank == 0) {
        printf("# collbench --pingpong: ranks 0 <-> 1 through ck_sendrecv (transport %s)%s\n",
               ck_comm_transport_name(comm), p > 2 ? "; the other ranks idle" : "");
        printf("# one-way time = round trip / 2, median over the iterations\n#\n");
        printf("# %12s %8s %12s %12s %12s\n", "size", "iters", "time", "bandwidth", "fit");
        printf("# %12s %8s %12s %12s %12s\n", "(B)", "", "(us)", "(GB/s)", "(us)");
        fflush(stdout);
    }

    ck_bounded_barrier(ck_bound_comm(comm), ck_comm_mpi(comm), "the barrier before the ping-pong");
    if (rank < 2) {
        size_t maxbytes = (size_t)sizes[npts - 1];
        void *buf = ck_alloc(comm, maxbytes);
        double *rt = malloc(sizeof(double) * (size_t)(iters > 3 ? iters : 3));
        if (!buf || !rt) { fprintf(stderr, "collbench: rank %d: out of memory\n", rank); MPI_Abort(MPI_COMM_WORLD, 1); }
        char *zeros = calloc(1, maxbytes);
        if (zeros) ck_upload(comm, buf, zeros, maxbytes);
        free(zeros);
        int peer = 1 - rank;
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
            if (rc) {
                fprintf(stderr, "collbench: rank %d: ping-pong failed: %s\n", rank, ck_comm_errmsg(comm));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            double med, mn, mx;
            bm_stats(rt, k, &med, &mn, &mx);
            oneway[i] = med / 2;
        }
        if (rank == 0) {
            if (bm_fit_alpha_beta(sizes, oneway, npts, &prm[0], &prm[1])) {
                fprintf(stderr, "collbench: the alpha-beta fit needs at least two message sizes (-b < -e)\n");
                status = 1;
            }
            /* γ and memcpy at the largest message size (1..64 MiB): the
             * memcpy line is the ceiling for the largest all-reduces, so it
             * must not be a cache-resident copy (this machine's 16 MiB copy
             * runs about twice as fast as its 64 MiB one). */
            size_t g = maxbytes < (1u << 20) ? (1u << 20) : maxbytes > (64u << 20) ? (64u << 20) : maxbytes;
            size_t cnt = g / sizeof(float);
            void *a = ck_alloc(comm, g), *b = ck_alloc(comm, g), *d = ck_alloc(comm, g);
            float *h = calloc(cnt, sizeof(float));
            if (!a || !b || !d || !h) { fprintf(stderr, "collbench: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
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
            prm[2] = med / (double)g;
            bm_stats(tc, 7, &med, &mn, &mx);
            /* 0 = unknown: a copy that took no time (SimGrid charges none)
             * has no bandwidth to write into a model file. */
            prm[3] = med > 0 ? (double)g / med : 0;
            ck_free(comm, a); ck_free(comm, b); ck_free(comm, d);
            free(h);
        }
        ck_free(comm, buf);
        free(rt);
    }
    ck_bounded_bcast(ck_bound_comm(comm), prm, 4, MPI_DOUBLE, 0, ck_comm_mpi(comm), "the ping-pong results (ranks 0 and 1 are timing)");
    ck_bounded_bcast(ck_bound_comm(comm), &status, 1, MPI_INT, 0, ck_comm_mpi(comm), "the ping-pong status");
    out->alpha = prm[0];
    out->beta = prm[1];
    out->gamma = prm[2];
    out->memcpy_bw = prm[3];
    out->chunk = (double)ck_comm_config(comm)->chunk_bytes;

    if (verbose && rank == 0) {
        FILE *csv = o->csv ? bm_out_open(o->csv) : NULL;
        if (o->csv && !csv) status = 1;
        if (csv) fprintf(csv, "bytes,time_us,bw_gbs,fit_us\n");
        for (int i = 0; i < npts; i++) {
            double fit = out->alpha + out->beta * sizes[i];
            printf("  %12.0f %8d %12.3f %12.4f %12.3f\n", sizes[i], pp_iters((size_t)sizes[i], iters),
                   oneway[i] * 1e6, sizes[i] / oneway[i] / 1e9, fit * 1e6);
            if (csv) fprintf(csv, "%.0f,%.4f,%.5f,%.4f\n", sizes[i], oneway[i] * 1e6, sizes[i] / oneway[i] / 1e9, fit * 1e6);
        }
        if (csv && bm_out_close(csv, o->csv)) status = 1;
        printf("#\n");
        bm_params_print(stdout, "# fit: ", out);
        printf("# (gamma and memcpy timed on rank 0 with ck_reduce_local / ck_copy)\n");
        fflush(stdout);
    }
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
