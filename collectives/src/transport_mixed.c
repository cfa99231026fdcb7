/*
 * transport_mixed.c — a router: one transport for the communicator made of
 * others, chosen per peer. Two uses:
 *
 *   mixed  shared memory between the ranks of one node, MPI between nodes,
 *          on one communicator: what `--transport shm` becomes when the
 *          ranks span nodes (comm.c). Rank 3 of a 2 x 2 job sends to rank 2
 *          through their node's shm segments and to rank 1 through MPI:
 *
 *              peer q         0     1     2     3
 *              node_of[q]     0     0     1     1
 *              route (r = 3)  mpi 0 mpi 1 shm 0 self     (sub-transport, its rank for q)
 *
 *   view   the ranks of a sub-communicator (a node group, a cross group)
 *          on the parent's transport, which it does not own (topo.c).
 *
 * Each call goes to the sub-transport of its peer with the peer's rank
 * there; a request's peer is put back to the communicator's rank before the
 * call returns, so the communicator's messages and the router's next
 * test/cancel see the same request. Local work (copies, reductions, memory)
 * goes to the first sub-transport.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport.h"

typedef struct route {
    ck_transport sub[2];
    int          own[2];    /* destroyed with the router */
    int          n;
    int         *which;     /* [size]: the sub-transport of each peer */
    int         *peer;      /* [size]: the peer's rank there */
} route;

static ck_transport *sub_of(route *t, int peer) { return &t->sub[t->which[peer]]; }

static int rt_post(route *t, int is_send, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    ck_transport *s = sub_of(t, peer);
    r->peer = t->peer[peer];
    int rc = is_send ? s->isend(s->self, buf, bytes, t->peer[peer], tag, r)
                     : s->irecv(s->self, buf, bytes, t->peer[peer], tag, r);
    r->peer = peer;
    return rc;
}
static int rt_isend(void *self, const void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return rt_post(self, 1, (void *)buf, bytes, peer, tag, r);
}
static int rt_irecv(void *self, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return rt_post(self, 0, buf, bytes, peer, tag, r);
}

/* The request tested on its peer's transport; while it is pending, one
 * progress pass of every other one. Without it a rank polling an MPI
 * receive never hands out the shared-memory chunks a node peer waits for
 * (nor an MPI rendezvous while it polls shared memory), and two nodes can
 * wait for each other for ever: tree2 at 2 x 2 did, measured. A failure of
 * another transport ends this request too (the communicator is broken). */
static int rt_test(void *self, ck_req *r, int *done)
{
    route *t = self;
    const int peer = r->peer;
    ck_transport *s = sub_of(t, peer);
    r->peer = t->peer[peer];
    int rc = s->test(s->self, r, done);
    for (int i = 0; !rc && !*done && i < t->n; i++) {
        ck_transport *o = &t->sub[i];
        if (o == s || !o->progress) continue;
        if ((rc = o->progress(o->self))) s->cancel(s->self, r);
    }
    r->peer = peer;
    return rc;
}

/* Blocking: one transport's own wait; several are polled (rt_test), since
 * a blocking wait in one would starve the others. */
static int rt_wait(void *self, ck_req *r)
{
    route *t = self;
    int rc = CK_SUCCESS, done = 0;
    if (t->n > 1) {
        while (!rc && !done) rc = rt_test(self, r, &done);
        return rc;
    }
    const int peer = r->peer;
    ck_transport *s = sub_of(t, peer);
    r->peer = t->peer[peer];
    if (s->wait) rc = s->wait(s->self, r);
    else while (!rc && !done) rc = s->test(s->self, r, &done);
    r->peer = peer;
    return rc;
}

static void rt_cancel(void *self, ck_req *r)
{
    route *t = self;
    const int peer = r->peer;
    ck_transport *s = sub_of(t, peer);
    r->peer = t->peer[peer];
    s->cancel(s->self, r);
    r->peer = peer;
}

/* Local work: the first sub-transport's. */
static int rt_reduce(void *self, void *dst, const void *a, const void *b, size_t n, ck_dtype dt, ck_op op)
{
    ck_transport *s = &((route *)self)->sub[0];
    return s->reduce(s->self, dst, a, b, n, dt, op);
}
static int rt_divide(void *self, void *buf, size_t n, ck_dtype dt, int divisor)
{
    ck_transport *s = &((route *)self)->sub[0];
    return s->divide(s->self, buf, n, dt, divisor);
}
static int rt_copy(void *self, void *dst, const void *src, size_t bytes)
{
    ck_transport *s = &((route *)self)->sub[0];
    return s->copy(s->self, dst, src, bytes);
}
static int rt_upload(void *self, void *dst, const void *src, size_t bytes)
{
    ck_transport *s = &((route *)self)->sub[0];
    return s->upload(s->self, dst, src, bytes);
}
static int rt_download(void *self, void *dst, const void *src, size_t bytes)
{
    ck_transport *s = &((route *)self)->sub[0];
    return s->download(s->self, dst, src, bytes);
}
static void *rt_alloc(void *self, size_t bytes)
{
    ck_transport *s = &((route *)self)->sub[0];
    return s->alloc(s->self, bytes);
}
static void rt_free(void *self, void *p)
{
    ck_transport *s = &((route *)self)->sub[0];
    (s->free)(s->self, p);
}

