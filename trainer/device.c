/*
 * device.c — the tagging MLP on a CUDA GPU (device.h): memory, cuBLAS for
 * the dense layers, the kernels of model_cuda.cu for the rest, in the order
 * of model.c's mlp_forward and mlp_backward.
 *
 * Row-major arrays through column-major cuBLAS: a row-major [r x c] array
 * is the column-major [c x r] transpose, so out = inp . W (row-major) is
 * out^T = W^T . inp^T, i.e. sgemm(N, N, out, b, in, W, inp); the weight
 * gradient dW += inp^T . dout is dW^T += dout^T . inp: sgemm(N, T, out, in,
 * b, dout, inp); the input gradient dinp = dout . W^T is dinp^T = W . dout^T:
 * sgemm(T, N, in, b, out, W, dout).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include "device.h"
#include "model_cuda.h"

_Static_assert(TG_CLASSES == MLP_CLASSES, "model_cuda.h's class count is model.h's");

struct mlp_dev {
    mlp           shape;                /* layout only: its pointers are not used */
    cudaStream_t  s;
    cublasHandle_t blas;
    size_t       *ptr;                  /* the dataset, on the device */
    int          *idx;
    float        *val;
    size_t        nrows;
    float        *params, *grads, *m, *v;
    float        *pre[MLP_MAX_HIDDEN + 1], *act[MLP_MAX_HIDDEN + 2], *mask[MLP_MAX_HIDDEN];
    float        *probs, *dbuf[2];
    size_t       *rows;                 /* this batch's rows and labels */
    int          *labels;
    double       *loss;                 /* per row */
    float        *hmask;                /* host: one layer's dropout mask, drawn here */
    double       *hloss;
    int           max_batch, b, train, have_labels;
    char          err[320];
};

