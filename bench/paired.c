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
 *     above 1, B is faster than A; above 2 (B more than twice as fast as A,
 *     the library's algorithm when the grader runs it) the row is flagged
 *     "review": such a figure is capped and looked at, not scored.
 *
 * What is timed is validated, every call of it, outside the timed region:
 *   - each algorithm has its own send and receive buffers, so neither can
 *     leave its result for the other to "find";
 *   - every timed call has inputs of its own (the checker's, call 2i + k for
 *     pair i and algorithm k, under --seed), and its receive buffer is
 *     poisoned (all bits set: NaN, -1) before it: a call that returns at once,
 *     replays an earlier result or does nothing leaves poison or a stale
 *     result behind;
 *   - after the call, its result is compared with the exact expected one,
 *     and the bytes and messages the transport counted during it with the
 *     algorithm's declared formulas (and its per-message bounds): a wrong
 *     call fails the run (#wrong counts the wrong elements of all timed
 *     calls), at every size timed;
 *   - --results FILE: every rank's record of every timed call (its time,
 *     result digest and counted traffic) for collverify to check outside
 *     this process.
 *
 * --coll reduce_scatter|allgather pairs algorithms of that collective the
 * same way, with the checker's inputs for it (coll.c): the size is the
 * whole buffer's, a reduce-scatter's result is the rank's block of it, an
 * all-gather sends the rank's block and receives the whole buffer.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collcheck.h"
#include "results.h"

#define REVIEW_SPEED 2.0   /* B faster than this many times A: flagged, not scored */

int bm_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bm_quantile(const double *v, int n, double q)
{
    double x = q * (n - 1);
    int i = (int)x;
    return i + 1 < n ? v[i] + (x - i) * (v[i + 1] - v[i]) : v[n - 1];
}

/* Call `call`'s input of this rank into the send buffer dev (host: count
 * elements of scratch): the whole buffer, an all-gather's block of it. */
static void upload_input(ck_comm *comm, const bm_opts *o, void *dev, unsigned char *host, size_t count,
                         unsigned call)
{
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm);
    const size_t es = ck_dtype_size(o->dtype);
    size_t off = 0, len = count;
    cc_coll_input(o->coll, host, count, o->dtype, o->op, rank, p, call);
    if (o->coll == CK_COLL_ALLGATHER) ck_block(count, (size_t)p, (size_t)rank, &off, &len);
    if (ck_upload(comm, dev, host + off * es, len * es)) ck_watch_abort("rank %d: upload failed", rank);
}

/* One timed call of algorithm a (0 or 1), pair i: fresh inputs, a poisoned
 * receive buffer, the call timed alone, then checked. Returns the call's
 * seconds; *wrong gets its wrong elements, rec what it produced, and the
 * first problem on this rank is kept in msg. */
typedef struct {
    void *host_in, *host_out, *host_exp;
    void *dsend[2], *drecv[2];
} pair_bufs;

