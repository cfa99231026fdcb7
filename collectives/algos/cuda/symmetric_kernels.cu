/*
 * symmetric_kernels.cu — the oneshot and twoshot kernels: all-reduce by loads
 * from every peer's symmetric buffer (symmetric.c maps them). The element
 * arithmetic is collkit_cuda_ops.cuh's, bit for bit the host kernels.
 *
 * Width. Peer loads cross NVLink or PCIe, where bandwidth comes from many
 * wide requests in flight: each thread moves 16 bytes per load (one uint4:
 * 4 f32, 8 bf16, ...), and the grid fills every SM (ck_sym_grid: up to
 * CK_SYM_BLOCKS_PER_SM blocks of 512 threads per SM, shared out among
 * ranks that share a GPU: ck_sym_max_blocks). The symmetric buffers
 * are 16-byte aligned at element 0 of each half, so their loads are always
 * whole vectors except at the ends of a range that does not start or stop on
 * a 16-byte boundary (a twoshot slice): those few elements go one at a time
 * (ck_sym_split). recvbuf may be anywhere (the checker tries it one element
 * past alignment): stores to it are whole vectors when it is 16-byte
 * aligned, element by element otherwise.
 *
 * Cross-process ordering. A barrier is, per block b:
 *     __syncthreads();                       this block's writes come first
 *     thread q (q < p):  fence.sys; st.release.sys  flags_at_rank_q[b][me] = gen
 *                        spin: ld.acquire.sys  my_flags[b][q] >= gen
 *     __syncthreads();                       the rest of the block reads after
 * Blocks pair up across ranks by index, so
 *   - every rank launches the same grid: ck_sym_grid depends on the launch's
 *     count, p, element size and the max_blocks all ranks agreed on at setup;
 *   - the whole grid is resident at once (CK_SYM_BLOCKS_PER_SM and the
 *     __launch_bounds__ below), so a spinning block never keeps its partner's
 *     block of a later index off the GPU. Ranks that share a GPU run their
 *     kernels time-sliced (without MPS no two processes' kernels overlap): the
 *     barrier is then passed a slice later, slowly but surely;
 *   - in twoshot the element -> block map is one function of the range
 *     (ck_sym_split, item i -> thread i mod grid size), the same for slice q
 *     when rank q reduces it and when the others load it, so block b of rank
 *     r only ever reads what block b of rank q wrote before q's release.
 * gen is the launch number, identical on every rank; flags only grow, so a
 * peer that is already one launch ahead (flag = gen + 1) still lets us
 * through (>=, wrap-safe), and flags of blocks a smaller launch left out are
 * simply older. The input was copied into the buffer by an earlier copy on
 * the same stream, which completed before the kernel began. Launches
 * alternate between two halves of the buffer: launch g+2 overwrites the half
 * launch g read only after this rank's launch g+1 passed its start barrier,
 * i.e. after every peer started launch g+1 and so finished launch g (one
 * stream per rank).
 * A wait longer than the timeout sets *err (host-mapped, for the host) and
 * *gave_up (device memory, cheap to read) and the block leaves; a launch
 * that starts with *gave_up set returns at once (its peers would not come
 * either), and the host reports CK_ERR_TIMEOUT after the stream drains.
 */
#include "collkit_cuda_ops.cuh"
#include "symmetric.h"

using ck_dev::apply;
using ck_dev::bf16;

namespace {

/* ------------------------------------------------------------ loads and stores */

/* Loads of symmetric buffers are cached in L2 only (.cg): peers write them. */
template <typename T> __device__ __forceinline__ T load_cg(const T *p)
{
    T v;
    if (sizeof(T) == 2) {
        unsigned short x = __ldcg((const unsigned short *)p);
        memcpy(&v, &x, 2);
    } else if (sizeof(T) == 4) {
        unsigned int x = __ldcg((const unsigned int *)p);
        memcpy(&v, &x, 4);
    } else {
        unsigned long long x = __ldcg((const unsigned long long *)p);
        memcpy(&v, &x, 8);
    }
    return v;
}

/* 16 bytes seen as elements. */
template <typename T> union Pack {
    static constexpr int N = CK_SYM_VEC / sizeof(T);
    uint4 u;
    T e[N];
};

__device__ __forceinline__ uint4 load_cg16(const void *p) { return __ldcg((const uint4 *)p); }

/* Store one vector's elements at out + i: one 16-byte store when out is
 * 16-byte aligned (then so is out + i, i being a multiple of the vector), one
 * element at a time otherwise. */
template <typename T> __device__ __forceinline__ void store16(T *out, size_t i, const Pack<T> &v, bool aligned)
{
    if (aligned) {
        *(uint4 *)(out + i) = v.u;
    } else {
#pragma unroll
        for (int j = 0; j < Pack<T>::N; j++) out[i + j] = v.e[j];
    }
}

/* ------------------------------------------------------------ barrier */

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
    return (unsigned *)(base + a.flags_off) + ((size_t)which * a.max_blocks + (size_t)b) * (size_t)a.p + (size_t)q;
}

