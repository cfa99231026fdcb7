/*
 * kernels.cu — every GPU kernel of collkit, in one file (nvcc is slow):
 *   reduce   dst[i] = a[i] op b[i]        the transport's ck_reduce_local
 *   divide   buf[i] /= divisor            avg's finaliser
 *   oneshot  all-reduce by reading every peer's symmetric buffer
 *   twoshot  reduce-scatter + all-gather by peer loads
 *
 * Arithmetic matches the host kernels in collectives/src/dtype.c bit for bit:
 * the same operators in the same order, bf16 rounded to nearest even after
 * every operation, IEEE division (nvcc's default -prec-div=true).
 *
 * Cross-process ordering in oneshot/twoshot. Rank q's symmetric buffer is
 * mapped into every rank (cudaIpcOpenMemHandle). A barrier is, per block b:
 *     __syncthreads();                       this block's writes come first
 *     thread q (q < p):  fence.sys; st.release.sys  flags_at_rank_q[b][me] = gen
 *                        spin: ld.acquire.sys  my_flags[b][q] >= gen
 *     __syncthreads();                       the rest of the block reads after
 * Blocks pair up across ranks by index: every rank launches the same grid
 * (fixed block count from count and p only), and in twoshot the element ->
 * block map is the same in both phases, so block b of rank r only ever reads
 * what block b of rank q wrote before q's release. gen is the launch number,
 * identical on every rank; flags only grow, so a peer that is already one
 * launch ahead (flag = gen + 1) still lets us through (>= , wrap-safe).
 * The input was copied into the buffer by an earlier copy on the same stream,
 * which completed before the kernel began. Launches alternate between two
 * halves of the buffer: launch g+2 overwrites the half launch g read only
 * after this rank's launch g+1 passed its start barrier, i.e. after every peer
 * started launch g+1 and so finished launch g (one stream per rank).
 * A wait longer than the timeout sets *err and the block leaves; the host
 * reports CK_ERR_TIMEOUT after the stream synchronises.
 */
#include <stdint.h>
#include "cuda_internal.h"

namespace {

/* ------------------------------------------------------------ element types and ops */

struct bf16 { uint16_t bits; };

__device__ __forceinline__ float bf16_to_f32(bf16 x) { return __uint_as_float((uint32_t)x.bits << 16); }
__device__ __forceinline__ bf16 f32_to_bf16(float f)
{
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{(uint16_t)((u >> 16) | 0x40)};
    u += 0x7fffu + ((u >> 16) & 1u);
    return bf16{(uint16_t)(u >> 16)};
}

template <int OP, typename T> __device__ __forceinline__ T apply(T x, T y)
{
    if (OP == CK_SUM) return x + y;
    if (OP == CK_PROD) return x * y;
    if (OP == CK_MIN) return y < x ? y : x;
    return y > x ? y : x;
}
template <int OP> __device__ __forceinline__ bf16 apply(bf16 a, bf16 b)
{
    return f32_to_bf16(apply<OP>(bf16_to_f32(a), bf16_to_f32(b)));
}

/* Loads of symmetric buffers: cached in L2 only (peers write them). */
template <typename T> __device__ __forceinline__ T load_cg(const T *p)
{
    T v;
    if (sizeof(T) == 2) {
        uint16_t x;
        asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(x) : "l"(p) : "memory");
        memcpy(&v, &x, 2);
    } else if (sizeof(T) == 4) {
        uint32_t x;
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(x) : "l"(p) : "memory");
        memcpy(&v, &x, 4);
    } else {
        uint64_t x;
        asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(x) : "l"(p) : "memory");
        memcpy(&v, &x, 8);
    }
    return v;
}

/* ------------------------------------------------------------ local kernels */

template <typename T, int OP>
__global__ void reduce_kernel(T *dst, const T *a, const T *b, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = apply<OP>(a[i], b[i]);
}

template <typename T> __device__ __forceinline__ T div_elem(T x, int d) { return x / (T)d; }
template <> __device__ __forceinline__ bf16 div_elem(bf16 x, int d) { return f32_to_bf16(bf16_to_f32(x) / (float)d); }

