/*
 * kernels_cuda.cu — the CUDA IPC transport's local kernels:
 *   reduce   dst[i] = a[i] op b[i]        ck_reduce_local on device buffers
 *   divide   buf[i] /= divisor            avg's finaliser
 * The arithmetic is collkit_cuda_ops.cuh's, bit for bit the host kernels.
 * Each launch clears the thread's last error first and reads it right after:
 * an earlier call's leftover (a "not ready" of a stream poll, say) must not
 * pass for a failed launch.
 * (The oneshot/twoshot kernels live with their algorithms, in
 * collectives/algos/cuda/symmetric_kernels.cu.)
 */
#include "collkit_cuda_ops.cuh"
#include "transport_cuda.h"

using ck_dev::bf16;

namespace {

template <typename T, int OP>
__global__ void reduce_kernel(T *dst, const T *a, const T *b, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = ck_dev::apply<OP>(a[i], b[i]);
}

template <typename T>
__global__ void divide_kernel(T *buf, size_t n, int d)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = ck_dev::div_elem(buf[i], d);
}

/* Grid-stride loops: enough blocks to fill the GPU, never more than 1024. */
unsigned grid_for(size_t n, unsigned threads)
{
    size_t g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > 1024 ? 1024 : g);
}

template <typename T>
cudaError_t reduce_as(int op, void *dst, const void *a, const void *b, size_t n, cudaStream_t s)
{
    unsigned g = grid_for(n, 256);
    T *d = (T *)dst;
    (void)cudaGetLastError();   /* the check below must see this launch's error only */
    const T *x = (const T *)a, *y = (const T *)b;
    switch (op) {
    case CK_SUM:  reduce_kernel<T, CK_SUM><<<g, 256, 0, s>>>(d, x, y, n); break;
    case CK_PROD: reduce_kernel<T, CK_PROD><<<g, 256, 0, s>>>(d, x, y, n); break;
    case CK_MIN:  reduce_kernel<T, CK_MIN><<<g, 256, 0, s>>>(d, x, y, n); break;
    case CK_MAX:  reduce_kernel<T, CK_MAX><<<g, 256, 0, s>>>(d, x, y, n); break;
    default:      return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t ck_cuda_reduce(void *dst, const void *a, const void *b, size_t n,
                                      ck_dtype dt, ck_op op, cudaStream_t s)
{
    if (!n) return cudaSuccess;
    switch (dt) {
    case CK_F32:  return reduce_as<float>((int)op, dst, a, b, n, s);
    case CK_F64:  return reduce_as<double>((int)op, dst, a, b, n, s);
    case CK_I32:  return reduce_as<int32_t>((int)op, dst, a, b, n, s);
    case CK_I64:  return reduce_as<int64_t>((int)op, dst, a, b, n, s);
    case CK_BF16: return reduce_as<bf16>((int)op, dst, a, b, n, s);
    default:      return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t ck_cuda_divide(void *buf, size_t n, ck_dtype dt, int divisor, cudaStream_t s)
{
    if (!n) return cudaSuccess;
    unsigned g = grid_for(n, 256);
    (void)cudaGetLastError();   /* the check below must see this launch's error only */
    switch (dt) {
    case CK_F32:  divide_kernel<float><<<g, 256, 0, s>>>((float *)buf, n, divisor); break;
    case CK_F64:  divide_kernel<double><<<g, 256, 0, s>>>((double *)buf, n, divisor); break;
    case CK_BF16: divide_kernel<bf16><<<g, 256, 0, s>>>((bf16 *)buf, n, divisor); break;
    default:      return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
