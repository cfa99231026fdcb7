/*
 * colldraw — run one all-reduce, reduce-scatter or all-gather with every step
 * watched (ck_observe), and draw it.
 *
 * Every rank holds the checker's exact inputs (i64 sum: rank r contributes
 * 2^r plus a field that names the element), so a value in a buffer says
 * exactly which ranks' contributions it holds, or that it holds something no
 * correct step can produce. The buffer drawn is always the whole one (count
 * elements): a reduce-scatter out of place writes its block of it, an
 * all-gather out of place sends from its block of the input. Each rank copies its result buffer whenever the
 * algorithm enters a step and notes the buffer of every message it posts;
 * rank 0 gathers both and turns them into frames (cd_model) for render.c.
 */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collcheck.h"
#include "collkit_algo.h"
#include "colldraw.h"
#include "encoding.h"

/* ------------------------------------------------------------ recording */

/* A snapshot holds NROWS rows of count values: the drawn buffer, then the
 * shared regions the algorithm showed (ck_show_shared), zeros where none. */
#define NROWS (1 + CD_MAX_SHARED)

typedef struct snap {
    int  step;
    char phase[32];
    char shared[CD_MAX_SHARED][CD_NAME];   /* the regions' names, "" where none */
    long at;               /* index into rec.data: NROWS * count values */
} snap;

typedef struct post_note {
    int    kind, step, peer;   /* kind CK_EV_COPY: a load from peer's memory (ck_show_load) */
    int    row;            /* where the buffer is: 0 the drawn buffer, k + 1 shared region k */
    char   from[CD_NAME];  /* a load: the peer's region it came from, "" its buffer */
    size_t bytes;
    long   elem, nelem;    /* in that row (a region: its slots), -1 when the buffer is elsewhere */
} post_note;

typedef struct rec {
    const int64_t *buf;    /* the drawn buffer (recvbuf) */
    const int64_t *in;     /* sendbuf (== buf in place) */
    size_t         count;
    snap          *snaps;
    int            nsnaps, capsnaps;
    int64_t       *data;
    post_note     *posts;
    int            nposts, capposts;
    const void    *sh_buf[CD_MAX_SHARED];   /* the regions shown, where they are now */
    size_t         sh_bytes[CD_MAX_SHARED];
    char           sh_name[CD_MAX_SHARED][CD_NAME];
    int            full;   /* 1 once a limit was reached: the rest is not recorded */
} rec;

#define MAX_SNAPS 4096
#define MAX_POSTS 16384

static void take_snap(rec *R, int step, const char *phase)
{
    if (R->full) return;
    if (R->nsnaps == MAX_SNAPS) { R->full = 1; return; }
    if (R->nsnaps == R->capsnaps) {
        int cap = R->capsnaps ? 2 * R->capsnaps : 16;
        snap *s = realloc(R->snaps, (size_t)cap * sizeof *s);
        int64_t *d = realloc(R->data, (size_t)cap * NROWS * (R->count ? R->count : 1) * sizeof *d);
        if (s) R->snaps = s;
        if (d) R->data = d;
        if (!s || !d) { R->full = 1; return; }
        R->capsnaps = cap;
    }
    snap *s = &R->snaps[R->nsnaps];
    s->step = step;
    snprintf(s->phase, sizeof s->phase, "%s", phase ? phase : "");
    s->at = (long)(R->nsnaps * NROWS * R->count);
    if (R->count) memcpy(R->data + s->at, R->buf, R->count * sizeof *R->data);
    for (int k = 0; k < CD_MAX_SHARED; k++) {
        int64_t *row = R->data + s->at + (long)((size_t)(k + 1) * R->count);
        size_t n = R->sh_bytes[k] / sizeof *row < R->count ? R->sh_bytes[k] / sizeof *row : R->count;
        memset(row, 0, R->count * sizeof *row);
        if (n && R->sh_buf[k]) memcpy(row, R->sh_buf[k], n * sizeof *row);
        memcpy(s->shared[k], R->sh_name[k], CD_NAME);
    }
    R->nsnaps++;
}

/* Region k of this rank named `name`, a new one if there is room, or -1
 * (regions past CD_MAX_SHARED are not drawn). */
static int region_slot(rec *R, const char *name)
{
    for (int k = 0; k < CD_MAX_SHARED; k++)
        if (!strncmp(R->sh_name[k], name, CD_NAME - 1)) return k;
    for (int k = 0; k < CD_MAX_SHARED; k++)
        if (!R->sh_name[k][0]) { snprintf(R->sh_name[k], CD_NAME, "%s", name); return k; }
    return -1;
}

static void on_shared(void *ctx, const char *name, const void *buf, size_t bytes)
{
    rec *R = ctx;
    int k = name && *name ? region_slot(R, name) : -1;
    if (k < 0) return;
    R->sh_buf[k] = buf;
    R->sh_bytes[k] = bytes;
}

static void on_step(void *ctx, int step, const char *phase) { take_snap(ctx, step, phase); }

