/*
 * single_copy.h — what the two implementations of the single-copy
 * algorithms (oneshot, twoshot) share: each rank reduces straight out of its
 * peers' memory instead of receiving copies of it.
 *
 *   host    symmetric_shm.c: buffers in the shm transport's shared heap,
 *           flags with C11 release/acquire atomics (CK_MEM_SHM)
 *   device  cuda/symmetric.c + cuda/symmetric_kernels.cu: IPC-mapped device
 *           buffers, flags with system-scope release/acquire (CK_MEM_CUDA)
 *
 * Both cut an all-reduce into launches of at most CK_SYM_HALF bytes (a launch
 * is one barrier round: a kernel on the GPU, a loop on the host), and within
 * a launch twoshot cuts the elements into p slices with ck_block: so one
 * descriptor counts the bytes of either exactly. No CUDA or MPI here.
 */
#ifndef COLLKIT_SINGLE_COPY_H
#define COLLKIT_SINGLE_COPY_H

#include "collkit_algo.h"
#include "collkit_group.h"   /* ck_topo_of_size */

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one launch: each rank's symmetric buffer holds two halves of this
 * size (alternate launches use alternate halves). */
#define CK_SYM_HALF ((size_t)4 << 20)

/* The memory kinds oneshot and twoshot run on in this build. */
#ifdef COLLKIT_HAVE_CUDA
#define CK_SYM_MEM (CK_MEM_SHM | CK_MEM_CUDA)
#else
#define CK_SYM_MEM CK_MEM_SHM
#endif

/* Where the ranks span nodes (the mixed transport, or MPI after a fallback)
 * a oneshot or twoshot call runs as ring (collective.c): its count is the
 * ring's then. NULL on one node. */
static inline const ck_algo *ck_sym_runs_as(int p, int rank)
{
    ck_topo t;
    ck_topo_of_size(p, rank, &t);
    return t.nodes > 1 ? ck_algo_find("ring") : NULL;
}

/* A descriptor's count (msgs: the messages, else the bytes): the ring's
 * where the ranks span nodes, else `own`'s. */
static inline uint64_t ck_sym_count(int p, int r, size_t count, size_t es, const ck_config *cfg, int msgs,
                                    ck_count_fn own)
{
    const ck_algo *ring = ck_sym_runs_as(p, r);
    if (!ring) return own(p, r, count, es, cfg);
    return (msgs ? ring->msgs_sent : ring->bytes_sent)(p, r, count, es, cfg);
}

/* Elements one launch reduces: the input is cut into launches of this many. */
static inline size_t ck_sym_launch_elems(size_t esize) { return CK_SYM_HALF / esize; }

/* All-reduce as oneshot (two_shot = 0) or twoshot (1). Collective; the
 * buffers are set up on the first call on a communicator (ck_algo_state,
 * freed by ck_comm_destroy). Both return once the result is in recvbuf. */
#ifdef COLLKIT_HAVE_CUDA
/* Device buffers (cuda/symmetric.c, in the CUDA plug-in). Counts no
 * traffic: the caller does. The library calls it as ck_cuda_sym_allreduce
 * (src/cuda_plugin.c), which loads the plug-in. */
int ck_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op, int two_shot);
int ck_cuda_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                          size_t count, ck_dtype dt, ck_op op, int two_shot);
#endif
/* Host buffers on the shm transport (symmetric_shm.c). Counts the bytes it
 * loads from peers with ck_count_traffic, as sent and as received. */
int ck_shm_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                         size_t count, ck_dtype dt, ck_op op, int two_shot);

#ifdef __cplusplus
}
#endif
#endif
