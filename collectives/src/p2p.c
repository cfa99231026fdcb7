/*
 * p2p.c — the point-to-point layer that algorithm files call: ck_isend,
 * ck_irecv, ck_wait(all), local reductions and copies, scratch space. Every
 * call is counted (bytes, messages), traced when tracing is on, and every
 * wait is bounded by the communicator's watchdog. Posted requests are kept
 * until they finish, so the collective entry (collective.c) can name one an
 * algorithm left behind.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* ------------------------------------------------------------ point to point */

void ck_step(ck_comm *c, int step, const char *phase)
{
    c->step = step;
    c->phase = phase;
    if (c->running && c->obs.step) c->obs.step(c->obs.ctx, step, phase);
}

void ck_show_shared(ck_comm *c, const char *name, const void *buf, size_t bytes)
{
    if (c->running && c->obs.shared) c->obs.shared(c->obs.ctx, name, buf, bytes);
}

void ck_show_load(ck_comm *c, int peer, const char *from, const void *buf, size_t bytes)
{
    if (c->running && c->obs.load) c->obs.load(c->obs.ctx, peer, from, buf, bytes, c->step);
}

void ck_observe(ck_comm *c, const ck_observer *obs)
{
    if (c) c->obs = obs ? *obs : (ck_observer){0};
}