/* Where a message's buffer lies in the drawn buffer (or the input, when out
 * of place: its elements have the same indices). */
static void locate(const rec *R, const void *buf, size_t bytes, long *elem, long *nelem)
{
    const char *b = buf;
    const int64_t *bases[2] = {R->buf, R->in};
    *elem = *nelem = -1;
    for (int k = 0; k < 2; k++) {
        const char *lo = (const char *)bases[k], *hi = lo + R->count * sizeof(int64_t);
        if (b >= lo && b + bytes <= hi && (b - lo) % sizeof(int64_t) == 0) {
            *elem = (long)((b - lo) / (long)sizeof(int64_t));
            *nelem = (long)(bytes / sizeof(int64_t));
            return;
        }
    }
}

static post_note *new_post(rec *R)
{
    if (R->full) return NULL;
    if (R->nposts == MAX_POSTS) { R->full = 1; return NULL; }
    if (R->nposts == R->capposts) {
        int cap = R->capposts ? 2 * R->capposts : 64;
        post_note *n = realloc(R->posts, (size_t)cap * sizeof *n);
        if (!n) { R->full = 1; return NULL; }
        R->posts = n;
        R->capposts = cap;
    }
    return memset(&R->posts[R->nposts++], 0, sizeof *R->posts);
}

static void on_message(void *ctx, int kind, const void *buf, size_t bytes, int peer, int step)
{
    post_note *n = new_post(ctx);
    if (!n) return;
    *n = (post_note){.kind = kind, .step = step, .peer = peer, .bytes = bytes};
    locate(ctx, buf, bytes, &n->elem, &n->nelem);
}

/* A load into buf: the drawn buffer, else the slots of one of this rank's regions. */
static void on_load(void *ctx, int peer, const char *from, const void *buf, size_t bytes, int step)
{
    rec *R = ctx;
    post_note *n = new_post(R);
    if (!n) return;
    *n = (post_note){.kind = CK_EV_COPY, .step = step, .peer = peer, .bytes = bytes};
    snprintf(n->from, sizeof n->from, "%s", from ? from : "");
    locate(R, buf, bytes, &n->elem, &n->nelem);
    const char *b = buf;
    for (int k = 0; k < CD_MAX_SHARED && n->elem < 0; k++) {
        const char *lo = R->sh_buf[k];
        if (lo && b >= lo && b + bytes <= lo + R->sh_bytes[k] && (b - lo) % sizeof(int64_t) == 0) {
            n->row = k + 1;
            n->elem = (long)((b - lo) / (long)sizeof(int64_t));
            n->nelem = (long)(bytes / sizeof(int64_t));
        }
    }
}

/* ------------------------------------------------------------ options */

typedef struct opts {
    const char *algo, *out, *transport, *gantt;
    ck_coll     coll;
    int         call;      /* --gantt: which call of the trace */
    int         overwrite; /* --overwrite: an earlier drawing in --out is replaced */
    int         np;        /* 0: the job's size */
    long long   count;     /* -1: 2p */
    int         inplace;
    double      timeout;
} opts;

static int usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s --algo NAME [--coll C] [--np P] [--count N] [--inplace 0|1] [--out DIR]\n"
            "          [--transport mpi|shm] [--timeout SEC] [--overwrite]\n"
            "       %s --gantt TRACE.json [--call K] [--out DIR] [--overwrite]\n"
            "Run one all-reduce (or --coll) of NAME (any registered algorithm: %s --algo list)\n"
            "with every step recorded, and draw it: per step each rank's buffer as a row of blocks coloured\n"
            "by whose contributions they hold, and the step's messages as arrows labelled with\n"
            "the block and the bytes they carry. A wrong element is hatched red from the step it\n"
            "went wrong. Shared-memory algorithms (oneshot, twoshot) get rows for the memory\n"
            "their peers load from (ck_show_shared) and dashed arrows for the loads.\n"
            "  --coll C        allreduce (default), reduce_scatter or allgather: the registry\n"
            "                  NAME is taken from (--coll C --algo list shows it); a reduce-scatter\n"
            "                  must leave block r complete on rank r, an all-gather every block\n"
            "                  holding its owner's input only\n"
            "  --np P          ranks (1 to %d); without a launcher colldraw starts itself under\n"
            "                  ckrun -np P, under mpirun P must be the job's size\n"
            "  --count N       elements (i64, 0 to %d; default 2p)\n"
            "  --inplace 0|1   in place (default 1: every rank starts with its own input in the\n"
            "                  buffer drawn) or out of place (the buffer drawn starts empty)\n"
            "  --out DIR       where to write (default colldraw-NAME-pP): frame-NN.svg (one per\n"
            "                  step), index.html (every frame, a step control, works offline),\n"
            "                  frames.txt (the frames as text); DIR must be new or empty\n"
            "  --overwrite     replace an earlier drawing (or gantt.svg) in DIR; a folder holding\n"
            "                  any other file is refused all the same\n"
            "  --transport T   mpi (default) or shm (default for algorithms that need it)\n"
            "  --timeout SEC   the hang watchdog (default 30)\n"
            "  --gantt TRACE   no run: draw call K (default 0) of a collbench trace\n"
            "                  (collbench --trace TRACE) as a Gantt timeline, DIR/gantt.svg\n"
            "                  (default folder colldraw-gantt): one row per rank and lane;\n"
            "                  a tagtrain trace (tagtrain --trace) draws step K of training:\n"
            "                  per rank the backward layers and each bucket's all-reduce\n"
            "PNG or PDF: rsvg-convert -f png -o frame.png frame-03.svg (Debian: librsvg2-bin).\n"
            "Exit status: 0 drawn and right, 1 drawn and wrong (or the algorithm failed),\n"
            "2 bad arguments or output that cannot be written.\n",
            prog, prog, prog, CD_MAX_RANKS, CD_MAX_COUNT);
    return f == stdout ? 0 : 2;
}

/* Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, opts *o, int print)
{
    *o = (opts){.count = -1, .inplace = 1, .timeout = 30};
    char err[200];
    /* The options of one kind of drawing given to the other would be ignored
     * without a word: the last such one, for the refusal below. */
    const char *run_only = NULL, *gantt_only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (print) usage(stdout, argv[0]);
            return 0;
        }
        if (!strcmp(a, "--overwrite")) { o->overwrite = 1; continue; }
        if (i + 1 >= argc) {
            if (print) fprintf(stderr, "%s: %s needs a value (or is no option: see --help)\n", argv[0], a);
            return 2;
        }
        const char *v = argv[++i];
        long long n;
        double d;
        if (!strcmp(a, "--call")) gantt_only = a;
        else if (strcmp(a, "--algo") && strcmp(a, "--gantt") && strcmp(a, "--out")) run_only = a;
#define BAD(...) do { if (print) { fprintf(stderr, "%s: ", argv[0]); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } return 2; } while (0)
        if (!strcmp(a, "--algo")) o->algo = v;
        else if (!strcmp(a, "--coll")) {
            if (ck_coll_parse(v, &o->coll)) BAD("bad --coll '%s' (want allreduce, reduce_scatter or allgather)", v);
        }
        else if (!strcmp(a, "--gantt")) { if (!*v) BAD("--gantt needs a trace file"); o->gantt = v; }
        else if (!strcmp(a, "--call")) {
            if (ck_parse_int(v, 0, 1 << 30, &n, err, sizeof err)) BAD("--call '%s': %s", v, err);
            o->call = (int)n;
        }
        else if (!strcmp(a, "--out")) { if (!*v) BAD("--out needs a folder"); o->out = v; }
        else if (!strcmp(a, "--transport")) {
            if (strcmp(v, "mpi") && strcmp(v, "shm")) BAD("bad --transport '%s' (want mpi or shm)", v);
            o->transport = v;
        } else if (!strcmp(a, "--np")) {
            if (ck_parse_int(v, 1, CD_MAX_RANKS, &n, err, sizeof err)) BAD("--np '%s': %s", v, err);
            o->np = (int)n;
        } else if (!strcmp(a, "--count")) {
            if (ck_parse_int(v, 0, CD_MAX_COUNT, &n, err, sizeof err)) BAD("--count '%s': %s", v, err);
            o->count = n;
        } else if (!strcmp(a, "--inplace")) {
            if (ck_parse_int(v, 0, 1, &n, err, sizeof err)) BAD("--inplace '%s': %s", v, err);
            o->inplace = (int)n;
        } else if (!strcmp(a, "--timeout")) {
            if (ck_parse_double(v, 0, 1e6, &d, err, sizeof err)) BAD("--timeout '%s': %s", v, err);
            o->timeout = d;
        } else BAD("unknown option '%s' (see --help)", a);
#undef BAD
    }
    if (o->gantt) {
        if (o->algo || run_only) {
            if (print) fprintf(stderr, "%s: --gantt draws a trace; %s is for a run (give one of them)\n", argv[0],
                               o->algo ? "--algo" : run_only);
            return 2;
        }
        return -1;
    }
    if (gantt_only) {
        if (print) fprintf(stderr, "%s: %s picks a call of a --gantt trace; a run draws its one call\n", argv[0], gantt_only);
        return 2;
    }
    if (!o->algo) {
        if (print) fprintf(stderr, "%s: --algo NAME is needed (%s --algo list shows the registry)\n", argv[0], argv[0]);
        return 2;
    }
    const char *cs = o->coll ? " --coll " : "", *cn = o->coll ? ck_coll_name(o->coll) : "";
    if (!strcmp(o->algo, "list")) {
        if (print) ck_coll_algo_print_table(o->coll, stdout);
        return 0;
    }
    const ck_algo *a = ck_coll_algo_find(o->coll, o->algo);
    if (!a) {
        if (print) fprintf(stderr, "%s: unknown algorithm '%s' (%s%s%s --algo list shows the %s registry)\n", argv[0],
                           o->algo, argv[0], cs, cn, ck_coll_name(o->coll));
        return 2;
    }
    if (a->flags & CK_ALGO_REFERENCE) {
        if (print) fprintf(stderr, "%s: '%s' is a library's own collective: its steps are not collkit's to watch\n",
                           argv[0], o->algo);
        return 2;
    }
    if (!(a->mem & (CK_MEM_HOST | CK_MEM_SHM))) {
        if (print) fprintf(stderr, "%s: '%s' runs on device buffers only; colldraw draws host buffers\n", argv[0], o->algo);
        return 2;
    }
    return -1;
}

