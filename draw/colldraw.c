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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collcheck.h"
#include "collkit_algo.h"
#include "colldraw.h"
#include "collkit_util.h"
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
    const char *coll_name;   /* --coll as given: checked, then coll */
    ck_coll     coll;
    int         call;      /* --gantt: which call of the trace */
    int         overwrite; /* --overwrite: an earlier drawing in --out is replaced */
    int         np;        /* 0: the job's size */
    int         count;     /* -1: 2p */
    int         inplace;
    int         view;      /* --view R: only what rank R receives is drawn (-1: everything) */
    double      timeout;
} opts;

/* The header's limits in --help's text. */
#define CD_STR_(x) #x
#define CD_STR(x) CD_STR_(x)

/* Which kind of drawing an option belongs to: given to the other kind it
 * would be ignored without a word, so it is refused. */
enum { FOR_RUN = CK_OPT_USER, FOR_GANTT = CK_OPT_USER << 1 };

static const ck_opt options[] = {
    {"--coll", 0, CK_OPT_STR, offsetof(opts, coll_name), .arg = "C", .flags = FOR_RUN,
     .help = "allreduce (default), reduce_scatter or allgather: the registry\n"
             "NAME is taken from (--coll C --algo list shows it); a reduce-scatter\n"
             "must leave block r complete on rank r, an all-gather every block\n"
             "holding its owner's input only"},
    {"--np", 0, CK_OPT_INT, offsetof(opts, np), .lo = 1, .hi = CD_MAX_RANKS, .arg = "P", .flags = FOR_RUN,
     .help = "ranks (1 to " CD_STR(CD_MAX_RANKS) "); without a launcher colldraw starts itself under\n"
             "ckrun -np P, under mpirun P must be the job's size"},
    {"--count", 0, CK_OPT_INT, offsetof(opts, count), .lo = 0, .hi = CD_MAX_COUNT, .arg = "N", .flags = FOR_RUN,
     .help = "elements (i64, 0 to " CD_STR(CD_MAX_COUNT) "; default 2p)"},
    {"--inplace", 0, CK_OPT_INT, offsetof(opts, inplace), .lo = 0, .hi = 1, .arg = "0|1", .flags = FOR_RUN,
     .help = "in place (default 1: every rank starts with its own input in the\n"
             "buffer drawn) or out of place (the buffer drawn starts empty)"},
    {"--view", 0, CK_OPT_INT, offsetof(opts, view), .lo = 0, .hi = CD_MAX_RANKS - 1, .arg = "R", .flags = FOR_RUN,
     .help = "one rank's view: the frames draw only the messages and loads rank R\n"
             "receives (a one-shot's loads from every peer); frames.txt keeps all"},
    {"--out", 0, CK_OPT_STR, offsetof(opts, out), .arg = "DIR",
     .help = "where to write (default colldraw-NAME-pP): frame-NN.svg (one per\n"
             "step), index.html (every frame, a step control, works offline),\n"
             "frames.txt (the frames as text); DIR must be new or empty"},
    {"--overwrite", 0, CK_OPT_FLAG, offsetof(opts, overwrite),
     .help = "replace an earlier drawing (or gantt.svg) in DIR; a folder holding\n"
             "any other file is refused all the same"},
    {"--transport", 0, CK_OPT_STR, offsetof(opts, transport), .arg = "T", .flags = FOR_RUN,
     .help = "mpi (default) or shm (default for algorithms that need it)"},
    {"--timeout", 0, CK_OPT_DOUBLE, offsetof(opts, timeout), .lo = 0, .hi = 1e6, .arg = "SEC", .flags = FOR_RUN,
     .help = "the hang watchdog (default %D)"},
    {"--gantt", 0, CK_OPT_STR, offsetof(opts, gantt), .arg = "TRACE",
     .help = "no run: draw call K (default 0) of a collbench trace\n"
             "(collbench --trace TRACE) as a Gantt timeline, DIR/gantt.svg\n"
             "(default folder colldraw-gantt): one row per rank and lane;\n"
             "a tagtrain trace (tagtrain --trace) draws step K of training:\n"
             "per rank the backward layers and each bucket's all-reduce"},
    {"--call", 0, CK_OPT_INT, offsetof(opts, call), .lo = 0, .hi = 1 << 30, .arg = "K", .flags = FOR_GANTT,
     .help = "the call (or training step) --gantt draws"},
    {"--algo", 0, CK_OPT_STR, offsetof(opts, algo), .arg = "NAME", .flags = CK_OPT_HIDE},
    {NULL},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };

