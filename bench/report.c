/*
 * benchreport — turns one `make bench` folder into summary.md.
 *
 *   benchreport --dir DIR [--info TEXT]
 *
 * Reads DIR/sweep.csv (collbench --csv, all rank counts; rows of the shm
 * transport's sweep carry their algorithm's name with "@" and the transport
 * that sweep's collbench said it ran on appended: "@shm", or "@mpi" where
 * shm fell back to MPI because the ranks spanned nodes),
 * DIR/params.txt (collbench --pingpong --save-model), DIR/params_shm.txt (the
 * same through the shm transport, when it ran) and, when present,
 * DIR/trainer.csv and DIR/plans.csv with DIR/plans_setup.txt (the parallel
 * plans side by side, scripts/bench_plans.sh), and DIR/trainer_path.csv with
 * DIR/trainer_ddp.txt (the trainer's own path at p = 2 against collbench's
 * same calls, scripts/bench_trainer.sh).
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
 * FAIL line with its figures; each names algorithms of the registry, none
 * empty or twice, or the command line is refused), and the summary adds the fastest algorithm by
 * size at each p as simulated, the model's error per algorithm and p, and,
 * from DIR/topology.csv (collbench CSVs with a last column "platform"), the
 * same algorithms on a non-blocking and an oversubscribed fat tree.
 *
 * A benchmark that says when it cannot be trusted: a point whose repeats
 * disagree (the middle half of its iterations, q1_us to q3_us, spread over
 * more than NOISY_IQR of its median) is marked "noisy" in the tables and
 * never ranked (no best-of, no ratio); DIR/load.txt (scripts/bench.sh: the
 * load averages before and after the sweeps) says whether other work held
 * the machine. A target judged from a loaded machine or from a noisy point
 * says INCONCLUSIVE and why, not MET or MISSED; a check that is no goal of
 * the project (the model's accuracy) is printed as information.
 *
 * A file of the folder that does not hold what collbench and the scripts
 * write (truncated, hand-edited, replaced) is refused with its path, line and
 * column, exit status 1 and no summary.md (plots/README.md, "Data files").
 *
 * The program reads as its steps: parse_args; load_report reads and checks
 * every file of the folder into one report struct; write_scaling; then
 * write_summary, one function per section of summary.md (sec_*), each
 * reading the report and changing nothing.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collkit_util.h"
#include "model.h"

#define MAXROWS 20000
#define MAXALG 32
#define MAXP 16

typedef struct {
    char algo[32], place[8], plat[32];
    int p;
    long line;
    double bytes, time_us, busbw, model_us;
    double q1_us, q3_us;   /* the iterations' quartiles; NAN in a CSV without them (not judged) */
} row;

/* A point is noisy when the middle half of its repeats spreads over more
 * than this fraction of its median: on an idle machine a point's quartiles
 * lie within a few per cent of each other; a quarter of the median apart,
 * the order of two algorithms a few tens of per cent apart is chance. */
#define NOISY_IQR 0.25

/* DIR/load.txt (scripts/bench.sh): the machine's load around the sweeps. */
typedef struct {
    int have, has_after;
    double cores, ranks;
    double before[3], after[3];   /* 1-, 5- and 15-minute load averages */
    double other;                 /* the load of other work: before, or after less the sweep's own ranks */
    int loaded;                   /* other work held at least half the cores */
    char desc[160];               /* "load 3.9 on 2 cores" */
} load_info;

/* DIR/platform.txt (--sim): the simulated cluster the crossbar sweeps ran on. */
typedef struct { char name[64], desc[512]; double alpha_us, bw_gbs, speed_gf; } sim_platform;

/* --sim's checks, each a PASS or FAIL line of the summary. */
typedef struct {
    int p;                  /* the rank count the checks are made at */
    const char *fastest;    /* SIZE:ALGO  this algorithm is the fastest hand-written one at SIZE */
    const char *near_link;  /* SIZE:A,B   their busbw within 15 % of the link bandwidth at SIZE */
    const char *model;      /* A,B,..     the model within 25 % of the simulation at every size */
    const char *ref_label;  /* what the reference is ("SMPI model, reductions free") */
} sim_checks;

typedef struct {
    const char *dir, *info;
    int sim;
    sim_checks ck;
} report_opts;

/* Everything the summary is written from: the folder's files as read, and
 * what follows from them. Filled once by load_report; every section of the
 * summary reads it and changes nothing. */
/* DIR/plans.csv (scripts/bench_plans.sh): one tagtrain run per parallel plan. */
#define MAXPLANS 16
enum { PL_STEP, PL_SPS, PL_PARAM, PL_GRAD, PL_OPTIM, PL_ACT, PL_RSS, PL_COLL, PL_NFIG };
typedef struct {
    char plan[32];
    int p, tp, pp, dp;
    double fig[PL_NFIG];   /* the columns after dp, in the CSV's order; NaN: the run failed */
} plan_row;

/* DIR/trainer_path.csv (scripts/bench_trainer.sh): a row per gradient mode,
 * medians (and the collective's quartiles) over rank 0's steady steps, and
 * collbench's time for the same calls measured in the same run. */
#define MAXPATH 4
static const char *const path_cols[] = {"mode", "algo", "transport", "p", "bytes_per_step", "calls", "fb_s", "wait_s",
                                        "comm_s", "calls_entry_s", "calls_s", "calls_q1_s", "calls_q3_s",
                                        "optimizer_s", "step_s", "collbench_s", "collbench_q1_s", "collbench_q3_s"};
enum { NPATHCOL = sizeof path_cols / sizeof path_cols[0], PATH_FIG0 = 6 };
enum { PA_FB, PA_WAIT, PA_COMM, PA_ENTRY, PA_CALLS, PA_CQ1, PA_CQ3, PA_OPT, PA_STEP, PA_BENCH, PA_BQ1, PA_BQ3,
       PA_NFIG };
typedef struct {
    char mode[32], algo[32], transport[32];
    int p, calls;
    double bytes, fig[PA_NFIG];   /* the columns from fb_s on; NaN: not measured */
} path_row;

typedef struct {
    report_opts o;
    row rows[MAXROWS];          /* DIR/sweep.csv */
    int nrows;
    row trows[MAXROWS];         /* --sim: DIR/topology.csv */
    int ntrows;
    char algos[MAXALG][32];     /* the sweep's algorithms, in the order of their first row */
    int nalg;
    int ps[MAXP], np;           /* the sweep's rank counts, ascending */
    const char *ref;            /* the reference every ratio is taken against ("" when the sweep has none) */
    int any_shm;                /* some rows ran on the shm transport (NAME@shm) */
    bm_params m, ms;            /* DIR/params.txt, DIR/params_shm.txt */
    int have_m, have_ms;
    sim_platform pl;            /* --sim: DIR/platform.txt */
    load_info load;             /* DIR/load.txt */
    int nnoisy;                 /* rows of the sweep whose repeats disagree */
    int agree[2];               /* rows timed with the agreement off ([0]) and on ([1]) (the CSV's agree column) */
    plan_row plans[MAXPLANS];   /* DIR/plans.csv */
    int nplans, have_plans;
    char plans_setup[1024];     /* DIR/plans_setup.txt: the configuration, then one line per plan left out */
    path_row path[MAXPATH];     /* DIR/trainer_path.csv: the trainer's own path at p = 2 */
    int npath;
    char ddp[160];              /* DIR/trainer_ddp.txt: DDP's side of the breakdown, or why it is not there */
} report;

static int is_reference(const char *name)
{
    const ck_algo *a = ck_algo_find(name);
    return a && (a->flags & CK_ALGO_REFERENCE);
}

/* The transport a row ran on: what follows '@' ("ring@shm", "ring@mpi":
 * the shm sweep's rows as its collbench reported them), "mpi" without one.
 * Rows are compared like with like: a shm sweep that fell back to MPI is
 * MPI, never "shm". */
static const char *transport_of(const char *name)
{
    const char *at = strrchr(name, '@');
    return at ? at + 1 : "mpi";
}
static int is_shm(const char *name) { return !strcmp(transport_of(name), "shm"); }
static int is_mpi(const char *name) { return !strcmp(transport_of(name), "mpi"); }

/* ------------------------------------------------------------ reading the folder's files */

/* Every file benchreport reads is written by collbench or the bench scripts;
 * one that was truncated, hand-edited or replaced is refused with its path,
 * line and column and exit status 1 — a report built from it would be wrong
 * without saying so. The rules (plots/README.md, "Data files"): text lines
 * ending in \n (\r\n accepted), no NUL bytes, no blank lines, a header row of
 * distinct column names, every row with as many comma-separated fields as
 * the header (no quoting), numbers as ck_parse_int / ck_parse_double read
 * them. */

