/*
 * eval.h — classification metrics: confusion matrix, per-class and weighted
 * precision / recall / F1 (weighted by class support, as scikit-learn's
 * average="weighted", which is what Made With ML reports).
 */
#ifndef TRAINER_EVAL_H
#define TRAINER_EVAL_H

#include <stdio.h>
#include "collkit_util.h"
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

/* Run the model (no dropout, plain cross-entropy) over CSR rows 0..n-1 with
 * labels y, in batches of at most m->max_batch; rows is scratch for
 * m->max_batch indices. */
void eval_model(mlp *m, const csr_rows *x, const int *y, size_t n, size_t *rows, metrics *out);
/* Fill the derived fields from confusion, n and loss. */
void metrics_finish(metrics *mt);
void metrics_print(FILE *f, const metrics *mt, const char *const names[MLP_CLASSES]);
/* The figures as members of an open JSON object (collkit_util.h). */
void metrics_json(ck_json *j, const metrics *mt, const char *const names[MLP_CLASSES]);

#endif
