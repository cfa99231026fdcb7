/*
 * test_inputs — the checker's verifiable inputs are what every other test
 * trusts, so they are tested on their own, without MPI:
 *   - exact in any order: the all-reduce of cc_fill inputs, computed with the
 *     library's own kernels left-to-right, right-to-left and as a tree, is
 *     bit-identical to cc_expected for every dtype x op and p up to 64;
 *   - unique: different ranks' inputs differ, and a result shifted by one
 *     element, missing one rank, or reduced with the wrong op is caught;
 *   - diagnosable: cc_diagnose names the missing rank, the shift, the op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collcheck.h"
#include "check.h"



enum { N = 300 };

/* in[r] = rank r's input; reduce them in the given order into out. */
static void reduce_order(unsigned char *out, unsigned char **in, int p, size_t n, ck_dtype dt, ck_op op, int order)
{
    size_t bytes = n * ck_dtype_size(dt);
    ck_op kop = op == CK_AVG ? CK_SUM : op;
    if (order == 0) {               /* ((0 + 1) + 2) + ... */
        memcpy(out, in[0], bytes);
        for (int r = 1; r < p; r++) ck_reduce_host(out, out, in[r], n, dt, kop);
    } else if (order == 1) {        /* 0 + (1 + (2 + ...)) */
        memcpy(out, in[p - 1], bytes);
        for (int r = p - 2; r >= 0; r--) ck_reduce_host(out, in[r], out, n, dt, kop);
    } else {                        /* pairwise tree, as recursive doubling does it */
        unsigned char **t = malloc((size_t)p * sizeof *t);
        for (int r = 0; r < p; r++) { t[r] = malloc(bytes ? bytes : 1); memcpy(t[r], in[r], bytes); }
        for (int gap = 1; gap < p; gap *= 2)
            for (int r = 0; r + gap < p; r += 2 * gap) ck_reduce_host(t[r], t[r], t[r + gap], n, dt, kop);
        memcpy(out, t[0], bytes);
        for (int r = 0; r < p; r++) free(t[r]);
        free(t);
    }
    if (op == CK_AVG) ck_divide_host(out, n, dt, p);
}

static void test_exact(void)
{
    static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 23, 43, 64};
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
        int p = ps[pi];
        for (int dt = 0; dt < CK_NUM_DTYPES; dt++)
            for (int op = 0; op < CK_NUM_OPS; op++) {
                if (op == CK_AVG && !ck_dtype_is_float((ck_dtype)dt)) continue;
                size_t es = ck_dtype_size((ck_dtype)dt);
                unsigned char **in = malloc((size_t)p * sizeof *in), *out = malloc(N * es);
                for (int r = 0; r < p; r++) {
                    in[r] = malloc(N * es);
                    cc_fill(in[r], N, (ck_dtype)dt, (ck_op)op, r, p);
                }
                int bad = 0;
                for (int order = 0; order < 3; order++) {
                    reduce_order(out, in, p, N, (ck_dtype)dt, (ck_op)op, order);
                    bad += cc_count_wrong(out, N, (ck_dtype)dt, (ck_op)op, p) != 0;
                }
                CHECK(!bad, "p=%d %s %s: %d of 3 summation orders differ from cc_expected", p,
                      ck_dtype_name((ck_dtype)dt), ck_op_name((ck_op)op), bad);

                /* Distinct ranks (where the type has room: bf16 sums at large p do not). */
                if (p > 1 && !(dt == CK_BF16 && p > 43)) {
                    int same = 0;
                    for (int r = 1; r < p && r < 8; r++) same += !memcmp(in[0], in[r], N * es);
                    CHECK(!same, "p=%d %s %s: rank inputs must differ", p, ck_dtype_name((ck_dtype)dt),
                          ck_op_name((ck_op)op));
                }
                /* The result shifted by one element must not pass. */
                reduce_order(out, in, p, N, (ck_dtype)dt, (ck_op)op, 0);
                memmove(out, out + es, (N - 1) * es);
                CHECK(cc_count_wrong(out, N - 1, (ck_dtype)dt, (ck_op)op, p) > 0, "p=%d %s %s: shift undetected",
                      p, ck_dtype_name((ck_dtype)dt), ck_op_name((ck_op)op));
                /* A missing rank must not pass. */
                if (p > 1) {
                    reduce_order(out, in + 1, p - 1, N, (ck_dtype)dt, op == CK_AVG ? CK_SUM : (ck_op)op, 0);
                    if (op == CK_AVG) ck_divide_host(out, N, (ck_dtype)dt, p);
                    CHECK(cc_count_wrong(out, N, (ck_dtype)dt, (ck_op)op, p) > 0,
                          "p=%d %s %s: missing rank 0 undetected", p, ck_dtype_name((ck_dtype)dt),
                          ck_op_name((ck_op)op));
                }
                for (int r = 0; r < p; r++) free(in[r]);
                free(in);
                free(out);
            }
    }
}

