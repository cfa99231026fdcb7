/*
 * trace.c — tagtrain --trace: the events dp.c records, gathered on rank 0
 * and written as a Chrome trace (one event per line, as collbench writes its
 * own, so colldraw --gantt reads both). See trace.h.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collkit.h"
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

/* A JSON string's contents: the title holds an algorithm's name, which a student chose. */
static void json_text(FILE *f, const char *s)
{
    for (; *s; s++) fputc(*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 ? '?' : *s, f);
}

/* Rank r's events, its clock moved onto rank 0's (off) and counted from zero (rank 0's start). */
static void write_rank(FILE *f, int r, const tr_event *ev, size_t n, double off, double zero)
{
    fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}", r ? ",\n" : "", r, r);
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"main thread\"}}", r, TR_MAIN);
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"progress thread\"}}", r,
            TR_PROGRESS);
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
        else snprintf(name, sizeof name, "%s %d", e->cat, e->index);
        fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f", name, e->cat,
                instant ? "i\",\"s\":\"t" : "X", r, e->lane, (e->t0 - off - zero) * 1e6);
        if (!instant) fprintf(f, ",\"dur\":%.3f", (e->t1 - e->t0) * 1e6);
        fprintf(f, ",\"args\":{\"bytes\":%zu,\"step\":%d,\"call\":%d}}", e->bytes, e->index, e->step);
    }
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
        /* where and when it was measured, for whoever reads the picture */
        char host[256] = "", when[32] = "";
        gethostname(host, sizeof host - 1);
        const time_t now = time(NULL);
        struct tm tm;
        if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
        fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"program\":\"tagtrain\",\"title\":\"");
        json_text(f, title);
        fprintf(f, "\",\"host\":\"");
        json_text(f, host);
        fprintf(f, "\",\"cores\":%ld,\"date\":\"%s\",\"ranks\":%d,\"dropped_events\":%llu},\n\"traceEvents\":[\n",
                sysconf(_SC_NPROCESSORS_ONLN), when, p, dropped);
        for (int r = 0; r < p; r++)
            write_rank(f, r, (const tr_event *)(buf + displs[r]), (size_t)counts[r] / sizeof(tr_event), off[r], t->zero);
        fprintf(f, "\n]}\n");
        if (dropped) fprintf(stderr, "tagtrain: --trace: %llu events past %d per rank were not recorded\n", dropped, TR_MAX_EVENTS);
    }
    free(all);
    free(off);
    free(counts);
    free(displs);
    free(buf);
    return ok ? 0 : -1;
}
