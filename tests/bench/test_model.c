/*
 * test_model.c — the benchmark's model arithmetic, without MPI: predictions
 * come from the descriptor's cost function, the α-β least-squares fit on
 * synthetic points, the crossover search, and the parameter file round trip.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                                              printf(__VA_ARGS__); printf("\n"); } } while (0)
static int close_to(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300; }

/* Two made-up algorithms with the costs of recursive doubling and the ring
 * at p = 8 (γ = 0), and one without a model. */
static double lat_cost(const ck_cost_params *m, int p, double n) { (void)p; return 3 * (m->alpha + n * m->beta); }
static double bw_cost(const ck_cost_params *m, int p, double n) { (void)p; return 14 * m->alpha + 1.75 * n * m->beta; }
static int no_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    (void)c; (void)s; (void)r; (void)n; (void)dt; (void)op;
    return CK_SUCCESS;
}
static const ck_algo lat = {.name = "lat", .mem = CK_MEM_HOST, .cost = lat_cost, .run = no_run};
static const ck_algo bw = {.name = "bw", .mem = CK_MEM_HOST, .cost = bw_cost, .run = no_run};
static const ck_algo nocost = {.name = "nocost", .mem = CK_MEM_HOST, .run = no_run};
static double nan_cost(const ck_cost_params *m, int p, double n) { (void)m; (void)p; (void)n; return NAN; }
static const ck_algo nanc = {.name = "nanc", .mem = CK_MEM_HOST, .cost = nan_cost, .run = no_run};

/* Link classes: each step priced with the link it crosses, against the
 * figures worked out by hand from the schedules (nodes of k consecutive
 * ranks; rd and rabenseifner pair r with r ^ d). */
static const ck_algo hier_fake = {.name = "hier:ring/rd", .mem = CK_MEM_HOST, .cost = lat_cost, .run = no_run};

static void check_link_classes(void)
{
    const double n = 1 << 20, g = 0.05e-9;
    const double ai = 1e-6, bi = 0.1e-9, ax = 10e-6, bx = 1e-9;
    bm_params m = {.alpha = ai, .beta = bi, .gamma = g, .chunk = 1 << 18, .alpha_inter = ax, .beta_inter = bx,
                   .links = BM_LINK_INTRA | BM_LINK_INTER, .node_ranks = 2};
    const ck_algo *rd = ck_algo_find("rd"), *rab = ck_algo_find("rabenseifner"), *ring = ck_algo_find("ring");
    CHECK(rd && rab && ring, "the registry has rd, rabenseifner and ring");
    if (!rd || !rab || !ring) return;
    /* p = 8 on 4 nodes of 2: rd's step d = 1 inside, d = 2, 4 across. */
    double want = (ai + n * bi + n * g) + 2 * (ax + n * bx + n * g);
    CHECK(close_to(bm_predict(rd, &m, 8, n), want, 1e-12), "rd, nodes of 2: %g, want %g", bm_predict(rd, &m, 8, n), want);
    /* rabenseifner: d = 4, 2 across with n/2 + n/4 per phase; d = 1 inside with n/8. */
    want = 4 * ax + 2 * 0.75 * n * bx + 0.75 * n * g + 2 * ai + 2 * 0.5 * (n / 4) * bi + 0.5 * (n / 4) * g;
    CHECK(close_to(bm_predict(rab, &m, 8, n), want, 1e-12), "rabenseifner, nodes of 2: %g, want %g",
          bm_predict(rab, &m, 8, n), want);
    /* The ring crosses nodes in every step and waits for that hop. */
    const ck_cost_params inter = {.alpha = ax, .beta = bx, .gamma = g, .chunk = 1 << 18};
    CHECK(close_to(bm_predict(ring, &m, 8, n), ring->cost(&inter, 8, n), 1e-12), "ring priced on the inter link");
    /* hier:A/B: A among the 2 ranks of a node, B among 4 nodes on n/2. */
    /* (only its name is read: the registry's own hier names are the library's) */
    const ck_algo *ar = ck_algo_find("ring");
    const ck_cost_params intra = {.alpha = ai, .beta = bi, .gamma = g, .chunk = 1 << 18};
    want = ar->cost(&intra, 2, n) + rd->cost(&inter, 4, n / 2);
    CHECK(close_to(bm_predict(&hier_fake, &m, 8, n), want, 1e-12), "hier:ring/rd: %g, want %g",
          bm_predict(&hier_fake, &m, 8, n), want);
    /* Every rank its own node: rd all across. */
    m.node_ranks = 1;
    CHECK(close_to(bm_predict(rd, &m, 8, n), 3 * (ax + n * bx + n * g), 1e-12), "rd, one rank per node");
    CHECK(!bm_link_mismatch(&m, 8), "both links known: no warning");
    /* One node: the link inside it throughout. */
    m.node_ranks = 8;
    CHECK(close_to(bm_predict(rd, &m, 8, n), 3 * (ai + n * bi + n * g), 1e-12), "rd, one node");
    /* Nodes, but no inter-node link known: one link, and a warning. */
    m.node_ranks = 2;
    m.links = BM_LINK_INTRA;
    CHECK(close_to(bm_predict(rd, &m, 8, n), 3 * (ai + n * bi + n * g), 1e-12), "one link known");
    CHECK(bm_link_mismatch(&m, 8) && strstr(bm_link_mismatch(&m, 8), "no inter-node link"), "warning: no inter link");
    m.links = 0;
    CHECK(bm_link_mismatch(&m, 8) != NULL, "warning: a file's one link across nodes");
    m.node_ranks = 0;
    CHECK(!bm_link_mismatch(&m, 8), "one node, one link: no warning");
    m.links = BM_LINK_INTER;
    CHECK(bm_link_mismatch(&m, 8) && strstr(bm_link_mismatch(&m, 8), "between nodes"), "warning: inter on one node");
    /* The node size from each rank's node. */
    static const int blocks2[] = {0, 0, 1, 1}, spread[] = {0, 1, 0, 1}, one[] = {5, 5, 5, 5}, ragged[] = {0, 0, 1, 1, 2},
                     back[] = {0, 0, 1, 1, 0, 0};
    CHECK(bm_node_blocks(blocks2, 4) == 2, "blocks of 2");
    CHECK(bm_node_blocks(spread, 4) == 1, "round-robin placement: 1 (every neighbour remote)");
    CHECK(bm_node_blocks(one, 4) == 4, "one node: p");
    CHECK(bm_node_blocks(ragged, 5) == 2, "a shorter last node");
    CHECK(bm_node_blocks(back, 6) == 1, "a node in two blocks: 1");
}

