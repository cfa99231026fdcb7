/*
 * diagnose.c — turn a wrong all-reduce result into a sentence a student can act
 * on. The inputs (inputs.c) are built so that a wrong value can be decoded:
 * for sum, the low p bits say which ranks' inputs it holds and the high bits
 * which element; for min/max the value names the rank and element it came
 * from; for prod the factors narrow down which ranks' contributions it lacks.
 *
 * One wrong element proves little: a value that happens to equal the max of
 * the inputs, or another element's result, can be a coincidence. So every
 * wrong element examined (up to CC_EXAMINE, spread over all the wrong ones)
 * gets a verdict, and a claim about the ALGORITHM ("the reduction looks like
 * max", "data shifted by 3", "rank 2's contribution is missing", "state kept
 * between calls") is made only when several of them agree and they are the
 * majority; otherwise the summary says what the majority shows, with counts.
 * The first wrong element is described in full, as facts about that element.
 *
 * On top of that, every block of the ck_block partition is classified (right,
 * never written, another block's result...), because most all-reduce bugs are
 * block bugs. Where the decoded value names a rank (a missing or doubled
 * contribution), the algorithm's own diagnose hook (ck_algo.diagnose) says
 * where in ITS schedule that rank's data meets the element: the checker itself
 * knows no algorithm.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encoding.h"
#include "collkit_util.h"

#define CC_EXAMINE 64   /* wrong elements examined for the summary */

static void add_rank_set(ck_sbuf *b, const int *ranks, int n)
{
    ck_sbuf_add(b, "{");
    for (int k = 0; k < n; k++) ck_sbuf_add(b, k ? ",%d" : "%d", ranks[k]);
    ck_sbuf_add(b, "}");
}

