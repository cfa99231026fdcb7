/*
 * sweep.c — the all-reduce table: every algorithm, every size, out-of-place
 * and in-place, timed the way nccl-tests times it.
 *
 * Timing rule. Before each iteration all ranks meet at a barrier; each rank
 * times its own ck_allreduce call; the iteration's time is the slowest rank's
 * (an all-reduce is finished when the last rank has the result). The per-
 * iteration maxima are collected with one MPI_Reduce after the timed loop,
 * so the reduction of the timings is never inside a timed region. Reported:
 * median (the "time" column), min and max over the timed iterations, and
 * (CSV and JSON) the first and third quartiles: how far the repeats agree,
 * which benchreport judges before it ranks a point.
 *
 *   algbw = bytes / time                (decimal GB/s)
 *   busbw = algbw · 2(p-1)/p            (what each link carried: comparable
 *                                         across p, and with the link speed)
 *
 * ck_allreduce agrees on (count, dtype, op, algorithm, chunk) across ranks
 * before every call unless its communicator turns that off; every call the
 * trainer makes pays it. So the timed calls agree too by default: the figure
 * is the cost of a call as a program makes it. --agree off times the
 * algorithm alone (the agreement switched off inside the timed loop, on again
 * for the check call); the header, the CSV's agree column and the JSON's
 * "agreement" say which a figure is.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collcheck.h"   /* checker/: verifiable inputs (cc_fill, cc_count_wrong) */
#include "collkit_util.h"   /* ck_json */

typedef struct {
    const char *algo;
    size_t bytes, count;
    int place;            /* BM_PLACE_OUT or BM_PLACE_IN */
    int iters;
    double med, mn, mx;   /* seconds */
    double q1, q3;        /* first and third quartiles of the iterations (seconds): the spread benchreport judges */
    long long wrong;      /* -1: not checked */
    double model;         /* seconds, NAN when no model */
    int failed;
} bm_row;

/* One sweep: its sizes, buffers (device buffers when the communicator's
 * memory is CUDA; host_in holds this rank's input), rows and outputs. */
typedef struct {
    ck_comm *comm;
    const bm_opts *o;
    const bm_params *m;
    int rank, p;
    size_t counts[128];          /* the sizes, in elements */
    int nsizes;
    void *host_in, *host_out, *dsend, *drecv;
    double *times;               /* this rank's times of one measurement, then (rank 0) the maxima */
    bm_row *rows;
    int nrows;
    char (*labels)[64];          /* --trace: each traced call's name */
    int nlabels;
    FILE *csv;
    long long wrong_total;
    int status;
} sweep_run;

