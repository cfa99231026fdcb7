/*
 * eval.h — classification metrics: confusion matrix, per-class and weighted
 * precision / recall / F1 (weighted by class support, as scikit-learn's
 * average="weighted", which is what Made With ML reports).
 */
#ifndef TRAINER_EVAL_H
#define TRAINER_EVAL_H

#include <stdio.h>
#include "model.h"

typedef struct {
    long   confusion[MLP_CLASSES][MLP_CLASSES];   /* [true][predicted] */
    long   n;
    double loss;                                  /* mean cross-entropy */
    double accuracy;
    double precision[MLP_CLASSES], recall[MLP_CLASSES], f1[MLP_CLASSES];
    long   support[MLP_CLASSES];
    double w_precision, w_recall, w_f1;
} metrics;

/* Run the model (no dropout) over CSR rows 0..n-1 (ptr/idx/val as in
 * mlp_sparse) in batches of at most m->max_batch; rows is scratch for
 * m->max_batch indices. */
void eval_model_sparse(mlp *m, const size_t *ptr, const int *idx, const float *val, const int *y, size_t n,
                       size_t *rows, metrics *out);
/* Fill the derived fields from confusion, n and loss. */
void metrics_finish(metrics *mt);
void metrics_print(FILE *f, const metrics *mt, const char *const names[MLP_CLASSES]);
/* JSON object with the figures; returns 0 or -1 (write error). */
int  metrics_write_json(FILE *f, const metrics *mt, const char *const names[MLP_CLASSES]);

#endif
