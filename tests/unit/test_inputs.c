/*
 * test_inputs — the checker's verifiable inputs are what every other test
 * trusts, so they are tested on their own, without MPI:
 *   - exact in any order: the all-reduce of cc_fill inputs, computed with the
 *     library's own kernels left-to-right, right-to-left and as a tree, is
 *     bit-identical to cc_expected for every dtype x op, p up to 64 and
 *     several calls (salts);
 *   - unique: different ranks' inputs differ, and a result shifted by one
 *     element, missing one rank, or reduced with the wrong op is caught;
 *     another call's result is caught; 0 as the identity of min/max is caught;
 *     prod has no input 1, so a rank left out or replaced by 1 is caught;
 *     i64 sum, min and max reduced in a 32-bit type are caught;
 *   - diagnosable: cc_diagnose names the missing rank, the shift, the op, the
 *     previous call's result — and claims about the algorithm only when
 *     several wrong elements agree;
 *   - random floats: every summation order stays within the stated bound,
 *     orders differ in the last bits (which is why ranks are compared), and a
 *     missing rank is far outside the bound.
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
    if (p < 1) return;
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
    static const unsigned salts[] = {0, 1, 7};
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t si = 0; si < sizeof salts / sizeof salts[0]; si++) {
        int p = ps[pi];
        unsigned salt = salts[si];
        for (int dt = 0; dt < CK_NUM_DTYPES; dt++)
            for (int op = 0; op < CK_NUM_OPS; op++) {
                if (op == CK_AVG && !ck_dtype_is_float((ck_dtype)dt)) continue;
                size_t es = ck_dtype_size((ck_dtype)dt);
                unsigned char **in = malloc((size_t)p * sizeof *in), *out = malloc(N * es);
                for (int r = 0; r < p; r++) {
                    in[r] = malloc(N * es);
                    cc_fill_salted(in[r], N, (ck_dtype)dt, (ck_op)op, r, p, salt);
                }
                int bad = 0;
                for (int order = 0; order < 3; order++) {
                    reduce_order(out, in, p, N, (ck_dtype)dt, (ck_op)op, order);
                    bad += cc_count_wrong_salted(out, N, (ck_dtype)dt, (ck_op)op, p, salt) != 0;
                }
                CHECK(!bad, "p=%d salt %u %s %s: %d of 3 summation orders differ from cc_expected", p, salt,
                      ck_dtype_name((ck_dtype)dt), ck_op_name((ck_op)op), bad);
                /* Another call's result is not this call's (state kept between calls shows). */
                if (salt && p > 1) {
                    size_t same = N - cc_count_wrong_salted(out, N, (ck_dtype)dt, (ck_op)op, p, salt - 1);
                    /* prod at large p has magnitudes 2 only: the sign alone differs, half the time */
                    const size_t most = op == CK_PROD ? N * 3 / 4 : N / 2;
                    CHECK(same < most, "p=%d salt %u %s %s: %zu of %d elements equal the previous call's", p, salt,
                          ck_dtype_name((ck_dtype)dt), ck_op_name((ck_op)op), same, N);
                }
                if (salt) goto next;

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
            next:
                for (int r = 0; r < p; r++) free(in[r]);
                free(in);
                free(out);
            }
        }
}

/* min/max: every third element all positive, every third all negative, so
 * max(0, ...) or min(0, ...) (0 taken as the identity) differs; prod: no
 * input is +-1, so leaving a rank out or replacing it by 1 differs everywhere. */
