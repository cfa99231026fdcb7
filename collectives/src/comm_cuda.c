/*
 * comm_cuda.c — the collkit_cuda.h accessors: a communicator's device,
 * stream and PCI ids, for algorithm files with CUDA work of their own. They
 * live here, beside the communicator, so that algorithm files never see
 * ck_comm's fields and the transport never sees ck_comm at all.
 */
#include <stdio.h>
#include "internal.h"
#include "cuda_logic.h"
#include "transport_cuda.h"
#include "collkit_cuda.h"
#include "cuda_plugin.h"

/* The interface this plug-in was built for (cuda_plugin.h): the loader
 * compares it with its own before it takes anything else from here. */
const uint64_t ck_cuda_plugin_stamp = CK_CUDA_PLUGIN_STAMP;

static void *cuda_self(const ck_comm *c)
{
    return c && c->tr.mem == CK_MEM_CUDA ? c->tr.self : NULL;
}

cudaStream_t ck_cuda_stream(const ck_comm *c)
{
    void *t = cuda_self(c);
    return t ? ck_cuda_tr_stream(t) : NULL;
}

int ck_cuda_device(const ck_comm *c)
{
    void *t = cuda_self(c);
    return t ? ck_cuda_tr_device(t) : -1;
}

const char *ck_cuda_pci_id(const ck_comm *c, int rank)
{
    void *t = cuda_self(c);
    return t ? ck_cuda_tr_pci_id(t, rank) : NULL;
}

int ck_cuda_use(ck_comm *c)
{
    void *t = cuda_self(c);
    if (!t) return ck_fail(c, CK_ERR_UNSUPPORTED, "not a CUDA communicator (transport %s)",
                           c ? c->tr.name : "none");
    int rc = ck_cuda_tr_use(t);
    if (rc) return ck_fail(c, rc, "cannot select device %d on this thread%s%s", ck_cuda_tr_device(t),
                           c->tr.error ? ": " : "", c->tr.error ? c->tr.error(t) : "");
    return CK_SUCCESS;
}

int ck_cuda_wait(ck_comm *c, double bound_s)
{
    void *t = cuda_self(c);
    if (!t) return -1;
    return ck_cuda_tr_wait(t, bound_s, NULL);
}

/* ck_gpu_count's CUDA half (the library's ck_gpu_count calls it through the
 * plug-in table, cuda_loader.c). */
int ck_cuda_gpu_count(int *ndev, char *why, size_t whylen)
{
    int n = 0, drv = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    (void)cudaGetLastError();
    cudaDriverGetVersion(&drv);
    *ndev = 0;
    switch (ck_cu_probe_exit((int)e, n, drv)) {
    case 0:
        *ndev = n;
        if (why && whylen) snprintf(why, whylen, "%d CUDA device%s", n, n == 1 ? "" : "s");
        return CK_SUCCESS;
    case CK_CU_SKIP:
        if (why && whylen)
            snprintf(why, whylen, "no CUDA device (%s)", e == cudaSuccess ? "cudaGetDeviceCount found none" : cudaGetErrorString(e));
        return CK_ERR_UNSUPPORTED;
    default:
        if (why && whylen)
            snprintf(why, whylen, "a CUDA device does not work: cudaGetDeviceCount: %s (%s), driver version %d",
                     cudaGetErrorString(e), cudaGetErrorName(e), drv);
        return CK_ERR_TRANSPORT;
    }
}
