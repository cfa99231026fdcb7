/*
 * nccl — the GPU reference: ncclAllReduce on the communicator's device
 * buffers, on the transport's stream. Every other device algorithm is
 * measured against it, as the host ones are against `mpi`.
 *
 * Idea. NCCL picks, per message size and topology, a ring (the schedule of
 * ring.c, cut into chunks and run on several channels, each a few thread
 * blocks with its own slice of the buffer) or a tree, and moves the data
 * with its own kernels: peer loads/stores over NVLink, or copies through
 * buffers over PCIe. On 4 GPUs its ring does what ring.c does, on every
 * channel at once (blocks A B C D of that channel's slice):
 *
 *   reduce-scatter    GPU 0       GPU 1       GPU 2        GPU 3
 *   step 0 sends      A0          B1          C2           D3
 *   step 1 sends      D3+D0       A0+A1       B1+B2        C2+C3
 *   step 2 sends      C2+C3+C0    D3+D0+D1    A0+A1+A2     B1+B2+B3
 *   all-gather        passes the finished blocks on for 3 more steps
 *
 * Setup. The NCCL communicator is made on the first call and kept in
 * ck_algo_state (ncclCommDestroy'd by ck_comm_destroy): rank 0 draws a
 * ncclUniqueId, MPI_Bcast on ck_comm_mpi hands it to the others, and every
 * rank calls ncclCommInitRank on the device the CUDA transport picked.
 *
 * Several ranks on one GPU (a one-GPU machine running p = 2, 4): NCCL before
 * 2.30 refuses it at initialisation (ncclCommInitRank fails with "Duplicate
 * GPU detected"); 2.30 and later can, with the experimental
 * NCCL_MULTI_RANK_GPU_ENABLE=1. So the ranks compare their GPUs' PCI bus ids
 * first and, where NCCL would refuse, stop with a message naming the ranks
 * and the GPU — all of them together, so no rank is left waiting in init.
 *
 * Reduce-scatter and all-gather (ck_rs_nccl, ck_ag_nccl, at the end) are
 * NCCL's too, on the same NCCL communicator.
 *
 * Bytes: about 2(p-1)/p·n per rank for the ring, but not counted: like
 * `mpi`, it bypasses the point-to-point layer (CK_ALGO_REFERENCE: no traffic
 * check, no trace, no model; collbench measures it).
 */
#include <stdlib.h>
#include <string.h>
#include <nccl.h>
#include "collkit_algo.h"
#include "collkit_cuda.h"

extern const ck_algo ck_algo_nccl;

static void nccl_free(void *p)
{
    ncclComm_t *nc = p;
    ncclCommDestroy(*nc);
    free(nc);
}

/* 1 when any two ranks sit on the same device (same answer on every rank). */
static int shares_gpu(ck_comm *c, char *which, size_t n)
{
    const int p = ck_comm_size(c);
    for (int a = 0; a < p; a++)
        for (int b = a + 1; b < p; b++)
            if (!strcmp(ck_cuda_pci_id(c, a), ck_cuda_pci_id(c, b))) {
                snprintf(which, n, "ranks %d and %d share GPU %s", a, b, ck_cuda_pci_id(c, a));
                return 1;
            }
    return 0;
}

