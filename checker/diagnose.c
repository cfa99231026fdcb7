/*
 * diagnose.c — turn a wrong all-reduce result into a sentence a student can act
 * on. The inputs (inputs.c) are built so that a wrong value can be decoded:
 * for sum, the low p bits say which ranks' inputs it holds and the high bits
 * which element; for min/max the value names the rank and element it came
 * from. On top of the first wrong element, every block of the ck_block
 * partition is classified (right, never written, another block's result...),
 * because most all-reduce bugs are block bugs. Where the decoded value names
 * a rank (a missing or doubled contribution), the algorithm's own diagnose
 * hook (ck_algo.diagnose) says where in ITS schedule that rank's data meets
 * the element: the checker itself knows no algorithm.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encoding.h"
#include "collkit_util.h"

static void add_rank_set(ck_sbuf *b, const int *ranks, int n)
{
    ck_sbuf_add(b, "{");
    for (int k = 0; k < n; k++) ck_sbuf_add(b, k ? ",%d" : "%d", ranks[k]);
    ck_sbuf_add(b, "}");
}

typedef struct {
    cc_scheme s;
    size_t es, count;
    const unsigned char *got, *exp, *own;
    int fill_byte, rank;
    const ck_algo *algo;
    const ck_config *cfg;
    int placed;      /* the algorithm's hook has already placed the fault */
} ctx;

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

static int is_fill(ctx *c, size_t i)
{
    if (c->fill_byte < 0) return 0;
    for (size_t k = 0; k < c->es; k++)
        if (c->got[i * c->es + k] != (unsigned char)c->fill_byte) return 0;
    return 1;
}

static int is_own(ctx *c, size_t i)
{
    return c->own && c->s.p > 1 && !memcmp(c->got + i * c->es, c->own + i * c->es, c->es);
}

/* Ask the algorithm where element i meets rank `missing` (or, with -1 for
 * both, where this rank gets element i's result), and append its answer. */
