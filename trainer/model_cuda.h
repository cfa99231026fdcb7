/*
 * model_cuda.h — between device.c and model_cuda.cu: the launchers of the
 * tagging MLP's kernels, each queued on stream s, returning the launch's
 * error. Shapes and meanings are model.h's and optim.h's.
 */
#ifndef TRAINER_MODEL_CUDA_H
#define TRAINER_MODEL_CUDA_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TG_CLASSES 4   /* MLP_CLASSES (device.c asserts it) */

typedef struct { float w[TG_CLASSES]; } tg_class_weights;
/* One AdamW step's scalars (opt_adam_coeffs). */
typedef struct { float step, eps, b1, b2, decay; } tg_adam;

cudaError_t tg_csr_forward(float *out, const size_t *ptr, const int *idx, const float *val, const size_t *rows,
                           const float *W, const float *bias, int b, int H, cudaStream_t s);
cudaError_t tg_csr_backward(float *dW, const float *dout, const size_t *ptr, const int *idx, const float *val,
                            const size_t *rows, int b, int H, cudaStream_t s);
cudaError_t tg_colsum_add(float *db, const float *dout, int b, int n, cudaStream_t s);
cudaError_t tg_bias_rows(float *out, const float *bias, int b, int n, cudaStream_t s);
cudaError_t tg_fill(float *p, float v, size_t n, cudaStream_t s);
cudaError_t tg_relu_mask(float *out, const float *z, const float *mask, size_t n, cudaStream_t s);
cudaError_t tg_relu_mask_backward(float *dz, const float *dout, const float *mask, const float *z, size_t n,
                                  cudaStream_t s);
/* loss[r] per row (labels NULL: probabilities only); w NULL: all weights 1. */
cudaError_t tg_softmax_xent(float *probs, double *loss, const float *logits, const int *labels, int b, float eps,
                            const tg_class_weights *w, cudaStream_t s);
cudaError_t tg_softmax_xent_backward(float *dl, const float *probs, const int *labels, int b, float eps,
                                     const tg_class_weights *w, cudaStream_t s);
cudaError_t tg_adamw(float *w, float *g, float *m, float *v, size_t n, float scale, const tg_adam *c, cudaStream_t s);
cudaError_t tg_sgd(float *w, float *g, float *m, size_t n, float scale, float lr, float mu, float wd, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
