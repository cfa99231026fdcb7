/*
 * collverify — the verdict on a results file, computed by a program that never
 * runs the algorithm it judges (it is linked with the checker's inputs and the
 * library, never with a student's file):
 *
 *   collverify --np P --results FILE [collcheck's case options]
 *   collverify --np P --paired --results FILE [collbench --paired's options]
 *
 * It derives the list of calls from its own options (the same ones the run
 * was given, --seed included), computes every expected result itself, and
 * checks every record of the file against it: each rank's result digest, the
 * status, the run's own checks, and the traffic counted. A call without its
 * record fails; so does a record given twice. What the checked program
 * printed is never read. Any collective (--coll allreduce, reduce_scatter,
 * allgather): every rank's own expected result, rank r's block of the
 * reduction for a reduce-scatter, every rank's block for an all-gather; the
 * algorithms and --traffic are looked up in that collective's registry.
 *
 * Traffic is checked against a formula collverify trusts: the algorithm's own
 * descriptor when it is one of the library's, else the one --traffic ALGO
 * names (a library algorithm whose bytes, messages and per-message bounds the
 * checked one must match), else only against the formulas the file says the
 * algorithm declared. Traffic the algorithm counted itself (ck_count_traffic)
 * fails unless --allow-self-traffic.
 *
 * Closing line: "N passed, M failed" (collcheck files: one per case; paired
 * files: one per timed call), exit 0 only when nothing failed. Paired files
 * also get, per size, "ratio R" (median over the pairs of t(A)/t(B): the
 * speed of B relative to A, the library's, as `collbench --paired --algo
 * LIB,YOURS` orders them), with "review" after it when R > 2: such a speed is
 * capped at 2 and not to be scored without a look; otherwise followed by
 * "interval LO HI of N pairs", the median's 95 % interval from the pairs.
 */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collkit_algo.h"
#include "encoding.h"
#include "results.h"

#define REVIEW_RATIO 2.0
#define MAX_TOK      64

typedef struct {
    int   np, paired, allow_self, verbose, require_msgs;
    ck_coll coll;           /* --coll: the collective the run called */
    const char *traffic;    /* --traffic ALGO */
    const char *results;
} vf_opts;

/* collverify's own options; every other argument is the run's, for
 * collcheck's parser (or collbench's with --paired). A PASS_ON option is the
 * run's too. */
enum { PASS_ON = CK_OPT_USER };
static const ck_opt vf_options[] = {
    {"--np", 0, CK_OPT_INT, offsetof(vf_opts, np), .lo = 1, .hi = 1 << 20, .arg = "P", .help = "the ranks the run had"},
    {"--results", 0, CK_OPT_STR, offsetof(vf_opts, results), .arg = "FILE", .help = "the file to check",
     .flags = PASS_ON},
    {"--paired", 0, CK_OPT_FLAG, offsetof(vf_opts, paired), .help = "FILE comes from collbench --paired (--algo LIB,YOURS)",
     .flags = PASS_ON},
    {"--traffic", 0, CK_OPT_STR, offsetof(vf_opts, traffic), .arg = "ALGO",
     .help = "check bytes, messages and message sizes against the library's\n"
             "ALGO of the same collective (for an algorithm collverify does\n"
             "not know), or a lab's schedule: pipelined_rs (lab 02: an\n"
             "all-reduce whose reduce-scatter goes in chunks)"},
    {"--allow-self-traffic", 0, CK_OPT_FLAG, offsetof(vf_opts, allow_self),
     .help = "accept traffic an algorithm counted itself (ck_count_traffic)"},
    {"--require-msg-checks", 0, CK_OPT_FLAG, offsetof(vf_opts, require_msgs),
     .help = "an algorithm checked against its own formulas must declare its\n"
             "message count, its largest message and its empty ones\n"
             "(msgs_sent, max_msg_bytes): a missing formula fails"},
    {"--verbose", 'v', CK_OPT_FLAG, offsetof(vf_opts, verbose), .help = "a line for every case, not only the failed ones"},
    {NULL},
};

static int usage(void)
{
    printf("usage: collverify --np P --results FILE [collcheck options]\n"
           "       collverify --np P --paired --results FILE [collbench --paired options]\n"
           "Checks a results file written by `collcheck --results` (or `collbench --paired\n"
           "--results`) without running any algorithm: the calls are derived from the options\n"
           "(give the ones the run was given, --seed included), every expected result is computed\n"
           "here, and every rank's record of every call must be there and match it: result\n"
           "digest, status, the run's own checks, traffic. --coll reduce_scatter|allgather (as the\n"
           "run had it) checks those collectives: rank r's block of the reduction, every rank's block.\n");
    ck_opt_help(stdout, vf_options, NULL);
    printf("Prints the failures and \"N passed, M failed\"; paired files also \"ratio R at S B\" per\n"
           "size (t(A)/t(B), median of the pairs) with \"interval LO HI of N pairs\" (the median's\n"
           "95 %% interval), or \"review\" when R > %g (capped at %g).\n"
           "Exit: 0 all passed, 1 a failure, 2 bad arguments.\n", REVIEW_RATIO, REVIEW_RATIO);
    return 0;
}

/* An algorithm named in --algo that is not the library's (a student's): a
 * name in the registry so that the tools' own option parsers accept it. It
 * never runs, and has no formulas: collverify trusts none of its claims. */
static int vf_stub_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    (void)c; (void)s; (void)r; (void)n; (void)dt; (void)op;
    return CK_ERR_UNSUPPORTED;
}

