/*
 * gantt.c — a Gantt timeline (SVG) of one call of a Chrome trace:
 *   collbench --trace FILE   one all-reduce: one row per rank and lane (the
 *                            calling thread with its waits, reductions and
 *                            copies; one lane per peer and direction for sends
 *                            and receives, extra lanes where a pipeline has
 *                            several chunks in flight), bars labelled with the
 *                            step. A pipelined ring shows its chunks overlapping.
 *   tagtrain --trace FILE    one training step: per rank the backward layers
 *                            (main thread) and the buckets' all-reduces
 *                            (progress thread), each bucket's launch a tick, bars
 *                            labelled with the layer or bucket. Buckets
 *                            overlapping backward show as bars under the layers;
 *                            --zero 1 adds its reduce-scatter, optimizer step
 *                            and all-gather after backward.
 *   tagtrain --tp --trace    the tensor-parallel group's all-reduces inside
 *                            forward and backward, on a lane of their own.
 *   tagtrain --pp --trace    one pipeline step: per stage (a rank) its
 *                            forwards and backwards, bars labelled with the
 *                            micro-batch; the gaps are the bubble.
 *
 * It reads the traces as those tools write them, one event per line; a file
 * in another layout is refused with the line that does not fit, not drawn.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "colldraw.h"
#include "collkit_util.h"

#define CK_GANTT_MAX_ID (1 << 24)   /* the largest rank or lane number a trace may name */

typedef struct gev {
    int    pid, tid, step, call;
    int    instant;   /* a tick (tagtrain: a bucket's launch), dur 0 */
    char   cat[16];
    double ts, dur;
} gev;

typedef struct lane {
    int  pid, tid;
    char name[64];
} lane;

/* A whole number in [lo, hi] (a rank, a lane, a step, a call), so a forged
 * trace can neither overflow an int nor draw a rank that no row has. */
static int whole(double v, double lo, double hi) { return v == (double)(long long)v && v >= lo && v <= hi; }

/* The value after "key": a number, or a string (copied into out). */
static int num_after(const char *line, const char *key, double *v)
{
    const char *p = strstr(line, key);
    if (!p) return -1;
    char *end;
    errno = 0;
    *v = strtod(p + strlen(key), &end);
    return end == p + strlen(key) || errno ? -1 : 0;
}

static int str_after(const char *line, const char *key, char *out, size_t cap)
{
    const char *p = strstr(line, key);
    if (!p) return -1;
    p += strlen(key);
    size_t n = 0;
    while (p[n] && p[n] != '"') n++;
    if (!p[n]) return -1;
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
    return 0;
}

static const char *kind_colour(const char *cat)
{
    if (!strcmp(cat, "layer")) return "#4e79a7";
    if (!strcmp(cat, "fwd")) return "#76b7b2";
    if (!strcmp(cat, "bwd")) return "#4e79a7";
    if (!strcmp(cat, "bucket")) return "#59a14f";
    if (!strcmp(cat, "send")) return "#4e79a7";
    if (!strcmp(cat, "recv")) return "#f28e2b";
    if (!strcmp(cat, "reduce")) return "#59a14f";
    if (!strcmp(cat, "copy")) return "#b07aa1";
    if (!strcmp(cat, "wait")) return "#bab0ac";
    return "#dddddd";
}

/* tagtrain's blocking all-reduce is a bar of its own; collbench's "allreduce" is the call around the rest */
static const char *colour_of(const char *cat, int tagtrain)
{
    if (tagtrain && !strcmp(cat, "allreduce")) return "#e15759";
    if (!strcmp(cat, "rs")) return "#f28e2b";
    if (!strcmp(cat, "optimizer")) return "#edc948";
    if (!strcmp(cat, "ag")) return "#b07aa1";
    if (!strcmp(cat, "tp")) return "#9c755f";
    return kind_colour(cat);
}

static int cmp_lane(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    return x->pid != y->pid ? (x->pid > y->pid) - (x->pid < y->pid) : (x->tid > y->tid) - (x->tid < y->tid);
}

/* A trace as read: the events of one call, every lane's name, and the
 * header tagtrain writes. */