/* Not started by a launcher and asked for more than one rank: start again
 * under ckrun (the one found beside this program, else on PATH). */
static int relaunch(int argc, char **argv, const char *tool, int np)
{
    char self[4096], ckrun[4200], nps[16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) { fprintf(stderr, "%s: cannot find this program to start it on %d ranks: run it as ckrun -np %d %s ...\n", argv[0], np, np, argv[0]); return 2; }
    self[n] = '\0';
    snprintf(ckrun, sizeof ckrun, "%s", self);
    char *slash = strrchr(ckrun, '/');
    snprintf(slash + 1, sizeof ckrun - (size_t)(slash + 1 - ckrun), "ckrun");
    snprintf(nps, sizeof nps, "%d", np);
    char **args = calloc((size_t)argc + 6, sizeof *args);
    if (!args) return 2;
    int k = 0;
    args[k++] = "ckrun";
    args[k++] = "-np";
    args[k++] = nps;
    args[k++] = self;
    if (tool) args[k++] = (char *)tool;
    for (int i = 1; i < argc; i++) args[k++] = argv[i];
    args[k] = NULL;
    fflush(NULL);
    if (access(ckrun, X_OK) == 0) execv(ckrun, args);
    execvp("ckrun", args);
    fprintf(stderr, "%s: cannot start ckrun (%s): run it as mpirun -np %d %s ...\n", argv[0], strerror(errno), np, argv[0]);
    free(args);
    return 2;
}

/* ------------------------------------------------------------ decoding */

static int64_t sum_of(const cc_scheme *s, uint32_t mask, size_t i)
{
    int64_t v = 0;
    for (int r = 0; r < s->p; r++)
        if (mask >> r & 1u) v += cc_input(s, r, i);
    return v;
}

/* The cell element i of a rank's buffer is in, given its value v. */
static cd_cell decode(const cc_scheme *s, size_t count, size_t i, int64_t v)
{
    cd_cell c = {.from = -1};
    const uint32_t low = (uint32_t)(v & (int64_t)((1ull << s->p) - 1));
    if (sum_of(s, low, i) == v) { c.mask = low; return c; }
    c.wrong = 1;
    c.garbled = 1;
    for (size_t j = 0; j < count; j++)
        if (j != i && sum_of(s, low, j) == v) { c.from = (long)j; c.mask = low; c.garbled = 0; break; }
    return c;
}

/* decode, by collective: an all-gather's element holds its block owner's
 * input or nothing; another rank's value of it (a block from the wrong
 * neighbour) is wrong. */
static cd_cell decode_coll(int coll, const cc_scheme *s, size_t count, size_t i, int64_t v)
{
    cd_cell c = decode(s, count, i, v);
    if (coll == CK_COLL_ALLGATHER && !c.wrong && c.mask && c.mask != 1u << cc_block_owner(count, s->p, i)) c.wrong = 1;
    return c;
}

/* ------------------------------------------------------------ frames */

typedef struct gathered {
    int        nsnaps, nposts;
    snap      *snaps;
    int64_t   *data;
    post_note *posts;
} gathered;

/* The first snapshot of rank r taken after step s was done: the state step s left. */
static int after(const gathered *g, int s)
{
    for (int k = 0; k < g->nsnaps && s != CD_NO_STEP; k++)
        if (g->snaps[k].step > s) return k;
    return g->nsnaps - 1;
}

/* The model's row of a region name (0 the buffer, k + 1 region k), -1 when not drawn. */
static int model_row(const cd_model *m, const char *name)
{
    if (!*name) return 0;
    for (int k = 0; k < m->nshared; k++)
        if (!strcmp(m->shared[k], name)) return k + 1;
    return -1;
}

/* A region's slots hold elements wherever the algorithm put them: each value
 * says which element's contributions it holds, and the cell is drawn there. */
static void decode_region(const cc_scheme *s, size_t count, const int64_t *v, cd_cell *row)
{
    for (size_t i = 0; i < count; i++) row[i] = (cd_cell){.from = -1};
    for (size_t i = 0; i < count; i++) {
        if (!v[i]) continue;   /* nothing yet (the region starts zeroed) */
        cd_cell c = decode(s, count, i, v[i]);
        if (!c.wrong) row[i] = c;
        else if (!c.garbled) row[c.from] = (cd_cell){.mask = c.mask, .from = -1};
        else row[i] = c;
    }
}