static double timed_call(ck_comm *comm, const bm_opts *o, const ck_algo *al, int a, int i, size_t count,
                         pair_bufs *b, long long *wrong, cc_record *rec, char *msg, size_t cap)
{
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm);
    const size_t es = ck_dtype_size(o->dtype), bytes = count * es;
    const unsigned call = (unsigned)(2 * i + a);
    size_t send_elems, recv_elems;
    cc_coll_sizes(o->coll, count, p, rank, 0, &send_elems, &recv_elems);
    const size_t rbytes = recv_elems * es;
    upload_input(comm, o, b->dsend[a], b->host_in, count, call);
    memset(b->host_out, 0xFF, rbytes);
    if (ck_upload(comm, b->drecv[a], b->host_out, rbytes)) ck_watch_abort("rank %d: upload failed", rank);
    ck_counters_reset(comm);
    ck_bounded_barrier(ck_bound_comm(comm), ck_comm_mpi(comm), "the barrier before a timed call");
    double t0 = ck_now();
    int rc = cc_coll_call(comm, o->coll, al, b->dsend[a], b->drecv[a], count, o->dtype, o->op);
    const double t = ck_now() - t0;
    ck_counters ctr;
    ck_counters_get(comm, &ctr);
    if (rc) ck_watch_abort("rank %d: '%s' failed: %s (%s)", rank, al->name, ck_strerror(rc), ck_comm_errmsg(comm));
    if (ck_download(comm, b->host_out, b->drecv[a], rbytes)) ck_watch_abort("rank %d: download failed", rank);
    cc_coll_expected(o->coll, b->host_exp, count, o->dtype, o->op, rank, p, call);
    *wrong = 0;
    if (memcmp(b->host_out, b->host_exp, rbytes))
        *wrong = (long long)cc_coll_count_wrong(o->coll, b->host_out, count, o->dtype, o->op, rank, p, 0, call);
    char why[1024];
    ck_sbuf m;
    ck_sbuf_init(&m, why, sizeof why);
    if (*wrong) ck_sbuf_add(&m, "%lld of %zu elements wrong", *wrong, recv_elems);
    const ck_config *cfg = ck_comm_config(comm);
    cc_check_traffic(al, &ctr, p, rank, count, ck_dtype_size(o->dtype), cfg, &m);
    memset(rec, 0, sizeof *rec);
    rec->digest = ck_fnv1a64(b->host_out, rbytes);
    rec->status = rc;
    rec->local_fail = m.len > 0;
    rec->ctr = ctr;
    rec->reference = (al->flags & CK_ALGO_REFERENCE) != 0;
    rec->declared_bytes = al->bytes_sent ? al->bytes_sent(p, rank, count, ck_dtype_size(o->dtype), cfg) : UINT64_MAX;
    rec->declared_msgs = al->msgs_sent ? al->msgs_sent(p, rank, count, ck_dtype_size(o->dtype), cfg) : UINT64_MAX;
    cc_declared_messages(al, p, rank, count, ck_dtype_size(o->dtype), cfg, rec);
    if (m.len && !msg[0])
        snprintf(msg, cap, "rank %d: '%s' at %zu B, timed call %d: %s", rank, al->name, bytes, i + 1, why);
    return t;
}

/* Rank 0 writes every rank's records of one size (recs: per rank, n pairs
 * of [A, B]; times likewise). */
static void results_size(FILE *f, int z, size_t count, int n, int p, const cc_record *recs, const double *times)
{
    for (int q = 0; q < p; q++)
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 2; k++) {
                const size_t at = ((size_t)q * (size_t)n + (size_t)i) * 2 + (size_t)k;
                fprintf(f, "timed %d %d %d %d count=%zu time=%.9e", z, i, k, q, count, times[at]);
                cc_results_write_record(f, &recs[at]);
                fputc('\n', f);
            }
}

/* One --paired run: its buffers, result files and status. */
typedef struct {
    ck_comm *comm;
    const bm_opts *o;
    int rank, p, n;              /* n: pairs per size (-n) */
    const ck_algo *ab[2];
    size_t maxbytes;
    pair_bufs b;
    double *t;                   /* t[alg*n + i], then (rank 0) the maxima over ranks */
    double *ratio;
    /* --results: this rank's records and times of one size, and rank 0's of all ranks */
    size_t nrec;
    cc_record *rec, *allrec;
    double *rtime, *alltime;
    int *counts, *displs;
    FILE *csv, *rf;
    int all_ok, status;
} paired_run;

/* Every buffer, agreed on by every rank (a rank that could not allocate
 * stops them all), then the result files: 0 when the run can start. */
