/*
 * random.c — the random-float inputs (sum and avg on f32, f64, bf16) and
 * their check against the exact sum.
 *
 * Why: the exact integer inputs of inputs.c give the same bits in every
 * summation order, so they cannot see an algorithm whose ranks add the same
 * numbers in different orders and end with results that differ in the last
 * bits (real gradients are floats; data-parallel replicas then drift apart).
 * These inputs round: the driver compares every rank's result bit for bit
 * (collcheck.c), and each rank checks its own against the exact sum here.
 *
 * The inputs: x = +-(2^(t-1) + m) * 2^(-(t-1) - e), t the type's precision
 * (53, 24, 8 bits), m a random (t-1)-bit mantissa, e a random exponent in
 * 0..EMAX. Every input is an integer k times q = 2^-(t-1+EMAX), |k| < 2^(t+EMAX),
 * so the exact sum K*q is computed with integers (and no float type could
 * hold it in general: that is the point).
 *
 * The bound: any summation of p numbers in floating point, in any order or
 * tree, with every addition rounded to nearest with unit roundoff u, has
 *     |computed - exact| <= gamma(p-1) * sum |x_r|,   gamma(n) = n u / (1 - n u)
 * (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.2;
 * each of the p-1 additions on the path of a term multiplies it by at most
 * (1 + u)). u = 2^-53 (f64), 2^-24 (f32), and 2^-8 + 2^-23 for bf16, whose
 * additions round twice (to f32, then to bf16). avg divides the sum by p
 * once, which adds u * |result|: the bound is then
 *     (gamma(p-1) * sum |x_r|) / p + u * (|exact| + gamma(p-1) * sum |x_r|) / p.
 * A correct algorithm can never leave this bound; a missing or doubled
 * contribution (about 1/p of the magnitude) is far outside it — except in
 * bf16 at large p, where (p-1) * 2^-8 of the sum of magnitudes is wider than
 * one input (p >= 16 or so): there the exact-input cases and the cross-rank
 * comparison still see it, the bound does not.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "encoding.h"
#include "collkit_util.h"

typedef __int128 i128;

typedef struct {
    int t, emax;   /* precision in bits, exponent spread */
    long double u; /* unit roundoff of one addition (or division) in the type */
} rnd_type;

