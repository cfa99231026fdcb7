/*
 * dtype.c — element types, reduction operators, host reduce kernels and the
 * block partition rule shared by every algorithm.
 */
#include <string.h>
#include "collkit.h"

static const char *const errnames[CK_NUM_ERRORS] = {
    [CK_SUCCESS]         = "success",
    [CK_ERR_INVALID_ARG] = "invalid argument",
    [CK_ERR_UNSUPPORTED] = "unsupported by this algorithm or transport",
    [CK_ERR_MISMATCH]    = "arguments differ across ranks",
    [CK_ERR_TIMEOUT]     = "watchdog timeout (a rank waited too long: hang or deadlock)",
    [CK_ERR_TRANSPORT]   = "transport error",
    [CK_ERR_NOMEM]       = "out of memory",
    [CK_ERR_INTERNAL]    = "internal error",
    [CK_ERR_PROTOCOL]    = "the algorithm broke the rules of the algorithm interface",
};

const char *ck_strerror(int s)
{
    return (s >= 0 && s < CK_NUM_ERRORS) ? errnames[s] : "unknown error";
}

static const struct { const char *name; size_t size; int is_float; } dtypes[CK_NUM_DTYPES] = {
    [CK_F32]  = {"f32", 4, 1},
    [CK_F64]  = {"f64", 8, 1},
    [CK_I32]  = {"i32", 4, 0},
    [CK_I64]  = {"i64", 8, 0},
    [CK_BF16] = {"bf16", 2, 1},
};
static const char *const opnames[CK_NUM_OPS] = {"sum", "prod", "min", "max", "avg"};

size_t ck_dtype_size(ck_dtype dt) { return (unsigned)dt < CK_NUM_DTYPES ? dtypes[dt].size : 0; }
const char *ck_dtype_name(ck_dtype dt) { return (unsigned)dt < CK_NUM_DTYPES ? dtypes[dt].name : "?"; }
const char *ck_op_name(ck_op op) { return (unsigned)op < CK_NUM_OPS ? opnames[op] : "?"; }
int ck_dtype_is_float(ck_dtype dt) { return (unsigned)dt < CK_NUM_DTYPES && dtypes[dt].is_float; }

int ck_dtype_parse(const char *s, ck_dtype *out)
{
    static const struct { const char *alias; ck_dtype dt; } aliases[] = {
        {"float", CK_F32}, {"float32", CK_F32}, {"double", CK_F64}, {"float64", CK_F64},
        {"int", CK_I32}, {"int32", CK_I32}, {"int64", CK_I64}, {"bfloat16", CK_BF16},
    };
    if (!s) return CK_ERR_INVALID_ARG;
    for (int i = 0; i < CK_NUM_DTYPES; i++)
        if (!strcmp(s, dtypes[i].name)) { *out = (ck_dtype)i; return CK_SUCCESS; }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(s, aliases[i].alias)) { *out = aliases[i].dt; return CK_SUCCESS; }
    return CK_ERR_INVALID_ARG;
}

int ck_op_parse(const char *s, ck_op *out)
{
    if (!s) return CK_ERR_INVALID_ARG;
    for (int i = 0; i < CK_NUM_OPS; i++)
        if (!strcmp(s, opnames[i])) { *out = (ck_op)i; return CK_SUCCESS; }
    return CK_ERR_INVALID_ARG;
}

/* bf16 is the top half of an f32. Rounding to nearest even: add 0x7fff plus
 * the lowest kept bit, then truncate. NaN stays a (quiet) NaN. */
