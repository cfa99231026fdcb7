/*
 * test_model — the trainer's math without MPI:
 *   - finite-difference gradient check of the whole MLP (every parameter),
 *     with dropout on (the same mask for every evaluation) and off;
 *   - each layer's backward against finite differences of its forward is
 *     implied by the whole-model check; the bucketed backward (chunked weight
 *     gradients + ready hook) must give the same gradient as the plain one,
 *     and report a non-increasing "ready" frontier that ends at 0;
 *   - Adam and SGD against values worked out by hand; the LR schedule.
 *
 * Tolerance of the gradient check. The model runs in float; the loss is
 * accumulated in double. With central differences at h = 3e-3 the truncation
 * error is O(h^2 * f''') ~ 1e-5 and the rounding error ~ 1e-7 * |loss| / h ~ 1e-4, so
 * we ask |num - ana| <= 2e-3 * max(1, |num|, |ana|) per parameter.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "optim.h"
#include "check.h"


enum { B = 5, D = 7 };

typedef struct { size_t last; int monotone, calls; } frontier;

static void hook(size_t from, void *ctx)
{
    frontier *f = ctx;
    if (from > f->last) f->monotone = 0;
    f->last = from;
    f->calls++;
}

static double loss_at(mlp *m, const float *x, const int *y, float dropout_seed)
{
    rng_t r = rng_stream((uint64_t)dropout_seed, RNG_DROPOUT, 0, 0);   /* same mask every call */
    return mlp_forward(m, x, y, B, 1, &r);
}

static void gradcheck(float dropout, const char *hidden, int sparse)
{
    mlp_config cfg = {.in_dim = D, .dropout = dropout};
    char err[128];
    mlp_parse_hidden(hidden, &cfg, err, sizeof err);
    mlp m;
    if (mlp_create(&m, &cfg, B)) { CHECK(0, "mlp_create"); return; }
    mlp_init_params(&m, 42);
    /* Non-zero biases so the ReLU kinks are not all at the same place. */
    rng_t r = rng_stream(7, 99, 0, 0);
    for (int i = 0; i < m.nlayers; i++)
        for (int j = 0; j < m.out[i]; j++) m.params[m.b_off[i] + j] = 0.1f * rng_normal(&r);
    float x[B * D];
    int y[B];
    for (int i = 0; i < B * D; i++) x[i] = rng_normal(&r);
    /* sparse: 4 non-zeros in the batch, below mlp_forward's 1/8 density bound,
     * so the input layer takes its non-zero-walking path */
    if (sparse)
        for (int i = 0; i < B * D; i++) if (i % 9 != 2) x[i] = 0.0f;
    for (int i = 0; i < B; i++) y[i] = (int)rng_below(&r, MLP_CLASSES);

    mlp_zero_grads(&m);
    loss_at(&m, x, y, 3);
    mlp_backward(&m, y, B, NULL, NULL, 0);
    CHECK(m.sparse_in == sparse, "sparse input path %s", sparse ? "not taken" : "taken on dense input");
    float *ana = malloc(m.nparams * sizeof(float));
    memcpy(ana, m.grads, m.nparams * sizeof(float));

    const float h = 3e-3f;
    size_t bad = 0, kinks = 0;
    double worst = 0;
    for (size_t k = 0; k < m.nparams; k++) {
        float save = m.params[k];
        m.params[k] = save + h;
        double lp = loss_at(&m, x, y, 3);
        m.params[k] = save - h;
        double lm = loss_at(&m, x, y, 3);
        m.params[k] = save;
        double num = (lp - lm) / (2.0 * h);
        double tol = 2e-3 * fmax(1.0, fmax(fabs(num), fabs(ana[k])));
        double e = fabs(num - ana[k]);
        if (e > tol) {
            /* A step of h may cross a ReLU kink: then the one-sided slopes
             * differ and so do the quotients at h and h/4. Only a mismatch that
             * persists at a smaller step is an error. */
            const float h2 = h / 4;
            m.params[k] = save + h2; lp = loss_at(&m, x, y, 3);
            m.params[k] = save - h2; lm = loss_at(&m, x, y, 3);
            m.params[k] = save;
            double num2 = (lp - lm) / (2.0 * h2);
            if (fabs(num2 - ana[k]) > 8e-3 * fmax(1.0, fabs(ana[k]))) bad++;
            else kinks++;
        }
        if (e / fmax(1.0, fabs(num)) > worst && e <= tol) worst = e / fmax(1.0, fabs(num));
    }
    CHECK(bad == 0, "gradcheck hidden=%s dropout=%.1f: %zu of %zu parameters disagree", hidden, dropout, bad, m.nparams);
    CHECK(kinks * 10 < m.nparams, "gradcheck: too many kink crossings (%zu of %zu): the check is not testing much",
          kinks, m.nparams);
    printf("gradcheck hidden=%-6s dropout=%.1f%s: %zu params, worst relative error %.2e, %zu kink crossings\n",
           hidden, dropout, sparse ? " sparse input" : "", m.nparams, worst, kinks);

    /* Negative control: a wrong gradient must be caught by the same rule. */
    size_t k = m.w_off[0] + 3;
    double e = fabs((double)ana[k] * 1.05 + 0.01 - ana[k]);
    CHECK(e > 2e-3 * fmax(1.0, fabs(ana[k])), "negative control too small to detect");

    /* Bucketed backward: the same gradient, released from the end. */
    frontier f = {m.nparams, 1, 0};
    mlp_zero_grads(&m);
    loss_at(&m, x, y, 3);
    mlp_backward(&m, y, B, hook, &f, 3);
    CHECK(f.monotone && f.last == 0 && f.calls > m.nlayers, "ready frontier: monotone %d, ends at %zu, %d calls",
          f.monotone, f.last, f.calls);
    size_t diff = 0;
    for (size_t i = 0; i < m.nparams; i++) diff += m.grads[i] != ana[i];
    CHECK(diff == 0, "chunked backward differs from plain backward in %zu of %zu gradients", diff, m.nparams);
    free(ana);
    mlp_free(&m);
}