/* The link keys of a parameter file: a round trip, and halves refused. */
static void check_link_file(void)
{
    char path[] = "/tmp/collbench_test_links_XXXXXX", err[256];
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) return;
    const bm_params m = {.alpha = 1e-6, .beta = 0.1e-9, .gamma = 0.05e-9, .chunk = 1 << 18, .alpha_inter = 20e-6,
                         .beta_inter = 8e-9, .links = BM_LINK_INTRA | BM_LINK_INTER};
    bm_params r;
    CHECK(bm_params_save(path, &m, "links") == 0 && bm_params_load(path, &r, err, sizeof err) == 0, "links: %s", err);
    CHECK(r.links == m.links && close_to(r.alpha_inter, 20e-6, 1e-6) && close_to(r.beta_inter, 8e-9, 1e-6),
          "links round trip");
    FILE *f = fopen(path, "w");
    fprintf(f, "alpha_us 1\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nalpha_inter_us 3\n");
    fclose(f);
    CHECK(bm_params_load(path, &r, err, sizeof err) == -1 && strstr(err, "go together"), "half a link: %s", err);
    f = fopen(path, "w");
    fprintf(f, "alpha_us 1\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\n");
    fclose(f);
    CHECK(bm_params_load(path, &r, err, sizeof err) == 0 && r.links == 0, "a file of one link: class unknown");
    remove(path);
}

