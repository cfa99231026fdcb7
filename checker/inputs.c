/*
 * inputs.c — verifiable inputs and exact expected results (see collcheck.h
 * for the encoding and why each choice keeps every summation order exact).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encoding.h"

/* Integers of magnitude up to 2^bits are exact in the type, and so is every
 * partial sum the encodings below can produce. */
static int exact_bits(ck_dtype dt)
{
    switch (dt) {
    case CK_F32:  return 24;
    case CK_F64:  return 52;
    case CK_I32:  return 30;
    case CK_I64:  return 62;
    case CK_BF16: return 8;
    default:      return 0;
    }
}

static int bitlen(int64_t x)
{
    int n = 0;
    for (; x > 0; x >>= 1) n++;
    return n;
}

static uint64_t run_seed, seed_off;

void cc_set_seed(uint64_t seed)
{
    run_seed = seed;
    /* splitmix64 of the seed: nearby seeds give unrelated keys. Seed 0 keeps
     * offset 0 (the inputs every earlier run and test saw). */
    uint64_t x = seed + 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    seed_off = seed ? x ^ (x >> 31) : 0;
}

uint64_t cc_get_seed(void) { return run_seed; }

int cc_parse_seed(const char *text, uint64_t *seed)
{
    char *end = NULL;
    if (!*text || *text == '-' || *text == '+' || isspace((unsigned char)*text)) return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end) return -1;
    *seed = v;
    return 0;
}

cc_scheme cc_scheme_salted(ck_dtype dt, ck_op op, int p, unsigned salt)
{
    cc_scheme s;
    memset(&s, 0, sizeof s);
    s.dt = dt;
    s.op = op;
    s.p = p < 1 ? 1 : p;
    s.bits = exact_bits(dt);
    s.salt = salt;
    s.off = (size_t)salt * CC_SALT_STEP + (size_t)seed_off;
    const int64_t range = (int64_t)1 << s.bits;
    switch (op) {
    case CK_SUM:
    case CK_AVG:
        if (s.p + bitlen(s.p) + 4 <= s.bits) {
            s.kind = CC_MASK;
            /* i64: the element field starts at bit 34, so every input and sum
             * has bits above 32: a sum computed in a 32-bit type (an int
             * accumulator) loses them instead of passing unseen. */
            s.eshift = s.p;
            if (dt == CK_I64 && s.p < 34) s.eshift = 34;
            s.ebits = s.bits - s.eshift - bitlen(s.p);
            if (s.ebits > 20) s.ebits = 20;
        } else {
            s.kind = CC_MOD;
            s.M = range / s.p;
            if (s.M > ((int64_t)1 << 20)) s.M = (int64_t)1 << 20;
            if (s.M < 1) s.M = 1;
            s.S = s.M / s.p > 0 ? s.M / s.p : 1;
        }
        break;
    case CK_PROD:
        /* Powers of two are exact in every float type far beyond the
         * mantissa, so the limit is the int64 the expected value is computed
         * in (2^62), or the integer type's own range. */
        s.kind = CC_PROD;
        s.budget = ck_dtype_is_float(dt) ? 62 : s.bits - 1;
        s.pexp = s.p <= s.budget / 2 ? 2 : 1;
        /* i64: p factors of 2 or 4 fit in 32 bits while p < 16, and a
         * product done in a 32-bit type would pass. One rank per element
         * (which one rotates) gives +-(2^(a + lift) + 1) instead: every
         * product is above 2^33 and below 2^61, and, being an odd number
         * times the others' powers of two, keeps non-zero low 32 bits. A
         * 32-bit product then leaves exactly those low bits (the diagnosis
         * says so) rather than a 0 that reads like a wrong identity. */
        if (dt == CK_I64 && s.p <= 26) s.lift = 34 - s.p;
        break;
    default:   /* min, max */
        s.kind = CC_MINMAX;
        s.M = s.p < range ? s.p : range;
        s.K = range / s.M;
        if (s.K > ((int64_t)1 << 20)) s.K = (int64_t)1 << 20;
        if (s.K < 1) s.K = 1;
        /* i64: K = 2^40, and every value H = 2^39 further from zero. The
         * ranks' values then agree in their low 32 bits and none fits in 32
         * bits: a min or max done in a 32-bit type keeps only the low 32 bits
         * of the answer, which no rank's input equals. */
        if (dt == CK_I64 && s.M < ((int64_t)1 << 21)) {
            s.K = (int64_t)1 << 40;
            s.H = s.K / 2;
        }
        s.Z = s.M * s.K / 2;
        break;
    }
    return s;
}

cc_scheme cc_scheme_of(ck_dtype dt, ck_op op, int p) { return cc_scheme_salted(dt, op, p, 0); }

/* A 64-bit hash of (rank, element): prod's signs and magnitudes. */
static uint64_t mix(int r, size_t j)
{
    uint64_t h = (uint64_t)(r + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)j * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return h;
}