static void optimizers(void)
{
    /* Adam, one step: m = 0.1 g, v = 0.001 g^2, bias-corrected m^ = g, v^ = g^2,
     * so the update is lr * g / (|g| + eps) = lr * sign(g). */
    opt_config c = {.kind = OPT_ADAM, .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .sched = SCHED_CONST};
    optimizer o;
    opt_create(&o, &c, 3);
    float p[3] = {1.0f, -2.0f, 0.5f}, g[3] = {0.3f, -4.0f, 1e-3f};
    opt_step(&o, p, g);
    CHECK(fabsf(p[0] - 0.99f) < 1e-6f && fabsf(p[1] + 1.99f) < 1e-6f && fabsf(p[2] - 0.49f) < 1e-5f,
          "adam step 1: %g %g %g", p[0], p[1], p[2]);
    /* Step 2 with the same gradient: still lr * sign(g) (m^ = g, v^ = g^2). */
    opt_step(&o, p, g);
    CHECK(fabsf(p[0] - 0.98f) < 1e-6f, "adam step 2: %g", p[0]);
    opt_free(&o);

    /* SGD momentum 0.9: v1 = g, v2 = 0.9 g + g. */
    c = (opt_config){.kind = OPT_SGD, .lr = 0.1f, .beta1 = 0.9f, .sched = SCHED_CONST};
    opt_create(&o, &c, 1);
    float q = 1.0f, gq = 2.0f;
    opt_step(&o, &q, &gq);
    CHECK(fabsf(q - 0.8f) < 1e-6f, "sgd step 1: %g", q);
    opt_step(&o, &q, &gq);
    CHECK(fabsf(q - (0.8f - 0.1f * 3.8f)) < 1e-6f, "sgd step 2: %g", q);
    opt_free(&o);

    /* Schedule: warmup 4 steps to lr, cosine to 0 at step 14. */
    c = (opt_config){.lr = 1.0f, .sched = SCHED_COSINE, .warmup = 4, .total_steps = 14, .min_frac = 0.0f};
    CHECK(fabsf(opt_lr_at(&c, 0) - 0.25f) < 1e-6f && fabsf(opt_lr_at(&c, 3) - 1.0f) < 1e-6f, "warmup");
    CHECK(fabsf(opt_lr_at(&c, 4) - 1.0f) < 1e-6f && fabsf(opt_lr_at(&c, 9) - 0.5f) < 1e-6f &&
          fabsf(opt_lr_at(&c, 14)) < 1e-6f, "cosine: %g %g %g", opt_lr_at(&c, 4), opt_lr_at(&c, 9), opt_lr_at(&c, 14));
    c.sched = SCHED_STEP; c.step_every = 5; c.step_gamma = 0.1f;
    CHECK(fabsf(opt_lr_at(&c, 8) - 1.0f) < 1e-6f && fabsf(opt_lr_at(&c, 9) - 0.1f) < 1e-6f, "step schedule");
}

static void parse(void)
{
    mlp_config c;
    char err[256];
    CHECK(mlp_parse_hidden("256,128", &c, err, sizeof err) == 0 && c.nhidden == 2 && c.hidden[1] == 128, "parse 256,128");
    CHECK(mlp_parse_hidden("0", &c, err, sizeof err) != 0, "parse 0 refused");
    CHECK(mlp_parse_hidden("12,", &c, err, sizeof err) != 0, "trailing comma refused");
    CHECK(mlp_parse_hidden("a", &c, err, sizeof err) != 0, "letters refused");
    CHECK(mlp_parse_hidden("1,2,3,4,5,6,7,8,9", &c, err, sizeof err) != 0, "too deep refused");
}

int main(void)
{
    gradcheck(0.0f, "6,5", 0);
    gradcheck(0.3f, "6,5", 0);
    gradcheck(0.0f, "9", 0);
    gradcheck(0.3f, "6,5", 1);
    optimizers();
    parse();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
