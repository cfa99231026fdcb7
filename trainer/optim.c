/*
 * optim.c — optimizer updates and the learning-rate schedule.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "optim.h"

int opt_parse_kind(const char *s, opt_kind *out)
{
    if (!strcmp(s, "adam") || !strcmp(s, "adamw")) { *out = OPT_ADAM; return 0; }
    if (!strcmp(s, "sgd")) { *out = OPT_SGD; return 0; }
    return -1;
}

int opt_parse_sched(const char *s, sched_kind *out)
{
    if (!strcmp(s, "const")) { *out = SCHED_CONST; return 0; }
    if (!strcmp(s, "cosine")) { *out = SCHED_COSINE; return 0; }
    if (!strcmp(s, "step")) { *out = SCHED_STEP; return 0; }
    return -1;
}

const char *opt_kind_name(opt_kind k) { return k == OPT_SGD ? "sgd" : "adam"; }
const char *opt_sched_name(sched_kind k) { return k == SCHED_COSINE ? "cosine" : k == SCHED_STEP ? "step" : "const"; }

int opt_create(optimizer *o, const opt_config *cfg, size_t n)
{
    memset(o, 0, sizeof *o);
    o->cfg = *cfg;
    o->n = n;
    o->m = calloc(n ? n : 1, sizeof(float));
    o->v = calloc(n ? n : 1, sizeof(float));
    if (!o->m || !o->v) { opt_free(o); return -1; }
    return 0;
}

void opt_free(optimizer *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}

float opt_lr_at(const opt_config *c, int64_t t)
{
    if (c->warmup > 0 && t < c->warmup) return c->lr * (float)(t + 1) / (float)c->warmup;
    switch (c->sched) {
    case SCHED_COSINE: {
        int64_t span = c->total_steps - c->warmup;
        if (span <= 0) return c->lr;
        double frac = (double)(t - c->warmup) / (double)span;
        if (frac > 1.0) frac = 1.0;
        double mult = c->min_frac + (1.0 - c->min_frac) * 0.5 * (1.0 + cos(3.141592653589793 * frac));
        return (float)(c->lr * mult);
    }
    case SCHED_STEP:
        if (c->step_every <= 0) return c->lr;
        return (float)(c->lr * pow(c->step_gamma, (double)((t - c->warmup) / c->step_every)));
    default:
        return c->lr;
    }
}

void opt_adam_coeffs(const opt_config *c, int64_t t, float lr, float *step, float *eps, float *decay)
{
    const double bc1 = 1.0 - pow(c->beta1, (double)t), bc2 = 1.0 - pow(c->beta2, (double)t);
    *step = (float)(lr * sqrt(bc2) / bc1);
    *eps = (float)(c->eps * sqrt(bc2));
    *decay = lr * c->weight_decay;
}

void optimizer_step(optimizer *o, float *params, float *grads, float scale)
{
    const opt_config *c = &o->cfg;
    const float lr = opt_lr_at(c, o->t);
    o->t++;
    const size_t n = o->n;
    float *restrict mm = o->m, *restrict vv = o->v, *restrict w = params, *restrict gr = grads;
    if (c->kind == OPT_ADAM) {
        /* Bias correction folded into the step size, as in the Adam paper's
         * "efficient" form; weight decay decoupled from the gradient (AdamW). */
        float step, eps, decay;
        opt_adam_coeffs(c, o->t, lr, &step, &eps, &decay);
        const float b1 = c->beta1, b2 = c->beta2;
        for (size_t i = 0; i < n; i++) {
            const float g = gr[i] * scale;
            gr[i] = 0.0f;
            mm[i] = b1 * mm[i] + (1.0f - b1) * g;
            vv[i] = b2 * vv[i] + (1.0f - b2) * g * g;
            w[i] -= step * mm[i] / (sqrtf(vv[i]) + eps) + decay * w[i];
        }
    } else {
        /* SGD with momentum; weight decay coupled (L2 added to the gradient). */
        const float mu = c->beta1, wd = c->weight_decay;
        for (size_t i = 0; i < n; i++) {
            const float g = gr[i] * scale + wd * w[i];
            gr[i] = 0.0f;
            mm[i] = mu * mm[i] + g;
            w[i] -= lr * mm[i];
        }
    }
}
