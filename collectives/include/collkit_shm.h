/*
 * collkit_shm.h — for algorithm files that load straight from their peers'
 * memory on a communicator of the shm transport (ck_comm_create with
 * CK_MEM_SHM): the host twins of the CUDA IPC algorithms (oneshot, twoshot),
 * or your own. Include it after collkit_algo.h.
 *
 * On the shm transport every rank's ck_alloc buffers come from its shared
 * heap, which every peer has mapped. A buffer is named across ranks by its
 * offset: rank r computes ck_shm_offset(comm, buf, bytes), tells its peers
 * (through shared flags, say), and a peer loads from ck_shm_peer(comm, r,
 * offset). Buffers that are not in the heap (malloc'd by the program, or
 * handed out after the heap was full) have no offset: copy them into a
 * buffer of your own from ck_alloc first.
 *
 * Rules for such an algorithm
 *   - ordering between ranks is yours: publish with a release store
 *     (atomic_store_explicit(..., memory_order_release)), read the peers'
 *     flags with acquire loads, and wait with ck_shm_wait, which keeps the
 *     watchdog: a peer that never comes ends the wait in CK_ERR_TIMEOUT with
 *     a message, like every ck_wait;
 *   - a peer may still be loading from your buffers until it tells you it
 *     is done: do not return (the caller may reuse them) before that;
 *   - count what you load from peers with ck_count_traffic (the checker
 *     compares it with the descriptor's bytes_sent).
 */
#ifndef COLLKIT_SHM_H
#define COLLKIT_SHM_H

#include <stdint.h>
#include "collkit_algo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 on a communicator of the shm transport (ck_comm_transport_name "shm"). */
int     ck_shm_active(const ck_comm *comm);
/* The offset of [ptr, ptr + bytes) in this rank's shared memory, or -1 when
 * not all of it is in the shared heap (or comm is not a shm communicator). */
int64_t ck_shm_offset(const ck_comm *comm, const void *ptr, size_t bytes);
/* Rank `rank`'s shared memory at `offset`, mapped into this process (its own
 * for rank == ck_comm_rank); NULL on a bad rank or a non-shm communicator. */
void   *ck_shm_peer(const ck_comm *comm, int rank, int64_t offset);

/* Wait until pending(arg) returns -1, bounded by the communicator's watchdog
 * (config.timeout_s). pending returns the rank still waited for (>= 0) or -1
 * when the wait is over. Gives the core away between polls (sched_yield):
 * the rank waited for may need it. On
 * timeout: CK_ERR_TIMEOUT and the watchdog's message, "rank 0 waited 30.0 s
 * for rank 2 (WHAT) in 'ALGO' step S (PHASE)", on stderr and in
 * ck_comm_errmsg. Recorded in the trace as a wait on that rank. */
int     ck_shm_wait(ck_comm *comm, int (*pending)(void *arg), void *arg, const char *what);

/* Copy bytes like ck_copy (no overlap), with stores that bypass the caches
 * (non-temporal) where the CPU has them: for output nobody reads soon, so a
 * large result costs one write of memory instead of a read (to own the line)
 * and a write, and does not push the inputs still to come out of the cache.
 * The stores are complete and ordered before it returns (a fence), so a
 * release store after it publishes them. Recorded in the trace as a copy. */
int     ck_shm_copy_nt(ck_comm *comm, void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_SHM_H */
