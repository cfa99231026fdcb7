/*
 * model_cuda.cu — the kernels of the tagging MLP on a GPU (device.c drives
 * them, with cuBLAS for the dense layers). Each does what its model.c or
 * optim.c counterpart does, element for element and in the same order where
 * the order is the host's (the input layer's sum over a row's non-zeros, the
 * bias sums over the batch): this file is compiled with -fmad=false, so no
 * multiply-add is fused where the host (plain x86-64 SSE) rounds twice. The
 * scatter-add of the input layer's weight gradient is the exception: it adds
 * with atomics, in whatever order the rows arrive.
 *
 * Every launcher clears the thread's last error first and returns the
 * launch's own (a "not ready" of an earlier stream poll must not pass for a
 * failed launch).
 */
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include "model_cuda.h"

namespace {

constexpr int THREADS = 256;

unsigned blocks_for(size_t n)
{
    size_t g = (n + THREADS - 1) / THREADS;
    return (unsigned)(g < 1 ? 1 : g > 4096 ? 4096 : g);
}

#define GRID_STRIDE(i, n) for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

/* z[r,:] = bias + SUM over row r's non-zeros e of val[e] W[idx[e],:], e in order. One block per row. */
__global__ void csr_forward_k(float *out, const size_t *ptr, const int *idx, const float *val, const size_t *rows,
                              const float *W, const float *bias, int H)
{
    const size_t row = rows[blockIdx.x];
    float *o = out + (size_t)blockIdx.x * H;
    for (int j = threadIdx.x; j < H; j += blockDim.x) {
        float acc = bias[j];
        for (size_t e = ptr[row]; e < ptr[row + 1]; e++) acc += val[e] * W[(size_t)idx[e] * H + j];
        o[j] = acc;
    }
}

/* dW[idx[e],:] += val[e] dout[r,:]: a scatter-add, rows of W shared between samples. */
__global__ void csr_backward_k(float *dW, const float *dout, const size_t *ptr, const int *idx, const float *val,
                               const size_t *rows, int H)
{
    const size_t row = rows[blockIdx.x];
    const float *d = dout + (size_t)blockIdx.x * H;
    for (size_t e = ptr[row]; e < ptr[row + 1]; e++) {
        float *g = dW + (size_t)idx[e] * H;
        const float xv = val[e];
        for (int j = threadIdx.x; j < H; j += blockDim.x) atomicAdd(&g[j], xv * d[j]);
    }
}

/* db[j] += SUM_r dout[r,j], r in order. */
__global__ void colsum_add_k(float *db, const float *dout, int b, int n)
{
    GRID_STRIDE(j, (size_t)n) {
        float s = db[j];
        for (int r = 0; r < b; r++) s += dout[(size_t)r * n + j];
        db[j] = s;
    }
}

__global__ void bias_rows_k(float *out, const float *bias, int b, int n)
{
    GRID_STRIDE(k, (size_t)b * n) out[k] = bias[k % (size_t)n];
}

__global__ void fill_k(float *p, float v, size_t n) { GRID_STRIDE(k, n) p[k] = v; }

__global__ void relu_mask_k(float *out, const float *z, const float *mask, size_t n)
{
    GRID_STRIDE(k, n) out[k] = (z[k] > 0.0f ? z[k] : 0.0f) * mask[k];
}

__global__ void relu_mask_backward_k(float *dz, const float *dout, const float *mask, const float *z, size_t n)
{
    GRID_STRIDE(k, n) dz[k] = z[k] > 0.0f ? dout[k] * mask[k] : 0.0f;
}

/* softmax_xent_forward, one thread per row: the same float/double mix. */
__global__ void softmax_xent_k(float *probs, double *loss, const float *logits, const int *labels, int b, float eps,
                               tg_class_weights w, int weighted)
{
    GRID_STRIDE(r, (size_t)b) {
        const float *l = logits + r * TG_CLASSES;
        float *pr = probs + r * TG_CLASSES;
        float mx = l[0];
        for (int j = 1; j < TG_CLASSES; j++) mx = l[j] > mx ? l[j] : mx;
        double sum = 0.0;
        for (int j = 0; j < TG_CLASSES; j++) { pr[j] = expf(l[j] - mx); sum += pr[j]; }
        for (int j = 0; j < TG_CLASSES; j++) pr[j] = (float)(pr[j] / sum);
        if (!labels) continue;
        const double lse = log(sum);
        double ce = lse - (double)(l[labels[r]] - mx);
        if (eps > 0.0f) {
            double all = 0.0;
            for (int j = 0; j < TG_CLASSES; j++) all += lse - (double)(l[j] - mx);
            ce = (1.0 - eps) * ce + (double)eps / TG_CLASSES * all;
        }
        loss[r] = (weighted ? w.w[labels[r]] : 1.0) * ce;
    }
}

__global__ void softmax_xent_backward_k(float *dl, const float *probs, const int *labels, int b, float eps,
                                        tg_class_weights w, int weighted)
{
    const float off = eps / (float)TG_CLASSES, on = 1.0f - eps + off;
    GRID_STRIDE(k, (size_t)b * TG_CLASSES) {
        const size_t r = k / TG_CLASSES;
        const int j = (int)(k % TG_CLASSES);
        const float wr = weighted ? w.w[labels[r]] : 1.0f;
        dl[k] = wr * (probs[k] - (j == labels[r] ? on : off));
    }
}

/* optimizer_step's AdamW loop; the gradient is zeroed as it is read. */
__global__ void adamw_k(float *w, float *g, float *m, float *v, size_t n, float scale, tg_adam c)
{
    GRID_STRIDE(i, n) {
        const float gi = g[i] * scale;
        g[i] = 0.0f;
        m[i] = c.b1 * m[i] + (1.0f - c.b1) * gi;
        v[i] = c.b2 * v[i] + (1.0f - c.b2) * gi * gi;
        w[i] -= c.step * m[i] / (sqrtf(v[i]) + c.eps) + c.decay * w[i];
    }
}

/* optimizer_step's SGD loop (momentum, coupled weight decay). */
__global__ void sgd_k(float *w, float *g, float *m, size_t n, float scale, float lr, float mu, float wd)
{
    GRID_STRIDE(i, n) {
        const float gi = g[i] * scale + wd * w[i];
        g[i] = 0.0f;
        m[i] = mu * m[i] + gi;
        w[i] -= lr * m[i];
    }
}

#define LAUNCH(...) do { (void)cudaGetLastError(); __VA_ARGS__; return cudaGetLastError(); } while (0)

} // namespace

