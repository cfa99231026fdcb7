/*
 * ckptdiff — compare the parameters of two tagtrain checkpoints.
 *
 *   build/bin/ckptdiff A/last.ckpt B/last.ckpt [--rtol R] [--quiet]
 *
 * Why: data-parallel training is correct when p ranks with global batch B
 * take the same steps as one rank with batch B. Both runs add the same
 * per-sample gradient terms, only in another order (each rank sums its own
 * rows, then the all-reduce sums the ranks in its own order), and float
 * addition is not associative, so the parameters agree up to a few ulps per
 * step, not bit for bit. This tool says how far apart two runs ended:
 *
 *   err = max over parameters i of |a_i - b_i| / (1 + |a_i|)
 *
 * (absolute for small parameters, relative for large ones), with the tensor
 * and the element where it is largest (W_0 [row, col], b_1 [j], ...), and
 * exits 0 when err <= R (default 1e-5), 1 when it is larger, 2 when the two
 * files cannot be compared (unreadable, other model shapes) or the report
 * could not be written. A wrong
 * all-reduce (a block left out, doubled, from the wrong rank) moves the
 * parameters by far more than R after one step (trainer/README.md has the
 * figures); summation order moves them by ~1e-8 with SGD, up to ~1e-6 with
 * Adam (whose update divides by the gradient's scale, so a gradient that is
 * nearly zero amplifies its rounding).
 *
 * The runs should have the same configuration (seed, global batch, accum,
 * steps); the ones that differ are named, since they explain any difference.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "model.h"
#include "ckpt.h"
#include "optim.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: ckptdiff A.ckpt B.ckpt [--rtol R] [--quiet]\n"
"Compare the parameters of two tagtrain checkpoints (last.ckpt: the latest\n"
"parameters; best.ckpt: the best epoch's). Prints the largest difference\n"
"max |a - b| / (1 + |a|), where it is, and whether it is within R.\n"
"  --rtol R   tolerance (1e-5)\n"
"  --quiet    print nothing; the exit status says it\n"
"Exit: 0 within the tolerance, 1 not within it, 2 not comparable or an error.\n");
}

/* Which tensor element i of the parameter buffer belongs to, as "W_1 [3, 17]". */
static void where(const mlp *m, size_t i, char *out, size_t len)
{
    for (int l = 0; l < m->nlayers; l++) {
        size_t wn = (size_t)m->in[l] * (size_t)m->out[l];
        if (i >= m->w_off[l] && i < m->w_off[l] + wn) {
            size_t k = i - m->w_off[l];
            snprintf(out, len, "W_%d [%zu, %zu]", l, k / (size_t)m->out[l], k % (size_t)m->out[l]);
            return;
        }
        if (i >= m->b_off[l] && i < m->b_off[l] + (size_t)m->out[l]) {
            snprintf(out, len, "b_%d [%zu]", l, i - m->b_off[l]);
            return;
        }
    }
    snprintf(out, len, "element %zu", i);
}

