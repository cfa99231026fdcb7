/*
 * pingpong.c — measuring α, β and γ.
 *
 * Two ranks bounce a message of n bytes back and forth through
 * ck_sendrecv — the same call the algorithms make, so the fit describes what
 * they see, not raw MPI. One-way time = round trip / 2, median over the
 * iterations. A weighted least-squares line t(n) = α + β·n through all sizes
 * gives the latency α and the inverse bandwidth β (model.c).
 *
 * Link classes. Where the ranks span nodes, a link inside a node and one
 * between nodes differ by an order of magnitude, and an algorithm's time
 * depends on which its steps cross: so one pair inside a node (rank 0 and
 * the next rank of its node, or of the first node holding two) and one pair
 * across nodes (rank 0 and the first rank of another node) are timed, one
 * after the other, each fitted on its own. On one node only the first.
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

/* COLLKIT_RANKS_PER_NODE=k: consecutive blocks of k ranks form the nodes
 * (a test, or a lesson that treats one machine as several nodes). It must
 * read the variable as the library's node groups do (collkit_group.h): a
 * whole number from 1 up. 0 when unset, k, or -1 after saying why. */
static int ranks_per_node_override(int rank)
{
    const char *v = getenv("COLLKIT_RANKS_PER_NODE");
    char why[128];
    long long k;
    if (!v || !*v) return 0;
    if (ck_parse_int(v, 1, 1 << 30, &k, why, sizeof why)) {
        if (rank == 0) fprintf(stderr, "collbench: COLLKIT_RANKS_PER_NODE='%s': %s (want ranks per node, 1 or more)\n",
                               v, why);
        return -1;
    }
    return (int)k;
}

int bm_nodes(ck_comm *comm, int *node)
{
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm);
    const int k = ranks_per_node_override(rank);
    if (k < 0) return -1;
    if (k > 0) {
        for (int r = 0; r < p; r++) node[r] = r / k;
        return 0;
    }
    /* Each rank's node named by the lowest rank that shares its memory. */
    MPI_Comm shared;
    int lowest;
    MPI_Comm_split_type(ck_comm_mpi(comm), MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    ck_bounded_allreduce(ck_bound_comm(comm), &rank, &lowest, 1, MPI_INT, MPI_MIN, shared, "the node's lowest rank");
    MPI_Comm_free(&shared);
    ck_bounded_allgather(ck_bound_comm(comm), &lowest, 1, MPI_INT, node, 1, MPI_INT, ck_comm_mpi(comm),
                         "each rank's node");
    return 0;
}

int bm_node_ranks(ck_comm *comm, int *k)
{
    const int p = ck_comm_size(comm);
    int *node = malloc(sizeof(int) * (size_t)p);
    if (!node) ck_watch_abort("rank %d: out of memory", ck_comm_rank(comm));
    int rc = bm_nodes(comm, node);
    if (!rc) *k = bm_node_blocks(node, p);
    free(node);
    return rc;
}

/* The pairs to time: *intra two ranks of one node, *inter two of different
 * nodes; -1 where there is none. */
static void pick_pairs(const int *node, int p, int intra[2], int inter[2])
{
    intra[0] = intra[1] = inter[0] = inter[1] = -1;
    for (int r = 1; r < p && inter[0] < 0; r++)
        if (node[r] != node[0]) { inter[0] = 0; inter[1] = r; }
    for (int a = 0; a < p && intra[0] < 0; a++)
        for (int b = a + 1; b < p; b++)
            if (node[a] == node[b]) { intra[0] = a; intra[1] = b; break; }
}