extern "C" {

cudaError_t tg_csr_forward(float *out, const size_t *ptr, const int *idx, const float *val, const size_t *rows,
                           const float *W, const float *bias, int b, int H, cudaStream_t s)
{
    if (b <= 0) return cudaSuccess;
    LAUNCH(csr_forward_k<<<b, H < THREADS ? 32 * ((H + 31) / 32) : THREADS, 0, s>>>(out, ptr, idx, val, rows, W, bias, H));
}

cudaError_t tg_csr_backward(float *dW, const float *dout, const size_t *ptr, const int *idx, const float *val,
                            const size_t *rows, int b, int H, cudaStream_t s)
{
    if (b <= 0) return cudaSuccess;
    LAUNCH(csr_backward_k<<<b, H < THREADS ? 32 * ((H + 31) / 32) : THREADS, 0, s>>>(dW, dout, ptr, idx, val, rows, H));
}

cudaError_t tg_colsum_add(float *db, const float *dout, int b, int n, cudaStream_t s)
{
    LAUNCH(colsum_add_k<<<blocks_for((size_t)n), THREADS, 0, s>>>(db, dout, b, n));
}

cudaError_t tg_bias_rows(float *out, const float *bias, int b, int n, cudaStream_t s)
{
    if (b <= 0) return cudaSuccess;
    LAUNCH(bias_rows_k<<<blocks_for((size_t)b * n), THREADS, 0, s>>>(out, bias, b, n));
}

cudaError_t tg_fill(float *p, float v, size_t n, cudaStream_t s)
{
    if (!n) return cudaSuccess;
    LAUNCH(fill_k<<<blocks_for(n), THREADS, 0, s>>>(p, v, n));
}

cudaError_t tg_relu_mask(float *out, const float *z, const float *mask, size_t n, cudaStream_t s)
{
    if (!n) return cudaSuccess;
    LAUNCH(relu_mask_k<<<blocks_for(n), THREADS, 0, s>>>(out, z, mask, n));
}

cudaError_t tg_relu_mask_backward(float *dz, const float *dout, const float *mask, const float *z, size_t n,
                                  cudaStream_t s)
{
    if (!n) return cudaSuccess;
    LAUNCH(relu_mask_backward_k<<<blocks_for(n), THREADS, 0, s>>>(dz, dout, mask, z, n));
}

cudaError_t tg_softmax_xent(float *probs, double *loss, const float *logits, const int *labels, int b, float eps,
                            const tg_class_weights *w, cudaStream_t s)
{
    if (b <= 0) return cudaSuccess;
    tg_class_weights ww = w ? *w : tg_class_weights{{1, 1, 1, 1}};
    LAUNCH(softmax_xent_k<<<blocks_for((size_t)b), THREADS, 0, s>>>(probs, loss, logits, labels, b, eps, ww, w != NULL));
}

cudaError_t tg_softmax_xent_backward(float *dl, const float *probs, const int *labels, int b, float eps,
                                     const tg_class_weights *w, cudaStream_t s)
{
    if (b <= 0) return cudaSuccess;
    tg_class_weights ww = w ? *w : tg_class_weights{{1, 1, 1, 1}};
    LAUNCH(softmax_xent_backward_k<<<blocks_for((size_t)b * TG_CLASSES), THREADS, 0, s>>>(dl, probs, labels, b, eps, ww,
                                                                                           w != NULL));
}

cudaError_t tg_adamw(float *w, float *g, float *m, float *v, size_t n, float scale, const tg_adam *c, cudaStream_t s)
{
    if (!n) return cudaSuccess;
    LAUNCH(adamw_k<<<blocks_for(n), THREADS, 0, s>>>(w, g, m, v, n, scale, *c));
}

cudaError_t tg_sgd(float *w, float *g, float *m, size_t n, float scale, float lr, float mu, float wd, cudaStream_t s)
{
    if (!n) return cudaSuccess;
    LAUNCH(sgd_k<<<blocks_for(n), THREADS, 0, s>>>(w, g, m, n, scale, lr, mu, wd));
}

} // extern "C"
