/*
 * pattern.c — what the failed cases of one algorithm have in common, in one
 * line at the end of the run: a run of a broken algorithm prints tens or
 * hundreds of case lines, and the pattern among them ("fails only in place",
 * "only for i64", "only when p does not divide the count") is often the
 * quickest way to the bug.
 *
 * A dimension of the matrix (in place, type, op, p dividing the count, the
 * count below p, alignment, input kind, an odd count from p = 3 on: at p = 2
 * it is p not dividing the count) is named when the failed cases take
 * only some of the values the run covered in it: every case outside them
 * passed. What the same call did when repeated with the same inputs
 * (collcheck.c's probe) says whether the failure is deterministic, happens
 * only on a communicator's first call, or changes between identical repeats
 * (nondeterministic: a race). Last, the explanation the diagnoses give most
 * often, counted over the cases that are not tiny (0 < count <= p): at a count of
 * 1 or 2 a wrong value matches a coincidence ("equals the prod") as easily
 * as the real explanation, and the first failure is often such a case.
 */
#include <stdio.h>
#include <string.h>
#include "check_cli.h"
#include "collkit_util.h"

/* One dimension: its value for a case, and the phrase for a set of values. */
typedef struct {
    int (*value)(const cc_case *c, int p);   /* 0 .. 31 */
    void (*say)(ck_sbuf *b, unsigned values);
    int min_p;                               /* meaningful from this p on */
} dimension;

static int v_inplace(const cc_case *c, int p) { (void)p; return c->inplace; }
static int v_dtype(const cc_case *c, int p) { (void)p; return (int)c->dt; }
static int v_op(const cc_case *c, int p) { (void)p; return (int)c->op; }
static int v_divides(const cc_case *c, int p) { return c->count % (size_t)p == 0; }
static int v_small(const cc_case *c, int p) { return c->count < (size_t)p; }
static int v_odd(const cc_case *c, int p) { (void)p; return (int)(c->count & 1); }
static int v_misaligned(const cc_case *c, int p) { (void)p; return c->misaligned; }
static int v_random(const cc_case *c, int p) { (void)p; return c->random; }

static int only(unsigned values) { return __builtin_ctz(values); }   /* the one value of a one-value set */

static void s_inplace(ck_sbuf *b, unsigned v) { ck_sbuf_add(b, only(v) ? "fails only in place" : "fails only out of place"); }
static void s_divides(ck_sbuf *b, unsigned v)
{
    ck_sbuf_add(b, only(v) ? "only when p divides the count" : "only when p does not divide the count");
}
static void s_small(ck_sbuf *b, unsigned v)
{
    ck_sbuf_add(b, only(v) ? "only when the count is smaller than p (some blocks are empty)" : "only when the count is at least p");
}
static void s_odd(ck_sbuf *b, unsigned v) { ck_sbuf_add(b, only(v) ? "only when the count is odd" : "only when the count is even"); }
static void s_misaligned(ck_sbuf *b, unsigned v) { ck_sbuf_add(b, only(v) ? "only misaligned" : "only aligned"); }
static void s_random(ck_sbuf *b, unsigned v)
{
    ck_sbuf_add(b, only(v) ? "only with random float inputs" : "only with exact (integer-valued) inputs");
}
static void s_dtype(ck_sbuf *b, unsigned v)
{
    ck_sbuf_add(b, "only for");
    for (int k = 0, n = 0; k < 32; k++)
        if (v >> k & 1u) ck_sbuf_add(b, "%s %s", n++ ? "," : "", ck_dtype_name((ck_dtype)k));
}
static void s_op(ck_sbuf *b, unsigned v)
{
    ck_sbuf_add(b, "only for");
    for (int k = 0, n = 0; k < 32; k++)
        if (v >> k & 1u) ck_sbuf_add(b, "%s %s", n++ ? "," : "", ck_op_name((ck_op)k));
}