static int paired_setup(paired_run *r, ck_comm *comm, const bm_opts *o)
{
    *r = (paired_run){.comm = comm, .o = o, .rank = ck_comm_rank(comm), .p = ck_comm_size(comm), .n = o->iters,
                      .ab = {o->algos[0], o->algos[1]}};
    const size_t es = ck_dtype_size(o->dtype), maxbytes = r->maxbytes = o->maxbytes / es * es;
    pair_bufs *b = &r->b;
    b->host_in = malloc(maxbytes + 1);
    b->host_out = malloc(maxbytes + 1);
    b->host_exp = malloc(maxbytes + 1);
    int ok = b->host_in && b->host_out && b->host_exp;
    for (int a = 0; a < 2; a++) {
        b->dsend[a] = ck_alloc(comm, maxbytes + 1);
        b->drecv[a] = ck_alloc(comm, maxbytes + 1);
        ok &= b->dsend[a] && b->drecv[a];
    }
    r->t = malloc(sizeof(double) * 4 * (size_t)r->n);
    r->ratio = malloc(sizeof(double) * (size_t)r->n);
    r->nrec = 2 * (size_t)r->n;
    r->rec = malloc(r->nrec * sizeof *r->rec);
    r->rtime = malloc(r->nrec * sizeof *r->rtime);
    if (o->results && r->rank == 0) {
        r->allrec = malloc((size_t)r->p * r->nrec * sizeof *r->allrec);
        r->alltime = malloc((size_t)r->p * r->nrec * sizeof *r->alltime);
        r->counts = malloc((size_t)r->p * sizeof *r->counts);
        r->displs = malloc((size_t)r->p * sizeof *r->displs);
        ok &= r->allrec && r->alltime && r->counts && r->displs;
    }
    ok &= r->t && r->ratio && r->rec && r->rtime;
    /* The records of one size travel in one gather of int-sized counts. */
    const int too_many = o->results && (double)r->nrec * sizeof *r->rec * r->p > INT_MAX;
    if (too_many) ok = 0;
    ck_bounded_allreduce(ck_bound_comm(comm), &ok, &r->all_ok, 1, MPI_INT, MPI_MIN, ck_comm_mpi(comm),
                         "the buffer allocation");
    if (r->all_ok && r->rank == 0 && o->csv && !(r->csv = bm_out_open(o->csv))) r->status = 1;
    if (r->all_ok && r->rank == 0 && o->results && !(r->rf = bm_out_open(o->results))) r->status = 1;
    if (!r->all_ok) {
        if (r->rank == 0 && too_many)
            fprintf(stderr, "collbench: --results: %d timed calls per size on %d ranks are too many records for one "
                            "gather (use a smaller -n)\n", r->n, r->p);
        else if (r->rank == 0) fprintf(stderr, "collbench: cannot allocate buffers of %zu bytes\n", maxbytes);
        r->status = 1;
    }
    ck_bounded_bcast(ck_bound_comm(comm), &r->status, 1, MPI_INT, 0, ck_comm_mpi(comm),
                     "the status of the result files");
    return r->status;
}

/* Rank 0: the table's header, and the result files' first lines. */
static void paired_header(const paired_run *r)
{
    const bm_opts *o = r->o;
    const ck_algo *const *ab = r->ab;
    printf("# collbench --paired: %s, A = %s, B = %s; %d ranks, %s %s, out-of-place, %s buffers\n",
           ck_coll_name(o->coll), ab[0]->name, ab[1]->name, r->p, ck_dtype_name(o->dtype),
           o->coll == CK_COLL_ALLGATHER ? "-" : ck_op_name(o->op), o->mem == CK_MEM_CUDA ? "cuda" : "host");
    printf("# %d pairs per size in ABBA order; a call's time is the slowest rank's; speed = t(A) / t(B),\n"
           "# above 1: B is faster. Median over pairs, [first .. third quartile]. Every timed call is\n"
           "# checked (own buffers, fresh inputs, poisoned output): #wrong counts wrong elements over\n"
           "# them all; a speed above %g is flagged review (capped, not scored).\n# %s\n#\n", r->n, REVIEW_SPEED,
           bm_agree_note(o->agree));
    printf("# %12s %12s %12s %8s %18s %7s %7s\n", "size (B)", "t(A) us", "t(B) us", "speed", "[q1 .. q3]",
           "#wrongA", "#wrongB");
    if (r->csv)
        fprintf(r->csv, "algo_a,algo_b,p,bytes,time_a_us,time_b_us,speed,speed_q1,speed_q3,pairs,wrong_a,wrong_b,"
                        "review\n");
    if (r->rf)
        fprintf(r->rf, CC_RESULTS_MAGIC " paired p=%d seed=%llu chunk=%zu transport=%s a=%s b=%s dtype=%s op=%s "
                       "iters=%d coll=%s\n", r->p, (unsigned long long)o->seed, ck_comm_config(r->comm)->chunk_bytes,
                ck_comm_transport_name(r->comm), ab[0]->name, ab[1]->name, ck_dtype_name(o->dtype),
                ck_op_name(o->op), r->n, ck_coll_name(o->coll));
    fflush(stdout);
}