static int register_stubs(ck_coll coll, const char *spec)
{
    static ck_algo stubs[16];
    static char names[16][64];
    static int n;
    char buf[1024];
    if (strlen(spec) >= sizeof buf || !strcmp(spec, "all") || !strcmp(spec, "list")) return 0;
    strcpy(buf, spec);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (ck_coll_algo_find(coll, t) || n == 16 || strlen(t) >= sizeof names[0]) continue;
        strcpy(names[n], t);
        stubs[n] = (ck_algo){.name = names[n], .summary = "(known to collverify by name only)",
                             .mem = CK_MEM_HOST | CK_MEM_SHM | CK_MEM_CUDA, .run = vf_stub_run, .coll = coll};
        if (ck_register_algo(&stubs[n]) == CK_SUCCESS) n++;
    }
    return 0;
}

static int is_stub(const ck_algo *a) { return a->run == vf_stub_run; }

/* ------------------------------------------------------------ the file */

typedef struct {
    char   **lines;   /* every line, split later */
    int      n;
} vf_file;

/* Every line of the file, without its line end: "\n" or "\r\n" (a file that
 * went through an editor or a checkout with Windows line ends reads the same),
 * and without a UTF-8 byte-order mark before the first. */
static int read_lines(const char *path, vf_file *f)
{
    char why[256];
    FILE *in = ck_input_open(path, why, sizeof why);
    memset(f, 0, sizeof *f);
    if (!in) { printf("collverify: cannot read --results '%s': %s\n", path, why); return -1; }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int capn = 0;
    while ((errno = 0, len = getline(&line, &cap, in)) >= 0) {
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (!f->n && !strncmp(line, "\xEF\xBB\xBF", 3)) memmove(line, line + 3, (size_t)(len -= 3) + 1);
        if (f->n == capn) {
            capn = capn ? 2 * capn : 1024;
            char **nl = realloc(f->lines, (size_t)capn * sizeof *nl);
            if (!nl) {
                printf("collverify: --results %s: out of memory at line %d\n", path, f->n + 1);
                fclose(in);
                free(line);
                return -1;
            }
            f->lines = nl;
        }
        f->lines[f->n++] = line;
        line = NULL;
        cap = 0;
    }
    free(line);
    /* getline's end without the end of the file: a read error, or ENOMEM (a
     * line without end) */
    int rerr = ferror(in) || !feof(in) ? (errno ? errno : EIO) : 0;
    fclose(in);
    if (rerr) {
        printf("collverify: --results %s: cannot read line %d: %s\n", path, f->n + 1, strerror(rerr));
        return -1;
    }
    return 0;
}

/* One expected call: the records of its p ranks, found in the file. */
typedef struct {
    cc_record *rec;     /* p of them */
    int       *seen;    /* per rank: how many records */
    int       *casebad; /* per rank: its case fields differ from the call's */
    double    *time;    /* paired: per rank, seconds */
    char      *values;  /* random-float cases: rank 0's result, hex */
    int        nvalues;
} vf_call;

static void calls_free(vf_call *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].rec);
        free(c[i].seen);
        free(c[i].casebad);
        free(c[i].time);
    }
    free(c);
}

static vf_call *calls_new(size_t n, int p)
{
    vf_call *c = calloc(n, sizeof *c);
    if (!c) return NULL;
    for (size_t i = 0; i < n; i++) {
        c[i].rec = calloc((size_t)p, sizeof *c[i].rec);
        c[i].seen = calloc((size_t)p, sizeof(int));
        c[i].casebad = calloc((size_t)p, sizeof(int));
        c[i].time = calloc((size_t)p, sizeof(double));
        if (!c[i].rec || !c[i].seen || !c[i].casebad || !c[i].time) {
            calls_free(c, n);
            return NULL;
        }
    }
    return c;
}

static void file_free(vf_file *f)
{
    for (int i = 0; i < f->n; i++) free(f->lines[i]);
    free(f->lines);
}

/* ------------------------------------------------------------ the checks */

/* Each message of one rank's call against the algorithm's own per-message
 * formulas, as its record gives them: none above the declared largest, no
 * more empty ones than declared. With --require-msg-checks a formula the
 * descriptor lacks fails the call: a deleted field is no unchecked one. */
static void own_messages(const vf_opts *vo, const cc_record *r, int q, ck_sbuf *m)
{
    if (vo->require_msgs && (r->declared_msgs == UINT64_MAX || r->declared_largest == UINT64_MAX)) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "rank %d: the descriptor declares no %s: this lab checks every message against it", q,
                    r->declared_msgs == UINT64_MAX ? "message count (msgs_sent)" : "largest message (max_msg_bytes)");
    }
    if (r->ctr.msgs_over || (r->declared_largest != UINT64_MAX && r->ctr.msg_largest > r->declared_largest)) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "messages: rank %d sent one of %llu B, above the largest its algorithm declares (lumped)", q,
                    (unsigned long long)r->ctr.msg_largest);
    }
    if (r->declared_empty != UINT64_MAX && r->ctr.msgs_empty > r->declared_empty) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "messages: rank %d sent %llu empty messages, its algorithm declares %llu (padded)", q,
                    (unsigned long long)r->ctr.msgs_empty, (unsigned long long)r->declared_empty);
    }
}

/* The traffic of one rank's call against the trusted formula `t` (NULL:
 * against what the record says the algorithm declared). Appends to m. */