static int contains(const char *s, const char *what)
{
    if (strstr(s, what)) return 1;
    printf("  diagnosis was: %s\n", s);
    return 0;
}

static void test_diagnosis(void)
{
    const int p = 4;
    double in[4][64], out[64], own[64];
    char msg[2048];
    for (int r = 0; r < p; r++) cc_fill(in[r], 64, CK_F64, CK_SUM, r, p);
    memcpy(own, in[1], sizeof own);

    /* Element 17 lacks rank 2's contribution. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    out[17] -= in[2][17];
    size_t first = cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, ck_algo_find("tree"), NULL);
    CHECK(first == 17 && contains(msg, "element 17") && contains(msg, "sum of ranks {0,1,3}") &&
          contains(msg, "rank 2's contribution is missing") && contains(msg, "block 1 of 4"),
          "missing contribution");
    /* The same in a ring names the step where rank 2 adds to block 1. */
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, ck_algo_find("ring"), NULL);
    CHECK(contains(msg, "rank 2 adds its input to block 1 at reduce-scatter step 0"), "ring step");

    /* Data shifted by one element. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    out[20] = out[21];
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "complete sum of element 21") && contains(msg, "shifted by 1"), "shift by one");

    /* max instead of sum. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    out[3] = in[3][3];   /* rank 3 holds the largest input: 2^3 + ... */
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "looks like max, not sum"), "wrong op");

    /* Never written (out of place, recvbuf filled with 0xA5). */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    memset(&out[40], 0xA5, 8 * sizeof(double));
    cc_diagnose(msg, sizeof msg, out, own, 0xA5, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "element 40") && contains(msg, "never written") && contains(msg, "2 [32..47]"),
          "never written");

    /* A whole block holding another block's result. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    memcpy(&out[48], &out[0], 16 * sizeof(double));
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "holds block 0's result"), "block swap");

    /* min: a rank missing. */
    int32_t mi[4][16], mo[16];
    for (int r = 0; r < p; r++) cc_fill(mi[r], 16, CK_I32, CK_MIN, r, p);
    cc_expected(mo, 16, CK_I32, CK_MIN, p);
    /* element 5: the min is rank (4 - 5 % 4) % 4 = 3's; pretend rank 3 was left out */
    mo[5] = mi[0][5] < mi[1][5] ? (mi[0][5] < mi[2][5] ? mi[0][5] : mi[2][5]) : (mi[1][5] < mi[2][5] ? mi[1][5] : mi[2][5]);
    cc_diagnose(msg, sizeof msg, mo, NULL, -1, 16, CK_I32, CK_MIN, 0, p, NULL, NULL);
    CHECK(contains(msg, "rank 3's contribution is missing"), "min without rank 3");

    /* All right: empty message, returns count. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    CHECK(cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL) == 64 && msg[0] == '\0',
          "a right result has no diagnosis");
    /* A tiny output buffer is never overrun. */
    out[0] += 1;
    char small[16];
    memset(small, 'x', sizeof small);
    cc_diagnose(small, 8, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(small[7] == '\0' && small[8] == 'x', "diagnosis respects its capacity");
}

int main(void)
{
    test_exact();
    test_diagnosis();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
