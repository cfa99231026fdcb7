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
 *
 * --sim: the same folder layout from `make sim-bench` (scripts/sim-bench.sh,
 * SimGrid SMPI): DIR/platform.txt describes the simulated cluster, the
 * targets of a shared-memory machine give way to the checks the script names
 * (--fastest, --near-link, --model-algos at --check-p ranks, each a PASS or
 * FAIL line with its figures), and the summary adds the fastest algorithm by
 * size at each p as simulated, the model's error per algorithm and p, and,
 * from DIR/topology.csv (collbench CSVs with a last column "platform"), the
 * same algorithms on a non-blocking and an oversubscribed fat tree.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collkit_util.h"
#include "model.h"

#define MAXROWS 20000
#define MAXALG 32
#define MAXP 16

typedef struct { char algo[32], place[8], plat[32]; int p; double bytes, time_us, busbw, model_us; } row;

static row rows[MAXROWS];
static int nrows;
static row trows[MAXROWS];   /* --sim: DIR/topology.csv */
static int ntrows;
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

/* Reads a collbench CSV into dst (rows, or trows); only the main sweep
 * (dst == rows) lists its algorithms and rank counts. */
static int load_csv(const char *path, row *dst, int *ndst)
{
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "benchreport: cannot open %s\n", path); return -1; }
    char hline[1024], line[1024], *h[32], *v[32];
    if (!fgets(hline, sizeof hline, f)) { fclose(f); return -1; }
    int nh = split(hline, h, 32);
    int ca = col(h, nh, "algo"), cp = col(h, nh, "p"), cb = col(h, nh, "bytes"), cpl = col(h, nh, "place"),
        ct = col(h, nh, "time_us"), cbw = col(h, nh, "busbw_gbs"), cm = col(h, nh, "model_us"),
        cpf = col(h, nh, "platform");
    if (ca < 0 || cp < 0 || cb < 0 || cpl < 0 || ct < 0 || cbw < 0 || cm < 0) {
        fprintf(stderr, "benchreport: %s: not a collbench CSV\n", path);
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f) && *ndst < MAXROWS) {
        int n = split(line, v, 32);
        if (n < nh || !strcmp(v[ca], "algo")) continue;   /* a repeated header */
        row *r = &dst[(*ndst)++];
        snprintf(r->algo, sizeof r->algo, "%s", v[ca]);
        snprintf(r->place, sizeof r->place, "%s", v[cpl]);
        snprintf(r->plat, sizeof r->plat, "%s", cpf >= 0 ? v[cpf] : "");
        r->p = atoi(v[cp]);
        r->bytes = atof(v[cb]);
        r->time_us = atof(v[ct]);
        r->busbw = atof(v[cbw]);
        r->model_us = atof(v[cm]);   /* "nan" reads as NaN */
        if (dst != rows) continue;
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

/* ------------------------------------------------------------ --sim */

/* DIR/platform.txt ("key value" lines, written by scripts/sim-bench.sh): the
 * simulated cluster the crossbar sweeps ran on. */
typedef struct { char name[64], desc[512]; double alpha_us, bw_gbs, speed_gf; } sim_platform;

static int load_platform(const char *path, sim_platform *pl)
{
    memset(pl, 0, sizeof *pl);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *v = strchr(line, ' ');
        if (!v || line[0] == '#') continue;
        *v++ = 0;
        if (!strcmp(line, "name")) snprintf(pl->name, sizeof pl->name, "%s", v);
        else if (!strcmp(line, "desc")) snprintf(pl->desc, sizeof pl->desc, "%s", v);
        else if (!strcmp(line, "alpha_us")) pl->alpha_us = atof(v);
        else if (!strcmp(line, "bw_gbs")) pl->bw_gbs = atof(v);
        else if (!strcmp(line, "speed_gflops")) pl->speed_gf = atof(v);
    }
    fclose(f);
    return pl->alpha_us > 0 && pl->bw_gbs > 0 ? 0 : -1;
}