static int bad(const char *path, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(const char *path, long line, const char *fmt, ...)
{
    if (line > 0) fprintf(stderr, "benchreport: %s:%ld: ", path, line);
    else fprintf(stderr, "benchreport: %s: ", path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return -1;
}

#define MAXCOLS 64

typedef struct {
    const char *path;
    FILE *f;
    char *buf;
    size_t cap;
    long line;
    char *v[MAXCOLS];
    int n;
} text_file;

static int tf_open(text_file *t, const char *path)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return bad(path, 0, "not a regular file (%s)", S_ISDIR(st.st_mode) ? "a directory" : "a FIFO, device or socket");
    if (!(t->f = fopen(path, "r"))) return bad(path, 0, "cannot open: %s", strerror(errno));
    return 0;
}

static void tf_close(text_file *t)
{
    if (t->f) fclose(t->f);
    free(t->buf);
    t->f = NULL;
    t->buf = NULL;
}

/* The next line, without its line end: 1, 0 at the end of the file, -1 after
 * saying what is wrong with it. */
static int tf_line(text_file *t, char **out)
{
    errno = 0;
    ssize_t len = getline(&t->buf, &t->cap, t->f);
    if (len < 0) {
        if (ferror(t->f)) return bad(t->path, t->line + 1, "read error: %s", strerror(errno ? errno : EIO));
        return 0;
    }
    t->line++;
    char *s = t->buf, *nul = memchr(s, '\0', (size_t)len);
    if (nul) return bad(t->path, t->line, "NUL byte at column %ld: binary data, not a text file", (long)(nul - s) + 1);
    if (s[len - 1] != '\n')
        return bad(t->path, t->line, "no line end: the file stops in the middle of this line (truncated?)");
    s[--len] = '\0';
    if (len && s[len - 1] == '\r') s[--len] = '\0';
    for (ssize_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
            return bad(t->path, t->line, "control character 0x%02X at column %ld: not a text file",
                       (unsigned char)s[i], (long)i + 1);
    *out = s;
    return 1;
}

/* A CSV line into t->v: -1 (said) when it holds more than MAXCOLS fields. */
static int tf_split(text_file *t, char *s)
{
    t->n = 0;
    for (;;) {
        if (t->n == MAXCOLS) return bad(t->path, t->line, "more than %d comma-separated fields", MAXCOLS);
        t->v[t->n++] = s;
        char *c = strchr(s, ',');
        if (!c) return 0;
        *c = '\0';
        s = c + 1;
    }
}

/* The next CSV line split into fields, checked against the header's count:
 * 1, 0 at the end, -1 (said). */
static int tf_row(text_file *t, int ncols)
{
    char *s;
    int rc = tf_line(t, &s);
    if (rc <= 0) return rc;
    if (!*s) return bad(t->path, t->line, "empty line (every line is a row of %d fields)", ncols);
    if (tf_split(t, s)) return -1;
    if (t->n != ncols)
        return bad(t->path, t->line, "%d field%s where the header has %d (%s)", t->n, t->n == 1 ? "" : "s", ncols,
                   t->n < ncols ? "a missing column, or a truncated line" : "an extra column, or a comma in a value");
    return 1;
}

/* The header: 0 with its fields in t->v, -1 (said). */
static int tf_header(text_file *t, const char *what)
{
    char *s;
    int rc = tf_line(t, &s);
    if (rc == 0) return bad(t->path, 0, "empty file: expected %s", what);
    if (rc < 0) return -1;
    size_t bom = strncmp(s, "\xEF\xBB\xBF", 3) ? 0 : 3;   /* a UTF-8 byte-order mark (a spreadsheet's export) */
    if (tf_split(t, s + bom)) return -1;
    for (int i = 0; i < t->n; i++) {
        if (!*t->v[i]) return bad(t->path, t->line, "header: column %d has no name (expected %s)", i + 1, what);
        for (int j = 0; j < i; j++)
            if (!strcmp(t->v[i], t->v[j]))
                return bad(t->path, t->line, "header: column '%s' appears twice (columns %d and %d)", t->v[i], j + 1, i + 1);
    }
    return 0;
}

static int col(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++) if (!strcmp(hdr[i], name)) return i;
    return -1;
}

/* What a field must hold. */
enum { F_NAME, F_PLACE, F_RANKS, F_COUNT, F_WRONG, F_NONNEG, F_MODEL, F_AGREE };

/* One field of the current row against its kind: 0, or -1 after the message
 * "path:line: column NAME (field K) 'VALUE': why". */
static int field(const text_file *t, int c, const char *name, int kind, double *num, char *str, size_t cap)
{
    const char *s = t->v[c];
    char why[160];
    long long iv;
    double dv = 0;
    int rc = 0;
    why[0] = '\0';
    switch (kind) {
    case F_NAME: {
        size_t len = strlen(s);
        if (!len) { snprintf(why, sizeof why, "empty"); rc = -1; break; }
        if (len >= cap) { snprintf(why, sizeof why, "longer than %zu characters", cap - 1); rc = -1; break; }
        if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+@") != len) {
            snprintf(why, sizeof why, "a name is letters, digits and _ - . + @");
            rc = -1;
            break;
        }
        snprintf(str, cap, "%s", s);
        break;
    }
    case F_PLACE:
        if (strcmp(s, "in") && strcmp(s, "out")) { snprintf(why, sizeof why, "expected in or out"); rc = -1; break; }
        snprintf(str, cap, "%s", s);
        break;
    case F_AGREE:
        if (strcmp(s, "on") && strcmp(s, "off")) { snprintf(why, sizeof why, "expected on or off"); rc = -1; break; }
        dv = !strcmp(s, "on");
        break;
    case F_RANKS: rc = ck_parse_int(s, 1, 1 << 24, &iv, why, sizeof why); dv = (double)iv; break;
    case F_COUNT: rc = ck_parse_int(s, 0, 1LL << 53, &iv, why, sizeof why); dv = (double)iv; break;
    case F_WRONG: rc = ck_parse_int(s, -1, LLONG_MAX, &iv, why, sizeof why); dv = (double)iv; break;
    case F_NONNEG: rc = ck_parse_double(s, 0, DBL_MAX, &dv, why, sizeof why); break;
    case F_MODEL:
        /* collbench writes nan (or inf) where an algorithm has no cost
         * function or no finite prediction: no model for that row. */
        if (!strcmp(s, "nan") || !strcmp(s, "-nan") || !strcmp(s, "inf")) { dv = NAN; break; }
        rc = ck_parse_double(s, 0, DBL_MAX, &dv, why, sizeof why);
        if (rc) snprintf(why + strlen(why), sizeof why - strlen(why), " (or nan: no model)");
        break;
    }
    if (rc) {
        char shown[48];
        snprintf(shown, sizeof shown, "%.40s%s", s, strlen(s) > 40 ? "..." : "");
        return bad(t->path, t->line, "column %s (field %d) '%s': %s", name, c + 1, shown, why);
    }
    if (num && kind != F_NAME && kind != F_PLACE) *num = dv;
    return 0;
}

/* The columns of a collbench CSV benchreport knows, and what each holds;
 * `need` marks those it cannot do without. topology.csv adds "platform". */
static const struct { const char *name; int kind, need; } csv_cols[] = {
    {"algo", F_NAME, 1},      {"p", F_RANKS, 1},        {"bytes", F_COUNT, 1},    {"count", F_COUNT, 0},
    {"dtype", F_NAME, 0},     {"op", F_NAME, 0},        {"place", F_PLACE, 1},    {"iters", F_COUNT, 0},
    {"time_us", F_NONNEG, 1}, {"min_us", F_NONNEG, 0},  {"max_us", F_NONNEG, 0},  {"algbw_gbs", F_NONNEG, 0},
    {"busbw_gbs", F_NONNEG, 1}, {"wrong", F_WRONG, 0},  {"model_us", F_MODEL, 1}, {"platform", F_NAME, 0},
    {"agree", F_AGREE, 0},    {"q1_us", F_NONNEG, 0},   {"q3_us", F_NONNEG, 0},
};
enum { NCSV = sizeof csv_cols / sizeof csv_cols[0] };

static int cmp_row(const void *a, const void *b)
{
    const row *x = *(const row *const *)a, *y = *(const row *const *)b;
    int c = strcmp(x->algo, y->algo);
    if (!c) c = (x->p > y->p) - (x->p < y->p);
    if (!c) c = (x->bytes > y->bytes) - (x->bytes < y->bytes);
    if (!c) c = strcmp(x->place, y->place);
    if (!c) c = strcmp(x->plat, y->plat);
    if (!c) c = (x->line > y->line) - (x->line < y->line);
    return c;
}

/* The fields of the current row of a collbench CSV into x (c: each known
 * column's index in the file, or -1): 0, or -1 (said). */
static int read_row(const text_file *t, const int *c, row *x, int *agree)
{
    memset(x, 0, sizeof *x);
    x->line = t->line;
    x->q1_us = x->q3_us = NAN;
    *agree = -1;
    for (int k = 0; k < NCSV; k++) {
        if (c[k] < 0) continue;
        double num = 0;
        char scratch[32], *str = scratch;
        size_t cap = sizeof scratch;
        const char *n = csv_cols[k].name;
        if (!strcmp(n, "algo")) { str = x->algo; cap = sizeof x->algo; }
        else if (!strcmp(n, "place")) { str = x->place; cap = sizeof x->place; }
        else if (!strcmp(n, "platform")) { str = x->plat; cap = sizeof x->plat; }
        if (field(t, c[k], n, csv_cols[k].kind, &num, str, cap)) return -1;
        if (!strcmp(n, "p")) x->p = (int)num;
        else if (!strcmp(n, "bytes")) x->bytes = num;
        else if (!strcmp(n, "time_us")) x->time_us = num;
        else if (!strcmp(n, "busbw_gbs")) x->busbw = num;
        else if (!strcmp(n, "model_us")) x->model_us = num;
        else if (!strcmp(n, "q1_us")) x->q1_us = num;
        else if (!strcmp(n, "q3_us")) x->q3_us = num;
        else if (!strcmp(n, "agree")) *agree = (int)num;
    }
    return 0;
}

/* Whether a point's repeats disagree beyond NOISY_IQR (a CSV without the
 * quartiles: not judged, never noisy). */
static int noisy(const row *x)
{
    return isfinite(x->q1_us) && isfinite(x->q3_us) && x->time_us > 0 &&
           (x->q3_us - x->q1_us) > NOISY_IQR * x->time_us;
}

/* A row of the main sweep adds its algorithm and its p to the report's
 * lists when they are new: 0, or -1 (said) when a list is full. */
static int note_algo_and_p(report *rep, const text_file *t, const row *x)
{
    int k;
    for (k = 0; k < rep->nalg && strcmp(rep->algos[k], x->algo); k++) {}
    if (k == rep->nalg) {
        if (rep->nalg == MAXALG)
            return bad(t->path, t->line, "more than %d algorithms (the most benchreport reports on)", MAXALG);
        snprintf(rep->algos[rep->nalg++], 32, "%s", x->algo);
    }
    for (k = 0; k < rep->np && rep->ps[k] != x->p; k++) {}
    if (k == rep->np) {
        if (rep->np == MAXP)
            return bad(t->path, t->line, "more than %d rank counts (the most benchreport reports on)", MAXP);
        rep->ps[rep->np++] = x->p;
    }
    return 0;
}

/* One measurement per algorithm, p, size and placement (and platform): a
 * second one would leave which of them the report shows to chance. 0, or
 * -1 (said). */
static int no_repeats(const char *path, const row *rows, int n)
{
    const row **ix = malloc((n ? (size_t)n : 1) * sizeof *ix);
    if (!ix) return bad(path, 0, "out of memory");
    for (int i = 0; i < n; i++) ix[i] = &rows[i];
    qsort(ix, (size_t)n, sizeof *ix, cmp_row);
    int rc = 0;
    for (int i = 1; i < n && !rc; i++) {
        const row *a = ix[i - 1], *b = ix[i];
        if (strcmp(a->algo, b->algo) || a->p != b->p || a->bytes != b->bytes || strcmp(a->place, b->place) ||
            strcmp(a->plat, b->plat))
            continue;
        rc = bad(path, b->line, "a second row for %s, p = %d, %.0f bytes, %s-of-place%s%s (the first is line %ld)",
                 b->algo, b->p, b->bytes, b->place, b->plat[0] ? ", platform " : "", b->plat, a->line);
    }
    free(ix);
    return rc;
}

/* Reads a collbench CSV: the main sweep into rep->rows, or (topology, which
 * needs its platform column) into rep->trows. 0, or -1 after saying what is
 * wrong. Only the main sweep lists its algorithms and rank counts. */
static int load_csv(report *rep, const char *path, int topology)
{
    row *dst = topology ? rep->trows : rep->rows;
    int *ndst = topology ? &rep->ntrows : &rep->nrows;
    text_file t;
    if (tf_open(&t, path)) return -1;
    int rc = -1, c[NCSV];
    if (tf_header(&t, "a collbench CSV header (algo,p,bytes,...)")) goto out;
    const int nh = t.n;
    /* A copy of the header (t's buffer holds the next line after this): a row
     * identical to it (two files joined with cat) is skipped. */
    char *hdr[MAXCOLS], hcopy[4096];
    size_t l = 0;
    for (int i = 0; i < nh; i++) {
        size_t k = strlen(t.v[i]) + 1;
        if (l + k > sizeof hcopy) { bad(path, 1, "header longer than %zu characters", sizeof hcopy - 1); goto out; }
        memcpy(hcopy + l, t.v[i], k);
        hdr[i] = hcopy + l;
        l += k;
    }
    for (int k = 0; k < NCSV; k++) {
        c[k] = col(hdr, nh, csv_cols[k].name);
        if (c[k] < 0 && (csv_cols[k].need || (topology && !strcmp(csv_cols[k].name, "platform")))) {
            bad(path, 1, "header: no column '%s' (a collbench --csv file starts with algo,p,bytes,...%s)",
                csv_cols[k].name, topology ? " and ends with platform" : "");
            goto out;
        }
    }
    for (;;) {
        int r = tf_row(&t, nh);
        if (r < 0) goto out;
        if (r == 0) break;
        int same = 1;
        for (int i = 0; i < nh && same; i++) same = !strcmp(t.v[i], hdr[i]);
        if (same) continue;   /* the header again: two files joined */
        if (*ndst == MAXROWS) { bad(path, t.line, "more than %d rows (the most benchreport reads)", MAXROWS); goto out; }
        row *x = &dst[*ndst];
        int agree;
        if (read_row(&t, c, x, &agree)) goto out;
        (*ndst)++;
        if (!topology && agree >= 0) rep->agree[agree]++;
        if (!topology && noisy(x)) rep->nnoisy++;
        if (!topology && note_algo_and_p(rep, &t, x)) goto out;
    }
    rc = no_repeats(path, dst, *ndst);
out:
    tf_close(&t);
    return rc;
}