static void place(ck_sbuf *b, ctx *c, size_t i, int missing, int doubled)
{
    if (c->placed || !c->algo || !c->algo->diagnose) return;
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

/* A shift of d elements, put in words. */
static void add_shift(ck_sbuf *b, ctx *c, long long d)
{
    ck_sbuf_add(b, "data shifted by %lld", d);
    size_t off, len;
    ck_block(c->count, c->s.p, 0, &off, &len);
    long long ad = d < 0 ? -d : d;
    if (ad == 1) ck_sbuf_add(b, " (a block boundary off by one?)");
    else if (c->s.p > 1 && len > 1 && (ad == (long long)len || ad == (long long)len - 1))
        ck_sbuf_add(b, " (one whole block: a block index off by one?)");
}

static void explain_mask(ck_sbuf *b, ctx *c, size_t i, int64_t gv, int64_t ev)
{
    const int p = c->s.p;
    const int64_t E = (int64_t)1 << c->s.ebits, full = ((int64_t)1 << p) - 1;
    if (gv > 0) {
        int64_t low = gv & full, high = gv >> p;
        int n = __builtin_popcountll((unsigned long long)low);
        if (n > 0 && high % n == 0 && high / n < E) {
            long long d = (long long)(high / n) - (long long)(i & (size_t)(E - 1));
            if (d > E / 2) d -= E;
            if (d <= -E / 2) d += E;
            int has[64], miss[64], nh = 0, nm = 0;
            for (int r = 0; r < p; r++) {
                if (low >> r & 1) has[nh++] = r;
                else miss[nm++] = r;
            }
            if (low == full && d != 0) {
                ck_sbuf_add(b, ": it is the complete sum of element %lld (%+lld): ", (long long)i + d, d);
                add_shift(b, c, d);
                return;
            }
            if (nh == 1) ck_sbuf_add(b, ": it holds only rank %d's input", has[0]);
            else { ck_sbuf_add(b, ": it holds the sum of ranks "); add_rank_set(b, has, nh); }
            if (d != 0) ck_sbuf_add(b, " of element %lld (%+lld, data shifted)", (long long)i + d, d);
            if (nm == 1) ck_sbuf_add(b, ": rank %d's contribution is missing", miss[0]);
            else { ck_sbuf_add(b, ": the contributions of ranks "); add_rank_set(b, miss, nm); ck_sbuf_add(b, " are missing"); }
            if (d == 0) place(b, c, i, miss[0], -1);
            return;
        }
    }
    for (int q = 0; q < p; q++)
        if (gv - ev == cc_input(&c->s, q, i)) {
            ck_sbuf_add(b, ": it is the full sum plus rank %d's input again: rank %d's contribution is counted twice", q, q);
            place(b, c, i, -1, q);
            return;
        }
    ck_sbuf_add(b, ": it is not a sum of distinct ranks' inputs of one element (a contribution counted twice, "
           "or pieces of different elements mixed)");
}

static void explain_minmax(ck_sbuf *b, ctx *c, size_t i, int64_t gv)
{
    const cc_scheme *s = &c->s;
    int64_t u = gv + s->Z;
    if (u < 0 || u >= s->M * s->K) {
        ck_sbuf_add(b, ": it is outside the range of the inputs (garbage?)");
        return;
    }
    int64_t k = u / s->K, e = u % s->K, ei = (int64_t)(i % (size_t)s->K);
    if (e != ei) {
        long long d = (long long)(e - ei);
        if (d > s->K / 2) d -= s->K;
        if (d <= -s->K / 2) d += s->K;
        ck_sbuf_add(b, ": it is an input of element %lld (%+lld): ", (long long)i + d, d);
        add_shift(b, c, d);
        return;
    }
    if (s->M == s->p) {
        int q = (int)(((k - (int64_t)(i % (size_t)s->M)) % s->M + s->M) % s->M);
        int want = s->op == CK_MIN ? (int)((s->M - (int64_t)(i % (size_t)s->M)) % s->M)
                                   : (int)((2 * s->M - 1 - (int64_t)(i % (size_t)s->M)) % s->M);
        ck_sbuf_add(b, ": it is rank %d's input for this element, but the %s is rank %d's: "
               "rank %d's contribution is missing", q, ck_op_name(s->op), want, want);
        place(b, c, i, want, -1);
    } else {
        ck_sbuf_add(b, ": it is one rank's input for this element, not the %s over all ranks", ck_op_name(s->op));
    }
}

/* Sums at large p (CC_MOD) and products: try one rank missing or doubled. */
static void explain_generic(ck_sbuf *b, ctx *c, size_t i, int64_t gv, int64_t ev)
{
    const cc_scheme *s = &c->s;
    int miss[64], twice[64], nm = 0, nt = 0;
    for (int q = 0; q < s->p && (nm < 64 && nt < 64); q++) {
        int64_t v = cc_input(s, q, i);
        if (s->kind == CC_PROD) {
            if (v != 0 && ev / v == gv) miss[nm++] = q;
            if (ev * v == gv) twice[nt++] = q;
        } else {
            if (v != 0 && ev - v == gv) miss[nm++] = q;
            if (v != 0 && ev + v == gv) twice[nt++] = q;
        }
    }
    if (nm) {
        ck_sbuf_add(b, ": it equals the result without rank %s", nm == 1 ? "" : "(one of) ");
        add_rank_set(b, miss, nm);
        ck_sbuf_add(b, "'s input: a contribution is missing");
        if (nm == 1) place(b, c, i, miss[0], -1);
        return;
    }
    if (nt) {
        ck_sbuf_add(b, ": it equals the result with the input of rank %s", nt == 1 ? "" : "(one of) ");
        add_rank_set(b, twice, nt);
        ck_sbuf_add(b, " counted twice");
        if (nt == 1) place(b, c, i, -1, twice[0]);
        return;
    }
    if (s->kind == CC_PROD && gv == -ev) {
        ck_sbuf_add(b, ": right magnitude, wrong sign: a contribution is missing or counted twice");
        return;
    }
    if (s->kind != CC_PROD && c->exp) {
        /* The nearest element whose correct result this is. */
        size_t w = c->count < 4096 ? c->count : 4096;
        for (size_t d = 1; d <= w; d++) {
            if (i + d < c->count && !memcmp(c->got + i * c->es, c->exp + (i + d) * c->es, c->es)) {
                ck_sbuf_add(b, ": it is the correct result of element %zu (+%zu): ", i + d, d);
                add_shift(b, c, (long long)d);
                return;
            }
            if (d <= i && !memcmp(c->got + i * c->es, c->exp + (i - d) * c->es, c->es)) {
                ck_sbuf_add(b, ": it is the correct result of element %zu (-%zu): ", i - d, d);
                add_shift(b, c, -(long long)d);
                return;
            }
        }
    }
    ck_sbuf_add(b, ": no simple explanation (not the result with one rank missing or doubled)");
}

static void explain_element(ck_sbuf *b, ctx *c, size_t i)
{
    const cc_scheme *s = &c->s;
    if (is_fill(c, i)) {
        ck_sbuf_add(b, ": never written (it still holds the byte 0x%02x recvbuf was filled with)", c->fill_byte);
        return;
    }
    if (is_own(c, i) && s->kind != CC_PROD) {
        ck_sbuf_add(b, ": it holds this rank's own input unchanged (never reduced or received)");
        return;
    }
    int64_t gv, ev = cc_reduce_value(s, i);
    if (s->op == CK_AVG) {
        unsigned char sum[8];
        cc_store(sum, 0, s->dt, ev);
        if (!memcmp(sum, c->got + i * c->es, c->es))
            ck_sbuf_add(b, ": it equals the sum: the division by p is missing");
        else
            ck_sbuf_add(b, " (avg is the exact sum divided once by p: run with --op sum for a finer diagnosis)");
        return;
    }
    if (!cc_load_int(c->got, i, s->dt, &gv)) {
        ck_sbuf_add(b, ": not an integer, but every input is one: uninitialised or corrupted data");
        return;
    }
    static const ck_op others[] = {CK_SUM, CK_PROD, CK_MIN, CK_MAX};
    for (int k = 0; k < 4; k++) {
        int64_t alt;
        if (others[k] == s->op || !fold_as(s, others[k], i, &alt) || alt == ev || alt != gv) continue;
        ck_sbuf_add(b, ": it equals the %s over all ranks' inputs: the reduction looks like %s, not %s",
            ck_op_name(others[k]), ck_op_name(others[k]), ck_op_name(s->op));
        return;
    }
    if (is_own(c, i)) {
        ck_sbuf_add(b, ": it holds this rank's own input unchanged (never reduced or received)");
        return;
    }
    switch (s->kind) {
    case CC_MASK:   explain_mask(b, c, i, gv, ev); break;
    case CC_MINMAX: explain_minmax(b, c, i, gv); break;
    default:        explain_generic(b, c, i, gv, ev); break;
    }
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
        if (other >= 0) ck_sbuf_add(b, "holds block %d's result (block index off?)", other);
        else ck_sbuf_add(b, "%zu/%zu wrong", nw, len);
    }
}

