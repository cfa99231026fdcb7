/*
 * benchreport — turns one `make bench` folder into summary.md.
 *
 *   benchreport --dir DIR [--info TEXT]
 *
 * Reads DIR/sweep.csv (collbench --csv, all rank counts; rows of the shm
 * transport's sweep carry their algorithm's name with "@shm" appended),
 * DIR/params.txt (collbench --pingpong --save-model), DIR/params_shm.txt (the
 * same through the shm transport, when it ran) and, when present,
 * DIR/trainer.csv.
 * Writes DIR/scaling.csv (speedup and efficiency vs ranks, for the plot) and
 * DIR/summary.md: parameters, each algorithm's speed relative to the
 * reference (the first algorithm in the sweep whose registry entry is flagged
 * CK_ALGO_REFERENCE, e.g. MPI_Allreduce) at fixed sizes, the two transports
 * side by side, the performance targets marked met or missed with the
 * figures behind them, the model's
 * crossover sizes up to 4096 ranks (each algorithm's own cost function), and
 * links to the plots. No algorithm is named here: everything comes from the
 * registry and the CSV.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "model.h"

#define MAXROWS 20000
#define MAXALG 32
#define MAXP 16

typedef struct { char algo[32], place[8]; int p; double bytes, time_us, busbw, model_us; } row;

static row rows[MAXROWS];
static int nrows;
static char algos[MAXALG][32];
static int nalg, ps[MAXP], np;
static const char *REF = "";   /* the reference every ratio is taken against ("" when the sweep has none) */

static int is_reference(const char *name)
{
    const ck_algo *a = ck_algo_find(name);
    return a && (a->flags & CK_ALGO_REFERENCE);
}

/* A row of the shm transport's sweep ("ring@shm"). */
static int is_shm(const char *name) { const char *at = strrchr(name, '@'); return at && !strcmp(at, "@shm"); }

static int split(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *s = line; n < max;) {
        f[n++] = s;
        char *c = strchr(s, ',');
        if (!c) break;
        *c = 0;
        s = c + 1;
    }
    return n;
}

static int col(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++) if (!strcmp(hdr[i], name)) return i;
    return -1;
}

static int load_sweep(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "benchreport: cannot open %s\n", path); return -1; }
    char hline[1024], line[1024], *h[32], *v[32];
    if (!fgets(hline, sizeof hline, f)) { fclose(f); return -1; }
    int nh = split(hline, h, 32);
    int ca = col(h, nh, "algo"), cp = col(h, nh, "p"), cb = col(h, nh, "bytes"), cpl = col(h, nh, "place"),
        ct = col(h, nh, "time_us"), cbw = col(h, nh, "busbw_gbs"), cm = col(h, nh, "model_us");
    if (ca < 0 || cp < 0 || cb < 0 || cpl < 0 || ct < 0 || cbw < 0 || cm < 0) {
        fprintf(stderr, "benchreport: %s: not a collbench CSV\n", path);
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f) && nrows < MAXROWS) {
        int n = split(line, v, 32);
        if (n < nh || !strcmp(v[ca], "algo")) continue;   /* a repeated header */
        row *r = &rows[nrows++];
        snprintf(r->algo, sizeof r->algo, "%s", v[ca]);
        snprintf(r->place, sizeof r->place, "%s", v[cpl]);
        r->p = atoi(v[cp]);
        r->bytes = atof(v[cb]);
        r->time_us = atof(v[ct]);
        r->busbw = atof(v[cbw]);
        r->model_us = atof(v[cm]);   /* "nan" reads as NaN */
        int k;
        for (k = 0; k < nalg && strcmp(algos[k], r->algo); k++) {}
        if (k == nalg && nalg < MAXALG) snprintf(algos[nalg++], 32, "%s", r->algo);
        for (k = 0; k < np && ps[k] != r->p; k++) {}
        if (k == np && np < MAXP) ps[np++] = r->p;
    }
    fclose(f);
    for (int i = 1; i < np; i++)
        for (int j = i; j > 0 && ps[j - 1] > ps[j]; j--) { int t = ps[j]; ps[j] = ps[j - 1]; ps[j - 1] = t; }
    return 0;
}

static const row *find(const char *algo, int p, double bytes)
{
    for (int i = 0; i < nrows; i++)
        if (rows[i].p == p && rows[i].bytes == bytes && !strcmp(rows[i].place, "out") && !strcmp(rows[i].algo, algo))
            return &rows[i];
    return NULL;
}

/* The best hand-written algorithm (no reference) at (p, bytes), on any
 * transport (which < 0), the MPI one (0) or shm (1). */