static const opts defaults = {.count = -1, .inplace = 1, .view = -1, .timeout = 30};

static void usage(const char *prog)
{
    printf("usage: %s --algo NAME [--coll C] [--np P] [--count N] [--inplace 0|1] [--view R] [--out DIR]\n"
           "          [--transport mpi|shm] [--timeout SEC] [--overwrite]\n"
           "       %s --gantt TRACE.json [--call K] [--out DIR] [--overwrite]\n"
           "Run one all-reduce (or --coll) of NAME (any registered algorithm: %s --algo list)\n"
           "with every step recorded, and draw it: per step each rank's buffer as a row of blocks coloured\n"
           "by whose contributions they hold, and the step's messages as arrows labelled with\n"
           "the block and the bytes they carry. A wrong element is hatched red from the step it\n"
           "went wrong. Shared-memory algorithms (oneshot, twoshot) get rows for the memory\n"
           "their peers load from (ck_show_shared) and dashed arrows for the loads.\n",
           prog, prog, prog);
    ck_opt_help(stdout, options, &defaults);
    printf("PNG or PDF: rsvg-convert -f png -o frame.png frame-03.svg (Debian: librsvg2-bin).\n"
           "Exit status: 0 drawn and right, 1 drawn and wrong (or the algorithm failed),\n"
           "2 bad arguments or output that cannot be written.\n");
}

/* The last option given of one kind of drawing (FOR_RUN, FOR_GANTT), or NULL. */
static const char *given_for(const char **given, unsigned kind)
{
    const char *name = NULL;
    for (int k = 0; options[k].name; k++)
        if (given[k] && (options[k].flags & kind)) name = options[k].name;
    return name;
}

/* What the table cannot say: values it keeps as text, and options of the
 * other kind of drawing. Returns NULL, or the reason (in err). */
static const char *check_values(opts *o, const char **given, char *err, size_t cap)
{
    if (o->coll_name && ck_coll_parse(o->coll_name, &o->coll))
        snprintf(err, cap, "bad --coll '%s' (want allreduce, reduce_scatter or allgather)", o->coll_name);
    else if (o->gantt && !*o->gantt) snprintf(err, cap, "--gantt needs a trace file");
    else if (o->view >= 0 && o->np && o->view >= o->np) snprintf(err, cap, "--view %d: no such rank of %d", o->view, o->np);
    else if (o->out && !*o->out) snprintf(err, cap, "--out needs a folder");
    else if (o->transport && strcmp(o->transport, "mpi") && strcmp(o->transport, "shm"))
        snprintf(err, cap, "bad --transport '%s' (want mpi or shm)", o->transport);
    else if (o->gantt && (o->algo || given_for(given, FOR_RUN)))
        snprintf(err, cap, "--gantt draws a trace; %s is for a run (give one of them)",
                 o->algo ? "--algo" : given_for(given, FOR_RUN));
    else if (!o->gantt && given_for(given, FOR_GANTT))
        snprintf(err, cap, "%s picks a call of a --gantt trace; a run draws its one call", given_for(given, FOR_GANTT));
    else return NULL;
    return err;
}