static void check_traffic(const vf_opts *vo, const ck_algo *a, const ck_algo *t, const cc_record *r, int p, int q,
                          size_t count, size_t es, const ck_config *cfg, ck_sbuf *m)
{
    if (t && (t->flags & CK_ALGO_REFERENCE)) return;   /* the library's own collective: nothing counted */
    if (r->reference) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "rank %d: the record says '%s' is a reference algorithm (traffic not counted), which it is not",
                    q, a->name);
        return;
    }
    if ((r->ctr.bytes_sent_self || r->ctr.msgs_sent_self) && !vo->allow_self) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "rank %d: %llu B in %llu messages counted by the algorithm itself (ck_count_traffic), not by "
                       "the transport: not accepted here (--allow-self-traffic)", q,
                    (unsigned long long)r->ctr.bytes_sent_self, (unsigned long long)r->ctr.msgs_sent_self);
    }
    uint64_t wb = t ? t->bytes_sent ? t->bytes_sent(p, q, count, es, cfg) : UINT64_MAX : r->declared_bytes;
    uint64_t wm = t ? t->msgs_sent ? t->msgs_sent(p, q, count, es, cfg) : UINT64_MAX : r->declared_msgs;
    const char *whose = t ? t->name : "its own declared formula";
    if (!t && wb == UINT64_MAX) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "rank %d: no bytes formula to check the traffic against", q);
    } else if (wb != UINT64_MAX && wb != r->ctr.bytes_sent) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "traffic: rank %d sent %llu B, %s says %llu B", q, (unsigned long long)r->ctr.bytes_sent, whose,
                    (unsigned long long)wb);
    }
    if (wm != UINT64_MAX && wm != r->ctr.msgs_sent) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "messages: rank %d sent %llu, %s says %llu", q, (unsigned long long)r->ctr.msgs_sent, whose,
                    (unsigned long long)wm);
    }
    if (t && t->max_msg_bytes) {
        uint64_t big = t->max_msg_bytes(p, q, count, es, cfg), empty = t->empty_msgs ? t->empty_msgs(p, q, count, es, cfg) : 0;
        if (r->ctr.msg_largest > big) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "messages: rank %d sent one of %llu B, above %s's largest, %llu B (lumped)", q,
                        (unsigned long long)r->ctr.msg_largest, t->name, (unsigned long long)big);
        }
        if (r->ctr.msgs_empty > empty) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "messages: rank %d sent %llu empty messages, %s sends %llu (padded)", q,
                        (unsigned long long)r->ctr.msgs_empty, t->name, (unsigned long long)empty);
        }
    } else {
        own_messages(vo, r, q, m);
    }
}

/* Every rank's record of one call: present once, case as expected, status
 * and the run's checks clean, the digest expected (want[q], rank q's; NULL:
 * the ranks' must agree with rank 0's values, checked by the caller), the
 * traffic. */
static void check_call(const vf_opts *vo, const ck_algo *a, const ck_algo *t, const vf_call *c, int p,
                       size_t count, size_t es, const ck_config *cfg, const uint64_t *want, ck_sbuf *m)
{
    for (int q = 0; q < p; q++) {
        const cc_record *r = &c->rec[q];
        if (!c->seen[q]) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "rank %d: no record of this call", q);
            continue;
        }
        if (c->seen[q] > 1) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "rank %d: %d records of this call (one is wanted)", q, c->seen[q]);
            continue;
        }
        if (c->casebad[q]) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "rank %d: the record is of another case", q);
            continue;
        }
        if (r->status != CK_SUCCESS) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "rank %d: ck_%s returned %d (%s)", q, ck_coll_name(vo->coll), r->status,
                        ck_strerror(r->status));
        }
        if (r->local_fail) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "rank %d: the run's own checks failed (its output says why)", q);
        }
        if (want && r->digest != want[q]) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "rank %d: its result is not the expected one (digest %016llx, expected %016llx)", q,
                        (unsigned long long)r->digest, (unsigned long long)want[q]);
        }
        check_traffic(vo, a, t, r, p, q, count, es, cfg, m);
    }
}

/* A random-float call: rank 0's values within the rounding bound, every
 * rank's digest theirs. */
static void check_random(const vf_call *c, int p, const cc_case *cs, unsigned call, void *buf, ck_sbuf *m)
{
    const size_t bytes = cs->count * ck_dtype_size(cs->dt);
    if (c->nvalues != 1 || cc_results_hex_decode(c->values, buf, bytes)) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, c->nvalues ? "the result values are malformed or given twice" : "no result values of this call");
        return;
    }
    const uint64_t h = ck_fnv1a64(buf, bytes);
    for (int q = 0; q < p; q++)
        if (c->seen[q] == 1 && c->rec[q].digest != h) {
            ck_sbuf_sep(m, "; ");
            ck_sbuf_add(m, "rank %d's result differs from the values recorded for rank 0", q);
            return;
        }
    char why[600];
    if (cc_check_random(why, sizeof why, buf, cs->count, cs->dt, cs->op, 0, p, call) < cs->count) {
        ck_sbuf_sep(m, "; ");
        ck_sbuf_add(m, "%s", why);
    }
}

/* ---- Schedules a lab gives its students that no library algorithm has:
 * their formulas kept here, where the student's file cannot change them (a
 * student's own descriptor can say anything).
 *
 * pipelined_rs (lab 02): the ring with its reduce-scatter steps cut into nc
 * chunks of at most chunk_bytes (every block in as many chunks as the
 * largest needs, some of them empty when a block is shorter than nc) and
 * its all-gather steps whole: the ring's bytes, (p - 1)(nc + 1) messages,
 * none above the largest block, an empty one per missing chunk and per
 * empty all-gather block. */