int64_t cc_minmax_shift(const cc_scheme *s, size_t j, int *sign)
{
    switch (j % 3) {
    case 0:  if (sign) *sign = 1;  return 1 + s->H;              /* values 1 .. M*K (+H): 0 is below them all */
    case 1:  if (sign) *sign = -1; return -s->M * s->K - s->H;   /* values -M*K .. -1 (-H): 0 is above them all */
    default: if (sign) *sign = 0;  return -s->Z + s->H;          /* both signs (none within H of 0 for i64) */
    }
}

int64_t cc_input(const cc_scheme *s, int r, size_t i)
{
    const size_t j = cc_key(s, i);
    switch (s->kind) {
    case CC_MASK:
        return ((int64_t)1 << r) + ((int64_t)(j & (((size_t)1 << s->ebits) - 1)) << s->eshift);
    case CC_MOD:
        return (int64_t)((j * (size_t)(1 + (r & 1)) + (size_t)r * (size_t)s->S) % (size_t)s->M);
    case CC_PROD: {
        /* No input is +-1 while the type has room, so every rank's factor
         * shows in the product: a rank left out, or replaced by the identity
         * 1, changes it. Magnitude 2 or 4 by a hash (the product's magnitude
         * varies from element to element too), then only 2 at larger p, and
         * past the budget of factors 2 the remaining ranks give +-1. */
        const uint64_t h = mix(r, j);
        const int a = s->pexp == 2 ? 1 + (int)(h >> 1 & 1u) : r < s->budget;
        const int64_t v = s->lift && (size_t)r == j % (size_t)s->p ? ((int64_t)1 << (a + s->lift)) + 1
                                                                     : (int64_t)1 << a;
        return (h & 1u) ? -v : v;
    }
    default:
        return (int64_t)(((size_t)r + j) % (size_t)s->M) * s->K + (int64_t)(j % (size_t)s->K) +
               cc_minmax_shift(s, j, NULL);
    }
}

int64_t cc_reduce_value(const cc_scheme *s, size_t i)
{
    if (s->kind == CC_MASK) {   /* closed form: every rank's bit once, p copies of e(j) */
        int64_t e = (int64_t)(cc_key(s, i) & (((size_t)1 << s->ebits) - 1));
        return (((int64_t)1 << s->p) - 1) + (((int64_t)s->p * e) << s->eshift);
    }
    int64_t acc = cc_input(s, 0, i);
    for (int r = 1; r < s->p; r++) {
        int64_t v = cc_input(s, r, i);
        switch (s->op) {
        case CK_PROD: acc *= v; break;
        case CK_MIN:  acc = v < acc ? v : acc; break;
        case CK_MAX:  acc = v > acc ? v : acc; break;
        default:      acc += v; break;
        }
    }
    return acc;
}

/* Element access goes through memcpy: the checker's own scratch elements (and
 * a user's buffer) need not be aligned for the type. */
void cc_store(void *buf, size_t i, ck_dtype dt, int64_t v)
{
    char *d = (char *)buf + i * ck_dtype_size(dt);
    switch (dt) {
    case CK_F32:  { float x = (float)v; memcpy(d, &x, 4); break; }
    case CK_F64:  { double x = (double)v; memcpy(d, &x, 8); break; }
    case CK_I32:  { int32_t x = (int32_t)v; memcpy(d, &x, 4); break; }
    case CK_I64:  memcpy(d, &v, 8); break;
    case CK_BF16: { uint16_t x = ck_f32_to_bf16((float)v); memcpy(d, &x, 2); break; }
    default: break;
    }
}

/* Element i as a double (bf16 widened), and as raw integer where it is one. */
static double load_double(const void *buf, size_t i, ck_dtype dt, int64_t *ival, int *is_int_type)
{
    const char *s = (const char *)buf + i * ck_dtype_size(dt);
    *is_int_type = 0;
    switch (dt) {
    case CK_F32:  { float x; memcpy(&x, s, 4); return x; }
    case CK_F64:  { double x; memcpy(&x, s, 8); return x; }
    case CK_I32:  { int32_t x; memcpy(&x, s, 4); *ival = x; *is_int_type = 1; return (double)x; }
    case CK_I64:  { int64_t x; memcpy(&x, s, 8); *ival = x; *is_int_type = 1; return (double)x; }
    case CK_BF16: { uint16_t x; memcpy(&x, s, 2); return ck_bf16_to_f32(x); }
    default:      return NAN;
    }
}

