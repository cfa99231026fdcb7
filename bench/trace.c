/*
 * trace.c — one Chrome trace-event JSON file for all ranks (opens in
 * https://ui.perfetto.dev or chrome://tracing).
 *
 * Layout: one process per rank ("rank N"). Thread 0 holds the calls
 * ("allreduce NAME 4 MB out-of-place") with the waits, reductions and copies
 * that happen inside them — the calling thread, so they nest. Sends and
 * receives are in flight concurrently, so each gets its own lanes, one per
 * direction and peer ("send to 1", "recv from 3"); a pipelined algorithm with
 * several chunks in flight to one peer gets extra lanes, so no two events on
 * one lane overlap. Events are "X" (complete) events, ts and dur in µs,
 * written by the kit's one Chrome-trace writer (ck_chrome_*).
 *
 * Clocks: each rank's ck_now() offset to rank 0 is estimated with a few
 * ping-pongs (ck_clock_offsets), so ranks on different machines line up too.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collkit_util.h"

typedef struct {
    int32_t  kind, peer, step, call;
    uint64_t bytes;
    double   t0, t1;
    char     phase[24];
} bm_ev;

static bm_ev *store;
static size_t nstore, capstore = 200000, dropped;

void bm_trace_set_capacity(size_t n) { capstore = n; }

void bm_trace_begin(ck_comm *comm)
{
    ck_trace_enable(comm, capstore > nstore ? capstore - nstore : 0);
}

void bm_trace_end(ck_comm *comm, int call)
{
    size_t n, drop;
    const ck_event *ev = ck_trace_events(comm, &n, &drop);
    dropped += drop;
    if (n) {
        bm_ev *s = realloc(store, (nstore + n) * sizeof *s);
        if (!s) { dropped += n; n = 0; }
        else store = s;
    }
    for (size_t i = 0; i < n; i++) {
        bm_ev *e = &store[nstore++];
        memset(e, 0, sizeof *e);
        e->kind = ev[i].kind;
        e->peer = ev[i].peer;
        e->step = ev[i].step;
        e->call = call;
        e->bytes = ev[i].bytes;
        e->t0 = ev[i].t0;
        e->t1 = ev[i].t1;
        snprintf(e->phase, sizeof e->phase, "%s", ev[i].phase ? ev[i].phase : "");
    }
    ck_trace_enable(comm, 0);
}

static int by_start(const void *a, const void *b)
{
    const bm_ev *x = a, *y = b;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return (x->t1 > y->t1) ? -1 : (x->t1 < y->t1);   /* the enclosing (longer) event first */
}

/* Send/recv lanes of one rank: (kind, peer, busy-until). */
typedef struct { int kind, peer; long long end_ns; } lane;

/* The lane (tid) of a send or receive from t0_ns to t1_ns: the first of its
 * direction and peer that is free by then, or a new one, named in the
 * trace. -1 past 256 lanes (not a trace anyone could read). */
static int send_recv_lane(ck_chrome *c, int r, const bm_ev *e, long long t0, long long t1, lane *lanes, int *nl)
{
    int l = 0;
    while (l < *nl && !(lanes[l].kind == e->kind && lanes[l].peer == e->peer && lanes[l].end_ns <= t0)) l++;
    if (l == *nl) {
        if (*nl == 256) return -1;
        int same = 0;
        for (int k = 0; k < *nl; k++) same += lanes[k].kind == e->kind && lanes[k].peer == e->peer;
        lanes[l] = (lane){e->kind, e->peer, 0};
        char name[48];
        snprintf(name, sizeof name, "%s %d", e->kind == CK_EV_SEND ? "send to" : "recv from", e->peer);
        if (same) snprintf(name + strlen(name), sizeof name - strlen(name), " (%d)", same + 1);
        ck_chrome_meta_str(c, "thread_name", r, l + 1, "name", name);
        ck_chrome_meta_int(c, "thread_sort_index", r, l + 1, "sort_index",
                           (e->kind == CK_EV_SEND ? 1000 : 2000) + e->peer * 10 + same);
        (*nl)++;
    }
    lanes[l].end_ns = t1;
    return l + 1;
}

/* One rank's events, on rank 0's clock less base: the rank's process, its
 * calls on thread 0 (the calling thread, so waits and reductions nest in
 * them), its sends and receives on lanes of their own. */
