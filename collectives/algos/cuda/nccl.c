/*
 * nccl — the GPU reference: ncclAllReduce on the communicator's device
 * buffers, on the transport's stream.
 *
 * The NCCL communicator is made on the first call and kept in ck_comm's
 * ext_nccl slot: rank 0 draws a ncclUniqueId, MPI_Bcast hands it to the
 * others, and every rank calls ncclCommInitRank on the device the CUDA
 * transport picked. Like `mpi`, it bypasses the point-to-point layer: no
 * traffic count, no trace (CK_ALGO_REFERENCE).
 *
 * Several ranks on one GPU: NCCL before 2.30 refuses that (it hangs or errors
 * deep inside init), so the ranks compare their devices' PCI bus ids first
 * and stop with a clear message; 2.30 and later accept it when
 * NCCL_MULTI_RANK_GPU_ENABLE=1 is set.
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
    int version = 0, rc;
    char which[96];
    ncclGetVersion(&version);
    /* NCCL_VERSION_CODE: 2.30.0 -> 23000 (2.8 and older used major*1000 + minor*100). */
    if (shares_gpu(c, which, sizeof which)) {
        const char *env = getenv("NCCL_MULTI_RANK_GPU_ENABLE");
        if (version < 23000)
            return ck_fail(c, CK_ERR_UNSUPPORTED,
                           "nccl: %s, and NCCL %d.%d.%d does not support several ranks on one GPU "
                           "(2.30+ does with NCCL_MULTI_RANK_GPU_ENABLE=1); use one rank per GPU",
                           which, version / 10000, version / 100 % 100, version % 100);
        if (!env || strcmp(env, "1"))
            return ck_fail(c, CK_ERR_UNSUPPORTED,
                           "nccl: %s; set NCCL_MULTI_RANK_GPU_ENABLE=1 to let NCCL run that way", which);
    }
    if ((rc = ck_cuda_use(c))) return rc;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int bad = ck_comm_rank(c) == 0 && ncclGetUniqueId(&id) != ncclSuccess, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ck_comm_mpi(c));
    if (anybad) return ck_fail(c, CK_ERR_TRANSPORT, "nccl: ncclGetUniqueId failed on rank 0");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, ck_comm_mpi(c));
    ncclComm_t *nc = malloc(sizeof *nc);
    if (!nc) return CK_ERR_NOMEM;
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

static int nccl_run(ck_comm *c, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    static const ncclDataType_t types[] = {[CK_F32] = ncclFloat32, [CK_F64] = ncclFloat64,
                                           [CK_I32] = ncclInt32, [CK_I64] = ncclInt64,
                                           [CK_BF16] = ncclBfloat16};
    static const ncclRedOp_t ops[] = {[CK_SUM] = ncclSum, [CK_PROD] = ncclProd,
                                      [CK_MIN] = ncclMin, [CK_MAX] = ncclMax};
    int rc;
    if ((unsigned)dt >= CK_NUM_DTYPES || (unsigned)op >= CK_AVG) return CK_ERR_INVALID_ARG;
    if (!ck_algo_state(c, &ck_algo_nccl) && (rc = nccl_setup(c))) return rc;
    if ((rc = ck_cuda_use(c))) return rc;
    ncclResult_t r = ncclAllReduce(sendbuf, recvbuf, count, types[dt], ops[op],
                                   *(ncclComm_t *)ck_algo_state(c, &ck_algo_nccl), ck_cuda_stream(c));
    if (r != ncclSuccess)
        return ck_fail(c, CK_ERR_TRANSPORT, "nccl: ncclAllReduce failed: %s", ncclGetErrorString(r));
    return CK_SUCCESS;   /* the transport's finish synchronises the stream */
}

const ck_algo ck_algo_nccl = {
    .name = "nccl",
    .summary = "ncclAllReduce (reference; NCCL chooses ring/tree and its own kernels)",
    .mem = CK_MEM_CUDA,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .bytes_sent = NULL,
    .run = nccl_run,
};