static void test_identity(void)
{
    static const int ps[] = {2, 3, 4, 8, 14, 29};
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
        const int p = ps[pi];
        for (int dt = 0; dt < CK_NUM_DTYPES; dt++) {
            const size_t es = ck_dtype_size((ck_dtype)dt);
            unsigned char *in = malloc(N * es), *acc = malloc(N * es), *zero = calloc(N, es);
            for (int op = CK_MIN; op <= CK_MAX; op++) {
                cc_expected(acc, N, (ck_dtype)dt, (ck_op)op, p);
                ck_reduce_host(acc, acc, zero, N, (ck_dtype)dt, (ck_op)op);   /* 0 as the identity */
                size_t wrong = cc_count_wrong(acc, N, (ck_dtype)dt, (ck_op)op, p);
                CHECK(wrong >= N / 3, "p=%d %s %s: 0 as the identity changes only %zu of %d elements", p,
                      ck_dtype_name((ck_dtype)dt), ck_op_name((ck_op)op), wrong, N);
            }
            /* prod without rank q, or with rank q's input replaced by 1 (the same
             * thing): wrong in every element while the type has room for all. */
            const int room = ck_dtype_is_float((ck_dtype)dt) || dt == CK_I64 ? 62 : 29;
            for (int q = 0; q < p; q += p - 1 > 0 ? p - 1 : 1) {
                int first = 1;
                for (int r = 0; r < p; r++) {
                    if (r == q) continue;
                    cc_fill(in, N, (ck_dtype)dt, CK_PROD, r, p);
                    if (first) memcpy(acc, in, N * es);
                    else ck_reduce_host(acc, acc, in, N, (ck_dtype)dt, CK_PROD);
                    first = 0;
                }
                size_t wrong = cc_count_wrong(acc, N, (ck_dtype)dt, CK_PROD, p);
                CHECK(p > room || wrong == N, "p=%d %s prod without rank %d: only %zu of %d elements differ", p,
                      ck_dtype_name((ck_dtype)dt), q, wrong, N);
            }
            if (dt == CK_F64) {   /* no input is the identity */
                int ones = 0;
                for (int r = 0; r < p; r++) {
                    cc_fill(in, N, CK_F64, CK_PROD, r, p);
                    for (size_t i = 0; i < N; i++) ones += ((double *)(void *)in)[i] == 1 || ((double *)(void *)in)[i] == -1;
                }
                CHECK(!ones, "p=%d prod: %d inputs are +-1", p, ones);
            }
            free(in);
            free(acc);
            free(zero);
        }
    }
}

static int contains(const char *s, const char *what)
{
    if (strstr(s, what)) return 1;
    printf("  diagnosis was: %s\n", s);
    return 0;
}

/* Element i of the expected f64 sum at p = 4. */
static double cc_expected_at_test(size_t i)
{
    double e[64];
    cc_expected(e, 64, CK_F64, CK_SUM, 4);
    return e[i];
}

/* i64 reduced in a 32-bit type (an int accumulator: each input truncated to
 * 32 bits, the result sign-extended back) must fail: the sum's inputs reach
 * above bit 32 (all but element 0 of call 0, whose element field is 0), and
 * the min/max inputs agree in their low 32 bits and none fits in 32 bits. */
