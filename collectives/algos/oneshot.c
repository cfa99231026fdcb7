/*
 * oneshot — every rank reads every peer's whole buffer and reduces it itself
 * (the small-message all-reduce of vLLM's and TensorRT-LLM's custom kernels).
 * Memory "shm,cuda": host buffers on the shm transport (ranks of one node map
 * each other's memory) and device buffers on CUDA IPC (GPUs of one node map
 * each other's), the same algorithm in both (single_copy.h).
 *
 * Idea. One step: put my input where every rank can load it, wait until
 * every rank has done the same, then load all p inputs and fold them. No
 * rank waits for another's partial result, so the latency is one barrier
 * whatever p is; the price is that every rank reads everything.
 *
 * Steps, per launch of at most 4 MiB (CK_SYM_HALF):
 *   1. copy-in: my input into my symmetric buffer (alternate launches use
 *      alternate halves), where the peers can load it. On the host, a
 *      large out-of-place input that is already in the shared heap (ck_alloc)
 *      is not copied: the peers load it where it is;
 *   2. barrier with every peer (release/acquire flags: system scope on the
 *      GPU, C11 atomics on the host);
 *   3. out[i] = x0[i] op x1[i] op ... op x(p-1)[i], loading straight from
 *      each rank's buffer (16-byte loads in a kernel on the GPU,
 *      symmetric_kernels.cu; the library's reduce kernel over cache-sized
 *      blocks on the host, symmetric_shm.c);
 *   4. host, where a peer loads my own buffer (step 1 skipped): a last
 *      barrier, so nobody returns while a peer still reads its input.
 * The fold runs in rank order on every rank, so all ranks get bitwise
 * identical results (the same as naive's, which folds in the same order).
 *
 * Worked example, p = 4, inputs X0..X3, symR = rank R's symmetric buffer:
 *
 *   step           rank 0           rank 1           rank 2           rank 3
 *   1 copy-in      X0 -> sym0       X1 -> sym1       X2 -> sym2       X3 -> sym3
 *   2 barrier      flag to 1,2,3    flag to 0,2,3    flag to 0,1,3    flag to 0,1,2
 *                  wait for 1,2,3   wait for 0,2,3   wait for 0,1,3   wait for 0,1,2
 *   3 loads        sym1 sym2 sym3   sym0 sym2 sym3   sym0 sym1 sym3   sym0 sym1 sym2
 *     result       ((X0+X1)+X2)+X3 on every rank (its own buffer is read locally)
 *
 * Bytes: each rank's buffer is read by its p-1 peers, so (p-1)·n bytes leave
 * it (counted as sent with ck_count_traffic: on the host, the bytes it
 * actually loaded, which by symmetry equal what was loaded from it) and each
 * rank loads (p-1)·n. Messages: none; nothing goes through ck_isend (barrier
 * flags are not counted).
 * Cost, with L = ⌈n / 4 MiB⌉ launches (α: a copy-in or a barrier):
 *     T = 2L·α + (p-1)·n·β + (p-1)·n·γ
 * The latency term does not grow with p, which is why it wins for small n;
 * the traffic does, which is why it loses to twoshot for large n. On one
 * host β is the cost of loading a byte from a peer's memory (a cache line
 * moving between cores), not of a network link.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        4.15        4.46        4.61        6.30
 *       1M      161.29      475.86      633.15     2363.30
 *      64M    10130.33    30262.99    40329.32   151058.94
 */
#include <math.h>
#include "collkit_algo.h"
#include "single_copy.h"

static uint64_t oneshot_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)cfg;
    return (uint64_t)(p - 1) * count * es;
}

static uint64_t no_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)p; (void)r; (void)count; (void)es; (void)cfg;
    return 0;
}

static int oneshot_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
#ifdef COLLKIT_HAVE_CUDA
    if (ck_comm_mem(comm) & CK_MEM_CUDA) {
        int rc = ck_cuda_sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, 0);
        if (rc) return rc;
        /* Kernel loads bypass ck_isend, so count them here: what my peers
         * load from me equals what I load from them (see oneshot_bytes). */
        uint64_t b = oneshot_bytes(ck_comm_size(comm), ck_comm_rank(comm), count, ck_dtype_size(dt),
                                   ck_comm_config(comm));
        ck_count_traffic(comm, b, 0, b, 0);
        return CK_SUCCESS;
    }
#endif
    return ck_shm_sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, 0);   /* counts its own loads */
}
static double oneshot_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    double launches = n > 0 ? ceil(n / (double)CK_SYM_HALF) : 1;
    return 2 * launches * m->alpha + (p - 1) * n * (m->beta + m->gamma);
}

/* Every rank folds every element itself, from every rank's buffer. */
static void oneshot_diagnose(const ck_fault *f, char *out, size_t cap)
{
    size_t per = ck_sym_launch_elems(f->esize), launch = f->elem / per;
    int n = snprintf(out, cap, "rank %d folds element %zu itself from all %d ranks' buffers in launch %zu "
                     "(elements %zu..%zu)", f->rank, f->elem, f->p, launch, launch * per,
                     (launch + 1) * per < f->count ? (launch + 1) * per - 1 : f->count - 1);
    if (f->missing >= 0 && n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, "; it lacks rank %d's input: rank %d loaded rank %d's buffer before "
                 "its input was in place (a barrier or a half out of step)", f->missing, f->rank, f->missing);
}

/* The descriptor's counts: the ring's where the ranks span nodes (ck_sym_runs_as). */
static uint64_t oneshot_bytes_here(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    return ck_sym_count(p, r, count, es, cfg, 0, oneshot_bytes);
}
static uint64_t oneshot_msgs_here(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    return ck_sym_count(p, r, count, es, cfg, 1, no_msgs);
}

const ck_algo ck_algo_oneshot = {
    .name = "oneshot",
    .summary = "every rank loads all peers' mapped buffers and reduces in rank order (small messages)",
    .mem = CK_SYM_MEM,
    .bytes_formula = "(p-1) * n (read by peers)",
    .bytes_sent = oneshot_bytes_here,
    .msgs_sent = oneshot_msgs_here,
    .cost_formula = "2L·α + (p-1)·n·β + (p-1)·n·γ, L = ⌈n / 4 MiB⌉ launches",
    .cost = oneshot_cost,
    .diagnose = oneshot_diagnose,
    .run = oneshot_run,
};
