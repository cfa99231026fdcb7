/*
 * test_host — the host-side building blocks, no MPI communication:
 * reduce kernels for every dtype x op (bf16 rounding, dst aliasing a or b),
 * the avg divider, the block/chunk partition rule, dtype/op parsing and the
 * registry.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit.h"
#include "check.h"



/* ------------------------------------------------------------ kernels */

/* Reference in double/int64 for element values that are exact in every type. */
static double ref_op(double x, double y, ck_op op)
{
    switch (op) {
    case CK_SUM:  return x + y;
    case CK_PROD: return x * y;
    case CK_MIN:  return x < y ? x : y;
    default:      return x > y ? x : y;
    }
}

static void put(void *buf, size_t i, ck_dtype dt, double v)
{
    switch (dt) {
    case CK_F32:  ((float *)buf)[i] = (float)v; break;
    case CK_F64:  ((double *)buf)[i] = v; break;
    case CK_I32:  ((int32_t *)buf)[i] = (int32_t)v; break;
    case CK_I64:  ((int64_t *)buf)[i] = (int64_t)v; break;
    case CK_BF16: ((uint16_t *)buf)[i] = ck_f32_to_bf16((float)v); break;
    default: break;
    }
}

static double get(const void *buf, size_t i, ck_dtype dt)
{
    switch (dt) {
    case CK_F32:  return ((const float *)buf)[i];
    case CK_F64:  return ((const double *)buf)[i];
    case CK_I32:  return ((const int32_t *)buf)[i];
    case CK_I64:  return (double)((const int64_t *)buf)[i];
    case CK_BF16: return ck_bf16_to_f32(((const uint16_t *)buf)[i]);
    default:      return NAN;
    }
}

static void test_kernels(void)
{
    enum { N = 37 };   /* odd: exercises the vectorised loops' tails */
    for (int dt = 0; dt < CK_NUM_DTYPES; dt++)
        for (int op = 0; op < CK_AVG; op++) {
            size_t es = ck_dtype_size((ck_dtype)dt);
            unsigned char a[N * 8], b[N * 8], d[N * 8], a2[N * 8];
            double va[N], vb[N];
            for (int i = 0; i < N; i++) {
                va[i] = (i % 7) - 3;          /* -3..3: exact everywhere, products too */
                vb[i] = ((i * 5) % 9) - 4;    /* -4..4 */
                put(a, (size_t)i, (ck_dtype)dt, va[i]);
                put(b, (size_t)i, (ck_dtype)dt, vb[i]);
            }
            memcpy(a2, a, N * es);
            int rc = ck_reduce_host(d, a, b, N, (ck_dtype)dt, (ck_op)op);
            int bad = 0;
            for (int i = 0; i < N; i++) bad += get(d, (size_t)i, (ck_dtype)dt) != ref_op(va[i], vb[i], (ck_op)op);
            CHECK(rc == CK_SUCCESS && bad == 0, "reduce %s %s: rc %d, %d wrong", ck_dtype_name((ck_dtype)dt),
                  ck_op_name((ck_op)op), rc, bad);
            CHECK(!memcmp(a, a2, N * es), "reduce %s %s wrote its input", ck_dtype_name((ck_dtype)dt),
                  ck_op_name((ck_op)op));
            /* dst == a */
            rc = ck_reduce_host(a, a, b, N, (ck_dtype)dt, (ck_op)op);
            CHECK(rc == CK_SUCCESS && !memcmp(a, d, N * es), "reduce %s %s with dst == a",
                  ck_dtype_name((ck_dtype)dt), ck_op_name((ck_op)op));
            /* dst == b */
            memcpy(a, a2, N * es);
            rc = ck_reduce_host(b, a, b, N, (ck_dtype)dt, (ck_op)op);
            CHECK(rc == CK_SUCCESS && !memcmp(b, d, N * es), "reduce %s %s with dst == b",
                  ck_dtype_name((ck_dtype)dt), ck_op_name((ck_op)op));
        }
    float x = 1.0f;
    CHECK(ck_reduce_host(&x, &x, &x, 1, CK_F32, CK_AVG) == CK_ERR_INVALID_ARG, "avg is not a kernel op");
    CHECK(ck_reduce_host(&x, &x, &x, 1, (ck_dtype)99, CK_SUM) == CK_ERR_INVALID_ARG, "unknown dtype");
    CHECK(ck_reduce_host(NULL, NULL, NULL, 0, CK_F32, CK_SUM) == CK_SUCCESS, "count 0 touches nothing");

    /* Integer overflow wraps (two's complement), as a broken algorithm that
     * counts a contribution twice needs for its result to be diagnosed; in
     * the signed type it would be undefined behaviour (UBSan stops there). */
    int64_t big[2] = {INT64_MAX, INT64_MIN / 2}, one[2] = {1, 4};
    CHECK(ck_reduce_host(big, big, one, 2, CK_I64, CK_SUM) == CK_SUCCESS && big[0] == INT64_MIN &&
          big[1] == INT64_MIN / 2 + 4, "i64 sum wraps");
    big[0] = INT64_MAX; big[1] = INT64_MIN / 2;
    CHECK(ck_reduce_host(big, big, one, 2, CK_I64, CK_PROD) == CK_SUCCESS && big[0] == INT64_MAX && big[1] == 0,
          "i64 prod wraps");
    int32_t w[1] = {INT32_MAX}, w1[1] = {2};
    CHECK(ck_reduce_host(w, w, w1, 1, CK_I32, CK_PROD) == CK_SUCCESS && w[0] == -2, "i32 prod wraps");
}

