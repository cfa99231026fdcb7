/*
 * cuda_logic.h — the parts of the CUDA IPC transport that are pure logic,
 * kept free of CUDA and MPI so tests/unit/test_cuda_logic.c checks them on
 * any machine: the staging-slot ledger at the CUDA transport's sizes (the
 * ledger itself is protocol.h's, shared with the shm transport), the
 * peer-access matrix check, and the decisions around the CUDA runtime's
 * answers: polling a stream without leaving a false error behind, a wait that
 * remembers it timed out, what a GPU probe's result means (skip or fail),
 * when a teardown may free memory that peers map, and the alignment device
 * buffers need. (The oneshot/twoshot grid is symmetric.h's.)
 *
 * A receiver owns NSLOT slots per sending peer (transport_cuda.c). It hands
 * them out ahead of time, as GRANTs, to the oldest receive from that peer
 * (per tag) that still has chunks without a grant; the sender copies chunk j
 * into the slot of the j-th grant it took and answers with a FILL naming it.
 * The caps on those speculative grants are protocol.h's (never more grants
 * than chunks, never more than NSLOT outstanding, a FILL must name the slot
 * its chunk was granted). A 0-byte message is one chunk that needs no slot:
 * its grant carries -1.
 */
#ifndef COLLKIT_CUDA_LOGIC_H
#define COLLKIT_CUDA_LOGIC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "protocol.h"
#include "transport.h"   /* ck_poll_bounded */

#define CK_CUDA_NSLOT 4                  /* slots per ordered pair of ranks */
#define CK_CUDA_SLOT  ((size_t)1 << 20)  /* bytes per slot: larger messages move in chunks */

/* The ledger at the CUDA transport's sizes. */
static inline void ck_slot_pool_init(ck_slot_pool *p) { ck_slot_pool_init_n(p, CK_CUDA_NSLOT); }
static inline size_t ck_slot_nchunks(size_t bytes) { return ck_slot_nchunks_of(bytes, CK_CUDA_SLOT); }
static inline void ck_slot_req_init(ck_slot_req *r, size_t bytes)
{
    ck_slot_req_init_n(r, bytes, CK_CUDA_SLOT, CK_CUDA_NSLOT);
}

/* Peer access. ok[a * p + b] is 1 when rank a's GPU can load from and
 * store to rank b's (same GPU, cudaDeviceCanAccessPeer, or b's GPU not
 * visible to a, where cudaIpcOpenMemHandle decides). Finds the first pair
 * (a < b) where either direction fails: returns 1 and the pair, 0 if none. */
static inline int ck_peer_first_unreachable(const unsigned char *ok, int p, int *a, int *b)
{
    for (int i = 0; i < p; i++)
        for (int j = i + 1; j < p; j++)
            if (!ok[(size_t)i * (size_t)p + (size_t)j] || !ok[(size_t)j * (size_t)p + (size_t)i]) {
                *a = i;
                *b = j;
                return 1;
            }
    return 0;
}

/* ------------------------------------------------------------ CUDA runtime answers */

/* The cudaError_t values these functions reason about, as plain ints so that
 * this header needs no CUDA (transport_cuda.c asserts that they match). */
#define CK_CU_SUCCESS       0
#define CK_CU_NO_DRIVER     35    /* cudaErrorInsufficientDriver */
#define CK_CU_NO_DEVICE     100   /* cudaErrorNoDevice */
#define CK_CU_NOT_READY     600   /* cudaErrorNotReady */

/* One poll of a stream or an event. cudaStreamQuery and cudaEventQuery say
 * "not ready" as an error code that also stays behind as the thread's last
 * error: the next launch check (cudaGetLastError right after a <<<...>>>)
 * would read it as a failed launch that never happened. So a "not ready" is
 * taken back at once with get_last (cudaGetLastError). Returns 1 when done,
 * 0 when not yet, -1 on a failure (its code in *err). */
static inline int ck_cu_poll(int (*query)(void *), int (*get_last)(void), void *arg, int *err)
{
    int e = query(arg);
    if (e == CK_CU_SUCCESS) return 1;
    if (e == CK_CU_NOT_READY) {
        (void)get_last();
        return 0;
    }
    *err = e;
    return -1;
}

/* A bounded wait that remembers a timeout. A stream that did not drain in
 * one wait holds work that waits on a peer that is gone: every later wait
 * (a download to look at the data, each ck_free, the teardown) would sit out
 * the whole timeout again. After one timeout the stream is polled once per
 * wait instead; when it has drained after all, waits are bounded again.
 * Returns what ck_poll_bounded does: 1 ready, 0 timed out (now or earlier),
 * negative: ready()'s error. */
typedef struct ck_cu_watch { int stuck; } ck_cu_watch;

static inline int ck_cu_watch_wait(ck_cu_watch *w, int (*ready)(void *), void *arg, double timeout_s, double *waited)
{
    if (w->stuck) {
        int r = ready(arg);
        if (waited) *waited = 0;
        if (r == 0) return 0;
        w->stuck = 0;
        return r > 0 ? 1 : r;
    }
    int r = ck_poll_bounded(ready, arg, timeout_s, waited);
    if (r == 0) w->stuck = 1;
    return r;
}

/* What a GPU test or probe does with cudaGetDeviceCount's answer: 0 go on,
 * 77 skip (CTest's skip code), 1 fail. Only a machine without a GPU skips:
 * cudaErrorNoDevice, or no driver installed at all (cudaErrorInsufficientDriver
 * while cudaDriverGetVersion says 0, as on a build machine with the toolkit
 * only). Any other error is a GPU that is there and does not work (busy in
 * Exclusive_Process mode, a driver older than the runtime, a lost device): a
 * failure, with cudaGetErrorString printed by the caller. */
#define CK_CU_SKIP 77
static inline int ck_cu_probe_exit(int err, int ndev, int driver_version)
{
    if (err == CK_CU_SUCCESS) return ndev > 0 ? 0 : CK_CU_SKIP;
    if (err == CK_CU_NO_DEVICE) return CK_CU_SKIP;
    if (err == CK_CU_NO_DRIVER && driver_version == 0) return CK_CU_SKIP;
    return 1;
}

/* Teardown of memory that peers map (a staging area, a symmetric buffer). A
 * rank whose stream has drained no longer touches the peers' memory and may
 * close its mappings of it; it may free its own memory only when every
 * rank's stream has drained (all_idle, agreed across ranks), since a peer's
 * copy or kernel that still runs may read or write it. Otherwise it leaks. */
enum { CK_TEAR_CLOSE = 1, CK_TEAR_FREE = 2 };
static inline int ck_cu_teardown(int my_idle, int all_idle)
{
    return (my_idle ? CK_TEAR_CLOSE : 0) | (my_idle && all_idle ? CK_TEAR_FREE : 0);
}

/* Alignment of device buffers: the device kernels load whole elements (and
 * 16-byte vectors), so a buffer not aligned to its element size faults on
 * the GPU. ck_allreduce checks it with the other arguments, before the ranks
 * agree, so that every rank fails alike instead of one failing while the
 * others launch and wait for it. 1 when both are aligned (NULL counts as
 * aligned: the count-0 and in-place cases). */
static inline int ck_cu_aligned(const void *sendbuf, const void *recvbuf, size_t esize)
{
    return esize == 0 || ((uintptr_t)sendbuf % esize == 0 && (uintptr_t)recvbuf % esize == 0);
}

#endif