static void test_width(void)
{
    static const int ps[] = {2, 3, 4, 7, 16, 33};
    static const ck_op ops[] = {CK_SUM, CK_PROD, CK_MIN, CK_MAX};
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
            const int p = ps[pi];
            const ck_op op = ops[oi];
            int64_t in[N], acc[N];
            for (int r = 0; r < p; r++) {
                cc_fill(in, N, CK_I64, op, r, p);
                for (size_t i = 0; i < N; i++) {
                    const int32_t a = (int32_t)acc[i], b = (int32_t)in[i];
                    if (r == 0) acc[i] = b;
                    else if (op == CK_SUM) acc[i] = (int32_t)((uint32_t)a + (uint32_t)b);
                    else if (op == CK_PROD) acc[i] = (int32_t)((uint32_t)a * (uint32_t)b);
                    else acc[i] = op == CK_MIN ? (a < b ? a : b) : (a > b ? a : b);
                }
            }
            const size_t wrong = cc_count_wrong(acc, N, CK_I64, op, p);
            CHECK(wrong >= (op == CK_SUM ? N - 1 : N), "p=%d i64 %s in 32 bits: only %zu of %d elements wrong", p,
                  ck_op_name(op), wrong, N);
        }
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

    /* Data shifted by one element: one wrong element is a fact about that
     * element, not yet a claim about the algorithm; ten agree, so it is. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    out[20] = out[21];
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "complete sum of element 21") && !strstr(msg, "shifted by") &&
          contains(msg, "only this element is wrong: too few to say"), "one shifted element: no claim");
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    memmove(&out[20], &out[21], 10 * sizeof(double));
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "complete sum of element 21") && contains(msg, "data shifted by 1") &&
          contains(msg, "10 of 10 wrong elements examined"), "shift by one");

    /* A chunk's worth away (chunk_bytes 64 = 8 doubles): a pipelined
     * algorithm's receive slot or chunk index; other distances say nothing
     * about chunks. */
    {
        ck_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.chunk_bytes = 64;
        cc_expected(out, 64, CK_F64, CK_SUM, p);
        memmove(&out[20], &out[28], 10 * sizeof(double));
        cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, &cfg);
        CHECK(contains(msg, "data shifted by 8 (whole chunks of 64 B: a chunk received into a slot still being reduced"),
              "shift by one chunk");
        cc_expected(out, 64, CK_F64, CK_SUM, p);
        memmove(&out[20], &out[25], 10 * sizeof(double));
        cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, &cfg);
        CHECK(contains(msg, "data shifted by 5") && !strstr(msg, "chunk"), "shift by less than a chunk: no chunk hint");
    }

    /* max instead of sum: claimed from several elements, never from one. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    out[3] = in[3][3];   /* rank 3 holds the largest input: 2^3 + ... */
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "it holds only rank 3's input, which with these inputs is also the max over all ranks' inputs") &&
          !strstr(msg, "looks like"), "one max element: no claim");
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    for (int i = 0; i < 64; i += 4) out[i] = in[3][i] > in[2][i] ? in[3][i] : in[2][i];
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "the reduction looks like max, not sum (16 of 16 wrong elements examined") &&
          contains(msg, "or rank 3's buffer was copied where a reduction belongs"), "wrong op, or a copy");
    /* A minority does not decide: 3 max, 5 missing rank 2. */
    cc_expected(out, 64, CK_F64, CK_SUM, p);
    for (int i = 0; i < 3; i++) out[i] = in[3][i];
    for (int i = 30; i < 35; i++) out[i] -= in[2][i];
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "5 of 8 wrong elements examined lack the contribution of rank 2") && !strstr(msg, "looks like"),
          "majority: missing rank");
    /* 2 elements a single rank's input (the max here too) and 2 lacking rank
     * 2: all four are partial sums, which is what is said — never a claim
     * about the op from the two that also read as max. */
    for (int i = 30; i < 33; i++) out[i] += in[2][i];
    out[2] = cc_expected_at_test(2);
    cc_diagnose(msg, sizeof msg, out, own, -1, 64, CK_F64, CK_SUM, 1, p, NULL, NULL);
    CHECK(contains(msg, "4 of 4 wrong elements examined are partial sums") && !strstr(msg, "looks like"),
          "no majority for another op");

    /* State between calls: call 2 returns call 1's result, or adds to it. */
    {
        double prev[64], cur[64];
        cc_expected_salted(prev, 64, CK_F64, CK_SUM, p, 0);
        cc_expected_salted(cur, 64, CK_F64, CK_SUM, p, 1);
        cc_diagnose_salted(msg, sizeof msg, prev, NULL, -1, 64, CK_F64, CK_SUM, 0, p, NULL, NULL, 1);
        CHECK(contains(msg, "previous call's result for this element (call 1; this is call 2)") &&
              contains(msg, "hold the previous call's result: state kept between calls"), "memoised result");
        for (int i = 0; i < 64; i++) out[i] = prev[i] + cur[i];
        cc_diagnose_salted(msg, sizeof msg, out, NULL, -1, 64, CK_F64, CK_SUM, 0, p, NULL, NULL, 1);
        CHECK(contains(msg, "it is the previous call's result plus this call's") &&
              contains(msg, "an accumulator kept between calls and never reset"), "accumulator kept");
    }

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

    /* max with 0 as the identity: the all-negative elements become 0. */
    {
        int32_t mx[16], zero[16] = {0};
        cc_expected(mx, 16, CK_I32, CK_MAX, p);
        ck_reduce_host(mx, mx, zero, 16, CK_I32, CK_MAX);
        cc_diagnose(msg, sizeof msg, mx, NULL, -1, 16, CK_I32, CK_MAX, 0, p, NULL, NULL);
        CHECK(contains(msg, "it is 0, which is no rank's input for this element (all of them are negative)") &&
              contains(msg, "0 is not the identity of max"), "max from 0");
    }
    /* prod without rank 2: each element leaves a few candidates, together
     * they name rank 2. */
    {
        double pin[4][64], po[64];
        for (int r = 0; r < p; r++) cc_fill(pin[r], 64, CK_F64, CK_PROD, r, p);
        for (int i = 0; i < 64; i++) po[i] = pin[0][i] * pin[1][i] * pin[3][i];
        cc_diagnose(msg, sizeof msg, po, NULL, -1, 64, CK_F64, CK_PROD, 0, p, NULL, NULL);
        CHECK(contains(msg, "64 of 64 wrong elements examined lack the contribution of rank 2") &&
              contains(msg, "(or with it replaced by 1)"), "prod without rank 2");
        /* Block by block: each block lacks another rank (a ring step skipped). */
        for (int i = 0; i < 64; i++) {
            const int skip = i / 16;
            po[i] = 1;
            for (int r = 0; r < p; r++)
                if (r != skip) po[i] *= pin[r][i];
        }
        cc_diagnose(msg, sizeof msg, po, NULL, -1, 64, CK_F64, CK_PROD, 0, p, NULL, NULL);
        CHECK(contains(msg, "0 [0..15] 16/16 wrong, all lack rank 0's contribution") &&
              contains(msg, "3 [48..63] 16/16 wrong, all lack rank 3's contribution") &&
              contains(msg, "not the same rank's in most of them"), "prod: a rank missing per block");
    }

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