/* "1K:rd" -> 1024 and "rd"; 0 on success. */
static int size_and_names(const char *arg, double *bytes, char *names, size_t cap)
{
    const char *c = strchr(arg, ':');
    if (!c || c == arg || !c[1]) return -1;
    char num[32];
    if (c - arg >= (ptrdiff_t)sizeof num) return -1;
    snprintf(num, sizeof num, "%.*s", (int)(c - arg), arg);
    /* A finite number (no nan, inf or hex: ck_parse_double) and a K, M or G. */
    size_t len = strlen(num);
    double mul = 1, v;
    switch (num[len - 1]) {
    case 'K': case 'k': mul = 1024; break;
    case 'M': case 'm': mul = 1024.0 * 1024; break;
    case 'G': case 'g': mul = 1024.0 * 1024 * 1024; break;
    default: break;
    }
    if (mul > 1) num[len - 1] = '\0';
    if (ck_parse_double(num, 0, 1e15, &v, NULL, 0) || !(v > 0)) return -1;
    v *= mul;
    *bytes = v;
    snprintf(names, cap, "%s", c + 1);
    return 0;
}

static void check_line(FILE *md, int pass, const char *what, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void check_line(FILE *md, int pass, const char *what, const char *fmt, ...)
{
    fprintf(md, "- **%s** %s  \n  ", pass ? "PASS" : "FAIL", what);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(md, fmt, ap);
    va_end(ap);
    fprintf(md, "\n");
}

typedef struct {
    int p;                  /* the rank count the checks are made at */
    const char *fastest;    /* SIZE:ALGO  this algorithm is the fastest hand-written one at SIZE */
    const char *near_link;  /* SIZE:A,B   their busbw within 15 % of the link bandwidth at SIZE */
    const char *model;      /* A,B,..     the model within 25 % of the simulation at every size */
    const char *ref_label;  /* what the reference is ("SMPI model, reductions free") */
} sim_checks;

/* The checks, one PASS/FAIL line each with the figures. Returns the failures. */
static int sim_acceptance(FILE *md, const sim_checks *ck, const sim_platform *pl, const bm_params *m, int have_m)
{
    int fails = 0;
    char buf[4096], names[512];
    fprintf(md, "## Acceptance checks (p = %d, %s)\n\n", ck->p, pl->name);
    /* The platform means what its file says: the ping-pong recovers it. */
    if (have_m) {
        double ea = fabs(m->alpha * 1e6 / pl->alpha_us - 1), bw = m->beta > 0 ? 1e-9 / m->beta : 0,
               eb = fabs(bw / pl->bw_gbs - 1);
        int ok = ea <= 0.05 && eb <= 0.05;
        fails += !ok;
        check_line(md, ok, "ping-pong recovers the platform's α and β (within 5 %)",
                   "α = %.3f µs (platform %.3f µs), 1/β = %.3f GB/s (platform %.3f GB/s)", m->alpha * 1e6,
                   pl->alpha_us, bw, pl->bw_gbs);
    }
    double b;
    if (ck->fastest && size_and_names(ck->fastest, &b, names, sizeof names) == 0) {
        const row *best = best_hand(ck->p, b), *want = find(names, ck->p, b), *ref = find(REF, ck->p, b);
        int ok = best && want && want->time_us <= best->time_us;
        fails += !ok;
        size_t l = 0;
        buf[0] = 0;
        for (int a = 0; a < nalg; a++) {
            const row *r = find(algos[a], ck->p, b);
            if (!r || is_reference(algos[a])) continue;
            l += (size_t)snprintf(buf + l, l < sizeof buf ? sizeof buf - l : 0, "%s%s %.2f µs", l ? ", " : "",
                                  algos[a], r->time_us);
            if (l >= sizeof buf) break;
        }
        char what[640];
        snprintf(what, sizeof what, "%s is the fastest algorithm at %s", names, sz(b));
        check_line(md, ok, what, "%s; fastest: %s", buf[0] ? buf : "no results at this size", best ? best->algo : "-");
        if (ref) fprintf(md, "  (reference %s%s%s: %.2f µs)\n", REF, ck->ref_label ? ", " : "",
                         ck->ref_label ? ck->ref_label : "", ref->time_us);
    }
    if (ck->near_link && size_and_names(ck->near_link, &b, names, sizeof names) == 0) {
        size_t l = 0;
        int ok = 1;
        buf[0] = 0;
        for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
            const row *r = find(n, ck->p, b);
            double ratio = r ? r->busbw / pl->bw_gbs : 0;
            if (!r || ratio < 0.85 || ratio > 1.15) ok = 0;
            l += (size_t)snprintf(buf + l, l < sizeof buf ? sizeof buf - l : 0, "%s%s %.3f GB/s = %.1f %%",
                                  l ? ", " : "", n, r ? r->busbw : 0, 100 * ratio);
            if (l >= sizeof buf) break;
        }
        fails += !ok;
        char what[640];
        snprintf(what, sizeof what, "busbw within 15 %% of the link bandwidth (%.3f GB/s) at %s", pl->bw_gbs, sz(b));
        check_line(md, ok, what, "%s", buf);
    }
    if (ck->model) {
        snprintf(names, sizeof names, "%s", ck->model);
        size_t l = 0;
        int ok = 1;
        buf[0] = 0;
        for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
            double worst = -1, wb = 0, ws = 0, wm = 0;
            for (int i = 0; i < nrows; i++) {
                const row *x = &rows[i];
                if (strcmp(x->algo, n) || x->p != ck->p || strcmp(x->place, "out") || !(x->model_us > 0)) continue;
                double e = fabs(x->time_us / x->model_us - 1);
                if (e > worst) { worst = e; wb = x->bytes; ws = x->time_us; wm = x->model_us; }
            }
            if (worst < 0 || worst > 0.25) ok = 0;
            if (worst < 0)
                l += (size_t)snprintf(buf + l, l < sizeof buf ? sizeof buf - l : 0, "%s%s: no modelled results",
                                      l ? "; " : "", n);
            else
                l += (size_t)snprintf(buf + l, l < sizeof buf ? sizeof buf - l : 0,
                                      "%s%s worst %.1f %% (at %s: simulated %.2f µs, model %.2f µs)", l ? "; " : "", n,
                                      100 * worst, sz(wb), ws, wm);
            if (l >= sizeof buf) break;
        }
        fails += !ok;
        check_line(md, ok, "the model (each algorithm's cost function) within 25 % of the simulation at every size",
                   "%s", buf);
    }
    fprintf(md, "\n");
    return fails;
}

