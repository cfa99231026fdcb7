/*
 * transport.h — the private seam between the communicator and the code that
 * moves bytes for one memory kind (transport_mpi.c and transport_shm.c for
 * host buffers, transport_cuda.c for device buffers). Private to
 * collectives/src/. The shm and CUDA IPC transports share their
 * point-to-point protocol (protocol.h).
 *
 * A transport knows MPI and its device, never the communicator: comm.c wraps
 * every call with counters, trace events and the watchdog, and hands the
 * transport what it needs (the private MPI communicator at creation, the
 * watchdog bound before each call that may block). So no transport file
 * includes internal.h or sees the communicator's struct.
 */
#ifndef COLLKIT_TRANSPORT_H
#define COLLKIT_TRANSPORT_H

#include "collkit_algo.h"   /* ck_req, ck_dtype, ck_op, the CK_* statuses */

/* A transport moves bytes between ranks and reduces locally, for one memory
 * kind. All functions return a CK_* status; `self` is the transport's state. */
typedef struct ck_transport {
    const char *name;          /* "mpi", "shm", "cuda-ipc" */
    unsigned    mem;           /* CK_MEM_HOST, CK_MEM_HOST | CK_MEM_SHM, or CK_MEM_CUDA */
    void       *self;

    int   (*isend)(void *self, const void *buf, size_t bytes, int peer, int tag, ck_req *req);
    int   (*irecv)(void *self, void *buf, size_t bytes, int peer, int tag, ck_req *req);
    /* Non-blocking completion test: *done = 1 when finished. The communicator
     * polls this, so it can time out and say what it was waiting for. On an
     * error the request is finished too (nothing of it is left pending). */
    int   (*test)(void *self, ck_req *req, int *done);
    /* Blocking completion, used instead of polling test when the watchdog is
     * off (timeout_s <= 0, the default under SimGrid SMPI, where every poll
     * costs simulated time). On an error the request is finished too. May be
     * NULL: the communicator then polls test without a bound. */
    int   (*wait)(void *self, ck_req *req);
    /* Abandon a request after a timeout or a failure of another request
     * (best effort; the buffer is no longer written once this returns). */
    void  (*cancel)(void *self, ck_req *req);
    /* Move this transport's pending requests on without waiting for any. A
     * router of several transports (transport_mixed.c) calls it on the
     * others while it polls one, so that a peer waiting for this rank's part
     * of a message (a shared-memory chunk, an MPI rendezvous) is never
     * starved by a wait on another transport. May be NULL (nothing to do). */
    int   (*progress)(void *self);
    int   (*reduce)(void *self, void *dst, const void *a, const void *b, size_t count, ck_dtype dt, ck_op op);
    int   (*divide)(void *self, void *buf, size_t count, ck_dtype dt, int divisor);
    int   (*copy)(void *self, void *dst, const void *src, size_t bytes);
    int   (*upload)(void *self, void *dst, const void *host_src, size_t bytes);
    int   (*download)(void *self, void *host_dst, const void *src, size_t bytes);
    void *(*alloc)(void *self, size_t bytes);
    void  (*free)(void *self, void *ptr);
    /* Wait for everything queued (ck_sync; after each algorithm body). May be NULL. */
    int   (*finish)(void *self);
    void  (*destroy)(void *self);
    /* The bound for waits the transport does by itself (a device stream
     * draining): the communicator's timeout_s, <= 0 for none. ck_config may
     * change between calls, so the communicator passes it again before each
     * call that may block. May be NULL (the MPI transport never blocks). */
    void  (*set_timeout)(void *self, double timeout_s);
    /* The detail of the transport's last failure ("" if none), which the
     * communicator appends to its own message. May be NULL. */
    const char *(*error)(void *self);
} ck_transport;

/* Constructors; collective over mpi_comm, the communicator's private duplicate. */
int ck_transport_mpi_create(MPI_Comm mpi_comm, ck_transport *out);
/* CK_ERR_UNSUPPORTED, with the reason in why, when the ranks are not all on
 * one node or shared memory is not available: the caller falls back to MPI. */
int ck_transport_shm_create(MPI_Comm mpi_comm, ck_transport *out, char *why, size_t whylen);
/* topo.c: a communicator's layout (node_of: the node of each of its p
 * ranks), kept for the descriptors' count functions (ck_topo_of_size). */
void ck_topo_record(int p, const int *node_of);

/* transport_mixed.c. Mixed: shared memory between the ranks of one node
 * (node_of[q]: rank q's node), MPI between nodes; a node where shared
 * memory cannot be had uses MPI inside too. Collective over mpi_comm. */
int ck_transport_mixed_create(MPI_Comm mpi_comm, const int *node_of, ck_transport *out);
/* A view: `size` ranks of a parent communicator (to_parent[i]: rank i's
 * rank there) on the parent's transport, which it does not own. Local. */
int ck_transport_view_create(const ck_transport *parent, const int *to_parent, int size, ck_transport *out);
#ifdef COLLKIT_HAVE_CUDA
int ck_transport_cuda_create(MPI_Comm mpi_comm, double timeout_s, ck_transport *out);
int ck_cuda_gpu_count(int *ndev, char *why, size_t whylen);   /* in the CUDA plug-in: see ck_gpu_count */
#endif

/* Poll ready(arg) until it returns nonzero, or until timeout_s seconds have
 * passed (timeout_s <= 0: no bound). Hot polling first (a short kernel should
 * cost microseconds, not a scheduler tick), then short naps, so a long wait
 * leaves the core to the other ranks of an oversubscribed node.
 * Returns 1 when ready, 0 on timeout, or ready's negative value on error;
 * *waited (may be NULL) receives the seconds spent. */
int ck_poll_bounded(int (*ready)(void *arg), void *arg, double timeout_s, double *waited);

#endif
