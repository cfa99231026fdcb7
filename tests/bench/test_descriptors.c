/*
 * test_descriptors.c — what every registered algorithm's descriptor claims:
 * its cost function against the cost table in its own header comment, and
 * its diagnose hook's answers (bounded, and about the rank asked about).
 *
 * Each algorithm file states its α-β-γ cost in words and, below it, a table
 * of that cost evaluated at fixed parameters (the block that starts with
 * "Cost table"). This test parses the table out of the source file and
 * compares every entry with ck_algo.cost, so the formula a student reads and
 * the one collbench uses cannot drift apart. Every registered algorithm that
 * is not a reference must have a cost function and a table.
 *
 *   test_descriptors              check every registered algorithm
 *   test_descriptors --print NAME print NAME's cost table, ready to paste into its header
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit.h"
#include "../check.h"

/* The parameters of every table: a 10 GB/s link with 2 µs latency, a
 * 20 GB/s reduction, the default 256 KiB chunk. */
static const ck_cost_params P = {.alpha = 2e-6, .beta = 0.1e-9, .gamma = 0.05e-9, .chunk = 256 * 1024};
static const int PS[] = {2, 4, 5, 16};
static const char *const SIZES[] = {"1K", "1M", "64M"};
enum { NP = 4, NS = 3 };

static double size_of(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return v * (*end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0);
}

static void print_table(FILE *out, const ck_algo *a)
{
    fprintf(out, " * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:\n *        n");
    for (int j = 0; j < NP; j++) {
        char h[16];
        snprintf(h, sizeof h, "p=%d", PS[j]);
        fprintf(out, " %11s", h);
    }
    fprintf(out, "\n");
    for (int i = 0; i < NS; i++) {
        fprintf(out, " *   %6s", SIZES[i]);
        for (int j = 0; j < NP; j++) fprintf(out, " %11.2f", a->cost(&P, PS[j], size_of(SIZES[i])) * 1e6);
        fprintf(out, "\n");
    }
}

/* Find the source file of an algorithm: collectives/algos/NAME.c or a subfolder. */
static FILE *open_source(const char *name, char *path, size_t cap)
{
    static const char *const dirs[] = {"collectives/algos", "collectives/algos/cuda"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, cap, "%s/%s/%s.c", COLLKIT_SOURCE_DIR, dirs[i], name);
        FILE *f = fopen(path, "r");
        if (f) return f;
    }
    return NULL;
}

static void check_algo(const ck_algo *a)
{
    char path[1024], line[512];
    if (!a->cost) {
        CHECK(a->flags & CK_ALGO_REFERENCE, "%s: declares no cost function (ck_algo.cost)", a->name);
        return;
    }
    CHECK(a->cost(&P, 1, 1 << 20) == 0, "%s: costs nothing at p = 1", a->name);
    FILE *f = open_source(a->name, path, sizeof path);
    if (!f) return;   /* an algorithm registered from outside the library (a test's, a lab's) */
    int in_table = 0, rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (!in_table) {
            if (strstr(line, "Cost table")) in_table = 1;
            continue;
        }
        if (in_table == 1) { in_table = 2; continue; }   /* the header row: n, p=2, ... */
        char sz[16];
        double v[NP];
        if (sscanf(line, " * %15s %lf %lf %lf %lf", sz, &v[0], &v[1], &v[2], &v[3]) != 5) break;
        rows++;
        double n = size_of(sz);
        for (int j = 0; j < NP; j++) {
            double want = a->cost(&P, PS[j], n) * 1e6;
            CHECK(fabs(want - v[j]) <= 0.006, "%s: header table says %.2f us at n = %s, p = %d; cost() gives %.2f us",
                  a->name, v[j], sz, PS[j], want);
        }
    }
    fclose(f);
    CHECK(rows == NS, "%s: %s has %d rows of a cost table (want %d; print it with test_descriptors --print %s)",
          a->name, path, rows, NS, a->name);
}

/* A diagnose hook must stay within its buffer whatever it is asked, and when
 * it names a missing rank, it names the right one. */
static void check_diagnose(const ck_algo *a)
{
    if (!a->diagnose) return;
    const ck_config cfg = {.chunk_bytes = 64, .timeout_s = 30, .validate = 1};
    char out[512];
    int said = 0;
    for (int p = 2; p <= 9; p++)
        for (size_t count = 1; count <= 40; count += 13)
            for (size_t e = 0; e < count; e += 5)
                for (int q = -1; q < p; q++)
                    for (int r = 0; r < p; r++) {
                        ck_fault f = {.p = p, .rank = r, .count = count, .elem = e, .esize = 4,
                                      .missing = q, .doubled = -1, .cfg = &cfg};
                        memset(out, 0x7f, sizeof out);
                        out[0] = '\0';   /* a hook with nothing to say may leave the buffer as it is */
                        a->diagnose(&f, out, 16);
                        if (!memchr(out, 0, 16) || out[16] != 0x7f) {
                            CHECK(0, "%s: diagnose wrote past a 16-byte buffer (p %d, rank %d, missing %d)", a->name, p, r, q);
                            return;
                        }
                        out[0] = '\0';
                        a->diagnose(&f, out, sizeof out);
                        char rank_q[32];
                        snprintf(rank_q, sizeof rank_q, "rank %d", q);
                        if (q >= 0 && out[0] && !strstr(out, rank_q)) {
                            CHECK(0, "%s: asked about missing rank %d, said: %s", a->name, q, out);
                            return;
                        }
                        said += out[0] != 0;
                    }
    CHECK(said > 0, "%s: its diagnose hook never says anything", a->name);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--print")) {
        const ck_algo *a = ck_algo_find(argv[2]);
        if (!a || !a->cost) { fprintf(stderr, "test_descriptors: '%s' is unknown or has no cost function\n", argv[2]); return 2; }
        print_table(stdout, a);
        return 0;
    }
    for (int i = 0; i < ck_algo_count(); i++) {
        check_algo(ck_algo_at(i));
        check_diagnose(ck_algo_at(i));
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