static const row *best_of(int p, double bytes, int which)
{
    const row *b = NULL;
    for (int a = 0; a < nalg; a++) {
        if (is_reference(algos[a]) || (which >= 0 && is_shm(algos[a]) != which)) continue;
        const row *r = find(algos[a], p, bytes);
        if (r && r->time_us > 0 && (!b || r->time_us < b->time_us)) b = r;
    }
    return b;
}
static const row *best_hand(int p, double bytes) { return best_of(p, bytes, -1); }

static int has_p(int p) { for (int i = 0; i < np; i++) if (ps[i] == p) return 1; return 0; }

static char *sz(double b)
{
    static char buf[8][32];
    static int k;
    k = (k + 1) % 8;
    return (char *)bm_size_str(b, buf[k], 32);
}

/* Sorted distinct sizes measured at p (out-of-place). */
static int sizes_at(int p, double *out, int max)
{
    int n = 0;
    for (int i = 0; i < nrows; i++) {
        if (rows[i].p != p || strcmp(rows[i].place, "out")) continue;
        int k;
        for (k = 0; k < n && out[k] != rows[i].bytes; k++) {}
        if (k == n && n < max) out[n++] = rows[i].bytes;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) { double t = out[j]; out[j] = out[j - 1]; out[j - 1] = t; }
    return n;
}

