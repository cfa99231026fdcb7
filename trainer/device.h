/*
 * device.h — the tagging MLP of model.h on a CUDA GPU: the same layers, the
 * same parameter and gradient layout (one flat buffer each, now in device
 * memory, so a data-parallel step all-reduces the gradient buffer with any
 * registry algorithm that takes device buffers), the same optimizer step.
 *
 *   input layer    a gather-sum over each batch row's non-zeros (the whole
 *                  CSR dataset is copied to the device once), its backward a
 *                  scatter-add into the rows of W_0 those non-zeros select
 *   dense layers   cuBLAS sgemm (pedantic math: no TF32, so results stay
 *                  within float rounding of the host's OpenBLAS)
 *   dropout        masks drawn on the host from the same rng, in the same
 *                  order as mlp_forward, and copied over: a device run and a
 *                  host run with one seed drop the same units
 *   AdamW / SGD    one kernel each, optimizer_step's arithmetic
 *
 * The host model stays the reference: tests/gpu/test_trainer_cuda.c trains
 * both a few steps and compares. Calls return 0, or -1 with the reason in
 * mlp_dev_error. Work is queued on the model's own stream and every call
 * that returns results to the host (forward's loss, the getters) or hands
 * the gradient on (backward) waits for it, so a ck_allreduce on the
 * gradient buffer (another stream) sees finished data.
 */
#ifndef TRAINER_DEVICE_H
#define TRAINER_DEVICE_H

#include <stddef.h>
#include "model.h"
#include "optim.h"

typedef struct mlp_dev mlp_dev;

/* A device copy of `shape`'s layout (its parameters are not copied: see
 * mlp_dev_set_params), for batches of up to max_batch rows of the dataset x
 * (nrows rows), which is copied to the device now. */
int    mlp_dev_create(mlp_dev **out, const mlp *shape, const csr_rows *x, size_t nrows, int max_batch,
                      char *err, size_t errlen);
void   mlp_dev_free(mlp_dev *d);
const char *mlp_dev_error(const mlp_dev *d);

size_t mlp_dev_nparams(const mlp_dev *d);
float *mlp_dev_params(mlp_dev *d);   /* device pointers, [nparams] */
float *mlp_dev_grads(mlp_dev *d);
int    mlp_dev_set_params(mlp_dev *d, const float *host);
int    mlp_dev_get_params(mlp_dev *d, float *host);
int    mlp_dev_get_grads(mlp_dev *d, float *host);
/* The last forward's probabilities, [b x MLP_CLASSES]. */
int    mlp_dev_get_probs(mlp_dev *d, float *host, int b);
/* The optimizer's moment buffers (checkpoints: the host layout). */
int    mlp_dev_get_moments(mlp_dev *d, float *m, float *v);
int    mlp_dev_set_moments(mlp_dev *d, const float *m, const float *v);

/* mlp_forward on the device: the same arguments (rows, labels on the host)
 * and the same summed loss, in *loss. */
int    mlp_dev_forward(mlp_dev *d, const size_t *rows, const int *labels, int b, int train, rng_t *rng, double *loss);
/* mlp_backward of the last forward: accumulates into the device gradients. */
int    mlp_dev_backward(mlp_dev *d, const int *labels, int b);
int    mlp_dev_zero_grads(mlp_dev *d);
/* optimizer_step on the device: o's configuration and step counter (which
 * it advances) as on the host; the moments are the device's own. */
int    mlp_dev_step(mlp_dev *d, optimizer *o, float scale);

/* tagtrain opens the device model as a plug-in, lib/libtagtrain_cuda.so
 * (device_plugin.c; trainer/devstep.c loads it), so that tagtrain built with
 * CUDA starts on a machine without the CUDA libraries and trains on the host
 * there. The plug-in exports one table of the calls above. Its two sizes
 * must be the program's: a plug-in from another build is refused, not
 * called with another layout. */
typedef struct {
    size_t api_size, mlp_size;   /* sizeof(mlp_dev_api), sizeof(mlp) where it was built */
    int    (*create)(mlp_dev **out, const mlp *shape, const csr_rows *x, size_t nrows, int max_batch, char *err,
                     size_t errlen);
    void   (*destroy)(mlp_dev *d);
    const char *(*error)(const mlp_dev *d);
    float *(*grads)(mlp_dev *d);
    int    (*set_params)(mlp_dev *d, const float *host);
    int    (*get_params)(mlp_dev *d, float *host);
    int    (*get_moments)(mlp_dev *d, float *m, float *v);
    int    (*set_moments)(mlp_dev *d, const float *m, const float *v);
    int    (*forward)(mlp_dev *d, const size_t *rows, const int *labels, int b, int train, rng_t *rng, double *loss);
    int    (*backward)(mlp_dev *d, const int *labels, int b);
    int    (*step)(mlp_dev *d, optimizer *o, float scale);
    /* The PCI bus id of this thread's current device (which ranks share a GPU). */
    int    (*pci_id)(char *out, size_t len);
} mlp_dev_api;
#define MLP_DEV_API_SYMBOL "tagtrain_cuda_api"

#endif
