/*
 * cuda_plugin.c — what the library runs in place of the CUDA plug-in's
 * code until the plug-in is loaded: nccl's entries in the registries and the
 * device side of oneshot/twoshot load it (cuda_loader.c) and run its own,
 * or fail with the loader's reason.
 */
#ifdef COLLKIT_HAVE_CUDA
#include <stdio.h>
#include "internal.h"
#include "cuda_plugin.h"
#include "single_copy.h"

int ck_cuda_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                          size_t count, ck_dtype dt, ck_op op, int two_shot)
{
    const char *why;
    const ck_cuda_plugin_api *p = ck_cuda_plugin(&why);
    if (!p) return ck_fail(comm, CK_ERR_UNSUPPORTED, "CUDA support not available: %s", why);
    return p->sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, two_shot);
}

#ifdef COLLKIT_HAVE_NCCL
/* nccl's entries in the registries (algos.def, reduce_scatter.def,
 * allgather.def): they name the algorithms without loading CUDA; running one
 * loads the plug-in and runs the plug-in's own. Their mem is CUDA only, so by
 * the time one runs the communicator's creation has loaded the plug-in
 * already. */
#define NCCL_STAND_IN(fn, field)                                                                       \
    static int fn(ck_comm *c, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op) \
    {                                                                                                  \
        const char *why;                                                                               \
        const ck_cuda_plugin_api *p = ck_cuda_plugin(&why);                                            \
        if (!p) return ck_fail(c, CK_ERR_UNSUPPORTED, "CUDA support not available: %s", why);          \
        return p->field->run(c, sendbuf, recvbuf, count, dt, op);                                      \
    }
NCCL_STAND_IN(nccl_run, nccl)
NCCL_STAND_IN(nccl_rs_run, rs_nccl)
NCCL_STAND_IN(nccl_ag_run, ag_nccl)

const ck_algo ck_algo_nccl = {
    .name = "nccl",
    .summary = "ncclAllReduce (reference; from the CUDA plug-in, libcollkit_cuda)",
    .mem = CK_MEM_CUDA,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "NCCL's own choice",
    .run = nccl_run,
};

const ck_algo ck_rs_nccl = {
    .name = "nccl",
    .coll = CK_COLL_REDUCE_SCATTER,
    .summary = "ncclReduceScatter (reference; from the CUDA plug-in, libcollkit_cuda)",
    .mem = CK_MEM_CUDA,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "NCCL's own choice (ring: (p-1)α + (p-1)/p·n·β + (p-1)/p·n·γ)",
    .run = nccl_rs_run,
};

const ck_algo ck_ag_nccl = {
    .name = "nccl",
    .coll = CK_COLL_ALLGATHER,
    .summary = "ncclAllGather (reference; from the CUDA plug-in, libcollkit_cuda)",
    .mem = CK_MEM_CUDA,
    .flags = CK_ALGO_REFERENCE,
    .bytes_formula = "(not counted)",
    .cost_formula = "NCCL's own choice (ring: (p-1)α + (p-1)/p·n·β)",
    .run = nccl_ag_run,
};
#endif
#endif