static const dimension dims[] = {
    {v_inplace, s_inplace, 1}, {v_dtype, s_dtype, 1}, {v_op, s_op, 1}, {v_divides, s_divides, 2},
    {v_small, s_small, 2}, {v_misaligned, s_misaligned, 1}, {v_random, s_random, 1}, {v_odd, s_odd, 3},
};

static int tiny(const cc_outcome *o, int p) { return o->cs.count > 0 && o->cs.count <= (size_t)p; }

/* Does the claim say the state of another call (or case) is in the result? */
static int about_state(const char *claim) { return strstr(claim, "previous") != NULL; }

/* "; " before every clause but the first. */
static void next_clause(ck_sbuf *b, int *said)
{
    if ((*said)++) ck_sbuf_add(b, "; ");
}

#define NDIMS (sizeof dims / sizeof dims[0])

/* The values of dimension d among the cases like the failed ones in every
 * other dimension (i64 has no avg: "only for i64" must not bring "not for
 * avg"). A count of 0 never reaches the algorithm (the library returns
 * first): such a case passing says nothing, and is no contrast. */
static unsigned like_failed(const cc_outcome *o, int n, int p, size_t d)
{
    unsigned like = 0;
    for (int k = 0; k < n; k++) {
        if (!o[k].cs.count && !o[k].failed) continue;
        int comparable = 1;
        for (size_t e = 0; e < NDIMS && comparable; e++) {
            /* parity follows the count like the two count dimensions: no contrast of its own */
            if (e == d || p < dims[e].min_p || dims[e].value == v_odd) continue;
            unsigned failing = 0;
            for (int j = 0; j < n; j++)
                if (o[j].failed) failing |= 1u << (dims[e].value(&o[j].cs, p) & 31);
            comparable = (failing >> (dims[e].value(&o[k].cs, p) & 31)) & 1u;
        }
        if (comparable) like |= 1u << (dims[d].value(&o[k].cs, p) & 31);
    }
    return like;
}

/* One type (op) passes where two or more others fail: the likeliest bug is
 * a reduction that always runs in that type (op), whatever the call asks
 * for. */
static void add_one_passes(ck_sbuf *b, size_t d, unsigned all, unsigned bad)
{
    unsigned pass = all & ~bad;
    /* avg reaches an algorithm as sum (the library divides after it) */
    if (dims[d].value == v_op && (pass >> CK_SUM & 1u)) pass &= ~(1u << CK_AVG);
    if ((dims[d].value != v_dtype && dims[d].value != v_op) || __builtin_popcount(pass) != 1 ||
        __builtin_popcount(bad) < 2)
        return;
    const int dt = dims[d].value == v_dtype;
    const char *name = dt ? ck_dtype_name((ck_dtype)only(pass)) : ck_op_name((ck_op)only(pass));
    ck_sbuf_add(b, " (%s alone passes: is every reduction done %s %s, whatever the %s asks for?)", name,
                dt ? "in" : "with", name, dt ? "dtype" : "op");
}

/* Each dimension whose values the failures do not all span ("only in
 * place", "only for i64"). One failure is "only" anything: none then. */
static void say_dimensions(ck_sbuf *b, const cc_outcome *o, int n, int p, int nfail, int *said)
{
    for (size_t d = 0; d < NDIMS && nfail >= 2; d++) {
        if (p < dims[d].min_p) continue;
        unsigned all = 0, bad = 0;
        for (int k = 0; k < n; k++) {
            if (!o[k].cs.count && !o[k].failed) continue;   /* a count of 0: see like_failed */
            unsigned bitv = 1u << (dims[d].value(&o[k].cs, p) & 31);
            all |= bitv;
            if (o[k].failed) bad |= bitv;
        }
        if (bad == all) continue;   /* the failures span every value run: no pattern here */
        if ((like_failed(o, n, p, d) & ~bad) == 0) continue;
        next_clause(b, said);
        dims[d].say(b, bad);
        add_one_passes(b, d, all, bad);
    }
}

