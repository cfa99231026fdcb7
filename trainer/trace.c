/*
 * trace.c — tagtrain --trace: the events dp.c records, gathered on rank 0
 * and written as a Chrome trace (one event per line, as collbench writes its
 * own, so colldraw --gantt reads both). See trace.h.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collkit.h"
#include "collkit_util.h"
#include "trace.h"

void tr_start(tr_trace *t)
{
    memset(t, 0, sizeof *t);
    t->zero = ck_now();
}

void tr_add(tr_trace *t, int lane, const char *cat, int index, double t0, double t1, size_t bytes)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        if (cap > TR_MAX_EVENTS) cap = TR_MAX_EVENTS;
        tr_event *e = cap > t->cap ? realloc(t->ev, cap * sizeof *e) : NULL;
        if (!e) { t->dropped++; return; }
        t->ev = e;
        t->cap = cap;
    }
    tr_event *e = &t->ev[t->n++];
    *e = (tr_event){.lane = lane, .index = index, .step = t->step, .t0 = t0, .t1 = t1, .bytes = bytes};
    snprintf(e->cat, sizeof e->cat, "%s", cat);
}

void tr_free(tr_trace *t)
{
    free(t->ev);
    memset(t, 0, sizeof *t);
}

/* Seconds to the file's integer nanoseconds. */
static long long ns(double s) { return llround(s * 1e9); }

/* Rank r's events, its clock moved onto rank 0's (off) and counted from zero (rank 0's start). */
static void write_rank(ck_chrome *c, int r, const tr_event *ev, size_t n, double off, double zero)
{
    char rank[32];
    snprintf(rank, sizeof rank, "rank %d", r);
    ck_chrome_meta_str(c, "process_name", r, -1, "name", rank);
    ck_chrome_meta_str(c, "thread_name", r, TR_MAIN, "name", "main thread");
    ck_chrome_meta_str(c, "thread_name", r, TR_PROGRESS, "name", "progress thread");
    ck_chrome_meta_str(c, "thread_name", r, TR_TP, "name", "tensor-parallel group");
    for (size_t i = 0; i < n; i++) {
        const tr_event *e = &ev[i];
        const int instant = !strcmp(e->cat, "launch");
        char name[48];
        if (instant) snprintf(name, sizeof name, "bucket %d launched", e->index);
        else if (!strcmp(e->cat, "wait")) snprintf(name, sizeof name, "wait for the buckets");
        else if (!strcmp(e->cat, "allreduce")) snprintf(name, sizeof name, "gradient all-reduce");
        else if (!strcmp(e->cat, "rs")) snprintf(name, sizeof name, "gradient reduce-scatter");
        else if (!strcmp(e->cat, "optimizer")) snprintf(name, sizeof name, "optimizer step on block r");
        else if (!strcmp(e->cat, "ag")) snprintf(name, sizeof name, "parameter all-gather");
        else if (!strcmp(e->cat, "tp")) snprintf(name, sizeof name, "tensor-parallel all-reduce");
        else snprintf(name, sizeof name, "%s %d", e->cat, e->index);
        const long long ts = ns(e->t0 - off - zero);
        ck_json *a = instant ? ck_chrome_instant(c, name, e->cat, r, e->lane, ts)
                             : ck_chrome_complete(c, name, e->cat, r, e->lane, ts, ns(e->t1 - e->t0));
        ck_json_uint(a, "bytes", e->bytes);
        ck_json_int(a, "step", e->index);
        ck_json_int(a, "call", e->step);
        ck_chrome_event_end(c);
    }
}

/* The file's first line: what tagtrain ran, where and when it was measured,
 * for whoever reads the picture. The title holds an algorithm's name, which
 * a student chose: quotes become '?', as colldraw reads the line as it is. */
static void write_header(ck_chrome *c, FILE *f, const char *title, int p, unsigned long long dropped)
{
    char host[256] = "", when[32] = "", text[256];
    gethostname(host, sizeof host - 1);
    const time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    snprintf(text, sizeof text, "%s", title);
    for (char *q = text; *q; q++)
        if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20) *q = '?';
    ck_chrome_open(c, f, "ms");
    ck_json_str(&c->j, "program", "tagtrain");
    ck_json_str(&c->j, "title", text);
    ck_json_str(&c->j, "host", host);
    ck_json_int(&c->j, "cores", sysconf(_SC_NPROCESSORS_ONLN));
    ck_json_str(&c->j, "date", when);
    ck_json_int(&c->j, "ranks", p);
    ck_json_uint(&c->j, "dropped_events", dropped);
    ck_chrome_events(c);
}

int tr_write(tr_trace *t, MPI_Comm comm, FILE *f, const char *title, char *err, size_t errlen)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    double *off = rank == 0 ? malloc((size_t)p * sizeof *off) : NULL;
    if (rank == 0 && !off) ck_watch_abort("rank 0: out of memory gathering the trace");
    ck_clock_offsets(comm, off);
    /* sizes first, then the events as bytes (rank 0 checks the total fits an int) */
    long long mine[2] = {(long long)(t->n * sizeof *t->ev), (long long)t->dropped}, *all = NULL;
    if (rank == 0 && !(all = malloc((size_t)p * sizeof mine))) ck_watch_abort("rank 0: out of memory gathering the trace");
    ck_watch_gather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, 0, comm, "the trace sizes");
    int *counts = NULL, *displs = NULL, ok = 1;
    char *buf = NULL;
    unsigned long long dropped = 0;
    if (rank == 0) {
        counts = calloc((size_t)p, sizeof *counts);
        displs = calloc((size_t)p, sizeof *displs);
        long long total = 0;
        for (int r = 0; r < p && counts && displs; r++) {
            if (total > INT_MAX - all[2 * r]) { ok = 0; break; }
            counts[r] = (int)all[2 * r];
            displs[r] = (int)total;
            total += all[2 * r];
            dropped += (unsigned long long)all[2 * r + 1];
        }
        ok = ok && counts && displs && (buf = malloc((size_t)total + 1));
        if (!ok) snprintf(err, errlen, "the trace is too large to gather (%d ranks)", p);
    }
    ck_watch_bcast(&ok, 1, MPI_INT, 0, comm, "the trace buffer check");
    if (ok)
        ck_watch_gatherv(t->ev, (int)mine[0], MPI_BYTE, buf, counts, displs, MPI_BYTE, 0, comm, "the trace events");
    if (rank == 0 && ok) {
        ck_chrome c;
        write_header(&c, f, title, p, dropped);
        for (int r = 0; r < p; r++)
            write_rank(&c, r, (const tr_event *)(buf + displs[r]), (size_t)counts[r] / sizeof(tr_event), off[r], t->zero);
        if (ck_chrome_close(&c)) {
            snprintf(err, errlen, "write failed");
            ok = 0;
        }
        if (dropped) fprintf(stderr, "tagtrain: --trace: %llu events past %d per rank were not recorded\n", dropped, TR_MAX_EVENTS);
    }
    free(all);
    free(off);
    free(counts);
    free(displs);
    free(buf);
    return ok ? 0 : -1;
}