static void test_bf16(void)
{
    /* bf16 keeps 8 significant bits: the spacing at 1.0 is 2^-7. */
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(1.0f)) == 1.0f, "1.0 round trip");
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(256.0f)) == 256.0f, "256 exact");
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(257.0f)) == 256.0f, "257 ties to even (256)");
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(259.0f)) == 260.0f, "259 ties to even (260)");
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(1.0f + 0x1p-8f)) == 1.0f, "1+2^-8 ties down to even");
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(1.0f + 3 * 0x1p-8f)) == 1.0f + 0x1p-6f, "1+3*2^-8 ties up to even");
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-12f)) == 1.0f + 0x1p-7f, "above the tie rounds up");
    CHECK(isnan(ck_bf16_to_f32(ck_f32_to_bf16(NAN))), "NaN stays NaN");
    CHECK(isinf(ck_bf16_to_f32(ck_f32_to_bf16(INFINITY))), "inf stays inf");
    CHECK(ck_bf16_to_f32(ck_f32_to_bf16(-2.5f)) == -2.5f, "-2.5 exact");

    /* The kernel rounds every result: 256 + 1 = 256 in bf16. */
    uint16_t a[3] = {ck_f32_to_bf16(256.0f), ck_f32_to_bf16(1.0f), ck_f32_to_bf16(3.0f)};
    uint16_t b[3] = {ck_f32_to_bf16(1.0f), ck_f32_to_bf16(0x1p-8f), ck_f32_to_bf16(0.5f)};
    uint16_t d[3];
    ck_reduce_host(d, a, b, 3, CK_BF16, CK_SUM);
    CHECK(ck_bf16_to_f32(d[0]) == 256.0f && ck_bf16_to_f32(d[1]) == 1.0f && ck_bf16_to_f32(d[2]) == 3.5f,
          "bf16 sum rounds each result: got %g %g %g", ck_bf16_to_f32(d[0]), ck_bf16_to_f32(d[1]),
          ck_bf16_to_f32(d[2]));
    ck_reduce_host(d, a, b, 3, CK_BF16, CK_PROD);
    CHECK(ck_bf16_to_f32(d[0]) == 256.0f && ck_bf16_to_f32(d[2]) == 1.5f, "bf16 prod");

    /* avg divider: one IEEE division in the element type. */
    float f[2] = {10.0f, 1.0f};
    double g[2] = {10.0, 1.0};
    uint16_t h[1] = {ck_f32_to_bf16(10.0f)};
    CHECK(ck_divide_host(f, 2, CK_F32, 3) == CK_SUCCESS && f[0] == 10.0f / 3.0f && f[1] == 1.0f / 3.0f, "f32 divide");
    CHECK(ck_divide_host(g, 2, CK_F64, 3) == CK_SUCCESS && g[0] == 10.0 / 3.0, "f64 divide");
    CHECK(ck_divide_host(h, 1, CK_BF16, 4) == CK_SUCCESS && ck_bf16_to_f32(h[0]) == 2.5f, "bf16 divide");
    int32_t iv[1] = {4};
    CHECK(ck_divide_host(iv, 1, CK_I32, 2) == CK_ERR_INVALID_ARG, "divide on ints rejected");
    CHECK(ck_divide_host(f, 1, CK_F32, 0) == CK_ERR_INVALID_ARG, "divide by 0 rejected");
}