template <typename T>
__global__ void divide_kernel(T *buf, size_t n, int d)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = div_elem(buf[i], d);
}

unsigned grid_for(size_t n, unsigned threads)
{
    size_t g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > 1024 ? 1024 : g);
}

/* ------------------------------------------------------------ peer kernels */

__device__ __forceinline__ void st_release_sys(unsigned *p, unsigned v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_acquire_sys(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Flag of (block b, rank q) in the area `which` (0: start, 1: mid) of a buffer. */
__device__ __forceinline__ unsigned *flag(char *base, const ck_peer_launch &a, int which, int b, int q)
{
    return (unsigned *)(base + a.flags_off) + ((size_t)which * CK_SYM_MAXB + b) * a.p + q;
}

/* The barrier described at the top. Returns nonzero when it timed out. */
__device__ int barrier(const ck_peer_launch &a, int which)
{
    __shared__ int abort_;
    if (threadIdx.x == 0) abort_ = 0;
    __syncthreads();
    const int b = blockIdx.x;
    for (int q = threadIdx.x; q < a.p; q += blockDim.x) {
        __threadfence_system();
        st_release_sys(flag(a.peers[q], a, which, b, a.rank), a.gen);
        const unsigned *mine = flag(a.peers[a.rank], a, which, b, q);
        const unsigned long long t0 = now_ns();
        while ((int)(ld_acquire_sys(mine) - a.gen) < 0) {
            if (a.timeout_ns && now_ns() - t0 > a.timeout_ns) {
                abort_ = 1;
                *(volatile int *)a.err = 1;
                __threadfence_system();
                break;
            }
            __nanosleep(64);
        }
    }
    __syncthreads();
    return abort_;
}

/* Block i of n elements split p ways, as ck_block does on the host. */
__device__ __forceinline__ void block_of(size_t n, int p, int i, size_t *off, size_t *len)
{
    size_t base = n / (size_t)p, extra = n % (size_t)p;
    *off = (size_t)i * base + ((size_t)i < extra ? (size_t)i : extra);
    *len = base + ((size_t)i < extra ? 1 : 0);
}

/* Every rank's buffer, reduced in rank order 0, 1, ..., p-1: the same
 * operations in the same order on every rank, so identical results. */
template <typename T, int OP>
__device__ __forceinline__ T fold(const ck_peer_launch &a, size_t i)
{
    T acc = load_cg((const T *)(a.peers[0] + a.data_off) + i);
    for (int q = 1; q < a.p; q++) acc = apply<OP>(acc, load_cg((const T *)(a.peers[q] + a.data_off) + i));
    return acc;
}

template <typename T, int OP>
__global__ void __launch_bounds__(CK_SYM_THREADS) oneshot_kernel(ck_peer_launch a)
{
    if (barrier(a, 0)) return;
    T *out = (T *)a.out;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.count; i += (size_t)gridDim.x * blockDim.x)
        out[i] = fold<T, OP>(a, i);
}

template <typename T, int OP>
__global__ void __launch_bounds__(CK_SYM_THREADS) twoshot_kernel(ck_peer_launch a)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x, first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    T *out = (T *)a.out, *mine = (T *)(a.peers[a.rank] + a.data_off);
    size_t off, len;
    if (barrier(a, 0)) return;
    /* Reduce-scatter: my slice from every rank, written back into my buffer
     * (only I read my slice in this phase) and into the output. */
    block_of(a.count, a.p, a.rank, &off, &len);
    for (size_t j = first; j < len; j += stride) {
        T v = fold<T, OP>(a, off + j);
        mine[off + j] = v;
        out[off + j] = v;
    }
    if (barrier(a, 1)) return;
    /* All-gather: every other slice from its owner. Element j of a slice is
     * handled by the same block as in the phase above, on every rank. */
    for (int k = 1; k < a.p; k++) {
        int q = (a.rank + k) % a.p;   /* start at different peers: spread the load */
        block_of(a.count, a.p, q, &off, &len);
        const T *src = (const T *)(a.peers[q] + a.data_off);
        for (size_t j = first; j < len; j += stride) out[off + j] = load_cg(src + off + j);
    }
}