/* Untimed calls of both algorithms first (-w). */
static void warm_up(paired_run *r, size_t count)
{
    const bm_opts *o = r->o;
    for (int a = 0; a < 2; a++) {
        upload_input(r->comm, o, r->b.dsend[a], r->b.host_in, count, 0);
        for (int w = 0; w < o->warmup; w++) {
            int rc = cc_coll_call(r->comm, o->coll, r->ab[a], r->b.dsend[a], r->b.drecv[a], count, o->dtype, o->op);
            if (rc) ck_watch_abort("rank %d: '%s' failed in warm-up: %s (%s)", r->rank, r->ab[a]->name,
                                   ck_strerror(rc), ck_comm_errmsg(r->comm));
        }
    }
}

/* The n pairs of one size in ABBA order, the agreement as --agree says
 * (off unless given: the pair's ratio is the algorithms', undiluted): this
 * rank's times in r->t and r->rtime, its records in r->rec, its wrong
 * elements per algorithm in wrong, its first problem in msg. */
static void time_pairs(paired_run *r, size_t count, long long wrong[2], char *msg, size_t cap)
{
    ck_config cfg = *ck_comm_config(r->comm);
    const int n = r->n;
    msg[0] = 0;
    const int validate = cfg.validate;
    cfg.validate = r->o->agree;   /* the timed calls: the agreement before each, or not */
    ck_comm_set_config(r->comm, &cfg);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            const int a = (i % 2) ^ k;   /* A B, then B A: ABBA */
            const size_t at = 2 * (size_t)i + (size_t)a;
            long long w = 0;
            r->t[a * n + i] = timed_call(r->comm, r->o, r->ab[a], a, i, count, &r->b, &w, &r->rec[at], msg, cap);
            r->rtime[at] = r->t[a * n + i];
            wrong[a] += w;
        }
    cfg.validate = validate;
    ck_comm_set_config(r->comm, &cfg);
}

/* --results: every rank's records and times of size z to rank 0, which
 * writes them. */
static void gather_records(paired_run *r, int z, size_t count)
{
    const ck_bound bound = ck_bound_comm(r->comm);
    MPI_Comm mc = ck_comm_mpi(r->comm);
    const size_t nrec = r->nrec;
    for (int q = 0; r->rank == 0 && q < r->p; q++) {
        r->counts[q] = (int)(nrec * sizeof *r->rec);
        r->displs[q] = q * r->counts[q];
    }
    ck_bounded_gatherv(bound, r->rec, (int)(nrec * sizeof *r->rec), MPI_BYTE, r->allrec, r->counts, r->displs,
                       MPI_BYTE, 0, mc, "the records of the timed calls");
    for (int q = 0; r->rank == 0 && q < r->p; q++) {
        r->counts[q] = (int)(nrec * sizeof *r->rtime);
        r->displs[q] = q * r->counts[q];
    }
    ck_bounded_gatherv(bound, r->rtime, (int)(nrec * sizeof *r->rtime), MPI_BYTE, r->alltime, r->counts, r->displs,
                       MPI_BYTE, 0, mc, "the times of the timed calls");
    if (r->rank == 0) results_size(r->rf, z, count, r->n, r->p, r->allrec, r->alltime);
}