/* The fastest hand-written algorithm at each size, as simulated: where it changes, per p. */
static void sim_crossovers(FILE *md)
{
    fprintf(md, "## The fastest algorithm by message size and p (simulated)\n\n"
                "Among the hand-written algorithms; each row: the fastest at the smallest size, then where "
                "another takes over. (The model's prediction of the same is further down.)\n\n"
                "| p | fastest algorithm by message size |\n|---|---|\n");
    for (int k = 0; k < np; k++) {
        double s[256];
        int n = sizes_at(ps[k], s, 256);
        const char *cur = NULL;
        fprintf(md, "| %d |", ps[k]);
        for (int i = 0; i < n; i++) {
            const row *b = best_hand(ps[k], s[i]);
            if (!b) continue;
            if (!cur) fprintf(md, " %s (from %s)", b->algo, sz(s[i]));
            else if (strcmp(cur, b->algo)) fprintf(md, " → %s from %s", b->algo, sz(s[i]));
            cur = b->algo;
        }
        fprintf(md, " |\n");
    }
    fprintf(md, "\n");
}

/* Per algorithm and p: the largest |simulated / model - 1| over the sizes. */
static void sim_model_table(FILE *md)
{
    fprintf(md, "## Model vs simulation\n\nThe largest deviation |simulated / model − 1| over all sizes, per "
                "algorithm and p (the model: each algorithm's cost function with the α, β, γ above; model_pN.png "
                "draws it by size).\n\n| algorithm |");
    for (int k = 0; k < np; k++) fprintf(md, " p = %d |", ps[k]);
    fprintf(md, "\n|---|");
    for (int k = 0; k < np; k++) fprintf(md, "---|");
    fprintf(md, "\n");
    for (int a = 0; a < nalg; a++) {
        if (is_reference(algos[a])) continue;
        fprintf(md, "| %s |", algos[a]);
        for (int k = 0; k < np; k++) {
            double worst = -1;
            for (int i = 0; i < nrows; i++) {
                const row *x = &rows[i];
                if (strcmp(x->algo, algos[a]) || x->p != ps[k] || strcmp(x->place, "out") || !(x->model_us > 0)) continue;
                double e = fabs(x->time_us / x->model_us - 1);
                if (e > worst) worst = e;
            }
            if (worst < 0) fprintf(md, " - |");
            else fprintf(md, " %.1f %% |", 100 * worst);
        }
        fprintf(md, "\n");
    }
    fprintf(md, "\n");
}

