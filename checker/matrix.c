/*
 * matrix.c — which cases collcheck runs at p ranks: counts x dtypes x ops x
 * in-place, plus misaligned buffers, (with --quick) one large count, and the
 * random-float cases (sum and avg on f32, f64, bf16).
 */
#include <stdlib.h>
#include "check_cli.h"

/* Add v to the set c[0..n) unless it is negative (p-1 at p = 0 and the like)
 * or already there. */
static int add_count(size_t *c, int n, long long v)
{
    if (v < 0) return n;
    for (int i = 0; i < n; i++)
        if (c[i] == (size_t)v) return n;
    c[n++] = (size_t)v;
    return n;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The (dtype, op) pair is selected, and avg only on floating types. */
static int selected(const cc_options *o, int dt, int op)
{
    return (o->dtypes >> dt & 1) && (o->ops >> op & 1) && (op != CK_AVG || ck_dtype_is_float((ck_dtype)dt));
}

int cc_build_matrix(const cc_options *o, int p, cc_case **out)
{
    size_t counts[CC_MAX_COUNTS + 8];
    int nc = 0;
    if (o->ncounts) {
        for (int i = 0; i < o->ncounts; i++)
            nc = add_count(counts, nc, o->counts[i].rel ? p + o->counts[i].v : o->counts[i].v);
    } else {
        const long long def[] = {0, 1, p - 1, p, p + 1, CC_PRIME};
        for (int i = 0; i < 6; i++) nc = add_count(counts, nc, def[i]);
        if (!o->quick) nc = add_count(counts, nc, CC_BIG);
    }
    qsort(counts, (size_t)nc, sizeof counts[0], cmp_size);

    int cap = nc * CK_NUM_DTYPES * CK_NUM_OPS * 2 * 3 + 4, n = 0;
    cc_case *c = malloc((size_t)cap * sizeof *c);
    *out = c;
    if (!c) return -1;
    int first_dt = -1, first_op = -1;
    for (int dt = 0; dt < CK_NUM_DTYPES && (o->inputs & 1); dt++)
        for (int op = 0; op < CK_NUM_OPS; op++) {
            if (!selected(o, dt, op)) continue;
            if (first_dt < 0 || (dt == CK_F32 && first_dt != CK_F32)) { first_dt = dt; first_op = op; }
            for (int k = 0; k < nc; k++)
                for (int ip = 0; ip < 2; ip++) {
                    if (!(o->inplace >> ip & 1)) continue;
                    if (o->misaligned < 2) c[n++] = (cc_case){counts[k], (ck_dtype)dt, (ck_op)op, ip, 0, 0, o->coll};
                }
        }
    /* Misaligned buffers: one per (dtype, op) at the prime count (the largest
     * count <= the prime when --count is given); --quick: one op per dtype;
     * --misaligned only: every case. */
    size_t best = 0;
    for (int j = 0; j < nc; j++)
        if (counts[j] <= CC_PRIME && counts[j] > best) best = counts[j];
    for (int dt = 0; dt < CK_NUM_DTYPES && o->misaligned && (o->inputs & 1); dt++)
        for (int op = 0; op < CK_NUM_OPS; op++) {
            if (!selected(o, dt, op)) continue;
            for (int k = 0; k < nc; k++) {
                if (o->misaligned != 2 && !(counts[k] == best && best > 0)) continue;
                for (int ip = 0; ip < 2; ip++)
                    if (o->inplace >> ip & 1) c[n++] = (cc_case){counts[k], (ck_dtype)dt, (ck_op)op, ip, 1, 0, o->coll};
            }
            if (o->quick && o->misaligned < 2) break;
        }
    /* --quick keeps the >= 1 Mi count to one case: it is the one that crosses
     * the pipelining and eager/rendezvous thresholds. */
    if (o->quick && !o->ncounts && first_dt >= 0 && (o->inplace & 1) && o->misaligned < 2)
        c[n++] = (cc_case){CC_BIG, (ck_dtype)first_dt, (ck_op)first_op, 0, 0, 0, o->coll};
    /* Random floats: sum and avg on the floating types, at every count >= 1
     * (--quick: above p only, out of place, unless only in-place is asked). */
    for (int dt = 0; dt < CK_NUM_DTYPES && (o->inputs & 2) && o->misaligned < 2; dt++)
        for (int op = 0; op < CK_NUM_OPS; op++) {
            if ((op != CK_SUM && op != CK_AVG) || !ck_dtype_is_float((ck_dtype)dt) || !selected(o, dt, op)) continue;
            for (int k = 0; k < nc; k++) {
                if (counts[k] == 0 || (o->quick && !o->ncounts && counts[k] <= (size_t)p)) continue;
                for (int ip = 0; ip < 2; ip++) {
                    if (!(o->inplace >> ip & 1)) continue;
                    if (o->quick && ip == 1 && (o->inplace & 1)) continue;
                    c[n++] = (cc_case){counts[k], (ck_dtype)dt, (ck_op)op, ip, 0, 1, o->coll};
                }
            }
        }
    return n;
}
