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
 *   input:        x, b rows of a CSR matrix (TF-IDF rows: a few hundred
 *                 non-zeros out of D = 65536), never a dense [b x D] array
 *   activations:  z_0 = x W_0 + b_0                 [b x H_0]  (csr_linear)
 *                 a_{i+1} = dropout(relu(z_i))      (hidden layers only)
 *                 z_i = a_i W_i + b_i               [b x out_i] (linear, i >= 1)
 *                 logits = z_L, probs = softmax(logits)
 *   loss = SUM over the rows of  w[y] * CE(probs, target)  with target the
 *   one-hot label, label-smoothed when asked, and w the class weights (all 1
 *   by default). A sum, not a mean: the data-parallel step adds the sums of
 *   all ranks and divides once by the global batch, which is what makes p
 *   ranks equal one rank.
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
    float class_weight[MLP_CLASSES]; /* per-class loss weight, > 0 (1: plain cross-entropy) */
} mlp_config;

/* Rows of a CSR matrix (the whole featurised dataset): row i's non-zeros are
 * idx[ptr[i] .. ptr[i+1]) with values val[same range], column ids < D. A
 * batch is a list of row numbers into it, so nothing is copied. */
typedef struct {
    const size_t *ptr;
    const int    *idx;
    const float  *val;
} csr_rows;

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
    float  *act[MLP_MAX_HIDDEN + 2]; /* act[i] = a_i [b x in_i], i >= 1 (a_0 = x is the CSR input) */
    float  *pre[MLP_MAX_HIDDEN + 1]; /* z_i [b x out_i] */
    float  *mask[MLP_MAX_HIDDEN];    /* dropout scale per hidden unit: 0 or 1/(1-p) */
    float  *probs;                   /* [b x C] */
    float  *dbuf[2];                 /* ping-pong buffers for d(activation) [b x max width] */
    csr_rows x;                      /* the last forward's input (backward reads it again) */
    const size_t *rows;              /* ... and its batch rows */
    int     train;                   /* the last forward was a training one (smoothing, weights) */

    /* Tensor parallelism (tp.h; all 0 / NULL for the whole model): layer i
     * split over a group of tp_size ranks, Megatron's pairs. A layer split
     * by columns (MLP_SPLIT_COL) holds out_i / T of the units, from column
     * col0[i] of the whole layer; the next, split by rows (MLP_SPLIT_ROW),
     * holds the matching in_i / T input rows and gives a partial sum that
     * reduce() makes the whole (forward); backward, the partial input
     * gradient of a column-split layer is made whole the same way. */
    int     split[MLP_MAX_HIDDEN + 1];
    int     col0[MLP_MAX_HIDDEN + 1], full_out[MLP_MAX_HIDDEN + 1];
    int     tp_size, tp_rank;
    void  (*reduce)(float *buf, size_t n, void *ctx);   /* SUM over the group, in place */
    void   *reduce_ctx;

    /* Pipeline parallelism (pp.h; 0 and nlayers for the whole model): the
     * layers l0 .. l1-1 this stage holds, its buffers that slice of the
     * whole one. A stage after the first reads a_l0 from act[l0] (put there
     * by the caller) and leaves the gradient of a_l0 in *dinput after
     * backward; a stage before the last leaves a_l1 in act[l1] and takes the
     * gradient of a_l1 in dbuf[0] before backward. */
    int     l0, l1;
    float  *dinput;
    int     shared;                  /* mlp_clone_acts: params and grads are another's */
} mlp;

enum { MLP_WHOLE = 0, MLP_SPLIT_COL = 1, MLP_SPLIT_ROW = 2 };

/* Parse "256,128" into cfg->hidden; returns 0, or -1 with a message in err. */
int  mlp_parse_hidden(const char *s, mlp_config *cfg, char *err, size_t errlen);
/* Allocate parameters, gradients (zeroed) and activations; parameters are NOT initialised. */
int  mlp_create(mlp *m, const mlp_config *cfg, int max_batch);
/* The same for rank `rank` of a tensor-parallel group of T: layers 2j and
 * 2j+1 (when both exist) split by columns and by rows, the rest whole; the
 * buffers hold this rank's shard only. T must divide the widths it splits
 * (mlp_tp_check). T = 1 is mlp_create. */