/* Random floats: every order within the bound, orders differ in the last
 * bits, a missing rank far outside. */
static void test_random(void)
{
    static const int ps[] = {2, 3, 4, 7, 8, 16, 64};
    static const ck_dtype dts[] = {CK_F32, CK_F64, CK_BF16};
    char msg[2048];
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
        for (size_t di = 0; di < 3; di++)
            for (int op = CK_SUM; op <= CK_AVG; op += CK_AVG - CK_SUM) {
                const int p = ps[pi];
                const ck_dtype dt = dts[di];
                const size_t es = ck_dtype_size(dt);
                unsigned char **in = malloc((size_t)p * sizeof *in), *out = malloc(N * es), *out0 = malloc(N * es);
                for (int r = 0; r < p; r++) {
                    in[r] = malloc(N * es);
                    cc_fill_random(in[r], N, dt, r, 3);
                }
                int bad = 0;
                size_t differ = 0;
                for (int order = 0; order < 3; order++) {
                    reduce_order(out, in, p, N, dt, (ck_op)op, order);
                    bad += cc_check_random(msg, sizeof msg, out, N, dt, (ck_op)op, 0, p, 3) != N;
                    if (!order) memcpy(out0, out, N * es);
                    else for (size_t i = 0; i < N; i++) differ += memcmp(out + i * es, out0 + i * es, es) != 0;
                }
                CHECK(!bad, "p=%d %s %s random: %d of 3 orders outside the bound: %s", p, ck_dtype_name(dt),
                      ck_op_name((ck_op)op), bad, msg);
                CHECK(p < 3 || differ > 0, "p=%d %s %s random: every order gave the same bits", p, ck_dtype_name(dt),
                      ck_op_name((ck_op)op));
                reduce_order(out, in + 1, p - 1, N, dt, CK_SUM, 0);
                if (op == CK_AVG) ck_divide_host(out, N, dt, p);
                size_t first = cc_check_random(msg, sizeof msg, out, N, dt, (ck_op)op, 0, p, 3);
                /* bf16's bound at large p (63 roundings of 2^-8) is wider than one input */
                CHECK(first < N || (dt == CK_BF16 && p >= 16), "p=%d %s %s random: rank 0 missing is within the bound", p, ck_dtype_name(dt),
                      ck_op_name((ck_op)op));
                if (op == CK_SUM && dt != CK_BF16 && p <= 8)
                    CHECK(contains(msg, "it is the sum without rank 0's input"), "random: missing rank named");
                for (int r = 0; r < p; r++) free(in[r]);
                free(in);
                free(out);
                free(out0);
            }
}

int main(void)
{
    test_exact();
    test_identity();
    test_width();
    test_diagnosis();
    test_random();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
