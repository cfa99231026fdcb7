/*
 * test_model — the trainer's math without MPI:
 *   - finite-difference gradient check of the whole MLP (every parameter),
 *     on CSR input rows, with dropout on (the same mask for every evaluation)
 *     and off, with label smoothing and class weights;
 *   - each layer's backward against finite differences of its forward is
 *     implied by the whole-model check; the bucketed backward (chunked weight
 *     gradients + ready hook) must give the same gradient as the plain one,
 *     and report a non-increasing "ready" frontier that ends at 0;
 *   - Adam and SGD against values worked out by hand; the LR schedule;
 *   - the JSON writer: escaping, nesting, NaN written as null.
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
#include "collkit_util.h"
#include "check.h"


enum { B = 5, D = 9 };

typedef struct { size_t last; int monotone, calls; } frontier;

static void hook(size_t from, void *ctx)
{
    frontier *f = ctx;
    if (from > f->last) f->monotone = 0;
    f->last = from;
    f->calls++;
}

/* The batch as CSR rows of a small "dataset" (rows 0..B-1), as the trainer feeds it. */
static size_t g_ptr[B + 1], g_rows[B];
static int g_idx[B * D];
static float g_val[B * D];
static csr_rows g_x = {g_ptr, g_idx, g_val};

static double loss_at(mlp *m, const int *y, float dropout_seed)
{
    rng_t r = rng_stream((uint64_t)dropout_seed, RNG_DROPOUT, 0, 0);   /* same mask every call */
    return mlp_forward(m, &g_x, g_rows, y, B, 1, &r);
}

