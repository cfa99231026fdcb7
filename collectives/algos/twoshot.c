/*
 * twoshot — reduce-scatter then all-gather, both by direct loads from the
 * peers' mapped buffers (the medium-message all-reduce of vLLM's and
 * TensorRT-LLM's custom kernels). Memory "shm,cuda": host buffers on the shm
 * transport and device buffers on CUDA IPC, the same algorithm in both
 * (single_copy.h).
 *
 * Idea. The ring's two phases without the ring: each rank reduces one slice
 * of the result by loading that slice from every rank at once, then every
 * rank loads the finished slices from their owners. Every byte crosses
 * between ranks twice, as in the ring, but in 2 steps instead of 2(p-1).
 *
 * Steps, per launch of at most 4 MiB (CK_SYM_HALF), slices as ck_block cuts
 * the launch's elements:
 *   1. copy-in: my input into my symmetric buffer (IPC-mapped into every
 *      peer; on the host, a large input already in the shared heap is not
 *      copied, the peers load it where it is);
 *   2. barrier with every peer;
 *   3. reduce-scatter: slice r of the result = fold of slice r of every
 *      rank's input in rank order, written where the peers can load it (my
 *      buffer; on the host, straight into my output when that is shared)
 *      and into my output;
 *   4. barrier (my reduced slice is now visible to the peers);
 *   5. all-gather: load every other slice q from rank q;
 *   6. host, where a peer loads my own buffers (step 1 skipped): a last
 *      barrier, so nobody returns while a peer still reads from it.
 * Ordering: release/acquire flags with a launch counter (system scope on the
 * GPU, C11 atomics on the host). On the GPU the same element-to-thread-block
 * map in steps 3 and 5, 16-byte loads, a slice that does not start on a
 * 16-byte boundary handled one element at a time up to the first one that
 * does (symmetric_kernels.cu); on the host the library's reduce kernel over
 * cache-sized blocks (symmetric_shm.c).
 *
 * Worked example, p = 4, slices A B C D, xR = slice x of rank R's input,
 * X@q = slice X loaded from rank q's buffer:
 *
 *   step            rank 0            rank 1            rank 2            rank 3
 *   3 (loads)       A0 A1 A2 A3       B0 B1 B2 B3       C0 C1 C2 C3       D0 D1 D2 D3
 *     -> owns       A = A0+A1+A2+A3   B                 C                 D
 *   5 (loads)       B@1 C@2 D@3       C@2 D@3 A@0       D@3 A@0 B@1       A@0 B@1 C@2
 *
 * Bytes read from rank r's buffer by its peers: the other ranks' slices of
 * its input in step 3 (n - n_r) and its reduced slice by p-1 peers in step 5
 * ((p-1)·n_r); about 2(p-1)/p·n, like the ring. The pattern is symmetric:
 * what r's peers load from r equals what r loads from them (on the host,
 * what r loaded is what it counts).
 * Messages: none; nothing goes through ck_isend (barrier flags are not counted).
 * Cost, with L = ⌈n / 4 MiB⌉ launches (α: a copy-in or a barrier):
 *     T = 3L·α + 2(p-1)/p·n·β + (p-1)/p·n·γ
 * The ring's bandwidth with a constant number of steps; one barrier more than
 * oneshot, which is why oneshot wins for the smallest messages.
 *
 * Cost table (α = 2 µs, β = 0.1 ns/B, γ = 0.05 ns/B, chunk 256 KiB), in µs:
 *        n         p=2         p=4         p=5        p=16
 *       1K        6.13        6.19        6.20        6.24
 *       1M      137.07      202.61      215.72      251.76
 *      64M     8484.61    12678.91    13517.77    15824.64
 */
#include <math.h>
#include "collkit_algo.h"
#include "single_copy.h"

/* Exactly what both implementations do: per launch, ck_block's partition. */
static uint64_t twoshot_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    const size_t per = ck_sym_launch_elems(es);
    uint64_t total = 0;
    for (size_t off = 0; off < count; off += per) {
        size_t n = count - off < per ? count - off : per, o, len;
        ck_block(n, (size_t)p, (size_t)r, &o, &len);
        total += (uint64_t)(n - len + (size_t)(p - 1) * len) * es;
    }
    return total;
}

static uint64_t no_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)p; (void)r; (void)count; (void)es; (void)cfg;
    return 0;
}

static int twoshot_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
#ifdef COLLKIT_HAVE_CUDA
    if (ck_comm_mem(comm) & CK_MEM_CUDA) {
        int rc = ck_cuda_sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, 1);
        if (rc) return rc;
        /* Kernel loads bypass ck_isend, so count them here (symmetric, see above). */
        uint64_t b = twoshot_bytes(ck_comm_size(comm), ck_comm_rank(comm), count, ck_dtype_size(dt),
                                   ck_comm_config(comm));
        ck_count_traffic(comm, b, 0, b, 0);
        return CK_SUCCESS;
    }
#endif
    return ck_shm_sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, 1);   /* counts its own loads */
}

static double twoshot_cost(const ck_cost_params *m, int p, double n)
{
    if (p == 1) return 0;
    double launches = n > 0 ? ceil(n / (double)CK_SYM_HALF) : 1, f = (double)(p - 1) / p;
    return 3 * launches * m->alpha + 2 * f * n * m->beta + f * n * m->gamma;
}

/* Which rank reduced the element (its block's owner), and who loaded it. */
static void twoshot_diagnose(const ck_fault *f, char *out, size_t cap)
{
    const size_t per = ck_sym_launch_elems(f->esize), launch = f->elem / per, first = launch * per;
    const size_t n = f->count - first < per ? f->count - first : per, e = f->elem - first;
    int q = 0;
    for (size_t o, len; q < f->p; q++) {
        ck_block(n, (size_t)f->p, (size_t)q, &o, &len);
        if (e >= o && e < o + len) break;
    }
    ck_sbuf sb;
    ck_sbuf_init(&sb, out, cap);
    ck_sbuf_add(&sb, "element %zu is in block %d of launch %zu: rank %d reduces it in the reduce-scatter", f->elem,
                q, launch, q);
    if (f->missing >= 0 && f->missing != q)
        ck_sbuf_add(&sb, ", loading rank %d's copy from its buffer (a value lacking it was folded before rank %d's "
                    "input was in place)", f->missing, f->missing);
    else if (f->missing == q)
        ck_sbuf_add(&sb, ", starting from rank %d's own input", q);
    if (q != f->rank) ck_sbuf_add(&sb, "; rank %d loads the result from rank %d's buffer in the all-gather", f->rank, q);
}

/* The descriptor's counts: the ring's where the ranks span nodes (ck_sym_runs_as). */
static uint64_t twoshot_bytes_here(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    return ck_sym_count(p, r, count, es, cfg, 0, twoshot_bytes);
}
static uint64_t twoshot_msgs_here(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    return ck_sym_count(p, r, count, es, cfg, 1, no_msgs);
}

const ck_algo ck_algo_twoshot = {
    .name = "twoshot",
    .summary = "reduce-scatter + all-gather by loads from peers' mapped buffers, 2 barriers",
    .mem = CK_SYM_MEM,
    .bytes_formula = "2(p-1)/p * n (read by peers)",
    .bytes_sent = twoshot_bytes_here,
    .msgs_sent = twoshot_msgs_here,
    .cost_formula = "3L·α + 2(p-1)/p·n·β + (p-1)/p·n·γ, L = ⌈n / 4 MiB⌉ launches",
    .cost = twoshot_cost,
    .diagnose = twoshot_diagnose,
    .run = twoshot_run,
};
