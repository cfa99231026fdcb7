/*
 * devstep.c — tagtrain's step on a GPU (devstep.h): the device model through
 * its plug-in's table (device.h), the gradient all-reduce on a CUDA
 * communicator. Plain C with no CUDA header: it builds, and says why a GPU
 * run cannot start, everywhere.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "devstep.h"
#include "device.h"

#define PLUGIN_FILE "libtagtrain_cuda.so"

struct devstep {
    const mlp_dev_api *api;
    mlp_dev           *dev;
    ck_comm           *comm;
    const ck_algo     *algo;
    size_t             nparams;
    int                p;
    char               note[256];
};

int devstep_parse_device(const char *s)
{
    return !strcmp(s, "cpu") ? 0 : !strcmp(s, "cuda") ? 1 : -1;
}

int devstep_check_algo(const char *name, char *err, size_t errlen)
{
    const ck_algo *a;
    int n = 0;
    if (!strcmp(name, "auto")) return 0;
    return ck_algo_parse_list(name, CK_MEM_CUDA, &a, 1, &n, err, errlen) ? -1 : 0;
}

/* The plug-in's table, loaded once (NULL with the reason in why). */
static const mlp_dev_api *plugin(char *why, size_t whylen)
{
#ifdef COLLKIT_HAVE_CUDA
    static const mlp_dev_api *api;
    static char reason[512];
    static int tried;
    if (!tried) {
        tried = 1;
        void *h = ck_plugin_open(PLUGIN_FILE, reason, sizeof reason);
        const mlp_dev_api *a = h ? (const mlp_dev_api *)dlsym(h, MLP_DEV_API_SYMBOL) : NULL;
        if (h && !a)
            snprintf(reason, sizeof reason, "%s: no symbol %s", PLUGIN_FILE, MLP_DEV_API_SYMBOL);
        else if (a && (a->api_size != sizeof *a || a->mlp_size != sizeof(mlp)))
            snprintf(reason, sizeof reason, "%s is from another build of collkit (its model layout differs from "
                     "this tagtrain's): rebuild, or use the lib/ folder beside this program", PLUGIN_FILE);
        else
            api = a;
    }
    if (!api) snprintf(why, whylen, "the device model cannot be loaded: %s", reason);
    return api;
#else
    snprintf(why, whylen, "this build of collkit has no CUDA (configured without the CUDA Toolkit: "
             "cmake/cuda.cmake); --device cpu trains on the host");
    return NULL;
#endif
}

int devstep_load(char *why, size_t whylen) { return plugin(why, whylen) ? 0 : -1; }

int devstep_available(char *why, size_t whylen)
{
#ifdef COLLKIT_HAVE_CUDA
    /* The GPU first: the device model's libraries (cuBLAS) are loaded only
     * where there is one to run them. */
    int ndev = 0;
    char e[320];
    switch (ck_gpu_count(&ndev, e, sizeof e)) {
    case CK_SUCCESS: break;
    case CK_ERR_UNSUPPORTED: snprintf(why, whylen, "%s", e); return -1;
    default: snprintf(why, whylen, "the CUDA device does not work: %s", e); return -1;
    }
#endif
    return plugin(why, whylen) ? 0 : -1;
}

const char *devstep_pick_algo(const char *name, int have_nccl, const char *ids, size_t idlen, int p, char *note,
                              size_t notelen)
{
    note[0] = '\0';
    if (strcmp(name, "auto")) return name;
    /* nccl is the reference and the fastest where it runs; it refuses ranks
     * that share a GPU (nccl.c). ring over CUDA IPC moves the data with
     * copies and events only — no kernel that spins waiting for a peer's,
     * which ranks time-sharing one GPU could hold up. */
    char shared[160] = "";
    for (int a = 0; a < p && !shared[0]; a++)
        for (int b = a + 1; b < p && !shared[0]; b++)
            if (!strncmp(ids + (size_t)a * idlen, ids + (size_t)b * idlen, idlen))
                snprintf(shared, sizeof shared, "ranks %d and %d share GPU %.*s", a, b, (int)idlen,
                         ids + (size_t)a * idlen);
    if (have_nccl && !shared[0]) {
        snprintf(note, notelen, "auto: nccl (the reference; every rank has a GPU of its own)");
        return "nccl";
    }
    if (!have_nccl) snprintf(note, notelen, "auto: ring over CUDA IPC (this build has no NCCL)");
    else snprintf(note, notelen, "auto: ring over CUDA IPC, not nccl: %s, which NCCL refuses", shared);
    return "ring";
}