/* ------------------------------------------------------------ partition */

static void test_partition(void)
{
    int bad_cover = 0, bad_size = 0, bad_order = 0, bad_empty = 0;
    const size_t counts[] = {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 100, 1021, 1048577};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
        for (int p = 1; p <= 17; p++) {
            size_t n = counts[ci], next = 0, lmin = (size_t)-1, lmax = 0;
            for (int b = 0; b < p; b++) {
                size_t off, len;
                ck_block(n, p, b, &off, &len);
                if (off != next) bad_cover++;          /* contiguous: no gap, no overlap */
                next = off + len;
                if (len < lmin) lmin = len;
                if (len > lmax) lmax = len;
                /* the first n % p blocks get the extra element */
                if (len != n / (size_t)p + ((size_t)b < n % (size_t)p)) bad_order++;
                if (n < (size_t)p && (size_t)b >= n && len != 0) bad_empty++;
            }
            if (next != n) bad_cover++;
            if (lmax - lmin > 1) bad_size++;
        }
    CHECK(!bad_cover, "ck_block: blocks must tile [0, count) exactly (%d violations)", bad_cover);
    CHECK(!bad_size, "ck_block: sizes differ by more than 1 (%d)", bad_size);
    CHECK(!bad_order, "ck_block: the first count%%p blocks must be the larger ones (%d)", bad_order);
    CHECK(!bad_empty, "ck_block: blocks past count must be empty when count < p (%d)", bad_empty);

    CHECK(ck_num_chunks(0, 4) == 0, "0 elements: 0 chunks");
    CHECK(ck_num_chunks(1, 4) == 1, "1 element: 1 chunk");
    CHECK(ck_num_chunks(8, 4) == 2, "8/4: 2 chunks");
    CHECK(ck_num_chunks(9, 4) == 3, "9/4: 3 chunks");
    CHECK(ck_num_chunks(5, 0) == 5, "chunk 0 is treated as 1");
    int bad = 0;
    for (size_t len = 0; len < 200; len++)
        for (size_t ch = 1; ch < 20; ch++) {
            size_t k = ck_num_chunks(len, ch);
            if (k * ch < len || (k && (k - 1) * ch >= len)) bad++;   /* covers, and no empty chunk */
        }
    CHECK(!bad, "ck_num_chunks: fewest chunks that cover (%d violations)", bad);
}

/* ------------------------------------------------------------ parsing */