static void sort_ints(int *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) { int tmp = v[j]; v[j] = v[j - 1]; v[j - 1] = tmp; }
}

static const row *find(const report *rep, const char *algo, int p, double bytes)
{
    for (int i = 0; i < rep->nrows; i++) {
        const row *x = &rep->rows[i];
        if (x->p == p && x->bytes == bytes && !strcmp(x->place, "out") && !strcmp(x->algo, algo)) return x;
    }
    return NULL;
}

/* The best hand-written algorithm (no reference) at (p, bytes), on any
 * transport (which < 0), the MPI one (0: NAME and NAME@mpi) or shm (1:
 * NAME@shm); a noisy point is not ranked. */
static const row *best_of(const report *rep, int p, double bytes, int which)
{
    const row *b = NULL;
    for (int a = 0; a < rep->nalg; a++) {
        const char *n = rep->algos[a];
        if (is_reference(n) || (which == 0 && !is_mpi(n)) || (which == 1 && !is_shm(n))) continue;
        const row *r = find(rep, rep->algos[a], p, bytes);
        if (r && r->time_us > 0 && !noisy(r) && (!b || r->time_us < b->time_us)) b = r;
    }
    return b;
}

/* The points at (p, bytes), out of place, whose repeats disagree: a verdict
 * from the best of them would rank chance. */
static int noisy_at(const report *rep, int p, double bytes)
{
    int n = 0;
    for (int i = 0; i < rep->nrows; i++) {
        const row *x = &rep->rows[i];
        if (x->p == p && x->bytes == bytes && !strcmp(x->place, "out") && noisy(x)) n++;
    }
    return n;
}
static const row *best_hand(const report *rep, int p, double bytes) { return best_of(rep, p, bytes, -1); }

static int has_p(const report *rep, int p)
{
    for (int i = 0; i < rep->np; i++) if (rep->ps[i] == p) return 1;
    return 0;
}

/* A size as the report writes it ("64 KB"), in a buffer of its own that
 * lasts to the end of the enclosing block, so that one printf can take
 * several. */
#define sz(b) bm_size_str((b), (char[32]){0}, 32)

/* Sorted distinct sizes measured at p (out-of-place). */
static int sizes_at(const report *rep, int p, double *out, int max)
{
    int n = 0;
    for (int i = 0; i < rep->nrows; i++) {
        if (rep->rows[i].p != p || strcmp(rep->rows[i].place, "out")) continue;
        int k;
        for (k = 0; k < n && out[k] != rep->rows[i].bytes; k++) {}
        if (k == n && n < max) out[n++] = rep->rows[i].bytes;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) { double t = out[j]; out[j] = out[j - 1]; out[j - 1] = t; }
    return n;
}

/* A target's line: MET or MISSED from its figures, NOT MEASURED without
 * them, or INCONCLUSIVE with the reason (unsure, from why_unsure) when the
 * figures cannot say. */
static void target(FILE *md, int met, int known, const char *unsure, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void target(FILE *md, int met, int known, const char *unsure, const char *what, const char *fmt, ...)
{
    if (known && unsure) fprintf(md, "- **INCONCLUSIVE** — %s  \n  inconclusive: %s. The figures: ", what, unsure);
    else fprintf(md, "- **%s** — %s  \n  ", known ? (met ? "MET" : "MISSED") : "NOT MEASURED", what);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(md, fmt, ap);
    va_end(ap);
    fprintf(md, "\n");
}

/* Why a target cannot be judged: the machine was loaded by other work, or
 * nnoisy of the points it rests on are noisy. NULL when it can be. */
static const char *why_unsure(const report *rep, int nnoisy, char *buf, size_t cap)
{
    if (rep->load.loaded) snprintf(buf, cap, "the machine was loaded (%s)", rep->load.desc);
    else if (nnoisy)
        snprintf(buf, cap, "the repeats of %d point%s it rests on disagree (the middle half of the iterations spread "
                 "over more than %.0f %% of the median)", nnoisy, nnoisy == 1 ? "" : "s", 100 * NOISY_IQR);
    else return NULL;
    return buf;
}

/* DIR/trainer.csv (scripts/bench_trainer.sh, scripts/sim-bench.sh): shown as
 * a table. Checked before summary.md is begun: the columns the scripts write
 * hold what they should, every row has the header's fields, no algorithm and
 * p twice, and no '|' (it would split a cell of the table); NaN stands for a
 * run that failed. 0, or -1 (said). */
#define MAXTROWS 4096
static int check_table(const char *path)
{
    static const struct { const char *name; int kind; } known[] = {
        {"algo", F_NAME}, {"p", F_RANKS}, {"samples_per_s", F_NONNEG}, {"efficiency", F_NONNEG},
        {"comm_fraction", F_NONNEG}, {"allreduce_bytes_per_step", F_NONNEG},
    };
    enum { NK = sizeof known / sizeof known[0] };
    text_file t;
    if (tf_open(&t, path)) return -1;
    int rc = -1, c[NK], n = 0;
    struct { char algo[32]; int p; long line; } *seen = malloc(MAXTROWS * sizeof *seen);
    if (!seen) { bad(path, 0, "out of memory"); goto out; }
    if (tf_header(&t, "a header row (algo,p,samples_per_s,...)")) goto out;
    const int nh = t.n;
    for (int i = 0; i < nh; i++)
        if (strchr(t.v[i], '|')) { bad(path, 1, "header: column %d holds a '|'", i + 1); goto out; }
    for (int k = 0; k < NK; k++) c[k] = col(t.v, nh, known[k].name);
    for (;;) {
        int r = tf_row(&t, nh);
        if (r < 0) goto out;
        if (r == 0) break;
        if (n == MAXTROWS) { bad(path, t.line, "more than %d rows (the most benchreport shows)", MAXTROWS); goto out; }
        for (int i = 0; i < nh; i++)
            if (strchr(t.v[i], '|')) { bad(path, t.line, "field %d holds a '|'", i + 1); goto out; }
        char algo[32] = "";
        seen[n].p = 0;
        for (int k = 0; k < NK; k++) {
            if (c[k] < 0) continue;
            char scratch[32];
            double num = 0;
            /* NaN: scripts/bench_trainer.sh's mark of a run that failed. */
            if (known[k].kind == F_NONNEG && (!strcmp(t.v[c[k]], "NaN") || !strcmp(t.v[c[k]], "nan"))) continue;
            if (field(&t, c[k], known[k].name, known[k].kind, &num, k == 0 ? algo : scratch, sizeof scratch)) goto out;
            if (k == 1) seen[n].p = (int)num;
        }
        if (c[0] >= 0 && c[1] >= 0) {
            for (int i = 0; i < n; i++)
                if (seen[i].p == seen[n].p && !strcmp(seen[i].algo, algo)) {
                    bad(path, t.line, "a second row for %s at p = %d (the first is line %ld)", algo, seen[n].p,
                        seen[i].line);
                    goto out;
                }
            snprintf(seen[n].algo, sizeof seen[n].algo, "%s", algo);
        }
        seen[n++].line = t.line;
    }
    rc = 0;
out:
    free(seen);
    tf_close(&t);
    return rc;
}

static void csv_as_table(FILE *md, const char *path)
{
    text_file t;
    if (tf_open(&t, path)) return;
    char *s;
    for (int ln = 0; tf_line(&t, &s) > 0; ln++) {
        if (tf_split(&t, s + (ln == 0 && !strncmp(s, "\xEF\xBB\xBF", 3) ? 3 : 0))) break;
        fprintf(md, "|");
        for (int i = 0; i < t.n; i++) fprintf(md, " %s |", t.v[i]);
        fprintf(md, "\n");
        if (ln == 0) {
            fprintf(md, "|");
            for (int i = 0; i < t.n; i++) fprintf(md, "---|");
            fprintf(md, "\n");
        }
    }
    tf_close(&t);
}

/* ------------------------------------------------------------ --sim */

/* The next "key value" line of a small settings file (platform.txt,
 * load.txt): a byte-order mark, blank lines and lines starting with # are
 * skipped; the key and the value (from its first non-blank) cut apart.
 * 1, 0 at the end, -1 (said). */
static int key_line(text_file *t, char **key, char **val)
{
    char *s;
    for (int r; (r = tf_line(t, &s)) != 0;) {
        if (r < 0) return -1;
        if (t->line == 1 && !strncmp(s, "\xEF\xBB\xBF", 3)) s += 3;
        s += strspn(s, " \t");
        if (!*s || *s == '#') continue;
        char *v = s + strcspn(s, " \t");
        if (*v) *v++ = '\0';
        *key = s;
        *val = v + strspn(v, " \t");
        return 1;
    }
    return 0;
}

/* DIR/platform.txt ("key value" lines, written by scripts/sim-bench.sh): the
 * simulated cluster the crossbar sweeps ran on. Every key once: name, desc,
 * alpha_us, bw_gbs, speed_gflops (the numbers finite and above 0); blank
 * lines and lines starting with # are skipped. 0, or -1 (said). */
static int load_platform(const char *path, sim_platform *pl)
{
    memset(pl, 0, sizeof *pl);
    const struct { const char *key; char *str; size_t cap; double *num; } keys[] = {
        {"name", pl->name, sizeof pl->name, NULL},   {"desc", pl->desc, sizeof pl->desc, NULL},
        {"alpha_us", NULL, 0, &pl->alpha_us},         {"bw_gbs", NULL, 0, &pl->bw_gbs},
        {"speed_gflops", NULL, 0, &pl->speed_gf},
    };
    enum { NKEY = sizeof keys / sizeof keys[0] };
    long at[NKEY] = {0};
    text_file t;
    if (tf_open(&t, path)) return -1;
    int rc = -1;
    char *s, *v;
    for (int r; (r = key_line(&t, &s, &v)) != 0;) {
        if (r < 0) goto out;
        size_t vl = strlen(v);
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) v[--vl] = '\0';
        int k = 0;
        while (k < NKEY && strcmp(s, keys[k].key)) k++;
        if (k == NKEY) {
            bad(path, t.line, "unknown key '%.40s' (expected name, desc, alpha_us, bw_gbs, speed_gflops)", s);
            goto out;
        }
        if (at[k]) { bad(path, t.line, "%s given twice (first on line %ld)", s, at[k]); goto out; }
        at[k] = t.line;
        if (!*v) { bad(path, t.line, "%s has no value (expected '%s VALUE')", s, s); goto out; }
        if (keys[k].str) {
            if (vl >= keys[k].cap) { bad(path, t.line, "%s longer than %zu characters", s, keys[k].cap - 1); goto out; }
            if (strchr(v, '|')) { bad(path, t.line, "%s holds a '|'", s); goto out; }
            memcpy(keys[k].str, v, vl + 1);
        } else {
            char why[128] = "";
            if (ck_parse_double(v, 0, DBL_MAX, keys[k].num, why, sizeof why) || !(*keys[k].num > 0)) {
                bad(path, t.line, "%s '%.40s': %s", s, v, *why ? why : "must be above 0");
                goto out;
            }
        }
    }
    for (int k = 0; k < NKEY; k++)
        if (!at[k]) { bad(path, 0, "no %s line (sim-bench writes name, desc, alpha_us, bw_gbs and speed_gflops)", keys[k].key); goto out; }
    rc = 0;
out:
    tf_close(&t);
    return rc;
}

/* Whether something is at path (a file that cannot be read is there: it is
 * an error to report, not a file to skip). */
static int present(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 || errno != ENOENT;
}