int main(void)
{
    check_link_classes();
    check_link_file();
    const bm_params m = {.alpha = 1e-6, .beta = 1e-9, .gamma = 0.5e-9, .memcpy_bw = 10e9, .chunk = 1 << 20};
    const double n = 1 << 20;

    /* bm_predict is the algorithm's own cost function with these parameters
     * (each built-in's is checked against its header's table in bench.costs). */
    CHECK(close_to(bm_predict(&lat, &m, 8, n), 3e-6 + 3 * n * 1e-9, 1e-12), "bm_predict calls the descriptor's cost");
    CHECK(isnan(bm_predict(&nocost, &m, 4, n)), "an algorithm without a cost function has no model");
    CHECK(isnan(bm_predict(NULL, &m, 4, n)) && isnan(bm_predict(&lat, &m, 0, n)), "no algorithm or p < 1: no model");

    /* Fit: exact points on a line come back exactly. */
    double xs[8], ts[8], a, b;
    for (int i = 0; i < 8; i++) { xs[i] = 8.0 * pow(8, i); ts[i] = 2.5e-6 + xs[i] * 0.2e-9; }
    CHECK(bm_fit_alpha_beta(xs, ts, 8, &a, &b) == 0, "fit ok");
    CHECK(close_to(a, 2.5e-6, 1e-9) && close_to(b, 0.2e-9, 1e-9), "fit alpha %g beta %g", a, b);
    /* Noise of ±5 % stays within a few per cent. */
    for (int i = 0; i < 8; i++) ts[i] *= (i % 2 ? 1.05 : 0.95);
    CHECK(bm_fit_alpha_beta(xs, ts, 8, &a, &b) == 0 && fabs(a / 2.5e-6 - 1) < 0.1 && fabs(b / 0.2e-9 - 1) < 0.1,
          "noisy fit alpha %g beta %g", a, b);
    /* A falling line would need a negative β: clamped to 0, α the weighted mean. */
    double x2[2] = {100, 1000}, t2[2] = {2e-6, 1e-6};
    CHECK(bm_fit_alpha_beta(x2, t2, 2, &a, &b) == 0 && b == 0 && a > 1e-6 && a < 2e-6, "clamped beta: %g %g", a, b);
    /* One size cannot separate α from β. */
    double x1[3] = {64, 64, 64}, t1[3] = {1e-6, 1e-6, 1e-6};
    CHECK(bm_fit_alpha_beta(x1, t1, 3, &a, &b) == -1, "single size rejected");
    CHECK(bm_fit_alpha_beta(x1, t1, 1, &a, &b) == -1, "single point rejected");

    /* Crossover latency-bound -> bandwidth-bound at p = 8:
     * 3α + 3nβ = 14α + 1.75nβ  =>  n = 8.8 α/β. */
    bm_params g0 = m;
    g0.gamma = 0;
    const ck_algo *two[] = {&lat, &bw};
    double sz[8];
    int from[8], to[8], first;
    int k = bm_crossovers(two, 2, &g0, 8, 8, 1 << 30, 0, sz, from, to, 8, &first);
    CHECK(k == 1 && first == 0 && from[0] == 0 && to[0] == 1, "one crossover lat -> bw (k = %d, first = %d)", k, first);
    CHECK(k >= 1 && close_to(sz[0], 8.8e-6 / 1e-9, 1e-6), "crossover at %g, expected 8800", k ? sz[0] : 0);
    /* With a tolerance, the change comes where ring is 2 % faster: later. */
    k = bm_crossovers(two, 2, &g0, 8, 8, 1 << 30, 0.02, sz, from, to, 8, &first);
    CHECK(k == 1 && sz[0] > 8800, "tolerance moves the crossover up (%g)", k ? sz[0] : 0);
    /* An algorithm without a cost function is never the fastest. */
    const ck_algo *three[] = {&nocost, &lat, &bw};
    k = bm_crossovers(three, 3, &g0, 8, 8, 1 << 30, 0, sz, from, to, 8, &first);
    CHECK(k == 1 && first == 1 && to[0] == 2, "no cost, no title (k = %d, first = %d)", k, first);
    /* Ties never count as a change. */
    const ck_algo *same[] = {&bw, &bw};
    CHECK(bm_crossovers(same, 2, &g0, 8, 8, 1 << 30, 0, sz, from, to, 8, &first) == 0 && first == 0, "tie");
    /* No finite time anywhere (NaN or inf parameters, a cost function that
     * gives NaN, no cost function at all): -1 and no index, never a winner. */
    bm_params bad = g0;
    bad.alpha = NAN;
    first = 5;
    CHECK(bm_crossovers(two, 2, &bad, 8, 8, 1 << 30, 0.02, sz, from, to, 8, &first) == -1 && first == -1,
          "NaN alpha: no fastest algorithm (first = %d)", first);
    bad.alpha = INFINITY;
    first = 5;
    CHECK(bm_crossovers(two, 2, &bad, 8, 8, 1 << 30, 0.02, sz, from, to, 8, &first) == -1 && first == -1,
          "inf alpha: no fastest algorithm (first = %d)", first);
    const ck_algo *none[] = {&nocost, &nanc};
    first = 5;
    CHECK(bm_crossovers(none, 2, &g0, 8, 8, 1 << 30, 0.02, sz, from, to, 8, &first) == -1 && first == -1,
          "no cost and a NaN cost: no fastest algorithm (first = %d)", first);
    CHECK(bm_crossovers(none, 2, &g0, 8, 8, 1 << 30, 0.02, sz, from, to, 8, NULL) == -1, "best_at_lo may be NULL");
    /* A NaN cost beside a real one: the real one wins everywhere. */
    const ck_algo *half[] = {&nanc, &lat};
    CHECK(bm_crossovers(half, 2, &g0, 8, 8, 1 << 30, 0.02, sz, from, to, 8, &first) == 0 && first == 1,
          "a NaN cost never wins (first = %d)", first);
    /* A size range the grid cannot walk (it would never end). */
    CHECK(bm_crossovers(two, 2, &g0, 8, 0, 1 << 30, 0, sz, from, to, 8, &first) == -1 && first == -1, "n_lo 0");
    CHECK(bm_crossovers(two, 2, &g0, 8, 8, INFINITY, 0, sz, from, to, 8, &first) == -1, "n_hi inf");

    /* Parameter file round trip, and a clear error on a bad one. */
    char path[] = "/tmp/collbench_test_params_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        bm_params r;
        char err[256];
        CHECK(bm_params_save(path, &m, "test") == 0, "save");
        CHECK(bm_params_load(path, &r, err, sizeof err) == 0, "load: %s", err);
        CHECK(close_to(r.alpha, m.alpha, 1e-5) && close_to(r.beta, m.beta, 1e-5) && close_to(r.gamma, m.gamma, 1e-5) &&
              close_to(r.memcpy_bw, m.memcpy_bw, 1e-5) && r.chunk == m.chunk, "round trip");
        FILE *f = fopen(path, "w");
        fprintf(f, "alpha_us 1\nbeta_ns_per_byte x\n");
        fclose(f);
        CHECK(bm_params_load(path, &r, err, sizeof err) == -1 && strstr(err, ":2:"), "bad line reported: %s", err);
        f = fopen(path, "w");
        fprintf(f, "alpha_us 1\n");
        fclose(f);
        CHECK(bm_params_load(path, &r, err, sizeof err) == -1 && strstr(err, "beta"), "missing key reported: %s", err);
        /* Values that are not finite numbers >= 0: refused, naming the
         * file, the line and the key; r is left alone. */
        static const struct { const char *val, *why; } bad_vals[] = {
            {"nan", "not a finite number"}, {"NAN", "not a finite number"}, {"inf", "not a finite number"},
            {"-inf", "not a finite number"}, {"infinity", "not a finite number"}, {"1e999", "too large"},
            {"-1", "must be at least 0"}, {"0x1p4", "expected a number, not 'x1p4' after it"},
            {"0.1x", "expected a number, not 'x' after it"}, {"1 2", "expected a number, not ' 2' after it"},
        };
        for (size_t i = 0; i < sizeof bad_vals / sizeof bad_vals[0]; i++) {
            f = fopen(path, "w");
            fprintf(f, "# params\nalpha_us 1\n\ngamma_ns_per_byte %s\nbeta_ns_per_byte 0.1\n", bad_vals[i].val);
            fclose(f);
            char want[512];
            snprintf(want, sizeof want, "%s:4: gamma_ns_per_byte '%s': %s", path, bad_vals[i].val, bad_vals[i].why);
            r.alpha = -7;
            int rc = bm_params_load(path, &r, err, sizeof err);
            CHECK(rc == -1 && !strncmp(err, want, strlen(want)) && r.alpha == -7, "'%s' refused: rc %d, [%s], want [%s...]",
                  bad_vals[i].val, rc, rc ? err : "", want);
        }
        /* Finite, but infinite once in the file's units (GB/s -> B/s). */
        f = fopen(path, "w");
        fprintf(f, "alpha_us 1\nbeta_ns_per_byte 0.1\ngamma_ns_per_byte 0.05\nmemcpy_gbs 1e308\n");
        fclose(f);
        CHECK(bm_params_load(path, &r, err, sizeof err) == -1 && strstr(err, ":4: memcpy_gbs '1e308': too large"),
              "overflow in units refused: %s", err);
        /* Written by hand, with spaces and a CR LF: still read. */
        f = fopen(path, "w");
        fprintf(f, "  alpha_us\t 2 \r\nbeta_ns_per_byte 1e-1\ngamma_ns_per_byte .05\nchunk_bytes 65536\n");
        fclose(f);
        CHECK(bm_params_load(path, &r, err, sizeof err) == 0 && close_to(r.alpha, 2e-6, 1e-12) &&
              close_to(r.beta, 0.1e-9, 1e-12) && close_to(r.gamma, 0.05e-9, 1e-12) && r.chunk == 65536,
              "hand-written file: %s", err);
        remove(path);
    }
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "ok", failures);
    return failures != 0;
}