void bm_stats(double *v, int n, double *med, double *mn, double *mx)
{
    for (int i = 1; i < n; i++)          /* insertion sort: n is small */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    *mn = v[0];
    *mx = v[n - 1];
    *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A failed call is reported by the rank that saw it. After a watchdog
 * timeout or a transport error, messages may still be in flight and the
 * peer may be stalled: nothing later could be trusted, so the job ends. */
static void report_failure(ck_comm *comm, const ck_algo *a, int rc)
{
    fprintf(stderr, "collbench: rank %d: %s: %s (%s)\n", ck_comm_rank(comm), a->name, ck_strerror(rc),
            ck_comm_errmsg(comm));
    if (rc == CK_ERR_TIMEOUT || rc == CK_ERR_TRANSPORT)
        ck_watch_abort("rank %d: '%s' failed with %s", ck_comm_rank(comm), a->name, ck_strerror(rc));
}

/* One call of the collective swept (--coll). */
static int call_one(ck_comm *comm, const ck_algo *a, const void *s, void *r, size_t count, const bm_opts *o)
{
    switch (o->coll) {
    case CK_COLL_REDUCE_SCATTER: return ck_reduce_scatter(comm, a, s, r, count, o->dtype, o->op);
    case CK_COLL_ALLGATHER: return ck_allgather(comm, a, s, r, count, o->dtype);
    default: return ck_allreduce(comm, a, s, r, count, o->dtype, o->op);
    }
}

/* Run one call on every rank and agree on its status. */
static int call_all(ck_comm *comm, const ck_algo *a, const void *s, void *r, size_t count, const bm_opts *o)
{
    int rc = call_one(comm, a, s, r, count, o), worst;
    if (rc) report_failure(comm, a, rc);
    ck_bounded_allreduce(ck_bound_comm(comm), &rc, &worst, 1, MPI_INT, MPI_MAX, ck_comm_mpi(comm),
                         "the status agreement after a call");
    return worst;
}

/* This rank's input where the call reads it: the whole buffer, or (an
 * all-gather) its own block, at its offset when in place. */
static void upload_input(ck_comm *comm, const bm_opts *o, size_t count, int place, const void *host_in, void *dsend,
                         void *drecv)
{
    const size_t es = ck_dtype_size(o->dtype);
    void *dst = place == BM_PLACE_IN ? drecv : dsend;
    if (o->coll != CK_COLL_ALLGATHER) {
        ck_upload(comm, dst, host_in, count * es);
        return;
    }
    size_t off, len;
    ck_block(count, (size_t)ck_comm_size(comm), (size_t)ck_comm_rank(comm), &off, &len);
    ck_upload(comm, (char *)dst + (place == BM_PLACE_IN ? off * es : 0), (const char *)host_in + off * es, len * es);
}

/* How many timed iterations: -n, or fewer when --time-budget says a size
 * should take about that long (estimated from one call). 0, or a failed
 * call's status. */
static int iterations(sweep_run *r, const ck_algo *a, const void *send, size_t count, int *iters)
{
    const bm_opts *o = r->o;
    *iters = o->iters;
    if (!(o->time_budget > 0)) return 0;
    ck_bounded_barrier(ck_bound_comm(r->comm), ck_comm_mpi(r->comm), "the barrier before the estimate");
    double t0 = ck_now();
    int rc = call_all(r->comm, a, send, r->drecv, count, o);
    if (rc) return rc;
    double est = ck_now() - t0, emax;
    ck_bounded_allreduce(ck_bound_comm(r->comm), &est, &emax, 1, MPI_DOUBLE, MPI_MAX, ck_comm_mpi(r->comm),
                         "the time estimate");
    double fit = o->time_budget / (emax > 1e-9 ? emax : 1e-9);
    if (fit < *iters) *iters = fit < 3 ? 3 : (int)fit;
    if (*iters > o->iters) *iters = o->iters;
    return 0;
}

/* The timed loop, the agreement as --agree says: a barrier before each call,
 * this rank's time of each in r->times; then the status agreed and the
 * slowest rank's times reduced to rank 0, outside anything timed. */
static int timed_loop(sweep_run *r, const ck_algo *a, const void *send, size_t count, int iters, bm_row *row)
{
    const ck_bound bound = ck_bound_comm(r->comm);
    MPI_Comm mc = ck_comm_mpi(r->comm);
    ck_config cfg = *ck_comm_config(r->comm);
    const int validate = cfg.validate;
    cfg.validate = r->o->agree;   /* the timed calls: the agreement before each, or not */
    ck_comm_set_config(r->comm, &cfg);
    int lrc = 0, rc;
    for (int i = 0; i < iters; i++) {
        ck_bounded_barrier(bound, mc, "the barrier before a timed iteration");
        double t0 = ck_now();
        int r1 = call_one(r->comm, a, send, r->drecv, count, r->o);
        r->times[i] = ck_now() - t0;
        if (r1 && !lrc) {
            lrc = r1;
            report_failure(r->comm, a, r1);
        }
    }
    cfg.validate = validate;
    ck_comm_set_config(r->comm, &cfg);
    ck_bounded_allreduce(bound, &lrc, &rc, 1, MPI_INT, MPI_MAX, mc, "the status agreement after the timed loop");
    if (rc) return rc;
    double *tmax = r->rank == 0 ? r->times + iters : NULL;
    ck_bounded_reduce(bound, r->times, tmax, iters, MPI_DOUBLE, MPI_MAX, 0, mc, "the reduction of the times");
    if (r->rank == 0) {
        bm_stats(tmax, iters, &row->med, &row->mn, &row->mx);   /* sorts tmax */
        row->q1 = bm_quantile(tmax, iters, 0.25);
        row->q3 = bm_quantile(tmax, iters, 0.75);
    }
    row->iters = iters;
    return 0;
}

/* Check: fresh checker inputs, one validated call, compare on every rank;
 * the count of wrong elements to rank 0. */
static int check_result(sweep_run *r, const ck_algo *a, const void *send, size_t count, int place, bm_row *row)
{
    const bm_opts *o = r->o;
    upload_input(r->comm, o, count, place, r->host_in, r->dsend, r->drecv);
    int rc = call_all(r->comm, a, send, r->drecv, count, o);
    if (rc) return rc;
    size_t send_elems, recv_elems;
    cc_coll_sizes(o->coll, count, r->p, r->rank, place == BM_PLACE_IN, &send_elems, &recv_elems);
    ck_download(r->comm, r->host_out, r->drecv, recv_elems * ck_dtype_size(o->dtype));
    long long w = (long long)cc_coll_count_wrong(o->coll, r->host_out, count, o->dtype, o->op, r->rank, r->p,
                                                 place == BM_PLACE_IN, 0), wsum = 0;
    ck_bounded_reduce(ck_bound_comm(r->comm), &w, &wsum, 1, MPI_LONG_LONG, MPI_SUM, 0, ck_comm_mpi(r->comm),
                      "the count of wrong elements");
    row->wrong = wsum;
    return 0;
}

/* Trace: one more call with recording on, outside everything timed. */
static int traced_call(sweep_run *r, const ck_algo *a, const void *send, size_t count, int place)
{
    const bm_opts *o = r->o;
    upload_input(r->comm, o, count, place, r->host_in, r->dsend, r->drecv);
    bm_trace_begin(r->comm);
    ck_bounded_barrier(ck_bound_comm(r->comm), ck_comm_mpi(r->comm), "the barrier before the traced call");
    int rc = call_all(r->comm, a, send, r->drecv, count, o);
    bm_trace_end(r->comm, r->nlabels);
    if (rc) return rc;
    char sz[32];
    snprintf(r->labels[r->nlabels], 64, "%s %s %s", a->name,
             bm_size_str((double)(count * ck_dtype_size(o->dtype)), sz, sizeof sz),
             place == BM_PLACE_IN ? "in-place" : "out-of-place");
    r->nlabels++;
    return 0;
}

/* Time one (algorithm, size, place) into row: warm up (validation on: a bad
 * call is reported here, with detail), time, check, trace. 0, or a failed
 * call's status. */
static int measure(sweep_run *r, const ck_algo *a, size_t count, int place, bm_row *row)
{
    const bm_opts *o = r->o;
    const void *send = place == BM_PLACE_IN ? CK_IN_PLACE : r->dsend;
    int rc, iters;
    upload_input(r->comm, o, count, place, r->host_in, r->dsend, r->drecv);
    for (int i = 0; i < o->warmup; i++)
        if ((rc = call_all(r->comm, a, send, r->drecv, count, o))) return rc;
    if ((rc = iterations(r, a, send, count, &iters))) return rc;
    if ((rc = timed_loop(r, a, send, count, iters, row))) return rc;
    row->wrong = -1;
    if (o->check && (rc = check_result(r, a, send, count, place, row))) return rc;
    if (o->trace && (rc = traced_call(r, a, send, count, place))) return rc;
    return 0;
}

/* ---------------------------------------------------------------- output */

/* What a figure includes: the header's line and the JSON's "timing". */
const char *bm_agree_note(int agree)
{
    return agree ? "agreement: on (each timed call first agrees on its arguments across ranks, as ck_allreduce does "
                   "by default and the trainer's calls do; --agree off times the algorithm alone)"
                 : "agreement: off (the algorithm alone, without the cross-rank argument agreement every "
                   "ck_allreduce makes by default; --agree on adds it)";
}

/* Which link the model prices each step with, and a warning where the
 * calibrated link is not the one the ranks cross (also on stderr: a model
 * column off by an order of magnitude must not pass unseen). */
static void print_links(const bm_params *m, int p)
{
    if (m->node_ranks >= 1 && m->node_ranks < p)
        printf("# model: the ranks span nodes (%s); steps between nodes priced with %s\n",
               m->node_ranks > 1 ? "consecutive ranks share a node" : "no two neighbouring ranks share a node",
               m->links & BM_LINK_INTER ? "the link between nodes" : "the only link known");
    else
        printf("# model: all ranks on one node\n");
    const char *why = bm_link_mismatch(m, p);
    if (why) {
        printf("# warning: %s\n", why);
        fprintf(stderr, "collbench: warning: %s\n", why);
    }
}

#define GROUP_HDR "  %9s %9s %9s %7s %7s %6s"
static void print_header(const bm_opts *o, int p, const bm_params *m, ck_comm *comm)
{
    printf("# collbench: %s, %d ranks, transport %s, pipeline chunk %zu B\n", ck_coll_name(o->coll), p,
           ck_comm_transport_name(comm), ck_comm_config(comm)->chunk_bytes);
    printf("# minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d iters: %d%s validation: %d\n",
           o->minbytes, o->maxbytes, o->factor, o->warmup, o->iters,
           o->time_budget > 0 ? " (fewer past --time-budget)" : "", o->check);
    printf("# time = slowest rank per iteration (barrier before each), median over iterations; min/max too\n");
    printf("# %s\n", bm_agree_note(o->agree));
    printf("# algbw = size/time, busbw = algbw*%s, decimal GB/s; model = alpha-beta-gamma prediction\n",
           o->coll == CK_COLL_ALLREDUCE ? "2(p-1)/p" : "(p-1)/p (size: the whole buffer)");
    if (m) {
        bm_params_print(stdout, "# model: ", m);
        print_links(m, p);
    } else {
        printf("# model: none\n");
    }
    printf("#\n");
    printf("# %-14s %12s %12s %5s %5s %9s", "", "", "", "", "", "");
    if (o->place & BM_PLACE_OUT) printf("  %-53s", "                   out-of-place");
    if (o->place & BM_PLACE_IN) printf("  %-53s", "                   in-place");
    printf("\n# %-14s %12s %12s %5s %5s %9s", "algorithm", "size", "count", "type", "redop", "model");
    for (int g = 0; g < 2; g++)
        if (o->place & (g ? BM_PLACE_IN : BM_PLACE_OUT))
            printf(GROUP_HDR, "time", "min", "max", "algbw", "busbw", "#wrong");
    printf("\n# %-14s %12s %12s %5s %5s %9s", "", "(B)", "(elements)", "", "", "(us)");
    for (int g = 0; g < 2; g++)
        if (o->place & (g ? BM_PLACE_IN : BM_PLACE_OUT))
            printf(GROUP_HDR, "(us)", "(us)", "(us)", "(GB/s)", "(GB/s)", "");
    printf("\n");
    fflush(stdout);
}

/* nccl-tests' factors: an all-reduce moves 2(p-1)/p of the buffer over
 * each link, a reduce-scatter or an all-gather (p-1)/p. */
static double busfactor(ck_coll coll, int p)
{
    return p > 1 ? (coll == CK_COLL_ALLREDUCE ? 2.0 : 1.0) * (p - 1) / p : 0.0;
}

static void print_group(const bm_row *r, ck_coll coll, int p)
{
    if (r->failed) { printf("  %9s %9s %9s %7s %7s %6s", "error", "-", "-", "-", "-", "-"); return; }
    double alg = r->med > 0 ? r->bytes / r->med / 1e9 : 0;
    char w[24];
    if (r->wrong < 0) snprintf(w, sizeof w, "N/A"); else snprintf(w, sizeof w, "%lld", r->wrong);
    printf("  %9.2f %9.2f %9.2f %7.3f %7.3f %6s", r->med * 1e6, r->mn * 1e6, r->mx * 1e6, alg, alg * busfactor(coll, p),
           w);
}

/* The CSV is written as the sweep goes: the header at the start, each row
 * as soon as it is measured, flushed, so that a sweep stopped by a time
 * limit (or a hang it cannot recover from) leaves every row it finished. */
static FILE *csv_open(const char *path)
{
    FILE *f = bm_out_open(path);
    if (!f) return NULL;
    fprintf(f, "algo,p,bytes,count,dtype,op,place,iters,time_us,min_us,max_us,algbw_gbs,busbw_gbs,wrong,model_us,"
               "agree,q1_us,q3_us\n");
    fflush(f);
    return f;
}

static void csv_row(FILE *f, const bm_row *r, const bm_opts *o, int p)
{
    double alg = r->med > 0 ? r->bytes / r->med / 1e9 : 0;
    fprintf(f, "%s,%d,%zu,%zu,%s,%s,%s,%d,%.3f,%.3f,%.3f,%.4f,%.4f,%lld,%.3f,%s,%.3f,%.3f\n", r->algo, p, r->bytes,
            r->count, ck_dtype_name(o->dtype), ck_op_name(o->op), r->place == BM_PLACE_IN ? "in" : "out", r->iters,
            r->med * 1e6, r->mn * 1e6, r->mx * 1e6, alg, alg * busfactor(o->coll, p), r->wrong, r->model * 1e6,
            o->agree ? "on" : "off", r->q1 * 1e6, r->q3 * 1e6);
    fflush(f);
}

/* --json: the run's settings, the model, then a line per result. */
static int write_json(const char *path, const bm_row *rows, int n, const bm_opts *o, int p, const bm_params *m)
{
    FILE *f = bm_out_open(path);
    if (!f) return 1;
    ck_json j;
    ck_json_open(&j, f, CK_JSON_SPACED);
    ck_json_break(&j);
    ck_json_int(&j, "ranks", p);
    ck_json_str(&j, "dtype", ck_dtype_name(o->dtype));
    ck_json_str(&j, "op", ck_op_name(o->op));
    ck_json_int(&j, "warmup", o->warmup);
    ck_json_int(&j, "iters", o->iters);
    ck_json_break(&j);
    ck_json_str(&j, "timing", "slowest rank per iteration, median over iterations");
    ck_json_str(&j, "agreement", o->agree ? "on" : "off");
    if (m) {
        ck_json_break(&j);
        ck_json_obj(&j, "model");
        ck_json_num_g(&j, "alpha_us", m->alpha * 1e6, 6);
        ck_json_num_g(&j, "beta_ns_per_byte", m->beta * 1e9, 6);
        ck_json_num_g(&j, "gamma_ns_per_byte", m->gamma * 1e9, 6);
        ck_json_num_g(&j, "memcpy_gbs", m->memcpy_bw / 1e9, 6);
        if (m->links & BM_LINK_INTER) {   /* the link between nodes, and how the ranks sat on them */
            ck_json_num_g(&j, "alpha_inter_us", m->alpha_inter * 1e6, 6);
            ck_json_num_g(&j, "beta_inter_ns_per_byte", m->beta_inter * 1e9, 6);
        }
        ck_json_int(&j, "links", (int)m->links);
        ck_json_int(&j, "node_ranks", m->node_ranks >= 1 && m->node_ranks < p ? m->node_ranks : p);
        ck_json_end(&j);
    }
    ck_json_break(&j);
    ck_json_arr(&j, "results");
    for (int i = 0; i < n; i++) {
        const bm_row *r = &rows[i];
        if (r->failed) continue;
        double alg = r->med > 0 ? r->bytes / r->med / 1e9 : 0;
        ck_json_break(&j);
        ck_json_obj(&j, NULL);
        ck_json_str(&j, "algo", r->algo);
        ck_json_uint(&j, "bytes", r->bytes);
        ck_json_uint(&j, "count", r->count);
        ck_json_str(&j, "place", r->place == BM_PLACE_IN ? "in" : "out");
        ck_json_int(&j, "iters", r->iters);
        ck_json_num_f(&j, "time_us", r->med * 1e6, 3);
        ck_json_num_f(&j, "min_us", r->mn * 1e6, 3);
        ck_json_num_f(&j, "max_us", r->mx * 1e6, 3);
        ck_json_num_f(&j, "q1_us", r->q1 * 1e6, 3);
        ck_json_num_f(&j, "q3_us", r->q3 * 1e6, 3);
        ck_json_num_f(&j, "algbw_gbs", alg, 4);
        ck_json_num_f(&j, "busbw_gbs", alg * busfactor(o->coll, p), 4);
        if (r->wrong < 0) ck_json_null(&j, "wrong");
        else ck_json_int(&j, "wrong", r->wrong);
        ck_json_num_g(&j, "model_us", r->model * 1e6, 6);
        ck_json_end(&j);
    }
    ck_json_break(&j);
    ck_json_end(&j);
    ck_json_break(&j);
    ck_json_end(&j);
    int failed = ck_json_failed(&j);
    return bm_out_close(f, path) || failed;
}

/* ---------------------------------------------------------------- the sweep */

/* Sizes: -b, -b·f, ... up to -e, rounded down to whole elements. */
static void sweep_sizes(sweep_run *r)
{
    const bm_opts *o = r->o;
    const size_t es = ck_dtype_size(o->dtype);
    for (size_t s = o->minbytes; s <= o->maxbytes && r->nsizes < 128; s = s ? s * o->factor : es) {
        size_t c = s / es;
        if (!r->nsizes || r->counts[r->nsizes - 1] != c) r->counts[r->nsizes++] = c;
        if (s > o->maxbytes / o->factor && s) break;
    }
}

static void sweep_free(sweep_run *r)
{
    free(r->host_in); free(r->host_out); free(r->times); free(r->rows); free(r->labels);
    ck_free(r->comm, r->dsend);
    ck_free(r->comm, r->drecv);
}

/* Every buffer, agreed on by every rank (a rank that could not allocate
 * stops them all). 0, or 1 after saying so (buffers freed). */
static int sweep_setup(sweep_run *r, ck_comm *comm, const bm_opts *o, const bm_params *m)
{
    *r = (sweep_run){.comm = comm, .o = o, .m = m, .rank = ck_comm_rank(comm), .p = ck_comm_size(comm)};
    sweep_sizes(r);
    const size_t maxbytes = r->counts[r->nsizes - 1] * ck_dtype_size(o->dtype), alloc = maxbytes ? maxbytes : 1;
    r->host_in = malloc(alloc);
    r->host_out = malloc(alloc);
    r->dsend = ck_alloc(comm, alloc);
    r->drecv = ck_alloc(comm, alloc);
    r->times = malloc(sizeof(double) * 2 * (size_t)o->iters);
    const int nrows_max = o->nalgos * r->nsizes * 2;
    r->rows = calloc((size_t)nrows_max, sizeof *r->rows);
    r->labels = o->trace ? calloc((size_t)nrows_max, 64) : NULL;
    int ok = r->host_in && r->host_out && r->dsend && r->drecv && r->times && r->rows && (!o->trace || r->labels),
        all_ok;
    ck_bounded_allreduce(ck_bound_comm(comm), &ok, &all_ok, 1, MPI_INT, MPI_MIN, ck_comm_mpi(comm),
                         "the buffer allocation");
    if (all_ok) return 0;
    if (r->rank == 0) fprintf(stderr, "collbench: cannot allocate buffers of %zu bytes\n", maxbytes);
    sweep_free(r);
    return 1;
}

/* Rank 0: one line of the table, both placements measured at one size. */
static void print_line(const sweep_run *r, const ck_algo *a, size_t count, bm_row *const grp[2])
{
    const bm_opts *o = r->o;
    const double model = grp[0] ? grp[0]->model : grp[1]->model;
    char shown[16] = "-";
    if (r->m && isfinite(model)) snprintf(shown, sizeof shown, "%.2f", model * 1e6);
    printf("  %-14s %12zu %12zu %5s %5s %9s", a->name, count * ck_dtype_size(o->dtype), count,
           ck_dtype_name(o->dtype), ck_op_name(o->op), shown);
    for (int g = 0; g < 2; g++)
        if (grp[g]) print_group(grp[g], o->coll, r->p);
    printf("\n");
    fflush(stdout);
}

/* Every size of one algorithm, each placement asked for; the algorithm's
 * remaining sizes are skipped after a failure. */
static void sweep_algo(sweep_run *r, const ck_algo *a)
{
    const bm_opts *o = r->o;
    const size_t es = ck_dtype_size(o->dtype);
    int algo_failed = 0, busbw_n = 0;
    double busbw_sum = 0;
    for (int si = 0; si < r->nsizes && !algo_failed; si++) {
        const size_t count = r->counts[si], bytes = count * es;
        cc_coll_input(o->coll, r->host_in, count, o->dtype, o->op, r->rank, r->p, 0);
        bm_row *grp[2] = {NULL, NULL};
        for (int g = 0; g < 2; g++) {
            int place = g ? BM_PLACE_IN : BM_PLACE_OUT;
            if (!(o->place & place)) continue;
            bm_row *row = grp[g] = &r->rows[r->nrows++];
            *row = (bm_row){.algo = a->name, .bytes = bytes, .count = count, .place = place,
                            .model = r->m ? bm_predict(a, r->m, r->p, (double)bytes) : NAN};
            if (measure(r, a, count, place, row)) {
                row->failed = algo_failed = r->status = 1;
                break;
            }
            if (row->wrong > 0) { r->wrong_total += row->wrong; r->status = 1; }
            if (r->csv) csv_row(r->csv, row, o, r->p);
            if (row->med > 0) { busbw_sum += bytes / row->med / 1e9 * busfactor(o->coll, r->p); busbw_n++; }
        }
        if (r->rank == 0) print_line(r, a, count, grp);
    }
    if (r->rank == 0) {
        if (algo_failed) printf("# %s failed (see the error above); its remaining sizes are skipped\n", a->name);
        printf("# Avg bus bandwidth (%s) : %.3f GB/s\n#\n", a->name, busbw_n ? busbw_sum / busbw_n : 0.0);
        fflush(stdout);
    }
}

/* The totals, the result files and the trace; every rank told the status. */
static void sweep_finish(sweep_run *r)
{
    const bm_opts *o = r->o;
    if (r->rank == 0) {
        if (o->check) printf("# Out of bounds values : %lld %s\n", r->wrong_total, r->wrong_total ? "FAILED" : "OK");
        if (r->csv && bm_out_close(r->csv, o->csv)) r->status = 1;
        if (o->json && write_json(o->json, r->rows, r->nrows, o, r->p, r->m)) r->status = 1;
    }
    ck_bounded_bcast(ck_bound_comm(r->comm), &r->status, 1, MPI_INT, 0, ck_comm_mpi(r->comm), "the final status");
    if (o->trace) {
        if (bm_trace_write(r->comm, o->trace, r->labels, r->nlabels)) r->status = 1;
        else if (r->rank == 0)
            printf("# trace: %s (%d calls; open in https://ui.perfetto.dev)\n", o->trace, r->nlabels);
    }
}

int bm_run_sweep(ck_comm *comm, const bm_opts *o, const bm_params *m)
{
    sweep_run r;
    if (sweep_setup(&r, comm, o, m)) return 1;
    if (r.rank == 0) {
        print_header(o, r.p, m, comm);
        if (o->csv && !(r.csv = csv_open(o->csv))) r.status = 1;
    }
    for (int ai = 0; ai < o->nalgos; ai++) sweep_algo(&r, o->algos[ai]);
    sweep_finish(&r);
    sweep_free(&r);
    return r.status;
}