static int rt_finish(void *self)
{
    route *t = self;
    int rc = CK_SUCCESS;
    for (int i = 0; i < t->n && !rc; i++)
        if (t->sub[i].finish) rc = t->sub[i].finish(t->sub[i].self);
    return rc;
}

static void rt_set_timeout(void *self, double timeout_s)
{
    route *t = self;
    for (int i = 0; i < t->n; i++)
        if (t->sub[i].set_timeout) t->sub[i].set_timeout(t->sub[i].self, timeout_s);
}

static const char *rt_error(void *self)
{
    route *t = self;
    for (int i = 0; i < t->n; i++) {
        const char *e = t->sub[i].error ? t->sub[i].error(t->sub[i].self) : NULL;
        if (e && *e) return e;
    }
    return "";
}

static void rt_destroy(void *self)
{
    route *t = self;
    if (!t) return;
    for (int i = 0; i < t->n; i++)
        if (t->own[i] && t->sub[i].destroy) t->sub[i].destroy(t->sub[i].self);
    free(t->which);
    free(t->peer);
    free(t);
}

static route *route_new(int size)
{
    route *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->which = calloc((size_t)size, sizeof *t->which);
    t->peer = calloc((size_t)size, sizeof *t->peer);
    if (!t->which || !t->peer) { rt_destroy(t); return NULL; }
    return t;
}

static void route_publish(route *t, const char *name, unsigned mem, ck_transport *out)
{
    *out = (ck_transport){
        .name = name, .mem = mem, .self = t,
        .isend = rt_isend, .irecv = rt_irecv, .test = rt_test, .wait = rt_wait, .cancel = rt_cancel,
        .reduce = rt_reduce, .divide = rt_divide, .copy = rt_copy, .upload = rt_upload, .download = rt_download,
        .alloc = rt_alloc, .free = rt_free, .finish = rt_finish, .destroy = rt_destroy,
        .set_timeout = rt_set_timeout, .error = rt_error,
    };
}

int ck_transport_view_create(const ck_transport *parent, const int *to_parent, int size, ck_transport *out)
{
    route *t = route_new(size);
    if (!t) return CK_ERR_NOMEM;
    t->sub[0] = *parent;
    t->n = 1;
    memcpy(t->peer, to_parent, (size_t)size * sizeof *t->peer);
    /* Not "mpi": the watchdog probes a "mpi" communicator's own MPI
     * communicator for stray messages, and a view's messages are its parent's. */
    route_publish(t, "view", parent->mem, out);
    return CK_SUCCESS;
}

/* Shared memory among my node's ranks, when the node has more than one and
 * the node agrees it works; else nothing (my node's ranks use MPI). */
static int node_shm(MPI_Comm comm, const int *node_of, int rank, int size, ck_transport *shm)
{
    int local = 0;
    for (int q = 0; q < size; q++) local += node_of[q] == node_of[rank];
    MPI_Comm node;
    /* MPI_Comm_split has no bounded form: meet first (a rank that never comes ends the job, named). */
    ck_watch_barrier(comm, "setting up the mixed transport");
    if (MPI_Comm_split(comm, node_of[rank], rank, &node) != MPI_SUCCESS) return 0;
    char why[256];
    int ok = local > 1 && ck_transport_shm_create(node, shm, why, sizeof why) == CK_SUCCESS;
    MPI_Comm_free(&node);
    return ok;
}

int ck_transport_mixed_create(MPI_Comm comm, const int *node_of, ck_transport *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    route *t = route_new(size);
    if (!t) return CK_ERR_NOMEM;
    int rc = ck_transport_mpi_create(comm, &t->sub[0]);
    if (rc) { rt_destroy(t); return rc; }
    t->own[0] = 1;
    t->n = 1;
    if (node_shm(comm, node_of, rank, size, &t->sub[1])) {
        t->own[1] = 1;
        t->n = 2;
    }
    for (int q = 0, local = 0; q < size; q++) {
        const int same = t->n == 2 && node_of[q] == node_of[rank];
        t->which[q] = same;
        t->peer[q] = same ? local++ : q;
    }
    route_publish(t, "mixed", CK_MEM_HOST, out);
    return CK_SUCCESS;
}