typedef struct trace {
    const char *path;
    gev        *ev;
    lane       *ln;
    int         nev, nln;
    int         collbench, tagtrain, pipeline;   /* pipeline: a --pp step (forwards and backwards) */
    char        title[160], host[128], date[40];
    double      cores;
} trace;

static int out_of_memory(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -1;
}

static void trace_free(trace *T)
{
    free(T->ev);
    free(T->ln);
}

/* A thread's name: the lane's row label. */
static int read_lane(trace *T, const char *line, int lineno, char *err, size_t errlen)
{
    lane l;
    double pid, tid;
    if (num_after(line, "\"pid\":", &pid) || num_after(line, "\"tid\":", &tid) ||
        str_after(line, "\"args\":{\"name\":\"", l.name, sizeof l.name) || !whole(pid, 0, CK_GANTT_MAX_ID) ||
        !whole(tid, 0, CK_GANTT_MAX_ID)) {
        snprintf(err, errlen, "%s line %d: a thread name without its name, or a pid or tid that is no whole number from 0 to 2^24", T->path, lineno);
        return -1;
    }
    l.pid = (int)pid;
    l.tid = (int)tid;
    lane *n = realloc(T->ln, (size_t)(T->nln + 1) * sizeof *n);
    if (!n) return out_of_memory(err, errlen);
    T->ln = n;
    T->ln[T->nln++] = l;
    return 0;
}

/* An event (a bar, or tagtrain's tick), kept when it is of `call`. */
static int read_event(trace *T, const char *line, int lineno, int call, char *err, size_t errlen)
{
    gev e = {.instant = T->tagtrain && strstr(line, "\"ph\":\"i\"") != NULL};
    if (!e.instant && !strstr(line, "\"ph\":\"X\"")) return 0;
    double pid, tid, step, c;
    if (num_after(line, "\"pid\":", &pid) || num_after(line, "\"tid\":", &tid) || num_after(line, "\"ts\":", &e.ts) ||
        (!e.instant && num_after(line, "\"dur\":", &e.dur)) || num_after(line, "\"step\":", &step) ||
        num_after(line, "\"call\":", &c) || str_after(line, "\"cat\":\"", e.cat, sizeof e.cat) ||
        !isfinite(e.ts) || !isfinite(e.dur) || e.dur < 0 || !whole(pid, 0, CK_GANTT_MAX_ID) ||
        !whole(tid, 0, CK_GANTT_MAX_ID) || !whole(step, INT_MIN, INT_MAX) || !whole(c, 0, INT_MAX)) {
        snprintf(err, errlen, "%s line %d: not an event as %s writes it (pid, tid, ts, dur, cat, step, call; "
                 "finite times, dur >= 0, whole numbers)", T->path, lineno, T->tagtrain ? "tagtrain" : "collbench");
        return -1;
    }
    e.pid = (int)pid;
    e.tid = (int)tid;
    e.step = (int)step;
    e.call = (int)c;
    if (e.call != call) return 0;
    if (!strcmp(e.cat, "fwd") || !strcmp(e.cat, "bwd")) T->pipeline = 1;
    if (!strcmp(e.cat, "allreduce") && !T->title[0]) str_after(line, "\"name\":\"", T->title, sizeof T->title);
    gev *n = realloc(T->ev, (size_t)(T->nev + 1) * sizeof *n);
    if (!n) return out_of_memory(err, errlen);
    T->ev = n;
    T->ev[T->nev++] = e;
    return 0;
}

/* One line of the trace: tagtrain's header, a thread's name or an event. */
static int read_line(trace *T, const char *line, int lineno, int call, char *err, size_t errlen)
{
    if (strstr(line, "\"tool\":\"collbench\"")) T->collbench = 1;
    if (lineno == 1 && strstr(line, "\"program\":\"tagtrain\"")) {
        T->tagtrain = 1;
        str_after(line, "\"title\":\"", T->title, sizeof T->title);
        str_after(line, "\"host\":\"", T->host, sizeof T->host);
        str_after(line, "\"date\":\"", T->date, sizeof T->date);
        num_after(line, "\"cores\":", &T->cores);
    }
    if (strstr(line, "\"name\":\"thread_name\"")) return read_lane(T, line, lineno, err, errlen);
    return read_event(T, line, lineno, call, err, errlen);
}

