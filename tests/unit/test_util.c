/*
 * test_util.c — collkit_util.h: the string builder, the number parsers (good
 * and bad inputs, with their messages; no NaN or inf as a number), FNV-1a against the published test
 * vectors, and the print-rank detector under each launcher's variable.
 * No MPI.
 */
#define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "check.h"

static void test_sbuf(void)
{
    char buf[16];
    ck_sbuf b;
    ck_sbuf_init(&b, buf, sizeof buf);
    CHECK(b.len == 0 && buf[0] == '\0' && !b.truncated, "init: empty");
    ck_sbuf_sep(&b, "; ");
    CHECK(b.len == 0, "no separator before the first clause");
    ck_sbuf_add(&b, "a=%d", 1);
    ck_sbuf_sep(&b, "; ");
    ck_sbuf_add(&b, "%s", "b");
    CHECK(!strcmp(buf, "a=1; b") && b.len == 6 && !b.truncated, "appends and joins: [%s]", buf);
    ck_sbuf_add(&b, "%s", "");
    CHECK(b.len == 6 && !b.truncated, "an empty append changes nothing");
    ck_sbuf_add(&b, "%s", "0123456789");   /* 6 + 10 > 15 */
    CHECK(b.len == 15 && strlen(buf) == 15 && b.truncated && !strcmp(buf, "a=1; b012345678"),
          "fills to the last byte, terminated, marked truncated: [%s] len %zu", buf, b.len);
    ck_sbuf_add(&b, "more");
    CHECK(b.len == 15 && strlen(buf) == 15, "a full buffer stays full");

    /* Exactly filling: 15 characters fit in 16 bytes without truncation. */
    ck_sbuf_init(&b, buf, sizeof buf);
    ck_sbuf_add(&b, "%s", "123456789012345");
    CHECK(b.len == 15 && !b.truncated, "exactly full is not truncated");

    /* No room at all: nothing is written anywhere. */
    char one[1] = {'x'};
    ck_sbuf_init(&b, one, 1);
    ck_sbuf_add(&b, "abc");
    CHECK(one[0] == '\0' && b.len == 0 && b.truncated, "a one-byte buffer holds only the terminator");
    ck_sbuf_init(&b, NULL, 100);
    ck_sbuf_add(&b, "abc");
    ck_sbuf_sep(&b, "; ");
    CHECK(b.len == 0 && b.cap == 0 && b.truncated, "a NULL buffer is a sink");

    /* A guard byte after the buffer proves no overflow. */
    char guarded[9];
    memset(guarded, '#', sizeof guarded);
    ck_sbuf_init(&b, guarded, 8);
    for (int i = 0; i < 10; i++) ck_sbuf_add(&b, "%d", 12345);
    CHECK(guarded[8] == '#' && guarded[7] == '\0' && b.len == 7, "never writes past cap");
}

static void test_parse_size(void)
{
    static const struct { const char *s; uint64_t v; } good[] = {
        {"0", 0}, {"8", 8}, {"4K", 4096}, {"4k", 4096}, {"4Ki", 4096}, {"4KiB", 4096}, {"4KB", 4096},
        {"64M", 64ull << 20}, {"64m", 64ull << 20}, {"64Mi", 64ull << 20}, {"64MB", 64ull << 20},
        {"1G", 1ull << 30}, {"1g", 1ull << 30}, {"1GiB", 1ull << 30}, {"8B", 8}, {"8b", 8},
        {"18446744073709551615", UINT64_MAX}, {"007", 7},
    };
    char err[128];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 1;
        int rc = ck_parse_size(good[i].s, UINT64_MAX, &v, err, sizeof err);
        CHECK(rc == 0 && v == good[i].v, "'%s' -> %llu (rc %d, got %llu: %s)", good[i].s,
              (unsigned long long)good[i].v, rc, (unsigned long long)v, rc ? err : "");
    }
    static const struct { const char *s; uint64_t max; const char *msg; } bad[] = {
        {"", UINT64_MAX, "expected a number, got an empty string"},
        {"-1", UINT64_MAX, "a negative value is not allowed"},
        {"-", UINT64_MAX, "expected a number with an optional K, M or G suffix (x1024), e.g. 64K"},
        {"+1", UINT64_MAX, "expected a number with an optional K, M or G suffix (x1024), e.g. 64K"},
        {" 1", UINT64_MAX, "expected a number with an optional K, M or G suffix (x1024), e.g. 64K"},
        {"lots", UINT64_MAX, "expected a number with an optional K, M or G suffix (x1024), e.g. 64K"},
        {"12X", UINT64_MAX, "bad size suffix 'X' (use K, M or G)"},
        {"12 ", UINT64_MAX, "bad size suffix ' ' (use K, M or G)"},
        {"1.5M", UINT64_MAX, "bad size suffix '.5M' (use K, M or G)"},
        {"4KK", UINT64_MAX, "bad size suffix 'KK' (use K, M or G)"},
        {"4iB", UINT64_MAX, "bad size suffix 'iB' (use K, M or G)"},
        {"4T", UINT64_MAX, "bad size suffix 'T' (use K, M or G)"},
        {"18446744073709551616", UINT64_MAX, "too large (at most 18446744073709551615)"},
        {"99999999999999999999999", UINT64_MAX, "too large (at most 18446744073709551615)"},
        {"17179869184G", UINT64_MAX, "too large (at most 18446744073709551615)"},   /* 2^34 * 2^30 wraps */
        {"16385M", 1ull << 34, "too large (at most 16G)"},
        {"1025", 1024, "too large (at most 1K)"},
        {"1001", 1000, "too large (at most 1000)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 42;
        int rc = ck_parse_size(bad[i].s, bad[i].max, &v, err, sizeof err);
        CHECK(rc == -1 && v == 42 && !strcmp(err, bad[i].msg), "'%s' rejected: rc %d, [%s], want [%s]", bad[i].s,
              rc, err, bad[i].msg);
    }
    uint64_t v = 0;
    CHECK(ck_parse_size("16G", 1ull << 34, &v, err, sizeof err) == 0 && v == 1ull << 34, "exactly max is fine");
    CHECK(ck_parse_size(NULL, 10, &v, err, sizeof err) == -1, "NULL is rejected");
    CHECK(ck_parse_size("x", 10, &v, NULL, 0) == -1, "no message buffer: still rejected");
    CHECK(ck_parse_size("12X", 10, &v, err, 8) == -1 && strlen(err) == 7, "a short message buffer is not overrun");
}

