/*
 * protocol.c — the engine of protocol.h: requests, matching, grants and
 * fills, the checks on every control message, and the failure rules. No
 * CUDA, no MPI, no shared memory here: the transport's ck_proto_ops move the
 * control messages and the chunks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "protocol.h"

/* ------------------------------------------------------------ failures */

/* Record a failure: the text goes to the communicator's message (through
 * ck_transport.error) and to stderr, where the other ranks' messages land too. */
static void record(ck_proto *pr, const char *fmt, va_list ap)
{
    int n = snprintf(pr->err, sizeof pr->err, "rank %d: ", pr->rank);
    vsnprintf(pr->err + n, sizeof pr->err - (size_t)n, fmt, ap);
    fprintf(stderr, "collkit %s: %s\n", pr->name, pr->err);
}

int ck_proto_fail(ck_proto *pr, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(pr, fmt, ap);
    va_end(ap);
    return status;
}

int ck_proto_break(ck_proto *pr, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(pr, fmt, ap);
    va_end(ap);
    if (!pr->broken) snprintf(pr->first, sizeof pr->first, "%s", pr->err);
    pr->broken = 1;
    return status;
}

int ck_proto_dead(ck_proto *pr)
{
    snprintf(pr->err, sizeof pr->err, "rank %d: the transport is unusable after an earlier failure (%.300s)",
             pr->rank, pr->first);
    return CK_ERR_TRANSPORT;
}

/* ------------------------------------------------------------ lifecycle */

int ck_proto_init(ck_proto *pr, const ck_proto_ops *ops, void *be, const char *name, int rank, int size,
                  int tag_ub, size_t slot_bytes, int nslot)
{
    memset(pr, 0, sizeof *pr);
    pr->ops = ops;
    pr->be = be;
    pr->name = name;
    pr->rank = rank;
    pr->size = size;
    pr->tag_ub = tag_ub;
    pr->slot_bytes = slot_bytes;
    pr->nslot = nslot;
    if (nslot < 1 || nslot > CK_PROTO_MAXSLOT || !slot_bytes) return CK_ERR_INVALID_ARG;
    pr->pools = calloc((size_t)(size > 0 ? size : 1), sizeof *pr->pools);
    if (!pr->pools) return CK_ERR_NOMEM;
    for (int q = 0; q < size; q++) ck_slot_pool_init_n(&pr->pools[q], nslot);
    return CK_SUCCESS;
}

static void drop(ck_proto *pr, ck_proto_op *o);

void ck_proto_fini(ck_proto *pr)
{
    while (pr->head) drop(pr, pr->head);
    free(pr->pools);
    pr->pools = NULL;
}

int ck_proto_pending(const ck_proto *pr)
{
    int n = 0;
    for (const ck_proto_op *o = pr->head; o; o = o->next) n++;
    return n;
}

/* ------------------------------------------------------------ requests */

static size_t chunk_len(const ck_proto *pr, const ck_proto_op *o, size_t j)
{
    size_t off = j * pr->slot_bytes;
    return o->bytes - off < pr->slot_bytes ? o->bytes - off : pr->slot_bytes;
}
/* Control messages o has taken: grants (send) or fills (recv). */
static size_t ctl_done(const ck_proto_op *o) { return o->is_send ? o->nsent : o->slots.nfill; }

/* Is o the oldest request of its (direction, peer, tag) still expecting
 * control messages (by_grants = 0) or, for receives, grants (1)? */
static int oldest(const ck_proto_op *o, int by_grants)
{
    for (const ck_proto_op *e = o->prev; e; e = e->prev)
        if (e->is_send == o->is_send && e->peer == o->peer && e->tag == o->tag &&
            (by_grants ? e->slots.ngrant : ctl_done(e)) < e->nchunks) return 0;
    return 1;
}

static ck_proto_op *op_of(const ck_req *r) { ck_proto_op *o; memcpy(&o, r->impl, sizeof o); return o; }
static void set_op(ck_req *r, ck_proto_op *o) { memcpy(r->impl, &o, sizeof o); }