/* The trace's events of `call`: 0, or -1 with the reason in err. */
static int read_trace(trace *T, int call, char *err, size_t errlen)
{
    char why[256];
    FILE *f = ck_input_open(T->path, why, sizeof why);
    if (!f) { snprintf(err, errlen, "cannot read %s: %s", T->path, why); return -1; }
    char line[2048];
    int rc = 0, lineno = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {   /* collbench writes short lines: a long one is no event of its */
            snprintf(err, errlen, "%s line %d: longer than %zu bytes: not a trace as collbench writes it", T->path, lineno,
                     sizeof line - 2);
            rc = -1;
        } else rc = read_line(T, line, lineno, call, err, errlen);
    }
    fclose(f);
    if (!rc && !T->collbench && !T->tagtrain) {
        snprintf(err, errlen, "%s is not a collbench or tagtrain trace (collbench --trace FILE, tagtrain --trace FILE write one)", T->path);
        rc = -1;
    }
    if (!rc && T->nev == 0) {
        snprintf(err, errlen, "%s has no events of %s %d", T->path, T->tagtrain ? "step" : "call", call);
        rc = -1;
    }
    return rc;
}

/* The picture's measures. Sized to be read on a projected slide, where the picture is scaled to
 * the slide's width or height: type of 17-21 px on a canvas of 820-880 px (8 pt or more as
 * placed; the slide test measures it). A collective's sends and receives are drawn one row per
 * rank and direction, not per peer (chunks in flight at once: thin strips of that row), so a
 * long pipeline keeps few rows; collbench's lane names ("calls, waits, reductions") need a
 * wider margin. */
typedef struct geom {
    int         left, rh, topm, w, h, f_bar, keyw;   /* margin, row, top margin, canvas, a bar's type, a key's width */
    int        *used, nused;   /* per lane (in rank then lane order): it carries events of this call */
    double      t0, span, sx;  /* the call's start, its length, pixels per µs */
    double      unit;          /* µs, or ms from a millisecond on (a training step) */
    const char *uname;
} geom;
enum { F_LANE = 18, F_RANK = 19, F_AXIS = 18, F_KEY = 18, F_TITLE = 19, F_SUB = 18, LEGH = 26 };

/* A collbench lane's row: its sends or its receives (whatever the peer), else its own. */
static const char *row_name(const trace *T, const lane *l)
{
    if (T->tagtrain) return l->name;
    return !strncmp(l->name, "send", 4) ? "sends" : !strncmp(l->name, "recv", 4) ? "receives" : l->name;
}

/* Lane k's row among its rank's: lanes sorted by rank, one row per rank and row name. row_of
 * gives the row's number (counting from 0 over all ranks), *sub the lane's strip in it and
 * *nsub the strips (used lanes of that row); -1 for a lane not drawn. */
static int row_of(const trace *T, const int *used, int k, int *sub, int *nsub)
{
    int row = -1;
    *sub = 0;
    *nsub = 0;
    for (int j = 0; j < T->nln; j++) {
        if (!used[j]) continue;
        int first = 1;   /* j opens a row: no used lane before it of its rank has its row name */
        for (int i = 0; i < j && first; i++)
            first = !(used[i] && T->ln[i].pid == T->ln[j].pid && !strcmp(row_name(T, &T->ln[i]), row_name(T, &T->ln[j])));
        if (first && j <= k) row++;
        if (T->ln[j].pid == T->ln[k].pid && !strcmp(row_name(T, &T->ln[j]), row_name(T, &T->ln[k]))) {
            if (j < k) (*sub)++;
            (*nsub)++;
        }
    }
    return used[k] ? row : -1;
}

/* The rows drawn, and the legend's rows: keys per row as many as the canvas holds. */
static int rows_drawn(const trace *T, const int *used)
{
    int n = 0, sub, nsub;
    for (int k = 0; k < T->nln; k++)
        if (used[k] && row_of(T, used, k, &sub, &nsub) + 1 > n) n = row_of(T, used, k, &sub, &nsub) + 1;
    return n;
}
static int legend_rows(const trace *T, int w, int keyw)
{
    int kinds = 0;
    for (int i = 0; i < T->nev; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = T->ev[j].instant == T->ev[i].instant && !strcmp(T->ev[j].cat, T->ev[i].cat);
        kinds += !seen;
    }
    const int per = (w - 12) / keyw;
    return kinds ? (kinds + per - 1) / per : 1;
}