static void target(FILE *md, int met, int known, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void target(FILE *md, int met, int known, const char *what, const char *fmt, ...)
{
    fprintf(md, "- **%s** — %s  \n  ", known ? (met ? "MET" : "MISSED") : "NOT MEASURED", what);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(md, fmt, ap);
    va_end(ap);
    fprintf(md, "\n");
}

static void csv_as_table(FILE *md, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[2048], *v[64];
    for (int ln = 0; fgets(line, sizeof line, f); ln++) {
        int n = split(line, v, 64);
        fprintf(md, "|");
        for (int i = 0; i < n; i++) fprintf(md, " %s |", v[i]);
        fprintf(md, "\n");
        if (ln == 0) {
            fprintf(md, "|");
            for (int i = 0; i < n; i++) fprintf(md, "---|");
            fprintf(md, "\n");
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *info = "";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--info") && i + 1 < argc) info = argv[++i];
        else { fprintf(stderr, "usage: benchreport --dir DIR [--info TEXT]\n"); return 2; }
    }
    if (!dir) { fprintf(stderr, "usage: benchreport --dir DIR [--info TEXT]\n"); return 2; }
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    if (load_sweep(path) || !nrows) { fprintf(stderr, "benchreport: no results in %s\n", path); return 1; }
    for (int a = nalg - 1; a >= 0; a--)
        if (is_reference(algos[a])) REF = algos[a];
    bm_params m;
    int have_m;
    snprintf(path, sizeof path, "%s/params.txt", dir);
    have_m = bm_params_load(path, &m, err, sizeof err) == 0;
    if (!have_m) fprintf(stderr, "benchreport: %s (model sections skipped)\n", err);
    bm_params ms;
    snprintf(path, sizeof path, "%s/params_shm.txt", dir);
    int have_ms = !access(path, R_OK) && bm_params_load(path, &ms, err, sizeof err) == 0;
    int any_shm = 0;
    for (int a = 0; a < nalg; a++) any_shm |= is_shm(algos[a]);

    /* ---- scaling.csv: at the size nearest 16 MB, per algorithm and p. */
    double S = 0;
    {
        double sz0[256];
        int n = sizes_at(ps[0], sz0, 256);
        for (int i = 0; i < n; i++) if (sz0[i] <= 16.0 * (1 << 20)) S = sz0[i];
        if (!S && n) S = sz0[0];
    }
    snprintf(path, sizeof path, "%s/scaling.csv", dir);
    FILE *sc = fopen(path, "w");
    if (sc) {
        fprintf(sc, "algo,p,bytes,time_us,busbw_gbs,speedup,efficiency,vs_ref\n");
        for (int a = 0; a < nalg; a++) {
            /* the base is the smallest p >= 2 (p = 1 moves no data: its busbw is 0) */
            const row *base = NULL;
            for (int k = 0; k < np && !base; k++) if (ps[k] >= 2) base = find(algos[a], ps[k], S);
            for (int k = 0; base && k < np; k++) {
                if (ps[k] < 2) continue;
                const row *r = find(algos[a], ps[k], S), *ref = find(REF, ps[k], S);
                if (!r || !(r->time_us > 0)) continue;
                /* speedup: data reduced per second (p·n/T) relative to the smallest p */
                double sp = (ps[k] * base->time_us) / (base->p * r->time_us);
                fprintf(sc, "%s,%d,%.0f,%.3f,%.4f,%.4f,%.4f,%.4f\n", algos[a], ps[k], S, r->time_us, r->busbw, sp,
                        base->busbw > 0 ? r->busbw / base->busbw : NAN, ref ? ref->time_us / r->time_us : NAN);
            }
        }
        fclose(sc);
    }

    snprintf(path, sizeof path, "%s/summary.md", dir);
    FILE *md = fopen(path, "w");
    if (!md) { fprintf(stderr, "benchreport: cannot write %s\n", path); return 1; }
    fprintf(md, "# collkit benchmark summary\n\n%s\n\n", info);
    fprintf(md, "Every figure below comes from this one run (files in this folder). Times are the slowest "
                "rank's per iteration, median over iterations; out-of-place; f32 sum. On a shared or "
                "oversubscribed machine the numbers are noisy: compare algorithms within the run, not across runs.\n\n");
    if (have_m) {
        fprintf(md, "## Machine parameters (ping-pong between 2 ranks)\n\n");
        fprintf(md, "| α (latency) | β (per byte) | point-to-point bandwidth | γ (reduce, per byte) | memcpy bandwidth |\n"
                    "|---|---|---|---|---|\n| %.2f µs | %.4f ns/B | %.2f GB/s | %.4f ns/B (%.2f GB/s) | %.2f GB/s |\n\n",
                m.alpha * 1e6, m.beta * 1e9, m.beta > 0 ? 1e-9 / m.beta : 0, m.gamma * 1e9,
                m.gamma > 0 ? 1e-9 / m.gamma : 0, m.memcpy_bw / 1e9);
        if (have_ms)
            fprintf(md, "Through the shm transport (ping-pong between 2 ranks, the shm sweep's model): α = %.2f µs, "
                        "β = %.4f ns/B (%.2f GB/s).\n\n", ms.alpha * 1e6, ms.beta * 1e9, ms.beta > 0 ? 1e-9 / ms.beta : 0);
    }

    /* ---- ratios to MPI_Allreduce */
    static const double at[] = {1024, 65536, 1 << 20, 16 << 20, 64 << 20};
    fprintf(md, "## Speed relative to the reference (%s)\n\nt(%s) / t(algorithm) at each size: above 1 is faster than "
                "the reference, below 1 slower (\"-\": size not measured).\n\n", REF[0] ? REF : "none in this run", REF);
    for (int k = 0; k < np; k++) {
        fprintf(md, "### p = %d\n\n| algorithm |", ps[k]);
        for (int j = 0; j < 5; j++) fprintf(md, " %s |", sz(at[j]));
        fprintf(md, "\n|---|");
        for (int j = 0; j < 5; j++) fprintf(md, "---|");
        fprintf(md, "\n");
        for (int a = 0; a < nalg; a++) {
            fprintf(md, "| %s |", algos[a]);
            for (int j = 0; j < 5; j++) {
                const row *r = find(algos[a], ps[k], at[j]), *ref = find(REF, ps[k], at[j]);
                if (r && ref && r->time_us > 0) fprintf(md, " %.2f |", ref->time_us / r->time_us);
                else fprintf(md, " - |");
            }
            fprintf(md, "\n");
        }
        fprintf(md, "\n");
    }

    /* ---- the two transports side by side */
    if (any_shm) {
        fprintf(md, "## Transports: MPI and shared memory\n\nThe fastest hand-written algorithm on each transport "
                    "(busbw, GB/s; NAME@shm ran on the shm transport), and the reference's.\n\n");
        for (int k = 0; k < np; k++) {
            fprintf(md, "### p = %d\n\n| size | best on MPI | best on shm | shm / MPI | %s |\n|---|---|---|---|---|\n", ps[k],
                    REF[0] ? REF : "reference");
            for (int j = 0; j < 5; j++) {
                const row *a = best_of(ps[k], at[j], 0), *b = best_of(ps[k], at[j], 1), *ref = find(REF, ps[k], at[j]);
                if (!a && !b) continue;
                fprintf(md, "| %s |", sz(at[j]));
                if (a) fprintf(md, " %s %.3f |", a->algo, a->busbw); else fprintf(md, " - |");
                if (b) fprintf(md, " %s %.3f |", b->algo, b->busbw); else fprintf(md, " - |");
                if (a && b && a->busbw > 0) fprintf(md, " %.2f |", b->busbw / a->busbw); else fprintf(md, " - |");
                if (ref) fprintf(md, " %.3f |\n", ref->busbw); else fprintf(md, " - |\n");
            }
            fprintf(md, "\n");
        }
    }

    /* ---- the targets */
    fprintf(md, "## Performance targets\n\n");
    {
        /* 1. busbw >= 1.5x the reference at 16-64 MB, >= 1.0x from 64 KB, p = 2, 4 */
        char figs[4096] = "", figs2[4096] = "";
        int known = 0, met1 = 1, met2 = 1;
        double worst2 = INFINITY, worst2_b = 0;
        int worst2_p = 0;
        for (int pp = 2; pp <= 4; pp += 2) {
            if (!has_p(pp)) continue;
            double s[256];
            int n = sizes_at(pp, s, 256);
            for (int i = 0; i < n; i++) {
                const row *b = best_hand(pp, s[i]), *ref = find(REF, pp, s[i]);
                if (!b || !ref || s[i] < 65536) continue;
                double ratio = b->busbw / (ref->busbw > 0 ? ref->busbw : 1e-30);
                known = 1;
                if (s[i] >= 16 << 20 && s[i] <= 64 << 20) {
                    if (ratio < 1.5) met1 = 0;
                    size_t l = strlen(figs);
                    snprintf(figs + l, sizeof figs - l, "%sp=%d %s: %s %.2f GB/s vs %s %.2f GB/s = %.2fx",
                             l ? "; " : "", pp, sz(s[i]), b->algo, b->busbw, REF, ref->busbw, ratio);
                }
                if (ratio < 1.0) met2 = 0;
                if (ratio < worst2) { worst2 = ratio; worst2_b = s[i]; worst2_p = pp; }
            }
        }
        if (known)
            snprintf(figs2, sizeof figs2, "lowest ratio from 64 KB up: %.2fx (p=%d, %s)", worst2, worst2_p, sz(worst2_b));
        target(md, met1, known && figs[0], "best hand-written busbw >= 1.5x the reference at 16-64 MB (p = 2, 4)",
               "%s", figs[0] ? figs : "no 16-64 MB results at p = 2 or 4");
        target(md, met2, known, "best hand-written busbw >= 1.0x the reference from 64 KB up (p = 2, 4)", "%s", figs2);

        /* 2. latency <= 1.0x the reference at <= 4 KB, p = 4 */
        char f3[4096] = "";
        int k3 = 0, met3 = 1;
        if (has_p(4)) {
            double s[256];
            int n = sizes_at(4, s, 256);
            for (int i = 0; i < n; i++) {
                if (s[i] > 4096 || s[i] <= 0) continue;
                const row *b = best_hand(4, s[i]), *ref = find(REF, 4, s[i]);
                if (!b || !ref) continue;
                double ratio = b->time_us / ref->time_us;
                k3 = 1;
                if (ratio > 1.0) met3 = 0;
                size_t l = strlen(f3);
                snprintf(f3 + l, sizeof f3 - l, "%s%s: %s %.1f us vs %s %.1f us = %.2fx", l ? "; " : "", sz(s[i]),
                         b->algo, b->time_us, REF, ref->time_us, ratio);
            }
        }
        target(md, met3, k3, "best hand-written latency <= 1.0x the reference at <= 4 KB (p = 4)", "%s",
               k3 ? f3 : "no results at p = 4 and <= 4 KB");

        /* 3. busbw at 64 MB, p = 2 >= 0.5x memcpy: the best on shm (a
         * shared-memory transport is what the memcpy ceiling is about), or
         * the best hand-written where the shm sweep did not run */
        const row *r = any_shm ? best_of(2, 64 << 20, 1) : best_hand(2, 64 << 20);
        int k4 = r && have_m && m.memcpy_bw > 0;
        target(md, k4 && r->busbw >= 0.5 * m.memcpy_bw / 1e9, k4,
               any_shm ? "best shm all-reduce busbw at 64 MB, p = 2 >= 0.5x the memcpy bandwidth"
                       : "best hand-written busbw at 64 MB, p = 2 >= 0.5x the memcpy bandwidth",
               "%s %.2f GB/s, memcpy %.2f GB/s: %.2fx",
               r ? r->algo : "-", r ? r->busbw : 0, have_m ? m.memcpy_bw / 1e9 : 0, k4 ? r->busbw / (m.memcpy_bw / 1e9) : 0);

        /* 4. model within 25 % for p <= 4, sizes >= 64 KB (hand-written algorithms, MPI transport) */
        int k5 = 0, in = 0, tot = 0;
        double worst = 0;
        const row *wr = NULL;
        char per[2048] = "";
        for (int a = 0; a < nalg; a++) {
            if (is_reference(algos[a]) || is_shm(algos[a])) continue;
            int ai = 0, at_ = 0;
            for (int i = 0; i < nrows; i++) {
                const row *x = &rows[i];
                if (strcmp(x->algo, algos[a]) || strcmp(x->place, "out") || x->p > 4 || x->bytes < 65536) continue;
                if (!(x->model_us > 0) || !(x->time_us > 0)) continue;
                double e = fabs(x->time_us / x->model_us - 1);
                k5 = 1;
                tot++; at_++;
                if (e <= 0.25) { in++; ai++; }
                if (e > worst) { worst = e; wr = x; }
            }
            if (at_) {
                size_t l = strlen(per);
                snprintf(per + l, sizeof per - l, "%s%s %d/%d", l ? ", " : "", algos[a], ai, at_);
            }
        }
        target(md, k5 && in == tot, k5, "model within 25 % of measured (p <= 4, sizes >= 64 KB, MPI transport)",
               "%d of %d points within 25 %% (%s); worst: %s p=%d %s measured %.0f us, model %.0f us",
               in, tot, per, wr ? wr->algo : "-", wr ? wr->p : 0, wr ? sz(wr->bytes) : "-",
               wr ? wr->time_us : 0, wr ? wr->model_us : 0);
        fprintf(md, "\nA missed target is explained in the closing notes of the benchmark issue, with a trace "
                    "(the trace_*.json files in this folder open in https://ui.perfetto.dev).\n\n");
    }

    /* ---- crossovers from the model */
    if (have_m) {
        const ck_algo *names[MAXALG];
        int nn = 0;
        for (int k = 0; k < nalg; k++) {
            const ck_algo *a = ck_algo_find(algos[k]);
            if (a && a->cost && !(a->flags & CK_ALGO_REFERENCE)) names[nn++] = a;
        }
        fprintf(md, "## Extrapolation: the fastest algorithm by size (model)\n\n"
                    "The α, β, γ above kept fixed while p grows (as if every link were this machine's shared "
                    "memory); see extrapolation.png. Each row: the winner from 8 B, then where it changes.\n\n"
                    "| p | fastest algorithm by message size |\n|---|---|\n");
        static const int pe[] = {2, 4, 16, 64, 256, 1024, 4096};
        for (int i = 0; i < 7 && nn; i++) {
            double s[32];
            int from[32], to[32], first;
            int k = bm_crossovers(names, nn, &m, pe[i], 8, (double)(1u << 30), BM_CROSSOVER_TOL, s, from, to, 32, &first);
            fprintf(md, "| %d | %s", pe[i], names[first]->name);
            for (int j = 0; j < k; j++) fprintf(md, " → %s from %s", names[to[j]]->name, sz(s[j]));
            fprintf(md, " |\n");
        }
        fprintf(md, "\n");
    }

    /* ---- plots */
    fprintf(md, "## Plots\n\n(PNG; an SVG of each sits beside it. plots/README.md says how each is made.)\n\n");
    static const char *const plots[][2] = {
        {"busbw_p%d", "bus bandwidth vs size, per algorithm, memcpy ceiling"},
        {"latency_p%d", "time vs size (log-log)"},
        {"model_p%d", "measured / model vs size"},
    };
    for (int k = 0; k < np; k++)
        for (int j = 0; j < 3; j++) {
            char name[64];
            snprintf(name, sizeof name, plots[j][0], ps[k]);
            snprintf(path, sizeof path, "%s/%s.png", dir, name);
            if (!access(path, R_OK)) fprintf(md, "- p = %d, %s: ![%s](%s.png)\n", ps[k], plots[j][1], name, name);
        }
    static const char *const others[][2] = {
        {"pingpong", "ping-pong time and the α-β fit"},
        {"scaling", "speedup and efficiency vs ranks"},
        {"extrapolation", "model extrapolated to 1024 and 4096 ranks"},
        {"trainer_scaling", "trainer samples/s and scaling efficiency"},
    };
    for (int j = 0; j < 4; j++) {
        snprintf(path, sizeof path, "%s/%s.png", dir, others[j][0]);
        if (!access(path, R_OK)) fprintf(md, "- %s: ![%s](%s.png)\n", others[j][1], others[j][0], others[j][0]);
    }
    snprintf(path, sizeof path, "%s/trainer.csv", dir);
    if (!access(path, R_OK)) {
        fprintf(md, "\n## Trainer (data-parallel tagging)\n\n![trainer scaling](trainer_scaling.png)\n\n");
        csv_as_table(md, path);
    }
    fclose(md);
    return 0;
}