/* The probes: the same call again, three times, with the same inputs. */
static void say_probes(ck_sbuf *b, const cc_outcome *o, int n, int *said)
{
    int probed = 0, differs = 0, first_only = 0, state = 0, claims_state = 0;
    for (int k = 0; k < n; k++) {
        if (!o[k].failed) continue;
        claims_state += about_state(o[k].claim);
        const int pr = o[k].probe;
        probed += pr == CC_PROBE_SAME || pr == CC_PROBE_DIFFERS || pr == CC_PROBE_FIRST_ONLY || pr == CC_PROBE_STATE;
        differs += pr == CC_PROBE_DIFFERS;
        first_only += pr == CC_PROBE_FIRST_ONLY;
        state += pr == CC_PROBE_STATE;
    }
    if (differs && !claims_state) {
        next_clause(b, said);
        ck_sbuf_add(b, "results differ between repeats of the same case with the same inputs (%d of %d cases "
                       "repeated): nondeterministic, a race (a buffer reused or read before its message arrived, "
                       "a missing wait?)", differs, probed);
    } else if (probed && first_only == probed) {
        next_clause(b, said);
        ck_sbuf_add(b, "only on the first call of a case: the same call repeated with the same inputs passes "
                       "(something set up, or memory first used, on the first call?)");
    } else if (probed && state + claims_state > 0 && 2 * (state + claims_state) >= probed) {
        next_clause(b, said);
        ck_sbuf_add(b, "state kept between calls or carried between cases: results hold an earlier call's result, "
                       "and the same call repeated with the same inputs gives another");
    }
}

/* The explanation most failed cases share, tiny ones aside (a tiny first
 * failure that reads otherwise is named as a coincidence). */
/* The length of a claim's finding, without where its wrong elements lie
 * (", at SHAPE": said apart, say_shared_shape). */
static int finding_len(const char *claim)
{
    const char *at = strstr(claim, ", at ");
    return at ? (int)(at - claim) : (int)strlen(claim);
}

static int same_finding(const char *a, const char *b)
{
    const int n = finding_len(a);
    return n == finding_len(b) && !strncmp(a, b, (size_t)n);
}

/* side: -1 every failed case; 0 the out-of-place ones alone (where recvbuf
 * starts as a fill, a value says more than in place). */
static int say_shared_claim(ck_sbuf *b, const cc_outcome *o, int n, int p, int nfail, int *said, int side)
{
    int best = -1, best_n = 0, counted = 0;
    for (int pass = 0; pass < 2 && best < 0; pass++) {   /* pass 1: tiny cases too, when only they failed */
        counted = 0;
        for (int k = 0; k < n; k++) {
            if (!o[k].failed || !o[k].claim[0] || (pass == 0 && tiny(&o[k], p))) continue;
            if (side >= 0 && o[k].cs.inplace != side) continue;
            counted++;
            int same_claim = 0;
            for (int j = 0; j < n; j++)
                same_claim += o[j].failed && (pass || !tiny(&o[j], p)) && (side < 0 || o[j].cs.inplace == side) &&
                              same_finding(o[j].claim, o[k].claim);
            if (same_claim > best_n) { best_n = same_claim; best = k; }
        }
    }
    if (best < 0 || best_n < 2 || 2 * best_n <= counted) return 0;
    next_clause(b, said);
    ck_sbuf_add(b, "%s%.*s (%d of %d failed cases%s)", side == 0 ? "out of place: " : "", finding_len(o[best].claim),
                o[best].claim, best_n, counted, side == 0 ? " out of place" : counted < nfail ? " with more elements than ranks" : "");
    for (int k = 0; k < n && side < 0; k++)
        if (o[k].failed) {
            if (tiny(&o[k], p) && o[k].claim[0] && !same_finding(o[k].claim, o[best].claim))
                ck_sbuf_add(b, "; the first failure (n=%zu) reads \"%s\": a coincidence at so few elements",
                            o[k].cs.count, o[k].claim);
            break;
        }
    return 1;
}

/* Every failure on a case's later call, its first call right (two or more
 * cases, none differing between repeats): what one call leaves behind
 * changes the next. */