/* The numbers after a load.txt key: want of them, each >= 0. 0, or -1 (said). */
static int load_numbers(const text_file *t, const char *key, char *v, double *out, int want)
{
    char *save = NULL, why[128] = "";
    int n = 0;
    for (char *w = strtok_r(v, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == want) return bad(t->path, t->line, "%s: more than %d number%s", key, want, want == 1 ? "" : "s");
        if (ck_parse_double(w, 0, 1e9, &out[n++], why, sizeof why))
            return bad(t->path, t->line, "%s '%.40s': %s", key, w, why);
    }
    if (n < want) return bad(t->path, t->line, "%s: %d number%s, expected %d", key, n, n == 1 ? "" : "s", want);
    return 0;
}

/* load.txt's keys, in the order load_load reads them into. */
static const char *const load_keys[] = {"cores", "before", "after", "ranks"};

/* The index of load.txt's key s, seen first on this line (at[]: where each
 * was seen): or -1 (said). */
static int load_key(const text_file *t, const char *s, long at[4])
{
    int k = 0;
    while (k < 4 && strcmp(s, load_keys[k])) k++;
    if (k == 4) return bad(t->path, t->line, "unknown key '%.40s' (expected cores, before, after, ranks)", s);
    if (at[k]) return bad(t->path, t->line, "%s given twice (first on line %ld)", s, at[k]);
    at[k] = t->line;
    return k;
}

/* DIR/load.txt (scripts/bench.sh), "key numbers" lines: cores N, before L1
 * L5 L15, after L1 L5 L15 (absent when the sweeps did not end), ranks P (the
 * most ranks the sweeps ran). The load of other work is the 1-minute
 * average before the sweeps, or after them less the sweeps' own ranks,
 * whichever is higher; at half the cores or more the machine was loaded.
 * 0 (l->have: 0 when there is no file), or -1 (said). */
static int load_load(const char *path, load_info *l)
{
    memset(l, 0, sizeof *l);
    if (!present(path)) return 0;
    long at[4] = {0};
    double one[2];
    text_file t;
    char *s, *v;
    int r, rc = -1;
    if (tf_open(&t, path)) return -1;
    while ((r = key_line(&t, &s, &v)) > 0) {
        const int k = load_key(&t, s, at);
        if (k < 0) goto out;
        double *dst = k == 1 ? l->before : k == 2 ? l->after : one;
        if (load_numbers(&t, s, v, dst, k == 1 || k == 2 ? 3 : 1)) goto out;
        if (k == 0) l->cores = one[0];
        if (k == 3) l->ranks = one[0];
        if ((k == 0 || k == 3) && !(one[0] >= 1)) { bad(path, t.line, "%s must be at least 1", s); goto out; }
    }
    if (r < 0) goto out;
    for (int k = 0; k < 4; k++)
        if (!at[k] && k != 2) {
            bad(path, 0, "no %s line (bench.sh writes cores, before, after, ranks)", load_keys[k]);
            goto out;
        }
    l->have = 1;
    l->has_after = at[2] != 0;
    l->other = l->before[0];
    if (l->has_after && l->after[0] - l->ranks > l->other) l->other = l->after[0] - l->ranks;
    l->loaded = l->other >= l->cores / 2;
    snprintf(l->desc, sizeof l->desc, "load %.1f on %.0f cores", l->other, l->cores);
    rc = 0;
out:
    tf_close(&t);
    return rc;
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

/* --sim's checks, one PASS/FAIL line each with the figures; each returns 1
 * when it failed. */

/* The platform means what its file says: the ping-pong recovers it. */
static int check_pingpong(FILE *md, const report *rep)
{
    const bm_params *m = &rep->m;
    const sim_platform *pl = &rep->pl;
    double ea = fabs(m->alpha * 1e6 / pl->alpha_us - 1), bw = m->beta > 0 ? 1e-9 / m->beta : 0,
           eb = fabs(bw / pl->bw_gbs - 1);
    int ok = ea <= 0.05 && eb <= 0.05;
    check_line(md, ok, "ping-pong recovers the platform's α and β (within 5 %)",
               "α = %.3f µs (platform %.3f µs), 1/β = %.3f GB/s (platform %.3f GB/s)", m->alpha * 1e6,
               pl->alpha_us, bw, pl->bw_gbs);
    return !ok;
}

/* --fastest SIZE:ALGO: b is the size, name the algorithm. */
static int check_fastest(FILE *md, const report *rep, double b, const char *name)
{
    const sim_checks *ck = &rep->o.ck;
    char buf[4096];
    const row *best = best_hand(rep, ck->p, b), *want = find(rep, name, ck->p, b),
              *ref = find(rep, rep->ref, ck->p, b);
    int ok = best && want && want->time_us <= best->time_us;
    size_t l = 0;
    buf[0] = 0;
    for (int a = 0; a < rep->nalg; a++) {
        const row *r = find(rep, rep->algos[a], ck->p, b);
        if (!r || is_reference(rep->algos[a])) continue;
        l += (size_t)snprintf(buf + l, l < sizeof buf ? sizeof buf - l : 0, "%s%s %.2f µs", l ? ", " : "",
                              rep->algos[a], r->time_us);
        if (l >= sizeof buf) break;
    }
    char what[640];
    snprintf(what, sizeof what, "%s is the fastest algorithm at %s", name, sz(b));
    check_line(md, ok, what, "%s; fastest: %s", buf[0] ? buf : "no results at this size", best ? best->algo : "-");
    if (ref) fprintf(md, "  (reference %s%s%s: %.2f µs)\n", rep->ref, ck->ref_label ? ", " : "",
                     ck->ref_label ? ck->ref_label : "", ref->time_us);
    return !ok;
}

/* --near-link SIZE:A,B: b is the size, names the list (cut up here). */
static int check_near_link(FILE *md, const report *rep, double b, char *names)
{
    char buf[4096];
    size_t l = 0;
    int ok = 1;
    buf[0] = 0;
    for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        const row *r = find(rep, n, rep->o.ck.p, b);
        double ratio = r ? r->busbw / rep->pl.bw_gbs : 0;
        if (!r || ratio < 0.85 || ratio > 1.15) ok = 0;
        l += (size_t)snprintf(buf + l, l < sizeof buf ? sizeof buf - l : 0, "%s%s %.3f GB/s = %.1f %%",
                              l ? ", " : "", n, r ? r->busbw : 0, 100 * ratio);
        if (l >= sizeof buf) break;
    }
    char what[640];
    snprintf(what, sizeof what, "busbw within 15 %% of the link bandwidth (%.3f GB/s) at %s", rep->pl.bw_gbs, sz(b));
    check_line(md, ok, what, "%s", buf);
    return !ok;
}

