/*
 * eval.c — evaluation and metric reports.
 */
#include <string.h>
#include "eval.h"

void eval_model(mlp *m, const csr_rows *x, const int *y, size_t n, size_t *rows, metrics *out)
{
    memset(out, 0, sizeof *out);
    double loss = 0.0;
    for (size_t s = 0; s < n; s += (size_t)m->max_batch) {
        int b = (int)(n - s < (size_t)m->max_batch ? n - s : (size_t)m->max_batch);
        for (int r = 0; r < b; r++) rows[r] = s + (size_t)r;
        loss += mlp_forward(m, x, rows, y + s, b, 0, NULL);
        for (int r = 0; r < b; r++) {
            const float *pr = m->probs + (size_t)r * MLP_CLASSES;
            int best = 0;
            for (int j = 1; j < MLP_CLASSES; j++) if (pr[j] > pr[best]) best = j;
            out->confusion[y[s + r]][best]++;
        }
    }
    out->n = (long)n;
    out->loss = n ? loss / (double)n : 0.0;
    metrics_finish(out);
}

void metrics_finish(metrics *mt)
{
    long correct = 0;
    mt->w_precision = mt->w_recall = mt->w_f1 = 0.0;
    for (int c = 0; c < MLP_CLASSES; c++) {
        long tp = mt->confusion[c][c], pred = 0, sup = 0;
        for (int k = 0; k < MLP_CLASSES; k++) { pred += mt->confusion[k][c]; sup += mt->confusion[c][k]; }
        correct += tp;
        /* A class never predicted (or never present) scores 0, as scikit-learn's zero_division=0. */
        mt->precision[c] = pred ? (double)tp / pred : 0.0;
        mt->recall[c] = sup ? (double)tp / sup : 0.0;
        double ps = mt->precision[c] + mt->recall[c];
        mt->f1[c] = ps > 0 ? 2.0 * mt->precision[c] * mt->recall[c] / ps : 0.0;
        mt->support[c] = sup;
        if (mt->n) {
            double w = (double)sup / (double)mt->n;
            mt->w_precision += w * mt->precision[c];
            mt->w_recall += w * mt->recall[c];
            mt->w_f1 += w * mt->f1[c];
        }
    }
    mt->accuracy = mt->n ? (double)correct / (double)mt->n : 0.0;
}

void metrics_print(FILE *f, const metrics *mt, const char *const names[MLP_CLASSES])
{
    fprintf(f, "%-28s %9s %9s %9s %8s\n", "class", "precision", "recall", "f1", "support");
    for (int c = 0; c < MLP_CLASSES; c++)
        fprintf(f, "%-28s %9.4f %9.4f %9.4f %8ld\n", names[c], mt->precision[c], mt->recall[c], mt->f1[c],
                mt->support[c]);
    fprintf(f, "%-28s %9.4f %9.4f %9.4f %8ld\n", "weighted avg", mt->w_precision, mt->w_recall, mt->w_f1, mt->n);
    fprintf(f, "accuracy %.4f   loss %.4f\n", mt->accuracy, mt->loss);
    fprintf(f, "confusion matrix (rows: true, columns: predicted)\n%-28s", "");
    for (int c = 0; c < MLP_CLASSES; c++) fprintf(f, " %6.6s", names[c]);
    fprintf(f, "\n");
    for (int c = 0; c < MLP_CLASSES; c++) {
        fprintf(f, "%-28s", names[c]);
        for (int k = 0; k < MLP_CLASSES; k++) fprintf(f, " %6ld", mt->confusion[c][k]);
        fprintf(f, "\n");
    }
}

void metrics_json(ck_json *j, const metrics *mt, const char *const names[MLP_CLASSES])
{
    ck_json_int(j, "n", mt->n);
    ck_json_num(j, "loss", mt->loss);
    ck_json_num(j, "accuracy", mt->accuracy);
    ck_json_obj(j, "weighted");
    ck_json_num(j, "precision", mt->w_precision);
    ck_json_num(j, "recall", mt->w_recall);
    ck_json_num(j, "f1", mt->w_f1);
    ck_json_end(j);
    ck_json_obj(j, "per_class");
    for (int c = 0; c < MLP_CLASSES; c++) {
        ck_json_obj(j, names[c]);
        ck_json_num(j, "precision", mt->precision[c]);
        ck_json_num(j, "recall", mt->recall[c]);
        ck_json_num(j, "f1", mt->f1[c]);
        ck_json_int(j, "support", mt->support[c]);
        ck_json_end(j);
    }
    ck_json_end(j);
    ck_json_arr(j, "labels");
    for (int c = 0; c < MLP_CLASSES; c++) ck_json_str(j, NULL, names[c]);
    ck_json_end(j);
    ck_json_arr(j, "confusion");
    for (int c = 0; c < MLP_CLASSES; c++) {
        ck_json_arr(j, NULL);
        for (int k = 0; k < MLP_CLASSES; k++) ck_json_int(j, NULL, mt->confusion[c][k]);
        ck_json_end(j);
    }
    ck_json_end(j);
}