/* The lanes that carry events of this call, in rank then lane order, and
 * the call's time span: 0, or -1 with the reason (an event on a lane no
 * thread name names would be drawn nowhere). */
static int lay_out(trace *T, geom *G, char *err, size_t errlen)
{
    if (T->nln) qsort(T->ln, (size_t)T->nln, sizeof *T->ln, cmp_lane);
    G->used = calloc((size_t)(T->nln ? T->nln : 1), sizeof *G->used);
    double t0 = 1e300, t1 = -1e300;
    int unnamed = -1;
    for (int i = 0; i < T->nev; i++) {
        if (T->ev[i].ts < t0) t0 = T->ev[i].ts;
        if (T->ev[i].ts + T->ev[i].dur > t1) t1 = T->ev[i].ts + T->ev[i].dur;
        int named = 0;
        for (int k = 0; k < T->nln && G->used; k++)
            if (T->ln[k].pid == T->ev[i].pid && T->ln[k].tid == T->ev[i].tid) {
                named = 1;
                if (!G->used[k]) { G->used[k] = 1; G->nused++; }
            }
        if (!named && unnamed < 0) unnamed = i;
    }
    if (G->used && unnamed >= 0) {
        snprintf(err, errlen, "%s: an event of rank %d, lane %d has no thread name (the lane collbench names): "
                 "not a trace as collbench writes it", T->path, T->ev[unnamed].pid, T->ev[unnamed].tid);
        return -1;
    }
    if (!G->used) return out_of_memory(err, errlen);
    const int tt = T->tagtrain;
    G->nused = rows_drawn(T, G->used);
    G->left = tt ? 300 : 345;
    G->rh = tt ? 30 : 24;
    G->topm = tt ? 88 : 64;
    G->w = 820;
    G->f_bar = 18;
    G->keyw = tt ? 228 : 136;
    G->t0 = t0;
    G->span = t1 > t0 ? t1 - t0 : 1;
    G->sx = (G->w - G->left - 20) / G->span;
    G->h = G->topm + G->nused * G->rh + 6 + 7 + F_AXIS + 12 + legend_rows(T, G->w, G->keyw) * LEGH;
    G->unit = G->span >= 1000 ? 1000 : 1;
    G->uname = G->unit > 1 ? "ms" : "\xc2\xb5s";
    return 0;
}

/* The title (collbench's sizes, "48 KB", count in powers of 1024: written
 * KiB, MiB, GiB) and the line under it. */
static void gantt_title(FILE *o, const trace *T, int call, const geom *G)
{
    const char *title = T->title;
    fprintf(o, "<text x=\"12\" y=\"24\" font-size=\"%d\" font-weight=\"bold\">", F_TITLE);
    for (const char *s = title; *s; s++) {
        if (*s == '<') fputs("&lt;", o);
        else if (*s == '&') fputs("&amp;", o);
        else if (*s == '>') fputs("&gt;", o);
        else fputc(*s, o);
        if (!T->tagtrain && s > title && s[-1] == ' ' && strchr("KMG", s[0]) && s[1] == 'B' && (!s[2] || s[2] == ' ') &&
            s - title >= 2 && s[-2] >= '0' && s[-2] <= '9')
            fputc('i', o);
    }
    if (!T->tagtrain) {
        fprintf(o, "</text>\n<text x=\"12\" y=\"50\" font-size=\"%d\" fill=\"#444\">call %d, %.0f \xc2\xb5s, every rank "
                   "(collbench --trace); bar numbers: steps</text>\n", F_SUB, call, G->span);
        return;
    }
    fprintf(o, "</text>\n<text x=\"12\" y=\"50\" font-size=\"%d\" fill=\"#444\">training step %d, %.*f %s%s", F_SUB,
            call, G->unit > 1 ? 1 : 0, G->span / G->unit, G->uname, T->host[0] || T->date[0] ? ", measured" : "");
    if (T->host[0]) {
        fprintf(o, " on ");
        for (const char *c = T->host; *c; c++) if (*c != '<' && *c != '&' && *c != '>') fputc(*c, o);
        if (T->cores > 0) fprintf(o, " (%.0f cores)", T->cores);
    }
    fprintf(o, "%s%s</text>\n<text x=\"12\" y=\"74\" font-size=\"18\" fill=\"#444\">tagtrain --trace; the numbers "
               "in the bars are %s</text>\n", T->date[0] ? ", " : "", T->date,
            T->pipeline ? "micro-batches, the gaps the bubble" : "layers and buckets");
}