/* The algorithm a run draws: one colldraw can watch. Returns NULL, or the reason (in err). */
static const char *check_algo(const opts *o, const char *prog, char *err, size_t cap)
{
    const ck_algo *a = ck_coll_algo_find(o->coll, o->algo);
    if (!a)
        snprintf(err, cap, "unknown algorithm '%s' (%s%s%s --algo list shows the %s registry)", o->algo, prog,
                 o->coll ? " --coll " : "", o->coll ? ck_coll_name(o->coll) : "", ck_coll_name(o->coll));
    else if (a->flags & CK_ALGO_REFERENCE)
        snprintf(err, cap, "'%s' is a library's own collective: its steps are not collkit's to watch", o->algo);
    else if (!(a->mem & (CK_MEM_HOST | CK_MEM_SHM)))
        snprintf(err, cap, "'%s' runs on device buffers only; colldraw draws host buffers", o->algo);
    else return NULL;
    return err;
}

/* Returns -1 to go on, else the exit status. Only the printing rank speaks. */
static int parse(int argc, char **argv, opts *o, int print)
{
    *o = defaults;
    char err[600];
    const char *given[NOPTIONS] = {0};
    const int rc = ck_opt_parse(options, argc, argv, o, given, err, sizeof err);
    if (rc == CK_OPT_HELP) {
        if (print) usage(argv[0]);
        return 0;
    }
    const char *why = rc == CK_OPT_BAD ? err : check_values(o, given, err, sizeof err);
    if (!why && !o->gantt && !o->algo) {
        snprintf(err, sizeof err, "--algo NAME is needed (%s --algo list shows the registry)", argv[0]);
        why = err;
    }
    if (!why && !o->gantt && !strcmp(o->algo, "list")) {
        if (print) ck_coll_algo_print_table(o->coll, stdout);
        return 0;
    }
    if (!why && !o->gantt) why = check_algo(o, argv[0], err, sizeof err);
    if (!why) return -1;
    const int lost = rc == CK_OPT_BAD && (!strncmp(err, "unknown", 7) || strstr(err, "needs a value"));
    if (print) fprintf(stderr, "%s: %s%s\n", argv[0], why, lost ? " (see --help)" : "");
    return 2;
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

static int push_step(int **steps, int *n, int *cap, int step)
{
    if (*n == *cap) {
        int *s = realloc(*steps, (size_t)(*cap * 2) * sizeof *s);
        if (!s) return -1;
        *steps = s;
        *cap *= 2;
    }
    (*steps)[(*n)++] = step;
    return 0;
}

/* The steps anyone entered or posted in, in order, each once (snapshots 0
 * and last are the input and the result, taken around the call); an
 * algorithm that names no step (or p = 1) still gets its result drawn.
 * Returns how many, -1 out of memory. */
static int collect_steps(const gathered *g, int p, int **out)
{
    int nsteps = 0, cap = 16;
    int *steps = malloc((size_t)cap * sizeof *steps);
    for (int r = 0; r < p && steps; r++) {
        for (int k = 1; k + 1 < g[r].nsnaps && steps; k++)
            if (push_step(&steps, &nsteps, &cap, g[r].snaps[k].step)) { free(steps); steps = NULL; }
        for (int k = 0; k < g[r].nposts && steps; k++)
            if (push_step(&steps, &nsteps, &cap, g[r].posts[k].step)) { free(steps); steps = NULL; }
    }
    if (!steps) return -1;
    qsort(steps, (size_t)nsteps, sizeof *steps, cmp_int);
    int u = 0;
    for (int k = 0; k < nsteps; k++)
        if (u == 0 || steps[u - 1] != steps[k]) steps[u++] = steps[k];
    if (u == 0) steps[u++] = CD_NO_STEP;
    *out = steps;
    return u;
}

/* The regions any rank showed, by name. */
static void collect_regions(cd_model *m, const gathered *g)
{
    for (int r = 0; r < m->p; r++)
        for (int k = 0; k < g[r].nsnaps; k++)
            for (int j = 0; j < CD_MAX_SHARED; j++) {
                const char *nm = g[r].snaps[k].shared[j];
                if (*nm && model_row(m, nm) < 0 && m->nshared < CD_MAX_SHARED)
                    snprintf(m->shared[m->nshared++], CD_NAME, "%s", nm);
            }
}

/* Frame f of rank r: the input, or what step F->step left, in the buffer and
 * the regions; and the phase, the names the ranks gave this step, each once. */
static void frame_state(const cd_model *m, const gathered *gr, const cc_scheme *s, int f, int r)
{
    const size_t count = m->count;
    cd_frame *F = &m->frames[f];
    const int sk = f == 0 ? 0 : after(gr, F->step);
    const int64_t *v = gr->data + (size_t)sk * NROWS * count;
    for (size_t i = 0; i < count; i++) F->cells[(size_t)r * count + i] = decode_coll(m->coll, s, count, i, v[i]);
    for (int j = 0; j < CD_MAX_SHARED && F->shared; j++) {
        const int row = *gr->snaps[sk].shared[j] ? model_row(m, gr->snaps[sk].shared[j]) : -1;
        if (row > 0)
            decode_region(s, count, v + (size_t)(j + 1) * count,
                          F->shared + ((size_t)r * CD_MAX_SHARED + (size_t)(row - 1)) * count);
    }
    for (int k = 1; f > 0 && k + 1 < gr->nsnaps; k++) {
        const char *ph = gr->snaps[k].phase;
        if (gr->snaps[k].step != F->step || !*ph || strstr(F->phase, ph)) continue;
        size_t l = strlen(F->phase);
        snprintf(F->phase + l, sizeof F->phase - l, "%s%s", l ? " / " : "", ph);
    }
}

static int add_msg(cd_frame *F, cd_msg msg)
{
    cd_msg *nm = realloc(F->msgs, (size_t)(F->nmsgs + 1) * sizeof *nm);
    if (!nm) return -1;
    F->msgs = nm;
    F->msgs[F->nmsgs++] = msg;
    return 0;
}

/* A load by rank r in this step: from the peer's buffer or region into this rank's. */
static cd_msg load_msg(const cd_model *m, const gathered *gr, const cc_scheme *s, int step, int r, const post_note *n)
{
    const int sk = after(gr, step);
    const int from = model_row(m, n->from);
    int row = 0;
    long elem = n->elem;
    if (n->row > 0) {
        row = model_row(m, gr->snaps[sk].shared[n->row - 1]);
        elem = slot_elem(s, m->count, gr->data + ((size_t)sk * NROWS + (size_t)n->row) * m->count, n->elem);
    }
    return (cd_msg){.src = n->peer, .dst = r, .src_row = from < 0 ? 0 : from, .dst_row = row < 0 ? 0 : row,
                    .load = 1, .bytes = n->bytes, .elem = elem, .nelem = n->nelem};
}

/* A send by rank r; from a buffer not drawn (scratch) it takes the elements
 * of the receive it meets. */
static cd_msg send_msg(const gathered *g, int p, int r, const post_note *n)
{
    cd_msg msg = {.src = r, .dst = n->peer, .bytes = n->bytes, .elem = n->elem, .nelem = n->nelem};
    if (msg.elem < 0 && n->peer >= 0 && n->peer < p)
        for (int q = 0; q < g[n->peer].nposts; q++) {
            const post_note *rv = &g[n->peer].posts[q];
            if (rv->kind == CK_EV_RECV && rv->peer == r && rv->step == n->step && rv->bytes == n->bytes && rv->elem >= 0) {
                msg.elem = rv->elem;
                msg.nelem = rv->nelem;
                break;
            }
        }
    return msg;
}

/* The messages and loads of frame F's step. */
static int frame_messages(const cd_model *m, const gathered *g, const cc_scheme *s, cd_frame *F)
{
    const int p = m->p;
    for (int r = 0; r < p; r++)
        for (int k = 0; k < g[r].nposts; k++) {
            const post_note *n = &g[r].posts[k];
            if (n->step != F->step) continue;
            if (n->kind == CK_EV_COPY && n->peer >= 0 && n->peer < p) {
                if (add_msg(F, load_msg(m, &g[r], s, F->step, r, n))) return -1;
            } else if (n->kind == CK_EV_SEND) {
                if (add_msg(F, send_msg(g, p, r, n))) return -1;
            }
        }
    return 0;
}

/* The last frame must hold what the collective leaves (all-reduce: every
 * contribution everywhere; reduce-scatter: all of them in the rank's own
 * block, the rest undefined; all-gather: every block its owner's input);
 * then mark where each wrong element went wrong. */
static void judge_result(cd_model *m)
{
    const int p = m->p;
    const size_t count = m->count;
    if (m->nframes > 1 && !m->frames[m->nframes - 1].phase[0])
        snprintf(m->frames[m->nframes - 1].phase, sizeof m->frames[0].phase, "result");
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
}

/* The frames: the input, then the state each step left, with its messages. */
static int build_model(cd_model *m, gathered *g)
{
    const int p = m->p;
    const size_t count = m->count;
    const cc_scheme s = cc_scheme_of(CK_I64, CK_SUM, p);
    int *steps = NULL;
    const int nsteps = collect_steps(g, p, &steps);
    if (nsteps < 0) return -1;
    collect_regions(m, g);
    m->nframes = nsteps + 1;
    m->frames = calloc((size_t)m->nframes, sizeof *m->frames);
    int rc = m->frames ? 0 : -1;
    for (int f = 0; f < m->nframes && !rc; f++) {
        cd_frame *F = &m->frames[f];
        F->step = f == 0 ? -1 : steps[f - 1];
        F->cells = calloc((size_t)p * (count ? count : 1), sizeof *F->cells);
        F->shared = m->nshared ? calloc((size_t)p * CD_MAX_SHARED * (count ? count : 1), sizeof *F->shared) : NULL;
        if (!F->cells || (m->nshared && !F->shared)) { rc = -1; break; }
        if (f == 0) snprintf(F->phase, sizeof F->phase, "input");
        for (int r = 0; r < p; r++) frame_state(m, &g[r], &s, f, r);
        if (f > 0) rc = frame_messages(m, g, &s, F);
    }
    free(steps);
    if (!rc) judge_result(m);
    return rc;
}

/* ------------------------------------------------------------ gathering */

static int gather(const rec *R, int rank, int p, MPI_Comm comm, gathered *g)
{
    long long mine[2] = {R->nsnaps, R->nposts};
    long long *all = rank == 0 ? malloc((size_t)p * 2 * sizeof *all) : NULL;
    int bad = rank == 0 && (!all || !g);
    ck_watch_gather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, 0, comm, "the recordings' sizes");
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
        ck_watch_gatherv(src[t], (int)((size_t)nmine[t] * sizes[t]), MPI_BYTE, dst[t], cnt, dis, MPI_BYTE, 0, comm,
                         "the recordings");
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

/* ------------------------------------------------------------ the run */

/* The first rank whose collective failed (p: none), its status and message. */
typedef struct failure {
    int  rank, status;
    char msg[512];
} failure;

/* --gantt: no run, no MPI; a trace refused leaves no empty folder behind. */
static int draw_gantt(const opts *o, const char *prog)
{
    char dir[1024], svg[1100], err[1300];
    snprintf(dir, sizeof dir, "%s", o->out ? o->out : "colldraw-gantt");
    snprintf(svg, sizeof svg, "%s/gantt.svg", dir);
    struct stat st;
    const int existed = stat(dir, &st) == 0;
    if (cd_out_dir(dir, 1, o->overwrite, 0, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 2;
    }
    if (cd_gantt(o->gantt, o->call, svg, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        if (!existed) rmdir(dir);
        return 2;
    }
    printf("colldraw: call %d of %s drawn in %s\n", o->call, o->gantt, svg);
    return 0;
}

/* The job colldraw was started in can be drawn: 1, or 0 after rank 0 said why. */
static int job_fits(const opts *o, int rank, int p, const char *prog)
{
    const size_t count = o->count < 0 ? (size_t)(2 * p) : (size_t)o->count;
    if (o->np && o->np != p) {
        if (rank == 0) fprintf(stderr, "%s: --np %d, but the job has %d ranks\n", prog, o->np, p);
        return 0;
    }
    if (p > CD_MAX_RANKS) {
        if (rank == 0) fprintf(stderr, "%s: %d ranks: colldraw draws 1 to %d\n", prog, p, CD_MAX_RANKS);
        return 0;
    }
    if (count > CD_MAX_COUNT) {
        if (rank == 0) fprintf(stderr, "%s: %zu elements: colldraw draws 0 to %d\n", prog, count, CD_MAX_COUNT);
        return 0;
    }
    return 1;
}

static void out_dir_name(const opts *o, int p, char *dir, size_t cap)
{
    if (o->out) snprintf(dir, cap, "%s", o->out);
    else if (o->coll) snprintf(dir, cap, "colldraw-%s-%s-p%d", ck_coll_name(o->coll), o->algo, p);
    else snprintf(dir, cap, "colldraw-%s-p%d", o->algo, p);
}

/* The output folder, checked before the run: a refusal costs nothing. 1: it may be written. */
static int out_dir_free(const opts *o, const char *dir, int rank, const char *prog)
{
    char err[600];
    int ok = 1;
    if (rank == 0 && cd_out_dir(dir, 0, o->overwrite, 1, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        ok = 0;
    }
    ck_watch_bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD, "the output folder's check");
    return ok;
}

/* The communicator the algorithm runs on: shm for the algorithms that need it. */
static ck_comm *open_comm(const opts *o, const ck_algo *algo, int rank, const char *prog)
{
    const char *tp = o->transport ? o->transport : (algo->mem & CK_MEM_HOST) ? "mpi" : "shm";
    unsigned mem = !strcmp(tp, "shm") ? (CK_MEM_HOST | CK_MEM_SHM) : CK_MEM_HOST;
    ck_comm *comm = NULL;
    if (ck_comm_create(MPI_COMM_WORLD, mem, &comm)) {
        if (rank == 0) fprintf(stderr, "%s: cannot create the %s communicator\n", prog, tp);
        return NULL;
    }
    ck_config cfg = *ck_comm_config(comm);
    cfg.timeout_s = o->timeout;
    ck_comm_set_config(comm, &cfg);
    return comm;
}

/* One run's setting, the same on every rank but rank and the buffers. */
typedef struct job {
    const opts    *o;
    const ck_algo *algo;
    ck_comm       *comm;
    int            rank, p;
    size_t         count;
    int64_t       *in, *buf;   /* buf == in in place */
    const char    *prog;
} job;

/* The checker's inputs in `in`; the buffer drawn starts as the collective
 * finds it: 0 decodes as "no contribution yet". */
static void fill_inputs(const job *J)
{
    size_t off, len;
    ck_block(J->count, (size_t)J->p, (size_t)J->rank, &off, &len);
    cc_fill(J->in, J->count, CK_I64, CK_SUM, J->rank, J->p);
    if (!J->o->inplace) memset(J->buf, 0, (J->count ? J->count : 1) * sizeof *J->buf);
    else if (J->o->coll == CK_COLL_ALLGATHER) {   /* in place: only this rank's block is there yet */
        memset(J->buf, 0, off * sizeof *J->buf);
        memset(J->buf + off + len, 0, (J->count - off - len) * sizeof *J->buf);
    }
}

/* Out of place a reduce-scatter's result is its block of the buffer drawn,
 * an all-gather's input its block of `in`. */
static int run_collective(const job *J)
{
    size_t off, len;
    ck_block(J->count, (size_t)J->p, (size_t)J->rank, &off, &len);
    const int inplace = J->o->inplace;
    if (J->o->coll == CK_COLL_REDUCE_SCATTER)
        return ck_reduce_scatter(J->comm, J->algo, inplace ? CK_IN_PLACE : J->in, inplace ? J->buf : J->buf + off,
                                 J->count, CK_I64, CK_SUM);
    if (J->o->coll == CK_COLL_ALLGATHER)
        return ck_allgather(J->comm, J->algo, inplace ? CK_IN_PLACE : J->in + off, J->buf, J->count, CK_I64);
    return ck_allreduce(J->comm, J->algo, inplace ? CK_IN_PLACE : J->in, J->buf, J->count, CK_I64, CK_SUM);
}

/* The collective with every step recorded into R; every rank learns the
 * first failing rank's status and message, for the picture. */
static void record(const job *J, rec *R, failure *fail)
{
    int err = !J->in || !J->buf, arc = CK_ERR_NOMEM;
    if (!err) fill_inputs(J);
    ck_watch_allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, "the buffers' allocation");
    fail->msg[0] = '\0';
    if (!err) {
        take_snap(R, -1, "input");
        ck_observe(J->comm, &(ck_observer){.step = on_step, .message = on_message, .ctx = R, .shared = on_shared, .load = on_load});
        arc = run_collective(J);
        ck_observe(J->comm, NULL);
        snprintf(fail->msg, sizeof fail->msg, "%s", arc ? ck_comm_errmsg(J->comm) : "");
        take_snap(R, INT_MAX, "");
    } else if (J->rank == 0) fprintf(stderr, "%s: out of memory for the buffers\n", J->prog);
    fail->rank = arc ? J->rank : J->p;
    fail->status = arc;
    ck_watch_allreduce(MPI_IN_PLACE, &fail->rank, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, "the first failing rank");
    if (fail->rank < J->p) {
        ck_watch_bcast(&fail->status, 1, MPI_INT, fail->rank, MPI_COMM_WORLD, "the failing rank's status");
        ck_watch_bcast(fail->msg, (int)sizeof fail->msg, MPI_CHAR, fail->rank, MPI_COMM_WORLD, "the failing rank's message");
    }
}

/* What the drawing shows, on standard output: 0 right, 1 wrong or failed. */
static int say_drawn(const opts *o, const cd_model *m, const char *dir, int full)
{
    const int p = m->p;
    const size_t count = m->count;
    int nwrong = 0, fw = -1;
    size_t fc = 0;
    const cd_frame *L = &m->frames[m->nframes - 1];
    for (size_t c = 0; c < (size_t)p * count; c++) nwrong += L->cells[c].wrong;
    for (int f = 0; f < m->nframes && fw < 0; f++)
        for (size_t c = 0; c < (size_t)p * count; c++)
            if (m->frames[f].cells[c].first) { fw = f; fc = c; break; }
    printf("colldraw: %s%s%s at p = %d, %zu elements (%s, %s): %d frames in %s/ (index.html, frame-00.svg ..)\n",
           o->algo, o->coll ? " " : "", o->coll ? ck_coll_name(o->coll) : "", p, count,
           o->inplace ? "in place" : "out of place", m->transport, m->nframes, dir);
    if (full) printf("colldraw: the run was longer than %d steps or %d messages: the frames stop there\n", MAX_SNAPS, MAX_POSTS);
    if (m->error[0]) printf("colldraw: the algorithm failed: %s\n", m->error);
    if (nwrong && fw >= 0)
        printf("colldraw: %d wrong elements in the result; the first went wrong in frame %d (step %d, %s): rank %zu, "
               "element %zu\n", nwrong, fw, m->frames[fw].step, m->frames[fw].phase, fc / count, fc % count);
    return (nwrong || m->error[0]) ? 1 : 0;
}

static void free_model(cd_model *m)
{
    for (int f = 0; f < m->nframes; f++) {
        free(m->frames[f].cells);
        free(m->frames[f].shared);
        free(m->frames[f].msgs);
    }
    free(m->frames);
}

/* Rank 0: the recordings turned into frames, written to dir and summed up.
 * Returns the exit status. */
static int draw_model(const job *J, gathered *g, const failure *fail, int full, const char *dir)
{
    const opts *o = J->o;
    const int failed = fail->rank < J->p;
    cd_model m = {.p = J->p, .count = J->count, .inplace = o->inplace, .viewer = o->view + 1, .coll = o->coll,
                  .status = failed ? fail->status : 0};
    snprintf(m.algo, sizeof m.algo, "%s", o->algo);
    snprintf(m.transport, sizeof m.transport, "%s", ck_comm_transport_name(J->comm));
    if (failed) snprintf(m.error, sizeof m.error, "rank %d: %s", fail->rank, fail->msg[0] ? fail->msg : ck_strerror(fail->status));
    char err[600];
    int status = 2;
    if (!g || build_model(&m, g)) fprintf(stderr, "%s: out of memory for the frames\n", J->prog);
    else if (cd_write_all(&m, dir, o->overwrite, err, sizeof err)) fprintf(stderr, "%s: %s\n", J->prog, err);
    else status = say_drawn(o, &m, dir, full);
    free_model(&m);
    return status;
}

/* The recording gathered on rank 0 and drawn there: rank 0's exit status, on every rank. */
static int gather_and_draw(const job *J, const rec *R, const failure *fail, const char *dir)
{
    int full = R->full;
    ck_watch_allreduce(MPI_IN_PLACE, &full, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, "the recordings' limits");
    gathered *g = J->rank == 0 ? calloc((size_t)J->p, sizeof *g) : NULL;
    const int gbad = gather(R, J->rank, J->p, MPI_COMM_WORLD, g);
    int status = J->rank == 0 ? draw_model(J, gbad ? NULL : g, fail, full, dir) : 2;
    ck_watch_bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD, "the exit status");
    if (g && !gbad) { free(g[0].snaps); free(g[0].data); free(g[0].posts); }
    free(g);
    return status;
}

/* One run: the collective recorded on every rank, drawn by rank 0. */
static int draw_run(const opts *o, int argc, char **argv)
{
    job J = {.o = o, .prog = argv[0]};
    MPI_Comm_rank(MPI_COMM_WORLD, &J.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &J.p);
    char dir[512];
    out_dir_name(o, J.p, dir, sizeof dir);
    if (ck_same_command_line(MPI_COMM_WORLD, argc, argv, "colldraw") || !job_fits(o, J.rank, J.p, J.prog) ||
        !out_dir_free(o, dir, J.rank, J.prog))
        return 2;
    J.algo = ck_coll_algo_find(o->coll, o->algo);
    if (!(J.comm = open_comm(o, J.algo, J.rank, J.prog))) return 2;
    J.count = o->count < 0 ? (size_t)(2 * J.p) : (size_t)o->count;
    const size_t bytes = (J.count ? J.count : 1) * sizeof(int64_t);
    J.in = ck_alloc(J.comm, bytes);
    J.buf = o->inplace ? J.in : ck_alloc(J.comm, bytes);
    rec R = {.buf = J.buf, .in = J.in, .count = J.count};
    failure fail;
    record(&J, &R, &fail);
    const int status = gather_and_draw(&J, &R, &fail, dir);
    free(R.snaps);
    free(R.data);
    free(R.posts);
    if (J.buf && !o->inplace) ck_free(J.comm, J.buf);
    if (J.in) ck_free(J.comm, J.in);
    ck_comm_destroy(J.comm);
    return status;
}

/* ------------------------------------------------------------ main */

int colldraw_main(int argc, char **argv, const char *tool)
{
    opts o;
    int rc = parse(argc, argv, &o, ck_is_print_rank());
    if (rc >= 0) return rc;
    if (o.gantt) return draw_gantt(&o, argv[0]);
    if (o.np > 1 && ck_launcher_rank() < 0) return relaunch(argc, argv, tool, o.np);

    int was_init;
    MPI_Initialized(&was_init);
    if (!was_init) MPI_Init(&argc, &argv);
    /* Every wait bounded by --timeout, a stopped rank named (ck_watch_*). */
    int status = 2;
    if (ck_watch_init("colldraw") == CK_SUCCESS) {
        ck_watch_set_timeout(o.timeout);
        status = draw_run(&o, argc, argv);
    }
    if (!was_init) ck_watch_finalize();
    return status;
}
