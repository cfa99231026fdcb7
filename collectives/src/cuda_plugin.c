/*
 * cuda_plugin.c — opens libcollkit_cuda.so (the CUDA IPC transport, the
 * device side of oneshot/twoshot, nccl) when a program first uses device
 * memory, and stands in for nccl in the registry until then. See
 * cuda_plugin.h. The plug-in is lib/libcollkit_cuda.so beside the program's
 * bin/ folder, or else found like any shared library: through the program's
 * run path (collkit-cc gives its programs the lib folder of the build or kit
 * they were built against) or LD_LIBRARY_PATH.
 */
#ifdef COLLKIT_HAVE_CUDA
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "protocol.h"
#include "cuda_plugin.h"
#include "single_copy.h"
#include "collkit_util.h"

#ifndef COLLKIT_CUDA_PLUGIN_FILE
#define COLLKIT_CUDA_PLUGIN_FILE "libcollkit_cuda.so"
#endif

/* The library functions the plug-in calls. A program links only the members
 * of libcollkit.a it references itself, so a program that never named, say,
 * ck_dtype_is_float would not have it for the plug-in to bind to: this table
 * references every one. A library function the plug-in starts calling goes
 * here too: until it does, dlopen (RTLD_NOW) refuses the plug-in and names
 * the function ("undefined symbol: ...", which gpu.plugin reports). */
typedef void (*ck_any_fn)(void);
__attribute__((used)) const ck_any_fn ck_cuda_plugin_imports[] = {
    (ck_any_fn)ck_algo_state,   (ck_any_fn)ck_algo_state_set, (ck_any_fn)ck_comm_config,
    (ck_any_fn)ck_comm_errmsg,  (ck_any_fn)ck_comm_mpi,       (ck_any_fn)ck_comm_rank,
    (ck_any_fn)ck_comm_size,    (ck_any_fn)ck_comm_mem,       (ck_any_fn)ck_count_traffic,
    (ck_any_fn)ck_dtype_is_float, (ck_any_fn)ck_dtype_name,   (ck_any_fn)ck_dtype_size,
    (ck_any_fn)ck_fail,         (ck_any_fn)ck_now,            (ck_any_fn)ck_sync,
    (ck_any_fn)ck_poll_bounded, (ck_any_fn)ck_is_print_rank,
    (ck_any_fn)ck_proto_init,   (ck_any_fn)ck_proto_fini,     (ck_any_fn)ck_proto_post,
    (ck_any_fn)ck_proto_test,   (ck_any_fn)ck_proto_cancel,   (ck_any_fn)ck_proto_progress,
    (ck_any_fn)ck_proto_pending, (ck_any_fn)ck_proto_fail,    (ck_any_fn)ck_proto_break,
    (ck_any_fn)ck_proto_dead,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ck_cuda_plugin_api api;
static const ck_cuda_plugin_api *loaded;
static char load_error[512];

static void *need(void *h, const char *sym)
{
    void *p = dlsym(h, sym);
    if (!p && !load_error[0])
        snprintf(load_error, sizeof load_error, "%s: no symbol %s", COLLKIT_CUDA_PLUGIN_FILE, sym);
    return p;
}

static void load(void)
{
    void *h = ck_plugin_open(COLLKIT_CUDA_PLUGIN_FILE, load_error, sizeof load_error);
    if (!h) return;
    const uint64_t *stamp = dlsym(h, "ck_cuda_plugin_stamp");
    if (!stamp || *stamp != CK_CUDA_PLUGIN_STAMP) {
        if (!stamp)
            snprintf(load_error, sizeof load_error, "%s is no collkit plug-in of this version (it has no "
                     "ck_cuda_plugin_stamp): use the one of the build or kit this program was built with",
                     COLLKIT_CUDA_PLUGIN_FILE);
        else
            snprintf(load_error, sizeof load_error, "%s was built for another collkit (interface %016llx, this "
                     "program's %016llx): use the one of the build or kit this program was built with",
                     COLLKIT_CUDA_PLUGIN_FILE, (unsigned long long)*stamp, (unsigned long long)CK_CUDA_PLUGIN_STAMP);
        dlclose(h);
        return;
    }
    /* dlsym returns data as void *; POSIX guarantees the function pointers
     * round-trip through it. */
    *(void **)&api.transport_create = need(h, "ck_transport_cuda_create");
    *(void **)&api.sym_allreduce = need(h, "ck_sym_allreduce");
    *(void **)&api.gpu_count = need(h, "ck_cuda_gpu_count");
#ifdef COLLKIT_HAVE_NCCL
    api.nccl = need(h, "ck_algo_nccl");
    api.rs_nccl = need(h, "ck_rs_nccl");
    api.ag_nccl = need(h, "ck_ag_nccl");
#endif
    if (load_error[0]) {
        dlclose(h);
        return;
    }
    loaded = &api;
}

const ck_cuda_plugin_api *ck_cuda_plugin(const char **why)
{
    pthread_once(&once, load);
    if (why) *why = loaded ? "" : load_error;
    return loaded;
}

int ck_cuda_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                          size_t count, ck_dtype dt, ck_op op, int two_shot)
{
    const char *why;
    const ck_cuda_plugin_api *p = ck_cuda_plugin(&why);
    if (!p) return ck_fail(comm, CK_ERR_UNSUPPORTED, "CUDA support not available: %s", why);
    return p->sym_allreduce(comm, sendbuf, recvbuf, count, dt, op, two_shot);
}

/* How many GPUs this process can use: the plug-in asks CUDA; without the
 * plug-in (no CUDA runtime on this machine) there are none, and the loader's
 * reason says why. */
int ck_gpu_count(int *ndev, char *why, size_t whylen)
{
    const char *e;
    const ck_cuda_plugin_api *p = ck_cuda_plugin(&e);
    if (p) return p->gpu_count(ndev, why, whylen);
    *ndev = 0;
    if (why && whylen) snprintf(why, whylen, "CUDA support not available: %s", e);
    return CK_ERR_UNSUPPORTED;
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