size_t cc_diagnose(char *out, size_t cap, const void *host_got, const void *own_input, int fill_byte,
                   size_t count, ck_dtype dt, ck_op op, int rank, int p, const ck_algo *algo,
                   const ck_config *cfg)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    ctx c;
    memset(&c, 0, sizeof c);
    c.s = cc_scheme_of(dt, op, p);
    c.es = ck_dtype_size(dt);
    c.count = count;
    c.got = host_got;
    c.own = own_input;
    c.fill_byte = fill_byte;
    c.rank = rank;
    c.algo = algo;
    c.cfg = cfg;
    if (!c.es || !count) return count;

    unsigned char *exp = malloc(count * c.es);
    if (!exp) {
        size_t w = cc_count_wrong(host_got, count, dt, op, p);
        if (w) ck_sbuf_add(&b, "rank %d: %zu of %zu elements wrong", rank, w, count);
        return w ? 0 : count;
    }
    cc_expected(exp, count, dt, op, p);
    c.exp = exp;
    size_t first = count, nwrong = 0;
    for (size_t i = 0; i < count; i++)
        if (memcmp(exp + i * c.es, c.got + i * c.es, c.es)) {
            if (first == count) first = i;
            nwrong++;
        }
    if (nwrong) {
        char e[64], g[64];
        cc_format(e, sizeof e, exp, first, dt);
        cc_format(g, sizeof g, host_got, first, dt);
        ck_sbuf_add(&b, "rank %d: %zu of %zu elements wrong; first: element %zu: expected %s, got %s",
            rank, nwrong, count, first, e, g);
        explain_element(&b, &c, first);
        if (p > 1) {
            size_t off, len;
            int blk = block_of(count, p, first, &off, &len);
            ck_sbuf_add(&b, "; element %zu is in block %d of %d (elements %zu..%zu)", first, blk, p, off, off + len - 1);
            place(&b, &c, first, -1, -1);
            explain_blocks(&b, &c);
        }
    }
    free(exp);
    return first;
}
