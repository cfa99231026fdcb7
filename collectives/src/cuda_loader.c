/*
 * cuda_loader.c — opens libcollkit_cuda.so (the CUDA IPC transport, the
 * device side of oneshot/twoshot, nccl) when a program first uses device
 * memory. See cuda_plugin.h; what stands in for the plug-in's algorithms
 * until then is cuda_plugin.c. The loader uses nothing of the
 * communicator, so the communicator's creation can call it. The plug-in is
 * lib/libcollkit_cuda.so beside the program's bin/ folder, or else found
 * like any shared library: through the program's run path (collkit-cc gives
 * its programs the lib folder of the build or kit they were built against)
 * or LD_LIBRARY_PATH.
 */
#ifdef COLLKIT_HAVE_CUDA
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "cuda_plugin.h"
#include "collkit_util.h"

#ifndef COLLKIT_CUDA_PLUGIN_FILE
#define COLLKIT_CUDA_PLUGIN_FILE "libcollkit_cuda.so"
#endif

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

#endif