/* One event of lane row y: a bar (labelled with its step where it is wide
 * enough), or a bucket's launch, a tick above the lane's bars. */
static void gantt_event(FILE *o, const trace *T, const geom *G, const gev *e, int y)
{
    const double x = G->left + (e->ts - G->t0) * G->sx;
    if (e->instant) {
        fprintf(o, "<path class=\"tick\" d=\"M%.1f,%d l-4,-7 h8 z\" fill=\"#222\"/>", x, y + 8);
        return;
    }
    const int tt = T->tagtrain, rh = G->rh, fb = G->f_bar;
    const double w = e->dur * G->sx < 1 ? 1 : e->dur * G->sx;
    const int call_bar = !tt && !strcmp(e->cat, "allreduce");
    fprintf(o, "<rect class=\"ev\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"#333\" "
               "stroke-width=\"0.4\"/>", x, y + 2, w, rh - 4, colour_of(e->cat, tt), call_bar ? "0.35" : "1");
    const int numbered = !tt || !strcmp(e->cat, "layer") || !strcmp(e->cat, "bucket") || !strcmp(e->cat, "fwd") ||
                         !strcmp(e->cat, "bwd");
    if (!call_bar && w > fb + 4 && numbered)
        fprintf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"%d\" fill=\"%s\" text-anchor=\"middle\">%d</text>",
                x + w / 2, y + rh / 2 + fb / 3 + 1, fb, strcmp(e->cat, "wait") ? "#fff" : "#222", e->step);
}

/* A lane's name as SVG text. */
static void put_text(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", o);
        else if (*s == '&') fputs("&amp;", o);
        else fputc(*s, o);
    }
}

/* A row per rank and kind of lane that carries events (a collbench call's sends, its receives:
 * one row each, whatever the peer), grouped by rank. */
static void gantt_lanes(FILE *o, const trace *T, const geom *G)
{
    const int rh = G->rh;
    int lastpid = -1;
    for (int k = 0; k < T->nln; k++) {
        if (!G->used[k]) continue;
        const lane *l = &T->ln[k];
        int sub, nsub;
        const int y = G->topm + row_of(T, G->used, k, &sub, &nsub) * rh;
        if (l->pid != lastpid) {
            fprintf(o, "<line x1=\"8\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>", G->w - 10, y - 1, y - 1);
            fprintf(o, "<text x=\"10\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\">rank %d</text>", y + rh / 2 + 6, F_RANK, l->pid);
            lastpid = l->pid;
        }
        if (sub == 0) {
            fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" fill=\"#444\">", 90, y + rh / 2 + 6, F_LANE);
            put_text(o, row_name(T, l));
            fprintf(o, "</text>\n");
        }
        /* several lanes in one row (a pipeline's chunks in flight): each a strip, its bars unnumbered,
         * named by the lane's own name where the pointer rests on it */
        geom S = *G;
        S.rh = rh / nsub;
        if (nsub > 1) S.f_bar = INT_MAX / 2;
        fprintf(o, "<g><title>");
        put_text(o, l->name);
        fprintf(o, "</title>");
        for (int i = 0; i < T->nev; i++)
            if (T->ev[i].pid == l->pid && T->ev[i].tid == l->tid) gantt_event(o, T, &S, &T->ev[i], y + sub * S.rh);
        fprintf(o, "</g>\n");
    }
}