static void test_parse(void)
{
    static const char *names[] = {"f32", "f64", "i32", "i64", "bf16"};
    static const size_t sizes[] = {4, 8, 4, 8, 2};
    for (int i = 0; i < CK_NUM_DTYPES; i++) {
        ck_dtype dt = CK_NUM_DTYPES;
        CHECK(ck_dtype_parse(names[i], &dt) == CK_SUCCESS && (int)dt == i, "parse %s", names[i]);
        CHECK(!strcmp(ck_dtype_name((ck_dtype)i), names[i]), "name of dtype %d", i);
        CHECK(ck_dtype_size((ck_dtype)i) == sizes[i], "size of %s", names[i]);
    }
    ck_dtype dt;
    CHECK(ck_dtype_parse("float", &dt) == CK_SUCCESS && dt == CK_F32, "alias float");
    CHECK(ck_dtype_parse("double", &dt) == CK_SUCCESS && dt == CK_F64, "alias double");
    CHECK(ck_dtype_parse("int64", &dt) == CK_SUCCESS && dt == CK_I64, "alias int64");
    CHECK(ck_dtype_parse("f16", &dt) == CK_ERR_INVALID_ARG, "f16 is not a dtype");
    CHECK(ck_dtype_parse("", &dt) == CK_ERR_INVALID_ARG, "empty dtype");
    CHECK(ck_dtype_parse(NULL, &dt) == CK_ERR_INVALID_ARG, "NULL dtype");
    CHECK(ck_dtype_size((ck_dtype)42) == 0 && !strcmp(ck_dtype_name((ck_dtype)42), "?"), "invalid dtype");
    CHECK(ck_dtype_is_float(CK_F32) && ck_dtype_is_float(CK_BF16) && !ck_dtype_is_float(CK_I32), "is_float");

    static const char *ops[] = {"sum", "prod", "min", "max", "avg"};
    for (int i = 0; i < CK_NUM_OPS; i++) {
        ck_op op = CK_NUM_OPS;
        CHECK(ck_op_parse(ops[i], &op) == CK_SUCCESS && (int)op == i, "parse op %s", ops[i]);
        CHECK(!strcmp(ck_op_name((ck_op)i), ops[i]), "name of op %d", i);
    }
    ck_op op;
    CHECK(ck_op_parse("mean", &op) == CK_ERR_INVALID_ARG, "mean is not an op");
    CHECK(ck_op_parse("SUM", &op) == CK_ERR_INVALID_ARG, "op names are lower case");
    for (int s = 0; s < CK_NUM_ERRORS; s++) CHECK(ck_strerror(s) && *ck_strerror(s), "strerror(%d)", s);
    CHECK(!strcmp(ck_strerror(-1), "unknown error") && !strcmp(ck_strerror(CK_NUM_ERRORS), "unknown error"),
          "strerror out of range");
}

/* ------------------------------------------------------------ registry */

static int dummy_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    (void)c; (void)s; (void)r; (void)n; (void)dt; (void)op;
    return CK_SUCCESS;
}