static void gradcheck(float dropout, const char *hidden, float smooth, int weighted)
{
    mlp_config cfg = {.in_dim = D, .dropout = dropout, .label_smoothing = smooth,
                      .class_weight = {1.0f, 1.0f, 1.0f, 1.0f}};
    if (weighted) { cfg.class_weight[1] = 3.0f; cfg.class_weight[3] = 0.5f; }
    char err[128];
    mlp_parse_hidden(hidden, &cfg, err, sizeof err);
    mlp m;
    if (mlp_create(&m, &cfg, B)) { CHECK(0, "mlp_create"); return; }
    mlp_init_params(&m, 42);
    /* Non-zero biases so the ReLU kinks are not all at the same place. */
    rng_t r = rng_stream(7, 99, 0, 0);
    for (int i = 0; i < m.nlayers; i++)
        for (int j = 0; j < m.out[i]; j++) m.params[m.b_off[i] + j] = 0.1f * rng_normal(&r);
    /* About half the inputs non-zero, in CSR form; one row is left empty
     * (a text of stopwords only: its layer-0 output is the bias alone), and
     * no row uses the last input. */
    size_t nnz = 0;
    for (int i = 0; i < B; i++) {
        g_rows[i] = (size_t)i;
        for (int k = 0; k < D - 1; k++)   /* input D-1: never non-zero */
            if (i != 2 && rng_uniform(&r) < 0.5f) { g_idx[nnz] = k; g_val[nnz++] = rng_normal(&r); }
        g_ptr[i + 1] = nnz;
    }
    int y[B];
    for (int i = 0; i < B; i++) y[i] = (int)rng_below(&r, MLP_CLASSES);

    mlp_zero_grads(&m);
    loss_at(&m, y, 3);
    mlp_backward(&m, y, B, NULL, NULL, 0);
    float *ana = malloc(m.nparams * sizeof(float));
    memcpy(ana, m.grads, m.nparams * sizeof(float));

    const float h = 3e-3f;
    size_t bad = 0, kinks = 0;
    double worst = 0;
    for (size_t k = 0; k < m.nparams; k++) {
        float save = m.params[k];
        m.params[k] = save + h;
        double lp = loss_at(&m, y, 3);
        m.params[k] = save - h;
        double lm = loss_at(&m, y, 3);
        m.params[k] = save;
        double num = (lp - lm) / (2.0 * h);
        double tol = 2e-3 * fmax(1.0, fmax(fabs(num), fabs(ana[k])));
        double err_k = fabs(num - ana[k]);
        if (err_k > tol) {
            /* A step of h may cross a ReLU kink: then the one-sided slopes
             * differ and the quotient changes with the step. Only a mismatch
             * that persists at steps of h/4 and h/16 is an error (a kink
             * closer than h/16 to the point has odds of about 1e-3 per
             * parameter; a wrong gradient is wrong at every step). */
            int ok_small = 0;
            for (float h2 = h / 4; h2 >= h / 16 && !ok_small; h2 /= 4) {
                m.params[k] = save + h2; lp = loss_at(&m, y, 3);
                m.params[k] = save - h2; lm = loss_at(&m, y, 3);
                m.params[k] = save;
                ok_small = fabs((lp - lm) / (2.0 * h2) - ana[k]) <= 8e-3 * fmax(1.0, fabs(ana[k]));
            }
            if (ok_small) kinks++;
            else bad++;
        }
        if (err_k / fmax(1.0, fabs(num)) > worst && err_k <= tol) worst = err_k / fmax(1.0, fabs(num));
    }
    CHECK(bad == 0, "gradcheck hidden=%s dropout=%.1f smooth %.1f weighted %d: %zu of %zu parameters disagree",
          hidden, dropout, smooth, weighted, bad, m.nparams);
    CHECK(kinks * 10 < m.nparams, "gradcheck: too many kink crossings (%zu of %zu): the check is not testing much",
          kinks, m.nparams);
    printf("gradcheck hidden=%-6s dropout=%.1f smooth=%.1f weights=%d: %zu params, worst relative error %.2e, "
           "%zu kink crossings\n", hidden, dropout, smooth, weighted, m.nparams, worst, kinks);
    /* Input rows no sample has a non-zero in get no gradient (what --sparse-grads relies on). */
    int untouched_zero = 1;
    for (int k = 0; k < D; k++) {
        int used = 0;
        for (size_t q = 0; q < nnz; q++) used |= g_idx[q] == k;
        for (int j = 0; j < m.out[0] && !used; j++) untouched_zero &= ana[m.w_off[0] + (size_t)k * m.out[0] + j] == 0;
    }
    CHECK(untouched_zero, "an input row no sample touches has a non-zero gradient");

    /* Negative control: a wrong gradient must be caught by the same rule. */
    size_t k = m.w_off[0] + 3;
    double e = fabs((double)ana[k]) * 0.05 + 0.01;   /* a gradient 5% + 0.01 off */
    CHECK(e > 2e-3 * fmax(1.0, fabs(ana[k])), "negative control too small to detect");

    /* Bucketed backward: the same gradient, released from the end. */
    frontier f = {m.nparams, 1, 0};
    mlp_zero_grads(&m);
    loss_at(&m, y, 3);
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
    float p[3] = {1.0f, -2.0f, 0.5f}, g[3] = {0.6f, -8.0f, 2e-3f};
    optimizer_step(&o, p, g, 0.5f);   /* the gradient is 0.5 * g */
    CHECK(fabsf(p[0] - 0.99f) < 1e-6f && fabsf(p[1] + 1.99f) < 1e-6f && fabsf(p[2] - 0.49f) < 1e-5f,
          "adam step 1: %g %g %g", p[0], p[1], p[2]);
    CHECK(g[0] == 0.0f && g[1] == 0.0f && g[2] == 0.0f, "the step zeroes the gradient it read");
    /* Step 2 with the same gradient: still lr * sign(g) (m^ = g, v^ = g^2). */
    g[0] = 0.3f; g[1] = -4.0f; g[2] = 1e-3f;
    optimizer_step(&o, p, g, 1.0f);
    CHECK(fabsf(p[0] - 0.98f) < 1e-6f, "adam step 2: %g", p[0]);
    CHECK(o.t == 2, "step counter %lld", (long long)o.t);
    opt_free(&o);

    /* SGD momentum 0.9: v1 = g, v2 = 0.9 g + g. */
    c = (opt_config){.kind = OPT_SGD, .lr = 0.1f, .beta1 = 0.9f, .sched = SCHED_CONST};
    opt_create(&o, &c, 1);
    float q = 1.0f, gq = 2.0f;
    optimizer_step(&o, &q, &gq, 1.0f);
    CHECK(fabsf(q - 0.8f) < 1e-6f, "sgd step 1: %g", q);
    gq = 2.0f;
    optimizer_step(&o, &q, &gq, 1.0f);
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

static void json_writer(void)
{
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    ck_json j;
    ck_json_open(&j, f, CK_JSON_COMPACT);
    ck_json_str(&j, "s", "a\"b\\c\nd");
    ck_json_num(&j, "nan", NAN);
    ck_json_num(&j, "inf", -INFINITY);
    ck_json_num(&j, "x", 0.25);
    ck_json_int(&j, "i", -3);
    ck_json_bool(&j, "t", 1);
    ck_json_obj(&j, "o");
    ck_json_arr(&j, "a");
    ck_json_int(&j, NULL, 1);
    ck_json_int(&j, NULL, 2);
    ck_json_end(&j);
    ck_json_end(&j);
    ck_json_end(&j);
    fclose(f);
    const char *want = "{\"s\":\"a\\\"b\\\\c\\nd\",\"nan\":null,\"inf\":null,\"x\":0.25,\"i\":-3,\"t\":true,"
                       "\"o\":{\"a\":[1,2]}}\n";
    CHECK(!strcmp(buf, want), "json writer: got %s want %s", buf, want);
}

int main(void)
{
    gradcheck(0.0f, "6,5", 0.0f, 0);
    gradcheck(0.3f, "6,5", 0.0f, 0);
    gradcheck(0.0f, "9", 0.0f, 0);
    gradcheck(0.3f, "6,5", 0.2f, 1);
    optimizers();
    json_writer();
    parse();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
