/*
 * symmetric_kernels.cu — the oneshot and twoshot kernels: all-reduce by loads
 * from every peer's symmetric buffer (symmetric.c maps them). The element
 * arithmetic is collkit_cuda_ops.cuh's, bit for bit the host kernels.
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
#include "collkit_cuda_ops.cuh"
#include "symmetric.h"

using ck_dev::apply;
using ck_dev::bf16;

namespace {

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
__device__ __forceinline__ unsigned *flag(char *base, const ck_sym_launch &a, int which, int b, int q)
{
    return (unsigned *)(base + a.flags_off) + ((size_t)which * CK_SYM_MAXB + b) * a.p + q;
}

/* The barrier described at the top. Returns nonzero when it timed out. */
__device__ int barrier(const ck_sym_launch &a, int which)
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
__device__ __forceinline__ T fold(const ck_sym_launch &a, size_t i)
{
    T acc = load_cg((const T *)(a.peers[0] + a.data_off) + i);
    for (int q = 1; q < a.p; q++) acc = apply<OP>(acc, load_cg((const T *)(a.peers[q] + a.data_off) + i));
    return acc;
}

template <typename T, int OP>
__global__ void __launch_bounds__(CK_SYM_THREADS) oneshot_kernel(ck_sym_launch a)
{
    if (barrier(a, 0)) return;
    T *out = (T *)a.out;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.count; i += (size_t)gridDim.x * blockDim.x)
        out[i] = fold<T, OP>(a, i);
}

template <typename T, int OP>
__global__ void __launch_bounds__(CK_SYM_THREADS) twoshot_kernel(ck_sym_launch a)
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
cudaError_t launch_peer(const ck_sym_launch &a, int two_shot, cudaStream_t s)
{
    unsigned g = (unsigned)ck_sym_blocks(a.count, a.p, two_shot);
    if (two_shot) twoshot_kernel<T, OP><<<g, CK_SYM_THREADS, 0, s>>>(a);
    else          oneshot_kernel<T, OP><<<g, CK_SYM_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T>
cudaError_t by_op(const ck_sym_launch &a, int two_shot, cudaStream_t s)
{
    switch (a.op) {
    case CK_SUM:  return launch_peer<T, CK_SUM>(a, two_shot, s);
    case CK_PROD: return launch_peer<T, CK_PROD>(a, two_shot, s);
    case CK_MIN:  return launch_peer<T, CK_MIN>(a, two_shot, s);
    case CK_MAX:  return launch_peer<T, CK_MAX>(a, two_shot, s);
    default:      return cudaErrorInvalidValue;
    }
}

} // namespace

/* The grid depends on count and p only, never on the device, so every rank
 * launches the same blocks (they pair up in the barriers). */
extern "C" int ck_sym_blocks(size_t count, int p, int two_shot)
{
    size_t work = two_shot ? (count + (size_t)p - 1) / (size_t)p : count;
    size_t g = (work + CK_SYM_THREADS - 1) / CK_SYM_THREADS;
    return (int)(g < 1 ? 1 : g > CK_SYM_MAXB ? CK_SYM_MAXB : g);
}

extern "C" cudaError_t ck_sym_launch_kernel(const ck_sym_launch *a, int two_shot, cudaStream_t s)
{
    switch (a->dt) {
    case CK_F32:  return by_op<float>(*a, two_shot, s);
    case CK_F64:  return by_op<double>(*a, two_shot, s);
    case CK_I32:  return by_op<int32_t>(*a, two_shot, s);
    case CK_I64:  return by_op<int64_t>(*a, two_shot, s);
    case CK_BF16: return by_op<bf16>(*a, two_shot, s);
    default:      return cudaErrorInvalidValue;
    }
}