static void test_registry(void)
{
    static const char *builtin[] = {"naive", "ring", "mpi"};
    for (int i = 0; i < 3; i++) {
        const ck_algo *a = ck_algo_find(builtin[i]);
        CHECK(a && !strcmp(a->name, builtin[i]) && a->run && a->summary, "built-in '%s'", builtin[i]);
        CHECK(a && ((a->flags & CK_ALGO_REFERENCE) || a->bytes_sent), "'%s' declares its traffic", builtin[i]);
    }
    CHECK(ck_algo_find("no_such_algo") == NULL, "unknown name");
    CHECK(ck_algo_find(NULL) == NULL, "NULL name");

    int n0 = ck_algo_count();
    static const ck_algo mine = {.name = "unit_test_algo", .summary = "test", .mem = CK_MEM_HOST, .bytes_formula = "0", .run = dummy_run};
    static const ck_algo dup = {.name = "ring", .summary = "impostor", .mem = CK_MEM_HOST, .bytes_formula = "0", .run = dummy_run};
    static const ck_algo norun = {.name = "no_run", .summary = "no body", .mem = CK_MEM_HOST, .bytes_formula = "0", .run = NULL};
    CHECK(ck_register_algo(&mine) == CK_SUCCESS, "register a new algorithm");
    CHECK(ck_algo_count() == n0 + 1 && ck_algo_find("unit_test_algo") == &mine, "found after registration");
    CHECK(ck_algo_at(n0) == &mine && ck_algo_at(-1) == NULL && ck_algo_at(n0 + 1) == NULL, "ck_algo_at");
    CHECK(ck_register_algo(&mine) == CK_ERR_INVALID_ARG, "registering twice is refused");
    CHECK(ck_register_algo(&dup) == CK_ERR_INVALID_ARG, "a duplicate name is refused");
    CHECK(ck_algo_find("ring") != &dup, "the built-in keeps its name");
    CHECK(ck_register_algo(&norun) == CK_ERR_INVALID_ARG && ck_register_algo(NULL) == CK_ERR_INVALID_ARG,
          "incomplete registrations are refused");
    static const char *const bad_names[] = {"", "all", "list", "auto", "my ring", "a,b", "two\nlines",
                                            "0123456789012345678901234567890123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        const ck_algo named = {.name = bad_names[i], .mem = CK_MEM_HOST, .run = dummy_run};
        CHECK(ck_register_algo(&named) == CK_ERR_INVALID_ARG, "the name '%s' is refused", bad_names[i]);
    }
    static const ck_algo badmem = {.name = "bad_mem", .mem = 0x80, .run = dummy_run};
    CHECK(ck_register_algo(&badmem) == CK_ERR_INVALID_ARG, "an unknown memory kind is refused");
    CHECK(ck_algo_count() == n0 + 1, "refused registrations add nothing");

    const ck_algo *list[64];
    int n = -1;
    char err[1024];
    CHECK(ck_algo_parse_list("ring,naive", CK_MEM_HOST, list, 64, &n, err, sizeof err) == CK_SUCCESS && n == 2 &&
          list[0] == ck_algo_find("ring") && list[1] == ck_algo_find("naive"), "parse 'ring,naive'");
    int nhost = 0;
    for (int i = 0; i < ck_algo_count(); i++) nhost += (ck_algo_at(i)->mem & CK_MEM_HOST) != 0;
    CHECK(ck_algo_parse_list("all", CK_MEM_HOST, list, 64, &n, err, sizeof err) == CK_SUCCESS && n == nhost,
          "'all' on host lists every host algorithm (%d of %d)", n, nhost);
    /* Errors come back as one message (nothing printed): what is wrong, and
     * for a bad name the names that run on that memory kind. */
    CHECK(ck_algo_parse_list("ring,bogus", CK_MEM_HOST, list, 64, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          strstr(err, "unknown algorithm 'bogus' (known algorithms: ") == err && strstr(err, " ring") &&
          strstr(err, " unit_test_algo") && strstr(err, " mpi"), "unknown name in list: [%s]", err);
    CHECK(ck_algo_parse_list("naive,mpi", CK_MEM_CUDA, list, 64, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          strstr(err, "algorithm 'mpi' runs on host buffers, not cuda") == err && strstr(err, " naive") &&
          !strstr(err, " unit_test_algo") && !strstr(err, " mpi ") && !strstr(err, " mpi)"),
          "wrong memory kind, listing only the cuda names: [%s]", err);
    CHECK(ck_algo_parse_list("", CK_MEM_HOST, list, 64, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          strstr(err, "empty algorithm list") == err && n == 0, "empty list: [%s]", err);
    CHECK(ck_algo_parse_list(",,", CK_MEM_HOST, list, 64, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          strstr(err, "no algorithm named") == err, "only commas: [%s]", err);
    CHECK(ck_algo_parse_list("ring,naive,ring", CK_MEM_HOST, list, 64, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          !strcmp(err, "algorithm 'ring' given twice"), "a name given twice: [%s]", err);
    CHECK(ck_algo_parse_list("ring,naive", CK_MEM_HOST, list, 1, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          !strcmp(err, "too many algorithms (at most 1)") && n == 0, "more than max: [%s]", err);
    CHECK(ck_algo_parse_list("all", CK_MEM_HOST, list, 2, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          !strcmp(err, "too many algorithms (at most 2)"), "'all' beyond max: [%s]", err);
    CHECK(ck_algo_parse_list("all", 0, list, 64, &n, err, sizeof err) == CK_ERR_INVALID_ARG &&
          strstr(err, "no algorithm runs on") == err, "'all' with no algorithm for the memory kind: [%s]", err);
    CHECK(ck_algo_parse_list("bogus", CK_MEM_HOST, list, 64, &n, err, 16) == CK_ERR_INVALID_ARG &&
          strlen(err) == 15, "a short message buffer is filled, not overrun");
    CHECK(ck_algo_parse_list("bogus", CK_MEM_HOST, list, 64, &n, NULL, 0) == CK_ERR_INVALID_ARG,
          "no message buffer at all");

    FILE *f = tmpfile();
    if (f) {
        char text[8192];
        ck_algo_print_table(f);
        rewind(f);
        size_t k = fread(text, 1, sizeof text - 1, f);
        text[k] = '\0';
        fclose(f);
        CHECK(strstr(text, "ring") && strstr(text, "naive") && strstr(text, "unit_test_algo"),
              "print_table lists the algorithms");
    }
}

int main(void)
{
    test_kernels();
    test_bf16();
    test_partition();
    test_parse();
    test_registry();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