/* The element a region slot holds in snapshot k of a rank, or -1. */
static long slot_elem(const cc_scheme *s, size_t count, const int64_t *v, long slot)
{
    if (slot < 0 || (size_t)slot >= count || !v[slot]) return -1;
    cd_cell c = decode(s, count, (size_t)slot, v[slot]);
    return !c.wrong ? slot : !c.garbled ? c.from : -1;
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

static int build_model(cd_model *m, gathered *g)
{
    const int p = m->p;
    const size_t count = m->count;
    const cc_scheme s = cc_scheme_of(CK_I64, CK_SUM, p);
    /* The steps anyone entered or posted in, in order (snapshots 0 and last are
     * the input and the result, taken around the call). */
    int nsteps = 0, cap = 16;
    int *steps = malloc((size_t)cap * sizeof *steps);
    if (!steps) return -1;
    for (int r = 0; r < p; r++) {
        for (int k = 1; k + 1 < g[r].nsnaps; k++) {
            if (nsteps == cap) { int *n = realloc(steps, (size_t)(cap *= 2) * sizeof *n); if (!n) { free(steps); return -1; } steps = n; }
            steps[nsteps++] = g[r].snaps[k].step;
        }
        for (int k = 0; k < g[r].nposts; k++) {
            if (nsteps == cap) { int *n = realloc(steps, (size_t)(cap *= 2) * sizeof *n); if (!n) { free(steps); return -1; } steps = n; }
            steps[nsteps++] = g[r].posts[k].step;
        }
    }
    qsort(steps, (size_t)nsteps, sizeof *steps, cmp_int);
    /* the regions any rank showed, by name */
    for (int r = 0; r < p; r++)
        for (int k = 0; k < g[r].nsnaps; k++)
            for (int j = 0; j < CD_MAX_SHARED; j++) {
                const char *nm = g[r].snaps[k].shared[j];
                if (*nm && model_row(m, nm) < 0 && m->nshared < CD_MAX_SHARED)
                    snprintf(m->shared[m->nshared++], CD_NAME, "%s", nm);
            }
    int u = 0;
    for (int k = 0; k < nsteps; k++)
        if (u == 0 || steps[u - 1] != steps[k]) steps[u++] = steps[k];
    nsteps = u;
    /* an algorithm that names no step (or p = 1) still gets its result drawn */
    if (nsteps == 0) steps[nsteps++] = CD_NO_STEP;

    m->nframes = nsteps + 1;
    m->frames = calloc((size_t)m->nframes, sizeof *m->frames);
    if (!m->frames) { free(steps); return -1; }
    for (int f = 0; f < m->nframes; f++) {
        cd_frame *F = &m->frames[f];
        F->step = f == 0 ? -1 : steps[f - 1];
        F->cells = calloc((size_t)p * (count ? count : 1), sizeof *F->cells);
        F->shared = m->nshared ? calloc((size_t)p * CD_MAX_SHARED * (count ? count : 1), sizeof *F->shared) : NULL;
        if (!F->cells || (m->nshared && !F->shared)) { free(steps); return -1; }
        if (f == 0) snprintf(F->phase, sizeof F->phase, "input");
        for (int r = 0; r < p; r++) {
            /* the state: the input, or what step F->step left */
            const int sk = f == 0 ? 0 : after(&g[r], F->step);
            const int64_t *v = g[r].data + (size_t)sk * NROWS * count;
            for (size_t i = 0; i < count; i++) F->cells[(size_t)r * count + i] = decode_coll(m->coll, &s, count, i, v[i]);
            for (int j = 0; j < CD_MAX_SHARED && F->shared; j++) {
                const int row = *g[r].snaps[sk].shared[j] ? model_row(m, g[r].snaps[sk].shared[j]) : -1;
                if (row > 0) decode_region(&s, count, v + (size_t)(j + 1) * count, F->shared + ((size_t)r * CD_MAX_SHARED + (size_t)(row - 1)) * count);
            }
            /* the phase: the names the ranks gave this step, each once */
            for (int k = 1; f > 0 && k + 1 < g[r].nsnaps; k++) {
                const char *ph = g[r].snaps[k].phase;
                if (g[r].snaps[k].step != F->step || !*ph || strstr(F->phase, ph)) continue;
                size_t l = strlen(F->phase);
                snprintf(F->phase + l, sizeof F->phase - l, "%s%s", l ? " / " : "", ph);
            }
        }
        /* the messages sent in this step; a send from a buffer not drawn
         * (scratch) takes the elements of the receive it meets */
        for (int r = 0; f > 0 && r < p; r++)
            for (int k = 0; k < g[r].nposts; k++) {
                const post_note *n = &g[r].posts[k];
                if (n->kind == CK_EV_COPY && n->step == F->step && n->peer >= 0 && n->peer < p) {
                    /* a load: from the peer's buffer or region into this rank's */
                    const int sk = after(&g[r], F->step);
                    const int from = model_row(m, n->from);
                    int row = 0;
                    long elem = n->elem;
                    if (n->row > 0) {
                        row = model_row(m, g[r].snaps[sk].shared[n->row - 1]);
                        elem = slot_elem(&s, count, g[r].data + ((size_t)sk * NROWS + (size_t)n->row) * count, n->elem);
                    }
                    cd_msg msg = {.src = n->peer, .dst = r, .src_row = from < 0 ? 0 : from, .dst_row = row < 0 ? 0 : row,
                                  .load = 1, .bytes = n->bytes, .elem = elem, .nelem = n->nelem};
                    cd_msg *nm = realloc(F->msgs, (size_t)(F->nmsgs + 1) * sizeof *nm);
                    if (!nm) { free(steps); return -1; }
                    F->msgs = nm;
                    F->msgs[F->nmsgs++] = msg;
                    continue;
                }
                if (n->kind != CK_EV_SEND || n->step != F->step) continue;
                cd_msg msg = {.src = r, .dst = n->peer, .bytes = n->bytes, .elem = n->elem, .nelem = n->nelem};
                if (msg.elem < 0 && n->peer >= 0 && n->peer < p)
                    for (int q = 0; q < g[n->peer].nposts; q++) {
                        const post_note *rv = &g[n->peer].posts[q];
                        if (rv->kind == CK_EV_RECV && rv->peer == r && rv->step == n->step && rv->bytes == n->bytes &&
                            rv->elem >= 0) { msg.elem = rv->elem; msg.nelem = rv->nelem; break; }
                    }
                cd_msg *nm = realloc(F->msgs, (size_t)(F->nmsgs + 1) * sizeof *nm);
                if (!nm) { free(steps); return -1; }
                F->msgs = nm;
                F->msgs[F->nmsgs++] = msg;
            }
    }
    free(steps);
    if (m->nframes > 1 && !m->frames[m->nframes - 1].phase[0])
        snprintf(m->frames[m->nframes - 1].phase, sizeof m->frames[0].phase, "result");
    /* the last frame must hold what the collective leaves (all-reduce: every
     * contribution everywhere; reduce-scatter: all of them in the rank's own
     * block, the rest undefined; all-gather: every block its owner's input);
     * then mark where each wrong element went wrong */
    const uint32_t full = p >= 32 ? 0xffffffffu : (1u << p) - 1;
    cd_frame *L = &m->frames[m->nframes - 1];
    for (int r = 0; r < p && m->nframes > 1; r++)
        for (size_t i = 0; i < count; i++) {
            cd_cell *c = &L->cells[(size_t)r * count + i];
            const int own = cc_block_owner(count, p, i);
            if (m->coll == CK_COLL_REDUCE_SCATTER && own != r) *c = (cd_cell){.mask = c->wrong ? 0 : c->mask, .from = -1, .spare = 1};
            else if (c->mask != (m->coll == CK_COLL_ALLGATHER ? 1u << own : full)) c->wrong = 1;
        }
    for (int f = 0; f < m->nframes; f++)
        for (size_t c = 0; c < (size_t)p * count; c++)
            m->frames[f].cells[c].first = m->frames[f].cells[c].wrong && (f == 0 || !m->frames[f - 1].cells[c].wrong);
    return 0;
}

/* ------------------------------------------------------------ gathering */

static int gather(const rec *R, int rank, int p, MPI_Comm comm, gathered *g)
{
    long long mine[2] = {R->nsnaps, R->nposts};
    long long *all = rank == 0 ? malloc((size_t)p * 2 * sizeof *all) : NULL;
    int bad = rank == 0 && (!all || !g);
    MPI_Gather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, 0, comm);
    /* three gathers of raw bytes: snapshots, their data, the posts */
    const size_t sizes[3] = {sizeof(snap), NROWS * R->count * sizeof(int64_t), sizeof(post_note)};
    const void *src[3] = {R->snaps, R->data, R->posts};
    const int nmine[3] = {R->nsnaps, R->nsnaps, R->nposts};
    char *dst[3] = {NULL, NULL, NULL};
    int *cnt = rank == 0 ? calloc((size_t)p, sizeof *cnt) : NULL, *dis = rank == 0 ? calloc((size_t)p, sizeof *dis) : NULL;
    if (rank == 0 && (!cnt || !dis)) bad = 1;
    for (int t = 0; t < 3; t++) {
        long long total = 0;
        if (rank == 0 && !bad) {
            for (int r = 0; r < p; r++) {
                long long b = (t == 2 ? all[2 * r + 1] : all[2 * r]) * (long long)sizes[t];
                if (b > INT_MAX || total > INT_MAX - b) { bad = 1; break; }
                cnt[r] = (int)b;
                dis[r] = (int)total;
                total += b;
            }
            if (!bad) dst[t] = malloc((size_t)total + 1);
            if (!dst[t]) bad = 1;
            if (bad) for (int r = 0; r < p; r++) cnt[r] = dis[r] = 0;
        }
        MPI_Gatherv(src[t], (int)((size_t)nmine[t] * sizes[t]), MPI_BYTE, dst[t], cnt, dis, MPI_BYTE, 0, comm);
    }
    if (rank == 0 && !bad) {
        size_t o[3] = {0, 0, 0};
        for (int r = 0; r < p; r++) {
            g[r].nsnaps = (int)all[2 * r];
            g[r].nposts = (int)all[2 * r + 1];
            g[r].snaps = (snap *)(dst[0] + o[0]);
            g[r].data = (int64_t *)(dst[1] + o[1]);
            g[r].posts = (post_note *)(dst[2] + o[2]);
            o[0] += (size_t)g[r].nsnaps * sizes[0];
            o[1] += (size_t)g[r].nsnaps * sizes[1];
            o[2] += (size_t)g[r].nposts * sizes[2];
        }
    }
    free(all);
    free(cnt);
    free(dis);
    return bad ? -1 : 0;   /* rank 0 frees the three blocks through g[0] */
}

