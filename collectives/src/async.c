/*
 * async.c — nonblocking all-reduce, reduce-scatter and all-gather on a
 * progress thread.
 *
 * Why a thread. The registry algorithms are written as straight-line code
 * over blocking waits (ck_sendrecv, ck_wait): that is what makes them easy to
 * read. To overlap one with computation without rewriting every algorithm as
 * a state machine, a progress thread runs the very same algo->run, via
 * ck_allreduce, while the caller's thread keeps computing (DDP's gradient
 * buckets during the backward pass).
 *
 * The halves run the same way: ck_reduce_scatter_async and ck_allgather_async
 * queue a ck_reduce_scatter or ck_allgather for the same thread, so that a
 * sharded optimizer (ZeRO-2) reduce-scatters each gradient bucket while the
 * backward pass goes on, and starts the all-gather of the next step's
 * parameters early. One queue for all three: the order of the calls, of
 * whatever collective, is the order they run in on every rank.
 *
 * Design.
 *   - One engine per communicator, started by the first asynchronous call
 *     (ck_allreduce_async, ck_reduce_scatter_async or ck_allgather_async) on
 *     it. Starting it is COLLECTIVE: every rank must make its first
 *     asynchronous call on that communicator at the same point (which the
 *     FIFO rule below needs anyway).
 *   - The engine owns a private clone of the communicator (ck_comm_create on
 *     the parent's MPI communicator, so another MPI_Comm_dup). Messages of the
 *     background all-reduces therefore never match messages of blocking calls
 *     the main thread makes on the parent at the same time, and the clone's
 *     scratch, counters and step state belong to the progress thread alone.
 *     The clone copies the parent's ck_config at start-up.
 *   - Requests run in FIFO order, one at a time. MPI matches messages in
 *     posting order, so every rank must issue its asynchronous calls in the
 *     same order with the same counts; the clone's argument validation (on by
 *     default) reports a mismatch instead of hanging.
 *   - ck_allreduce_wait blocks on a condition variable, not a spin, so a
 *     waiting caller gives its core to the progress thread.
 *   - The progress thread polls politely (the clone's `polite` flag, see
 *     ck_waitall): after a short spin it yields, then sleeps a few
 *     microseconds between polls, so on a machine with fewer cores than
 *     threads it does not steal the core the backward pass is computing on.
 *
 * MPI thread level. The caller's thread may keep calling MPI (its own
 * blocking ck_allreduce, MPI_Bcast, ...) while the progress thread is inside
 * MPI, so the engine needs MPI_THREAD_MULTIPLE: initialise MPI with
 *     MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
 * and ck_allreduce_async returns CK_ERR_UNSUPPORTED with a message naming the
 * level it got when MPI provides less.
 *
 * Lifetime. Every handle must be waited for. ck_comm_destroy (collective) calls
 * async_shutdown (through c->async_stop), which lets the thread finish what
 * is queued, joins it and destroys the clone.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct ck_async {
    ck_coll          coll;                /* which collective runs */
    const ck_algo   *algo;
    const void      *sendbuf;
    void            *recvbuf;
    size_t           count;
    ck_dtype         dt;
    ck_op            op;
    int              done, rc;
    double           started, finished;   /* ck_now() around the all-reduce on the progress thread */
    ck_counters      moved;               /* what the call moved, on the clone: the wait adds it to the parent's */
    char             errmsg[512];
    ck_comm         *parent;
    struct ck_async *next;
};

struct ck_async_engine {
    ck_comm         *clone;
    pthread_t        thread;
    pthread_mutex_t  mu;
    pthread_cond_t   work, done;
    struct ck_async *head, *tail;
    int              stop;
};