static int check_peer(ck_comm *c, int peer, const char *what)
{
    if (peer < 0 || peer >= c->size || peer == c->rank)
        return ck_fail(c, CK_ERR_INVALID_ARG, "%s: rank %d cannot address peer %d (size %d) at step %d",
                       what, c->rank, peer, c->size, c->step);
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ request accounting
 * Posts, completions and cancels are counted, and the posted requests kept
 * until they complete, so that ck_allreduce can name a request an algorithm
 * left behind. Requests are found by the address of the caller's ck_req, or
 * (a request copied before its wait) by what it is: kind, peer, tag, size. */

static void track_post(ck_comm *c, const ck_req *r)
{
    c->nposted++;
    for (int i = 0; i < c->npending; i++)
        if (c->pending[i].where == r) c->pending[i].where = NULL;   /* reused while still posted */
    if (c->npending == c->cap_pending) {
        int cap = c->cap_pending ? 2 * c->cap_pending : 16;
        struct ck_pending *n = realloc(c->pending, (size_t)cap * sizeof *n);
        if (!n) return;   /* no detail for this one; the counts still say it */
        c->pending = n;
        c->cap_pending = cap;
    }
    c->pending[c->npending++] = (struct ck_pending){r, *r, c->phase};
}

/* The phase (ck_step) a pending request was posted in, or NULL. */
static const char *posted_phase(const ck_comm *c, const ck_req *r)
{
    for (int i = c->npending - 1; i >= 0; i--)
        if (c->pending[i].where == r) return c->pending[i].phase;
    return NULL;
}

/* A request is finished: completed (with or without an error) or cancelled. */
static void track_done(ck_comm *c, const ck_req *r, int cancelled)
{
    if (cancelled) c->ncancelled++;
    else c->ncompleted++;
    int k = -1;
    for (int i = c->npending - 1; i >= 0 && k < 0; i--)
        if (c->pending[i].where == r) k = i;
    for (int i = 0; i < c->npending && k < 0; i++) {
        const ck_req *s = &c->pending[i].snap;
        if (s->kind == r->kind && s->peer == r->peer && s->tag == r->tag && s->bytes == r->bytes) k = i;
    }
    if (k >= 0) c->pending[k] = c->pending[--c->npending];
}

static int post(ck_comm *c, int is_send, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    int rc = check_peer(c, peer, is_send ? "ck_isend" : "ck_irecv");
    if (rc) return rc;
    memset(r, 0, sizeof *r);
    r->kind = is_send ? CK_EV_SEND : CK_EV_RECV;
    r->peer = peer;
    r->tag = tag;
    r->step = c->step;
    r->bytes = bytes;
    r->t_post = c->ev_cap ? ck_now() : 0.0;
    rc = is_send ? c->tr.isend(c->tr.self, buf, bytes, peer, tag, r)
                 : c->tr.irecv(c->tr.self, buf, bytes, peer, tag, r);
    if (rc) return ck_fail(c, rc, "%s of %zu B %s rank %d failed in the %s transport%s%s",
                           is_send ? "send" : "recv", bytes, is_send ? "to" : "from", peer, c->tr.name,
                           tr_sep(c), tr_detail(c));
    r->active = 1;
    track_post(c, r);
    /* A view's messages are its parent's (group.c): a watcher of the parent
     * sees them, in the parent's ranks, at the parent's step. */
    ck_comm *w = c->parent && c->parent->running ? c->parent : c;
    if (w->running && w->obs.message)
        w->obs.message(w->obs.ctx, r->kind, buf, bytes, w == c ? peer : c->to_parent[peer], w->step);
    if (is_send) {
        c->ctr.bytes_sent += bytes;
        c->ctr.msgs_sent++;
        c->ctr.msgs_empty += bytes == 0;
        c->ctr.msgs_over += bytes > c->msg_bound;
        if (bytes > c->ctr.msg_largest) c->ctr.msg_largest = bytes;
    } else {
        c->ctr.bytes_recv += bytes;
        c->ctr.msgs_recv++;
    }
    return CK_SUCCESS;
}

int ck_isend(ck_comm *c, const void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return post(c, 1, (void *)buf, bytes, peer, tag, r);
}

int ck_irecv(ck_comm *c, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return post(c, 0, buf, bytes, peer, tag, r);
}

static void complete(ck_comm *c, ck_req *r, double now)
{
    r->active = 0;
    track_done(c, r, 0);
    if (c->ev_cap) {
        int step = c->step;
        c->step = r->step;   /* the event belongs to the step that posted it */
        ck_trace_add(c, r->kind, r->peer, r->bytes, r->t_post, now);
        c->step = step;
    }
}

/* The watchdog. With a bound set (timeout_s > 0, the default outside SMPI),
 * every wait is a polling loop over transport->test, so a wait
 * that never ends is noticed here, on the rank that is stuck, with the peer
 * and step it was waiting for — which is what you need to debug a deadlock. */
static int watchdog_fire(ck_comm *c, ck_req *r, double waited)
{
    /* A receive that waits while another message has arrived (MPI
     * transport: it is there to be probed): from the same peer with another
     * tag, the send and the receive disagree on the tag; with the same tag
     * from another rank, on the peer. The commonest deadlocks of all. */
    char other[240] = "", why[64] = "";
    if (r->kind != CK_EV_SEND && r->peer >= 0 && !strcmp(c->tr.name, "mpi")) {
        int found = 0, got = 0;
        MPI_Status st;
        if (MPI_Iprobe(r->peer, MPI_ANY_TAG, c->mpi, &found, &st) == MPI_SUCCESS && found && st.MPI_TAG != r->tag)
            snprintf(why, sizeof why, "the send's tag and the receive's differ");
        else if (MPI_Iprobe(MPI_ANY_SOURCE, r->tag, c->mpi, &found, &st) == MPI_SUCCESS && found &&
                 st.MPI_SOURCE != r->peer)
            snprintf(why, sizeof why, "is rank %d the right peer for this receive?", r->peer);
        if (why[0] && MPI_Get_count(&st, MPI_BYTE, &got) == MPI_SUCCESS)
            snprintf(other, sizeof other, "; a message of %d B from rank %d with tag %d has arrived and waits "
                     "unreceived: %s", got, st.MPI_SOURCE, st.MPI_TAG, why);
    }
    int rc = ck_fail(c, CK_ERR_TIMEOUT,
                     "watchdog: rank %d waited %.1f s for %s of %zu B %s rank %d (tag %d) in '%s' step %d%s%s%s%s",
                     c->rank, waited, r->kind == CK_EV_SEND ? "send" : "recv", r->bytes,
                     r->kind == CK_EV_SEND ? "to" : "from", r->peer, r->tag,
                     c->algo_name ? c->algo_name : "?", r->step,
                     c->phase ? " (" : "", c->phase ? c->phase : "", c->phase ? ")" : "", other);
    fprintf(stderr, "collkit %s\n", c->errmsg);
    fflush(stderr);
    return rc;
}

/* How ck_waitall polls its transport. The async engine's clone waits
 * politely: a few hundred hot polls keep latency low for small messages,
 * then it yields, then naps 20 us a poll, so on a machine with fewer cores
 * than threads the progress thread does not steal the core the caller is
 * computing on. A caller's own wait spins (latency is what is measured), or
 * with config.yield_wait yields after 64 polls. */
static const ck_backoff_policy polite_policy = {
    .spin_polls = 256, .spin_s = INFINITY, .yield_polls = 512, .yield_s = INFINITY, .nap_ns = 20000};
static const ck_backoff_policy yield_policy = {
    .spin_polls = 64, .spin_s = INFINITY, .yield_polls = ULONG_MAX, .yield_s = INFINITY, .nap_ns = 0};
static const ck_backoff_policy spin_policy = {.spin_polls = ULONG_MAX, .spin_s = INFINITY};

static const ck_backoff_policy *wait_policy(const ck_comm *c)
{
    return c->polite ? &polite_policy : c->cfg.yield_wait ? &yield_policy : &spin_policy;
}

int ck_waitall(ck_comm *c, ck_req *reqs, int n)
{
    double t0 = ck_now(), deadline = c->cfg.timeout_s > 0 ? t0 + c->cfg.timeout_s : 0;
    int pending = 0;
    for (int i = 0; i < n; i++) pending += reqs[i].active;
    /* The trace's peer: read now, and only from a posted request (an
     * inactive one, e.g. a send-window slot not used yet, may hold nothing). */
    const int trace_peer = n == 1 && reqs[0].active ? reqs[0].peer : -1;
    unsigned long spins = 0;
    ck_backoff b;   /* answering roll calls of ranks whose own wait ran out (watch.c) when bounded */
    ck_backoff_start(&b, wait_policy(c), deadline > 0);
    /* Without the watchdog there is nothing to notice while waiting: block in
     * the transport where it can (one pass), rather than poll it. Under SMPI,
     * where this is the default, every poll would cost simulated time. */
    const int block = !(c->cfg.timeout_s > 0) && c->tr.wait && !c->polite;
    while (pending) {
        for (int i = 0; i < n; i++) {
            if (!reqs[i].active) continue;
            int done = 0, rc;
            if (block) { rc = c->tr.wait(c->tr.self, &reqs[i]); done = 1; }
            else rc = c->tr.test(c->tr.self, &reqs[i], &done);
            if (rc == CK_ERR_PROTOCOL && done && c->algo_name) {
                /* A receive of the wrong size, inside ck_allreduce: it is over
                 * (MPI delivered what fit), so the ranks carry on and no one
                 * is left waiting; the call then fails with the first one. */
                const char *ph = posted_phase(c, &reqs[i]);
                if (!c->protocol[0])
                    snprintf(c->protocol, sizeof c->protocol, "%s (in '%s', rank %d's receive posted at step %d%s%s%s)",
                             tr_detail(c), c->algo_name, c->rank, reqs[i].step, ph ? " (" : "", ph ? ph : "",
                             ph ? ")" : "");
                rc = CK_SUCCESS;
            }
            if (rc) {
                /* Abandon the others too: a request left posted would write
                 * into a buffer the caller is about to free. */
                int peer = reqs[i].peer, step = reqs[i].step;
                reqs[i].active = 0;
                track_done(c, &reqs[i], 0);
                for (int j = 0; j < n; j++)
                    if (reqs[j].active) { c->tr.cancel(c->tr.self, &reqs[j]); reqs[j].active = 0; track_done(c, &reqs[j], 1); }
                if (rc == CK_ERR_PROTOCOL)   /* the transport names both sides; this adds where */
                    return ck_fail(c, rc, "%s (rank %d's request posted at step %d)", tr_detail(c), c->rank, step);
                return ck_fail(c, rc, "transport %s failed while waiting on rank %d%s%s", c->tr.name, peer,
                               tr_sep(c), tr_detail(c));
            }
            if (done) { complete(c, &reqs[i], c->ev_cap ? ck_now() : 0.0); pending--; }
        }
        if (!pending) break;
        spins++;
        ck_backoff_pause(&b);
        /* Reading the clock every pass would cost more than the test itself. */
        if (deadline > 0 && (spins & 1023) == 0) {
            double now = ck_now();
            if (now > deadline) {
                for (int i = 0; i < n; i++)
                    if (reqs[i].active) {
                        int rc = watchdog_fire(c, &reqs[i], now - t0);
                        for (int j = 0; j < n; j++)
                            if (reqs[j].active) { c->tr.cancel(c->tr.self, &reqs[j]); reqs[j].active = 0; track_done(c, &reqs[j], 1); }
                        return rc;
                    }
            }
        }
    }
    if (c->ev_cap) ck_trace_add(c, CK_EV_WAIT, trace_peer, 0, t0, ck_now());
    return CK_SUCCESS;
}

int ck_wait(ck_comm *c, ck_req *r) { return ck_waitall(c, r, 1); }

int ck_sendrecv(ck_comm *c, const void *sbuf, size_t sbytes, int dst,
                void *rbuf, size_t rbytes, int src, int tag)
{
    ck_req r[2];
    int rc;
    r[0].active = r[1].active = 0;
    if (src >= 0 && (rc = ck_irecv(c, rbuf, rbytes, src, tag, &r[1]))) return rc;
    if (dst >= 0 && (rc = ck_isend(c, sbuf, sbytes, dst, tag, &r[0]))) return rc;
    return ck_waitall(c, r, 2);
}

int ck_reduce_local(ck_comm *c, void *dst, const void *a, const void *b, size_t count, ck_dtype dt, ck_op op)
{
    if (!count) return CK_SUCCESS;
    double t0 = c->ev_cap ? ck_now() : 0.0;
    int rc = c->tr.reduce(c->tr.self, dst, a, b, count, dt, op);
    if (rc) return ck_fail(c, rc, "local reduce of %zu %s (%s) failed%s%s", count, ck_dtype_name(dt), ck_op_name(op),
                           tr_sep(c), tr_detail(c));
    c->ctr.elems_reduced += count;
    if (c->ev_cap) ck_trace_add(c, CK_EV_REDUCE, -1, count * ck_dtype_size(dt), t0, ck_now());
    return CK_SUCCESS;
}

int ck_copy(ck_comm *c, void *dst, const void *src, size_t bytes)
{
    if (!bytes || dst == src) return CK_SUCCESS;
    double t0 = c->ev_cap ? ck_now() : 0.0;
    int rc = c->tr.copy(c->tr.self, dst, src, bytes);
    if (rc) return ck_fail(c, rc, "local copy of %zu B failed%s%s", bytes, tr_sep(c), tr_detail(c));
    if (c->ev_cap) ck_trace_add(c, CK_EV_COPY, -1, bytes, t0, ck_now());
    return CK_SUCCESS;
}

int ck_sync(ck_comm *c)
{
    if (!c->tr.finish) return CK_SUCCESS;
    tr_arm(c);
    int rc = c->tr.finish(c->tr.self);
    return rc ? ck_fail(c, rc, "transport %s failed to synchronise%s%s", c->tr.name, tr_sep(c), tr_detail(c))
              : CK_SUCCESS;
}

void *ck_scratch(ck_comm *c, size_t bytes)
{
    const size_t g = scratch_guard(c);
    if (!c->scratch || bytes > c->scratch_bytes) {
        if (c->scratch) (c->tr.free)(c->tr.self, (char *)c->scratch - g);
        char *base = c->tr.alloc(c->tr.self, bytes + 2 * g ? bytes + 2 * g : 1);
        c->scratch = base ? base + g : NULL;
        c->scratch_bytes = base ? bytes : 0;
        c->scratch_armed = 0;
        if (!base) return NULL;
        /* New host scratch holds a pattern, not the zeros fresh pages would
         * give: a step that reduces scratch before anything was received
         * into it adds these (a float around -2.9e-16, an int around -1.5e9)
         * rather than an invisible 0, on the first call as on the others. */
        if (g) memset(c->scratch, 0xA5, bytes);
    }
    c->scratch_asked = bytes;
    if (g) {
        unsigned char *b = c->scratch;
        for (size_t k = 0; k < g; k++) {
            b[-1 - (ptrdiff_t)k] = scratch_pattern(k);
            b[bytes + k] = scratch_pattern(g + k);
        }
        c->scratch_armed = 1;
    }
    return c->scratch;
}
