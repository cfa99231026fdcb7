/*
 * test_costs.c — every algorithm's cost function against the cost table in
 * its own header comment.
 *
 * Each algorithm file states its α-β-γ cost in words and, below it, a table
 * of that cost evaluated at fixed parameters (the block that starts with
 * "Cost table"). This test parses the table out of the source file and
 * compares every entry with ck_algo.cost, so the formula a student reads and
 * the one collbench uses cannot drift apart. Every registered algorithm that
 * is not a reference must have a cost function and a table.
 *
 *   test_costs              check every registered algorithm
 *   test_costs --print NAME print NAME's table, ready to paste into its header
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
    CHECK(rows == NS, "%s: %s has %d rows of a cost table (want %d; print it with test_costs --print %s)",
          a->name, path, rows, NS, a->name);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--print")) {
        const ck_algo *a = ck_algo_find(argv[2]);
        if (!a || !a->cost) { fprintf(stderr, "test_costs: '%s' is unknown or has no cost function\n", argv[2]); return 2; }
        print_table(stdout, a);
        return 0;
    }
    for (int i = 0; i < ck_algo_count(); i++) check_algo(ck_algo_at(i));
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
