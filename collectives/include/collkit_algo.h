/*
 * collkit_algo.h — what an ALGORITHM FILE may call. Include this instead of
 * collkit.h when you write an all-reduce (collectives/algos/NAME.c, a lab
 * solution, a test's broken algorithm).
 *
 *   point-to-point   ck_isend / ck_irecv / ck_wait / ck_waitall / ck_sendrecv
 *   local work       ck_reduce_local / ck_copy / ck_scratch
 *   bookkeeping      ck_step (trace and watchdog say which step), ck_fail
 *                    (the error detail), ck_count_traffic (for data that
 *                    moves without ck_isend, e.g. loads from a peer's mapped
 *                    buffer), ck_algo_state (per-communicator state, e.g. a
 *                    library handle, freed with the communicator)
 *
 * These calls go to the communicator's transport, so the same algorithm file
 * runs over MPI (host buffers) and CUDA IPC (device buffers). They count
 * bytes and messages, record trace events and run the watchdog: an algorithm
 * gets the checker's traffic check, collbench's traces and "rank 2 waited for
 * rank 1 at step 3" for free. An algorithm never calls MPI or CUDA to move
 * its data (reference algorithms such as MPI_Allreduce are the exception, and
 * say so with CK_ALGO_REFERENCE). Device-only algorithms with CUDA work of
 * their own (oneshot, twoshot, nccl) add collkit_cuda.h: the communicator's
 * device and stream.
 */
#ifndef COLLKIT_ALGO_H
#define COLLKIT_ALGO_H

#include "collkit.h"
#include "collkit_util.h"   /* ck_sbuf: the string builder diagnose hooks write with */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ point to point */

/* A pending send or receive. Lives on the caller's stack; opaque impl space
 * belongs to the transport. Set .active = 0 on requests never posted, so
 * ck_waitall can skip them. */
typedef struct ck_req {
    int      active;       /* 1 between post and completion */
    int      kind;         /* CK_EV_SEND or CK_EV_RECV */
    int      peer;
    int      tag;
    int      step;
    size_t   bytes;
    double   t_post;
    uint64_t impl[8];
} ck_req;

/* Post a send / receive of `bytes` (0 is a valid, counted message). The
 * sizes of a send and its receive must agree: a mismatch is an error on
 * both sides, never a silent truncation. */
int ck_isend(ck_comm *comm, const void *buf, size_t bytes, int peer, int tag, ck_req *req);
int ck_irecv(ck_comm *comm, void *buf, size_t bytes, int peer, int tag, ck_req *req);
/* Wait for one / n requests. Inactive requests are skipped. A wait longer than
 * config.timeout_s is a hang: the watchdog prints which rank waited on which
 * peer at which step and returns CK_ERR_TIMEOUT. */
int ck_wait(ck_comm *comm, ck_req *req);
int ck_waitall(ck_comm *comm, ck_req *reqs, int n);
/* Blocking exchange: send sbytes to dst while receiving rbytes from src
 * (either side may be skipped with peer < 0). */
int ck_sendrecv(ck_comm *comm, const void *sbuf, size_t sbytes, int dst,
                void *rbuf, size_t rbytes, int src, int tag);

/* ------------------------------------------------------ local work */

/* Local reduction on the transport's memory: dst = a op b (count elements).
 * dst may alias a or b. */
int ck_reduce_local(ck_comm *comm, void *dst, const void *a, const void *b,
                    size_t count, ck_dtype dt, ck_op op);
/* Local copy on the transport's memory. */
int ck_copy(ck_comm *comm, void *dst, const void *src, size_t bytes);
/* Scratch space of the transport's memory kind, owned by the communicator and
 * reused across calls (grows as needed; valid until the next ck_scratch call).
 * On host memory the bytes just before it and just after the size asked for
 * are guarded: a write there fails the call with CK_ERR_PROTOCOL. */
void *ck_scratch(ck_comm *comm, size_t bytes);

/* ------------------------------------------------------ bookkeeping */

/* Mark the algorithm's current step (for trace events and watchdog messages):
 * phase is a short static string ("reduce-scatter", "all-gather", ...). */
void ck_step(ck_comm *comm, int step, const char *phase);
/* For a tool that draws the run (ck_observe; nothing otherwise): an algorithm
 * that shares memory instead of sending messages names each region its peers
 * load from (name a short static string, e.g. "staging"; named again when it
 * moves), and each load it makes from a peer's region (from; NULL: the peer's
 * own buffer) into its own memory. A region must stay valid while the
 * communicator lives, as memory peers load from does: the tool reads it again
 * after the call returns. */
void ck_show_shared(ck_comm *comm, const char *name, const void *buf, size_t bytes);
void ck_show_load(ck_comm *comm, int peer, const char *from, const void *buf, size_t bytes);

/* Record the detail of a failure on the communicator (printf-style), shown by
 * ck_comm_errmsg(); returns status, so `return ck_fail(comm, CK_ERR_..., ...)`. */
int ck_fail(ck_comm *comm, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Count traffic that did not go through ck_isend/ck_irecv (a kernel loading a
 * peer's IPC-mapped buffer, a library call): the checker's traffic check and
 * collbench's counters then see it like any other. It adds to what the
 * transport counted and is kept apart from it (ck_counters' *_self fields):
 * it cannot lower or replace the transport's counts (a "negative" count
 * saturates), collcheck names an algorithm that uses it, and collverify
 * refuses such traffic unless told to accept it (--allow-self-traffic). */
void ck_count_traffic(ck_comm *comm, uint64_t bytes_sent, uint64_t msgs_sent,
                      uint64_t bytes_recv, uint64_t msgs_recv);

/* Per-communicator state of one algorithm (a library communicator, mapped
 * peer buffers), created on first use and freed by ck_comm_destroy with the
 * destructor given. ck_algo_state returns NULL until it is set. Setting it
 * again destroys the previous state. */
void *ck_algo_state(ck_comm *comm, const ck_algo *algo);
int   ck_algo_state_set(ck_comm *comm, const ck_algo *algo, void *state, void (*destroy)(void *state));

/* ------------------------------------------------------ registration */

/* Register an algorithm written outside the library (a student's file, built
 * with collkit-cc) when the program starts, before main: one line after its
 * descriptor,
 *     const ck_algo my_ring = { .name = "my_ring", ... };
 *     CK_REGISTER_ALGO(my_ring)
 * A name that is already taken (a built-in's, or another file's) or an
 * incomplete descriptor stops the program with a message and exit status 2. */
#define CK_REGISTER_ALGO(desc)                                                      \
    __attribute__((constructor)) static void ck_register_##desc(void)               \
    {                                                                               \
        ck_register_algo_or_exit(&(desc), __FILE__);                                \
    }
void ck_register_algo_or_exit(const ck_algo *algo, const char *file);

#ifdef __cplusplus
}
#endif
#endif /* COLLKIT_ALGO_H */