/* DIR/topology.csv: the same algorithms on the fat trees, against the crossbar. */
static void sim_topology_at(FILE *md, const char *crossbar, int tp)
{
    char plats[8][32];
    int nplat = 0;
    for (int i = 0; i < ntrows; i++) {
        int k;
        if (trows[i].p != tp) continue;
        for (k = 0; k < nplat && strcmp(plats[k], trows[i].plat); k++) {}
        if (k == nplat && nplat < 8) snprintf(plats[nplat++], 32, "%s", trows[i].plat);
    }
    static const double at[] = {1024, 65536, 1 << 20, 16 << 20};
    fprintf(md, "## Topology: the crossbar and the fat trees (p = %d)\n\n"
                "busbw (GB/s) of each algorithm on each platform (topology_p%d.png draws it by size). A "
                "non-blocking fat tree has as much bandwidth up to the spine as its hosts have; the 4:1 "
                "oversubscribed one a quarter, so traffic that leaves a leaf switch shares its uplinks.\n\n",
            tp, tp);
    for (int j = 0; j < 4; j++) {
        fprintf(md, "### %s\n\n| algorithm | %s |", sz(at[j]), crossbar);
        for (int k = 0; k < nplat; k++) fprintf(md, " %s |", plats[k]);
        if (nplat >= 2) fprintf(md, " %s / %s |", plats[nplat - 1], plats[0]);
        fprintf(md, "\n|---|---|");
        for (int k = 0; k < nplat + (nplat >= 2); k++) fprintf(md, "---|");
        fprintf(md, "\n");
        for (int a = 0; a < nalg; a++) {
            int any = 0;
            for (int i = 0; i < ntrows && !any; i++) any = trows[i].p == tp && !strcmp(trows[i].algo, algos[a]);
            if (!any) continue;
            const row *x = find(algos[a], tp, at[j]);
            fprintf(md, "| %s |", algos[a]);
            if (x) fprintf(md, " %.3f |", x->busbw); else fprintf(md, " - |");
            double first = NAN, last = NAN;
            for (int k = 0; k < nplat; k++) {
                const row *r = NULL;
                for (int i = 0; i < ntrows && !r; i++)
                    if (trows[i].p == tp && !strcmp(trows[i].algo, algos[a]) && !strcmp(trows[i].plat, plats[k]) &&
                        trows[i].bytes == at[j] && !strcmp(trows[i].place, "out"))
                        r = &trows[i];
                if (r) fprintf(md, " %.3f |", r->busbw); else fprintf(md, " - |");
                if (k == 0 && r) first = r->busbw;
                if (k == nplat - 1 && r) last = r->busbw;
            }
            if (nplat >= 2) {
                if (first > 0 && last == last) fprintf(md, " %.2f |", last / first); else fprintf(md, " - |");
            }
            fprintf(md, "\n");
        }
        fprintf(md, "\n");
    }
}