/* ------------------------------------------------------------ dispatch */

template <typename T, int OP>
cudaError_t launch_peer(const ck_peer_launch &a, int two_shot, cudaStream_t s)
{
    unsigned g = (unsigned)ck_cuda_peer_blocks(a.count, a.p, two_shot);
    if (two_shot) twoshot_kernel<T, OP><<<g, CK_SYM_THREADS, 0, s>>>(a);
    else          oneshot_kernel<T, OP><<<g, CK_SYM_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T>
cudaError_t by_op(int op, void *dst, const void *a, const void *b, size_t n, const ck_peer_launch *pl,
                  int two_shot, cudaStream_t s)
{
    if (pl) {
        switch (op) {
        case CK_SUM:  return launch_peer<T, CK_SUM>(*pl, two_shot, s);
        case CK_PROD: return launch_peer<T, CK_PROD>(*pl, two_shot, s);
        case CK_MIN:  return launch_peer<T, CK_MIN>(*pl, two_shot, s);
        case CK_MAX:  return launch_peer<T, CK_MAX>(*pl, two_shot, s);
        default:      return cudaErrorInvalidValue;
        }
    }
    unsigned g = grid_for(n, 256);
    T *d = (T *)dst;
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

cudaError_t by_type(int dt, int op, void *dst, const void *a, const void *b, size_t n,
                    const ck_peer_launch *pl, int two_shot, cudaStream_t s)
{
    switch (dt) {
    case CK_F32:  return by_op<float>(op, dst, a, b, n, pl, two_shot, s);
    case CK_F64:  return by_op<double>(op, dst, a, b, n, pl, two_shot, s);
    case CK_I32:  return by_op<int32_t>(op, dst, a, b, n, pl, two_shot, s);
    case CK_I64:  return by_op<int64_t>(op, dst, a, b, n, pl, two_shot, s);
    case CK_BF16: return by_op<bf16>(op, dst, a, b, n, pl, two_shot, s);
    default:      return cudaErrorInvalidValue;
    }
}

} // namespace

extern "C" cudaError_t ck_cuda_reduce(void *dst, const void *a, const void *b, size_t count,
                                      ck_dtype dt, ck_op op, cudaStream_t s)
{
    if (!count) return cudaSuccess;
    return by_type((int)dt, (int)op, dst, a, b, count, nullptr, 0, s);
}

extern "C" cudaError_t ck_cuda_divide(void *buf, size_t n, ck_dtype dt, int divisor, cudaStream_t s)
{
    if (!n) return cudaSuccess;
    unsigned g = grid_for(n, 256);
    switch (dt) {
    case CK_F32:  divide_kernel<float><<<g, 256, 0, s>>>((float *)buf, n, divisor); break;
    case CK_F64:  divide_kernel<double><<<g, 256, 0, s>>>((double *)buf, n, divisor); break;
    case CK_BF16: divide_kernel<bf16><<<g, 256, 0, s>>>((bf16 *)buf, n, divisor); break;
    default:      return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

/* The grid depends on count and p only, never on the device, so every rank
 * launches the same blocks (they pair up in the barriers). */
extern "C" int ck_cuda_peer_blocks(size_t count, int p, int two_shot)
{
    size_t work = two_shot ? (count + (size_t)p - 1) / (size_t)p : count;
    size_t g = (work + CK_SYM_THREADS - 1) / CK_SYM_THREADS;
    return (int)(g < 1 ? 1 : g > CK_SYM_MAXB ? CK_SYM_MAXB : g);
}

extern "C" cudaError_t ck_cuda_launch_peer(const ck_peer_launch *a, int two_shot, cudaStream_t s)
{
    return by_type(a->dt, a->op, nullptr, nullptr, nullptr, 0, a, two_shot, s);
}