static void test_parse_int(void)
{
    char err[128];
    long long v = 0;
    CHECK(ck_parse_int("42", 0, 100, &v, err, sizeof err) == 0 && v == 42, "42");
    CHECK(ck_parse_int("-7", -10, 10, &v, err, sizeof err) == 0 && v == -7, "-7");
    CHECK(ck_parse_int("+7", -10, 10, &v, err, sizeof err) == 0 && v == 7, "+7");
    CHECK(ck_parse_int("9223372036854775807", LLONG_MIN, LLONG_MAX, &v, err, sizeof err) == 0 && v == LLONG_MAX,
          "LLONG_MAX");
    CHECK(ck_parse_int("-9223372036854775808", LLONG_MIN, LLONG_MAX, &v, err, sizeof err) == 0 && v == LLONG_MIN,
          "LLONG_MIN");
    static const struct { const char *s; long long lo, hi; const char *msg; } bad[] = {
        {"", 0, 10, "expected an integer, got an empty string"},
        {"x", 0, 10, "expected an integer"},
        {"-", 0, 10, "expected an integer"},
        {" 5", 0, 10, "expected an integer"},
        {"5x", 0, 10, "expected an integer, not 'x' after it"},
        {"5 ", 0, 10, "expected an integer, not ' ' after it"},
        {"64K", 0, 1 << 20, "expected an integer, not 'K' after it"},
        {"11", 0, 10, "must be between 0 and 10"},
        {"-1", 0, 10, "must be between 0 and 10"},
        {"9223372036854775808", LLONG_MIN, LLONG_MAX,
         "must be between -9223372036854775808 and 9223372036854775807"},
        {"-9223372036854775809", LLONG_MIN, LLONG_MAX,
         "must be between -9223372036854775808 and 9223372036854775807"},
        {"99999999999999999999999", 0, 10, "must be between 0 and 10"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        int rc = ck_parse_int(bad[i].s, bad[i].lo, bad[i].hi, &v, err, sizeof err);
        CHECK(rc == -1 && v == 42 && !strcmp(err, bad[i].msg), "'%s' rejected: rc %d, [%s], want [%s]", bad[i].s,
              rc, err, bad[i].msg);
    }
}

static void test_parse_double(void)
{
    static const struct { const char *s; double v; } good[] = {
        {"0", 0}, {"30", 30}, {"2.5", 2.5}, {".5", 0.5}, {"5.", 5}, {"1e-3", 1e-3}, {"1E3", 1000}, {"2e+2", 200},
        {"+4", 4}, {"-0", 0}, {"1e6", 1e6}, {"007", 7}, {"0e-999", 0}, {"0.000", 0}, {"4.9e-324", 4.9e-324},
    };
    char err[128];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double v = -1;
        int rc = ck_parse_double(good[i].s, 0, 1e6, &v, err, sizeof err);
        CHECK(rc == 0 && v == good[i].v, "'%s' -> %g (rc %d, got %g: %s)", good[i].s, good[i].v, rc, v, rc ? err : "");
    }
    double v = 1;
    CHECK(ck_parse_double("-0", 0, 1, &v, err, sizeof err) == 0 && v == 0 && !signbit(v), "-0 reads as +0");
    CHECK(ck_parse_double("-2.5", -10, 10, &v, err, sizeof err) == 0 && v == -2.5, "a negative value in range");
    CHECK(ck_parse_double("1.7e308", 0, DBL_MAX, &v, err, sizeof err) == 0 && v == 1.7e308, "near DBL_MAX");
    static const struct { const char *s; double lo, hi; const char *msg; } bad[] = {
        {"", 0, 1e6, "expected a number, got an empty string"},
        {"nan", 0, 1e6, "not a finite number"},
        {"NaN", 0, 1e6, "not a finite number"},
        {"-nan", 0, 1e6, "not a finite number"},
        {"inf", 0, 1e6, "not a finite number"},
        {"+Inf", 0, 1e6, "not a finite number"},
        {"infinity", 0, 1e6, "not a finite number"},
        {"-inf", -DBL_MAX, DBL_MAX, "not a finite number"},
        {"information", 0, 1e6, "expected a number"},
        {"x", 0, 1e6, "expected a number"},
        {".", 0, 1e6, "expected a number"},
        {"-", 0, 1e6, "expected a number"},
        {" 1", 0, 1e6, "expected a number"},
        {"1 ", 0, 1e6, "expected a number, not ' ' after it"},
        {"5s", 0, 1e6, "expected a number, not 's' after it"},
        {"0x10", 0, 1e6, "expected a number, not 'x10' after it"},
        {"1e", 0, 1e6, "expected a number, not 'e' after it"},
        {"1e+", 0, 1e6, "expected a number, not 'e+' after it"},
        {"1,5", 0, 1e6, "expected a number, not ',5' after it"},
        {"-1", 0, 1e6, "must be between 0 and 1e+06"},
        {"1000001", 0, 1e6, "must be between 0 and 1e+06"},
        {"1e400", 0, 1e6, "must be between 0 and 1e+06"},
        {"-1", 0, DBL_MAX, "must be at least 0"},
        {"1e400", 0, DBL_MAX, "too large"},
        {"-1e400", -DBL_MAX, 0, "too large"},
        {"2", -DBL_MAX, 1, "must be at most 1"},
        {"1e-400", 0, 1e6, "too small (it rounds to 0; give 0 for 0)"},   /* 0 is "off" for --timeout */
        {"-0.0001e-330", -1, 1, "too small (it rounds to 0; give 0 for 0)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        int rc = ck_parse_double(bad[i].s, bad[i].lo, bad[i].hi, &v, err, sizeof err);
        CHECK(rc == -1 && v == 42 && !strcmp(err, bad[i].msg), "'%s' rejected: rc %d, [%s], want [%s]", bad[i].s,
              rc, err, bad[i].msg);
    }
    CHECK(ck_parse_double(NULL, 0, 1, &v, err, sizeof err) == -1, "NULL is rejected");
    CHECK(ck_parse_double("nan", 0, 1, &v, NULL, 0) == -1, "no message buffer: still rejected");
}

static void test_fnv(void)
{
    /* Published FNV-1a 64 test vectors (Noll's FNV page). */
    CHECK(ck_fnv1a64("", 0) == 0xcbf29ce484222325ull, "FNV-1a(\"\") is the offset basis");
    CHECK(ck_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull, "FNV-1a(\"a\")");
    CHECK(ck_fnv1a64("foobar", 6) == 0x85944171f73967e8ull, "FNV-1a(\"foobar\")");
    /* Chained pieces hash like the whole. */
    uint64_t h = ck_fnv1a64_update(ck_fnv1a64_update(CK_FNV1A64_INIT, "foo", 3), "bar", 3);
    CHECK(h == ck_fnv1a64("foobar", 6), "update in pieces equals the whole");
    const unsigned char bytes[] = {0, 0xff, 0x80};
    CHECK(ck_fnv1a64(bytes, 3) != ck_fnv1a64(bytes, 2), "bytes above 0x7f and NULs are hashed");
}

static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
                                            "PALS_RANKID", "SLURM_PROCID"};