/* The queued call, on the progress thread's clone. */
static int run_one(ck_comm *clone, const struct ck_async *h)
{
    switch (h->coll) {
    case CK_COLL_REDUCE_SCATTER:
        return ck_reduce_scatter(clone, h->algo, h->sendbuf, h->recvbuf, h->count, h->dt, h->op);
    case CK_COLL_ALLGATHER: return ck_allgather(clone, h->algo, h->sendbuf, h->recvbuf, h->count, h->dt);
    default: return ck_allreduce(clone, h->algo, h->sendbuf, h->recvbuf, h->count, h->dt, h->op);
    }
}

static void *progress_main(void *arg)
{
    struct ck_async_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->head && !e->stop) pthread_cond_wait(&e->work, &e->mu);
        struct ck_async *h = e->head;
        if (!h) break;   /* stop requested and the queue is drained */
        pthread_mutex_unlock(&e->mu);

        ck_counters c0, c1;
        ck_counters_get(e->clone, &c0);
        const double t0 = ck_now();
        int rc = run_one(e->clone, h);
        const double t1 = ck_now();
        ck_counters_get(e->clone, &c1);
        h->moved.bytes_sent = c1.bytes_sent - c0.bytes_sent;
        h->moved.msgs_sent = c1.msgs_sent - c0.msgs_sent;
        h->moved.bytes_recv = c1.bytes_recv - c0.bytes_recv;
        h->moved.msgs_recv = c1.msgs_recv - c0.msgs_recv;
        if (rc) snprintf(h->errmsg, sizeof h->errmsg, "%s", ck_comm_errmsg(e->clone));

        pthread_mutex_lock(&e->mu);
        e->head = h->next;
        if (!e->head) e->tail = NULL;
        h->rc = rc;
        h->started = t0;
        h->finished = t1;
        h->done = 1;
        pthread_cond_broadcast(&e->done);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "unknown";
    }
}

static void async_shutdown(ck_comm *c);

static int engine_start(ck_comm *c)
{
#ifdef COLLKIT_SMPI
    /* SMPI runs every simulated rank in the one simulation thread: a second
     * thread of a rank cannot call MPI, whatever the thread level asked for. */
    return ck_fail(c, CK_ERR_UNSUPPORTED,
                   "ck_allreduce_async needs MPI_THREAD_MULTIPLE, which SimGrid SMPI does not provide "
                   "(simulated ranks cannot run a progress thread): use the blocking ck_allreduce in a simulated build");
#endif
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
        return ck_fail(c, CK_ERR_UNSUPPORTED,
                       "ck_allreduce_async needs MPI_THREAD_MULTIPLE, but MPI provides %s: initialise with "
                       "MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) and check provided",
                       thread_level_name(level));
    struct ck_async_engine *e = calloc(1, sizeof *e);
    if (!e) return ck_fail(c, CK_ERR_NOMEM, "ck_allreduce_async: out of memory");
    int rc = ck_comm_create(c->mpi, c->tr.mem, &e->clone);
    if (rc) {
        free(e);
        return ck_fail(c, rc, "ck_allreduce_async: cannot create the progress thread's communicator: %s",
                       ck_strerror(rc));
    }
    e->clone->cfg = c->cfg;
    e->clone->polite = 1;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->work, NULL);
    pthread_cond_init(&e->done, NULL);
    if (pthread_create(&e->thread, NULL, progress_main, e)) {
        ck_comm_destroy(e->clone);
        pthread_mutex_destroy(&e->mu);
        pthread_cond_destroy(&e->work);
        pthread_cond_destroy(&e->done);
        free(e);
        return ck_fail(c, CK_ERR_INTERNAL, "ck_allreduce_async: cannot start the progress thread");
    }
    c->async = e;
    c->async_stop = async_shutdown;
    return CK_SUCCESS;
}

/* Queue one call (its collective, algorithm and arguments in `call`) for
 * the progress thread, starting the engine first when this is the
 * communicator's first asynchronous call. The arguments are checked by the
 * collective itself when it runs: its status comes back through the wait. */
