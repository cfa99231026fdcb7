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
 * one lane overlap. Events are "X" (complete) events, ts and dur in µs.
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

static void write_rank(FILE *f, int r, bm_ev *ev, size_t n, double base, char (*labels)[64], int nlabels, int *first)
{
    lane lanes[256];
    int nl = 0;
    qsort(ev, n, sizeof *ev, by_start);
    fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"rank %d\"}}",
            *first ? "" : ",", r, r);
    fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}", r, r);
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"calls, waits, reductions\"}}", r);
    *first = 0;
    for (size_t i = 0; i < n; i++) {
        const bm_ev *e = &ev[i];
        /* Integer nanoseconds, so rounding cannot break nesting. */
        long long t0 = llround((e->t0 - base) * 1e9), t1 = llround((e->t1 - base) * 1e9);
        if (t1 < t0) t1 = t0;
        int tid = 0;
        if (e->kind == CK_EV_SEND || e->kind == CK_EV_RECV) {
            int l = 0;
            while (l < nl && !(lanes[l].kind == e->kind && lanes[l].peer == e->peer && lanes[l].end_ns <= t0)) l++;
            if (l == nl) {
                if (nl == 256) continue;   /* more than 256 lanes: not a trace anyone could read */
                int same = 0;
                for (int k = 0; k < nl; k++) same += lanes[k].kind == e->kind && lanes[k].peer == e->peer;
                lanes[nl] = (lane){e->kind, e->peer, 0};
                fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s %d",
                        r, nl + 1, e->kind == CK_EV_SEND ? "send to" : "recv from", e->peer);
                if (same) fprintf(f, " (%d)", same + 1);
                fprintf(f, "\"}}");
                fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                        r, nl + 1, (e->kind == CK_EV_SEND ? 1000 : 2000) + e->peer * 10 + same);
                nl++;
            }
            lanes[l].end_ns = t1;
            tid = l + 1;
        }
        char name[96];
        if (e->kind == CK_EV_CALL)
            snprintf(name, sizeof name, "allreduce %s", e->call < nlabels ? labels[e->call] : "");
        else if (e->peer >= 0)
            snprintf(name, sizeof name, "%s %s %d", ck_event_kind_name(e->kind),
                     e->kind == CK_EV_RECV ? "from" : e->kind == CK_EV_SEND ? "to" : "on", e->peer);
        else
            snprintf(name, sizeof name, "%s", ck_event_kind_name(e->kind));
        fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                   "\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,\"args\":{\"peer\":%d,\"bytes\":%llu,\"step\":%d,\"phase\":\"%s\",\"call\":%d}}",
                name, ck_event_kind_name(e->kind), r, tid, t0 / 1000, t0 % 1000, (t1 - t0) / 1000, (t1 - t0) % 1000,
                e->peer, (unsigned long long)e->bytes, e->step, e->phase, e->call);
    }
}

int bm_trace_write(ck_comm *comm, const char *path, char (*labels)[64], int nlabels)
{
    MPI_Comm mc = ck_comm_mpi(comm);
    const int rank = ck_comm_rank(comm), p = ck_comm_size(comm);
    double *off = calloc((size_t)p, sizeof *off);
    int *counts = calloc((size_t)p, sizeof *counts), *displs = calloc((size_t)p, sizeof *displs);
    unsigned long long drop = dropped, drop_total = 0;
    int mybytes = (int)(nstore * sizeof(bm_ev)), status = 0;

    bm_barrier(comm, "the barrier before the trace is gathered");
    ck_clock_offsets(mc, off);
    int one = (int)sizeof mybytes, *ones = calloc((size_t)p, sizeof *ones), *at = calloc((size_t)p, sizeof *at);
    for (int r = 0; ones && at && r < p; r++) { ones[r] = one; at[r] = r * one; }
    if (!ones || !at) bm_abort(comm, "rank %d: out of memory gathering the trace", rank);
    bm_gatherv(comm, &mybytes, one, counts, ones, at, "the gathering of trace sizes");
    free(ones);
    free(at);
    bm_reduce(comm, &drop, &drop_total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, "the count of dropped trace events");
    bm_ev *all = NULL;
    long long total = 0;
    if (rank == 0) {
        for (int r = 0; r < p; r++) { displs[r] = (int)total; total += counts[r]; }
        if (total > 0x7fffffff) { fprintf(stderr, "collbench: trace too large; lower --trace-capacity\n"); total = -1; }
        else all = malloc(total ? (size_t)total : 1);
    }
    int ok = rank != 0 || (total >= 0 && all);
    bm_bcast(comm, &ok, 1, MPI_INT, "the trace buffer check");
    if (!ok) { free(off); free(counts); free(displs); return 1; }
    bm_gatherv(comm, store, mybytes, all, counts, displs, "the gathering of trace events");

    if (rank == 0) {
        size_t n = (size_t)total / sizeof(bm_ev);
        double base = INFINITY;
        /* Align every rank's events to rank 0's clock. */
        for (int r = 0; r < p; r++) {
            bm_ev *e = (bm_ev *)((char *)all + displs[r]);
            for (int i = 0; i < counts[r] / (int)sizeof(bm_ev); i++) {
                e[i].t0 -= off[r];
                e[i].t1 -= off[r];
                if (e[i].t0 < base) base = e[i].t0;
            }
        }
        if (!n) base = 0;
        FILE *f = bm_out_open(path);
        if (!f) {
            status = 1;
        } else {
            int first = 1;
            fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"collbench\",\"ranks\":%d,\"dropped_events\":%llu},\n"
                       "\"traceEvents\":[", p, drop_total);
            for (int r = 0; r < p; r++)
                write_rank(f, r, (bm_ev *)((char *)all + displs[r]), (size_t)counts[r] / sizeof(bm_ev), base,
                           labels, nlabels, &first);
            fprintf(f, "\n]}\n");
            if (bm_out_close(f, path)) status = 1;
            if (drop_total)
                fprintf(stderr, "collbench: trace capacity reached: %llu events dropped (raise --trace-capacity)\n", drop_total);
        }
    }
    bm_bcast(comm, &status, 1, MPI_INT, "the trace status");
    free(all); free(off); free(counts); free(displs);
    free(store);
    store = NULL;
    nstore = 0;
    return status;
}
