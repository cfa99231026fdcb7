/*
 * oneshot — every rank reads every peer's whole buffer and reduces it itself
 * (the small-message all-reduce of vLLM's and TensorRT-LLM's custom kernels).
 * Device buffers only (CUDA IPC on one node).
 *
 * Steps, per chunk of at most 4 MiB:
 *   1. copy my input into my symmetric buffer (cudaMalloc'd once, IPC-mapped
 *      into every peer; alternate chunks use alternate halves);
 *   2. one kernel: barrier with every peer (system-scope release/acquire
 *      flags, see symmetric_kernels.cu), then out[i] = x0[i] op x1[i] op ... op x(p-1)[i],
 *      loading x_q straight from rank q's buffer.
 * The fold runs in rank order on every rank, so all ranks get bitwise
 * identical results (the same as naive's, which folds in the same order).
 *
 * Worked example, p = 4, whole buffers X0..X3 (each rank does the same):
 *
 *   step   rank 0          rank 1          rank 2          rank 3
 *   1      X0 -> sym0      X1 -> sym1      X2 -> sym2      X3 -> sym3
 *   2      barrier         barrier         barrier         barrier
 *   3      out = ((sym0 + sym1) + sym2) + sym3, loaded over NVLink/PCIe (or the
 *          same GPU's memory when ranks share it) — on every rank
 *
 * Bytes moved: each rank's buffer is read by p-1 peers, so (p-1)·n leave it
 * (counted as "sent"), and each rank loads (p-1)·n.
 * Cost: T = 2α (copy-in, one barrier) + (p-1)·n·β + (p-1)·n·γ. One step:
 * the latency term does not grow with p, which is why it wins for small n;
 * the traffic grows with p, which is why it loses for large n.
 */
#include "collkit_algo.h"
#include "symmetric.h"

static int oneshot_run(ck_comm *comm, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm);
    int rc = ck_sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, 0);
    if (rc) return rc;
    /* Peer loads bypass ck_isend, so count them here (see oneshot_bytes). */
    uint64_t b = (uint64_t)(p - 1) * count * ck_dtype_size(dt);
    ck_count_traffic(comm, b, 0, b, 0);
    return CK_SUCCESS;
}

static uint64_t oneshot_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)cfg;
    return (uint64_t)(p - 1) * count * es;
}

const ck_algo ck_algo_oneshot = {
    .name = "oneshot",
    .summary = "every rank loads all peers' IPC buffers and reduces in rank order (small messages)",
    .mem = CK_MEM_CUDA,
    .bytes_formula = "(p-1) * n (read by peers)",
    .bytes_sent = oneshot_bytes,
    .run = oneshot_run,
};