int devstep_open(devstep **out, MPI_Comm world, const char *algo_name, const mlp *m, const csr_rows *x, size_t nrows,
                 int max_batch, char *err, size_t errlen)
{
    *out = NULL;
    err[0] = '\0';
    devstep *ds = calloc(1, sizeof *ds);
    int ok = ds && (ds->api = plugin(err, errlen)) != NULL, all = 0;
    if (!ds) snprintf(err, errlen, "out of memory");
    ck_watch_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, world, "the verdict on the device");
    if (!all) goto fail;
    int rc = ck_comm_create(world, CK_MEM_CUDA, &ds->comm);
    ok = rc == CK_SUCCESS;
    if (!ok) snprintf(err, errlen, "the CUDA communicator: %s%s%s", ck_strerror(rc), ds->comm ? ": " : "",
                      ds->comm ? ck_comm_errmsg(ds->comm) : "");
    ck_watch_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, world, "the verdict on the CUDA communicator");
    if (!all) goto fail;
    ds->p = ck_comm_size(ds->comm);
    ds->nparams = m->nparams;

    /* Which ranks share a GPU: the PCI bus ids of the devices the transport
     * made current, compared. */
    enum { ID = 32 };
    const int me = ck_comm_rank(ds->comm);
    char *ids = calloc((size_t)ds->p, ID), mine[ID] = "";
    if (!ids) ck_watch_abort("tagtrain: rank %d: out of memory", me);
    if (ds->api->pci_id(mine, sizeof mine)) snprintf(mine, sizeof mine, "rank %d's GPU", me);
    ck_watch_allgather(mine, ID, MPI_CHAR, ids, ID, MPI_CHAR, world, "the GPUs' PCI ids");
    const char *name = devstep_pick_algo(algo_name, ck_algo_find("nccl") != NULL, ids, ID, ds->p, ds->note,
                                         sizeof ds->note);
    free(ids);
    int n = 0;
    ok = ck_algo_parse_list(name, ck_comm_mem(ds->comm), &ds->algo, 1, &n, err, errlen) == 0;
    ok = ok && ds->api->create(&ds->dev, m, x, nrows, max_batch, err, errlen) == 0;
    ck_watch_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, world, "the verdict on the device model");
    if (!all) goto fail;
    *out = ds;
    return 0;
fail:
    devstep_close(ds);
    return -1;
}

void devstep_close(devstep *ds)
{
    if (!ds) return;
    if (ds->dev) ds->api->destroy(ds->dev);
    ck_comm_destroy(ds->comm);
    free(ds);
}

ck_comm *devstep_comm(devstep *ds) { return ds->comm; }
const ck_algo *devstep_algo(const devstep *ds) { return ds->algo; }
const char *devstep_note(const devstep *ds) { return ds->note; }

static int dev_fail(devstep *ds, char *err, size_t errlen)
{
    snprintf(err, errlen, "device model: %s", ds->api->error(ds->dev));
    return -1;
}

int devstep_upload(devstep *ds, const float *params, const float *m, const float *v, char *err, size_t errlen)
{
    if (ds->api->set_params(ds->dev, params) || ds->api->set_moments(ds->dev, m, v)) return dev_fail(ds, err, errlen);
    return 0;
}

int devstep_download(devstep *ds, float *params, float *m, float *v, char *err, size_t errlen)
{
    if (ds->api->get_params(ds->dev, params) || (m && v && ds->api->get_moments(ds->dev, m, v)))
        return dev_fail(ds, err, errlen);
    return 0;
}

int devstep_forward_backward(devstep *ds, const dp_ctx *dp, const size_t *order, size_t first, size_t len, int batch,
                             const int *y, size_t *rows, int *labels, rng_t *drop, double loss_cnt[2], char *err,
                             size_t errlen)
{
    for (size_t mb = 0; mb < len; mb += (size_t)batch) {
        const size_t mlen = len - mb < (size_t)batch ? len - mb : (size_t)batch;
        const int b = dp_shard(dp, order, first + mb, mlen, rows);
        double loss = 0.0;
        for (int r = 0; r < b; r++) labels[r] = y[rows[r]];
        if (ds->api->forward(ds->dev, rows, labels, b, 1, drop, &loss) || ds->api->backward(ds->dev, labels, b))
            return dev_fail(ds, err, errlen);
        loss_cnt[0] += loss;
        loss_cnt[1] += b;
    }
    return 0;
}

int devstep_allreduce(devstep *ds, size_t *bytes, char *err, size_t errlen)
{
    *bytes = 0;
    if (ds->p < 2) return 0;
    /* backward waited for its stream: the buffer is complete for the
     * transport's stream (ck_allreduce's rule for device buffers). */
    int rc = ck_allreduce(ds->comm, ds->algo, CK_IN_PLACE, ds->api->grads(ds->dev), ds->nparams, CK_F32, CK_SUM);
    if (rc) {
        snprintf(err, errlen, "%s on device buffers: %s: %s", ds->algo->name, ck_strerror(rc), ck_comm_errmsg(ds->comm));
        return rc;
    }
    *bytes = ds->nparams * sizeof(float);
    return 0;
}

int devstep_update(devstep *ds, optimizer *o, float scale, char *err, size_t errlen)
{
    return ds->api->step(ds->dev, o, scale) ? dev_fail(ds, err, errlen) : 0;
}