static int rnd_type_of(ck_dtype dt, rnd_type *r)
{
    switch (dt) {
    case CK_F64:  *r = (rnd_type){53, 3, ldexpl(1, -53)}; return 1;
    case CK_F32:  *r = (rnd_type){24, 7, ldexpl(1, -24)}; return 1;
    case CK_BF16: *r = (rnd_type){8, 7, ldexpl(1, -8) + ldexpl(1, -23)}; return 1;
    default:      return 0;
    }
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Rank r's input for element i as the integer k (the value is k * q). */
static int64_t rnd_k(const rnd_type *ty, unsigned seed, int r, size_t i)
{
    uint64_t h = splitmix(splitmix(((uint64_t)seed << 32) ^ (uint64_t)(unsigned)r) ^ splitmix((uint64_t)i) ^
                          cc_get_seed());
    int e = (int)((h >> 1) % (uint64_t)(ty->emax + 1));
    int64_t m = (int64_t)((h >> 8) & ((1ull << (ty->t - 1)) - 1));
    int64_t k = (((int64_t)1 << (ty->t - 1)) + m) << (ty->emax - e);
    return (h & 1u) ? -k : k;
}

/* q = 2^-(t-1+EMAX): the value of k = 1. */
static int rnd_scale(const rnd_type *ty) { return -(ty->t - 1 + ty->emax); }

static void store_double(void *buf, size_t i, ck_dtype dt, double x)
{
    char *d = (char *)buf + i * ck_dtype_size(dt);
    switch (dt) {
    case CK_F64:  memcpy(d, &x, 8); break;
    case CK_F32:  { float f = (float)x; memcpy(d, &f, 4); break; }
    case CK_BF16: { uint16_t b = ck_f32_to_bf16((float)x); memcpy(d, &b, 2); break; }
    default: break;
    }
}

static long double load_ld(const void *buf, size_t i, ck_dtype dt)
{
    const char *s = (const char *)buf + i * ck_dtype_size(dt);
    switch (dt) {
    case CK_F64:  { double x; memcpy(&x, s, 8); return x; }
    case CK_F32:  { float x; memcpy(&x, s, 4); return x; }
    case CK_BF16: { uint16_t x; memcpy(&x, s, 2); return ck_bf16_to_f32(x); }
    default:      return NAN;
    }
}

void cc_fill_random(void *buf, size_t count, ck_dtype dt, int rank, unsigned seed)
{
    rnd_type ty;
    if (!rnd_type_of(dt, &ty)) return;
    for (size_t i = 0; i < count; i++)
        store_double(buf, i, dt, ldexp((double)rnd_k(&ty, seed, rank, i), rnd_scale(&ty)));
}

/* How far got is from target (both in units of q), relative to the bound. */
static long double dist(long double gq, i128 target) { return fabsl(gq - (long double)target); }

size_t cc_check_random(char *out, size_t cap, const void *got, size_t count, ck_dtype dt, ck_op op, int rank,
                       int p, unsigned seed)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    rnd_type ty;
    if (!rnd_type_of(dt, &ty) || (op != CK_SUM && op != CK_AVG) || p < 1) {
        ck_sbuf_add(&b, "rank %d: random inputs are defined for sum and avg on f32, f64 and bf16 only", rank);
        return count ? count : 1;
    }
    const int sc = rnd_scale(&ty);
    const long double n1 = p - 1, gamma = n1 * ty.u / (1 - n1 * ty.u);
    size_t bad = 0, first = count;
    long double f_got = 0, f_exact = 0, f_err = 0, f_bound = 0, f_abs = 0;
    for (size_t i = 0; i < count; i++) {
        i128 K = 0, A = 0;
        for (int r = 0; r < p; r++) {
            int64_t k = rnd_k(&ty, seed, r, i);
            K += k;
            A += k < 0 ? -k : k;
        }
        const long double g = load_ld(got, i, dt), gq = ldexpl(g, -sc);   /* got in units of q */
        long double err, bound, exact;
        if (op == CK_SUM) {
            exact = (long double)K;
            err = dist(gq, K);
            bound = gamma * (long double)A;
        } else {
            exact = (long double)K / p;
            err = fabsl(gq - exact);
            bound = gamma * (long double)A / p + ty.u * (fabsl(exact) + gamma * (long double)A / p);
        }
        if (isfinite(g) && err <= bound) continue;
        if (!bad++) {
            first = i;
            f_got = g;
            f_exact = ldexpl(exact, sc);
            f_err = ldexpl(err, sc);
            f_bound = ldexpl(bound, sc);
            f_abs = ldexpl((long double)A, sc);
        }
    }
    if (!bad) return count;
    const int dg = dt == CK_F64 ? 17 : 9;
    ck_sbuf_add(&b, "rank %d: %zu of %zu elements outside the rounding bound of the exact %s (random float inputs, "
                    "seed %u); first: element %zu: got %.*Lg, exact %.*Lg, error %.3Lg > bound %.3Lg "
                    "(gamma(p-1) * sum|x| = %d * %.3Lg * %.6Lg%s, what any summation order stays within)",
                rank, bad, count, ck_op_name(op), seed, first, dg, f_got, dg + 2, f_exact, f_err, f_bound, p - 1,
                ty.u, f_abs, op == CK_AVG ? ", / p, plus the division's rounding" : "");
    if (!isfinite(f_got)) {
        ck_sbuf_add(&b, ": not a finite number (uninitialised or corrupted data?)");
        return first;
    }
    /* What the first wrong element is instead: the sum without one rank, or
     * with one rank twice, within the same bound. */
    {
        i128 K = 0, A = 0;
        int64_t k[1024];
        const int np = p < 1024 ? p : 1024;
        for (int r = 0; r < p; r++) {
            int64_t v = rnd_k(&ty, seed, r, first);
            if (r < np) k[r] = v;
            K += v;
            A += v < 0 ? -v : v;
        }
        const long double gq = ldexpl(f_got, -sc) * (op == CK_AVG ? p : 1);
        const long double bound = gamma * (long double)A * 2 + ty.u * fabsl(gq) * 2;
        int miss = -1, twice = -1, nmiss = 0, ntwice = 0;
        for (int r = 0; r < np; r++) {
            if (dist(gq, K - k[r]) <= bound) { miss = r; nmiss++; }
            if (dist(gq, K + k[r]) <= bound) { twice = r; ntwice++; }
        }
        if (nmiss == 1) ck_sbuf_add(&b, ": it is the sum without rank %d's input: a contribution is missing", miss);
        else if (ntwice == 1) ck_sbuf_add(&b, ": it is the sum with rank %d's input twice", twice);
        else if (op == CK_AVG && dist(gq / p, K) <= bound) ck_sbuf_add(&b, ": it equals the sum: the division by p is missing");
    }
    return first;
}