static size_t rs_chunks(int p, size_t count, size_t es, const ck_config *cfg)
{
    size_t off, big, per = cfg->chunk_bytes / es;
    ck_block(count, (size_t)p, 0, &off, &big);
    return ck_num_chunks(big, per ? per : 1);
}
static uint64_t prs_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    return ck_algo_find("ring")->bytes_sent(p, r, count, es, cfg);
}
static uint64_t prs_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r;
    return p == 1 || !count ? 0 : (uint64_t)(p - 1) * (rs_chunks(p, count, es, cfg) + 1);
}
static uint64_t prs_largest(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    size_t off, big;
    (void)r; (void)cfg;
    if (p == 1 || !count) return 0;
    ck_block(count, (size_t)p, 0, &off, &big);
    return (uint64_t)(big * es);
}
static uint64_t prs_empty(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    if (p == 1 || !count) return 0;
    const size_t nc = rs_chunks(p, count, es, cfg);
    uint64_t n = 0;
    for (int s = 1; s < p; s++) {   /* step s - 1: the blocks r - s + 1 (reduce-scatter) and r - s + 2 (all-gather) */
        size_t off, rs, ag;
        ck_block(count, (size_t)p, (size_t)(((r - s + 1) % p + p) % p), &off, &rs);
        ck_block(count, (size_t)p, (size_t)(((r - s + 2) % p + p) % p), &off, &ag);
        n += (rs < nc ? nc - rs : 0) + (ag == 0);
    }
    return n;
}
static const ck_algo pipelined_rs = {
    .name = "pipelined_rs",
    .summary = "lab 02's schedule: the reduce-scatter steps in chunks, the all-gather steps whole",
    .mem = CK_MEM_HOST | CK_MEM_CUDA,
    .bytes_sent = prs_bytes, .msgs_sent = prs_msgs, .max_msg_bytes = prs_largest, .empty_msgs = prs_empty,
};

/* The algorithm --traffic names: a lab's schedule above, else the library's. */
static const ck_algo *traffic_algo(ck_coll coll, const char *name)
{
    if (coll == CK_COLL_ALLREDUCE && !strcmp(name, pipelined_rs.name)) return &pipelined_rs;
    return ck_coll_algo_find(coll, name);
}

/* The trusted formula for algorithm a: its own when it is the library's. */
static const ck_algo *trusted(const vf_opts *vo, const ck_algo *a)
{
    if (!is_stub(a)) return a;
    return vo->traffic ? traffic_algo(vo->coll, vo->traffic) : NULL;
}

/* Every rank's expected digest of call `salt` (want: p of them; buf: count
 * elements of scratch). */
static void expected_digests(ck_coll coll, uint64_t *want, void *buf, size_t count, ck_dtype dt, ck_op op, int p,
                             unsigned salt)
{
    const size_t es = ck_dtype_size(dt);
    for (int q = 0; q < p; q++) {
        if (coll != CK_COLL_REDUCE_SCATTER && q > 0) { want[q] = want[0]; continue; }   /* the same on every rank */
        want[q] = ck_fnv1a64(buf, cc_coll_expected(coll, buf, count, dt, op, q, p, salt) * es);
    }
}

/* Header "collkit-results 1 TOOL key=value ...": 0 when it is TOOL's with
 * p, seed, chunk and the collective as expected; otherwise says why. */
static int check_header(vf_file *f, const char *tool, int p, uint64_t seed, size_t chunk, ck_coll coll, char **tok,
                        int *ntok)
{
    if (!f->n || strncmp(f->lines[0], CC_RESULTS_MAGIC " ", strlen(CC_RESULTS_MAGIC) + 1)) {
        printf("collverify: the file does not start with a '" CC_RESULTS_MAGIC "' header\n");
        return -1;
    }
    static char h[4096];   /* the header's tokens point into it */
    snprintf(h, sizeof h, "%s", f->lines[0]);
    *ntok = cc_results_split(h, tok, MAX_TOK);
    uint64_t vp = 0, vs = 0, vc = 0;
    if (*ntok < 3 || strcmp(tok[2], tool) || cc_kv_u64(tok, *ntok, "p", &vp) || cc_kv_u64(tok, *ntok, "seed", &vs) ||
        cc_kv_u64(tok, *ntok, "chunk", &vc)) {
        printf("collverify: the header is not that of a %s run: %s\n", tool, f->lines[0]);
        return -1;
    }
    if (vp != (uint64_t)p || vs != seed || vc != chunk) {
        printf("collverify: the run does not match these options: it had p = %llu, seed %llu, chunk %llu B; expected "
               "p = %d, seed %llu, chunk %zu B\n", (unsigned long long)vp, (unsigned long long)vs,
               (unsigned long long)vc, p, (unsigned long long)seed, chunk);
        return -1;
    }
    /* (a header without coll= is an all-reduce run's) */
    const char *hc = cc_kv_get(tok, *ntok, "coll");
    ck_coll vcoll = CK_COLL_ALLREDUCE;
    if ((hc && ck_coll_parse(hc, &vcoll)) || vcoll != coll) {
        printf("collverify: the run does not match these options: it called %s, expected %s (--coll)\n",
               hc ? hc : ck_coll_name(CK_COLL_ALLREDUCE), ck_coll_name(coll));
        return -1;
    }
    return 0;
}

static int bad_line(int *nbad, int ln, const char *why)
{
    if ((*nbad)++ < 5) printf("collverify: line %d: %s\n", ln + 1, why);
    return 0;
}