static void unlink_op(ck_proto *pr, ck_proto_op *o)
{
    if (o->prev) o->prev->next = o->next; else pr->head = o->next;
    if (o->next) o->next->prev = o->prev; else pr->tail = o->prev;
}

/* Let go of a request: the transport forgets what it posted for it first
 * (a control receive must not land in freed memory), then o is freed. */
static void drop(ck_proto *pr, ck_proto_op *o)
{
    pr->ops->ctl_forget(pr->be, o);
    unlink_op(pr, o);
    free(o);
}

static int op_fail(ck_proto *pr, ck_proto_op *o, const char *what, long long a, long long b)
{
    char detail[160];
    snprintf(detail, sizeof detail, what, a, b);
    o->failed = 1;
    /* the control streams are out of step from here on */
    return ck_proto_break(pr, CK_SUCCESS, "%s (%s rank %d, tag %d)", detail, o->is_send ? "send to" : "recv from",
                          o->peer, o->tag);
}

/* ------------------------------------------------------------ progress */

/* A GRANT arrived for the send's next chunk: put the chunk into the peer's slot. */
static int on_grant(ck_proto *pr, ck_proto_op *o)
{
    const size_t j = o->nsent;
    const int k = (int)o->msg[0];
    if (o->msg[1] != (int64_t)o->bytes) {
        /* Tell the receiver too (its check is on the size in a FILL). */
        pr->ops->ctl_send(pr->be, CK_CTL_FILL, o->peer, o->tag, -1, 0, (int64_t)o->bytes);
        return op_fail(pr, o, "message size mismatch: sending %lld B, the receive is %lld B",
                       (long long)o->bytes, (long long)o->msg[1]);
    }
    const size_t len = o->bytes ? chunk_len(pr, o, j) : 0;
    if (len ? (k < 0 || k >= pr->nslot) : k != -1)
        return op_fail(pr, o, "bad slot %lld in the grant for chunk %lld", (long long)k, (long long)j);
    if (len) {
        int rc = pr->ops->put(pr->be, o->peer, k, o->buf + j * pr->slot_bytes, len);
        if (rc) return rc;
    }
    o->nsent++;
    return pr->ops->ctl_send(pr->be, CK_CTL_FILL, o->peer, o->tag, k, (int64_t)len, (int64_t)o->bytes);
}

/* A FILL arrived for the receive's next chunk: get it out of my slot. */
static int on_fill(ck_proto *pr, ck_proto_op *o)
{
    const size_t j = o->slots.nfill;
    const int k = (int)o->msg[0];
    const size_t len = o->bytes ? chunk_len(pr, o, j) : 0;
    if (o->msg[2] != (int64_t)o->bytes)
        return op_fail(pr, o, "message size mismatch: receiving %lld B, the sender sent %lld B",
                       (long long)o->bytes, (long long)o->msg[2]);
    if (o->msg[1] != (int64_t)len)
        return op_fail(pr, o, "chunk out of step: expected %lld B, got %lld B", (long long)len, (long long)o->msg[1]);
    if (ck_slot_fill(&pr->pools[o->peer], &o->slots, k))
        return op_fail(pr, o, "a fill names slot %lld, which chunk %lld was not granted", (long long)k, (long long)j);
    /* Slot k is free in the ledger now, but it is granted again only by a
     * later grant pass: after this get (a memcpy, or a device copy whose
     * completion the transport's next put into k waits for). */
    if (len) return pr->ops->get(pr->be, o->peer, k, o->buf + j * pr->slot_bytes, len);
    return CK_SUCCESS;
}

/* Take control messages for o while they are there. */
static int pump(ck_proto *pr, ck_proto_op *o)
{
    while (!o->failed && ctl_done(o) < o->nchunks && oldest(o, 0)) {
        int got = pr->ops->ctl_take(pr->be, o->is_send ? CK_CTL_GRANT : CK_CTL_FILL, o);
        if (got < 0) return -got;
        if (!got) break;
        pr->progressed++;
        int rc = o->is_send ? on_grant(pr, o) : on_fill(pr, o);
        if (rc) return rc;
    }
    return CK_SUCCESS;
}

