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
    return kind_colour(cat);
}

static int cmp_lane(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    return x->pid != y->pid ? (x->pid > y->pid) - (x->pid < y->pid) : (x->tid > y->tid) - (x->tid < y->tid);
}

int cd_gantt(const char *trace, int call, const char *out_svg, char *err, size_t errlen)
{
    char why[256];
    FILE *f = ck_input_open(trace, why, sizeof why);
    if (!f) { snprintf(err, errlen, "cannot read %s: %s", trace, why); return -1; }
    gev *ev = NULL;
    lane *ln = NULL;
    int nev = 0, nln = 0, rc = 0, lineno = 0, collbench = 0, tagtrain = 0;
    char line[2048], title[160] = "", host[128] = "", date[40] = "";
    double cores = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {   /* collbench writes short lines: a long one is no event of its */
            snprintf(err, errlen, "%s line %d: longer than %zu bytes: not a trace as collbench writes it", trace, lineno,
                     sizeof line - 2);
            rc = -1;
            break;
        }
        if (strstr(line, "\"tool\":\"collbench\"")) collbench = 1;
        if (lineno == 1 && strstr(line, "\"program\":\"tagtrain\"")) {
            tagtrain = 1;
            str_after(line, "\"title\":\"", title, sizeof title);
            str_after(line, "\"host\":\"", host, sizeof host);
            str_after(line, "\"date\":\"", date, sizeof date);
            num_after(line, "\"cores\":", &cores);
        }
        if (strstr(line, "\"name\":\"thread_name\"")) {
            lane l;
            double pid, tid;
            if (num_after(line, "\"pid\":", &pid) || num_after(line, "\"tid\":", &tid) ||
                str_after(line, "\"args\":{\"name\":\"", l.name, sizeof l.name) || !whole(pid, 0, CK_GANTT_MAX_ID) ||
                !whole(tid, 0, CK_GANTT_MAX_ID)) {
                snprintf(err, errlen, "%s line %d: a thread name without its name, or a pid or tid that is no whole number from 0 to 2^24", trace, lineno);
                rc = -1;
                break;
            }
            l.pid = (int)pid;
            l.tid = (int)tid;
            lane *n = realloc(ln, (size_t)(nln + 1) * sizeof *n);
            if (!n) { snprintf(err, errlen, "out of memory"); rc = -1; break; }
            ln = n;
            ln[nln++] = l;
            continue;
        }
        gev e = {.instant = tagtrain && strstr(line, "\"ph\":\"i\"") != NULL};
        if (!e.instant && !strstr(line, "\"ph\":\"X\"")) continue;
        double pid, tid, step, c;
        if (num_after(line, "\"pid\":", &pid) || num_after(line, "\"tid\":", &tid) || num_after(line, "\"ts\":", &e.ts) ||
            (!e.instant && num_after(line, "\"dur\":", &e.dur)) || num_after(line, "\"step\":", &step) ||
            num_after(line, "\"call\":", &c) || str_after(line, "\"cat\":\"", e.cat, sizeof e.cat) ||
            !isfinite(e.ts) || !isfinite(e.dur) || e.dur < 0 || !whole(pid, 0, CK_GANTT_MAX_ID) ||
            !whole(tid, 0, CK_GANTT_MAX_ID) || !whole(step, INT_MIN, INT_MAX) || !whole(c, 0, INT_MAX)) {
            snprintf(err, errlen, "%s line %d: not an event as %s writes it (pid, tid, ts, dur, cat, step, call; "
                     "finite times, dur >= 0, whole numbers)", trace, lineno, tagtrain ? "tagtrain" : "collbench");
            rc = -1;
            break;
        }
        e.pid = (int)pid;
        e.tid = (int)tid;
        e.step = (int)step;
        e.call = (int)c;
        if (e.call != call) continue;
        if (!strcmp(e.cat, "allreduce") && !title[0]) str_after(line, "\"name\":\"", title, sizeof title);
        gev *n = realloc(ev, (size_t)(nev + 1) * sizeof *n);
        if (!n) { snprintf(err, errlen, "out of memory"); rc = -1; break; }
        ev = n;
        ev[nev++] = e;
    }
    fclose(f);
    if (!rc && !collbench && !tagtrain) {
        snprintf(err, errlen, "%s is not a collbench or tagtrain trace (collbench --trace FILE, tagtrain --trace FILE write one)", trace);
        rc = -1;
    }
    if (!rc && nev == 0) { snprintf(err, errlen, "%s has no events of %s %d", trace, tagtrain ? "step" : "call", call); rc = -1; }
    if (rc) { free(ev); free(ln); return rc; }

    /* lanes that carry events of this call, in rank then lane order */
    if (nln) qsort(ln, (size_t)nln, sizeof *ln, cmp_lane);
    int *used = calloc((size_t)(nln ? nln : 1), sizeof *used), nused = 0;
    double t0 = 1e300, t1 = -1e300;
    int unnamed = -1;   /* an event on a lane no thread name names would be drawn nowhere */
    for (int i = 0; i < nev; i++) {
        if (ev[i].ts < t0) t0 = ev[i].ts;
        if (ev[i].ts + ev[i].dur > t1) t1 = ev[i].ts + ev[i].dur;
        int named = 0;
        for (int k = 0; k < nln && used; k++)
            if (ln[k].pid == ev[i].pid && ln[k].tid == ev[i].tid) {
                named = 1;
                if (!used[k]) { used[k] = 1; nused++; }
            }
        if (!named && unnamed < 0) unnamed = i;
    }
    if (used && unnamed >= 0) {
        snprintf(err, errlen, "%s: an event of rank %d, lane %d has no thread name (the lane collbench names): "
                 "not a trace as collbench writes it", trace, ev[unnamed].pid, ev[unnamed].tid);
        free(ev); free(ln); free(used);
        return -1;
    }
    if (!used) { free(ev); free(ln); snprintf(err, errlen, "out of memory"); return -1; }
    /* Sized to be read on a projected slide, where the picture is scaled to the slide's width
     * or height: type of 12-15 px on a canvas of 820-880 px. A collective has more lanes than a
     * training step (one per peer and direction), so its rows are lower; collbench's lane
     * names ("calls, waits, reductions") need a wider margin. */
    const int LEFT = tagtrain ? 230 : 268, RH = tagtrain ? 32 : 21, TOPM = tagtrain ? 84 : 64, W = tagtrain ? 880 : 820;
    const int F_LANE = 13, F_RANK = 15, F_BAR = tagtrain ? 13 : 12, F_AXIS = 13, F_KEY = 14, KEYW = tagtrain ? 172 : 128;
    const double span = t1 > t0 ? t1 - t0 : 1;
    const double sx = (W - LEFT - 20) / span;
    FILE *o = fopen(out_svg, "w");
    if (!o) { free(ev); free(ln); free(used); snprintf(err, errlen, "cannot write %s: %s", out_svg, strerror(errno)); return -1; }
    const int H = TOPM + nused * RH + (tagtrain ? 84 : 60);
    fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", W, H, W, H);
    fprintf(o, "<text x=\"12\" y=\"24\" font-size=\"18\" font-weight=\"bold\">");
    for (const char *s = title; *s; s++) {
        if (*s == '<') fputs("&lt;", o);
        else if (*s == '&') fputs("&amp;", o);
        else if (*s == '>') fputs("&gt;", o);
        else fputc(*s, o);
        /* collbench's sizes ("48 KB") count in powers of 1024: written KiB, MiB, GiB */
        if (!tagtrain && s > title && s[-1] == ' ' && strchr("KMG", s[0]) && s[1] == 'B' && (!s[2] || s[2] == ' ') &&
            s - title >= 2 && s[-2] >= '0' && s[-2] <= '9')
            fputc('i', o);
    }
    /* µs, or ms from a millisecond on (a training step) */
    const double unit = span >= 1000 ? 1000 : 1;
    const char *uname = unit > 1 ? "ms" : "\xc2\xb5s";
    if (tagtrain) {
        fprintf(o, "</text>\n<text x=\"12\" y=\"46\" font-size=\"14\" fill=\"#444\">training step %d, %.*f %s%s",
                call, unit > 1 ? 1 : 0, span / unit, uname, host[0] || date[0] ? ", measured" : "");
        if (host[0]) {
            fprintf(o, " on ");
            for (const char *c = host; *c; c++) if (*c != '<' && *c != '&' && *c != '>') fputc(*c, o);
            if (cores > 0) fprintf(o, " (%.0f cores)", cores);
        }
        fprintf(o, "%s%s</text>\n<text x=\"12\" y=\"66\" font-size=\"14\" fill=\"#444\">tagtrain --trace; the numbers "
                   "in the bars are layers and buckets</text>\n", date[0] ? ", " : "", date);
    }
    else
        fprintf(o, "</text>\n<text x=\"12\" y=\"46\" font-size=\"14\" fill=\"#444\">every rank's timeline of call %d, %.0f \xc2\xb5s "
                   "(collbench --trace); numbers in bars are steps</text>\n", call, span);
    int row = 0, lastpid = -1;
    for (int k = 0; k < nln; k++) {
        if (!used[k]) continue;
        const int y = TOPM + row * RH;
        if (ln[k].pid != lastpid) {
            fprintf(o, "<line x1=\"8\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>", W - 10, y - 1, y - 1);
            fprintf(o, "<text x=\"10\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\">rank %d</text>", y + RH / 2 + 5, F_RANK, ln[k].pid);
            lastpid = ln[k].pid;
        }
        fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" fill=\"#444\">", 76, y + RH / 2 + 4, F_LANE);
        for (const char *s = ln[k].name; *s; s++) {
            if (*s == '<') fputs("&lt;", o);
            else if (*s == '&') fputs("&amp;", o);
            else fputc(*s, o);
        }
        fprintf(o, "</text>\n");
        for (int i = 0; i < nev; i++) {
            if (ev[i].pid != ln[k].pid || ev[i].tid != ln[k].tid) continue;
            if (ev[i].instant) {   /* a launch: a tick above the lane's bars */
                const double x = LEFT + (ev[i].ts - t0) * sx;
                fprintf(o, "<path class=\"tick\" d=\"M%.1f,%d l-4,-7 h8 z\" fill=\"#222\"/>", x, y + 8);
                continue;
            }
            const double x = LEFT + (ev[i].ts - t0) * sx, w = ev[i].dur * sx < 1 ? 1 : ev[i].dur * sx;
            const int call_bar = !tagtrain && !strcmp(ev[i].cat, "allreduce");
            fprintf(o, "<rect class=\"ev\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"#333\" "
                       "stroke-width=\"0.4\"/>", x, y + 2, w, RH - 4, colour_of(ev[i].cat, tagtrain), call_bar ? "0.35" : "1");
            if (!call_bar && w > F_BAR + 4 && (!tagtrain || !strcmp(ev[i].cat, "layer") || !strcmp(ev[i].cat, "bucket")))
                fprintf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"%d\" fill=\"%s\" text-anchor=\"middle\">%d</text>",
                        x + w / 2, y + RH / 2 + F_BAR / 3 + 1, F_BAR, strcmp(ev[i].cat, "wait") ? "#fff" : "#222", ev[i].step);
        }
        fputc('\n', o);
        row++;
    }
    /* time axis and legend */
    const int ya = TOPM + nused * RH + 6;
    /* ticks of 1, 2 or 5 times a power of ten, at most 10 of them */
    double tick = 0;
    for (double base = 1e-3; !tick; base *= 10)
        for (int i = 0; i < 3 && !tick; i++)
            if (span / (base * (double[]){1, 2, 5}[i]) <= 10) tick = base * (double[]){1, 2, 5}[i];
    for (double t = 0; t <= span + 1e-9; t += tick)
        fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#666\"/><text x=\"%.1f\" y=\"%d\" font-size=\"%d\" "
                   "text-anchor=\"middle\">%g %s</text>", LEFT + t * sx, LEFT + t * sx, ya, ya + 5, LEFT + t * sx, ya + 7 + F_AXIS, F_AXIS,
                t / unit, uname);
    /* the legend: this trace's kinds (a blocking all-reduce on the main thread is tagtrain's "allreduce", drawn solid) */
    static const char *const cb_kinds[] = {"send", "recv", "reduce", "copy", "wait", "allreduce"};
    static const char *const cb_words[] = {"send", "recv", "reduce", "copy", "wait", "the call"};
    static const char *const tt_kinds[] = {"layer", "bucket", "wait", "allreduce", "rs", "optimizer", "ag"};
    static const char *const tt_words[] = {"backward layer", "bucket all-reduce", "wait for buckets", "all-reduce",
                                           "reduce-scatter", "optimizer on block r", "all-gather"};
    const int nk = tagtrain ? 7 : 6;
    int at = 0, ticks = 0;
    for (int i = 0; i < nev; i++) ticks |= ev[i].instant;
    for (int i = 0; i < nk; i++) {
        int seen = 0;   /* the kinds this call or step has (a dense step has no buckets, an in-place ring no copies) */
        for (int e = 0; e < nev && !seen; e++) seen = !strcmp(ev[e].cat, tagtrain ? tt_kinds[i] : cb_kinds[i]);
        if (!seen) continue;
        fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"#333\" stroke-width=\"0.4\"/>"
                   "<text x=\"%d\" y=\"%d\" font-size=\"%d\">%s</text>", 12 + at * KEYW, ya + 30,
                colour_of(tagtrain ? tt_kinds[i] : cb_kinds[i], tagtrain), !tagtrain && i == 5 ? "0.35" : "1", 30 + at * KEYW, ya + 41,
                F_KEY, tagtrain ? tt_words[i] : cb_words[i]);
        at++;
    }
    if (ticks)
        fprintf(o, "<path d=\"M%d,%d l-3,-5 h6 z\" fill=\"#222\"/><text x=\"%d\" y=\"%d\" font-size=\"%d\">a bucket's launch</text>",
                12 + at * KEYW + 7, ya + 38, 30 + at * KEYW, ya + 41, F_KEY);
    fprintf(o, "\n</svg>\n");
    int bad = ferror(o);
    bad |= fclose(o);
    free(ev);
    free(ln);
    free(used);
    if (bad) { snprintf(err, errlen, "cannot write %s", out_svg); return -1; }
    return 0;
}