static int fail(mlp_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(mlp_dev *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, sizeof d->err, fmt, ap);
    va_end(ap);
    return -1;
}
#define CU(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) \
        return fail(d, "%s: %s", #call, cudaGetErrorString(e_)); } while (0)
#define BL(call) do { cublasStatus_t e_ = (call); if (e_ != CUBLAS_STATUS_SUCCESS) \
        return fail(d, "%s: cuBLAS status %d", #call, (int)e_); } while (0)

const char *mlp_dev_error(const mlp_dev *d) { return d ? d->err : "no device model"; }
size_t mlp_dev_nparams(const mlp_dev *d) { return d->shape.nparams; }
float *mlp_dev_params(mlp_dev *d) { return d->params; }
float *mlp_dev_grads(mlp_dev *d) { return d->grads; }

static int dalloc(mlp_dev *d, void *pp, size_t bytes)
{
    CU(cudaMalloc((void **)pp, bytes ? bytes : 1));
    CU(cudaMemsetAsync(*(void **)pp, 0, bytes ? bytes : 1, d->s));
    return 0;
}

static int setup(mlp_dev *d, const mlp *shape, const csr_rows *x, size_t nrows, int max_batch)
{
    const mlp *m = &d->shape;
    memcpy(&d->shape, shape, sizeof d->shape);
    d->max_batch = max_batch < 1 ? 1 : max_batch;
    d->nrows = nrows;
    const size_t B = (size_t)d->max_batch, nnz = x->ptr[nrows], n = m->nparams;
    int widest = MLP_CLASSES, widest_hidden = 1;
    for (int i = 0; i < m->nlayers; i++) {
        if (i > 0 && m->in[i] > widest) widest = m->in[i];
        if (i < m->nlayers - 1 && m->out[i] > widest_hidden) widest_hidden = m->out[i];
    }
    CU(cudaStreamCreate(&d->s));
    BL(cublasCreate(&d->blas));
    BL(cublasSetStream(d->blas, d->s));
    /* No TF32 or other reduced-precision shortcuts: the host is the reference. */
    BL(cublasSetMathMode(d->blas, CUBLAS_PEDANTIC_MATH));
    if (dalloc(d, &d->ptr, (nrows + 1) * sizeof(size_t)) || dalloc(d, &d->idx, nnz * sizeof(int)) ||
        dalloc(d, &d->val, nnz * sizeof(float)) || dalloc(d, &d->params, n * sizeof(float)) ||
        dalloc(d, &d->grads, n * sizeof(float)) || dalloc(d, &d->m, n * sizeof(float)) ||
        dalloc(d, &d->v, n * sizeof(float)) || dalloc(d, &d->probs, B * MLP_CLASSES * sizeof(float)) ||
        dalloc(d, &d->dbuf[0], B * (size_t)widest * sizeof(float)) ||
        dalloc(d, &d->dbuf[1], B * (size_t)widest * sizeof(float)) || dalloc(d, &d->rows, B * sizeof(size_t)) ||
        dalloc(d, &d->labels, B * sizeof(int)) || dalloc(d, &d->loss, B * sizeof(double)))
        return -1;
    for (int i = 0; i < m->nlayers; i++) {
        if (dalloc(d, &d->pre[i], B * (size_t)m->out[i] * sizeof(float))) return -1;
        if (i < m->nlayers - 1 && (dalloc(d, &d->act[i + 1], B * (size_t)m->out[i] * sizeof(float)) ||
                                   dalloc(d, &d->mask[i], B * (size_t)m->out[i] * sizeof(float))))
            return -1;
    }
    d->hmask = malloc(B * (size_t)widest_hidden * sizeof(float));
    d->hloss = malloc(B * sizeof(double));
    if (!d->hmask || !d->hloss) return fail(d, "out of host memory");
    CU(cudaMemcpyAsync(d->ptr, x->ptr, (nrows + 1) * sizeof(size_t), cudaMemcpyHostToDevice, d->s));
    CU(cudaMemcpyAsync(d->idx, x->idx, nnz * sizeof(int), cudaMemcpyHostToDevice, d->s));
    CU(cudaMemcpyAsync(d->val, x->val, nnz * sizeof(float), cudaMemcpyHostToDevice, d->s));
    CU(cudaStreamSynchronize(d->s));
    return 0;
}

int mlp_dev_create(mlp_dev **out, const mlp *shape, const csr_rows *x, size_t nrows, int max_batch,
                   char *err, size_t errlen)
{
    mlp_dev *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d) { snprintf(err, errlen, "out of host memory"); return -1; }
    if (setup(d, shape, x, nrows, max_batch)) {
        snprintf(err, errlen, "device model: %s", d->err);
        mlp_dev_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

void mlp_dev_free(mlp_dev *d)
{
    if (!d) return;
    if (d->s) cudaStreamSynchronize(d->s);
    void *bufs[] = {d->ptr, d->idx, d->val, d->params, d->grads, d->m, d->v, d->probs, d->dbuf[0], d->dbuf[1],
                    d->rows, d->labels, d->loss};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) cudaFree(bufs[k]);
    for (int i = 0; i < MLP_MAX_HIDDEN + 1; i++) {
        cudaFree(d->pre[i]);
        if (i < MLP_MAX_HIDDEN) { cudaFree(d->act[i + 1]); cudaFree(d->mask[i]); }
    }
    if (d->blas) cublasDestroy(d->blas);
    if (d->s) cudaStreamDestroy(d->s);
    free(d->hmask);
    free(d->hloss);
    free(d);
}

static int copy_out(mlp_dev *d, void *host, const void *dev, size_t bytes)
{
    CU(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, d->s));
    CU(cudaStreamSynchronize(d->s));
    return 0;
}
static int copy_in(mlp_dev *d, void *dev, const void *host, size_t bytes)
{
    CU(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, d->s));
    CU(cudaStreamSynchronize(d->s));   /* the host buffer may change as soon as this returns */
    return 0;
}