static int nccl_setup(ck_comm *c)
{
    int version = 0, refuse = 0, anyrefuse = 0;
    char which[96], why[320] = "";
    ncclGetVersion(&version);
    /* NCCL_VERSION_CODE since 2.9: major*10000 + minor*100 + patch (2.30.0 -> 23000). */
    if (shares_gpu(c, which, sizeof which)) {
        const char *env = getenv("NCCL_MULTI_RANK_GPU_ENABLE");
        if (version < 23000) {
            refuse = 1;
            snprintf(why, sizeof why, "nccl: %s, and NCCL %d.%d.%d refuses ranks that share a GPU at "
                     "initialisation (NCCL 2.30+ can run them with the experimental "
                     "NCCL_MULTI_RANK_GPU_ENABLE=1); use one rank per GPU",
                     which, version / 10000, version / 100 % 100, version % 100);
        } else if (!env || strcmp(env, "1")) {
            refuse = 1;
            snprintf(why, sizeof why, "nccl: %s; NCCL %d.%d.%d runs ranks that share a GPU only with the "
                     "experimental NCCL_MULTI_RANK_GPU_ENABLE=1 (set it on every rank)",
                     which, version / 10000, version / 100 % 100, version % 100);
        }
    }
    /* Every rank must stop if one does: the others would wait in init forever. */
    MPI_Allreduce(&refuse, &anyrefuse, 1, MPI_INT, MPI_MAX, ck_comm_mpi(c));
    if (anyrefuse)
        return ck_fail(c, CK_ERR_UNSUPPORTED, "%s", refuse ? why :
                       "nccl: another rank refused: ranks share a GPU (see its message)");
    /* Local failures are agreed on too, for the same reason. */
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclComm_t *nc = malloc(sizeof *nc);
    int bad = !nc || ck_cuda_use(c) != CK_SUCCESS || (ck_comm_rank(c) == 0 && ncclGetUniqueId(&id) != ncclSuccess);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ck_comm_mpi(c));
    if (anybad) {
        free(nc);
        if (!bad) return ck_fail(c, CK_ERR_TRANSPORT, "nccl: setup failed on another rank");
        if (ck_comm_errmsg(c)[0]) return CK_ERR_TRANSPORT;   /* ck_cuda_use said why */
        return ck_fail(c, CK_ERR_TRANSPORT, "nccl: out of host memory, or ncclGetUniqueId failed");
    }
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, ck_comm_mpi(c));
    ncclResult_t r = ncclCommInitRank(nc, ck_comm_size(c), id, ck_comm_rank(c));
    bad = r != ncclSuccess;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ck_comm_mpi(c));
    if (anybad) {
        if (!bad) ncclCommDestroy(*nc);
        free(nc);
        return ck_fail(c, CK_ERR_TRANSPORT, "nccl: ncclCommInitRank failed%s%s",
                       bad ? ": " : " on another rank", bad ? ncclGetErrorString(r) : "");
    }
    return ck_algo_state_set(c, &ck_algo_nccl, nc, nccl_free);
}

static const ncclDataType_t nccl_types[] = {[CK_F32] = ncclFloat32, [CK_F64] = ncclFloat64, [CK_I32] = ncclInt32,
                                            [CK_I64] = ncclInt64, [CK_BF16] = ncclBfloat16};
static const ncclRedOp_t nccl_ops[] = {[CK_SUM] = ncclSum, [CK_PROD] = ncclProd, [CK_MIN] = ncclMin,
                                       [CK_MAX] = ncclMax};

/* The NCCL communicator, made on first use (one for all three collectives:
 * the state belongs to the all-reduce's descriptor). */
static int nccl_comm(ck_comm *c, ck_dtype dt, ck_op op, ncclComm_t *out)
{
    int rc;
    if ((unsigned)dt >= CK_NUM_DTYPES || (unsigned)op >= CK_AVG) return CK_ERR_INVALID_ARG;
    if (!ck_algo_state(c, &ck_algo_nccl) && (rc = nccl_setup(c))) return rc;
    if ((rc = ck_cuda_use(c))) return rc;
    *out = *(ncclComm_t *)ck_algo_state(c, &ck_algo_nccl);
    return CK_SUCCESS;
}

static int nccl_status(ck_comm *c, ncclResult_t r, const char *what)
{
    if (r != ncclSuccess) return ck_fail(c, CK_ERR_TRANSPORT, "nccl: %s failed: %s", what, ncclGetErrorString(r));
    return CK_SUCCESS;   /* the transport's finish synchronises the stream */
}