/* --model-algos A,B,.. */
static int check_model(FILE *md, const report *rep)
{
    const sim_checks *ck = &rep->o.ck;
    char buf[4096], names[512];
    if (!ck->model) return 0;
    snprintf(names, sizeof names, "%s", ck->model);
    size_t l = 0;
    int ok = 1;
    buf[0] = 0;
    for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        double worst = -1, wb = 0, ws = 0, wm = 0;
        for (int i = 0; i < rep->nrows; i++) {
            const row *x = &rep->rows[i];
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
    check_line(md, ok, "the model (each algorithm's cost function) within 25 % of the simulation at every size",
               "%s", buf);
    return !ok;
}

/* The checks the script names. Returns the failures. */
static int sim_acceptance(FILE *md, const report *rep)
{
    const sim_checks *ck = &rep->o.ck;
    int fails = 0;
    double b;
    char names[512];
    fprintf(md, "## Acceptance checks (p = %d, %s)\n\n", ck->p, rep->pl.name);
    if (rep->have_m) fails += check_pingpong(md, rep);
    if (ck->fastest && !size_and_names(ck->fastest, &b, names, sizeof names)) fails += check_fastest(md, rep, b, names);
    if (ck->near_link && !size_and_names(ck->near_link, &b, names, sizeof names))
        fails += check_near_link(md, rep, b, names);
    fails += check_model(md, rep);
    fprintf(md, "\n");
    return fails;
}

/* The fastest hand-written algorithm at each size, as simulated: where it changes, per p. */
static void sim_crossovers(FILE *md, const report *rep)
{
    fprintf(md, "## The fastest algorithm by message size and p (simulated)\n\n"
                "Among the hand-written algorithms; each row: the fastest at the smallest size, then where "
                "another takes over. (The model's prediction of the same is further down.)\n\n"
                "| p | fastest algorithm by message size |\n|---|---|\n");
    for (int k = 0; k < rep->np; k++) {
        double s[256];
        int n = sizes_at(rep, rep->ps[k], s, 256);
        const char *cur = NULL;
        fprintf(md, "| %d |", rep->ps[k]);
        for (int i = 0; i < n; i++) {
            const row *b = best_hand(rep, rep->ps[k], s[i]);
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
static void sim_model_table(FILE *md, const report *rep)
{
    fprintf(md, "## Model vs simulation\n\nThe largest deviation |simulated / model − 1| over all sizes, per "
                "algorithm and p (the model: each algorithm's cost function with the α, β, γ above; model_pN.png "
                "draws it by size).\n\n| algorithm |");
    for (int k = 0; k < rep->np; k++) fprintf(md, " p = %d |", rep->ps[k]);
    fprintf(md, "\n|---|");
    for (int k = 0; k < rep->np; k++) fprintf(md, "---|");
    fprintf(md, "\n");
    for (int a = 0; a < rep->nalg; a++) {
        if (is_reference(rep->algos[a])) continue;
        fprintf(md, "| %s |", rep->algos[a]);
        for (int k = 0; k < rep->np; k++) {
            double worst = -1;
            for (int i = 0; i < rep->nrows; i++) {
                const row *x = &rep->rows[i];
                if (strcmp(x->algo, rep->algos[a]) || x->p != rep->ps[k] || strcmp(x->place, "out") ||
                    !(x->model_us > 0))
                    continue;
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
static void sim_topology_at(FILE *md, const report *rep, const char *crossbar, int tp)
{
    char plats[8][32];
    int nplat = 0;
    for (int i = 0; i < rep->ntrows; i++) {
        int k;
        if (rep->trows[i].p != tp) continue;
        for (k = 0; k < nplat && strcmp(plats[k], rep->trows[i].plat); k++) {}
        if (k == nplat && nplat < 8) snprintf(plats[nplat++], 32, "%s", rep->trows[i].plat);
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
        for (int a = 0; a < rep->nalg; a++) {
            int any = 0;
            for (int i = 0; i < rep->ntrows && !any; i++)
                any = rep->trows[i].p == tp && !strcmp(rep->trows[i].algo, rep->algos[a]);
            if (!any) continue;
            const row *x = find(rep, rep->algos[a], tp, at[j]);
            fprintf(md, "| %s |", rep->algos[a]);
            if (x) fprintf(md, " %.3f |", x->busbw); else fprintf(md, " - |");
            double first = NAN, last = NAN;
            for (int k = 0; k < nplat; k++) {
                const row *r = NULL;
                for (int i = 0; i < rep->ntrows && !r; i++) {
                    const row *t = &rep->trows[i];
                    if (t->p == tp && !strcmp(t->algo, rep->algos[a]) && !strcmp(t->plat, plats[k]) &&
                        t->bytes == at[j] && !strcmp(t->place, "out"))
                        r = t;
                }
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

static void sim_topology(FILE *md, const report *rep, const char *crossbar)
{
    int done[MAXP], nd = 0;
    for (int i = 0; i < rep->ntrows; i++) {
        int k;
        for (k = 0; k < nd && done[k] != rep->trows[i].p; k++) {}
        if (k < nd || nd == MAXP) continue;
        done[nd++] = rep->trows[i].p;
        sim_topology_at(md, rep, crossbar, rep->trows[i].p);
    }
}

/* A model file (collbench --save-model): 1 when loaded, 0 when there is none,
 * -1 after saying what is wrong with the one there is. */
static int load_params(const char *path, bm_params *m)
{
    struct stat st;
    char err[512];
    if (!present(path)) return 0;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return bad(path, 0, "not a regular file");
    if (bm_params_load(path, m, err, sizeof err)) {
        fprintf(stderr, "benchreport: %s\n", err);
        return -1;
    }
    return 1;
}

/* The algorithms a check names (ALGO[,ALGO..], at most max): each one the
 * registry knows (NAME@shm: the shm transport's row of NAME), none empty and
 * none twice. A check of no algorithm would pass without looking at
 * anything, and a misspelt one fail without saying why. 0, or -1 (said). */
static int check_names(const char *opt, const char *list, int max)
{
    char buf[512], *item[MAXALG + 1];
    if (strlen(list) >= sizeof buf) return bad(opt, 0, "'%s': too long", list);
    snprintf(buf, sizeof buf, "%s", list);
    int n = 0;
    for (char *s = buf, *next; s; s = next) {
        next = strchr(s, ',');
        if (next) *next++ = '\0';
        if (!*s) return bad(opt, 0, "'%s': an empty name in the list", list);
        char *at = is_shm(s) ? strrchr(s, '@') : NULL;
        if (at) *at = '\0';
        int known = ck_algo_find(s) != NULL;
        if (at) *at = '@';
        if (!known) return bad(opt, 0, "'%s': no algorithm '%s' in the registry", list, s);
        for (int k = 0; k < n; k++)
            if (!strcmp(item[k], s)) return bad(opt, 0, "'%s': '%s' given twice", list, s);
        if (n == max) return bad(opt, 0, "'%s': %s", list, max == 1 ? "one algorithm only" : "too many algorithms");
        item[n++] = s;
    }
    return 0;
}

/* ------------------------------------------------------------ the command line */

static const char usage[] =
    "usage: benchreport --dir DIR [--info TEXT]\n"
    "       benchreport --sim --dir DIR [--info TEXT] [--check-p P] [--fastest SIZE:ALGO]\n"
    "                   [--near-link SIZE:ALGO[,ALGO..]] [--model-algos ALGO[,ALGO..]] [--ref-label TEXT]\n";

static const ck_opt options[] = {
    {.name = "--dir", .type = CK_OPT_STR, .off = offsetof(report_opts, dir), .arg = "DIR"},
    {.name = "--info", .type = CK_OPT_STR, .off = offsetof(report_opts, info), .arg = "TEXT"},
    {.name = "--sim", .type = CK_OPT_FLAG, .off = offsetof(report_opts, sim)},
    {.name = "--check-p", .type = CK_OPT_INT, .off = offsetof(report_opts, ck.p), .lo = 1, .hi = 1 << 20, .arg = "P"},
    {.name = "--fastest", .type = CK_OPT_STR, .off = offsetof(report_opts, ck.fastest), .arg = "SIZE:ALGO"},
    {.name = "--near-link", .type = CK_OPT_STR, .off = offsetof(report_opts, ck.near_link),
     .arg = "SIZE:ALGO[,ALGO..]"},
    {.name = "--model-algos", .type = CK_OPT_STR, .off = offsetof(report_opts, ck.model), .arg = "ALGO[,ALGO..]"},
    {.name = "--ref-label", .type = CK_OPT_STR, .off = offsetof(report_opts, ck.ref_label), .arg = "TEXT"},
    {NULL},
};

/* The command line into o: 0, or the exit status 2 after saying why not. */
static int parse_args(int argc, char **argv, report_opts *o)
{
    *o = (report_opts){.info = "", .ck = {.p = 64}};
    char err[256];
    int rc = ck_opt_parse(options, argc, argv, o, NULL, err, sizeof err);
    if (rc == CK_OPT_BAD) fprintf(stderr, "benchreport: %s\n", err);
    if (rc != CK_OPT_RUN || !o->dir) { fprintf(stderr, "%s", usage); return 2; }
    if (!*o->dir) { fprintf(stderr, "benchreport: --dir '': no folder named (it would read /sweep.csv)\n"); return 2; }
    const sim_checks *ck = &o->ck;
    double b_;
    char n_[512];
    if ((ck->fastest && size_and_names(ck->fastest, &b_, n_, sizeof n_)) ||
        (ck->near_link && size_and_names(ck->near_link, &b_, n_, sizeof n_))) {
        fprintf(stderr, "benchreport: --fastest and --near-link take SIZE:ALGO (e.g. 1K:rd, 16M:ring,rabenseifner)\n");
        return 2;
    }
    if ((ck->fastest || ck->near_link || ck->model) && !o->sim) {
        fprintf(stderr, "benchreport: --fastest, --near-link and --model-algos are checks of a --sim report\n");
        return 2;
    }
    if ((ck->fastest && check_names("--fastest", strchr(ck->fastest, ':') + 1, 1)) ||
        (ck->near_link && check_names("--near-link", strchr(ck->near_link, ':') + 1, MAXALG)) ||
        (ck->model && check_names("--model-algos", ck->model, MAXALG)))
        return 2;
    return 0;
}

/* The columns of DIR/plans.csv, every one needed: the plan's name and shape,
 * then its figures (plan_row.fig, in this order). */
static const char *const plan_cols[] = {"plan", "p", "tp", "pp", "dp", "step_s", "samples_per_s", "param_bytes",
                                        "grad_bytes", "optim_state_bytes", "activation_bytes", "peak_rss_bytes",
                                        "coll_bytes_per_step"};
enum { NPLANCOL = sizeof plan_cols / sizeof plan_cols[0], PLAN_FIG0 = 5 };

/* One row of plans.csv into x: the shape whole numbers with p = tp x pp x
 * dp, the figures >= 0 or NaN (bench_plans.sh's mark of a run that
 * failed). 0, or -1 (said). */
static int read_plan(const text_file *t, const int *c, plan_row *x)
{
    double v[PLAN_FIG0];
    if (field(t, c[0], plan_cols[0], F_NAME, NULL, x->plan, sizeof x->plan)) return -1;
    for (int k = 1; k < PLAN_FIG0; k++)
        if (field(t, c[k], plan_cols[k], F_RANKS, &v[k], NULL, 0)) return -1;
    x->p = (int)v[1], x->tp = (int)v[2], x->pp = (int)v[3], x->dp = (int)v[4];
    if ((long long)x->tp * x->pp * x->dp != x->p)
        return bad(t->path, t->line, "plan %s: p = %d is not tp x pp x dp = %d x %d x %d", x->plan, x->p, x->tp, x->pp,
                   x->dp);
    for (int k = PLAN_FIG0; k < NPLANCOL; k++) {
        double *f = &x->fig[k - PLAN_FIG0];
        if (!strcmp(t->v[c[k]], "NaN")) *f = NAN;
        else if (field(t, c[k], plan_cols[k], F_NONNEG, f, NULL, 0)) return -1;
    }
    return 0;
}

/* DIR/plans.csv into rep->plans, and DIR/plans_setup.txt's lines (optional)
 * into rep->plans_setup. Absent: no section. 0, or -1 (said). */
static int load_plans(report *rep, const char *path, const char *setup)
{
    if (!present(path)) return 0;
    text_file t;
    if (tf_open(&t, path)) return -1;
    int rc = -1, c[NPLANCOL];
    if (tf_header(&t, "a header row (plan,p,tp,pp,dp,step_s,...)")) goto out;
    const int nh = t.n;
    for (int k = 0; k < NPLANCOL; k++)
        if ((c[k] = col(t.v, nh, plan_cols[k])) < 0) {
            bad(path, 1, "header: no column '%s' (scripts/bench_plans.sh writes plan,p,tp,pp,dp,step_s,...)",
                plan_cols[k]);
            goto out;
        }
    for (int r; (r = tf_row(&t, nh)) != 0;) {
        if (r < 0) goto out;
        if (rep->nplans == MAXPLANS) { bad(path, t.line, "more than %d plans", MAXPLANS); goto out; }
        plan_row *x = &rep->plans[rep->nplans];
        if (read_plan(&t, c, x)) goto out;
        for (int i = 0; i < rep->nplans; i++)
            if (!strcmp(rep->plans[i].plan, x->plan) && rep->plans[i].p == x->p) {
                bad(path, t.line, "a second row for plan %s at p = %d", x->plan, x->p);
                goto out;
            }
        rep->nplans++;
    }
    rc = 0;
    rep->have_plans = 1;
out:
    tf_close(&t);
    if (rc || !present(setup)) return rc;
    char *s;
    size_t l = 0;
    if (tf_open(&t, setup)) return -1;
    while ((rc = tf_line(&t, &s)) > 0 && l + strlen(s) + 2 < sizeof rep->plans_setup)
        l += (size_t)snprintf(rep->plans_setup + l, sizeof rep->plans_setup - l, "%s\n", s);
    tf_close(&t);
    return rc < 0 ? -1 : 0;
}

/* One row of trainer_path.csv into x: the names, p and the byte and call
 * counts whole, the figures >= 0 or NaN (not measured). 0, or -1 (said). */
static int read_path(const text_file *t, const int *c, path_row *x)
{
    char *names[3] = {x->mode, x->algo, x->transport};
    double v[PATH_FIG0];
    for (int k = 0; k < PATH_FIG0; k++)
        if (field(t, c[k], path_cols[k], k < 3 ? F_NAME : k == 3 ? F_RANKS : F_COUNT, &v[k], k < 3 ? names[k] : NULL,
                  sizeof x->mode))
            return -1;
    x->p = (int)v[3], x->bytes = v[4], x->calls = (int)v[5];
    int rc = 0;
    for (int k = PATH_FIG0; k < NPATHCOL && !rc; k++) {
        const char *s = t->v[c[k]];
        double *f = &x->fig[k - PATH_FIG0];
        *f = NAN;   /* NaN or nan: not measured */
        if (strcmp(s, "NaN") && strcmp(s, "nan")) rc = field(t, c[k], path_cols[k], F_NONNEG, f, NULL, 0);
    }
    return rc;
}

/* The header of trainer_path.csv: each column's index into c. 0, or -1 (said). */
static int path_header(text_file *t, int *c)
{
    if (tf_header(t, "a header row (mode,algo,transport,p,...)")) return -1;
    for (int k = 0; k < NPATHCOL; k++)
        if ((c[k] = col(t->v, t->n, path_cols[k])) < 0)
            return bad(t->path, 1, "header: no column '%s' (scripts/bench_trainer.sh writes mode,algo,transport,"
                       "p,...)", path_cols[k]);
    return 0;
}

/* DIR/trainer_path.csv into rep->path, and DIR/trainer_ddp.txt's first line
 * into rep->ddp. Absent: no section. 0, or -1 (said). */
static int load_path(report *rep, const char *path, const char *ddp)
{
    text_file t;
    int c[NPATHCOL], rc = -1, r;
    if (!present(path)) return 0;
    if (tf_open(&t, path)) return -1;
    if (path_header(&t, c)) goto done;
    const int nh = t.n;
    while ((r = tf_row(&t, nh)) > 0) {
        if (rep->npath == MAXPATH) { bad(path, t.line, "more than %d rows", MAXPATH); goto done; }
        if (read_path(&t, c, &rep->path[rep->npath])) goto done;
        rep->npath++;
    }
    rc = r;
done:
    tf_close(&t);
    snprintf(rep->ddp, sizeof rep->ddp, "not measured (no trainer_ddp.txt)");
    char *s;
    if (rc || !present(ddp)) return rc;
    if (tf_open(&t, ddp)) return -1;
    if ((rc = tf_line(&t, &s)) > 0 && *s) snprintf(rep->ddp, sizeof rep->ddp, "%s", s);
    tf_close(&t);
    return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ loading the folder */

static const char *in_dir(char *path, size_t cap, const report *rep, const char *name)
{
    snprintf(path, cap, "%s/%s", rep->o.dir, name);
    return path;
}

/* The simulated platform, and the fat trees' results (topology.csv: empty
 * when none of the fat-tree runs gave results). 0, or -1 (said). */
static int load_sim(report *rep)
{
    char path[4096];
    struct stat st;
    if (load_platform(in_dir(path, sizeof path, rep, "platform.txt"), &rep->pl)) return -1;
    in_dir(path, sizeof path, rep, "topology.csv");
    if (present(path) && !(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) && load_csv(rep, path, 1))
        return -1;
    return 0;
}

/* Every file of the folder, checked before anything is written: 0, or -1
 * (said). */
static int load_report(report *rep)
{
    char path[4096];
    if (load_csv(rep, in_dir(path, sizeof path, rep, "sweep.csv"), 0)) return -1;
    if (!rep->nrows) { fprintf(stderr, "benchreport: no results in %s (a header and no rows)\n", path); return -1; }
    sort_ints(rep->ps, rep->np);
    if (rep->o.sim && load_sim(rep)) return -1;
    static const char *const tables[] = {"trainer.csv", "trainer_gpu.csv"};
    for (int i = 0; i < 2; i++)
        if (present(in_dir(path, sizeof path, rep, tables[i])) && check_table(path)) return -1;
    rep->ref = "";
    for (int a = rep->nalg - 1; a >= 0; a--)
        if (is_reference(rep->algos[a])) rep->ref = rep->algos[a];
    if ((rep->have_m = load_params(in_dir(path, sizeof path, rep, "params.txt"), &rep->m)) < 0) return -1;
    if (!rep->have_m) fprintf(stderr, "benchreport: %s: not there (model sections skipped)\n", path);
    if ((rep->have_ms = load_params(in_dir(path, sizeof path, rep, "params_shm.txt"), &rep->ms)) < 0) return -1;
    if (load_load(in_dir(path, sizeof path, rep, "load.txt"), &rep->load)) return -1;
    char setup[4096];
    if (load_plans(rep, in_dir(path, sizeof path, rep, "plans.csv"), in_dir(setup, sizeof setup, rep, "plans_setup.txt")))
        return -1;
    if (load_path(rep, in_dir(path, sizeof path, rep, "trainer_path.csv"), in_dir(setup, sizeof setup, rep,
                                                                                   "trainer_ddp.txt")))
        return -1;
    for (int a = 0; a < rep->nalg; a++) rep->any_shm |= is_shm(rep->algos[a]);
    return 0;
}

/* ------------------------------------------------------------ scaling.csv */

/* DIR/scaling.csv, for the plot: at the size nearest 16 MB, per algorithm
 * and p, the speedup and efficiency against the smallest p. */
static void write_scaling(const report *rep)
{
    double S = 0, sz0[256];
    int n = sizes_at(rep, rep->ps[0], sz0, 256);
    for (int i = 0; i < n; i++) if (sz0[i] <= 16.0 * (1 << 20)) S = sz0[i];
    if (!S && n) S = sz0[0];
    char path[4096];
    FILE *sc = fopen(in_dir(path, sizeof path, rep, "scaling.csv"), "w");
    if (!sc) return;
    fprintf(sc, "algo,p,bytes,time_us,busbw_gbs,speedup,efficiency,vs_ref\n");
    for (int a = 0; a < rep->nalg; a++) {
        /* the base is the smallest p >= 2 (p = 1 moves no data: its busbw is 0) */
        const row *base = NULL;
        for (int k = 0; k < rep->np && !base; k++) if (rep->ps[k] >= 2) base = find(rep, rep->algos[a], rep->ps[k], S);
        for (int k = 0; base && k < rep->np; k++) {
            if (rep->ps[k] < 2) continue;
            const row *r = find(rep, rep->algos[a], rep->ps[k], S), *ref = find(rep, rep->ref, rep->ps[k], S);
            if (!r || !(r->time_us > 0)) continue;
            /* speedup: data reduced per second (p·n/T) relative to the smallest p */
            double sp = (rep->ps[k] * base->time_us) / (base->p * r->time_us);
            fprintf(sc, "%s,%d,%.0f,%.3f,%.4f,%.4f,%.4f,%.4f\n", rep->algos[a], rep->ps[k], S, r->time_us, r->busbw,
                    sp, base->busbw > 0 ? r->busbw / base->busbw : NAN, ref ? ref->time_us / r->time_us : NAN);
        }
    }
    fclose(sc);
}

/* ------------------------------------------------------------ summary.md, section by section */

/* The sizes the ratio and transport tables show. */
static const double table_sizes[] = {1024, 65536, 1 << 20, 16 << 20, 64 << 20};
enum { NTABLE = sizeof table_sizes / sizeof table_sizes[0] };

/* How far this run can be trusted: the load, the noisy points, what a call
 * included. */
static void sec_trust(FILE *md, const report *rep)
{
    const load_info *l = &rep->load;
    if (l->have)
        fprintf(md, "Load (1-minute average) before the sweeps %.2f, after %s%.2f with up to %.0f ranks of their own, "
                    "on %.0f cores: %s.\n", l->before[0], l->has_after ? "" : "(not measured) ", l->after[0], l->ranks,
                l->cores,
                l->loaded ? "LOADED by other work — every target below is inconclusive" : "idle enough to judge");
    else
        fprintf(md, "The machine's load was not recorded (no load.txt).\n");
    fprintf(md, "%d of %d points are noisy (their repeats' middle half spread over more than %.0f %% of the median): "
                "marked, not ranked.", rep->nnoisy, rep->nrows, 100 * NOISY_IQR);
    if (rep->agree[1] || rep->agree[0])
        fprintf(md, " The timed calls %s agreed on their arguments across ranks first (collbench --agree %s)%s.",
                rep->agree[0] ? (rep->agree[1] ? "partly" : "never") : "all", rep->agree[0] ? "off" : "on",
                rep->agree[0] ? "" : ", as every call a program makes does");
    fprintf(md, "\n\n");
}

static void sec_title(FILE *md, const report *rep)
{
    const char *label = rep->o.ck.ref_label;
    if (rep->o.sim) {
        fprintf(md, "# collkit simulated-cluster benchmark summary (SimGrid SMPI)\n\n%s\n\n", rep->o.info);
        fprintf(md, "Every figure below comes from this one run (files in this folder) and is SIMULATED time: "
                    "the unmodified programs ran under SimGrid's SMPI, their messages moved over the simulated "
                    "platform, one rank per simulated host. Local reductions are charged as one flop per element "
                    "at the host's speed (%.0f Gflop/s), so runs are deterministic: the same command gives the same "
                    "figures on any machine. Times are the slowest rank's; out-of-place; f32 sum. "
                    "The reference %s is SMPI's own MPI_Allreduce (Open MPI's selection of algorithms)%s%s%s.\n\n",
                rep->pl.speed_gf, rep->ref[0] ? rep->ref : "(none)", label ? ": " : "", label ? label : "",
                label ? "" : "");
        fprintf(md, "## The simulated platform\n\n%s: %s\n\n", rep->pl.name, rep->pl.desc);
    } else {
        fprintf(md, "# collkit benchmark summary\n\n%s\n\n", rep->o.info);
        fprintf(md, "Every figure below comes from this one run (files in this folder). Times are the slowest "
                    "rank's per iteration, median over iterations; out-of-place; f32 sum. On a shared or "
                    "oversubscribed machine the numbers are noisy: compare algorithms within the run, not across runs.\n\n");
        sec_trust(md, rep);
    }
}

/* α, β, γ from the ping-pong (and the platform's own when simulated). */
static void sec_params(FILE *md, const report *rep)
{
    const bm_params *m = &rep->m, *ms = &rep->ms;
    if (!rep->have_m) return;
    if (rep->o.sim) {
        fprintf(md, "Ping-pong between 2 simulated hosts, and the reduce rate the simulation charges:\n\n"
                    "| α (latency) | β (per byte) | point-to-point bandwidth | γ (reduce, per byte) |\n"
                    "|---|---|---|---|\n| %.3f µs | %.4f ns/B | %.3f GB/s | %.4f ns/B (%.2f GB/s) |\n\n"
                    "The platform's own: α = %.3f µs, bandwidth %.3f GB/s.\n\n",
                m->alpha * 1e6, m->beta * 1e9, m->beta > 0 ? 1e-9 / m->beta : 0, m->gamma * 1e9,
                m->gamma > 0 ? 1e-9 / m->gamma : 0, rep->pl.alpha_us, rep->pl.bw_gbs);
        return;
    }
    fprintf(md, "## Machine parameters (ping-pong between 2 ranks)\n\n");
    fprintf(md, "| α (latency) | β (per byte) | point-to-point bandwidth | γ (reduce, per byte) | memcpy bandwidth |\n"
                "|---|---|---|---|---|\n| %.2f µs | %.4f ns/B | %.2f GB/s | %.4f ns/B (%.2f GB/s) | %.2f GB/s |\n\n",
            m->alpha * 1e6, m->beta * 1e9, m->beta > 0 ? 1e-9 / m->beta : 0, m->gamma * 1e9,
            m->gamma > 0 ? 1e-9 / m->gamma : 0, m->memcpy_bw / 1e9);
    if (m->links & BM_LINK_INTER)
        fprintf(md, "Between nodes (ping-pong across nodes%s): α = %.2f µs, β = %.4f ns/B (%.2f GB/s).\n\n",
                m->links & BM_LINK_INTRA ? "; the table: inside a node" : "; no node held two ranks",
                m->alpha_inter * 1e6, m->beta_inter * 1e9, m->beta_inter > 0 ? 1e-9 / m->beta_inter : 0);
    if (rep->have_ms)
        fprintf(md, "Through the shm transport (ping-pong between 2 ranks, the shm sweep's model): α = %.2f µs, "
                    "β = %.4f ns/B (%.2f GB/s).\n\n", ms->alpha * 1e6, ms->beta * 1e9, ms->beta > 0 ? 1e-9 / ms->beta : 0);
}

/* Whether the sweep has a row of algo at p. */
static int has_rows(const report *rep, const char *algo, int p)
{
    for (int i = 0; i < rep->nrows; i++)
        if (rep->rows[i].p == p && !strcmp(rep->rows[i].algo, algo)) return 1;
    return 0;
}

/* t(reference) / t(algorithm) at the table's sizes, per p. */
static void sec_ratios(FILE *md, const report *rep)
{
    const char *ref = rep->ref;
    fprintf(md, "## Speed relative to the reference (%s)\n\nt(%s) / t(algorithm) at each size: above 1 is faster than "
                "the reference, below 1 slower (\"-\": size not measured; \"noisy\": the point's repeats, or the "
                "reference's, disagree, their middle half spread over more than %.0f %% of the median: not "
                "ranked).\n\n",
            ref[0] ? ref : "none in this run", ref, 100 * NOISY_IQR);
    for (int k = 0; k < rep->np; k++) {
        int p = rep->ps[k];
        if (!has_rows(rep, ref, p)) continue;   /* (make sim-bench: p = 1024 runs without the reference) */
        fprintf(md, "### p = %d\n\n| algorithm |", p);
        for (int j = 0; j < NTABLE; j++) fprintf(md, " %s |", sz(table_sizes[j]));
        fprintf(md, "\n|---|");
        for (int j = 0; j < NTABLE; j++) fprintf(md, "---|");
        fprintf(md, "\n");
        for (int a = 0; a < rep->nalg; a++) {
            if (!has_rows(rep, rep->algos[a], p)) continue;
            fprintf(md, "| %s |", rep->algos[a]);
            for (int j = 0; j < NTABLE; j++) {
                const row *r = find(rep, rep->algos[a], p, table_sizes[j]), *x = find(rep, ref, p, table_sizes[j]);
                if (r && x && (noisy(r) || noisy(x))) fprintf(md, " noisy |");
                else if (r && x && r->time_us > 0) fprintf(md, " %.2f |", x->time_us / r->time_us);
                else fprintf(md, " - |");
            }
            fprintf(md, "\n");
        }
        fprintf(md, "\n");
    }
}

/* The best hand-written algorithm on each transport, side by side. */
static void sec_transports(FILE *md, const report *rep)
{
    if (!rep->any_shm) return;
    fprintf(md, "## Transports: MPI and shared memory\n\nThe fastest hand-written algorithm on each transport "
                "(busbw, GB/s; NAME@shm ran on the shm transport; NAME@mpi was asked for shm and ran on MPI, the "
                "ranks spanning nodes: an MPI figure), and the reference's.\n\n");
    for (int k = 0; k < rep->np; k++) {
        int p = rep->ps[k];
        fprintf(md, "### p = %d\n\n| size | best on MPI | best on shm | shm / MPI | %s |\n|---|---|---|---|---|\n", p,
                rep->ref[0] ? rep->ref : "reference");
        for (int j = 0; j < NTABLE; j++) {
            double b = table_sizes[j];
            const row *x = best_of(rep, p, b, 0), *y = best_of(rep, p, b, 1), *ref = find(rep, rep->ref, p, b);
            if (!x && !y) continue;
            fprintf(md, "| %s |", sz(b));
            if (x) fprintf(md, " %s %.3f |", x->algo, x->busbw); else fprintf(md, " - |");
            if (y) fprintf(md, " %s %.3f |", y->algo, y->busbw); else fprintf(md, " - |");
            if (x && y && x->busbw > 0) fprintf(md, " %.2f |", y->busbw / x->busbw); else fprintf(md, " - |");
            if (ref && noisy(ref)) fprintf(md, " noisy |\n");
            else if (ref) fprintf(md, " %.3f |\n", ref->busbw);
            else fprintf(md, " - |\n");
        }
        fprintf(md, "\n");
    }
}

/* --sim: the checks the script names, crossovers, model, topology. */
static void sec_sim(FILE *md, const report *rep)
{
    sim_acceptance(md, rep);
    sim_crossovers(md, rep);
    sim_model_table(md, rep);
    sim_topology(md, rep, rep->pl.name);
}

/* Target 1: busbw >= 1.5x the reference at 16-64 MB, >= 1.0x from 64 KB, p = 2, 4. */
static void target_busbw(FILE *md, const report *rep)
{
    char figs[4096] = "", figs2[4096] = "", u1[256], u2[256];
    int known = 0, met1 = 1, met2 = 1, noisy1 = 0, noisy2 = 0;
    double worst2 = INFINITY, worst2_b = 0;
    int worst2_p = 0;
    for (int pp = 2; pp <= 4; pp += 2) {
        if (!has_p(rep, pp)) continue;
        double s[256];
        int n = sizes_at(rep, pp, s, 256);
        for (int i = 0; i < n; i++) {
            const int nz = s[i] >= 65536 ? noisy_at(rep, pp, s[i]) : 0;
            noisy2 += nz;
            if (s[i] >= 16 << 20 && s[i] <= 64 << 20) noisy1 += nz;
            const row *b = best_hand(rep, pp, s[i]), *ref = find(rep, rep->ref, pp, s[i]);
            if (!b || !ref || s[i] < 65536 || noisy(ref)) continue;
            double ratio = b->busbw / (ref->busbw > 0 ? ref->busbw : 1e-30);
            known = 1;
            if (s[i] >= 16 << 20 && s[i] <= 64 << 20) {
                if (ratio < 1.5) met1 = 0;
                size_t l = strlen(figs);
                snprintf(figs + l, sizeof figs - l, "%sp=%d %s: %s %.2f GB/s vs %s %.2f GB/s = %.2fx",
                         l ? "; " : "", pp, sz(s[i]), b->algo, b->busbw, rep->ref, ref->busbw, ratio);
            }
            if (ratio < 1.0) met2 = 0;
            if (ratio < worst2) { worst2 = ratio; worst2_b = s[i]; worst2_p = pp; }
        }
    }
    if (known)
        snprintf(figs2, sizeof figs2, "lowest ratio from 64 KB up: %.2fx (p=%d, %s)", worst2, worst2_p, sz(worst2_b));
    target(md, met1, known && figs[0], why_unsure(rep, noisy1, u1, sizeof u1),
           "best hand-written busbw >= 1.5x the reference at 16-64 MB (p = 2, 4)", "%s",
           figs[0] ? figs : "no 16-64 MB results at p = 2 or 4");
    target(md, met2, known, why_unsure(rep, noisy2, u2, sizeof u2),
           "best hand-written busbw >= 1.0x the reference from 64 KB up (p = 2, 4)", "%s", figs2);
}

/* Target 2: latency <= 1.0x the reference at <= 4 KB, p = 4. */
static void target_latency(FILE *md, const report *rep)
{
    char f3[4096] = "", u[256];
    int k3 = 0, met3 = 1, nz = 0;
    if (has_p(rep, 4)) {
        double s[256];
        int n = sizes_at(rep, 4, s, 256);
        for (int i = 0; i < n; i++) {
            if (s[i] > 4096 || s[i] <= 0) continue;
            nz += noisy_at(rep, 4, s[i]);
            const row *b = best_hand(rep, 4, s[i]), *ref = find(rep, rep->ref, 4, s[i]);
            if (!b || !ref || noisy(ref)) continue;
            double ratio = b->time_us / ref->time_us;
            k3 = 1;
            if (ratio > 1.0) met3 = 0;
            size_t l = strlen(f3);
            snprintf(f3 + l, sizeof f3 - l, "%s%s: %s %.1f us vs %s %.1f us = %.2fx", l ? "; " : "", sz(s[i]),
                     b->algo, b->time_us, rep->ref, ref->time_us, ratio);
        }
    }
    target(md, met3, k3, why_unsure(rep, nz, u, sizeof u),
           "best hand-written latency <= 1.0x the reference at <= 4 KB (p = 4)", "%s",
           k3 ? f3 : "no results at p = 4 and <= 4 KB");
}

/* Target 3: busbw at 64 MB, p = 2 >= 0.5x memcpy: the best on shm (a
 * shared-memory transport is what the memcpy ceiling is about), or the best
 * hand-written where the shm sweep did not run. */
static void target_memcpy(FILE *md, const report *rep)
{
    const bm_params *m = &rep->m;
    const row *r = rep->any_shm ? best_of(rep, 2, 64 << 20, 1) : best_hand(rep, 2, 64 << 20);
    int k4 = r && rep->have_m && m->memcpy_bw > 0;
    char u[256];
    target(md, k4 && r->busbw >= 0.5 * m->memcpy_bw / 1e9, k4,
           why_unsure(rep, noisy_at(rep, 2, 64 << 20), u, sizeof u),
           rep->any_shm ? "best shm all-reduce busbw at 64 MB, p = 2 >= 0.5x the memcpy bandwidth"
                        : "best hand-written busbw at 64 MB, p = 2 >= 0.5x the memcpy bandwidth",
           "%s %.2f GB/s, memcpy %.2f GB/s: %.2fx", r ? r->algo : "-", r ? r->busbw : 0,
           rep->have_m ? m->memcpy_bw / 1e9 : 0, k4 ? r->busbw / (m->memcpy_bw / 1e9) : 0);
}

/* The model within 25 % for p <= 4, sizes >= 64 KB (hand-written
 * algorithms, MPI transport): information, not a target (no goal of the
 * project: at p = 4 on fewer cores the ranks time-share, which no α-β-γ
 * model describes), so no MET or MISSED. */
static void target_model(FILE *md, const report *rep)
{
    int k5 = 0, in = 0, tot = 0;
    double worst = 0;
    const row *wr = NULL;
    char per[2048] = "";
    for (int a = 0; a < rep->nalg; a++) {
        if (is_reference(rep->algos[a]) || !is_mpi(rep->algos[a])) continue;
        int ai = 0, at_ = 0;
        for (int i = 0; i < rep->nrows; i++) {
            const row *x = &rep->rows[i];
            if (strcmp(x->algo, rep->algos[a]) || strcmp(x->place, "out") || x->p > 4 || x->bytes < 65536) continue;
            if (!(x->model_us > 0) || !(x->time_us > 0)) continue;
            double e = fabs(x->time_us / x->model_us - 1);
            k5 = 1;
            tot++; at_++;
            if (e <= 0.25) { in++; ai++; }
            if (e > worst) { worst = e; wr = x; }
        }
        if (at_) {
            size_t l = strlen(per);
            snprintf(per + l, sizeof per - l, "%s%s %d/%d", l ? ", " : "", rep->algos[a], ai, at_);
        }
    }
    if (!k5) return;
    fprintf(md, "\nInformation, not a target: the model within 25 %% of measured (p <= 4, sizes >= 64 KB, MPI "
                "transport; at p = 4 on fewer cores the ranks time-share): %d of %d points within 25 %% (%s)",
            in, tot, per);
    if (wr)
        fprintf(md, "; worst: %s p=%d %s measured %.0f us, model %.0f us", wr->algo, wr->p, sz(wr->bytes), wr->time_us,
                wr->model_us);
    fprintf(md, ".\n");
}

/* A shared-memory machine's performance targets, each MET, MISSED or NOT
 * MEASURED with the figures behind it. */
static void sec_targets(FILE *md, const report *rep)
{
    fprintf(md, "## Performance targets\n\n");
    target_busbw(md, rep);
    target_latency(md, rep);
    target_memcpy(md, rep);
    target_model(md, rep);
    fprintf(md, "\nA missed target is explained in the closing notes of the benchmark issue, with a trace "
                "(the trace_*.json files in this folder open in https://ui.perfetto.dev).\n\n");
}

/* The model's crossovers up to 4096 ranks: the fastest algorithm by size. */
static void sec_extrapolation(FILE *md, const report *rep)
{
    if (!rep->have_m) return;
    const ck_algo *names[MAXALG];
    int nn = 0;
    for (int k = 0; k < rep->nalg; k++) {
        const ck_algo *a = ck_algo_find(rep->algos[k]);
        if (a && a->cost && !(a->flags & CK_ALGO_REFERENCE)) names[nn++] = a;
    }
    fprintf(md, "## Extrapolation: the fastest algorithm by size (model)\n\n"
                "The α, β, γ above kept fixed while p grows (%s); see extrapolation.png. Each row: the "
                "winner from 8 B, then where it changes.\n\n"
                "| p | fastest algorithm by message size |\n|---|---|\n",
            rep->o.sim ? "every link like the platform's, no contention: a crossbar of any size"
                       : "as if every link were this machine's shared memory");
    static const int pe[] = {2, 4, 16, 64, 256, 1024, 4096};
    for (int i = 0; i < 7 && nn; i++) {
        double s[32];
        int from[32], to[32], first;
        int k = bm_crossovers(names, nn, &rep->m, pe[i], 8, (double)(1u << 30), BM_CROSSOVER_TOL, s, from, to, 32,
                              &first);
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

/* Links to the plots that were drawn. */
static void sec_plots(FILE *md, const report *rep)
{
    char path[4096];
    fprintf(md, "## Plots\n\n(PNG; an SVG of each sits beside it. plots/README.md says how each is made.)\n\n");
    static const char *const plots[][2] = {
        {"busbw_p%d", "bus bandwidth vs size, per algorithm, with the ceiling (memcpy; the link when simulated)"},
        {"latency_p%d", "time vs size (log-log)"},
        {"model_p%d", "measured / model vs size"},
        {"topology_p%d", "busbw on the crossbar and the fat trees (simulated)"},
    };
    for (int k = 0; k < rep->np; k++)
        for (int j = 0; j < 4; j++) {
            char name[64];
            snprintf(name, sizeof name, plots[j][0], rep->ps[k]);
            snprintf(path, sizeof path, "%s/%s.png", rep->o.dir, name);
            if (!access(path, R_OK))
                fprintf(md, "- p = %d, %s: ![%s](%s.png)\n", rep->ps[k], plots[j][1], name, name);
        }
    static const char *const others[][2] = {
        {"pingpong", "ping-pong time and the α-β fit"},
        {"scaling", "speedup and efficiency vs ranks"},
        {"extrapolation", "model extrapolated to 1024 and 4096 ranks"},
        {"trainer_scaling", "trainer samples/s and scaling efficiency"},
    };
    for (int j = 0; j < 4; j++) {
        snprintf(path, sizeof path, "%s/%s.png", rep->o.dir, others[j][0]);
        if (!access(path, R_OK)) fprintf(md, "- %s: ![%s](%s.png)\n", others[j][1], others[j][0], others[j][0]);
    }
}

/* DIR/trainer.csv and DIR/trainer_gpu.csv (tagtrain --device cuda, where
 * the machine had a GPU), as tables. */
static void sec_trainer(FILE *md, const report *rep)
{
    char path[4096];
    if (present(in_dir(path, sizeof path, rep, "trainer.csv"))) {
        fprintf(md, "\n## Trainer (data-parallel tagging)\n\n");
        if (rep->o.sim)
            fprintf(md, "Simulated: tagtrain on p hosts of the platform, weak scaling (the same local batch per "
                        "rank), the whole gradient all-reduced each step (tagtrain's default). The forward and "
                        "backward passes are charged as 6 flops per parameter per sample and the optimizer as 10 "
                        "per parameter, at the host's speed (trainer/tagtrain.c); efficiency = samples/s(p) / (p x "
                        "samples/s(1)), and what it loses is the all-reduce.\n\n");
        else
            fprintf(md, "Weak scaling (the same local batch per rank); samples/s is the steady rate, over the "
                        "epochs after the first (scripts/bench_trainer.sh); efficiency = samples/s(p) / (p x "
                        "samples/s(1)).\n\n");
        fprintf(md, "![trainer scaling](trainer_scaling.png)\n\n");
        csv_as_table(md, path);
    }
    if (present(in_dir(path, sizeof path, rep, "trainer_gpu.csv"))) {
        fprintf(md, "\n## Trainer on the GPU (tagtrain --device cuda)\n\n"
                    "The same weak scaling with the gradient in device memory, all-reduced by each algorithm that "
                    "takes device buffers; nccl is the reference. The gpu_setup column says where ranks "
                    "time-shared a GPU: there the figures measure each algorithm's overheads on one device, not "
                    "an interconnect, and NCCL, which refuses ranks that share a GPU, has no point.\n\n");
        if (!access(in_dir(path, sizeof path, rep, "trainer_scaling_gpu.png"), R_OK))
            fprintf(md, "![trainer scaling on the GPU](trainer_scaling_gpu.png)\n\n");
        csv_as_table(md, in_dir(path, sizeof path, rep, "trainer_gpu.csv"));
    }
}

/* A time of trainer_path.csv as ms in a cell: "n/a" where not measured. */
static void ms_cell(FILE *md, double v)
{
    if (isfinite(v)) fprintf(md, " %.3f |", v * 1e3);
    else fprintf(md, " n/a |");
}

/* The trainer's own path at p = 2 (scripts/bench_trainer.sh's trainer_path):
 * where a step's time goes, beside DDP's, and the acceptance line of issue
 * 38: the trainer's collective per step within 10 % of collbench's time for
 * the same calls. Judged like every target: INCONCLUSIVE where the machine
 * was loaded or either figure's repeats disagree beyond NOISY_IQR. */
static void sec_path(FILE *md, const report *rep)
{
    if (!rep->npath) return;
    fprintf(md, "\n## The trainer's own path (tagtrain --breakdown)\n\n"
                "Medians over rank 0's steps of the epochs after the first, in ms. The wait is a barrier of every "
                "rank between backward and the collective: the time this rank waited for the slower one, so the "
                "collective after it is the collective proper, as collbench times its calls (barrier first, slowest "
                "rank). With buckets the collective is what backward did not hide. The calls as they ran, taken "
                "apart across the ranks (one clock: the ranks share a node): each call's wait for the last rank to "
                "start it (with buckets, launched as each rank's backward finishes them, the slower rank's "
                "backward), and the rest, from every rank in it to its end (with buckets, their runs on the "
                "progress thread, hidden or not): the figure set beside collbench's for the same calls. DDP: "
                "%s.\n\n"
                "| mode | algo@transport | p | MB/step | calls | forward+backward | wait | collective | optimizer "
                "| step | the calls: wait for the last rank | the calls from there | collbench, same calls |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
            rep->ddp);
    for (int i = 0; i < rep->npath; i++) {
        const path_row *x = &rep->path[i];
        fprintf(md, "| %s | %s@%s | %d | %.2f | %d |", x->mode, x->algo, x->transport, x->p, x->bytes / 1e6, x->calls);
        static const int shown[] = {PA_FB, PA_WAIT, PA_COMM, PA_OPT, PA_STEP, PA_ENTRY, PA_CALLS, PA_BENCH};
        for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++) ms_cell(md, x->fig[shown[k]]);
        fprintf(md, "\n");
    }
    fprintf(md, "\n");
    for (int i = 0; i < rep->npath; i++) {
        const path_row *x = &rep->path[i];
        const double *f = x->fig, ratio = f[PA_CALLS] / f[PA_BENCH];
        const int known = isfinite(ratio) && f[PA_BENCH] > 0;
        const int nnoisy = (f[PA_CQ3] - f[PA_CQ1] > NOISY_IQR * f[PA_CALLS]) +
                           (f[PA_BQ3] - f[PA_BQ1] > NOISY_IQR * f[PA_BENCH]);
        char what[160], buf[256];
        snprintf(what, sizeof what, "the trainer's collective per step within 10 %% of collbench's for the same calls "
                 "(%s, p = %d)", x->mode, x->p);
        target(md, known && fabs(ratio - 1) <= 0.10, known, why_unsure(rep, nnoisy, buf, sizeof buf), what,
               "%.3f ms against %.3f ms (%d call%s of %s@%s, in place, agreement on): %.2fx", f[PA_CALLS] * 1e3,
               f[PA_BENCH] * 1e3, x->calls, x->calls == 1 ? "" : "s", x->algo, x->transport, ratio);
    }
}

/* A figure of plans.csv in the table, scaled (bytes as MB): "failed" where
 * the run failed (its step time NaN), "n/a" where only this figure is NaN
 * (a simulation has no resident memory of its own). */
static void plan_cell(FILE *md, const plan_row *x, int k, double scale, const char *fmt)
{
    if (isnan(x->fig[PL_STEP])) fprintf(md, " failed |");
    else if (isnan(x->fig[k])) fprintf(md, " n/a |");
    else { fprintf(md, " "); fprintf(md, fmt, x->fig[k] / scale); fprintf(md, " |"); }
}

/* The section's reading note: what the times mean here. */
static void plans_note(FILE *md, const report *rep)
{
    fprintf(md, "Each rank's bytes as tagtrain holds them between steps (rank 0's: for a pipeline, stage 0's)%s, "
                "from each run's --log. The collective MB are the buffers each step's collectives cover (the "
                "gradients' all-reduce or reduce-scatter, and --tp's all-reduces), not a pipeline's point-to-point "
                "activations. ", rep->o.sim ? "" : " and the peak resident memory (the largest rank's)");
    if (rep->o.sim)
        fprintf(md, "Simulated: one rank per host of the platform, compute charged as modelled flops, so the step "
                    "times show the plans' trade-offs as p grows; SMPI runs every rank in one process, so there is "
                    "no resident memory per rank (n/a).\n\n");
    else
        fprintf(md, "**The lesson is the memory**: where the ranks outnumber the cores (the configuration says both) "
                    "they time-share them, and the step times say as much about that oversubscription as about the "
                    "plan.\n\n");
}

/* DIR/plans.csv: the parallel plans side by side, memory first. */
static void sec_plans(FILE *md, const report *rep)
{
    if (!rep->have_plans) return;
    /* plans_setup.txt: the configuration's line, then a line per plan left out */
    const char *setup = rep->plans_setup[0] ? rep->plans_setup : "not recorded (no plans_setup.txt)\n";
    const char *nl = strchr(setup, '\n');
    fprintf(md, "\n## Parallel plans: memory and time per rank (DP, ZeRO-2, TP, PP)\n\n"
                "Configuration: %.*s (%s; plans.csv).\n\n", nl ? (int)(nl - setup) : (int)strlen(setup), setup,
            rep->o.sim ? "scripts/sim-bench.sh" : "scripts/bench_plans.sh");
    plans_note(md, rep);
    fprintf(md, "| plan | p = tp x pp x dp | step ms | samples/s | parameters MB | gradients MB | optimizer state MB "
                "| activations MB | peak RSS MB | collective MB/step |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < rep->nplans; i++) {
        const plan_row *x = &rep->plans[i];
        fprintf(md, "| %s | %d = %d x %d x %d |", x->plan, x->p, x->tp, x->pp, x->dp);
        plan_cell(md, x, PL_STEP, 1e-3, "%.4g");
        plan_cell(md, x, PL_SPS, 1, "%.0f");
        for (int k = PL_PARAM; k < PL_NFIG; k++) plan_cell(md, x, k, 1e6, k == PL_ACT ? "%.3f" : "%.2f");
        fprintf(md, "\n");
    }
    int hybrid = 0;
    for (int i = 0; i < rep->nplans; i++) hybrid |= rep->plans[i].tp > 1 && rep->plans[i].pp > 1;
    if (!hybrid) fprintf(md, "\nNo plan splits the model both ways (tp > 1 and pp > 1): %s",
                         nl && nl[1] ? "" : "none was run.\n");
    if (!hybrid && nl && nl[1]) fprintf(md, "%s", nl + 1);
}

/* DIR/summary.md: 0, or -1 (said). */
static int write_summary(const report *rep)
{
    char path[4096];
    FILE *md = fopen(in_dir(path, sizeof path, rep, "summary.md"), "w");
    if (!md) { fprintf(stderr, "benchreport: cannot write %s\n", path); return -1; }
    sec_title(md, rep);
    sec_params(md, rep);
    sec_ratios(md, rep);
    sec_transports(md, rep);
    if (rep->o.sim) sec_sim(md, rep);
    else sec_targets(md, rep);
    sec_extrapolation(md, rep);
    sec_plots(md, rep);
    sec_trainer(md, rep);
    sec_path(md, rep);
    sec_plans(md, rep);
    fclose(md);
    return 0;
}

int main(int argc, char **argv)
{
    /* The report holds every row of the sweep (megabytes): on the heap. */
    report *rep = calloc(1, sizeof *rep);
    if (!rep) { fprintf(stderr, "benchreport: out of memory\n"); return 1; }
    int rc = parse_args(argc, argv, &rep->o);
    if (!rc) rc = load_report(rep) ? 1 : 0;
    if (!rc) {
        write_scaling(rep);
        rc = write_summary(rep) ? 1 : 0;
    }
    free(rep);
    return rc;
}