/* ------------------------------------------------------------ main */

int colldraw_main(int argc, char **argv, const char *tool)
{
    opts o;
    int rc = parse(argc, argv, &o, ck_is_print_rank());
    if (rc >= 0) return rc;
    if (o.gantt) {
        char dir[1024], svg[1100], err[1300];
        snprintf(dir, sizeof dir, "%s", o.out ? o.out : "colldraw-gantt");
        snprintf(svg, sizeof svg, "%s/gantt.svg", dir);
        struct stat st;
        const int existed = stat(dir, &st) == 0;
        if (cd_out_dir(dir, 1, o.overwrite, 0, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", argv[0], err);
            return 2;
        }
        if (cd_gantt(o.gantt, o.call, svg, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", argv[0], err);
            if (!existed) rmdir(dir);   /* a trace refused leaves no empty folder behind */
            return 2;
        }
        printf("colldraw: call %d of %s drawn in %s\n", o.call, o.gantt, svg);
        return 0;
    }
    if (o.np > 1 && ck_launcher_rank() < 0) return relaunch(argc, argv, tool, o.np);

    int was_init;
    MPI_Initialized(&was_init);
    if (!was_init) MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int status = 2;
    if (ck_same_command_line(MPI_COMM_WORLD, argc, argv, "colldraw")) goto out;
    if (o.np && o.np != p) {
        if (rank == 0) fprintf(stderr, "%s: --np %d, but the job has %d ranks\n", argv[0], o.np, p);
        goto out;
    }
    if (p > CD_MAX_RANKS) {
        if (rank == 0) fprintf(stderr, "%s: %d ranks: colldraw draws 1 to %d\n", argv[0], p, CD_MAX_RANKS);
        goto out;
    }
    const ck_algo *algo = ck_coll_algo_find(o.coll, o.algo);
    const size_t count = o.count < 0 ? (size_t)(2 * p) : (size_t)o.count;
    if (count > CD_MAX_COUNT) {
        if (rank == 0) fprintf(stderr, "%s: %zu elements: colldraw draws 0 to %d\n", argv[0], count, CD_MAX_COUNT);
        goto out;
    }
    {   /* the output folder, checked before the run: a refusal costs nothing */
        char dir[512], werr[600];
        int ok = 1;
        if (o.out) snprintf(dir, sizeof dir, "%s", o.out);
        else snprintf(dir, sizeof dir, "colldraw-%s-p%d", o.algo, p);
        if (rank == 0 && cd_out_dir(dir, 0, o.overwrite, 1, werr, sizeof werr)) {
            fprintf(stderr, "%s: %s\n", argv[0], werr);
            ok = 0;
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!ok) goto out;
    }
    const char *tp = o.transport ? o.transport : (algo->mem & CK_MEM_HOST) ? "mpi" : "shm";
    unsigned mem = !strcmp(tp, "shm") ? (CK_MEM_HOST | CK_MEM_SHM) : CK_MEM_HOST;
    ck_comm *comm = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, mem, &comm)) {
        if (rank == 0) fprintf(stderr, "%s: cannot create the %s communicator\n", argv[0], tp);
        goto out;
    }
    ck_config cfg = *ck_comm_config(comm);
    cfg.timeout_s = o.timeout;
    ck_comm_set_config(comm, &cfg);
    const size_t bytes = (count ? count : 1) * sizeof(int64_t);
    int64_t *in = ck_alloc(comm, bytes), *buf = o.inplace ? in : ck_alloc(comm, bytes);
    rec R = {.buf = buf, .in = in, .count = count};
    int err = !in || !buf;
    size_t off, len;
    ck_block(count, (size_t)p, (size_t)rank, &off, &len);
    if (!err) {
        cc_fill(in, count, CK_I64, CK_SUM, rank, p);
        if (!o.inplace) memset(buf, 0, bytes);   /* 0 decodes as "no contribution yet" */
        else if (o.coll == CK_COLL_ALLGATHER) {  /* in place: only this rank's block is there yet */
            memset(buf, 0, off * sizeof *buf);
            memset(buf + off + len, 0, (count - off - len) * sizeof *buf);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int arc = CK_ERR_NOMEM;
    char emsg[512] = "";
    if (!err) {
        take_snap(&R, -1, "input");
        ck_observe(comm, &(ck_observer){.step = on_step, .message = on_message, .ctx = &R, .shared = on_shared, .load = on_load});
        /* out of place a reduce-scatter's result is its block of the buffer
         * drawn, an all-gather's input its block of `in` */
        if (o.coll == CK_COLL_REDUCE_SCATTER)
            arc = ck_reduce_scatter(comm, algo, o.inplace ? CK_IN_PLACE : in, o.inplace ? buf : buf + off, count, CK_I64, CK_SUM);
        else if (o.coll == CK_COLL_ALLGATHER)
            arc = ck_allgather(comm, algo, o.inplace ? CK_IN_PLACE : in + off, buf, count, CK_I64);
        else
            arc = ck_allreduce(comm, algo, o.inplace ? CK_IN_PLACE : in, buf, count, CK_I64, CK_SUM);
        ck_observe(comm, NULL);
        snprintf(emsg, sizeof emsg, "%s", arc ? ck_comm_errmsg(comm) : "");
        take_snap(&R, INT_MAX, "");
    } else if (rank == 0) fprintf(stderr, "%s: out of memory for the buffers\n", argv[0]);
    /* the first failing rank's status and message, for the picture */
    int first = arc ? rank : p, frc = arc;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first < p && first != 0) {
        if (rank == first) {
            MPI_Send(&frc, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
            MPI_Send(emsg, sizeof emsg, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&frc, 1, MPI_INT, first, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(emsg, sizeof emsg, MPI_CHAR, first, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    int full = R.full;
    MPI_Allreduce(MPI_IN_PLACE, &full, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

    gathered *g = rank == 0 ? calloc((size_t)p, sizeof *g) : NULL;
    int gbad = gather(&R, rank, p, MPI_COMM_WORLD, g);
    if (rank == 0) {
        cd_model m = {.p = p, .count = count, .inplace = o.inplace, .coll = o.coll, .status = first < p ? frc : 0};
        snprintf(m.algo, sizeof m.algo, "%s", o.algo);
        snprintf(m.transport, sizeof m.transport, "%s", ck_comm_transport_name(comm));
        if (first < p) snprintf(m.error, sizeof m.error, "rank %d: %s", first, emsg[0] ? emsg : ck_strerror(frc));
        char dir[512], werr[600];
        if (o.out) snprintf(dir, sizeof dir, "%s", o.out);
        else if (o.coll) snprintf(dir, sizeof dir, "colldraw-%s-%s-p%d", ck_coll_name(o.coll), o.algo, p);
        else snprintf(dir, sizeof dir, "colldraw-%s-p%d", o.algo, p);
        if (gbad || !g || build_model(&m, g)) {
            fprintf(stderr, "%s: out of memory for the frames\n", argv[0]);
            status = 2;
        } else if (cd_write_all(&m, dir, o.overwrite, werr, sizeof werr)) {
            fprintf(stderr, "%s: %s\n", argv[0], werr);
            status = 2;
        } else {
            int nwrong = 0, fw = -1;
            size_t fc = 0;
            const cd_frame *L = &m.frames[m.nframes - 1];
            for (size_t c = 0; c < (size_t)p * count; c++) nwrong += L->cells[c].wrong;
            for (int f = 0; f < m.nframes && fw < 0; f++)
                for (size_t c = 0; c < (size_t)p * count; c++)
                    if (m.frames[f].cells[c].first) { fw = f; fc = c; break; }
            printf("colldraw: %s%s%s at p = %d, %zu elements (%s, %s): %d frames in %s/ (index.html, frame-00.svg ..)\n",
                   o.algo, o.coll ? " " : "", o.coll ? ck_coll_name(o.coll) : "", p, count, o.inplace ? "in place" : "out of place", m.transport, m.nframes, dir);
            if (full) printf("colldraw: the run was longer than %d steps or %d messages: the frames stop there\n", MAX_SNAPS, MAX_POSTS);
            if (m.error[0]) printf("colldraw: the algorithm failed: %s\n", m.error);
            if (nwrong && fw >= 0)
                printf("colldraw: %d wrong elements in the result; the first went wrong in frame %d (step %d, %s): rank %zu, element %zu\n",
                       nwrong, fw, m.frames[fw].step, m.frames[fw].phase, fc / count, fc % count);
            status = (nwrong || m.error[0]) ? 1 : 0;
        }
        for (int f = 0; f < m.nframes; f++) { free(m.frames[f].cells); free(m.frames[f].shared); free(m.frames[f].msgs); }
        free(m.frames);
        if (g && !gbad) { free(g[0].snaps); free(g[0].data); free(g[0].posts); }
        free(g);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(R.snaps);
    free(R.data);
    free(R.posts);
    if (buf && !o.inplace) ck_free(comm, buf);
    if (in) ck_free(comm, in);
    ck_comm_destroy(comm);
out:
    if (!was_init) MPI_Finalize();
    return status;
}