void cc_expected_at(const cc_scheme *s, size_t i, void *dst)
{
    int64_t v = cc_reduce_value(s, i);
    if (s->op == CK_AVG) {
        /* avg: the exact sum, then one IEEE division by p in the element type. */
        switch (s->dt) {
        case CK_F32: { float x = (float)v / (float)s->p; memcpy(dst, &x, sizeof x); return; }
        case CK_F64: { double x = (double)v / (double)s->p; memcpy(dst, &x, sizeof x); return; }
        case CK_BF16: {
            uint16_t x = ck_f32_to_bf16(ck_bf16_to_f32(ck_f32_to_bf16((float)v)) / (float)s->p);
            memcpy(dst, &x, sizeof x);
            return;
        }
        default: break;   /* avg is not defined for integers: fall through to the sum */
        }
    }
    cc_store(dst, 0, s->dt, v);
}

int cc_load_int(const void *buf, size_t i, ck_dtype dt, int64_t *v)
{
    int is_int;
    double x = load_double(buf, i, dt, v, &is_int);
    if (is_int) return 1;
    if (!isfinite(x) || x != floor(x) || fabs(x) >= 4.6e18) return 0;
    *v = (int64_t)x;
    return 1;
}

double cc_load_double(const void *buf, size_t i, ck_dtype dt)
{
    int is_int;
    int64_t iv = 0;
    return load_double(buf, i, dt, &iv, &is_int);
}

void cc_format(char *out, size_t cap, const void *buf, size_t i, ck_dtype dt)
{
    int is_int;
    int64_t iv = 0;
    double x = load_double(buf, i, dt, &iv, &is_int);
    if (is_int) snprintf(out, cap, "%lld", (long long)iv);
    else snprintf(out, cap, dt == CK_F64 ? "%.17g" : "%.9g", x);
}

/* Store VALUE(i) for i < count as element type dt, with the type's switch
 * outside the loop (the checker fills and checks million-element buffers on
 * every call). */
#define STORE_ALL(buf, count, dt, VALUE)                                                              \
    do {                                                                                              \
        char *d_ = (char *)(buf);                                                                     \
        switch (dt) {                                                                                 \
        case CK_F32:  for (size_t i = 0; i < (count); i++) { float x = (float)(VALUE); memcpy(d_ + 4 * i, &x, 4); } break;   \
        case CK_F64:  for (size_t i = 0; i < (count); i++) { double x = (double)(VALUE); memcpy(d_ + 8 * i, &x, 8); } break; \
        case CK_I32:  for (size_t i = 0; i < (count); i++) { int32_t x = (int32_t)(VALUE); memcpy(d_ + 4 * i, &x, 4); } break; \
        case CK_I64:  for (size_t i = 0; i < (count); i++) { int64_t x = (VALUE); memcpy(d_ + 8 * i, &x, 8); } break;        \
        case CK_BF16: for (size_t i = 0; i < (count); i++) { uint16_t x = ck_f32_to_bf16((float)(VALUE)); memcpy(d_ + 2 * i, &x, 2); } break; \
        default: break;                                                                               \
        }                                                                                             \
    } while (0)

void cc_fill_salted(void *buf, size_t count, ck_dtype dt, ck_op op, int rank, int p, unsigned salt)
{
    cc_scheme s = cc_scheme_salted(dt, op, p, salt);
    STORE_ALL(buf, count, dt, cc_input(&s, rank, i));
}

void cc_expected_view(const cc_scheme *s, void *buf, size_t count)
{
    const size_t es = ck_dtype_size(s->dt);
    if (s->op == CK_AVG) {
        for (size_t i = 0; i < count; i++) cc_expected_at(s, i, (char *)buf + i * es);
        return;
    }
    STORE_ALL(buf, count, s->dt, cc_reduce_value(s, i));
}

void cc_expected_salted(void *buf, size_t count, ck_dtype dt, ck_op op, int p, unsigned salt)
{
    cc_scheme s = cc_scheme_salted(dt, op, p, salt);
    cc_expected_view(&s, buf, count);
}

size_t cc_count_wrong_salted(const void *got, size_t count, ck_dtype dt, ck_op op, int p, unsigned salt)
{
    cc_scheme s = cc_scheme_salted(dt, op, p, salt);
    const size_t es = ck_dtype_size(dt);
    const unsigned char *g = got;
    unsigned char want[8];
    size_t wrong = 0;
    for (size_t i = 0; i < count; i++) {
        cc_expected_at(&s, i, want);
        wrong += memcmp(want, g + i * es, es) != 0;
    }
    return wrong;
}

void cc_fill(void *buf, size_t count, ck_dtype dt, ck_op op, int rank, int p)
{
    cc_fill_salted(buf, count, dt, op, rank, p, 0);
}

void cc_expected(void *buf, size_t count, ck_dtype dt, ck_op op, int p)
{
    cc_expected_salted(buf, count, dt, op, p, 0);
}

size_t cc_count_wrong(const void *got, size_t count, ck_dtype dt, ck_op op, int p)
{
    return cc_count_wrong_salted(got, count, dt, op, p, 0);
}