/* The closing lines of a verdict: lines of the file that are no record of
 * the run (the first 5 were named as they were read) fail it once. Returns
 * the exit code. */
static int verdict(int nbad, int passed, int failed)
{
    if (nbad) {
        printf("collverify: %d line%s of the file are no record of this run%s\n", nbad, nbad == 1 ? "" : "s",
               nbad > 5 ? " (the first 5 shown)" : "");
        failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* What either kind of file is checked with: a slot per expected call, and
 * scratch for the expected results. */
typedef struct {
    vf_call       *calls;
    size_t         ncalls;
    unsigned char *buf;    /* the largest call's elements: expected results, decoded values */
    uint64_t      *want;   /* every rank's expected digest of one call */
} vf_work;

/* 0, or -1 (said) when out of memory. */
static int work_alloc(vf_work *w, size_t ncalls, int p, size_t bytes)
{
    w->ncalls = ncalls;
    w->calls = calls_new(ncalls, p);
    w->buf = malloc(bytes);
    w->want = malloc((size_t)p * sizeof *w->want);
    if (w->calls && w->buf && w->want) return 0;
    printf("collverify: out of memory\n");
    return -1;
}

static void work_free(vf_work *w)
{
    calls_free(w->calls, w->ncalls);
    free(w->buf);
    free(w->want);
}

/* ------------------------------------------------------------ collcheck files */

/* A collcheck file against the calls the options make: algorithm a, case k,
 * call c is calls[(a * ncases + k) * repeat + c]. */
typedef struct {
    const vf_opts    *vo;
    const cc_options *o;
    const ck_config  *cfg;
    cc_case          *cases;
    int               ncases;
    vf_work           w;
} vf_check;

static vf_call *check_slot(const vf_check *v, int a, int k, int c)
{
    return &v->w.calls[((size_t)a * (size_t)v->ncases + (size_t)k) * (size_t)v->o->repeat + (size_t)c];
}

/* The header: the run's p, seed, chunk and collective, and the calls per
 * case it made against --repeat (the records are counted against the
 * options, the header must agree). 0, or -1 when it is not this run's. */
static int check_run_header(const vf_check *v, vf_file *f)
{
    char *tok[MAX_TOK];
    int ntok;
    uint64_t vr = 0;
    if (check_header(f, "collcheck", v->vo->np, v->o->seed, v->cfg->chunk_bytes, v->vo->coll, tok, &ntok)) return -1;
    if (!cc_kv_u64(tok, ntok, "repeat", &vr) && vr == (uint64_t)v->o->repeat) return 0;
    printf("collverify: the header says repeat=%s; the options make %d calls per case\n",
           cc_kv_get(tok, ntok, "repeat") ? cc_kv_get(tok, ntok, "repeat") : "(none)", v->o->repeat);
    return -1;
}

/* One line of the file into the slot of its call: a "call" record of one
 * rank, or a "values" line (rank 0's random-float result). */
static void read_check_line(vf_check *v, char *line, int ln, int *nbad)
{
    char *tok[MAX_TOK];
    const int ntok = cc_results_split(line, tok, MAX_TOK), p = v->vo->np;
    if (ntok == 0) return;   /* an empty line */
    if (ntok < 0) { bad_line(nbad, ln, "too many fields"); return; }
    const int is_call = !strcmp(tok[0], "call"), is_values = !strcmp(tok[0], "values");
    if ((!is_call && !is_values) || ntok < (is_call ? 6 : 5)) { bad_line(nbad, ln, "not a record"); return; }
    int a = -1;
    for (int i = 0; i < v->o->nalgos; i++)
        if (!strcmp(v->o->algos[i]->name, tok[1])) a = i;
    char *e1, *e2, *e3 = NULL;
    long k = strtol(tok[2], &e1, 10), c = strtol(tok[3], &e2, 10), q = is_call ? strtol(tok[4], &e3, 10) : 0;
    if (a < 0 || *e1 || *e2 || (e3 && *e3) || k < 0 || k >= v->ncases || c < 0 || c >= v->o->repeat || q < 0 ||
        q >= p) {
        bad_line(nbad, ln, "a record of no call these options make");
        return;
    }
    vf_call *vc = check_slot(v, a, (int)k, (int)c);
    if (is_values) {
        vc->nvalues++;
        vc->values = tok[4];
        return;
    }
    const cc_case *cs = &v->cases[k];
    cc_record r;
    uint64_t cnt = 0, ip = 0, mis = 0, rnd = 0;
    const char *dt = cc_kv_get(tok, ntok, "dtype"), *op = cc_kv_get(tok, ntok, "op");
    if (cc_results_parse_record(tok, ntok, &r) || cc_kv_u64(tok, ntok, "count", &cnt) || !dt || !op ||
        cc_kv_u64(tok, ntok, "inplace", &ip) || cc_kv_u64(tok, ntok, "misaligned", &mis) ||
        cc_kv_u64(tok, ntok, "random", &rnd)) {
        bad_line(nbad, ln, "a record with a missing or malformed field");
        return;
    }
    vc->casebad[q] |= cnt != cs->count || strcmp(dt, ck_dtype_name(cs->dt)) || strcmp(op, ck_op_name(cs->op)) ||
                      ip != (uint64_t)cs->inplace || mis != (uint64_t)cs->misaligned || rnd != (uint64_t)cs->random;
    vc->rec[q] = r;
    vc->seen[q]++;
}

/* Case k of algorithm a: its calls until one fails, and its line (a PASS
 * only with -v). Returns 1 when it passed. */
static int judge_case(const vf_check *v, int a, int k)
{
    const vf_opts *vo = v->vo;
    const ck_algo *al = v->o->algos[a], *t = trusted(vo, al);
    const cc_case *cs = &v->cases[k];
    const size_t es = ck_dtype_size(cs->dt);
    const int ncall = cs->count ? v->o->repeat : 1, p = vo->np;
    char msg[2048];
    ck_sbuf m;
    ck_sbuf_init(&m, msg, sizeof msg);
    int bad_call = -1;
    for (int c = 0; c < ncall && bad_call < 0; c++) {
        const vf_call *vc = check_slot(v, a, k, c);
        if (!cs->random) expected_digests(vo->coll, v->w.want, v->w.buf, cs->count, cs->dt, cs->op, p, (unsigned)c);
        check_call(vo, al, t, vc, p, cs->count, es, v->cfg, cs->random ? NULL : v->w.want, &m);
        if (cs->random && cs->count) check_random(vc, p, cs, (unsigned)c, v->w.buf, &m);
        if (m.len) bad_call = c;
    }
    char label[200];
    snprintf(label, sizeof label, "%s n=%zu %s %s %s%s%s", al->name, cs->count, ck_dtype_name(cs->dt),
             vo->coll == CK_COLL_ALLGATHER ? "-" : ck_op_name(cs->op), cs->inplace ? "in-place" : "out-of-place",
             cs->misaligned ? " misaligned" : "", cs->random ? " random" : "");
    if (bad_call >= 0) printf("%s  FAIL  call %d of %d: %s\n", label, bad_call + 1, ncall, msg);
    else if (vo->verbose) printf("%s  PASS\n", label);
    return bad_call < 0;
}

static int verify_check(const vf_opts *vo, const cc_options *o, vf_file *f, const ck_config *cfg)
{
    vf_check v = {.vo = vo, .o = o, .cfg = cfg};
    const int p = vo->np;
    v.ncases = cc_build_matrix(o, p, &v.cases);
    if (v.ncases <= 0) { printf("collverify: no case to check at p = %d with these options\n", p); return 2; }
    int code = 0;
    size_t maxb = 8;
    for (int k = 0; k < v.ncases; k++)
        if (v.cases[k].count * ck_dtype_size(v.cases[k].dt) > maxb) maxb = v.cases[k].count * ck_dtype_size(v.cases[k].dt);
    if (check_run_header(&v, f)) {
        printf("0 passed, %d failed\n", o->nalgos * v.ncases);
        code = 1;
    } else if (work_alloc(&v.w, (size_t)o->nalgos * (size_t)v.ncases * (size_t)o->repeat, p, maxb))
        code = 2;
    else {
        int nbad = 0, passed = 0, failed = 0;
        for (int ln = 1; ln < f->n; ln++) read_check_line(&v, f->lines[ln], ln, &nbad);
        for (int a = 0; a < o->nalgos; a++)
            for (int k = 0; k < v.ncases; k++) {
                if (judge_case(&v, a, k)) passed++;
                else failed++;
            }
        code = verdict(nbad, passed, failed);
    }
    work_free(&v.w);
    free(v.cases);
    return code;
}

/* ------------------------------------------------------------ paired files */

/* A collbench --paired file against the timed calls its options make: size
 * z, pair i, algorithm k (0 the library's, 1 the one compared) is
 * calls[(z * iters + i) * 2 + k]. */
typedef struct {
    const vf_opts *vo;
    const bm_opts *o;
    const ck_config *cfg;
    size_t   sizes[64];   /* elements */
    int      nz;
    vf_work  w;
    double  *ratio;       /* per pair: t(A)/t(B) */
} vf_paired;

static vf_call *paired_slot(const vf_paired *v, int z, int i, int k)
{
    return &v->w.calls[((size_t)z * (size_t)v->o->iters + (size_t)i) * 2 + (size_t)k];
}

/* One "timed" record of one rank into the slot of its call. */
static void read_paired_line(vf_paired *v, char *line, int ln, int *nbad)
{
    char *tok[MAX_TOK];
    const int ntok = cc_results_split(line, tok, MAX_TOK), p = v->vo->np, n = v->o->iters;
    if (ntok == 0) return;   /* an empty line */
    if (ntok < 0) { bad_line(nbad, ln, "too many fields"); return; }
    if (ntok < 6 || strcmp(tok[0], "timed")) { bad_line(nbad, ln, "not a record"); return; }
    char *e[4];
    long z = strtol(tok[1], &e[0], 10), i = strtol(tok[2], &e[1], 10), k = strtol(tok[3], &e[2], 10),
         q = strtol(tok[4], &e[3], 10);
    if (*e[0] || *e[1] || *e[2] || *e[3] || z < 0 || z >= v->nz || i < 0 || i >= n || k < 0 || k > 1 || q < 0 ||
        q >= p) {
        bad_line(nbad, ln, "a record of no call these options make");
        return;
    }
    vf_call *vc = paired_slot(v, (int)z, (int)i, (int)k);
    cc_record r;
    uint64_t cnt = 0;
    const char *ts = cc_kv_get(tok, ntok, "time");
    char *te = NULL;
    double tv = ts ? strtod(ts, &te) : -1;
    if (cc_results_parse_record(tok, ntok, &r) || cc_kv_u64(tok, ntok, "count", &cnt) || !ts || *te ||
        !(tv >= 0 && tv < 1e6)) {
        bad_line(nbad, ln, "a record with a missing or malformed field");
        return;
    }
    vc->casebad[q] |= cnt != v->sizes[z];
    vc->rec[q] = r;
    vc->time[q] = tv;
    vc->seen[q]++;
}

/* Timed call i of algorithm k at size z checked, its line printed (a PASS
 * only with -v); its time (the slowest rank's) in *t. Returns 1 when it
 * passed. */
static int judge_timed(const vf_paired *v, int z, int i, int k, double *t)
{
    const vf_opts *vo = v->vo;
    const int p = vo->np;
    const size_t count = v->sizes[z], es = ck_dtype_size(v->o->dtype);
    const vf_call *vc = paired_slot(v, z, i, k);
    const ck_algo *al = v->o->algos[k];
    /* the inputs of timed call (i, k): see paired.c */
    expected_digests(vo->coll, v->w.want, v->w.buf, count, v->o->dtype, v->o->op, p, (unsigned)(2 * i + k));
    char msg[2048];
    ck_sbuf m;
    ck_sbuf_init(&m, msg, sizeof msg);
    check_call(vo, al, trusted(vo, al), vc, p, count, es, v->cfg, v->w.want, &m);
    *t = 0;
    for (int q = 0; q < p; q++)
        if (vc->time[q] > *t) *t = vc->time[q];
    if (m.len) printf("%s n=%zu timed call %d  FAIL  %s\n", al->name, count, i + 1, msg);
    else if (vo->verbose) printf("%s n=%zu timed call %d  PASS\n", al->name, count, i + 1);
    return m.len == 0;
}

/* Size z: every timed pair checked, then the median ratio, "review" above
 * REVIEW_RATIO (a speed of wrong results is no speed: no ratio then). */
static void judge_size(const vf_paired *v, int z, int *passed, int *failed)
{
    const int n = v->o->iters;
    const size_t bytes = v->sizes[z] * ck_dtype_size(v->o->dtype);
    int all_ok = 1;
    for (int i = 0; i < n; i++) {
        double tt[2];
        for (int k = 0; k < 2; k++) {
            const int ok = judge_timed(v, z, i, k, &tt[k]);
            *passed += ok;
            *failed += !ok;
            all_ok &= ok;
        }
        v->ratio[i] = tt[1] > 0 ? tt[0] / tt[1] : 0;
    }
    if (!all_ok) return;
    qsort(v->ratio, (size_t)n, sizeof *v->ratio, bm_cmp_double);
    const double r = bm_quantile(v->ratio, n, 0.5);
    if (r > REVIEW_RATIO)
        printf("ratio %.3f at %zu B review (measured %.4g: %s above %gx %s's speed is capped at %g and not scored "
               "without a look)\n", REVIEW_RATIO, bytes, r, v->o->algos[1]->name, REVIEW_RATIO, v->o->algos[0]->name,
               REVIEW_RATIO);
    else {
        /* The median's 95 % interval without a model of the noise: the
         * order statistics k and n-1-k of the sorted ratios, k the largest
         * with P(Binomial(n, 1/2) < k+1) <= 2.5 % (normal approximation).
         * The grader says "review" where it spans a mark's line. */
        const int k = n >= 6 ? (int)floor((n - 1.96 * sqrt((double)n)) / 2.0) : 0;
        printf("ratio %.3f at %zu B interval %.3f %.3f of %d pairs\n", r, bytes, v->ratio[k < 0 ? 0 : k],
               v->ratio[n - 1 - (k < 0 ? 0 : k)], n);
    }
}

/* The header: the run's p, seed, chunk, collective and the pair compared.
 * 0, or -1 when it is not this run's. */
static int paired_header(const vf_paired *v, vf_file *f)
{
    char *tok[MAX_TOK];
    int ntok;
    if (check_header(f, "paired", v->vo->np, cc_get_seed(), v->cfg->chunk_bytes, v->vo->coll, tok, &ntok)) return -1;
    const char *ha = cc_kv_get(tok, ntok, "a"), *hb = cc_kv_get(tok, ntok, "b");
    const char *a = v->o->algos[0]->name, *b = v->o->algos[1]->name;
    if (ha && hb && !strcmp(ha, a) && !strcmp(hb, b)) return 0;
    printf("collverify: the run paired other algorithms than %s and %s\n", a, b);
    return -1;
}

static int verify_paired(const vf_opts *vo, const bm_opts *o, vf_file *f, const ck_config *cfg)
{
    vf_paired v = {.vo = vo, .o = o, .cfg = cfg};
    const int p = vo->np, n = o->iters;
    const size_t es = ck_dtype_size(o->dtype);
    for (size_t s = o->minbytes; s <= o->maxbytes && v.nz < 64; s = s ? s * (size_t)o->factor : es)
        v.sizes[v.nz++] = s / es;
    if (paired_header(&v, f)) {
        printf("0 passed, %d failed\n", v.nz * n * 2);
        return 1;
    }
    int code = 2;
    v.ratio = malloc(sizeof(double) * (size_t)n);
    if (!v.ratio) printf("collverify: out of memory\n");
    else if (!work_alloc(&v.w, (size_t)v.nz * (size_t)n * 2, p, v.sizes[v.nz - 1] * es + 8)) {
        int nbad = 0, passed = 0, failed = 0;
        for (int ln = 1; ln < f->n; ln++) read_paired_line(&v, f->lines[ln], ln, &nbad);
        for (int z = 0; z < v.nz; z++) judge_size(&v, z, &passed, &failed);
        code = verdict(nbad, passed, failed);
    }
    work_free(&v.w);
    free(v.ratio);
    return code;
}

/* ------------------------------------------------------------ main */

/* collverify's own option that argument a names (--help included: the
 * table's parser answers it), or NULL for one of the run's. */
static int is_own(const char *a, const ck_opt **row)
{
    char name[64];
    *row = NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
    if (a[0] == '-' && a[1] && a[1] != '-' && !a[2]) {
        for (const ck_opt *o = vf_options; o->name; o++)
            if (o->short_name == a[1]) *row = o;
        return *row != NULL;
    }
    if (strncmp(a, "--", 2) || strcspn(a, "=") >= sizeof name) return 0;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
    *row = ck_opt_find(vf_options, name);
    return *row != NULL;
}

/* argv split: collverify's own options (with their values) into own[],
 * the run's into rest[], a PASS_ON option into both. Each has argv[0]
 * first. */
static void split_args(int argc, char **argv, char **own, int *nown, char **rest, int *nrest)
{
    own[0] = rest[0] = argv[0];
    *nown = *nrest = 1;
    for (int i = 1; i < argc; i++) {
        const ck_opt *o;
        if (!is_own(argv[i], &o)) { rest[(*nrest)++] = argv[i]; continue; }
        const int with_value = o && o->type != CK_OPT_FLAG && !strchr(argv[i], '=') && i + 1 < argc;
        for (int j = 0; j <= with_value; j++) {
            own[(*nown)++] = argv[i + j];
            if (o && (o->flags & PASS_ON)) rest[(*nrest)++] = argv[i + j];
        }
        i += with_value;
    }
}

/* The run's options collverify must know before the tool's parser reads
 * them: the collective, whose registry the names in --algo are looked up in,
 * and those names (a student's algorithm becomes a stub; a bad name is the
 * tool's parser's to report). */
static void peek_run_options(int argc, char **argv, vf_opts *vo)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--coll") && i + 1 < argc) ck_coll_parse(argv[i + 1], &vo->coll);
        if (!strncmp(argv[i], "--coll=", 7)) ck_coll_parse(argv[i] + 7, &vo->coll);
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--algo") && i + 1 < argc) register_stubs(vo->coll, argv[i + 1]);
        if (!strncmp(argv[i], "--algo=", 7)) register_stubs(vo->coll, argv[i] + 7);
    }
}