static void say_later_calls(ck_sbuf *b, const cc_outcome *o, int n, int nfail, int *said)
{
    int later = 0;
    for (int k = 0; k < n; k++) {
        if (!o[k].failed) continue;
        /* a race, or a claim that already says it (state, memory kept) */
        if (o[k].probe == CC_PROBE_DIFFERS || about_state(o[k].claim) || strstr(o[k].claim, "memory")) return;
        later += o[k].call > 0;
    }
    if (nfail < 2 || later < nfail) return;
    next_clause(b, said);
    ck_sbuf_add(b, "only on a case's later calls (each first call passes): something one call leaves behind (a cache, "
                   "a static buffer, a count) changes the next");
}

/* Where the wrong elements lie (diagnose.c's ", at SHAPE" at the end of a
 * claim), when most failed cases share it: said apart from the values'
 * explanation, which may differ between in place and out of place. */
static int say_shared_shape(ck_sbuf *b, const cc_outcome *o, int n, int p, int *said)
{
    int best = -1, best_n = 0, counted = 0;
    for (int k = 0; k < n; k++) {
        if (!o[k].failed || tiny(&o[k], p)) continue;
        counted++;
        const char *at = strstr(o[k].claim, ", at ");
        if (!at) continue;
        int same = 0;
        for (int j = 0; j < n; j++) {
            const char *at2 = o[j].failed && !tiny(&o[j], p) ? strstr(o[j].claim, ", at ") : NULL;
            same += at2 && !strcmp(at2, at);
        }
        if (same > best_n) { best_n = same; best = k; }
    }
    if (best < 0 || best_n < 2 || 2 * best_n <= counted) return 0;
    next_clause(b, said);
    ck_sbuf_add(b, "the wrong elements are %s (%d of %d failed cases%s)", strstr(o[best].claim, ", at ") + 5, best_n,
                counted, " with more elements than ranks");
    return 1;
}

static int rank_of_case(const cc_outcome *o, int p) { return o->cs.count > (size_t)p ? 2 : o->cs.count > 0; }

/* Nothing shared to say (one failed case, or no explanation the most
 * share): the failure that says most, in its own words, so that every
 * failing run ends with a summary. The first failure with more elements
 * than ranks, else the first. */
static void say_fallback(ck_sbuf *b, const cc_outcome *o, int n, int p, int nfail, int *said)
{
    int k0 = -1;   /* more elements than ranks first, then a few, a count of 0 last */
    for (int k = 0; k < n; k++)
        if (o[k].failed && o[k].claim[0] && (k0 < 0 || rank_of_case(&o[k], p) > rank_of_case(&o[k0], p))) k0 = k;
    if (k0 < 0) return;
    next_clause(b, said);
    const cc_case *c = &o[k0].cs;
    ck_sbuf_add(b, "%s (%s n=%zu %s %s %s)", o[k0].claim, nfail == 1 ? "the one failed case," : "no explanation is "
                "shared by most failed cases; this one reads so in", c->count, ck_dtype_name(c->dt),
                ck_op_name(c->op), c->inplace ? "in-place" : "out-of-place");
}

int cc_pattern(char *out, size_t cap, const cc_outcome *o, int n, int p)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    int nfail = 0, said = 0;
    for (int k = 0; k < n; k++) nfail += o[k].failed;
    if (!nfail) return 0;
    say_dimensions(&b, o, n, p, nfail, &said);
    const int before_probes = said;
    say_probes(&b, o, n, &said);
    const int probed = said > before_probes;
    const int claimed = say_shared_claim(&b, o, n, p, nfail, &said, -1) || say_shared_claim(&b, o, n, p, nfail, &said, 0);
    const int shape = say_shared_shape(&b, o, n, p, &said);
    say_later_calls(&b, o, n, nfail, &said);
    if (!claimed && !shape && (!probed || nfail == 1)) say_fallback(&b, o, n, p, nfail, &said);
    return said;
}
