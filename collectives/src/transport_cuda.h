/*
 * transport_cuda.h — what the CUDA IPC transport exposes inside the library:
 * its device, stream and the ranks' PCI bus ids (for comm_cuda.c, which
 * turns them into the collkit_cuda.h accessors), and the local kernels of
 * kernels_cuda.cu. Private to collectives/src/; `self` is the transport's
 * state (ck_transport.self of a "cuda-ipc" transport).
 */
#ifndef COLLKIT_TRANSPORT_CUDA_H
#define COLLKIT_TRANSPORT_CUDA_H

#include <cuda_runtime_api.h>
#include "transport.h"

#ifdef __cplusplus
extern "C" {
#endif

cudaStream_t ck_cuda_tr_stream(void *self);
int          ck_cuda_tr_device(void *self);
/* Select the transport's device on the calling thread. */
int          ck_cuda_tr_use(void *self);
/* Rank q's PCI bus id, 32 chars at most; gathered at creation. */
const char  *ck_cuda_tr_pci_id(void *self, int q);

/* Wait for the transport's stream, at most bound_s seconds (<= 0: no bound):
 * 1 drained, 0 timed out (now, or in an earlier wait it has not drained
 * since: then it is polled once), -1 a CUDA error (ck_cuda_tr_last). */
int          ck_cuda_tr_wait(void *self, double bound_s, double *waited);
cudaError_t  ck_cuda_tr_last(void *self);

/* kernels_cuda.cu: dst = a op b and buf /= divisor, queued on s. */
cudaError_t ck_cuda_reduce(void *dst, const void *a, const void *b, size_t count,
                           ck_dtype dt, ck_op op, cudaStream_t s);
cudaError_t ck_cuda_divide(void *buf, size_t count, ck_dtype dt, int divisor, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
