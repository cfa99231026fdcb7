/*
 * internal.h — what a transport implements, and the communicator behind ck_comm.
 * Private to collectives/src/: algorithm files use collkit_algo.h, programs
 * collkit.h.
 */
#ifndef COLLKIT_INTERNAL_H
#define COLLKIT_INTERNAL_H

#include "collkit_algo.h"

/* A transport moves bytes between ranks and reduces locally, for one memory
 * kind. The communicator wraps every call with counters, trace events and the
 * watchdog, so a transport only does the data movement.
 * All functions return a CK_* status; `self` is the transport's own state. */
typedef struct ck_transport {
    const char *name;          /* "mpi", "cuda-ipc" */
    unsigned    mem;           /* CK_MEM_HOST or CK_MEM_CUDA */
    void       *self;

    int   (*isend)(void *self, const void *buf, size_t bytes, int peer, int tag, ck_req *req);
    int   (*irecv)(void *self, void *buf, size_t bytes, int peer, int tag, ck_req *req);
    /* Non-blocking completion test: *done = 1 when finished. The communicator
     * polls this, so it can time out and say what it was waiting for. */
    int   (*test)(void *self, ck_req *req, int *done);
    /* Abandon a request after a timeout (best effort). */
    void  (*cancel)(void *self, ck_req *req);
    int   (*reduce)(void *self, void *dst, const void *a, const void *b, size_t count, ck_dtype dt, ck_op op);
    int   (*divide)(void *self, void *buf, size_t count, ck_dtype dt, int divisor);
    int   (*copy)(void *self, void *dst, const void *src, size_t bytes);
    int   (*upload)(void *self, void *dst, const void *host_src, size_t bytes);
    int   (*download)(void *self, void *host_dst, const void *src, size_t bytes);
    void *(*alloc)(void *self, size_t bytes);
    void  (*free)(void *self, void *ptr);
    /* Called after an algorithm body finishes (e.g. a device sync); may be NULL. */
    int   (*finish)(void *self);
    void  (*destroy)(void *self);
} ck_transport;

/* Transport constructors. `mpi_comm` is the communicator's private duplicate. */
int ck_transport_mpi_create(MPI_Comm mpi_comm, ck_transport *out);
#ifdef COLLKIT_HAVE_CUDA
int ck_transport_cuda_create(MPI_Comm mpi_comm, ck_transport *out);
#endif

struct ck_comm {
    int          rank, size;
    MPI_Comm     mpi;            /* private duplicate of the user's communicator */
    ck_transport tr;
    ck_config    cfg;

    /* the call in progress (for watchdog messages and events) */
    const char  *algo_name;
    int          step;
    const char  *phase;

    ck_counters  ctr;

    ck_event    *events;
    size_t       ev_cap, ev_n, ev_dropped;

    void        *scratch;
    size_t       scratch_bytes;

    /* per-algorithm state (ck_algo_state), destroyed with the communicator */
    struct ck_algo_slot { const ck_algo *algo; void *state; void (*destroy)(void *); } *slots;
    int          nslots;

    /* 1 on the async engine's private clone: waits back off (yield, then
     * nap) instead of spinning, so the progress thread leaves the core to
     * the caller's computation */
    int          polite;

    struct ck_async_engine *async;  /* progress thread for ck_allreduce_async; NULL until first use */

    char         errmsg[512];
};

/* Append one event (no-op when tracing is off). */
void ck_trace_add(ck_comm *comm, int kind, int peer, uint64_t bytes, double t0, double t1);

/* Stop the progress thread, if any (called by ck_comm_destroy). */
void ck_async_shutdown(ck_comm *comm);

#endif