uint16_t ck_f32_to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float ck_bf16_to_f32(uint16_t x)
{
    uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* One loop per (type, op). Written plainly so gcc vectorises the f32/f64/int
 * loops. Sums and products are done in A: the type itself for floats, its
 * unsigned twin for integers, so that an integer overflow (a broken algorithm
 * adding a contribution twice) wraps, as two's complement hardware does,
 * instead of being undefined behaviour. */
#define OP_MIN(x, y)  ((y) < (x) ? (y) : (x))
#define OP_MAX(x, y)  ((y) > (x) ? (y) : (x))

#define DEFINE_KERNELS(T, A, suffix)                                                     \
    static void reduce_##suffix(T *restrict_dst, const T *a, const T *b, size_t n, ck_op op) \
    {                                                                                    \
        T *d = restrict_dst;                                                             \
        switch (op) {                                                                    \
        case CK_SUM:  for (size_t i = 0; i < n; i++) d[i] = (T)((A)a[i] + (A)b[i]); break;  \
        case CK_PROD: for (size_t i = 0; i < n; i++) d[i] = (T)((A)a[i] * (A)b[i]); break;  \
        case CK_MIN:  for (size_t i = 0; i < n; i++) d[i] = OP_MIN(a[i], b[i]);  break;  \
        case CK_MAX:  for (size_t i = 0; i < n; i++) d[i] = OP_MAX(a[i], b[i]);  break;  \
        default: break;                                                                  \
        }                                                                                \
    }

DEFINE_KERNELS(float, float, f32)
DEFINE_KERNELS(double, double, f64)
DEFINE_KERNELS(int32_t, uint32_t, i32)
DEFINE_KERNELS(int64_t, uint64_t, i64)

static void reduce_bf16(uint16_t *d, const uint16_t *a, const uint16_t *b, size_t n, ck_op op)
{
    for (size_t i = 0; i < n; i++) {
        float x = ck_bf16_to_f32(a[i]), y = ck_bf16_to_f32(b[i]), r;
        switch (op) {
        case CK_SUM:  r = x + y; break;
        case CK_PROD: r = x * y; break;
        case CK_MIN:  r = OP_MIN(x, y); break;
        default:      r = OP_MAX(x, y); break;
        }
        d[i] = ck_f32_to_bf16(r);
    }
}

int ck_reduce_host(void *dst, const void *a, const void *b, size_t count, ck_dtype dt, ck_op op)
{
    if ((unsigned)dt >= CK_NUM_DTYPES || (unsigned)op >= CK_AVG) return CK_ERR_INVALID_ARG;
    if (count == 0) return CK_SUCCESS;
    switch (dt) {
    case CK_F32:  reduce_f32(dst, a, b, count, op); break;
    case CK_F64:  reduce_f64(dst, a, b, count, op); break;
    case CK_I32:  reduce_i32(dst, a, b, count, op); break;
    case CK_I64:  reduce_i64(dst, a, b, count, op); break;
    case CK_BF16: reduce_bf16(dst, a, b, count, op); break;
    default: return CK_ERR_INVALID_ARG;
    }
    return CK_SUCCESS;
}

int ck_divide_host(void *buf, size_t count, ck_dtype dt, int divisor)
{
    if (divisor <= 0) return CK_ERR_INVALID_ARG;
    switch (dt) {
    case CK_F32: { float *x = buf; for (size_t i = 0; i < count; i++) x[i] = x[i] / (float)divisor; break; }
    case CK_F64: { double *x = buf; for (size_t i = 0; i < count; i++) x[i] = x[i] / (double)divisor; break; }
    case CK_BF16: {
        uint16_t *x = buf;
        for (size_t i = 0; i < count; i++) x[i] = ck_f32_to_bf16(ck_bf16_to_f32(x[i]) / (float)divisor);
        break;
    }
    default: return CK_ERR_INVALID_ARG;   /* avg is defined for floating types only */
    }
    return CK_SUCCESS;
}

void ck_block(size_t count, size_t nblocks, size_t i, size_t *offset, size_t *len)
{
    size_t base = count / nblocks, extra = count % nblocks;
    *len = base + (i < extra ? 1 : 0);
    *offset = i * base + (i < extra ? i : extra);
}

size_t ck_num_chunks(size_t len, size_t chunk)
{
    if (chunk == 0) chunk = 1;
    return (len + chunk - 1) / chunk;
}