int main(int argc, char **argv)
{
    const char *path[2] = {NULL, NULL};
    double rtol = 1e-5;
    int quiet = 0, np = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        if (!strcmp(a, "--quiet")) { quiet = 1; continue; }
        if (!strcmp(a, "--rtol")) {
            char why[128] = "a value is missing";
            if (i + 1 >= argc || ck_parse_double(argv[i + 1], 0, DBL_MAX, &rtol, why, sizeof why)) {
                fprintf(stderr, "ckptdiff: --rtol: want a number >= 0 (%s)%s%s\n", why, i + 1 < argc ? ", got " : "",
                        i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            i++;
            continue;
        }
        if (a[0] == '-' && a[1]) { fprintf(stderr, "ckptdiff: unknown option '%s'\n", a); usage(stderr); return 2; }
        if (np == 2) { fprintf(stderr, "ckptdiff: two checkpoints, not more ('%s')\n", a); usage(stderr); return 2; }
        path[np++] = a;
    }
    if (np != 2) { usage(stderr); return 2; }

    checkpoint ck[2];
    char err[1024];
    for (int k = 0; k < 2; k++) {
        if (ckpt_load(path[k], &ck[k], err, sizeof err)) {
            fprintf(stderr, "ckptdiff: %s\n", err);
            if (k) ckpt_free(&ck[0]);
            return 2;
        }
    }
    const mlp_config *ca = &ck[0].cfg.model, *cb = &ck[1].cfg.model;
    int same_shape = ck[0].nparams == ck[1].nparams && ca->in_dim == cb->in_dim && ca->nhidden == cb->nhidden;
    for (int l = 0; same_shape && l < ca->nhidden; l++) same_shape = ca->hidden[l] == cb->hidden[l];
    if (!same_shape) {
        fprintf(stderr, "ckptdiff: %s and %s hold different models (%zu and %zu parameters): not comparable\n",
                path[0], path[1], ck[0].nparams, ck[1].nparams);
        ckpt_free(&ck[0]);
        ckpt_free(&ck[1]);
        return 2;
    }

    /* What explains a difference besides the ranks: the runs' settings. */
    char notes[512] = "";
    size_t nl = 0;
    const train_config *ta = &ck[0].cfg, *tb = &ck[1].cfg;
#define NOTE(cond, fmt, ...) \
    if ((cond) && nl < sizeof notes) nl += (size_t)snprintf(notes + nl, sizeof notes - nl, fmt, __VA_ARGS__)
    NOTE(ta->seed != tb->seed, " seed %llu vs %llu;", (unsigned long long)ta->seed, (unsigned long long)tb->seed);
    NOTE(ta->batch != tb->batch, " global batch %d vs %d;", ta->batch, tb->batch);
    NOTE(ta->accum != tb->accum, " accum %d vs %d;", ta->accum, tb->accum);
    NOTE(ta->opt.kind != tb->opt.kind, " optimizer %s vs %s;", opt_kind_name(ta->opt.kind), opt_kind_name(tb->opt.kind));
    NOTE(ta->opt.lr != tb->opt.lr, " lr %g vs %g;", ta->opt.lr, tb->opt.lr);
    NOTE(ck[0].kind != ck[1].kind, " %s vs %s;", ck[0].kind == CKPT_MODEL ? "a model (best.ckpt)" : "a training state (last.ckpt)",
         ck[1].kind == CKPT_MODEL ? "a model (best.ckpt)" : "a training state (last.ckpt)");
    NOTE(ck[0].kind == CKPT_STATE && ck[1].kind == CKPT_STATE && ck[0].opt_steps != ck[1].opt_steps,
         " optimizer steps %lld vs %lld;", (long long)ck[0].opt_steps, (long long)ck[1].opt_steps);
    NOTE(ck[0].epochs_done != ck[1].epochs_done, " epoch %d vs %d;", ck[0].epochs_done, ck[1].epochs_done);
#undef NOTE
    const int dropout = ta->model.dropout > 0 || tb->model.dropout > 0;

    double worst = 0.0, maxabs = 0.0;
    size_t at = 0, nbad = 0;
    int nonfinite = 0;
    for (size_t i = 0; i < ck[0].nparams; i++) {
        const double a = ck[0].params[i], b = ck[1].params[i];
        const double d = fabs(a - b), e = d / (1.0 + fabs(a));
        if (!isfinite(e)) { nonfinite = 1; at = i; worst = INFINITY; break; }
        if (e > worst) { worst = e; at = i; }
        if (d > maxabs) maxabs = d;
        if (e > rtol) nbad++;
    }
    const int ok = !nonfinite && worst <= rtol;
    if (!quiet) {
        char loc[64] = "";
        mlp m;
        if (mlp_create(&m, ca, 1) == 0) {
            where(&m, at, loc, sizeof loc);
            mlp_free(&m);
        } else {
            snprintf(loc, sizeof loc, "element %zu", at);
        }
        printf("ckptdiff: %zu parameters; max |a - b| / (1 + |a|) = %.3g at %s (%.9g vs %.9g); max |a - b| = %.3g\n",
               ck[0].nparams, worst, loc, (double)ck[0].params[at], (double)ck[1].params[at], maxabs);
        if (ok) printf("ckptdiff: equal within %g\n", rtol);
        else printf("ckptdiff: DIFFERENT: %zu parameter%s beyond %g\n", nbad ? nbad : 1, nbad == 1 ? "" : "s", rtol);
        if (notes[0]) printf("ckptdiff: the runs differ in:%s\n", notes);
        if (dropout)
            printf("ckptdiff: dropout %g and %g: each rank draws its own masks, so runs at different rank counts "
                   "drop different units (compare with --dropout 0)\n", ta->model.dropout, tb->model.dropout);
    }
    ckpt_free(&ck[0]);
    ckpt_free(&ck[1]);
    /* 0 equal, 1 different; a report that did not arrive is an error (2). */
    if (ck_stdout_done("ckptdiff")) return 2;
    return ok ? 0 : 1;
}