enum { NVARS = sizeof launcher_vars / sizeof launcher_vars[0] };

static void test_print_rank(void)
{
    for (int i = 0; i < NVARS; i++) unsetenv(launcher_vars[i]);
    CHECK(ck_launcher_rank() == -1 && ck_is_print_rank(), "no launcher: rank -1, and it prints");
    for (int i = 0; i < NVARS; i++) {
        setenv(launcher_vars[i], "3", 1);
        CHECK(ck_launcher_rank() == 3 && !ck_is_print_rank(), "%s=3: rank 3, silent", launcher_vars[i]);
        setenv(launcher_vars[i], "0", 1);
        CHECK(ck_launcher_rank() == 0 && ck_is_print_rank(), "%s=0: rank 0 prints", launcher_vars[i]);
        unsetenv(launcher_vars[i]);
    }
    /* Inside a Slurm batch script, mpirun's ranks inherit SLURM_PROCID=0. */
    setenv("SLURM_PROCID", "0", 1);
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    CHECK(ck_launcher_rank() == 2, "the MPI launcher's variable wins over SLURM_PROCID");
    setenv("OMPI_COMM_WORLD_RANK", "garbage", 1);
    CHECK(ck_launcher_rank() == 0, "an unreadable value is skipped");
    for (int i = 0; i < NVARS; i++) unsetenv(launcher_vars[i]);
}

int main(void)
{
    test_sbuf();
    test_parse_size();
    test_parse_int();
    test_parse_double();
    test_fnv();
    test_print_rank();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