static int enqueue(ck_comm *comm, const struct ck_async *call, ck_async **handle)
{
    const char *name = call->coll == CK_COLL_REDUCE_SCATTER ? "ck_reduce_scatter_async"
                     : call->coll == CK_COLL_ALLGATHER      ? "ck_allgather_async" : "ck_allreduce_async";
    if (!handle) return comm ? ck_fail(comm, CK_ERR_INVALID_ARG, "%s: null handle", name) : CK_ERR_INVALID_ARG;
    *handle = NULL;
    if (!comm) return CK_ERR_INVALID_ARG;
    comm->errmsg[0] = '\0';
    int rc;
    if (!comm->async && (rc = engine_start(comm))) return rc;
    struct ck_async *h = calloc(1, sizeof *h);
    if (!h) return ck_fail(comm, CK_ERR_NOMEM, "%s: out of memory", name);
    *h = *call;
    h->parent = comm;
    struct ck_async_engine *e = comm->async;
    pthread_mutex_lock(&e->mu);
    if (e->tail) e->tail->next = h; else e->head = h;
    e->tail = h;
    pthread_cond_signal(&e->work);
    pthread_mutex_unlock(&e->mu);
    *handle = h;
    return CK_SUCCESS;
}

int ck_allreduce_async(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op, ck_async **handle)
{
    const struct ck_async call = {.coll = CK_COLL_ALLREDUCE, .algo = algo, .sendbuf = sendbuf, .recvbuf = recvbuf,
                                  .count = count, .dt = dt, .op = op};
    return enqueue(comm, &call, handle);
}

int ck_reduce_scatter_async(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                            size_t count, ck_dtype dt, ck_op op, ck_async **handle)
{
    const struct ck_async call = {.coll = CK_COLL_REDUCE_SCATTER, .algo = algo, .sendbuf = sendbuf,
                                  .recvbuf = recvbuf, .count = count, .dt = dt, .op = op};
    return enqueue(comm, &call, handle);
}

int ck_allgather_async(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_async **handle)
{
    const struct ck_async call = {.coll = CK_COLL_ALLGATHER, .algo = algo, .sendbuf = sendbuf, .recvbuf = recvbuf,
                                  .count = count, .dt = dt, .op = CK_SUM};
    return enqueue(comm, &call, handle);
}

int ck_allreduce_wait(ck_async *h) { return ck_allreduce_wait_timed(h, NULL, NULL); }

int ck_allreduce_wait_timed(ck_async *h, double *started, double *finished)
{
    if (!h) return CK_ERR_INVALID_ARG;
    struct ck_async_engine *e = h->parent->async;
    pthread_mutex_lock(&e->mu);
    while (!h->done) pthread_cond_wait(&e->done, &e->mu);
    pthread_mutex_unlock(&e->mu);
    int rc = h->rc;
    /* The call's traffic joins the parent's counters here, on the thread
     * that owns the parent: a caller that reads ck_counters_get around its
     * waits sees what its queued calls moved, as for blocking ones. */
    ck_comm *c = h->parent;
    c->ctr.bytes_sent += h->moved.bytes_sent;
    c->ctr.msgs_sent += h->moved.msgs_sent;
    c->ctr.bytes_recv += h->moved.bytes_recv;
    c->ctr.msgs_recv += h->moved.msgs_recv;
    if (started) *started = h->started;
    if (finished) *finished = h->finished;
    if (rc) ck_fail(h->parent, rc, "%s", h->errmsg[0] ? h->errmsg : ck_strerror(rc));
    free(h);
    return rc;
}

static void async_shutdown(ck_comm *c)
{
    if (!c || !c->async) return;
    struct ck_async_engine *e = c->async;
    pthread_mutex_lock(&e->mu);
    e->stop = 1;
    pthread_cond_signal(&e->work);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->thread, NULL);
    ck_comm_destroy(e->clone);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->work);
    pthread_cond_destroy(&e->done);
    free(e);
    c->async = NULL;
}
