/*
 * optim.h — Adam(W) and SGD with momentum over the flat parameter buffer, and
 * the learning-rate schedule. State is two flat buffers the size of the
 * parameters (m, v; SGD uses m as its momentum buffer) plus a step counter,
 * which is what a checkpoint stores.
 */
#ifndef TRAINER_OPTIM_H
#define TRAINER_OPTIM_H

#include <stddef.h>
#include <stdint.h>

typedef enum { OPT_ADAM = 0, OPT_SGD = 1 } opt_kind;
typedef enum { SCHED_CONST = 0, SCHED_COSINE = 1, SCHED_STEP = 2 } sched_kind;

typedef struct {
    opt_kind   kind;
    float      lr;            /* peak learning rate */
    float      beta1, beta2;  /* Adam; beta1 is also SGD's momentum */
    float      eps;
    float      weight_decay;  /* decoupled (AdamW-style; SGD: added to the gradient) */
    sched_kind sched;
    int64_t    warmup;        /* linear warmup steps */
    int64_t    total_steps;   /* cosine: decays to lr*min_frac at this step */
    float      min_frac;
    int64_t    step_every;    /* step schedule: multiply by step_gamma every step_every steps */
    float      step_gamma;
} opt_config;

typedef struct {
    opt_config cfg;
    size_t     n;
    float     *m, *v;
    int64_t    t;             /* optimizer steps taken */
} optimizer;

int   opt_parse_kind(const char *s, opt_kind *out);
int   opt_parse_sched(const char *s, sched_kind *out);
const char *opt_kind_name(opt_kind k);
const char *opt_sched_name(sched_kind k);

int   opt_create(optimizer *o, const opt_config *cfg, size_t n);
void  opt_free(optimizer *o);
/* Learning rate for step t (0-based). */
float opt_lr_at(const opt_config *c, int64_t t);
/* One optimizer step: the gradient is scale * grads[i] (the data-parallel
 * step passes 1 / samples in the step, turning the all-reduced SUM into the
 * mean), and grads is zeroed as it is read, ready for the next step's
 * accumulation. One pass over the buffers instead of three (scale, update,
 * zero): for a wide input layer the step is memory-bound, so passes are time.
 * Advances o->t. */
void  optimizer_step(optimizer *o, float *params, float *grads, float scale);
/* AdamW's per-step scalars for step t (1-based, after the increment): the
 * step size with both bias corrections folded in, eps scaled alike, and the
 * decoupled decay factor lr * weight_decay. optimizer_step and the device
 * step (device.c) both use them. */
void  opt_adam_coeffs(const opt_config *c, int64_t t, float lr, float *step, float *eps, float *decay);

#endif