/* Ranks a and b: the one-way time at each size (median round trip / 2). */
static void pp_time(ck_comm *comm, int a, int b, const double *sizes, int npts, int iters, double *oneway)
{
    const int rank = ck_comm_rank(comm), peer = rank == a ? b : a;
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
            if (rank == a) {
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

/* One link class: the pair timed, its one-way times and fit. */
typedef struct {
    const char *name;        /* "intra" or "inter": the CSV's link column */
    const char *what;        /* how the header names it */
    int pair[2];             /* the ranks; -1: not measured */
    double oneway[MAXPTS];
    double alpha, beta;
} pp_link;

static void pp_header(ck_comm *comm, const int *node, const pp_link *links)
{
    const int p = ck_comm_size(comm);
    printf("# collbench --pingpong: pairs of ranks through ck_sendrecv (transport %s)%s\n",
           ck_comm_transport_name(comm), p > 2 ? "; the other ranks idle" : "");
    printf("# nodes: %s\n", getenv("COLLKIT_RANKS_PER_NODE") && *getenv("COLLKIT_RANKS_PER_NODE")
                                ? "consecutive blocks of COLLKIT_RANKS_PER_NODE ranks"
                                : "ranks that share memory (MPI_Comm_split_type shared)");
    for (int c = 0; c < 2; c++) {
        const pp_link *l = &links[c];
        if (l->pair[0] < 0)
            printf("# link %s (%s): not measured (%s)\n", l->name, l->what,
                   c ? "every rank is on one node" : "no node holds two ranks");
        else if (c == 0)
            printf("# link %s (%s): ranks %d <-> %d (node %d)\n", l->name, l->what, l->pair[0], l->pair[1],
                   node[l->pair[0]]);
        else
            printf("# link %s (%s): ranks %d <-> %d (nodes %d and %d)\n", l->name, l->what, l->pair[0], l->pair[1],
                   node[l->pair[0]], node[l->pair[1]]);
    }
    printf("# one-way time = round trip / 2, median over the iterations\n#\n");
    printf("# %12s %8s %12s %12s %12s %6s\n", "size", "iters", "time", "bandwidth", "fit", "link");
    printf("# %12s %8s %12s %12s %12s %6s\n", "(B)", "", "(us)", "(GB/s)", "(us)", "");
    fflush(stdout);
}

/* Rank 0: the table (and --csv) of the measured times against each link's
 * fit. 0, or 1 when the CSV could not be written. */
static int pp_table(const bm_opts *o, const double *sizes, const pp_link *links, int npts, int iters,
                    const bm_params *m)
{
    int status = 0;
    FILE *csv = o->csv ? bm_out_open(o->csv) : NULL;
    if (o->csv && !csv) status = 1;
    if (csv) fprintf(csv, "bytes,time_us,bw_gbs,fit_us,link\n");
    for (int c = 0; c < 2; c++) {
        const pp_link *l = &links[c];
        for (int i = 0; i < npts && l->pair[0] >= 0; i++) {
            double fit = l->alpha + l->beta * sizes[i], t = l->oneway[i];
            printf("  %12.0f %8d %12.3f %12.4f %12.3f %6s\n", sizes[i], pp_iters((size_t)sizes[i], iters), t * 1e6,
                   sizes[i] / t / 1e9, fit * 1e6, l->name);
            if (csv)
                fprintf(csv, "%.0f,%.4f,%.5f,%.4f,%s\n", sizes[i], t * 1e6, sizes[i] / t / 1e9, fit * 1e6, l->name);
        }
    }
    if (csv && bm_out_close(csv, o->csv)) status = 1;
    printf("#\n");
    bm_params_print(stdout, "# fit: ", m);
    printf("# (gamma and memcpy timed on rank 0 with ck_reduce_local / ck_copy)\n");
    fflush(stdout);
    return status;
}

/* One link: its pair times every size, rank 0 receives the times and fits
 * them. 0, or 1 (rank 0: the fit failed, said). */
static int pp_link_time(ck_comm *comm, pp_link *l, const double *sizes, int npts, int iters)
{
    const int rank = ck_comm_rank(comm);
    const ck_bound bound = ck_bound_comm(comm);
    ck_bounded_barrier(bound, ck_comm_mpi(comm), "the barrier before the ping-pong");
    if (rank == l->pair[0] || rank == l->pair[1]) pp_time(comm, l->pair[0], l->pair[1], sizes, npts, iters, l->oneway);
    ck_bounded_bcast(bound, l->oneway, npts, MPI_DOUBLE, l->pair[0], ck_comm_mpi(comm),
                     "the ping-pong times (a pair of ranks is timing)");
    if (rank == 0 && bm_fit_alpha_beta(sizes, l->oneway, npts, &l->alpha, &l->beta)) {
        fprintf(stderr, "collbench: the alpha-beta fit needs at least two message sizes (-b < -e)\n");
        return 1;
    }
    return 0;
}

/* The fitted links into out: alpha and beta the link inside a node, or the
 * one between nodes where no node holds two ranks. */
static void pp_links_to_params(const pp_link *links, bm_params *out)
{
    const pp_link *first = links[0].pair[0] >= 0 ? &links[0] : &links[1];
    out->alpha = first->alpha;
    out->beta = first->beta;
    out->links = (links[0].pair[0] >= 0 ? BM_LINK_INTRA : 0) | (links[1].pair[0] >= 0 ? BM_LINK_INTER : 0);
    out->alpha_inter = links[1].pair[0] >= 0 ? links[1].alpha : 0;
    out->beta_inter = links[1].pair[0] >= 0 ? links[1].beta : 0;
}

int bm_calibrate(ck_comm *comm, const bm_opts *o, size_t minb, size_t maxb, int factor,
                 int iters, int verbose, bm_params *out)
{
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm);
    const ck_bound bound = ck_bound_comm(comm);
    double sizes[MAXPTS];
    int status = 0;
    double prm[6] = {0};   /* alpha, beta (intra), gamma, memcpy bw, alpha, beta (inter) */
    pp_link links[2] = {{.name = "intra", .what = "inside a node"}, {.name = "inter", .what = "between nodes"}};

    if (p < 2) return 1;
    int *node = malloc(sizeof(int) * (size_t)p);
    if (!node) ck_watch_abort("rank %d: out of memory", rank);
    if (bm_nodes(comm, node)) { free(node); return 2; }
    pick_pairs(node, p, links[0].pair, links[1].pair);
    const int npts = pp_sizes(minb, maxb, factor, sizes);
    if (verbose && rank == 0) pp_header(comm, node, links);
    for (int c = 0; c < 2; c++)
        if (links[c].pair[0] >= 0) status |= pp_link_time(comm, &links[c], sizes, npts, iters);
    if (rank == 0) {
        pp_links_to_params(links, out);
        prm[0] = out->alpha; prm[1] = out->beta; prm[4] = out->alpha_inter; prm[5] = out->beta_inter;
        time_gamma_memcpy(comm, (size_t)sizes[npts - 1], &prm[2], &prm[3]);
    }
    ck_bounded_bcast(bound, prm, 6, MPI_DOUBLE, 0, ck_comm_mpi(comm),
                     "the ping-pong results (rank 0 is fitting)");
    ck_bounded_bcast(bound, &status, 1, MPI_INT, 0, ck_comm_mpi(comm), "the ping-pong status");
    pp_links_to_params(links, out);   /* the classes measured: the same on every rank */
    out->alpha = prm[0];
    out->beta = prm[1];
    out->gamma = prm[2];
    out->memcpy_bw = prm[3];
    out->alpha_inter = prm[4];
    out->beta_inter = prm[5];
    out->chunk = (double)ck_comm_config(comm)->chunk_bytes;
    out->node_ranks = bm_node_blocks(node, p);
    if (verbose && rank == 0 && pp_table(o, sizes, links, npts, iters, out)) status = 1;
    free(node);
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