/* Rank 0: the row of one size, from the slowest rank's times (r->t + 2n). */
static void print_row(paired_run *r, size_t bytes, const long long wr[2], int anybad)
{
    const int n = r->n;
    const double *ta = r->t + 2 * n, *tb = r->t + 3 * n;
    for (int i = 0; i < n; i++) r->ratio[i] = tb[i] > 0 ? ta[i] / tb[i] : 0;
    qsort(r->ratio, (size_t)n, sizeof *r->ratio, bm_cmp_double);
    double sa[2];
    for (int a = 0; a < 2; a++) {
        qsort(r->t + (2 + a) * n, (size_t)n, sizeof *r->t, bm_cmp_double);
        sa[a] = bm_quantile(r->t + (2 + a) * n, n, 0.5);
    }
    const double med = bm_quantile(r->ratio, n, 0.5), q1 = bm_quantile(r->ratio, n, 0.25),
                 q3 = bm_quantile(r->ratio, n, 0.75);
    const int review = med > REVIEW_SPEED && !anybad;   /* a wrong row is failed, not reviewed */
    char iq[40];
    snprintf(iq, sizeof iq, "[%.3f .. %.3f]", q1, q3);
    printf("  %12zu %12.2f %12.2f %8.3f %18s %7lld %7lld%s\n", bytes, sa[0] * 1e6, sa[1] * 1e6, med, iq, wr[0],
           wr[1], review ? "  review: B above 2x A, not scored" : "");
    fflush(stdout);
    if (r->csv)
        fprintf(r->csv, "%s,%s,%d,%zu,%.3f,%.3f,%.4f,%.4f,%.4f,%d,%lld,%lld,%d\n", r->ab[0]->name, r->ab[1]->name,
                r->p, bytes, sa[0] * 1e6, sa[1] * 1e6, med, q1, q3, n, wr[0], wr[1], review);
}

/* One size (z-th): warm up, time the pairs, agree on the times and the
 * checks across ranks, gather the records, print the row. */
static void paired_size(paired_run *r, int z, size_t count)
{
    const ck_bound bound = ck_bound_comm(r->comm);
    MPI_Comm mc = ck_comm_mpi(r->comm);
    const int n = r->n;
    long long wrong[2] = {0, 0}, wr[2];
    char msg[1200];
    warm_up(r, count);
    time_pairs(r, count, wrong, msg, sizeof msg);
    ck_bounded_reduce(bound, r->t, r->rank == 0 ? r->t + 2 * n : NULL, 2 * n, MPI_DOUBLE, MPI_MAX, 0, mc,
                      "the reduction of the times");
    ck_bounded_allreduce(bound, wrong, wr, 2, MPI_LONG_LONG, MPI_SUM, mc, "the count of wrong elements");
    int bad = msg[0] != 0, anybad = 0;
    ck_bounded_allreduce(bound, &bad, &anybad, 1, MPI_INT, MPI_MAX, mc, "the agreement on the checks");
    if (bad) {
        fprintf(stderr, "collbench: %s\n", msg);
        fflush(stderr);
    }
    if (anybad) r->status = 1;
    if (r->o->results) gather_records(r, z, count);
    if (r->rank == 0) print_row(r, count * ck_dtype_size(r->o->dtype), wr, anybad);
}

/* The result files closed, every rank told the run's status. */
static void paired_finish(paired_run *r)
{
    if (r->csv && bm_out_close(r->csv, r->o->csv)) r->status = 1;
    if (r->rf && bm_out_close(r->rf, r->o->results)) r->status = 1;
    if (r->rank == 0 && r->status == 1 && r->all_ok)
        printf("# a timed call was wrong or a file could not be written\n");
    ck_bounded_bcast(ck_bound_comm(r->comm), &r->status, 1, MPI_INT, 0, ck_comm_mpi(r->comm), "the final status");
}

static void paired_free(paired_run *r)
{
    free(r->b.host_in); free(r->b.host_out); free(r->b.host_exp); free(r->t); free(r->ratio);
    free(r->rec); free(r->rtime); free(r->allrec); free(r->alltime); free(r->counts); free(r->displs);
    for (int a = 0; a < 2; a++) {
        ck_free(r->comm, r->b.dsend[a]);
        ck_free(r->comm, r->b.drecv[a]);
    }
}

int bm_run_paired(ck_comm *comm, const bm_opts *o)
{
    paired_run r;
    const size_t es = ck_dtype_size(o->dtype);
    if (!paired_setup(&r, comm, o) && r.rank == 0) paired_header(&r);
    int z = 0;
    for (size_t s = o->minbytes; !r.status && s <= o->maxbytes; s = s ? s * (size_t)o->factor : es, z++)
        paired_size(&r, z, s / es);
    paired_finish(&r);
    paired_free(&r);
    return r.status;
}
