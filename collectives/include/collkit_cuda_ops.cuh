/*
 * collkit_cuda_ops.cuh — the element arithmetic of every collkit kernel, for
 * .cu files: bf16 and the four reduction operators, bit for bit the host
 * kernels of collectives/src/dtype.c (the same operators in the same order,
 * bf16 rounded to nearest even after every operation, IEEE division, which is
 * nvcc's default -prec-div=true). The checker compares device results with
 * the host's exactly, so a kernel must not use anything else (no fused
 * multiply-add, no fast-math).
 */
#ifndef COLLKIT_CUDA_OPS_CUH
#define COLLKIT_CUDA_OPS_CUH

#include <stdint.h>
#include <string.h>
#include "collkit.h"

namespace ck_dev {

struct bf16 { uint16_t bits; };

__device__ __forceinline__ float bf16_to_f32(bf16 x) { return __uint_as_float((uint32_t)x.bits << 16); }
__device__ __forceinline__ bf16 f32_to_bf16(float f)
{
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{(uint16_t)((u >> 16) | 0x40)};   /* NaN stays NaN */
    u += 0x7fffu + ((u >> 16) & 1u);                                                  /* round to nearest even */
    return bf16{(uint16_t)(u >> 16)};
}

/* The type sums and products are computed in: the type itself for floats,
 * its unsigned twin for integers, as on the host (dtype.c), so that an
 * integer overflow wraps as two's complement instead of being undefined. */
template <typename T> struct arith { typedef T type; };
template <> struct arith<int32_t> { typedef uint32_t type; };
template <> struct arith<int64_t> { typedef uint64_t type; };

/* x op y for OP in CK_SUM, CK_PROD, CK_MIN, CK_MAX (avg is a sum, then divide). */
template <int OP, typename T> __device__ __forceinline__ T apply(T x, T y)
{
    typedef typename arith<T>::type A;
    if (OP == CK_SUM) return (T)((A)x + (A)y);
    if (OP == CK_PROD) return (T)((A)x * (A)y);
    if (OP == CK_MIN) return y < x ? y : x;
    return y > x ? y : x;
}
template <int OP> __device__ __forceinline__ bf16 apply(bf16 a, bf16 b)
{
    return f32_to_bf16(apply<OP>(bf16_to_f32(a), bf16_to_f32(b)));
}

/* avg's finaliser: one IEEE division in the element type. */
template <typename T> __device__ __forceinline__ T div_elem(T x, int d) { return x / (T)d; }
template <> __device__ __forceinline__ bf16 div_elem(bf16 x, int d) { return f32_to_bf16(bf16_to_f32(x) / (float)d); }

} // namespace ck_dev

#endif /* COLLKIT_CUDA_OPS_CUH */