static void write_rank(ck_chrome *c, int r, bm_ev *ev, size_t n, double base, char (*labels)[64], int nlabels)
{
    lane lanes[256];
    int nl = 0;
    qsort(ev, n, sizeof *ev, by_start);
    char rank_name[32];
    snprintf(rank_name, sizeof rank_name, "rank %d", r);
    ck_chrome_meta_str(c, "process_name", r, 0, "name", rank_name);
    ck_chrome_meta_int(c, "process_sort_index", r, 0, "sort_index", r);
    ck_chrome_meta_str(c, "thread_name", r, 0, "name", "calls, waits, reductions");
    for (size_t i = 0; i < n; i++) {
        const bm_ev *e = &ev[i];
        /* Integer nanoseconds, so rounding cannot break nesting. */
        long long t0 = llround((e->t0 - base) * 1e9), t1 = llround((e->t1 - base) * 1e9);
        if (t1 < t0) t1 = t0;
        int tid = 0;
        if (e->kind == CK_EV_SEND || e->kind == CK_EV_RECV)
            if ((tid = send_recv_lane(c, r, e, t0, t1, lanes, &nl)) < 0) continue;
        char name[96];
        if (e->kind == CK_EV_CALL)
            snprintf(name, sizeof name, "allreduce %s", e->call < nlabels ? labels[e->call] : "");
        else if (e->peer >= 0)
            snprintf(name, sizeof name, "%s %s %d", ck_event_kind_name(e->kind),
                     e->kind == CK_EV_RECV ? "from" : e->kind == CK_EV_SEND ? "to" : "on", e->peer);
        else
            snprintf(name, sizeof name, "%s", ck_event_kind_name(e->kind));
        ck_json *a = ck_chrome_complete(c, name, ck_event_kind_name(e->kind), r, tid, t0, t1 - t0);
        ck_json_int(a, "peer", e->peer);
        ck_json_uint(a, "bytes", (unsigned long long)e->bytes);
        ck_json_int(a, "step", e->step);
        ck_json_str(a, "phase", e->phase);
        ck_json_int(a, "call", e->call);
        ck_chrome_event_end(c);
    }
}

/* Rank 0: every rank's events (all: per rank r, counts[r] bytes at
 * displs[r]) aligned to rank 0's clock (off[r]: rank r's offset), into one
 * Chrome trace file. 0, or 1 after saying why the file is not written. */
static int write_file(const char *path, int p, bm_ev *all, const int *counts, const int *displs, const double *off,
                      unsigned long long drop_total, char (*labels)[64], int nlabels)
{
    double base = INFINITY;
    int n = 0;
    for (int r = 0; r < p; r++) {
        bm_ev *e = (bm_ev *)((char *)all + displs[r]);
        for (int i = 0; i < counts[r] / (int)sizeof(bm_ev); i++, n++) {
            e[i].t0 -= off[r];
            e[i].t1 -= off[r];
            if (e[i].t0 < base) base = e[i].t0;
        }
    }
    if (!n) base = 0;
    FILE *f = bm_out_open(path);
    if (!f) return 1;
    ck_chrome c;
    ck_chrome_open(&c, f, "ns");
    ck_json_str(&c.j, "tool", "collbench");
    ck_json_int(&c.j, "ranks", p);
    ck_json_uint(&c.j, "dropped_events", drop_total);
    ck_chrome_events(&c);
    for (int r = 0; r < p; r++)
        write_rank(&c, r, (bm_ev *)((char *)all + displs[r]), (size_t)counts[r] / sizeof(bm_ev), base, labels,
                   nlabels);
    int status = ck_chrome_close(&c) ? 1 : 0;
    if (bm_out_close(f, path)) status = 1;
    else if (status) fprintf(stderr, "collbench: error writing %s\n", path);
    if (drop_total)
        fprintf(stderr, "collbench: trace capacity reached: %llu events dropped (raise --trace-capacity)\n",
                drop_total);
    return status;
}

int bm_trace_write(ck_comm *comm, const char *path, char (*labels)[64], int nlabels)
{
    MPI_Comm mc = ck_comm_mpi(comm);
    const ck_bound bound = ck_bound_comm(comm);
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm);
    double *off = calloc((size_t)p, sizeof *off);
    int *counts = calloc((size_t)p, sizeof *counts), *displs = calloc((size_t)p, sizeof *displs);
    unsigned long long drop = dropped, drop_total = 0;
    int mybytes = (int)(nstore * sizeof(bm_ev)), status = 0;

    ck_bounded_barrier(bound, mc, "the barrier before the trace is gathered");
    ck_clock_offsets(mc, off);
    int one = (int)sizeof mybytes, *ones = calloc((size_t)p, sizeof *ones), *at = calloc((size_t)p, sizeof *at);
    for (int r = 0; ones && at && r < p; r++) { ones[r] = one; at[r] = r * one; }
    if (!ones || !at) ck_watch_abort("rank %d: out of memory gathering the trace", rank);
    ck_bounded_gatherv(bound, &mybytes, one, MPI_BYTE, counts, ones, at, MPI_BYTE, 0, mc,
                       "the gathering of trace sizes");
    free(ones);
    free(at);
    ck_bounded_reduce(bound, &drop, &drop_total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, mc,
                      "the count of dropped trace events");
    bm_ev *all = NULL;
    long long total = 0;
    if (rank == 0) {
        for (int r = 0; r < p; r++) { displs[r] = (int)total; total += counts[r]; }
        if (total > 0x7fffffff) { fprintf(stderr, "collbench: trace too large; lower --trace-capacity\n"); total = -1; }
        else all = malloc(total ? (size_t)total : 1);
    }
    int ok = rank != 0 || (total >= 0 && all);
    ck_bounded_bcast(bound, &ok, 1, MPI_INT, 0, mc, "the trace buffer check");
    if (!ok) { free(off); free(counts); free(displs); return 1; }
    ck_bounded_gatherv(bound, store, mybytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, mc,
                       "the gathering of trace events");
    if (rank == 0) status = write_file(path, p, all, counts, displs, off, drop_total, labels, nlabels);
    ck_bounded_bcast(bound, &status, 1, MPI_INT, 0, mc, "the trace status");
    free(all); free(off); free(counts); free(displs);
    free(store);
    store = NULL;
    nstore = 0;
    return status;
}
