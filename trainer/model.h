/*
 * model.h — the tagging MLP, llm.c style: every layer is a *_forward /
 * *_backward pair over flat row-major float arrays, all parameters live in ONE
 * contiguous buffer and all gradients in ONE buffer of the same layout, so the
 * data-parallel gradient all-reduce is a single ck_allreduce (or buckets that
 * are slices of it).
 *
 * Shapes (b = batch rows, D = input features, H_i = hidden widths, C = 4):
 *   layer i (i = 0..L): in_i -> out_i, in_0 = D, out_L = C, otherwise H_i
 *     W_i  [in_i x out_i]   (row-major: W_i[k*out_i + j] maps input k to unit j)
 *     b_i  [out_i]
 *   parameter buffer: W_0 b_0 W_1 b_1 ... W_L b_L
 *   activations:  a_0 = x [b x D]
 *                 z_i = a_i W_i + b_i             [b x out_i]
 *                 a_{i+1} = dropout(relu(z_i))    (hidden layers only)
 *                 logits = z_L, probs = softmax(logits)
 *   loss = SUM over the rows of -log probs[label]  (a sum, not a mean: the
 *   data-parallel step adds the sums of all ranks and divides once by the
 *   global batch, which is what makes p ranks equal one rank)
 */
#ifndef TRAINER_MODEL_H
#define TRAINER_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "rng.h"

#define MLP_MAX_HIDDEN 8
#define MLP_CLASSES 4

typedef struct {
    int   in_dim;                    /* D */
    int   nhidden;                   /* L */
    int   hidden[MLP_MAX_HIDDEN];    /* H_0 .. H_{L-1} */
    float dropout;                   /* drop probability for hidden activations, in [0, 1) */
    float label_smoothing;           /* eps in [0, 1): training target (1 - eps) onehot + eps / C */
} mlp_config;

/* A batch of sparse input rows without copying them: batch row r is dataset
 * row rows[r], whose non-zeros are idx[ptr[rows[r]] .. ptr[rows[r] + 1]) with
 * values val[same range] (CSR of the whole dataset, column indices < in_dim). */
typedef struct {
    const size_t *ptr;
    const int    *idx;
    const float  *val;
    const size_t *rows;
} mlp_sparse;

typedef struct {
    mlp_config cfg;
    int     nlayers;                 /* L + 1 */
    int     in[MLP_MAX_HIDDEN + 1], out[MLP_MAX_HIDDEN + 1];
    size_t  w_off[MLP_MAX_HIDDEN + 1], b_off[MLP_MAX_HIDDEN + 1];  /* offsets into params/grads */
    size_t  nparams;
    float  *params;                  /* [nparams] */
    float  *grads;                   /* [nparams], same layout */

    /* activations for up to max_batch rows */
    int     max_batch;
    float  *act[MLP_MAX_HIDDEN + 2]; /* act[i] = a_i [b x in_i]; act[0] points at the caller's x */
    float  *pre[MLP_MAX_HIDDEN + 1]; /* z_i [b x out_i] */
    float  *mask[MLP_MAX_HIDDEN];    /* dropout scale per hidden unit: 0 or 1/(1-p) */
    float  *probs;                   /* [b x C] */
    float  *dbuf[2];                 /* ping-pong buffers for d(activation) [b x max width] */
    int     sparse_in;               /* the last forward's input was sparse: layer 0 walks non-zeros */
    mlp_sparse csr;                  /* the last forward's CSR input (ptr == NULL: dense input) */
    float   smooth_now;              /* label smoothing of the last forward (0 unless training) */
    int     grads_zero;              /* grads is known to be all zeros (skip mlp_zero_grads) */
} mlp;

/* Parse "256,128" into cfg->hidden; returns 0, or -1 with a message in err. */
int  mlp_parse_hidden(const char *s, mlp_config *cfg, char *err, size_t errlen);
/* Allocate parameters, gradients and activations; parameters are NOT initialised. */
int  mlp_create(mlp *m, const mlp_config *cfg, int max_batch);
void mlp_free(mlp *m);
/* He-normal weights for ReLU layers, Glorot-uniform for the logits layer, zero biases. */
void mlp_init_params(mlp *m, uint64_t seed);

/* Layers. */
void linear_forward(float *out, const float *inp, const float *W, const float *bias, int b, int in, int out_dim);
/* Accumulates (+=) into dW and dbias; writes dinp unless it is NULL. */
void linear_backward(float *dinp, float *dW, float *dbias, const float *dout, const float *inp,
                     const float *W, int b, int in, int out_dim);
/* out = relu(z) * mask; mask drawn from rng when train and p > 0, else all ones. */
void relu_dropout_forward(float *out, float *mask, const float *z, size_t n, float p, int train, rng_t *rng);
/* dz = dout * mask * [z > 0] (in place in dout allowed). */
void relu_dropout_backward(float *dz, const float *dout, const float *mask, const float *z, size_t n);
/* probs = softmax(logits); returns the summed cross-entropy over rows (labels may be NULL: 0). */
double softmax_xent_forward(float *probs, const float *logits, const int *labels, int b, int c);
/* dlogits = probs - onehot(label) (gradient of the summed loss). */
void softmax_xent_backward(float *dlogits, const float *probs, const int *labels, int b, int c);

/* Label-smoothed versions (eps = 0: the two above). The loss is the
 * cross-entropy against (1 - eps) onehot + eps / c; its gradient probs - target. */
double softmax_xent_smooth_forward(float *probs, const float *logits, const int *labels, int b, int c, float eps);
void softmax_xent_smooth_backward(float *dlogits, const float *probs, const int *labels, int b, int c, float eps);

/* Whole model (training uses cfg.label_smoothing when train is set). forward returns the summed loss (0 when labels is NULL) and
 * leaves probabilities in m->probs.
 * backward accumulates into m->grads, walking the buffer from its END to its
 * start (logits layer first). When `ready` is given it is called each time a
 * suffix of the gradient buffer becomes final: ready(from, ctx) means
 * grads[from .. nparams) will not change again in this backward pass. That is
 * the hook DDP-style buckets are launched from. With chunk > 0 every weight
 * gradient is computed in row blocks of about `chunk` elements (last block
 * first), so even one huge input layer releases its gradient in pieces that
 * can travel while the rest is still being computed. */
double mlp_forward(mlp *m, const float *x, const int *labels, int b, int train, rng_t *rng);
/* The same with a CSR batch (kept by pointer: it must outlive the backward
 * pass). Layer 0 then costs O(non-zeros x H_0) instead of O(b x D x H_0). */
double mlp_forward_sparse(mlp *m, const mlp_sparse *x, const int *labels, int b, int train, rng_t *rng);
typedef void (*mlp_ready_fn)(size_t from, void *ctx);
void   mlp_backward(mlp *m, const int *labels, int b, mlp_ready_fn ready, void *ctx, size_t chunk);
void   mlp_zero_grads(mlp *m);

#endif