int  mlp_create_tp(mlp *m, const mlp_config *cfg, int max_batch, int T, int rank);
/* Layers l0 .. l1-1 only (l1 < 0: to the last), T-way split as mlp_create_tp. */
int  mlp_create_part(mlp *m, const mlp_config *cfg, int max_batch, int T, int rank, int l0, int l1);
/* Activations of its own for max_batch rows, src's parameters and gradients (a micro-batch in flight). */
int  mlp_clone_acts(mlp *dst, const mlp *src, int max_batch);
/* The bytes of activations a model (or a clone) holds for its max_batch rows. */
size_t mlp_act_bytes(const mlp *m);
/* 0 when T can split cfg's layers, else -1 with the reason in why. */
int  mlp_tp_check(const mlp_config *cfg, int T, char *why, size_t cap);
void mlp_free(mlp *m);
/* He-normal weights for ReLU layers, Glorot-uniform for the logits layer, zero biases. */
void mlp_init_params(mlp *m, uint64_t seed);

/* ---- layers */

/* out[b x H] = bias + x[rows] W: only the non-zeros of each row are visited,
 * O(nnz x H) instead of O(b x D x H). */
void csr_linear_forward(float *out, const csr_rows *x, const size_t *rows, const float *W, const float *bias, int b,
                        int out_dim);
/* dW[k,:] += x[r,k] dout[r,:] over the non-zeros only, dbias += column sums of
 * dout. No input gradient: x is data. */
void csr_linear_backward(float *dW, float *dbias, const float *dout, const csr_rows *x, const size_t *rows, int b,
                         int out_dim);
/* out[b x out] = bias + inp[b x in] W (cblas_sgemm). */
void linear_forward(float *out, const float *inp, const float *W, const float *bias, int b, int in, int out_dim);
/* Accumulates (+=) into dW and dbias; writes dinp unless it is NULL. */
void linear_backward(float *dinp, float *dW, float *dbias, const float *dout, const float *inp,
                     const float *W, int b, int in, int out_dim);
/* out = relu(z) * mask; mask drawn from rng when train and p > 0, else all ones. */
void relu_dropout_forward(float *out, float *mask, const float *z, size_t n, float p, int train, rng_t *rng);
/* The same for columns col0 .. col0+width of a layer `full` units wide
 * (tensor parallelism): the whole layer's rng draws, this rank's columns kept. */
void relu_dropout_forward_cols(float *out, float *mask, const float *z, int b, int full, int col0, int width, float p,
                               int train, rng_t *rng);
/* dz = dout * mask * [z > 0] (in place in dout allowed). */
void relu_dropout_backward(float *dz, const float *dout, const float *mask, const float *z, size_t n);
/* probs = softmax(logits); returns SUM_r w[y_r] * CE_r against the target
 * (1 - eps) onehot(y_r) + eps / c (labels NULL: no loss, 0; w NULL: all 1). */
double softmax_xent_forward(float *probs, const float *logits, const int *labels, int b, int c, float eps,
                            const float *w);
/* dlogits = w[y] (probs - target): the gradient of the summed loss. */
void softmax_xent_backward(float *dlogits, const float *probs, const int *labels, int b, int c, float eps,
                           const float *w);

/* ---- whole model */

/* Forward over batch rows rows[0..b) of x (kept by pointer until the
 * backward). train != 0: dropout drawn from rng, label smoothing and class
 * weights applied. Returns the summed loss (0 when labels is NULL) and
 * leaves the probabilities in m->probs. */
double mlp_forward(mlp *m, const csr_rows *x, const size_t *rows, const int *labels, int b, int train, rng_t *rng);
/* Backward of the last forward: ACCUMULATES (+=) into m->grads, walking the
 * buffer from its END to its start (logits layer first). When `ready` is
 * given it is called each time a suffix of the gradient buffer becomes final:
 * ready(from, ctx) means grads[from .. nparams) will not change again in this
 * pass — the hook DDP-style buckets are launched from. With chunk > 0 the
 * dense weight gradients are computed in row blocks of about `chunk` elements
 * (last block first), so each releases its gradient in pieces. */
typedef void (*mlp_ready_fn)(size_t from, void *ctx);
void   mlp_backward(mlp *m, const int *labels, int b, mlp_ready_fn ready, void *ctx, size_t chunk);
void   mlp_zero_grads(mlp *m);

#endif