int mlp_dev_set_params(mlp_dev *d, const float *h) { return copy_in(d, d->params, h, d->shape.nparams * sizeof(float)); }
int mlp_dev_get_params(mlp_dev *d, float *h) { return copy_out(d, h, d->params, d->shape.nparams * sizeof(float)); }
int mlp_dev_get_grads(mlp_dev *d, float *h) { return copy_out(d, h, d->grads, d->shape.nparams * sizeof(float)); }
int mlp_dev_get_probs(mlp_dev *d, float *h, int b)
{
    if (b < 0 || b > d->b) return fail(d, "probabilities of %d rows asked, the last forward had %d", b, d->b);
    return copy_out(d, h, d->probs, (size_t)b * MLP_CLASSES * sizeof(float));
}
int mlp_dev_get_moments(mlp_dev *d, float *m, float *v)
{
    const size_t bytes = d->shape.nparams * sizeof(float);
    return copy_out(d, m, d->m, bytes) || copy_out(d, v, d->v, bytes) ? -1 : 0;
}
int mlp_dev_set_moments(mlp_dev *d, const float *m, const float *v)
{
    const size_t bytes = d->shape.nparams * sizeof(float);
    return copy_in(d, d->m, m, bytes) || copy_in(d, d->v, v, bytes) ? -1 : 0;
}

int mlp_dev_zero_grads(mlp_dev *d)
{
    CU(cudaMemsetAsync(d->grads, 0, d->shape.nparams * sizeof(float), d->s));
    return 0;
}

/* The dropout mask of one hidden layer, drawn as relu_dropout_forward draws it. */
static int upload_mask(mlp_dev *d, int i, size_t n, int train, rng_t *rng)
{
    const float p = d->shape.cfg.dropout;
    if (!train || p <= 0.0f) {
        CU(tg_fill(d->mask[i], 1.0f, n, d->s));
        return 0;
    }
    const float keep_scale = 1.0f / (1.0f - p);
    /* The previous layer's copy may still read hmask: wait before drawing over it. */
    CU(cudaStreamSynchronize(d->s));
    for (size_t k = 0; k < n; k++) d->hmask[k] = rng_uniform(rng) < p ? 0.0f : keep_scale;
    CU(cudaMemcpyAsync(d->mask[i], d->hmask, n * sizeof(float), cudaMemcpyHostToDevice, d->s));
    return 0;
}

int mlp_dev_forward(mlp_dev *d, const size_t *rows, const int *labels, int b, int train, rng_t *rng, double *loss)
{
    const mlp *m = &d->shape;
    const int L = m->cfg.nhidden;
    const float one = 1.0f;
    *loss = 0.0;
    if (b < 0 || b > d->max_batch) return fail(d, "batch of %d rows; this model takes 0..%d", b, d->max_batch);
    for (int r = 0; r < b; r++)
        if (rows[r] >= d->nrows) return fail(d, "batch row %zu is past the dataset's %zu rows", rows[r], d->nrows);
    d->b = b;
    d->train = train;
    d->have_labels = labels != NULL;
    if (b == 0) return 0;
    CU(cudaMemcpyAsync(d->rows, rows, (size_t)b * sizeof(size_t), cudaMemcpyHostToDevice, d->s));
    if (labels) CU(cudaMemcpyAsync(d->labels, labels, (size_t)b * sizeof(int), cudaMemcpyHostToDevice, d->s));
    for (int i = 0; i <= L; i++) {
        const float *W = d->params + m->w_off[i], *bias = d->params + m->b_off[i];
        const int in = m->in[i], out = m->out[i];
        if (i == 0) {
            CU(tg_csr_forward(d->pre[0], d->ptr, d->idx, d->val, d->rows, W, bias, b, out, d->s));
        } else {
            CU(tg_bias_rows(d->pre[i], bias, b, out, d->s));
            BL(cublasSgemm(d->blas, CUBLAS_OP_N, CUBLAS_OP_N, out, b, in, &one, W, out, d->act[i], in, &one,
                           d->pre[i], out));
        }
        if (i < L) {
            const size_t n = (size_t)b * out;
            if (upload_mask(d, i, n, train, rng)) return -1;
            CU(tg_relu_mask(d->act[i + 1], d->pre[i], d->mask[i], n, d->s));
        }
    }
    tg_class_weights w;
    memcpy(w.w, m->cfg.class_weight, sizeof w.w);
    CU(tg_softmax_xent(d->probs, d->loss, d->pre[L], labels ? d->labels : NULL, b,
                       train ? m->cfg.label_smoothing : 0.0f, train ? &w : NULL, d->s));
    if (!labels) return 0;
    if (copy_out(d, d->hloss, d->loss, (size_t)b * sizeof(double))) return -1;
    for (int r = 0; r < b; r++) *loss += d->hloss[r];   /* in row order, as the host sums */
    return 0;
}