/* Hand out grants, one per eligible receive per round, oldest first, within
 * the caps of the ledger. */
static int grant(ck_proto *pr)
{
    for (int any = 1; any;) {
        any = 0;
        for (ck_proto_op *o = pr->head; o; o = o->next) {
            int k;
            if (o->is_send || o->failed || !oldest(o, 1)) continue;
            if (!ck_slot_grant(&pr->pools[o->peer], &o->slots, &k)) continue;
            int rc = pr->ops->ctl_send(pr->be, CK_CTL_GRANT, o->peer, o->tag, k, (int64_t)o->bytes, 0);
            if (rc) return rc;
            any = 1;
        }
    }
    return CK_SUCCESS;
}

int ck_proto_progress(ck_proto *pr)
{
    int rc = pr->ops->ctl_progress ? pr->ops->ctl_progress(pr->be) : CK_SUCCESS;
    if (!rc) rc = grant(pr);
    for (ck_proto_op *o = pr->head; o && !rc; o = o->next) rc = pump(pr, o);
    if (!rc) rc = grant(pr);   /* slots freed by fills just handled */
    return rc;
}

int ck_proto_post(ck_proto *pr, int is_send, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    if (pr->broken) return ck_proto_dead(pr);
    if (tag < 0 || tag > pr->tag_ub)
        return ck_proto_fail(pr, CK_ERR_INVALID_ARG, "tag %d is outside 0..%d (MPI_TAG_UB)", tag, pr->tag_ub);
    ck_proto_op *o = calloc(1, sizeof *o);
    if (!o) return ck_proto_fail(pr, CK_ERR_NOMEM, "out of host memory for a request");
    o->is_send = is_send; o->peer = peer; o->tag = tag;
    o->buf = buf; o->bytes = bytes;
    o->nchunks = ck_slot_nchunks_of(bytes, pr->slot_bytes);
    ck_slot_req_init_n(&o->slots, bytes, pr->slot_bytes, pr->nslot);
    o->prev = pr->tail;
    if (pr->tail) pr->tail->next = o; else pr->head = o;
    pr->tail = o;
    int rc = ck_proto_progress(pr);
    if (rc) { drop(pr, o); return rc; }
    set_op(r, o);
    return CK_SUCCESS;
}

/* On failure (this request's, another's, or an earlier one) the request is
 * dropped here and r forgets it, so a cancel that follows finds nothing to
 * free twice. */
int ck_proto_test(ck_proto *pr, ck_req *r, int *done)
{
    ck_proto_op *o = op_of(r);
    *done = 0;
    if (!o) return ck_proto_dead(pr);
    int rc = pr->broken ? ck_proto_dead(pr) : ck_proto_progress(pr);
    if (!rc && o->failed) rc = CK_ERR_TRANSPORT;   /* pr->err has the detail (op_fail) */
    if (rc) {
        drop(pr, o);
        set_op(r, NULL);
        return rc;
    }
    if (ctl_done(o) == o->nchunks) {
        drop(pr, o);
        set_op(r, NULL);
        *done = 1;
    }
    return CK_SUCCESS;
}

/* After a watchdog timeout, or a failure of another request in the same
 * wait: drop the request. Its grants and fills may still be in flight, so
 * the engine refuses further messages. */
void ck_proto_cancel(ck_proto *pr, ck_req *r)
{
    ck_proto_op *o = op_of(r);
    if (!o) return;
    drop(pr, o);
    set_op(r, NULL);
    if (!pr->broken) ck_proto_break(pr, CK_SUCCESS, "a %s %s rank %d (tag %d) was abandoned half-way",
                                    r->kind == CK_EV_SEND ? "send" : "receive", r->kind == CK_EV_SEND ? "to" : "from",
                                    r->peer, r->tag);
}
