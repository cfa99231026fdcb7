/*
 * device_plugin.c — the device model (device.c) as tagtrain's plug-in,
 * lib/libtagtrain_cuda.so: the table device.h describes, under the name
 * trainer/devstep.c looks up.
 */
#include <cuda_runtime_api.h>
#include "device.h"

static int pci_id(char *out, size_t len)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(out, (int)len, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return 0;
}

__attribute__((visibility("default"))) const mlp_dev_api tagtrain_cuda_api = {
    .api_size = sizeof(mlp_dev_api),
    .mlp_size = sizeof(mlp),
    .create = mlp_dev_create,
    .destroy = mlp_dev_free,
    .error = mlp_dev_error,
    .grads = mlp_dev_grads,
    .set_params = mlp_dev_set_params,
    .get_params = mlp_dev_get_params,
    .get_moments = mlp_dev_get_moments,
    .set_moments = mlp_dev_set_moments,
    .forward = mlp_dev_forward,
    .backward = mlp_dev_backward,
    .step = mlp_dev_step,
    .pci_id = pci_id,
};