/* collverify's own options: 0, or the exit code (0 after --help). */
static int parse_own(int argc, char **argv, vf_opts *vo, char **rest, int *nrest)
{
    char **own = calloc((size_t)argc + 1, sizeof *own), why[512];
    int nown = 0, code = -1;
    if (!own) return 2;
    split_args(argc, argv, own, &nown, rest, nrest);
    switch (ck_opt_parse(vf_options, nown, own, vo, NULL, why, sizeof why)) {
    case CK_OPT_HELP: code = usage(); break;
    case CK_OPT_BAD: cc_say_bad(stderr, "collverify", why); code = 2; break;
    }
    free(own);
    if (code >= 0) return code;
    if (!vo->np || !vo->results) {
        fprintf(stderr, "collverify: --np and --results are required (collverify --help)\n");
        return 2;
    }
    peek_run_options(argc, argv, vo);
    if (!vo->traffic) return -1;
    const ck_algo *t = traffic_algo(vo->coll, vo->traffic);
    if (!t || is_stub(t)) {
        fprintf(stderr, "collverify: --traffic '%s': no such library algorithm (--coll %s)\n", vo->traffic,
                ck_coll_name(vo->coll));
        return 2;
    }
    if (t->flags & CK_ALGO_REFERENCE) {
        fprintf(stderr, "collverify: --traffic '%s': a reference algorithm has no traffic formula\n", vo->traffic);
        return 2;
    }
    return -1;
}