static int nccl_run(ck_comm *c, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    ncclComm_t nc;
    int rc = nccl_comm(c, dt, op, &nc);
    if (rc) return rc;
    return nccl_status(c, ncclAllReduce(sendbuf, recvbuf, count, nccl_types[dt], nccl_ops[op], nc, ck_cuda_stream(c)),
                       "ncclAllReduce");
}

/* ncclReduceScatter and ncclAllGather take equal blocks. Uneven ones
 * (count not a multiple of p) run as one group of p ncclReduce (ncclBroadcast)
 * calls, block q rooted at rank q. collkit's in place is NCCL's: this rank's
 * block at its offset of the whole buffer. */
static int nccl_rs_run(ck_comm *c, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(c), r = ck_comm_rank(c);
    ncclComm_t nc;
    int rc = nccl_comm(c, dt, op, &nc);
    if (rc) return rc;
    if (count % p == 0)
        return nccl_status(c, ncclReduceScatter(sendbuf, recvbuf, count / p, nccl_types[dt], nccl_ops[op], nc,
                                                ck_cuda_stream(c)), "ncclReduceScatter");
    const size_t es = ck_dtype_size(dt);
    ncclResult_t res = ncclGroupStart();
    for (int q = 0; q < p && res == ncclSuccess; q++) {
        size_t off, len;
        ck_block(count, p, q, &off, &len);
        res = ncclReduce((const char *)sendbuf + off * es, q == r ? recvbuf : NULL, len, nccl_types[dt],
                         nccl_ops[op], q, nc, ck_cuda_stream(c));
    }
    ncclResult_t end = ncclGroupEnd();
    return nccl_status(c, res != ncclSuccess ? res : end, "grouped ncclReduce");
}

static int nccl_ag_run(ck_comm *c, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    (void)op;
    const int p = ck_comm_size(c);
    ncclComm_t nc;
    int rc = nccl_comm(c, dt, CK_SUM, &nc);
    if (rc) return rc;
    if (count % p == 0)
        return nccl_status(c, ncclAllGather(sendbuf, recvbuf, count / p, nccl_types[dt], nc, ck_cuda_stream(c)),
                           "ncclAllGather");
    const size_t es = ck_dtype_size(dt);
    ncclResult_t res = ncclGroupStart();
    for (int q = 0; q < p && res == ncclSuccess; q++) {
        size_t off, len;
        ck_block(count, p, q, &off, &len);
        res = ncclBroadcast(q == ck_comm_rank(c) ? sendbuf : NULL, (char *)recvbuf + off * es, len, nccl_types[dt], q,
                            nc, ck_cuda_stream(c));
    }
    ncclResult_t end = ncclGroupEnd();
    return nccl_status(c, res != ncclSuccess ? res : end, "grouped ncclBroadcast");
}

const ck_algo ck_algo_nccl = {
    .name = "nccl",
    .summary = "ncclAllReduce (reference; NCCL chooses ring/tree and its own kernels)",
    .mem = CK_MEM_CUDA,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .bytes_sent = NULL,   /* a reference: no traffic, messages or model of ours */
    .msgs_sent = NULL,
    .cost_formula = "NCCL's own choice (ring: 2(p-1)α + 2(p-1)/p·n·β + (p-1)/p·n·γ)",
    .cost = NULL,
    .run = nccl_run,
};

const ck_algo ck_rs_nccl = {
    .name = "nccl",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "ncclReduceScatter (reference; uneven blocks: grouped ncclReduce)",
    .mem = CK_MEM_CUDA,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "NCCL's own choice (ring: (p-1)α + (p-1)/p·n·β + (p-1)/p·n·γ)",
    .run = nccl_rs_run,
};

const ck_algo ck_ag_nccl = {
    .name = "nccl",
    .coll = CK_COLL_ALLGATHER,
    .summary = "ncclAllGather (reference; uneven blocks: grouped ncclBroadcast)",
    .mem = CK_MEM_CUDA,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "NCCL's own choice (ring: (p-1)α + (p-1)/p·n·β)",
    .run = nccl_ag_run,
};