int mlp_dev_backward(mlp_dev *d, const int *labels, int b)
{
    const mlp *m = &d->shape;
    const int L = m->cfg.nhidden;
    const float one = 1.0f, zero = 0.0f;
    if (b != d->b || !labels || !d->have_labels)
        return fail(d, "backward of %d rows%s after a forward of %d rows%s", b, labels ? "" : " without labels", d->b,
                    d->have_labels ? "" : " without labels");
    if (b == 0) return 0;
    tg_class_weights w;
    memcpy(w.w, m->cfg.class_weight, sizeof w.w);
    int cur = 0;
    CU(tg_softmax_xent_backward(d->dbuf[cur], d->probs, d->labels, b, d->train ? m->cfg.label_smoothing : 0.0f,
                                d->train ? &w : NULL, d->s));
    for (int i = L; i >= 1; i--) {
        float *dinp = d->dbuf[1 - cur];
        const float *dout = d->dbuf[cur], *W = d->params + m->w_off[i];
        float *dW = d->grads + m->w_off[i], *db = d->grads + m->b_off[i];
        const int in = m->in[i], out = m->out[i];
        CU(tg_colsum_add(db, dout, b, out, d->s));
        BL(cublasSgemm(d->blas, CUBLAS_OP_N, CUBLAS_OP_T, out, in, b, &one, dout, out, d->act[i], in, &one, dW, out));
        BL(cublasSgemm(d->blas, CUBLAS_OP_T, CUBLAS_OP_N, in, b, out, &one, W, out, dout, out, &zero, dinp, in));
        CU(tg_relu_mask_backward(dinp, dinp, d->mask[i - 1], d->pre[i - 1], (size_t)b * in, d->s));
        cur = 1 - cur;
    }
    CU(tg_colsum_add(d->grads + m->b_off[0], d->dbuf[cur], b, m->out[0], d->s));
    CU(tg_csr_backward(d->grads + m->w_off[0], d->dbuf[cur], d->ptr, d->idx, d->val, d->rows, b, m->out[0], d->s));
    CU(cudaStreamSynchronize(d->s));   /* the gradient is handed on (an all-reduce on another stream) */
    return 0;
}

int mlp_dev_step(mlp_dev *d, optimizer *o, float scale)
{
    const opt_config *c = &o->cfg;
    const float lr = opt_lr_at(c, o->t);
    o->t++;
    if (c->kind == OPT_ADAM) {
        tg_adam a = {.b1 = c->beta1, .b2 = c->beta2};
        opt_adam_coeffs(c, o->t, lr, &a.step, &a.eps, &a.decay);
        CU(tg_adamw(d->params, d->grads, d->m, d->v, d->shape.nparams, scale, &a, d->s));
    } else {
        CU(tg_sgd(d->params, d->grads, d->m, d->shape.nparams, scale, lr, c->beta1, c->weight_decay, d->s));
    }
    return 0;
}