/* The time axis at ya: ticks of 1, 2 or 5 times a power of ten, at most 6 of them (large type). */
static void gantt_axis(FILE *o, const geom *G, int ya)
{
    double tick = 0;
    for (double base = 1e-3; !tick; base *= 10)
        for (int i = 0; i < 3 && !tick; i++)
            if (G->span / (base * (double[]){1, 2, 5}[i]) <= 6) tick = base * (double[]){1, 2, 5}[i];
    for (double t = 0; t <= G->span + 1e-9; t += tick) {
        const double x = G->left + t * G->sx;
        fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#666\"/><text x=\"%.1f\" y=\"%d\" font-size=\"%d\" "
                   "text-anchor=\"middle\">%g %s</text>", x, x, ya, ya + 5, x, ya + 7 + F_AXIS, F_AXIS, t / G->unit, G->uname);
    }
}

/* The legend: this trace's kinds (a blocking all-reduce on the main thread is
 * tagtrain's "allreduce", drawn solid), only those this call or step has (a
 * dense step has no buckets, an in-place ring no copies). */
static void gantt_legend(FILE *o, const trace *T, const geom *G, int ya)
{
    static const char *const cb_kinds[] = {"send", "recv", "reduce", "copy", "wait", "allreduce"};
    static const char *const cb_words[] = {"send", "recv", "reduce", "copy", "wait", "the call"};
    static const char *const tt_kinds[] = {"fwd", "bwd", "layer", "bucket", "wait", "allreduce", "rs", "optimizer", "ag", "tp"};
    static const char *const tt_words[] = {"forward (F k)", "backward (B k)", "backward layer", "bucket all-reduce",
                                           "wait for buckets", "all-reduce", "reduce-scatter", "optimizer on block r",
                                           "all-gather", "TP all-reduce"};
    const int tt = T->tagtrain, nk = tt ? 10 : 6, keyw = G->keyw;
    const char *const *kinds = tt ? tt_kinds : cb_kinds, *const *words = tt ? tt_words : cb_words;
    int at = 0, ticks = 0;
    const int per = (G->w - 12) / keyw;   /* keys per row (legend_rows) */
    for (int i = 0; i < T->nev; i++) ticks |= T->ev[i].instant;
    for (int i = 0; i < nk; i++) {
        int seen = 0;
        for (int e = 0; e < T->nev && !seen; e++) seen = !strcmp(T->ev[e].cat, kinds[i]);
        if (!seen) continue;
        fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"#333\" stroke-width=\"0.4\"/>"
                   "<text x=\"%d\" y=\"%d\" font-size=\"%d\">%s</text>", 12 + at % per * keyw, ya + 34 + at / per * LEGH,
                colour_of(kinds[i], tt), !tt && i == 5 ? "0.35" : "1", 30 + at % per * keyw, ya + 47 + at / per * LEGH, F_KEY, words[i]);
        at++;
    }
    if (ticks)
        fprintf(o, "<path d=\"M%d,%d l-3,-5 h6 z\" fill=\"#222\"/><text x=\"%d\" y=\"%d\" font-size=\"%d\">a bucket's launch</text>",
                12 + at % per * keyw + 7, ya + 43 + at / per * LEGH, 30 + at % per * keyw, ya + 47 + at / per * LEGH, F_KEY);
}

static int write_gantt(const trace *T, int call, const geom *G, const char *out_svg, char *err, size_t errlen)
{
    FILE *o = fopen(out_svg, "w");
    if (!o) { snprintf(err, errlen, "cannot write %s: %s", out_svg, strerror(errno)); return -1; }
    fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", G->w, G->h, G->w, G->h);
    gantt_title(o, T, call, G);
    gantt_lanes(o, T, G);
    const int ya = G->topm + G->nused * G->rh + 6;
    gantt_axis(o, G, ya);
    gantt_legend(o, T, G, ya);
    fprintf(o, "\n</svg>\n");
    int bad = ferror(o);
    bad |= fclose(o);
    if (bad) { snprintf(err, errlen, "cannot write %s", out_svg); return -1; }
    return 0;
}

int cd_gantt(const char *path, int call, const char *out_svg, char *err, size_t errlen)
{
    trace T = {.path = path};
    geom G = {0};
    int rc = read_trace(&T, call, err, errlen);
    if (!rc) rc = lay_out(&T, &G, err, errlen);
    if (!rc) rc = write_gantt(&T, call, &G, out_svg, err, errlen);
    trace_free(&T);
    free(G.used);
    return rc;
}