/* The last diagnosis's finding in a few words (cc_diagnose_claim). */
static _Thread_local char claim[128];
static void set_claim(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_claim(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(claim, sizeof claim, fmt, ap);
    va_end(ap);
}
const char *cc_diagnose_claim(void) { return claim; }

typedef struct {
    cc_scheme s, prev;   /* this call's encoding; the previous call's (has_prev) */
    int has_prev;
    int prev_case;       /* the previous call was another case's (its elements: prev_count) */
    size_t prev_count;
    size_t es, count;
    const unsigned char *got, *exp, *own;
    int fill_byte, rank;
    const ck_algo *algo;
    const ck_config *cfg;
    int placed;      /* the algorithm's hook has already placed the fault */
} ctx;

/* What one wrong element shows. `ranks` is a set of candidate ranks (bit r):
 * for K_MISSING / K_DOUBLED, the ranks whose contribution it can lack / hold
 * twice — exactly those when `exact`, one of them otherwise. */
enum {
    K_UNEXPLAINED, K_FILL, K_OWN, K_PREV, K_PREV_OP, K_OTHER_OP, K_NODIV, K_ZERO_ID,
    K_SHIFT, K_MISSING, K_DOUBLED, K_REPLACED, K_SIGN, K_NOT_INT, K_RANGE, K_WIDTH, K_AVG, K_FILL_READ, K_SELF, K_SCALED, K_NKINDS
};
typedef struct {
    int       kind;
    long long param;   /* K_OTHER_OP: the op; K_SHIFT: the distance */
    uint64_t  ranks;
    int       exact;
} verdict;

static const char *const kind_names[K_NKINDS] = {
    [K_UNEXPLAINED] = "unexplained",
    [K_FILL]        = "never written",
    [K_OWN]         = "this rank's own input unchanged",
    [K_PREV]        = "the previous call's result",
    [K_PREV_OP]     = "the previous call's result combined with this call's",
    [K_OTHER_OP]    = "another op's result over the inputs",
    [K_NODIV]       = "the sum (no division by p)",
    [K_ZERO_ID]     = "0, which is no rank's input",
    [K_SHIFT]       = "another element's value",
    [K_MISSING]     = "lacking a rank's contribution",
    [K_DOUBLED]     = "holding a rank's contribution twice",
    [K_REPLACED]    = "holding one rank's input in place of another's",
    [K_SIGN]        = "right magnitude, wrong sign",
    [K_NOT_INT]     = "not integers (garbage)",
    [K_RANGE]       = "outside the range of the inputs",
    [K_WIDTH]       = "right in their low 32 bits only",
    [K_AVG]         = "the expected value / p",
    [K_FILL_READ]   = "recvbuf's fill reduced as an input",
    [K_SELF]        = "a partial sum doubled (data reduced with itself)",
    [K_SCALED]      = "the expected sum times a whole number (the result reduced again)",
};

static uint64_t bit(int r) { return r < 64 ? 1ull << r : 0; }

/* The reduction of element i's inputs under another op, if it is exact. */
static int fold_as(const cc_scheme *s, ck_op op2, size_t i, int64_t *out)
{
    int64_t acc = cc_input(s, 0, i);
    for (int r = 1; r < s->p; r++) {
        int64_t v = cc_input(s, r, i);
        switch (op2) {
        case CK_SUM:  if (__builtin_add_overflow(acc, v, &acc)) return 0; break;
        case CK_PROD: if (__builtin_mul_overflow(acc, v, &acc)) return 0; break;
        case CK_MIN:  acc = v < acc ? v : acc; break;
        default:      acc = v > acc ? v : acc; break;
        }
    }
    int64_t lim = (int64_t)1 << s->bits;
    if (acc > lim || acc < -lim) return 0;
    *out = acc;
    return 1;
}

/* a times b as the algorithm's kernel computes it: integer types wrap (two's
 * complement, as ck_reduce_host does), so a product that overflows is still
 * matched; for floats, the exact product if it fits in an int64. */
static int mul_as(const cc_scheme *s, int64_t a, int64_t b, int64_t *out)
{
    if (s->dt == CK_I64) { *out = (int64_t)((uint64_t)a * (uint64_t)b); return 1; }
    if (s->dt == CK_I32) { *out = (int32_t)((uint32_t)a * (uint32_t)b); return 1; }
    return !__builtin_mul_overflow(a, b, out);
}

/* a op b in exact integers, if it fits the type. */
static int combine(const cc_scheme *s, int64_t a, int64_t b, int64_t *out)
{
    switch (s->op) {
    case CK_SUM:  if (__builtin_add_overflow(a, b, out)) return 0; break;
    case CK_PROD: if (__builtin_mul_overflow(a, b, out)) return 0; break;
    case CK_MIN:  *out = a < b ? a : b; break;
    case CK_MAX:  *out = a > b ? a : b; break;
    default:      return 0;
    }
    return 1;
}

static int is_fill(const ctx *c, size_t i)
{
    if (c->fill_byte < 0) return 0;
    for (size_t k = 0; k < c->es; k++)
        if (c->got[i * c->es + k] != (unsigned char)c->fill_byte) return 0;
    return 1;
}

static int is_own(const ctx *c, size_t i)
{
    return c->own && c->s.p > 1 && !memcmp(c->got + i * c->es, c->own + i * c->es, c->es);
}

/* Ask the algorithm where element i meets rank `missing` (or, with -1 for
 * both, where this rank gets element i's result), and append its answer. */
static void place(ck_sbuf *b, ctx *c, size_t i, int missing, int doubled)
{
    if (!b || c->placed || !c->algo || !c->algo->diagnose) return;
    static const ck_config defaults = {.chunk_bytes = 256 * 1024, .timeout_s = 30, .validate = 1};
    char where[400] = "";
    const ck_fault f = {.p = c->s.p, .rank = c->rank, .count = c->count, .elem = i, .esize = c->es,
                        .missing = missing, .doubled = doubled, .cfg = c->cfg ? c->cfg : &defaults};
    c->algo->diagnose(&f, where, sizeof where);
    if (where[0]) ck_sbuf_add(b, " (in %s, %s)", c->algo->name, where);
    c->placed = 1;
}

static int block_of(size_t count, int p, size_t i, size_t *off, size_t *len)
{
    for (int b = 0; b < p; b++) {
        ck_block(count, p, b, off, len);
        if (i >= *off && i < *off + *len) return b;
    }
    return -1;
}

/* Appends go to b when describing the first element, nowhere otherwise. */
static void say(ck_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(ck_sbuf *b, const char *fmt, ...)
{
    if (!b) return;
    va_list ap;
    va_start(ap, fmt);
    ck_sbuf_vadd(b, fmt, ap);
    va_end(ap);
}

/* One rank's input in place of another's: the result without rank m's input
 * and with rank d's twice (an input read after it was overwritten: in place,
 * recvbuf written before the rank's own input in it was used). Sums and
 * products; says so and returns 1 when exactly one pair (m, d) fits. */
/* Does element i's result gv equal its right result ev with rank m's input
 * replaced by rank d's? */
static int replaced_fits(const cc_scheme *s, size_t i, int m, int d, int64_t gv, int64_t ev)
{
    const int64_t xm = cc_input(s, m, i), xd = cc_input(s, d, i);
    int64_t t;
    if (xd == xm) return 0;   /* the same value: nothing would show */
    if (s->kind == CC_PROD) return xm != 0 && ev % xm == 0 && mul_as(s, ev / xm, xd, &t) && t == gv;
    return !__builtin_add_overflow(ev - xm, xd, &t) && t == gv;
}

static int replaced_input(ck_sbuf *b, ctx *c, size_t i, int64_t gv, int64_t ev, verdict *v)
{
    const cc_scheme *s = &c->s;
    if (s->kind == CC_MINMAX || s->p < 2 || s->p > 64) return 0;
    int fm = -1, fd = -1, n = 0;
    for (int m = 0; m < s->p; m++)
        for (int d = 0; d < s->p; d++)
            if (d != m && replaced_fits(s, i, m, d, gv, ev) && !n++) { fm = m; fd = d; }
    if (n != 1) return 0;
    say(b, ": it holds rank %d's input in place of rank %d's: rank %d's contribution is missing and rank %d's "
           "is counted twice", fd, fm, fm, fd);
    *v = (verdict){K_REPLACED, fd, bit(fm), 1};
    place(b, c, i, fm, fd);
    return 1;
}

static int whole_chunks(const ctx *c, long long ad);

/* Element i + d exists: a decoding never names an element past the buffer. */
static int in_buffer(const ctx *c, size_t i, long long d)
{
    return (d >= 0 || (size_t)(-d) <= i) && (d < 0 || i + (size_t)d < c->count);
}

/* A sum shifted by d whose p*d is whole chunks (and d is not): with these
 * inputs the sum over all ranks of element i+d reads the same as one rank's
 * input taken from p*d elements away with the others' in place — at p = 2,
 * half a chunk. A pipelined algorithm that receives a chunk into a slot still
 * holding the one before (one receive slot where two are needed) does the
 * second. */
static int chunk_apart(const ctx *c, long long d)
{
    const long long ad = d < 0 ? -d : d;
    return c->s.p > 1 && !whole_chunks(c, ad) && whole_chunks(c, ad * c->s.p);
}

/* x as a sum of distinct ranks' inputs of element i (no shift): the set of
 * ranks, or 0 when it is none. */
static uint64_t mask_ranks(const ctx *c, size_t i, int64_t x)
{
    const int p = c->s.p, es = c->s.eshift;
    if (x <= 0 || p > 62) return 0;
    const int64_t full = ((int64_t)1 << p) - 1, low = x & full;
    const int n = __builtin_popcountll((unsigned long long)low);
    const int64_t gap = es > p ? (x >> p) & (((int64_t)1 << (es - p)) - 1) : 0;
    const int64_t E = (int64_t)1 << c->s.ebits;
    if (!n || gap || (x >> es) != n * (int64_t)(cc_key(&c->s, i) & (size_t)(E - 1))) return 0;
    return (uint64_t)low;
}

/* Two readings of a reduction done twice, each exact with the rank bits:
 * the full sum plus a partial sum of ranks S (a finished block reduced
 * again where it should be copied), or twice a partial sum of S (a buffer
 * reduced with itself: in place, a receive into recvbuf over the input it
 * was then reduced with). */
static int twice_over(ck_sbuf *b, ctx *c, size_t i, int64_t gv, int64_t ev, verdict *v)
{
    uint64_t set = gv > ev ? mask_ranks(c, i, gv - ev) : 0;
    const int full_plus = set != 0;
    int times = 1;   /* a buffer reduced with itself at several steps: 2^j times a partial sum */
    for (int j = 1; j <= 6 && !set && gv % ((int64_t)1 << j) == 0; j++) {
        set = mask_ranks(c, i, gv >> j);
        times = 1 << j;
    }
    if (!set) return 0;
    int rs[64], n = 0;
    for (int r = 0; r < c->s.p; r++) if (set >> r & 1) rs[n++] = r;
    if (full_plus) {
        say(b, ": it is the full sum plus the sum of ranks ");
        if (b) add_rank_set(b, rs, n);
        say(b, " again: the reduction applied twice (a finished block reduced into a partial one where it should be "
               "copied?)");
        *v = (verdict){K_DOUBLED, 0, set, 1};
    } else {
        if (times == 2) say(b, ": it is twice the sum of ranks ");
        else say(b, ": it is %d times the sum of ranks ", times);
        if (b) add_rank_set(b, rs, n);
        say(b, ": data reduced with itself (a receive into the buffer it is then reduced with: in place, recvbuf "
               "over this rank's input?)");
        *v = (verdict){K_SELF, 0, set, 1};
    }
    return 1;
}

static void explain_mask(ck_sbuf *b, ctx *c, size_t i, int64_t gv, int64_t ev, verdict *v)
{
    const int p = c->s.p;
    const int64_t E = (int64_t)1 << c->s.ebits, full = ((int64_t)1 << p) - 1;
    const size_t j = cc_key(&c->s, i);
    if (gv > 0) {
        const int es = c->s.eshift;
        int64_t low = gv & full, high = gv >> es;
        /* Between the rank bits and the element field (i64): only carries. */
        int64_t gap = es > p ? (gv >> p) & (((int64_t)1 << (es - p)) - 1) : 0;
        int n = __builtin_popcountll((unsigned long long)low);
        long long d = 0;
        if (n > 0 && gap == 0 && high % n == 0 && high / n < E) {
            d = (long long)(high / n) - (long long)(j & (size_t)(E - 1));
            if (d > E / 2) d -= E;
            if (d <= -E / 2) d += E;
        }
        /* A decoding that names an element outside the buffer is no
         * decoding: pieces of different elements mixed, not a shift. */
        if (n > 0 && gap == 0 && high % n == 0 && high / n < E && in_buffer(c, i, d)) {
            int has[64], miss[64], nh = 0, nm = 0;
            for (int r = 0; r < p; r++) {
                if (low >> r & 1) has[nh++] = r;
                else miss[nm++] = r;
            }
            if (d != 0 && replaced_input(b, c, i, gv, ev, v)) return;
            if (low == full && d != 0) {
                say(b, ": it is the complete sum of element %lld (%+lld)", (long long)i + d, d);
                if (chunk_apart(c, d))
                    say(b, ", or one rank's input of element %lld (%+lld: whole chunks) with the others' of this one",
                        (long long)i + d * c->s.p, d * c->s.p);
                *v = (verdict){K_SHIFT, d, 0, 1};
                return;
            }
            if (nh == 1) say(b, ": it holds only rank %d's input", has[0]);
            else { say(b, ": it holds the sum of ranks "); if (b) add_rank_set(b, has, nh); }
            if (d != 0) say(b, " of element %lld (%+lld, data shifted)", (long long)i + d, d);
            if (nm == 1) say(b, ": rank %d's contribution is missing", miss[0]);
            else { say(b, ": the contributions of ranks "); if (b) add_rank_set(b, miss, nm); say(b, " are missing"); }
            *v = (verdict){K_MISSING, d, (uint64_t)(full & ~low), 1};
            if (d == 0) place(b, c, i, miss[0], -1);
            return;
        }
    }
    for (int q = 0; q < p; q++)
        if (gv - ev == cc_input(&c->s, q, i)) {
            say(b, ": it is the full sum plus rank %d's input again: rank %d's contribution is counted twice", q, q);
            *v = (verdict){K_DOUBLED, 0, bit(q), 1};
            place(b, c, i, -1, q);
            return;
        }
    if (replaced_input(b, c, i, gv, ev, v)) return;
    if (twice_over(b, c, i, gv, ev, v)) return;
    say(b, ": it is not a sum of distinct ranks' inputs of one element (a contribution counted twice, "
           "or pieces of different elements mixed)");
}

static void explain_minmax(ck_sbuf *b, ctx *c, size_t i, int64_t gv, verdict *v)
{
    const cc_scheme *s = &c->s;
    const size_t j = cc_key(s, i);
    int64_t u = gv - cc_minmax_shift(s, j, NULL);
    if (u < 0 || u >= s->M * s->K) {
        say(b, ": it is outside the range of this element's inputs");
        *v = (verdict){K_RANGE, 0, 0, 0};
        return;
    }
    int64_t k = u / s->K, e = u % s->K, ej = (int64_t)(j % (size_t)s->K);
    if (e != ej) {
        long long d = (long long)(e - ej);
        if (d > s->K / 2) d -= s->K;
        if (d <= -s->K / 2) d += s->K;
        if (!in_buffer(c, i, d)) {
            say(b, ": it is no input of this element, nor of any element of the buffer");
            *v = (verdict){K_RANGE, 0, 0, 0};
            return;
        }
        say(b, ": it is an input of element %lld (%+lld)", (long long)i + d, d);
        *v = (verdict){K_SHIFT, d, 0, 1};
        return;
    }
    if (s->M == s->p) {
        int q = (int)(((k - (int64_t)(j % (size_t)s->M)) % s->M + s->M) % s->M);
        int want = s->op == CK_MIN ? (int)((s->M - (int64_t)(j % (size_t)s->M)) % s->M)
                                   : (int)((2 * s->M - 1 - (int64_t)(j % (size_t)s->M)) % s->M);
        const int own = q == c->rank && is_own(c, i);
        if (own) say(b, ": it is this rank's own input for this element");
        else say(b, ": it is rank %d's input for this element", q);
        say(b, ", but the %s is rank %d's: rank %d's contribution is missing%s", ck_op_name(s->op), want, want,
            own ? " (own input unchanged: never reduced with it?)" : "");
        *v = (verdict){own ? K_OWN : K_MISSING, 0, bit(want), 1};
        place(b, c, i, want, -1);
    } else {
        say(b, ": it is one rank's input for this element, not the %s over all ranks", ck_op_name(s->op));
    }
}

/* Sums at large p (CC_MOD) and products: one rank missing or doubled. */
static void explain_generic(ck_sbuf *b, ctx *c, size_t i, int64_t gv, int64_t ev, verdict *v)
{
    const cc_scheme *s = &c->s;
    int miss[64], twice[64], nm = 0, nt = 0;
    uint64_t mm = 0, mt = 0;
    for (int q = 0; q < s->p && q < 64; q++) {
        int64_t x = cc_input(s, q, i), t;
        if (s->kind == CC_PROD) {
            if (x != 0 && ev % x == 0 && ev / x == gv) { miss[nm++] = q; mm |= bit(q); }
            if (mul_as(s, ev, x, &t) && t == gv) { twice[nt++] = q; mt |= bit(q); }
        } else {
            if (x != 0 && ev - x == gv) { miss[nm++] = q; mm |= bit(q); }
            if (x != 0 && ev + x == gv) { twice[nt++] = q; mt |= bit(q); }
        }
    }
    if (nm) {
        say(b, ": it equals the result without %srank%s ", nm == 1 ? "" : "one of the ", nm == 1 ? "" : "s");
        if (b) add_rank_set(b, miss, nm);
        say(b, "'s input%s: a contribution is missing", s->kind == CC_PROD ? " (or with it replaced by 1)" : "");
        *v = (verdict){K_MISSING, 0, mm, nm == 1};
        if (nm == 1) place(b, c, i, miss[0], -1);
        return;
    }
    if (nt) {
        say(b, ": it equals the result with the input of %srank%s ", nt == 1 ? "" : "one of the ", nt == 1 ? "" : "s");
        if (b) add_rank_set(b, twice, nt);
        say(b, " counted twice");
        *v = (verdict){K_DOUBLED, 0, mt, nt == 1};
        if (nt == 1) place(b, c, i, -1, twice[0]);
        return;
    }
    if (replaced_input(b, c, i, gv, ev, v)) return;
    if (s->kind == CC_PROD && gv == -ev) {
        say(b, ": right magnitude, wrong sign: a contribution is missing or counted twice");
        *v = (verdict){K_SIGN, 0, 0, 0};
        return;
    }
    if (s->kind != CC_PROD && c->exp) {
        /* The nearest element whose correct result this is. */
        size_t w = c->count < 4096 ? c->count : 4096;
        for (size_t d = 1; d <= w; d++) {
            long long sd = 0;
            if (i + d < c->count && !memcmp(c->got + i * c->es, c->exp + (i + d) * c->es, c->es)) sd = (long long)d;
            else if (d <= i && !memcmp(c->got + i * c->es, c->exp + (i - d) * c->es, c->es)) sd = -(long long)d;
            if (sd) {
                say(b, ": it is the correct result of element %lld (%+lld)", (long long)i + sd, sd);
                *v = (verdict){K_SHIFT, sd, 0, 1};
                return;
            }
        }
    }
    say(b, ": no simple explanation (not the result with one rank missing or doubled)");
}

/* 0 is no rank's input for element i, but the result is 0: a wrong identity. */
static int zero_identity(ck_sbuf *b, ctx *c, size_t i, int64_t gv, verdict *v)
{
    const cc_scheme *s = &c->s;
    if (gv != 0 || (s->kind != CC_MINMAX && s->kind != CC_PROD)) return 0;
    for (int q = 0; q < s->p; q++)
        if (cc_input(s, q, i) == 0) return 0;
    if (s->kind == CC_PROD) {
        say(b, ": it is 0, which no product of these inputs is: 0 used as prod's identity (1), or a rank's "
               "contribution replaced by 0");
    } else {
        int sign;
        cc_minmax_shift(s, cc_key(s, i), &sign);
        say(b, ": it is 0, which is no rank's input for this element%s: 0 used as the identity of %s "
               "(start from the first input, or from %s)",
            sign > 0 ? " (all of them are positive)" : sign < 0 ? " (all of them are negative)" : "",
            ck_op_name(s->op), s->op == CK_MIN ? "+inf / the type's largest value" : "-inf / the type's lowest value");
    }
    *v = (verdict){K_ZERO_ID, 0, 0, 1};
    return 1;
}

static const char *op_word(ck_op op)
{
    switch (op) {
    case CK_SUM:  return "plus";
    case CK_PROD: return "times";
    case CK_MIN:  return "min";
    default:      return "max";
    }
}

/* The previous call's result, or that result combined with this call's. */
static int previous_call(ck_sbuf *b, ctx *c, size_t i, verdict *v)
{
    if (!c->has_prev || (c->prev_case && i >= c->prev_count)) return 0;
    unsigned char pe[8];
    cc_expected_at(&c->prev, i, pe);
    if (!memcmp(pe, c->got + i * c->es, c->es) && memcmp(pe, c->exp + i * c->es, c->es)) {
        if (c->prev_case)
            say(b, ": it is the previous case's result for this element (n=%zu %s %s, its call %u; this case's "
                   "first call)", c->prev_count, ck_dtype_name(c->prev.dt), ck_op_name(c->prev.op), c->prev.salt + 1);
        else
            say(b, ": it is the previous call's result for this element (call %u; this is call %u)", c->prev.salt + 1,
                c->s.salt + 1);
        *v = (verdict){K_PREV, 0, 0, 1};
        return 1;
    }
    int64_t gv, both, pv = cc_reduce_value(&c->prev, i), ev = cc_reduce_value(&c->s, i);
    /* The same inputs as the previous call's (another case of the same
     * count): "previous plus this" is "this twice", no evidence of state. */
    if (c->s.op == CK_AVG || pv == ev || !cc_load_int(c->got, i, c->s.dt, &gv) || !combine(&c->s, pv, ev, &both) ||
        both != gv || both == ev || both == pv)
        return 0;
    const char *prev = c->prev_case ? "the previous case's last result" : "the previous call's result";
    if (c->s.op == CK_SUM || c->s.op == CK_PROD)
        say(b, ": it is %s %s this call's", prev, op_word(c->s.op));
    else
        say(b, ": it is the %s of %s and this call's", op_word(c->s.op), prev);
    *v = (verdict){K_PREV_OP, 0, 0, 1};
    return 1;
}

/* Out of place recvbuf holds the fill byte before the call, no input: an
 * algorithm that reduces recvbuf before writing it (an accumulator started
 * from recvbuf, recvbuf taken for the input) reduces the fill. Element i then
 * holds the reduction of k copies of the fill and the inputs of the other
 * p - k ranks. Integer sums and products keep every bit of it (they wrap):
 * the fewest copies and the ranks whose inputs fill it out are found (every
 * set of ranks up to p = 12, beyond that all ranks or all but one). A float
 * fill (a tiny number) vanishes next to any integer input: only a value made
 * of fill alone, k copies summed, shows it. */
static int fill_read(ck_sbuf *b, ctx *c, size_t i, verdict *v)
{
    const cc_scheme *s = &c->s;
    const int p = s->p;
    if (c->fill_byte < 0 || (s->op != CK_SUM && s->op != CK_PROD) || p > 64) return 0;
    unsigned char fb[8];
    memset(fb, c->fill_byte, sizeof fb);
    uint64_t keep = 0;   /* the ranks whose inputs are in it */
    int k = 0, tie = 0;  /* tie: other ranks' inputs fit as well (products of +-2 and +-4) */
    if (s->dt == CK_I32 || s->dt == CK_I64) {
        const int wide = s->dt == CK_I64;
        int64_t f64v, g64v;
        int32_t f32v, g32v;
        memcpy(&f32v, fb, 4);
        memcpy(&f64v, fb, 8);
        memcpy(&g32v, c->got + i * c->es, 4);
        if (wide) memcpy(&g64v, c->got + i * c->es, 8);
        const uint64_t mask = wide ? ~0ull : 0xFFFFFFFFull, f = (uint64_t)(wide ? f64v : f32v) & mask;
        const uint64_t g = (uint64_t)(wide ? g64v : g32v) & mask;
        const uint64_t all = p == 64 ? ~0ull : (1ull << p) - 1;
        /* the sets of ranks whose inputs are in it: every one up to p = 12,
         * else none and every set of all ranks but one; the fewest copies of
         * the fill that make the value, with as many inputs as possible */
        const uint64_t ncand = p <= 12 ? all + 1 : (uint64_t)p + 1;
        for (uint64_t cand = 0; cand < ncand; cand++) {
            const uint64_t t = p <= 12 ? cand : cand == 0 ? 0 : all & ~(1ull << (cand - 1));
            const int nt = __builtin_popcountll(t);
            uint64_t acc = s->op == CK_SUM ? 0 : 1;
            for (int r = 0; r < p; r++)
                if (t >> r & 1) {
                    const uint64_t x = (uint64_t)cc_input(s, r, i);
                    acc = (s->op == CK_SUM ? acc + x : acc * x) & mask;
                }
            for (int kk = 1; kk <= (nt < p ? p - nt : 1); kk++) {   /* nt = p: the fill on top of the result */
                acc = (s->op == CK_SUM ? acc + f : acc * f) & mask;
                if (acc != g) continue;
                if (!k || kk < k || (kk == k && nt > __builtin_popcountll(keep))) { k = kk; keep = t; tie = 0; }
                else if (kk == k && nt == __builtin_popcountll(keep)) tie = 1;
                break;
            }
        }
    } else if (s->op == CK_SUM) {
        const double f = cc_load_double(fb, 0, s->dt), g = cc_load_double(c->got, i, s->dt);
        /* k copies summed round at each step: within k roundings of k */
        const double ratio = g / f, kr = nearbyint(ratio);
        const double ulp = s->dt == CK_F64 ? 0x1p-52 : s->dt == CK_F32 ? 0x1p-23 : 0x1p-7;
        if (f != 0 && ratio == ratio && kr >= 1 && kr <= p && fabs(ratio - kr) <= 2 * kr * ulp) k = (int)kr;
    }
    if (!k) return 0;
    const uint64_t lost = (p == 64 ? ~0ull : (1ull << p) - 1) & ~keep;
    if (b) {
        char copies[32];
        if (k == 1) snprintf(copies, sizeof copies, "one copy");
        else snprintf(copies, sizeof copies, "%d copies", k);
        say(b, ": it is the %s of %s of the byte 0x%02x recvbuf was filled with before the call",
            s->op == CK_SUM ? "sum" : "product", copies, c->fill_byte);
        if (tie) {
            say(b, " and the inputs of %d ranks", __builtin_popcountll(keep));
        } else if (keep && !lost) {
            say(b, " on top of every rank's input: a result reduced into recvbuf's fill where it should be copied");
        } else if (keep) {
            int rs[64], n = 0;
            for (int r = 0; r < p; r++) if (keep >> r & 1) rs[n++] = r;
            say(b, " and the inputs of ranks ");
            add_rank_set(b, rs, n);
            n = 0;
            for (int r = 0; r < p; r++) if (lost >> r & 1) rs[n++] = r;
            if (n == 1) say(b, ", %s rank %d's input", n == k ? "in place of" : "and without", rs[0]);
            else {
                say(b, ", %s ranks ", n == k ? "in place of the inputs of" : "and without the inputs of");
                add_rank_set(b, rs, n);
            }
        } else {
            say(b, ", no rank's input");
        }
        say(b, ": recvbuf read before it was written (out of place it holds no input: the input is in sendbuf)");
        if (!tie && __builtin_popcountll(lost) == 1) place(b, c, i, __builtin_ctzll(lost), -1);
    }
    *v = (verdict){K_FILL_READ, k, tie ? 0 : lost, !tie};
    return 1;
}

/* A sum divided by p: element i holds the expected sum EV over p, within the
 * rounding of the type (a division per contribution rounds differently from
 * one at the end), or in integer division. */
static int averaged(const ctx *c, size_t i, int64_t ev)
{
    const cc_scheme *s = &c->s;
    if (s->op != CK_SUM || s->p < 2 || ev == 0) return 0;
    if (s->dt == CK_I32 || s->dt == CK_I64) {
        int64_t gv;
        return cc_load_int(c->got, i, s->dt, &gv) && (gv == ev / s->p || gv == (ev - (s->p - 1)) / s->p);
    }
    const double x = cc_load_double(c->got, i, s->dt), want = (double)ev / s->p;
    const double tol = s->dt == CK_F64 ? 1e-12 : s->dt == CK_F32 ? 1e-5 : 2e-2;
    return x == x && fabs(x - want) <= tol * fabs(want);
}

/* A sum k times what it should be (2 <= k <= p): the whole result reduced
 * again k - 1 times (an all-reduce of results, a final pass too many). */
static int scaled(ck_sbuf *b, const ctx *c, size_t i, int64_t ev, verdict *v)
{
    int64_t gv, t;
    if (c->s.op != CK_SUM || ev == 0 || !cc_load_int(c->got, i, c->s.dt, &gv) || gv % ev) return 0;
    const int64_t k = gv / ev;
    if (k < 2 || k > c->s.p || __builtin_mul_overflow(ev, k, &t) || t != gv) return 0;
    say(b, ": it is %lld times the expected sum: the whole result reduced again (a pass too many over the result?)",
        (long long)k);
    *v = (verdict){K_SCALED, k, 0, 1};
    return 1;
}

static const char OVERWRITTEN[] = "(an input read after it was overwritten: in place, sendbuf is recvbuf)";

/* This rank's own input where the result belongs: out of place it was
 * copied in (and never reduced); in place the same bytes are also what a
 * recvbuf never written holds, which out of place reads as the fill. */
static void say_own(ck_sbuf *b, const ctx *c)
{
    say(b, ": it holds this rank's own input unchanged: no other rank's contribution is in it");
    if (c->fill_byte < 0)
        say(b, " (in place, where recvbuf holds the input: never written, or written with this rank's input where "
               "the reduced value belongs)");
    else say(b, " (out of place: this rank's input copied into recvbuf and never reduced)");
}

/* The verdict on wrong element i; with b, the facts about it in words. */
static void explain_element(ck_sbuf *b, ctx *c, size_t i, verdict *v)
{
    const cc_scheme *s = &c->s;
    *v = (verdict){K_UNEXPLAINED, 0, 0, 0};
    if (is_fill(c, i)) {
        say(b, ": never written (it still holds the byte 0x%02x recvbuf was filled with)", c->fill_byte);
        *v = (verdict){K_FILL, 0, 0, 1};
        return;
    }
    if (is_own(c, i) && s->kind != CC_PROD && s->kind != CC_MINMAX) {   /* min/max: explain_minmax names more */
        say_own(b, c);
        *v = (verdict){K_OWN, 0, 0, 1};
        return;
    }
    if (previous_call(b, c, i, v)) return;
    if (fill_read(b, c, i, v)) return;
    int64_t gv, ev = cc_reduce_value(s, i);
    if (s->op == CK_AVG) {
        unsigned char sum[8];
        cc_store(sum, 0, s->dt, ev);
        if (!memcmp(sum, c->got + i * c->es, c->es)) {
            say(b, ": it equals the sum: the division by p is missing");
            *v = (verdict){K_NODIV, 0, 0, 1};
        } else {
            say(b, " (avg is the exact sum divided once by p: run with --op sum for a finer diagnosis)");
        }
        return;
    }
    if (scaled(b, c, i, ev, v)) return;
    if (averaged(c, i, ev)) {
        /* Integer division of a sum of powers of two can land on one: then
         * the same value is also a partial sum, and one element cannot
         * tell (every element alike can: the summary). */
        int64_t g;
        const uint64_t set = s->kind == CC_MASK && cc_load_int(c->got, i, s->dt, &g) ? mask_ranks(c, i, g) : 0;
        say(b, ": it is the expected value / p (p = %d)", s->p);
        if (set) {
            int rs[64], n = 0;
            for (int r = 0; r < s->p; r++) if (set >> r & 1) rs[n++] = r;
            say(b, ", or with these inputs the sum of ranks ");
            if (b) add_rank_set(b, rs, n);
            say(b, " alone");
        } else say(b, ": an average where a sum was asked?");
        *v = (verdict){K_AVG, 0, 0, 1};
        return;
    }
    if (!cc_load_int(c->got, i, s->dt, &gv)) {
        say(b, ": not an integer, but every input is one: uninitialised or corrupted data");
        *v = (verdict){K_NOT_INT, 0, 0, 1};
        return;
    }
    if (zero_identity(b, c, i, gv, v)) return;
    /* The low 32 bits of the answer, sign- or zero-extended: what a 64-bit
     * reduction done in a 32-bit integer leaves behind. (Only the exact
     * extension counts: for min and max every rank's i64 input has the
     * answer's low 32 bits, and a wrong rank's input is a different bug.) */
    if (c->es == 8 && s->dt == CK_I64 && gv != ev && (gv == (int64_t)(int32_t)ev || gv == (int64_t)(uint32_t)ev)) {
        say(b, ": its low 32 bits are right, the bits above them are not: the 64-bit values were reduced in a "
               "32-bit type (an int accumulator?)");
        *v = (verdict){K_WIDTH, 0, 0, 1};
        return;
    }
    /* min, max: this rank's own input is always some op's result over the
     * inputs too; which rank's input was lost says more. */
    if (s->kind == CC_MINMAX && is_own(c, i)) {
        explain_minmax(b, c, i, gv, v);
        return;
    }
    static const ck_op others[] = {CK_SUM, CK_PROD, CK_MIN, CK_MAX};
    for (int k = 0; k < 4; k++) {
        int64_t alt;
        if (others[k] == s->op || !fold_as(s, others[k], i, &alt) || alt == ev || alt != gv) continue;
        /* Sums of powers of two: a product equal to a partial sum (2*2*4 =
         * 2+2+4 at p = 3) is a coincidence the rank bits explain better. */
        if (s->kind == CC_MASK && others[k] == CK_PROD) {
            verdict mv = {K_UNEXPLAINED, 0, 0, 0};
            explain_mask(NULL, c, i, gv, ev, &mv);
            if (mv.kind != K_UNEXPLAINED) continue;
        }
        /* A min or max is always one rank's input, and so is a product of
         * ones: a copy where the reduction belongs looks the same. */
        int q1 = -1, nq = 0;
        for (int q = 0; q < s->p; q++)
            if (cc_input(s, q, i) == gv) { q1 = q; nq++; }
        if (nq == 1 && s->kind == CC_MASK)   /* the fact first: which rank's input it is */
            say(b, ": it holds only rank %d's input, which with these inputs is also the %s over all ranks' inputs",
                q1, ck_op_name(others[k]));
        else say(b, ": it equals the %s over all ranks' inputs", ck_op_name(others[k]));
        if (nq == 1 && s->kind != CC_MASK) say(b, ", which is rank %d's input alone", q1);
        *v = (verdict){K_OTHER_OP, others[k], nq == 1 ? bit(q1) : 0, 1};
        return;
    }
    if (is_own(c, i) && s->kind != CC_MINMAX) {
        say_own(b, c);
        *v = (verdict){K_OWN, 0, 0, 1};
        return;
    }
    switch (s->kind) {
    case CC_MASK:   explain_mask(b, c, i, gv, ev, v); break;
    case CC_MINMAX: explain_minmax(b, c, i, gv, v); break;
    default:        explain_generic(b, c, i, gv, ev, v); break;
    }
}

/* A distance of m whole chunks (pipelined algorithms cut a block into chunks
 * of at most chunk_bytes, some one element shorter): m*ce - m .. m*ce. */
static int whole_chunks(const ctx *c, long long ad)
{
    const long long ce = c->cfg && c->es ? (long long)(c->cfg->chunk_bytes / c->es) : 0;
    if (ce < 2 || ad < ce - 1) return 0;
    const long long m = (ad + ce / 2) / ce;
    return m >= 1 && ad <= m * ce && ad >= m * ce - m;
}

static void add_chunk_hint(ck_sbuf *b, const ctx *c, const char *mostly)
{
    ck_sbuf_add(b, " (%swhole chunks of %zu B: a chunk received into a slot still being reduced, or a chunk index "
                   "off by one?)", mostly, c->cfg->chunk_bytes);
}

/* A shift of d elements, put in words. */
static void add_shift(ck_sbuf *b, const ctx *c, long long d)
{
    ck_sbuf_add(b, "data shifted by %lld", d);
    size_t off, len;
    ck_block(c->count, c->s.p, 0, &off, &len);
    long long ad = d < 0 ? -d : d;
    if (chunk_apart(c, d)) {
        ck_sbuf_add(b, " (%s: or, reading the same with these inputs, one rank's contribution taken from %lld elements "
                       "away, whole chunks of %zu B: a chunk received into a slot still being reduced: one receive "
                       "slot where two are needed?)", c->s.p == 2 ? "half a chunk at p = 2" : "a fraction of a chunk",
                    ad * c->s.p, c->cfg->chunk_bytes);
        return;
    }
    if (ad == 1) ck_sbuf_add(b, " (a block boundary off by one?)");
    else if (c->s.p > 1 && len > 1 && (ad == (long long)len || ad == (long long)len - 1))
        ck_sbuf_add(b, " (one whole block: a block index off by one?)");
    else if (whole_chunks(c, ad)) add_chunk_hint(b, c, "");
}

/* Ranks named by at least `need` of the n verdicts' sets, most-named first. */
static int ranks_named(const verdict *v, int n, int p, int need, int *out, int *counts)
{
    int cnt[64] = {0}, k = 0;
    for (int e = 0; e < n; e++)
        for (int r = 0; r < p && r < 64; r++) cnt[r] += (int)(v[e].ranks >> r & 1u);
    int top = 0;
    for (int r = 0; r < p && r < 64; r++) top = cnt[r] > top ? cnt[r] : top;
    if (top < need) return 0;
    for (int r = 0; r < p && r < 64; r++)
        if (cnt[r] == top) { out[k] = r; counts[k++] = cnt[r]; }
    return k;
}

/* Products: one rank's input in place of another's, judged over all the
 * examined elements at once. With inputs of +-2 and +-4 a single element
 * often fits several pairs (m, d), so no element names one; the pair that
 * fits most of them does. Returns how many elements the best pair fits (0
 * when two pairs tie), with the pair in *m and *d. */
static int replaced_pair(const ctx *c, const size_t *idx, int n, int *m_out, int *d_out)
{
    const cc_scheme *s = &c->s;
    if (s->kind != CC_PROD || s->p < 2 || s->p > 64) return 0;
    int64_t gv[CC_EXAMINE], ev[CC_EXAMINE];
    int k = 0;
    for (int e = 0; e < n && e < CC_EXAMINE; e++)
        if (cc_load_int(c->got, idx[e], s->dt, &gv[k])) { ev[k] = cc_reduce_value(s, idx[e]); k++; }
    int best = 0, tie = 0;
    for (int m = 0; m < s->p; m++)
        for (int d = 0; d < s->p; d++) {
            if (d == m) continue;
            int fits = 0;
            for (int e = 0; e < k; e++) fits += replaced_fits(s, idx[e], m, d, gv[e], ev[e]);
            if (fits > best) { best = fits; tie = 0; *m_out = m; *d_out = d; }
            else if (fits == best) tie = 1;
        }
    return tie ? 0 : best;
}

/* ------------------------------------------------------------ the summary
 * The verdicts of the examined wrong elements summed up in one clause: a
 * claim when the majority (and at least two) agree, the counts otherwise.
 * What the majority says depends on its kind: one small function per kind
 * (majority_line), each writing its clause and returning 1, or 0 when its
 * kind's parameter (which op, which distance) has no majority of its own. */

/* What every line of the summary reads. */
typedef struct {
    ck_sbuf       *b;
    const ctx     *c;
    const verdict *v;            /* the examined wrong elements' verdicts */
    int            n;            /* how many were examined */
    size_t         nwrong;       /* wrong elements in all */
    int            cnt[K_NKINDS];   /* verdicts of each kind */
    int            top, c_top;   /* the most frequent kind, and its count */
    char           of[96];       /* "C of N wrong elements examined" */
} tally;

/* The parameter (op, distance) most of the verdicts of kind `kind` share:
 * how many share it, with the value in *par. */
static int common_param(const tally *t, int kind, long long *par)
{
    int c_par = 0;
    *par = 0;
    for (int e = 0; e < t->n; e++) {
        if (t->v[e].kind != kind) continue;
        int same = 0;
        for (int f = 0; f < t->n; f++) same += t->v[f].kind == kind && t->v[f].param == t->v[e].param;
        if (same > c_par) { c_par = same; *par = t->v[e].param; }
    }
    return c_par;
}

static int is_majority(int count, int n) { return count >= 2 && 2 * count > n; }

static int say_other_op(const tally *t)
{
    long long par;
    const int c_par = common_param(t, K_OTHER_OP, &par), n = t->n;
    if (!is_majority(c_par, n)) return 0;
    ck_sbuf_add(t->b, "; the reduction looks like %s, not %s (%d of %d wrong elements examined equal the %s over the "
                      "inputs)", ck_op_name((ck_op)par), ck_op_name(t->c->s.op), c_par, n, ck_op_name((ck_op)par));
    set_claim("the reduction looks like %s", ck_op_name((ck_op)par));
    /* Every one of them one and the same rank's input: that rank's buffer
     * copied over the others' as well. */
    uint64_t one = 0;
    int all = 1;
    for (int e = 0; e < n && all; e++)
        if (t->v[e].kind == K_OTHER_OP && t->v[e].param == par) {
            if (!t->v[e].ranks || (one && t->v[e].ranks != one)) all = 0;
            one = t->v[e].ranks;
        }
    if (all && one)
        ck_sbuf_add(t->b, ", or rank %d's buffer was copied where a reduction belongs (each is rank %d's input alone)",
                    __builtin_ctzll(one), __builtin_ctzll(one));
    return 1;
}

static int say_shift(const tally *t)
{
    long long par;
    const int c_par = common_param(t, K_SHIFT, &par), n = t->n;
    if (is_majority(c_par, n)) {
        ck_sbuf_add(t->b, "; ");
        add_shift(t->b, t->c, par);
        set_claim("data shifted by %lld", par);
        ck_sbuf_add(t->b, " (%d of %d wrong elements examined hold the value of the element %lld away)", c_par, n, par);
        return 1;
    }
    ck_sbuf_add(t->b, "; %s hold other elements' values, at different distances", t->of);
    int nshift = 0, chunky = 0;   /* most of them whole chunks away */
    long long lo = 0, hi = 0;
    for (int e = 0; e < n; e++)
        if (t->v[e].kind == K_SHIFT) {
            const long long d = t->v[e].param;
            lo = nshift && lo < d ? lo : d;
            hi = nshift && hi > d ? hi : d;
            nshift++;
            chunky += whole_chunks(t->c, d < 0 ? -d : d);
        }
    /* Small distances of one sign: one element off at each step, the
     * offsets adding up as the shifted data is passed on. */
    if ((lo > 0 || hi < 0) && hi - lo < t->c->s.p && (hi < 0 ? -lo : hi) <= t->c->s.p) {
        ck_sbuf_add(t->b, " (%lld to %lld: data stored one element off, the offsets adding up as it is passed on: an "
                          "offset off by one in a loop over steps?)", lo, hi);
        set_claim("data shifted by a few elements, one more at each step");
        return 1;
    }
    if (2 * chunky > nshift) add_chunk_hint(t->b, t->c, "mostly ");
    return 1;
}

/* K_MISSING, K_DOUBLED without one rank that most of them name: which ranks,
 * how often (a rank counts where it is one of the candidates). */
static void add_rank_counts(const tally *t, const verdict *sub, int m)
{
    const int p = t->c->s.p;
    int cnt[64] = {0}, shown = 0;
    for (int e = 0; e < m; e++)
        for (int r = 0; r < p && r < 64; r++) cnt[r] += (int)(sub[e].ranks >> r & 1u);
    for (; shown < 4; shown++) {
        int best = -1;
        for (int r = 0; r < p && r < 64; r++)
            if (cnt[r] > 0 && (best < 0 || cnt[r] > cnt[best])) best = r;
        if (best < 0) break;
        ck_sbuf_add(t->b, "%srank %d in %d", shown ? ", " : "", best, cnt[best]);
        cnt[best] = 0;
    }
    int more = 0;
    for (int r = 0; r < p && r < 64; r++) more |= cnt[r] > 0;
    ck_sbuf_add(t->b, "%s)", more ? ", ..." : "");
}

/* K_MISSING, K_DOUBLED: the rank (or ranks) most of them lack or hold twice. */
static int say_rank_contribution(const tally *t)
{
    const int top = t->top, n = t->n;
    verdict sub[CC_EXAMINE];
    int m = 0;
    for (int e = 0; e < n; e++)
        if (t->v[e].kind == top) sub[m++] = t->v[e];
    int rs[64], rc[64], exact = 1;
    for (int e = 0; e < m; e++) exact &= sub[e].exact;
    const int k = ranks_named(sub, m, t->c->s.p, 2, rs, rc);
    /* Exact sets: most elements lack that rank. Candidate sets (one of
     * several ranks could be missing, prod and large-p sums): a rank that is
     * only a candidate must be one in nearly all of them. */
    if (k > 0 && k <= 8 && (exact ? 2 * rc[0] > n : rc[0] >= n - n / 8)) {
        ck_sbuf_add(t->b, "; %d of %d wrong elements examined %s ", rc[0], n,
                    top == K_MISSING ? "lack the contribution of" : "hold twice the contribution of");
        if (k == 1) ck_sbuf_add(t->b, "rank %d", rs[0]);
        else { ck_sbuf_add(t->b, "ranks "); add_rank_set(t->b, rs, k); }
        if (k == 1) set_claim("%s rank %d's contribution", top == K_MISSING ? "lacking" : "holding twice", rs[0]);
        return 1;
    }
    ck_sbuf_add(t->b, "; %s are %s, but not the same rank's in most of them (", t->of, kind_names[top]);
    add_rank_counts(t, sub, m);
    return 1;
}

/* K_REPLACED: the pair most of them show, rank `param` in place of the one
 * rank in `ranks`. */
static int say_replaced(const tally *t)
{
    const int n = t->n;
    int best = 0, bm = -1;
    long long bd = -1;
    for (int e = 0; e < n; e++) {
        const verdict *ve = &t->v[e];
        if (ve->kind != K_REPLACED) continue;
        int same = 0;
        for (int f = 0; f < n; f++)
            same += t->v[f].kind == K_REPLACED && t->v[f].param == ve->param && t->v[f].ranks == ve->ranks;
        if (same > best) { best = same; bd = ve->param; bm = __builtin_ctzll(ve->ranks); }
    }
    if (is_majority(best, n))
        ck_sbuf_add(t->b, "; %d of %d wrong elements examined hold rank %lld's input in place of rank %d's %s", best, n,
                    bd, bm, OVERWRITTEN);
    else ck_sbuf_add(t->b, "; %s hold one rank's input in place of another's, not the same pair in most of them", t->of);
    return 1;
}

static int say_prev(const tally *t)
{
    if (t->c->prev_case) {
        ck_sbuf_add(t->b, "; %s hold the previous case's result: state carried from one case into the next (a result, "
                          "buffer or request kept from one call to the next)", t->of);
        set_claim("the previous case's result: state carried between cases");
    } else
        ck_sbuf_add(t->b, "; %s hold the previous call's result: state kept between calls (a result, buffer or "
                          "request kept from one call to the next)", t->of);
    return 1;
}

static int say_prev_op(const tally *t)
{
    const ctx *c = t->c;
    ck_sbuf_add(t->b, "; %s hold %s %s this call's: an accumulator kept between %s and never reset", t->of,
                c->prev_case ? "the previous case's last result" : "the previous call's result",
                c->s.op == CK_SUM || c->s.op == CK_PROD ? op_word(c->s.op) : "combined with",
                c->prev_case ? "cases" : "calls");
    if (c->prev_case) set_claim("the previous case's result combined with this one's: state carried between cases");
    return 1;
}

static int say_fill_read(const tally *t)
{
    ck_sbuf_add(t->b, "; %s hold the fill recvbuf was handed with, reduced as if it were an input: recvbuf read before "
                      "it was written (out of place the input is in sendbuf)", t->of);
    return 1;
}

static int say_width(const tally *t)
{
    ck_sbuf_add(t->b, "; %s are right in their low 32 bits only: the 64-bit integers were reduced in a 32-bit type",
                t->of);
    return 1;
}

static int say_avg(const tally *t)
{
    if (t->c_top == t->n && t->nwrong == t->c->count)
        ck_sbuf_add(t->b, "; every element is the expected value / p: an average where a sum was asked?");
    else ck_sbuf_add(t->b, "; %s are the expected value / p: an average where a sum was asked?", t->of);
    return 1;
}

static int say_kind(const tally *t);

/* K_OWN: this rank's input where the result belongs; for min and max the
 * rank whose input the result should have been (in `ranks`): one and the
 * same in all of them is that rank's contribution missing. */
static int say_own_line(const tally *t)
{
    uint64_t one = 0;
    int same = 1;
    for (int e = 0; e < t->n; e++)
        if (t->v[e].kind == K_OWN) {
            if (!t->v[e].ranks || (one && t->v[e].ranks != one)) same = 0;
            one = t->v[e].ranks;
        }
    if (same && one && t->c_top >= 3) {
        const int w = __builtin_ctzll(one);
        ck_sbuf_add(t->b, "; %s are this rank's own input where the %s is rank %d's: rank %d's contribution is missing",
                    t->of, ck_op_name(t->c->s.op), w, w);
        set_claim("lacking rank %d's contribution", w);
        return 1;
    }
    return say_kind(t);
}

static int say_self(const tally *t)
{
    ck_sbuf_add(t->b, "; %s are partial sums doubled: data reduced with itself (a receive into the buffer it is then "
                      "reduced with: in place, recvbuf over this rank's input?)", t->of);
    return 1;
}

static int say_zero_id(const tally *t)
{
    ck_sbuf_add(t->b, "; %s are 0, which is no rank's input there: 0 is not the identity of %s", t->of,
                ck_op_name(t->c->s.op));
    return 1;
}

/* Any other kind: the count and the kind's name. */
static int say_kind(const tally *t)
{
    ck_sbuf_add(t->b, "; %s are %s", t->of, kind_names[t->top]);
    return 1;
}

static int (*const majority_line[K_NKINDS])(const tally *t) = {
    [K_OTHER_OP] = say_other_op, [K_SHIFT] = say_shift,       [K_MISSING] = say_rank_contribution,
    [K_DOUBLED] = say_rank_contribution, [K_REPLACED] = say_replaced, [K_PREV] = say_prev,
    [K_PREV_OP] = say_prev_op,   [K_FILL_READ] = say_fill_read, [K_WIDTH] = say_width,
    [K_AVG] = say_avg,           [K_ZERO_ID] = say_zero_id,   [K_SELF] = say_self, [K_OWN] = say_own_line,
};

/* Products: a pair (m, d) that fits most elements beats a majority that
 * says nothing precise (ambiguous single elements, a sign). */
static int say_replaced_pair(const tally *t, const size_t *idx)
{
    int rm = 0, rd = 0;
    const int fit = replaced_pair(t->c, idx, t->n, &rm, &rd), n = t->n, top = t->top;
    if (!(fit >= 2 && 2 * fit > n &&
          (2 * t->c_top <= n || top == K_UNEXPLAINED || top == K_SIGN || (top == K_REPLACED && fit > t->c_top))))
        return 0;
    ck_sbuf_add(t->b, "; %d of %d wrong elements examined fit rank %d's input in place of rank %d's %s", fit, n, rd, rm,
                OVERWRITTEN);
    set_claim("rank %d's input in place of rank %d's", rd, rm);
    return 1;
}

/* Sums (rank bits): no one kind is the majority, but this rank's input
 * alone, another single rank's (which reads as max or min too) and sums
 * lacking some ranks are one finding: partial sums, some contributions never
 * added (a step skipped, a piece never sent on). */
static int say_partial(const tally *t)
{
    if (t->c->s.kind != CC_MASK) return 0;
    int partial = 0;
    for (int e = 0; e < t->n; e++) {
        const verdict *v = &t->v[e];
        partial += v->kind == K_OWN || (v->kind == K_MISSING && v->param == 0) || (v->kind == K_OTHER_OP && v->ranks);
    }
    if (!is_majority(partial, t->n)) return 0;
    ck_sbuf_add(t->b, "; %d of %d wrong elements examined are partial sums (this rank's input alone, another single "
                      "rank's, or a sum lacking some ranks): contributions never added (a step skipped, a piece never "
                      "sent on)", partial, t->n);
    set_claim("partial sums: some ranks' contributions never added");
    return 1;
}

/* No majority: what the wrong elements show, most frequent first. */
static void say_no_majority(tally *t)
{
    set_claim("no single explanation");
    ck_sbuf_add(t->b, "; no single explanation fits most wrong elements: of %d examined,", t->n);
    int shown = 0;
    for (int round = 0; round < 4; round++) {
        int best = -1;
        for (int k = 0; k < K_NKINDS; k++)
            if (t->cnt[k] > 0 && (best < 0 || t->cnt[k] > t->cnt[best])) best = k;
        if (best < 0) break;
        ck_sbuf_add(t->b, "%s %d %s", shown++ ? "," : "", t->cnt[best], kind_names[best]);
        t->cnt[best] = 0;
    }
    int rest = 0;
    for (int k = 0; k < K_NKINDS; k++) rest += t->cnt[k];
    if (rest) ck_sbuf_add(t->b, ", %d other", rest);
}

/* One element alone names no pattern: said for the kinds that would claim one. */
static void say_too_few(ck_sbuf *b, const verdict *first)
{
    static const int claims[] = {K_PREV, K_PREV_OP, K_OTHER_OP, K_SHIFT, K_ZERO_ID, K_NODIV, K_AVG};
    for (size_t k = 0; k < sizeof claims / sizeof claims[0]; k++)
        if (first->kind == claims[k]) {
            ck_sbuf_add(b, "; only this element is wrong: too few to say what the algorithm does");
            return;
        }
}

/* The verdicts of the examined wrong elements (idx: which), summed up. */
static void summarise(ck_sbuf *b, const ctx *c, const verdict *v, const size_t *idx, int n, size_t nwrong,
                      const verdict *first)
{
    if (first->kind == K_OTHER_OP) set_claim("equals the %s", ck_op_name((ck_op)first->param));
    else set_claim("%s", kind_names[first->kind]);
    if (n < 2) {
        say_too_few(b, first);
        return;
    }
    tally t = {.b = b, .c = c, .v = v, .n = n, .nwrong = nwrong};
    for (int e = 0; e < n; e++) t.cnt[v[e].kind]++;
    for (int k = 1; k < K_NKINDS; k++)
        if (t.cnt[k] > t.cnt[t.top]) t.top = k;
    t.c_top = t.cnt[t.top];
    if (say_replaced_pair(&t, idx)) return;
    snprintf(t.of, sizeof t.of, "%d of %d wrong elements examined", t.c_top, n);
    if (is_majority(t.c_top, n)) {
        set_claim("%s", kind_names[t.top]);
        if ((majority_line[t.top] ? majority_line[t.top] : say_kind)(&t)) return;
    }
    if (say_partial(&t)) return;
    say_no_majority(&t);
}

static int is_wrong(const ctx *c, size_t i);

/* Every block wrong in whole but one: the rank holds one finished block
 * (what a reduce-scatter leaves) and nothing of the others' — the
 * all-gather's results never stored, or never run. */
static void say_one_block_right(ck_sbuf *b, ctx *c)
{
    const int p = c->s.p;
    int right = -1, nright = 0, seen = 0, unsent = 0;
    for (int blk = 0; blk < p && p >= 3; blk++) {
        size_t off, len, nw = 0;
        ck_block(c->count, p, blk, &off, &len);
        if (!len) return;
        for (size_t i = off; i < off + len; i++) nw += is_wrong(c, i);
        if (!nw) { right = blk; nright++; }
        else if (nw < len) return;
        /* what the wrong blocks hold: nothing received (the fill, the own
         * input, a partial sum), not something stored wrong (shifted, reduced) */
        for (size_t i = off; nw && i < off + len && seen < CC_EXAMINE; i += len / 8 + 1, seen++) {
            verdict v;
            explain_element(NULL, c, i, &v);
            unsent += v.kind == K_FILL || v.kind == K_OWN || (v.kind == K_MISSING && v.param == 0) ||
                      (v.kind == K_OTHER_OP && v.ranks);
        }
    }
    if (nright != 1 || 4 * unsent < 3 * seen) return;
    ck_sbuf_add(b, "; only block %d is right, every other block wholly wrong: one finished block and none of the "
                   "others' (the all-gather's blocks never stored, or the all-gather never run?)", right);
    set_claim("only one block right: the all-gather's blocks never stored?");
}

/* One word on each wrong block of the ck_block partition. */
static void explain_blocks(ck_sbuf *b, ctx *c)
{
    const int p = c->s.p;
    int shown = 0;
    for (int blk = 0; blk < p; blk++) {
        size_t off, len, nw = 0, nfill = 0, nown = 0;
        ck_block(c->count, p, blk, &off, &len);
        for (size_t i = off; i < off + len; i++)
            if (memcmp(c->got + i * c->es, c->exp + i * c->es, c->es)) {
                nw++;
                nfill += is_fill(c, i);
                nown += is_own(c, i);
            }
        if (!nw) continue;
        if (shown == 8) { ck_sbuf_add(b, ", ..."); break; }
        ck_sbuf_add(b, shown ? ", " : "; wrong blocks on this rank: ");
        shown++;
        ck_sbuf_add(b, "%d [%zu..%zu] ", blk, off, off + len - 1);
        if (nfill == len) { ck_sbuf_add(b, "never written"); continue; }
        if (nown == len) { ck_sbuf_add(b, "own input unchanged"); continue; }
        int other = -1;
        for (int b2 = 0; b2 < p && other < 0; b2++) {
            size_t off2, len2;
            ck_block(c->count, p, b2, &off2, &len2);
            if (b2 != blk && len2 == len && !memcmp(c->got + off * c->es, c->exp + off2 * c->es, len * c->es))
                other = b2;
        }
        if (other >= 0) { ck_sbuf_add(b, "holds block %d's result (block index off?)", other); continue; }
        ck_sbuf_add(b, "%zu/%zu wrong", nw, len);
        /* The wrong elements of one block often lack the same ranks (a step
         * of the schedule): the ranks every examined one can lack. */
        uint64_t common = ~0ull;
        int kind = -1, exact = 1;
        const size_t m = nw < CC_EXAMINE ? nw : CC_EXAMINE;
        size_t seen = 0, taken = 0;
        for (size_t i = off; i < off + len && kind != K_UNEXPLAINED && taken < m; i++) {
            if (!memcmp(c->got + i * c->es, c->exp + i * c->es, c->es)) continue;
            if (seen++ != taken * nw / m) continue;   /* up to CC_EXAMINE, spread over the block */
            taken++;
            verdict v;
            explain_element(NULL, c, i, &v);
            if ((v.kind != K_MISSING && v.kind != K_DOUBLED) || (kind >= 0 && v.kind != kind)) kind = K_UNEXPLAINED;
            else { kind = v.kind; common &= v.ranks; exact &= v.exact; }
        }
        if (kind == K_MISSING || kind == K_DOUBLED) {
            int rs[64], k = 0;
            for (int r = 0; r < p && r < 64; r++)
                if (common >> r & 1u) rs[k++] = r;
            const char *what = kind == K_MISSING ? "lack" : "hold twice";
            if (k == 1) ck_sbuf_add(b, ", all %s rank %d's contribution", what, rs[0]);
            else if (k > 1 && k < p && exact) {
                ck_sbuf_add(b, ", all %s the contributions of ranks ", what);
                add_rank_set(b, rs, k);
            }
        }
    }
}

size_t cc_diagnose_salted(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                          size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                          const ck_config *cfg, unsigned salt)
{
    return cc_diagnose_run(out, cap, host_got, own_input, fill_byte, count, dt, op, rank, p, algo, cfg, salt, NULL);
}

/* The call's context: its encoding, and the previous call's (or, on a
 * case's first call, the previous case's: the state a case leaves behind is
 * the same mistake as the state a call leaves behind). */
static void set_context(ctx *c, ck_dtype dt, ck_op op, int p, unsigned salt, const cc_prev_call *before)
{
    memset(c, 0, sizeof *c);
    c->s = cc_scheme_salted(dt, op, p, salt);
    c->has_prev = salt > 0;
    if (c->has_prev) c->prev = cc_scheme_salted(dt, op, p, salt - 1);
    else if (before && before->valid && before->dt == dt && before->count > 0) {
        c->has_prev = c->prev_case = 1;
        c->prev = cc_scheme_salted(dt, before->op, p, before->salt);
        c->prev_count = before->count;
    }
    c->es = ck_dtype_size(dt);
}

/* Right results are the common case: compare in slices, and build the
 * whole expected buffer only for a wrong one. */
static int all_right(const ctx *c)
{
    enum { SLICE = 4096 };
    unsigned char part[SLICE * 8];
    cc_scheme s = c->s;
    int right = 1;
    for (size_t i0 = 0; i0 < c->count && right; i0 += SLICE) {
        size_t n = c->count - i0 < SLICE ? c->count - i0 : SLICE;
        s.off = c->s.off + i0;   /* element i0 + k of the call is element k of this view */
        cc_expected_view(&s, part, n);
        right = !memcmp(part, c->got + i0 * c->es, n * c->es);
    }
    return right;
}

/* ------------------------------------------------------------ where
 * Where the wrong elements lie, when that is regular: an index bug shows as
 * a shape (the last element of every block, every p-th element, the tail
 * past the largest multiple of p) long before the values say anything. */
static int is_wrong(const ctx *c, size_t i) { return memcmp(c->exp + i * c->es, c->got + i * c->es, c->es) != 0; }

/* Every block's wrong elements are its last (from_end) or first k, k the
 * same in every block that has any, and at least two blocks have some:
 * returns k (0: no such shape); *all: every non-empty block has them. */
static size_t block_edge(const ctx *c, int from_end, int *all, int *kvar)
{
    const int p = c->s.p;
    size_t k = 0, kmin = (size_t)-1;
    int blocks = 0, nonempty = 0;
    *kvar = 0;
    for (int blk = 0; blk < p; blk++) {
        size_t off, len, w = 0;
        ck_block(c->count, p, blk, &off, &len);
        nonempty += len > 0;
        for (size_t t = 0; t < len && is_wrong(c, from_end ? off + len - 1 - t : off + t); t++) w++;
        for (size_t t = w; t < len; t++)
            if (is_wrong(c, from_end ? off + len - 1 - t : off + t)) return 0;   /* not one run at the edge */
        if (!w) continue;
        if (w == len && len > 1) return 0;   /* a whole block: explain_blocks names it */
        if (k && w != k) *kvar = 1;
        k = w > k ? w : k;
        kmin = w < kmin ? w : kmin;
        blocks++;
    }
    *all = blocks == nonempty;
    return blocks >= 2 ? (*kvar ? kmin : k) : 0;
}

/* The shape of the wrong elements in words, into b and the claim's tail. */
static void explain_where(ck_sbuf *b, const ctx *c, size_t nwrong)
{
    const int p = c->s.p;
    const size_t n = c->count;
    char shape[96] = "";
    if (nwrong == n || p < 2) return;
    size_t tail = n - n % (size_t)p, first = n;
    for (size_t i = 0; i < n && first == n; i++)
        if (is_wrong(c, i)) first = i;
    if (n % (size_t)p && tail > 0 && first == tail && nwrong == n - tail) {
        snprintf(shape, sizeof shape, "the tail beyond the largest multiple of p");
        ck_sbuf_add(b, "; the wrong elements are exactly the tail beyond the largest multiple of p (elements %zu..%zu: "
                       "blocks of count/p, the remainder never handled?)", tail, n - 1);
    }
    for (int end = 1; end >= 0 && !shape[0]; end--) {
        int all, kvar;
        const size_t k = block_edge(c, end, &all, &kvar);
        if (!k) continue;
        const char *which = end ? "last" : "first";
        /* the claim's words stay the same whatever the count (the pattern
         * line compares them); the case's line says how many */
        if (k == 1 && !kvar) snprintf(shape, sizeof shape, "the %s element of %s block", which, all ? "every" : "some");
        else snprintf(shape, sizeof shape, "a run at the %s of %s block", end ? "end" : "start", all ? "every" : "some");
        ck_sbuf_add(b, "; the wrong elements are exactly ");
        if (k == 1 && !kvar) ck_sbuf_add(b, "%s", shape);
        else ck_sbuf_add(b, "the %s %zu%s elements of %s block", which, k, kvar ? " or more" : "", all ? "every" : "some");
        ck_sbuf_add(b, " (of the ck_block partition: a block's %s bound off%s?)", end ? "end" : "start",
                    k > 1 || kvar ? ", a block cut short, or its last partial piece dropped" : " by one");
    }
    /* Every k-th element (all of them, or for min and max, where a rank's
     * own input is right by chance, at least half of them and four). */
    for (size_t m = 2; m <= 16 && !shape[0] && 2 * m <= n && nwrong >= 2; m++) {
        const size_t k = first % m, cls = (n - k + m - 1) / m;
        int inside = 1;
        for (size_t i = 0; i < n && inside; i++) inside = i % m == k || !is_wrong(c, i);
        if (!inside || (nwrong < cls && (nwrong < 4 || 2 * nwrong < cls))) continue;
        snprintf(shape, sizeof shape, "elements with index = %zu mod %zu", k, m);
        ck_sbuf_add(b, "; the wrong elements are %s with index = %zu mod %zu%s", nwrong == cls ? "exactly every element"
                    : "elements (most, not all)", k, m, m == (size_t)p ? " (mod p: a stride, or a loop over ranks where "
                    "a loop over elements belongs?)" : "");
    }
    if (!shape[0] && nwrong == 1) snprintf(shape, sizeof shape, "one element");   /* "1 of n elements wrong" says it */
    const size_t len = strlen(claim);
    if (shape[0] && len && len + strlen(shape) + 5 < sizeof claim)
        snprintf(claim + len, sizeof claim - len, ", at %.*s", (int)(sizeof claim - len - 5), shape);
}

/* The wrong result explained: its first wrong element, the summary of up
 * to CC_EXAMINE of them (spread evenly over all), and the blocks. */
static void explain_wrong(ck_sbuf *b, ctx *c, size_t first, size_t nwrong)
{
    const int p = c->s.p;
    char e[64], g[64];
    cc_format(e, sizeof e, c->exp, first, c->s.dt);
    cc_format(g, sizeof g, c->got, first, c->s.dt);
    ck_sbuf_add(b, "rank %d: %zu of %zu elements wrong; first: element %zu: expected %s, got %s", c->rank, nwrong,
                c->count, first, e, g);
    verdict v1, vs[CC_EXAMINE];
    size_t idx[CC_EXAMINE];
    explain_element(b, c, first, &v1);
    const int n = nwrong < CC_EXAMINE ? (int)nwrong : CC_EXAMINE;
    size_t seen = 0;
    int taken = 0;
    for (size_t i = 0; i < c->count && taken < n; i++) {
        if (!memcmp(c->exp + i * c->es, c->got + i * c->es, c->es)) continue;
        if (seen++ == (size_t)taken * nwrong / (size_t)n) { idx[taken] = i; explain_element(NULL, c, i, &vs[taken++]); }
    }
    summarise(b, c, vs, idx, taken, nwrong, &v1);
    explain_where(b, c, nwrong);
    if (p > 1) {
        size_t off, len;
        int blk = block_of(c->count, p, first, &off, &len);
        ck_sbuf_add(b, "; element %zu is in block %d of %d (elements %zu..%zu)", first, blk, p, off, off + len - 1);
        place(b, c, first, -1, -1);
        explain_blocks(b, c);
        say_one_block_right(b, c);
    }
}

size_t cc_diagnose_run(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                       size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                       const ck_config *cfg, unsigned salt, const cc_prev_call *before)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    claim[0] = 0;
    ctx c;
    set_context(&c, dt, op, p, salt, before);
    c.count = count;
    c.got = host_got;
    c.own = own_input;
    c.fill_byte = fill_byte;
    c.rank = rank;
    c.algo = algo;
    c.cfg = cfg;
    if (!c.es || !count || all_right(&c)) return count;
    unsigned char *exp = malloc(count * c.es);
    if (!exp) {
        size_t w = cc_count_wrong_salted(host_got, count, dt, op, p, salt);
        if (w) ck_sbuf_add(&b, "rank %d: %zu of %zu elements wrong", rank, w, count);
        return w ? 0 : count;
    }
    cc_expected_salted(exp, count, dt, op, p, salt);
    c.exp = exp;
    size_t first = count, nwrong = 0;
    for (size_t i = 0; i < count; i++)
        if (memcmp(exp + i * c.es, c.got + i * c.es, c.es)) {
            if (first == count) first = i;
            nwrong++;
        }
    if (nwrong) explain_wrong(&b, &c, first, nwrong);
    free(exp);
    return first;
}

size_t cc_diagnose(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                   size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                   const ck_config *cfg)
{
    return cc_diagnose_salted(out, cap, host_got, own_input, fill_byte, count, dt, op, rank, p, algo, cfg, 0);
}
