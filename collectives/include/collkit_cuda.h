/*
 * collkit_cuda.h — for algorithm files that run their own CUDA work on a
 * communicator of the CUDA IPC transport (oneshot, twoshot, nccl; your own
 * kernel): which device and stream the transport uses, and where each rank's
 * GPU sits. Include it after (or instead of) collkit_algo.h; it exists in
 * builds with CUDA only (COLLKIT_HAVE_CUDA). These functions live in the CUDA
 * plug-in (lib/libcollkit_cuda.so), which collkit-cc links into its programs
 * where the CUDA Toolkit is installed.
 *
 * Rules for such an algorithm
 *   - queue work on ck_cuda_stream(comm): ck_allreduce synchronises that
 *     stream (bounded by the watchdog) before it returns, and everything the
 *     transport does (ck_isend, ck_reduce_local, ...) is ordered on it too;
 *   - call ck_cuda_use(comm) first on the calling thread (the async engine
 *     runs algorithms on its own thread, where no device is selected yet);
 *   - count the bytes your kernels move between GPUs with ck_count_traffic,
 *     or mark the algorithm CK_ALGO_REFERENCE.
 * In .cu files, collkit_cuda_ops.cuh has the element types and operators of
 * every collkit kernel (bit for bit the host's).
 */
#ifndef COLLKIT_CUDA_H
#define COLLKIT_CUDA_H

#include <cuda_runtime_api.h>
#include "collkit_algo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The transport's stream. Only for a CK_MEM_CUDA communicator: anything else
 * gets NULL, which CUDA reads as the legacy default stream. */
cudaStream_t ck_cuda_stream(const ck_comm *comm);
/* This rank's device ordinal (-1 on a host communicator). */
int          ck_cuda_device(const ck_comm *comm);
/* Select this rank's device on the calling thread; a status (with a message). */
int          ck_cuda_use(ck_comm *comm);
/* Rank `rank`'s GPU as a PCI bus id ("0000:3b:00.0"), gathered at creation:
 * two ranks on one GPU have the same id. NULL if out of range or host. */
const char  *ck_cuda_pci_id(const ck_comm *comm, int rank);
/* Wait for ck_cuda_stream(comm) to run everything queued on it, at most
 * bound_s seconds (<= 0: no bound). 1 drained, 0 timed out, -1 a CUDA error
 * (or not a CUDA communicator). Use it rather than polling cudaStreamQuery
 * yourself: it clears the "not ready" answers from the thread's last error
 * (a later launch check would report them as a failed launch), and once a
 * wait has timed out, later ones poll once instead of waiting again. */
int          ck_cuda_wait(ck_comm *comm, double bound_s);

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_CUDA_H */