/* The barrier described at the top. Returns nonzero when it timed out. */
__device__ int barrier(const ck_sym_launch &a, int which)
{
    __shared__ int abort_;
    if (threadIdx.x == 0) abort_ = which == 0 && *(volatile int *)a.gave_up;   /* an earlier launch timed out */
    __syncthreads();
    if (abort_) return 1;
    const int b = blockIdx.x;
    for (int q = threadIdx.x; q < a.p; q += blockDim.x) {
        __threadfence_system();
        st_release_sys(flag(a.peers[q], a, which, b, a.rank), a.gen);
        const unsigned *mine = flag(a.peers[a.rank], a, which, b, q);
        const unsigned long long t0 = now_ns();
        while ((int)(ld_acquire_sys(mine) - a.gen) < 0) {
            if (a.timeout_ns && now_ns() - t0 > a.timeout_ns) {
                abort_ = 1;
                *(volatile int *)a.gave_up = 1;
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

/* ------------------------------------------------------------ the fold */

/* Every rank's buffer at element i, reduced in rank order 0, 1, ..., p-1:
 * the same operations in the same order on every rank, so identical results
 * (and naive's, which folds in the same order). */
template <typename T, int OP>
__device__ __forceinline__ T fold1(const ck_sym_launch &a, size_t i)
{
    T acc = load_cg((const T *)(a.peers[0] + a.data_off) + i);
    for (int q = 1; q < a.p; q++) acc = apply<OP>(acc, load_cg((const T *)(a.peers[q] + a.data_off) + i));
    return acc;
}

/* The same for the vector at element i. Four peers' loads are issued before
 * the first of them is used, so their latencies overlap; the fold order
 * stays 0, 1, ..., p-1. */
template <typename T, int OP>
__device__ __forceinline__ Pack<T> fold16(const ck_sym_launch &a, size_t i)
{
    const size_t byte = a.data_off + i * sizeof(T);
    Pack<T> acc, x[4];
    acc.u = load_cg16(a.peers[0] + byte);
    int q = 1;
    for (; q + 3 < a.p; q += 4) {
#pragma unroll
        for (int k = 0; k < 4; k++) x[k].u = load_cg16(a.peers[q + k] + byte);
#pragma unroll
        for (int k = 0; k < 4; k++)
#pragma unroll
            for (int j = 0; j < Pack<T>::N; j++) acc.e[j] = apply<OP>(acc.e[j], x[k].e[j]);
    }
    for (; q < a.p; q++) {
        x[0].u = load_cg16(a.peers[q] + byte);
#pragma unroll
        for (int j = 0; j < Pack<T>::N; j++) acc.e[j] = apply<OP>(acc.e[j], x[0].e[j]);
    }
    return acc;
}

/* Visit the work items of elements [off, off + len) that this thread owns
 * (ck_sym_split: head scalars, vectors, tail scalars; item i -> thread i mod
 * the grid's threads). vec(e) handles the vector at element e, one(e) the
 * element e. */
template <typename T, typename Vec, typename One>
__device__ __forceinline__ void for_range(size_t off, size_t len, Vec vec, One one)
{
    const size_t per = Pack<T>::N;
    size_t head, nvec, tail;
    ck_sym_split(off, len, per, &head, &nvec, &tail);
    const size_t items = head + nvec + tail, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < items; i += stride) {
        if (i < head) one(off + i);
        else if (i < head + nvec) vec(off + head + (i - head) * per);
        else one(off + head + nvec * per + (i - head - nvec));
    }
}

/* ------------------------------------------------------------ oneshot */

template <typename T, int OP> struct OneshotVec {
    const ck_sym_launch &a; T *out; bool aligned;
    __device__ void operator()(size_t e) const { store16(out, e, fold16<T, OP>(a, e), aligned); }
};
template <typename T, int OP> struct OneshotOne {
    const ck_sym_launch &a; T *out;
    __device__ void operator()(size_t e) const { out[e] = fold1<T, OP>(a, e); }
};

template <typename T, int OP>
__global__ void __launch_bounds__(CK_SYM_THREADS, CK_SYM_BLOCKS_PER_SM) oneshot_kernel(ck_sym_launch a)
{
    if (barrier(a, 0)) return;
    T *out = (T *)a.out;
    const bool aligned = ((uintptr_t)out % CK_SYM_VEC) == 0;
    for_range<T>(0, a.count, OneshotVec<T, OP>{a, out, aligned}, OneshotOne<T, OP>{a, out});
}

/* ------------------------------------------------------------ twoshot */

/* Reduce-scatter: my slice from every rank, written back into my buffer
 * (only I read my slice in this phase) and into the output. */
template <typename T, int OP> struct ReduceVec {
    const ck_sym_launch &a; T *out, *mine; bool aligned;
    __device__ void operator()(size_t e) const
    {
        Pack<T> v = fold16<T, OP>(a, e);
        *(uint4 *)(mine + e) = v.u;
        store16(out, e, v, aligned);
    }
};
template <typename T, int OP> struct ReduceOne {
    const ck_sym_launch &a; T *out, *mine;
    __device__ void operator()(size_t e) const { T v = fold1<T, OP>(a, e); mine[e] = v; out[e] = v; }
};
/* All-gather: a slice loaded from its owner's buffer. */
template <typename T> struct GatherVec {
    const T *src; T *out; bool aligned;
    __device__ void operator()(size_t e) const { Pack<T> v; v.u = load_cg16(src + e); store16(out, e, v, aligned); }
};
template <typename T> struct GatherOne {
    const T *src; T *out;
    __device__ void operator()(size_t e) const { out[e] = load_cg(src + e); }
};

/* Block i of n elements split p ways, as ck_block does on the host. */
__device__ __forceinline__ void block_of(size_t n, int p, int i, size_t *off, size_t *len)
{
    size_t base = n / (size_t)p, extra = n % (size_t)p;
    *off = (size_t)i * base + ((size_t)i < extra ? (size_t)i : extra);
    *len = base + ((size_t)i < extra ? 1 : 0);
}

template <typename T, int OP>
__global__ void __launch_bounds__(CK_SYM_THREADS, CK_SYM_BLOCKS_PER_SM) twoshot_kernel(ck_sym_launch a)
{
    T *out = (T *)a.out, *mine = (T *)(a.peers[a.rank] + a.data_off);
    const bool aligned = ((uintptr_t)out % CK_SYM_VEC) == 0;
    size_t off, len;
    if (barrier(a, 0)) return;
    block_of(a.count, a.p, a.rank, &off, &len);
    for_range<T>(off, len, ReduceVec<T, OP>{a, out, mine, aligned}, ReduceOne<T, OP>{a, out, mine});
    if (barrier(a, 1)) return;
    for (int k = 1; k < a.p; k++) {
        int q = (a.rank + k) % a.p;   /* start at different peers: spread the load */
        const T *src = (const T *)(a.peers[q] + a.data_off);
        block_of(a.count, a.p, q, &off, &len);
        for_range<T>(off, len, GatherVec<T>{src, out, aligned}, GatherOne<T>{src, out});
    }
}

/* ------------------------------------------------------------ dispatch */

template <typename T, int OP>
cudaError_t launch(const ck_sym_launch &a, int two_shot, cudaStream_t s)
{
    (void)cudaGetLastError();   /* an earlier call's leftover must not pass for this launch's failure */
    if (two_shot) twoshot_kernel<T, OP><<<a.blocks, CK_SYM_THREADS, 0, s>>>(a);
    else          oneshot_kernel<T, OP><<<a.blocks, CK_SYM_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T>
cudaError_t by_op(const ck_sym_launch &a, int two_shot, cudaStream_t s)
{
    switch (a.op) {
    case CK_SUM:  return launch<T, CK_SUM>(a, two_shot, s);
    case CK_PROD: return launch<T, CK_PROD>(a, two_shot, s);
    case CK_MIN:  return launch<T, CK_MIN>(a, two_shot, s);
    case CK_MAX:  return launch<T, CK_MAX>(a, two_shot, s);
    default:      return cudaErrorInvalidValue;
    }
}

} // namespace

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