/* The run's options, by the tool's own parser: the calls to expect, the
 * chunk (the library's default, or the run's --chunk) and the inputs' seed.
 * 0, or the exit code. */
static int parse_run(const vf_opts *vo, int nrest, char **rest, cc_options *co, bm_opts *bo, ck_config *cfg)
{
    if (vo->paired) {
        /* collbench's parser wants MPI-free options only; --results is its own too. */
        int rc = bm_parse_args(nrest, rest, bo);
        if (rc) return rc == 1 ? 0 : 2;
        if (bo->mode != BM_MODE_PAIRED) {
            fprintf(stderr, "collverify: --paired needs collbench's --paired options\n");
            return 2;
        }
        if (bo->chunk) cfg->chunk_bytes = bo->chunk;
        cc_set_seed(bo->seed);
        return -1;
    }
    int rc = cc_parse_args(nrest, rest, co, 0);
    if (rc >= 0) return rc;
    if (co->chunk) cfg->chunk_bytes = co->chunk;
    cc_set_seed(co->seed);
    return -1;
}

int main(int argc, char **argv)
{
    vf_opts vo;
    memset(&vo, 0, sizeof vo);
    static char **rest;   /* static: still reachable on the early returns below */
    rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest) return 2;
    int code = parse_own(argc, argv, &vo, rest, &nrest);
    if (code >= 0) return code;
    ck_config cfg = {.chunk_bytes = 256 * 1024, .timeout_s = 30, .validate = 1};
    cc_options co;
    bm_opts bo;
    if ((code = parse_run(&vo, nrest, rest, &co, &bo, &cfg)) >= 0) return code;
    vf_file f;
    if (read_lines(vo.results, &f)) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    int rc = vo.paired ? verify_paired(&vo, &bo, &f, &cfg) : verify_check(&vo, &co, &f, &cfg);
    file_free(&f);
    fflush(stdout);
    return ferror(stdout) ? 1 : rc;
}
