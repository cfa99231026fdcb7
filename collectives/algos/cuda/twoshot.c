/*
 * twoshot — reduce-scatter then all-gather, both by direct peer loads from
 * IPC-mapped buffers in one kernel (the medium-message all-reduce of vLLM's
 * and TensorRT-LLM's custom kernels). Device buffers only.
 *
 * Steps, per chunk of at most 4 MiB, blocks as ck_block cuts them:
 *   1. copy my input into my symmetric buffer (IPC-mapped into every peer);
 *   2. barrier with every peer;
 *   3. reduce-scatter: block r of the result = fold of block r of every
 *      rank's buffer in rank order, written into my own buffer and my output;
 *   4. barrier (my reduced block is now visible to the peers);
 *   5. all-gather: load every other block q from rank q's buffer.
 * Ordering: system-scope release/acquire flags with a launch counter, and the
 * same element-to-thread-block map in steps 3 and 5 (see symmetric_kernels.cu).
 *
 * Worked example, p = 4, blocks A B C D, xR = block x of rank R's input:
 *
 *   step            rank 0            rank 1            rank 2            rank 3
 *   3 (loads)       A0 A1 A2 A3       B0 B1 B2 B3       C0 C1 C2 C3       D0 D1 D2 D3
 *     -> owns       A = A0+A1+A2+A3   B                 C                 D
 *   5 (loads)       B@1 C@2 D@3       C@2 D@3 A@0       D@3 A@0 B@1       A@0 B@1 C@2
 *
 * Bytes read from rank r's buffer by its peers: the other blocks of its input
 * in step 3 (n - n_r) and its reduced block by p-1 peers in step 5
 * ((p-1)·n_r); about 2(p-1)/p·n, like the ring.
 * Cost: T = 3α (copy-in, two barriers) + 2(p-1)/p·n·β + (p-1)/p·n·γ:
 * the ring's bandwidth with a constant number of steps.
 */
#include "collkit_algo.h"
#include "symmetric.h"

/* Exactly what the kernels do: per 4 MiB chunk, ck_block's partition. */
static uint64_t twoshot_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    const size_t per = ck_sym_launch_elems(es);
    uint64_t total = 0;
    for (size_t off = 0; off < count; off += per) {
        size_t n = count - off < per ? count - off : per, o, len;
        ck_block(n, p, r, &o, &len);
        total += (uint64_t)(n - len + (size_t)(p - 1) * len) * es;
    }
    return total;
}

static int twoshot_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    int rc = ck_sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, 1);
    if (rc) return rc;
    /* Peer loads bypass ck_isend, so count them here. The formula is
     * symmetric: what my peers load from me equals what I load from them. */
    uint64_t b = twoshot_bytes(ck_comm_size(comm), ck_comm_rank(comm), count, ck_dtype_size(dt), ck_comm_config(comm));
    ck_count_traffic(comm, b, 0, b, 0);
    return CK_SUCCESS;
}

const ck_algo ck_algo_twoshot = {
    .name = "twoshot",
    .summary = "reduce-scatter + all-gather by peer loads from IPC buffers, one kernel",
    .mem = CK_MEM_CUDA,
    .bytes_formula = "2(p-1)/p * n (read by peers)",
    .bytes_sent = twoshot_bytes,
    .run = twoshot_run,
};
