/*
 * test_trainer_cuda — the tagging MLP on the GPU (trainer/device.h) against
 * the host model, the reference: the same synthetic CSR data, seed, dropout,
 * label smoothing and class weights, a few AdamW steps and a few SGD steps
 * on both. Checked, within a relative tolerance of 1e-4 (|a - b| / (1 + |a|);
 * float rounding in another order: cuBLAS sums, atomics in the input layer's
 * scatter-add, the device's expf):
 *   - each step's training loss;
 *   - the gradient of the first step (every parameter);
 *   - the parameters after the steps;
 *   - an evaluation forward's probabilities;
 *   - a batch of 0 rows and a row past the dataset: no work, and a clear error.
 * Without a CUDA device it prints why and exits 77 (CTest: skipped).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit.h"
#include "device.h"
#include "model.h"
#include "optim.h"
#include "rng.h"

#define TOL 1e-4
static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                                              printf(__VA_ARGS__); printf("\n"); } } while (0)

static double worst(const float *a, const float *b, size_t n, size_t *at)
{
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)a[i]));
        if (!(e <= w)) { w = e; *at = i; }   /* NaN counts as worst */
    }
    return w;
}

enum { ROWS = 96, D = 700, BATCH = 24 };

int main(void)
{
    int ndev = 0;
    char why[320];
    switch (ck_gpu_count(&ndev, why, sizeof why)) {
    case CK_SUCCESS: break;
    case CK_ERR_UNSUPPORTED: printf("SKIP: %s\n", why); return 77;
    default: printf("FAIL: %s\n", why); return 1;
    }

    /* Synthetic TF-IDF-like rows: 3..40 non-zeros each, labels 0..3. */
    static size_t ptr[ROWS + 1];
    static int idx[ROWS * 40], labels[ROWS];
    static float val[ROWS * 40];
    rng_t r = rng_stream(7, RNG_SHUFFLE, 0, 0);
    for (int i = 0; i < ROWS; i++) {
        size_t nz = 3 + rng_below(&r, 38);
        ptr[i + 1] = ptr[i] + nz;
        for (size_t e = ptr[i]; e < ptr[i + 1]; e++) { idx[e] = (int)rng_below(&r, D); val[e] = rng_uniform(&r); }
        labels[i] = (int)rng_below(&r, 4);
    }
    csr_rows x = {ptr, idx, val};

    mlp_config cfg = {.in_dim = D, .nhidden = 2, .hidden = {48, 24}, .dropout = 0.2f, .label_smoothing = 0.1f,
                      .class_weight = {1.0f, 2.0f, 0.5f, 1.5f}};
    mlp host;
    mlp_dev *dev = NULL;
    if (mlp_create(&host, &cfg, BATCH)) { printf("FAIL: mlp_create\n"); return 1; }
    mlp_init_params(&host, 11);
    if (mlp_dev_create(&dev, &host, &x, ROWS, BATCH, why, sizeof why) || mlp_dev_set_params(dev, host.params)) {
        printf("FAIL: %s\n", dev ? mlp_dev_error(dev) : why);
        return 1;
    }
    const size_t n = host.nparams;
    float *got = malloc(n * sizeof *got);
    size_t rows[BATCH];
    for (int kind = 0; kind < 2 && got; kind++) {
        opt_config oc = {.kind = kind ? OPT_SGD : OPT_ADAM, .lr = kind ? 0.05f : 0.01f, .beta1 = 0.9f,
                         .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f, .sched = SCHED_COSINE, .warmup = 2,
                         .total_steps = 8, .min_frac = 0.1f};
        optimizer oh, od;
        if (opt_create(&oh, &oc, n) || opt_create(&od, &oc, n)) { printf("FAIL: opt_create\n"); return 1; }
        /* Each optimizer starts from the host's parameters and zero moments. */
        CHECK(!mlp_dev_set_params(dev, host.params) && !mlp_dev_set_moments(dev, oh.m, oh.v), "reset: %s",
              mlp_dev_error(dev));
        rng_t rh = rng_stream(3, RNG_DROPOUT, 0, (uint64_t)kind), rd = rh;
        for (int step = 0; step < 4; step++) {
            for (int k = 0; k < BATCH; k++) rows[k] = (size_t)((step * BATCH + k * 5 + kind) % ROWS);
            int lab[BATCH];
            for (int k = 0; k < BATCH; k++) lab[k] = labels[rows[k]];
            double lh = mlp_forward(&host, &x, rows, lab, BATCH, 1, &rh), ld = 0;
            mlp_backward(&host, lab, BATCH, NULL, NULL, 0);
            int rc = mlp_dev_forward(dev, rows, lab, BATCH, 1, &rd, &ld);
            if (!rc) rc = mlp_dev_backward(dev, lab, BATCH);
            CHECK(!rc, "device step: %s", mlp_dev_error(dev));
            CHECK(fabs(lh - ld) / (1 + fabs(lh)) < TOL, "%s step %d: loss host %.9g, device %.9g",
                  kind ? "sgd" : "adamw", step, lh, ld);
            if (step == 0 && !mlp_dev_get_grads(dev, got)) {
                size_t at = 0;
                double e = worst(host.grads, got, n, &at);
                CHECK(e < TOL, "%s: first gradient differs: %.3g at %zu (host %.9g, device %.9g)",
                      kind ? "sgd" : "adamw", e, at, host.grads[at], got[at]);
            }
            optimizer_step(&oh, host.params, host.grads, 1.0f / BATCH);
            CHECK(!mlp_dev_step(dev, &od, 1.0f / BATCH), "device optimizer: %s", mlp_dev_error(dev));
        }
        CHECK(oh.t == od.t, "step counters %lld and %lld", (long long)oh.t, (long long)od.t);
        if (!mlp_dev_get_params(dev, got)) {
            size_t at = 0;
            double e = worst(host.params, got, n, &at);
            CHECK(e < TOL, "%s: parameters after 4 steps differ: %.3g at %zu (host %.9g, device %.9g)",
                  kind ? "sgd" : "adamw", e, at, host.params[at], got[at]);
            printf("%s: 4 steps, parameters within %.2g of the host's\n", kind ? "sgd" : "adamw", e);
        }
        opt_free(&oh);
        opt_free(&od);
    }
    /* Evaluation: no dropout, no smoothing, no labels. */
    for (int k = 0; k < BATCH; k++) rows[k] = (size_t)(ROWS - 1 - k);
    double l0 = 0;
    mlp_forward(&host, &x, rows, NULL, BATCH, 0, NULL);
    CHECK(!mlp_dev_set_params(dev, host.params) && !mlp_dev_forward(dev, rows, NULL, BATCH, 0, NULL, &l0) &&
          !mlp_dev_get_probs(dev, got, BATCH), "eval forward: %s", mlp_dev_error(dev));
    size_t at = 0;
    double e = worst(host.probs, got, (size_t)BATCH * MLP_CLASSES, &at);
    CHECK(e < TOL, "eval probabilities differ: %.3g at %zu", e, at);
    /* Edges. */
    CHECK(!mlp_dev_forward(dev, rows, NULL, 0, 1, NULL, &l0) && l0 == 0, "a batch of 0 rows");
    rows[0] = ROWS;
    CHECK(mlp_dev_forward(dev, rows, NULL, 1, 0, NULL, &l0) && strstr(mlp_dev_error(dev), "past the dataset"),
          "a row past the dataset is refused: %s", mlp_dev_error(dev));
    mlp_dev_free(dev);
    mlp_free(&host);
    free(got);
    printf("test_trainer_cuda: %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