static void sim_topology(FILE *md, const char *crossbar)
{
    int done[MAXP], nd = 0;
    for (int i = 0; i < ntrows; i++) {
        int k;
        for (k = 0; k < nd && done[k] != trows[i].p; k++) {}
        if (k < nd || nd == MAXP) continue;
        done[nd++] = trows[i].p;
        sim_topology_at(md, crossbar, trows[i].p);
    }
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *info = "";
    int sim = 0;
    sim_checks ck = {64, NULL, NULL, NULL, NULL};
    static const char usage[] =
        "usage: benchreport --dir DIR [--info TEXT]\n"
        "       benchreport --sim --dir DIR [--info TEXT] [--check-p P] [--fastest SIZE:ALGO]\n"
        "                   [--near-link SIZE:ALGO[,ALGO..]] [--model-algos ALGO[,ALGO..]] [--ref-label TEXT]\n";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--info") && i + 1 < argc) info = argv[++i];
        else if (!strcmp(argv[i], "--sim")) sim = 1;
        else if (!strcmp(argv[i], "--check-p") && i + 1 < argc) {
            char why[128];
            long long v;
            if (ck_parse_int(argv[++i], 1, 1 << 20, &v, why, sizeof why)) {
                fprintf(stderr, "benchreport: --check-p '%s': %s\n", argv[i], why);
                return 2;
            }
            ck.p = (int)v;
        }
        else if (!strcmp(argv[i], "--fastest") && i + 1 < argc) ck.fastest = argv[++i];
        else if (!strcmp(argv[i], "--near-link") && i + 1 < argc) ck.near_link = argv[++i];
        else if (!strcmp(argv[i], "--model-algos") && i + 1 < argc) ck.model = argv[++i];
        else if (!strcmp(argv[i], "--ref-label") && i + 1 < argc) ck.ref_label = argv[++i];
        else { fprintf(stderr, "%s", usage); return 2; }
    }
    if (!dir) { fprintf(stderr, "%s", usage); return 2; }
    double b_;
    char n_[64];
    if ((ck.fastest && size_and_names(ck.fastest, &b_, n_, sizeof n_)) ||
        (ck.near_link && size_and_names(ck.near_link, &b_, n_, sizeof n_))) {
        fprintf(stderr, "benchreport: --fastest and --near-link take SIZE:ALGO (e.g. 1K:rd, 16M:ring,rabenseifner)\n");
        return 2;
    }
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    if (load_csv(path, rows, &nrows) || !nrows) { fprintf(stderr, "benchreport: no results in %s\n", path); return 1; }
    sim_platform pl;
    if (sim) {
        snprintf(path, sizeof path, "%s/platform.txt", dir);
        if (load_platform(path, &pl)) { fprintf(stderr, "benchreport: --sim needs %s (alpha_us, bw_gbs)\n", path); return 1; }
        snprintf(path, sizeof path, "%s/topology.csv", dir);
        if (!access(path, R_OK)) load_csv(path, trows, &ntrows);
    }
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
    if (sim) {
        fprintf(md, "# collkit simulated-cluster benchmark summary (SimGrid SMPI)\n\n%s\n\n", info);
        fprintf(md, "Every figure below comes from this one run (files in this folder) and is SIMULATED time: "
                    "the unmodified programs ran under SimGrid's SMPI, their messages moved over the simulated "
                    "platform, one rank per simulated host. Local reductions are charged as one flop per element "
                    "at the host's speed (%.0f Gflop/s), so runs are deterministic: the same command gives the same "
                    "figures on any machine. Times are the slowest rank's; out-of-place; f32 sum. "
                    "The reference %s is SMPI's own MPI_Allreduce (Open MPI's selection of algorithms)%s%s%s.\n\n",
                pl.speed_gf, REF[0] ? REF : "(none)", ck.ref_label ? ": " : "", ck.ref_label ? ck.ref_label : "",
                ck.ref_label ? "" : "");
        fprintf(md, "## The simulated platform\n\n%s: %s\n\n", pl.name, pl.desc);
    } else {
        fprintf(md, "# collkit benchmark summary\n\n%s\n\n", info);
        fprintf(md, "Every figure below comes from this one run (files in this folder). Times are the slowest "
                    "rank's per iteration, median over iterations; out-of-place; f32 sum. On a shared or "
                    "oversubscribed machine the numbers are noisy: compare algorithms within the run, not across runs.\n\n");
    }
    if (have_m && sim) {
        fprintf(md, "Ping-pong between 2 simulated hosts, and the reduce rate the simulation charges:\n\n"
                    "| α (latency) | β (per byte) | point-to-point bandwidth | γ (reduce, per byte) |\n"
                    "|---|---|---|---|\n| %.3f µs | %.4f ns/B | %.3f GB/s | %.4f ns/B (%.2f GB/s) |\n\n"
                    "The platform's own: α = %.3f µs, bandwidth %.3f GB/s.\n\n",
                m.alpha * 1e6, m.beta * 1e9, m.beta > 0 ? 1e-9 / m.beta : 0, m.gamma * 1e9,
                m.gamma > 0 ? 1e-9 / m.gamma : 0, pl.alpha_us, pl.bw_gbs);
    } else if (have_m) {
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
        int has_ref = 0;
        for (int i = 0; i < nrows && !has_ref; i++) has_ref = rows[i].p == ps[k] && !strcmp(rows[i].algo, REF);
        if (!has_ref) continue;   /* (make sim-bench: p = 1024 runs without the reference) */
        fprintf(md, "### p = %d\n\n| algorithm |", ps[k]);
        for (int j = 0; j < 5; j++) fprintf(md, " %s |", sz(at[j]));
        fprintf(md, "\n|---|");
        for (int j = 0; j < 5; j++) fprintf(md, "---|");
        fprintf(md, "\n");
        for (int a = 0; a < nalg; a++) {
            int any = 0;
            for (int i = 0; i < nrows && !any; i++) any = rows[i].p == ps[k] && !strcmp(rows[i].algo, algos[a]);
            if (!any) continue;
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

    /* ---- simulated clusters: the checks the script names, crossovers, model, topology */
    if (sim) {
        sim_acceptance(md, &ck, &pl, &m, have_m);
        sim_crossovers(md);
        sim_model_table(md);
        sim_topology(md, pl.name);
    }

    /* ---- the targets */
    if (!sim) {
        fprintf(md, "## Performance targets\n\n");
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
                    "The α, β, γ above kept fixed while p grows (%s); see extrapolation.png. Each row: the "
                    "winner from 8 B, then where it changes.\n\n"
                    "| p | fastest algorithm by message size |\n|---|---|\n",
                sim ? "every link like the platform's, no contention: a crossbar of any size"
                    : "as if every link were this machine's shared memory");
        static const int pe[] = {2, 4, 16, 64, 256, 1024, 4096};
        for (int i = 0; i < 7 && nn; i++) {
            double s[32];
            int from[32], to[32], first;
            int k = bm_crossovers(names, nn, &m, pe[i], 8, (double)(1u << 30), BM_CROSSOVER_TOL, s, from, to, 32, &first);
            if (k < 0 || first < 0) {   /* no finite time at 8 B: nothing to name */
                fprintf(md, "| %d | (no algorithm has a finite model time) |\n", pe[i]);
                continue;
            }
            fprintf(md, "| %d | %s", pe[i], names[first]->name);
            for (int j = 0; j < k; j++) fprintf(md, " → %s from %s", names[to[j]]->name, sz(s[j]));
            fprintf(md, " |\n");
        }
        fprintf(md, "\n");
    }

    /* ---- plots */
    fprintf(md, "## Plots\n\n(PNG; an SVG of each sits beside it. plots/README.md says how each is made.)\n\n");
    static const char *const plots[][2] = {
        {"busbw_p%d", "bus bandwidth vs size, per algorithm, with the ceiling (memcpy; the link when simulated)"},
        {"latency_p%d", "time vs size (log-log)"},
        {"model_p%d", "measured / model vs size"},
        {"topology_p%d", "busbw on the crossbar and the fat trees (simulated)"},
    };
    for (int k = 0; k < np; k++)
        for (int j = 0; j < 4; j++) {
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
        fprintf(md, "\n## Trainer (data-parallel tagging)\n\n");
        if (sim)
            fprintf(md, "Simulated: tagtrain on p hosts of the platform, weak scaling (the same local batch per "
                        "rank), the whole gradient all-reduced each step (--dense-allreduce). The forward and "
                        "backward passes are charged as 6 flops per parameter per sample and the optimizer as 10 "
                        "per parameter, at the host's speed (trainer/dp.c); efficiency = samples/s(p) / (p x "
                        "samples/s(1)), and what it loses is the all-reduce.\n\n");
        fprintf(md, "![trainer scaling](trainer_scaling.png)\n\n");
        csv_as_table(md, path);
    }
    fclose(md);
    return 0;
}
