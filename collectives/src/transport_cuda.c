/*
 * transport_cuda.c — the CUDA IPC transport: the same point-to-point interface
 * as transport_mpi.c, for device buffers of ranks on one node.
 *
 * Setup (ck_transport_cuda_create, collective)
 *   - rank -> device: local rank (MPI_Comm_split_type SHARED) modulo the
 *     device count, so several ranks may share one GPU (IPC between processes
 *     on one device works). Every rank must be on the same node.
 *   - each rank cudaMallocs one staging area: p rings of NSLOT slots of SLOT
 *     bytes, ring s receiving from rank s. Its IPC handle is exported once and
 *     all-gathered; a peer opens it on first use and keeps it open.
 *   - per ordered pair (s -> d) and slot k, two interprocess events
 *     (cudaEventInterprocess | cudaEventDisableTiming):
 *       fill[s->d][k]   owned by s, recorded after s copied a chunk into slot k
 *       drain[s->d][k]  owned by d, recorded after d copied slot k out
 *     handles exchanged with MPI_Alltoall, opened by the other side on first use.
 *   - payload only moves by device copies (cudaMemcpyAsync on the transport's
 *     stream); MPI carries two kinds of 3-word control messages on private
 *     duplicates of the communicator, with the user's tag as MPI tag:
 *       GRANT  d -> s  {slot, receive size}          "slot k is yours for your next chunk"
 *       FILL   s -> d  {slot, chunk size, send size} "the chunk is in slot k"
 *
 * One message of n bytes from s to d, tag t (chunks of at most SLOT bytes;
 * a 0-byte message is one empty chunk that uses no slot):
 *
 *   rank s (sender)                          rank d (receiver)
 *   isend: queue op                          irecv: queue op
 *                                    <-----  GRANT{k}   (k free; for each chunk)
 *   stream: wait drain[k]                    (the last copy-out of slot k)
 *   stream: copy chunk -> d.slot[s][k]
 *   stream: record fill[k]
 *   FILL{k, len} ----------------------->
 *                                            stream: wait fill[k]
 *                                            stream: copy d.slot[s][k] -> buf
 *                                            stream: record drain[k]; k is free again
 *   send done when every chunk is queued     recv done when every chunk is queued
 *
 * Why it is correct
 *   - Each event is recorded by its owner before the control message that
 *     names it is sent, and waited on by the other side after that message
 *     arrives; the owner records it again only after the other side's answer
 *     (the next GRANT or FILL for that slot) — so every wait sees exactly the
 *     record it is meant to. No host thread ever blocks on the GPU, and every
 *     GPU wait is on a record already queued, so the GPUs cannot deadlock.
 *   - "done" means queued on the transport's stream. ck_reduce_local, ck_copy
 *     and the next send run on that same stream, so they see the data; finish
 *     (after each all-reduce), download and free wait for the stream.
 *   - Matching: MPI keeps messages of one (source, tag) in order, so requests
 *     with equal (peer, tag) pair up in posting order as in MPI. Only the
 *     oldest such request may have a control receive posted or take grants,
 *     which keeps the k-th GRANT/FILL of a tag with the k-th chunk.
 *   - Grants are speculative (sent before the sender has posted) and capped
 *     (cuda_logic.h): never more than a receive has chunks, never more than
 *     NSLOT outstanding, and a FILL must name the slot its chunk was granted.
 *   - Progress: every test() drives every pending request (a wait on a recv
 *     also moves the sends that the peer needs first), and never blocks.
 *   - Slots are granted round-robin over the posted receives from a peer, so a
 *     receive posted early cannot starve a later one with another tag (with
 *     more than NSLOT such receives outstanding at once the order matters).
 *   - Sizes must match exactly; a mismatch is reported on both sides.
 *
 * Streams. Everything is ordered on the transport's own stream only. Device
 * buffers that the program wrote on another stream (its compute stream, a
 * library's) must be synchronised with it before they are handed to
 * ck_isend / ck_allreduce, e.g. cudaStreamSynchronize(theirs) or an event
 * the program waits on; likewise results are read after ck_allreduce returns
 * (or after ck_sync), not by work queued on another stream before that.
 *
 * Failures. A control message, once sent, commits both sides to the rest of
 * the exchange. So any failure after that point (a CUDA error, an MPI error,
 * a size mismatch, a request abandoned after a timeout) marks the transport
 * broken: every later call fails at once with the first failure's text
 * instead of waiting on a peer that is out of step. A request is never freed
 * while its control receive is posted: it is cancelled and completed first,
 * since MPI would otherwise write into freed memory.
 *
 * Watchdog. Waiting for the stream (finish, download, free, destroy) polls
 * cudaStreamQuery against the communicator's timeout (handed in at creation
 * and before each call by set_timeout): a copy that waits on a peer's event
 * forever ends in CK_ERR_TIMEOUT with a message, like a ck_wait would.
 *
 * Peer access. At creation every rank checks, for each rank on another GPU it
 * can see, cudaDeviceCanAccessPeer; a pair that cannot reach each other is
 * CK_ERR_UNSUPPORTED on every rank, with the ranks and GPUs named (ranks on
 * one GPU need nothing; a GPU this process cannot see is left to
 * cudaIpcOpenMemHandle, which can map memory of devices not visible).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "transport_cuda.h"
#include "cuda_logic.h"

#define SLOT  CK_CUDA_SLOT
#define NSLOT CK_CUDA_NSLOT
#define ROUND_2M(x) (((x) + ((size_t)2 << 20) - 1) / ((size_t)2 << 20) * ((size_t)2 << 20))

typedef struct op {
    struct op  *next, *prev;
    int         is_send, peer, tag;
    char       *buf;
    size_t      bytes, nchunks;
    size_t      nsent;         /* send: chunks queued (one per grant taken) */
    ck_slot_req slots;         /* recv: grants handed out and fills taken */
    int         posted;        /* an MPI_Irecv for the next control message is out, into msg */
    MPI_Request rq;
    int64_t     msg[3];
    int         failed;
} op;

typedef struct ctl_send {      /* an in-flight control message */
    struct ctl_send *next;
    MPI_Request      rq;
    int64_t          msg[3];
} ctl_send;

typedef struct peer {
    int                  opened;
    char                *stage;            /* this peer's staging area, mapped here */
    cudaEvent_t          fill[NSLOT];      /* peer -> me: its fill events (I wait on them) */
    cudaEvent_t          drain[NSLOT];     /* me -> peer: its drain events (I wait on them) */
    cudaIpcMemHandle_t   stage_h;
    cudaIpcEventHandle_t fill_h[NSLOT], drain_h[NSLOT];
    cudaEvent_t          my_fill[NSLOT];   /* me -> peer, mine */
    cudaEvent_t          my_drain[NSLOT];  /* peer -> me, mine */
    ck_slot_pool         pool;             /* my slots of ring[peer] */
} peer;

typedef struct ck_cuda_tr {
    MPI_Comm     comm, grant_comm, fill_comm;
    int          rank, size, dev, tag_ub;
    int          broken;          /* out of step with the peers: every call fails */
    double       timeout_s;       /* the communicator's watchdog bound (<= 0: none) */
    cudaStream_t stream;
    char        *stage;           /* mine: ring s at s * NSLOT * SLOT */
    peer        *peers;
    op          *head, *tail;
    ctl_send    *busy, *spare;
    char        *pci;             /* size * 32 chars */
    cudaError_t  last;            /* the CUDA error a stream poll saw */
    char         err[384];        /* the last failure (ck_transport.error) */
    char         first[384];      /* the failure that broke the transport */
} ck_cuda_tr;

/* ------------------------------------------------------------ failures */

/* Record a failure: the text goes to the communicator's message (through error()) and to
 * stderr, where the other ranks' messages land too. */
static void record(ck_cuda_tr *t, const char *fmt, va_list ap)
{
    int n = snprintf(t->err, sizeof t->err, "rank %d: ", t->rank);
    vsnprintf(t->err + n, sizeof t->err - (size_t)n, fmt, ap);
    fprintf(stderr, "collkit cuda-ipc: %s\n", t->err);
}

static int tr_fail(ck_cuda_tr *t, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int tr_fail(ck_cuda_tr *t, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(t, fmt, ap);
    va_end(ap);
    return status;
}

/* The same, and the transport is out of step with its peers from now on. */
static int tr_break(ck_cuda_tr *t, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int tr_break(ck_cuda_tr *t, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(t, fmt, ap);
    va_end(ap);
    if (!t->broken) snprintf(t->first, sizeof t->first, "%s", t->err);
    t->broken = 1;
    return status;
}

/* Fail fast once broken. */
static int dead(ck_cuda_tr *t)
{
    snprintf(t->err, sizeof t->err, "rank %d: the transport is unusable after an earlier failure (%.300s)",
             t->rank, t->first);
    return CK_ERR_TRANSPORT;
}

static int cuda_fail(ck_cuda_tr *t, cudaError_t e, const char *what)
{
    return tr_break(t, CK_ERR_TRANSPORT, "%s: %s", what, cudaGetErrorString(e));
}
/* CUDA calls inside an exchange or an algorithm: a failure breaks the transport. */
#define CU(t, call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return cuda_fail(t, e_, #call); } while (0)
/* CUDA calls of the program's own copies (upload, download): only reported. */
#define CU_REPORT(t, call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) \
        return tr_fail(t, CK_ERR_TRANSPORT, "%s: %s", #call, cudaGetErrorString(e_)); } while (0)

static int mpi_fail(ck_cuda_tr *t, const char *what)
{
    return tr_break(t, CK_ERR_TRANSPORT, "%s failed", what);
}

/* ------------------------------------------------------------ accessors */

cudaStream_t ck_cuda_tr_stream(void *self) { return ((ck_cuda_tr *)self)->stream; }
int ck_cuda_tr_device(void *self) { return ((ck_cuda_tr *)self)->dev; }
const char *ck_cuda_tr_pci_id(void *self, int q)
{
    ck_cuda_tr *t = self;
    return q >= 0 && q < t->size ? t->pci + (size_t)q * 32 : NULL;
}
int ck_cuda_tr_use(void *self)
{
    ck_cuda_tr *t = self;
    CU_REPORT(t, cudaSetDevice(t->dev));
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ the stream, bounded */

static int stream_ready(void *arg)
{
    ck_cuda_tr *t = arg;
    cudaError_t e = cudaStreamQuery(t->stream);
    if (e == cudaSuccess) return 1;
    if (e == cudaErrorNotReady) return 0;
    t->last = e;
    return -1;
}

/* Wait until the stream has run everything queued, at most timeout_s: a
 * copy waiting on a peer's event that never comes is a hang like any other. */
static int drain(ck_cuda_tr *t, const char *why)
{
    double waited = 0;
    int r = ck_poll_bounded(stream_ready, t, t->timeout_s, &waited);
    if (r == 1) return CK_SUCCESS;
    if (r == 0)
        return tr_break(t, CK_ERR_TIMEOUT, "watchdog: the device stream did not finish within %.1f s (%s): "
                        "a copy or kernel is waiting on a peer that is stuck or never made the matching call",
                        waited, why);
    return cuda_fail(t, t->last, why);
}

/* ------------------------------------------------------------ peers */

static int open_peer(ck_cuda_tr *t, int q)
{
    peer *pe = &t->peers[q];
    CU(t, cudaSetDevice(t->dev));   /* handles open, and copies queue, in this device's context */
    if (pe->opened) return CK_SUCCESS;
    CU(t, cudaIpcOpenMemHandle((void **)&pe->stage, pe->stage_h, cudaIpcMemLazyEnablePeerAccess));
    for (int k = 0; k < NSLOT; k++) {
        CU(t, cudaIpcOpenEventHandle(&pe->fill[k], pe->fill_h[k]));
        CU(t, cudaIpcOpenEventHandle(&pe->drain[k], pe->drain_h[k]));
    }
    pe->opened = 1;
    return CK_SUCCESS;
}

/* My slot k of ring s (where rank s writes to me). */
static char *my_slot(ck_cuda_tr *t, int s, int k) { return t->stage + ((size_t)s * NSLOT + (size_t)k) * SLOT; }
/* Slot k of my ring in peer d's staging area. */
static char *peer_slot(ck_cuda_tr *t, int d, int k) { return t->peers[d].stage + ((size_t)t->rank * NSLOT + (size_t)k) * SLOT; }

/* ------------------------------------------------------------ control messages */

static int send_ctl(ck_cuda_tr *t, MPI_Comm comm, int peer_rank, int tag, int64_t a, int64_t b, int64_t c)
{
    ctl_send *m = t->spare;
    if (m) t->spare = m->next;
    else if (!(m = malloc(sizeof *m))) return tr_break(t, CK_ERR_NOMEM, "out of host memory for a control message");
    m->msg[0] = a; m->msg[1] = b; m->msg[2] = c;
    if (MPI_Isend(m->msg, 3, MPI_INT64_T, peer_rank, tag, comm, &m->rq) != MPI_SUCCESS) {
        m->next = t->spare; t->spare = m;
        return mpi_fail(t, "MPI_Isend of a control message");
    }
    m->next = t->busy;
    t->busy = m;
    return CK_SUCCESS;
}

static int reap_ctl(ck_cuda_tr *t)
{
    for (ctl_send **pp = &t->busy; *pp;) {
        int done = 0;
        if (MPI_Test(&(*pp)->rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return mpi_fail(t, "MPI_Test of a control message");
        if (done) { ctl_send *m = *pp; *pp = m->next; m->next = t->spare; t->spare = m; }
        else pp = &(*pp)->next;
    }
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ requests */

static size_t chunk_len(const op *o, size_t j) { size_t off = j * SLOT; return o->bytes - off < SLOT ? o->bytes - off : SLOT; }
/* Control messages o has taken: grants (send) or fills (recv). */
static size_t ctl_done(const op *o) { return o->is_send ? o->nsent : o->slots.nfill; }

/* Is o the oldest request of its (direction, peer, tag) still expecting
 * control messages (by_grants = 0) or, for receives, grants (1)? */
static int oldest(const op *o, int by_grants)
{
    for (const op *e = o->prev; e; e = e->prev)
        if (e->is_send == o->is_send && e->peer == o->peer && e->tag == o->tag &&
            (by_grants ? e->slots.ngrant : ctl_done(e)) < e->nchunks) return 0;
    return 1;
}

static op *op_of(const ck_req *r) { op *o; memcpy(&o, r->impl, sizeof o); return o; }
static void set_op(ck_req *r, op *o) { memcpy(r->impl, &o, sizeof o); }

static void unlink_op(ck_cuda_tr *t, op *o)
{
    if (o->prev) o->prev->next = o->next; else t->head = o->next;
    if (o->next) o->next->prev = o->prev; else t->tail = o->prev;
}

/* Let go of a request: its control receive (if posted) is cancelled and
 * completed first, so MPI no longer writes into o->msg, then o is freed. */
static void drop(ck_cuda_tr *t, op *o)
{
    if (o->posted) {
        MPI_Cancel(&o->rq);
        MPI_Wait(&o->rq, MPI_STATUS_IGNORE);   /* returns at once: cancelled, or it had already arrived */
        o->posted = 0;
    }
    unlink_op(t, o);
    free(o);
}

static int op_fail(ck_cuda_tr *t, op *o, const char *what, long long a, long long b)
{
    char detail[160];
    snprintf(detail, sizeof detail, what, a, b);
    o->failed = 1;
    /* the control streams are out of step from here on */
    return tr_break(t, CK_SUCCESS, "%s (%s rank %d, tag %d)", detail, o->is_send ? "send to" : "recv from",
                    o->peer, o->tag);
}

/* ------------------------------------------------------------ progress */

/* A GRANT arrived for the send's next chunk: queue the copy into the peer. */
static int on_grant(ck_cuda_tr *t, op *o)
{
    const size_t j = o->nsent;
    const int k = (int)o->msg[0];
    if (o->msg[1] != (int64_t)o->bytes) {
        /* Tell the receiver too (its check is on the size in a FILL). */
        send_ctl(t, t->fill_comm, o->peer, o->tag, -1, 0, (int64_t)o->bytes);
        return op_fail(t, o, "message size mismatch: sending %lld B, the receive is %lld B",
                       (long long)o->bytes, (long long)o->msg[1]);
    }
    const size_t len = o->bytes ? chunk_len(o, j) : 0;
    if (len ? (k < 0 || k >= NSLOT) : k != -1)
        return op_fail(t, o, "bad slot %lld in the grant for chunk %lld", (long long)k, (long long)j);
    if (len) {
        int rc = open_peer(t, o->peer);   /* also selects the device: any thread may drive progress */
        if (rc) return rc;
        CU(t, cudaStreamWaitEvent(t->stream, t->peers[o->peer].drain[k], 0));
        CU(t, cudaMemcpyAsync(peer_slot(t, o->peer, k), o->buf + j * SLOT, len, cudaMemcpyDefault, t->stream));
        CU(t, cudaEventRecord(t->peers[o->peer].my_fill[k], t->stream));
    }
    o->nsent++;
    return send_ctl(t, t->fill_comm, o->peer, o->tag, k, (int64_t)len, (int64_t)o->bytes);
}

/* A FILL arrived for the receive's next chunk: queue the copy out of my slot. */
static int on_fill(ck_cuda_tr *t, op *o)
{
    const size_t j = o->slots.nfill;
    const int k = (int)o->msg[0];
    const size_t len = o->bytes ? chunk_len(o, j) : 0;
    peer *pe = &t->peers[o->peer];
    if (o->msg[2] != (int64_t)o->bytes)
        return op_fail(t, o, "message size mismatch: receiving %lld B, the sender sent %lld B",
                       (long long)o->bytes, (long long)o->msg[2]);
    if (o->msg[1] != (int64_t)len)
        return op_fail(t, o, "chunk out of step: expected %lld B, got %lld B", (long long)len, (long long)o->msg[1]);
    if (ck_slot_fill(&pe->pool, &o->slots, k))
        return op_fail(t, o, "a fill names slot %lld, which chunk %lld was not granted", (long long)k, (long long)j);
    if (len) {
        int rc = open_peer(t, o->peer);
        if (rc) return rc;
        /* Slot k is free in the ledger now; the sender's next copy into it
         * waits on my_drain[k], recorded here before any new grant of k goes out. */
        CU(t, cudaStreamWaitEvent(t->stream, pe->fill[k], 0));
        CU(t, cudaMemcpyAsync(o->buf + j * SLOT, my_slot(t, o->peer, k), len, cudaMemcpyDefault, t->stream));
        CU(t, cudaEventRecord(pe->my_drain[k], t->stream));
    }
    return CK_SUCCESS;
}

/* Take control messages for o while they are there. */
static int pump(ck_cuda_tr *t, op *o)
{
    while (!o->failed && ctl_done(o) < o->nchunks && oldest(o, 0)) {
        if (!o->posted) {
            MPI_Comm c = o->is_send ? t->grant_comm : t->fill_comm;
            if (MPI_Irecv(o->msg, 3, MPI_INT64_T, o->peer, o->tag, c, &o->rq) != MPI_SUCCESS)
                return mpi_fail(t, "MPI_Irecv of a control message");
            o->posted = 1;
        }
        int done = 0;
        if (MPI_Test(&o->rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return mpi_fail(t, "MPI_Test of a control message");
        if (!done) break;
        o->posted = 0;
        int rc = o->is_send ? on_grant(t, o) : on_fill(t, o);
        if (rc) return rc;
    }
    return CK_SUCCESS;
}

/* Hand out grants, one per eligible receive per round, oldest first, within
 * the caps of cuda_logic.h. */
static int grant(ck_cuda_tr *t)
{
    for (int any = 1; any;) {
        any = 0;
        for (op *o = t->head; o; o = o->next) {
            int k;
            if (o->is_send || o->failed || !oldest(o, 1)) continue;
            if (!ck_slot_grant(&t->peers[o->peer].pool, &o->slots, &k)) continue;
            int rc = send_ctl(t, t->grant_comm, o->peer, o->tag, k, (int64_t)o->bytes, 0);
            if (rc) return rc;
            any = 1;
        }
    }
    return CK_SUCCESS;
}

static int progress(ck_cuda_tr *t)
{
    int rc = reap_ctl(t);
    if (!rc) rc = grant(t);
    for (op *o = t->head; o && !rc; o = o->next) rc = pump(t, o);
    if (!rc) rc = grant(t);   /* slots freed by fills just handled */
    return rc;
}

static int post(ck_cuda_tr *t, void *buf, size_t bytes, int peer_rank, int tag, ck_req *r, int is_send)
{
    if (t->broken) return dead(t);
    if (tag < 0 || tag > t->tag_ub)
        return tr_fail(t, CK_ERR_INVALID_ARG, "tag %d is outside 0..%d (MPI_TAG_UB)", tag, t->tag_ub);
    op *o = calloc(1, sizeof *o);
    if (!o) return tr_fail(t, CK_ERR_NOMEM, "out of host memory for a request");
    o->is_send = is_send; o->peer = peer_rank; o->tag = tag;
    o->buf = buf; o->bytes = bytes;
    o->nchunks = ck_slot_nchunks(bytes);
    ck_slot_req_init(&o->slots, bytes);
    o->prev = t->tail;
    if (t->tail) t->tail->next = o; else t->head = o;
    t->tail = o;
    int rc = progress(t);
    if (rc) { drop(t, o); return rc; }
    set_op(r, o);
    return CK_SUCCESS;
}

static int cu_isend(void *self, const void *buf, size_t bytes, int peer_rank, int tag, ck_req *r)
{
    return post(self, (void *)buf, bytes, peer_rank, tag, r, 1);
}

static int cu_irecv(void *self, void *buf, size_t bytes, int peer_rank, int tag, ck_req *r)
{
    return post(self, buf, bytes, peer_rank, tag, r, 0);
}

/* On failure (this request's, another's, or an earlier one) the request is
 * dropped here, control receive cancelled first, and r forgets it, so a
 * cancel that follows finds nothing to free twice. */
static int cu_test(void *self, ck_req *r, int *done)
{
    ck_cuda_tr *t = self;
    op *o = op_of(r);
    *done = 0;
    if (!o) return dead(t);
    int rc = t->broken ? dead(t) : progress(t);
    if (!rc && o->failed) rc = CK_ERR_TRANSPORT;   /* t->err has the detail (op_fail) */
    if (rc) {
        drop(t, o);
        set_op(r, NULL);
        return rc;
    }
    if (ctl_done(o) == o->nchunks) {
        drop(t, o);
        set_op(r, NULL);
        *done = 1;
    }
    return CK_SUCCESS;
}

/* After a watchdog timeout, or a failure of another request in the same
 * wait: drop the request. Its grants and fills may still be in flight, so
 * the transport refuses further messages. */
static void cu_cancel(void *self, ck_req *r)
{
    ck_cuda_tr *t = self;
    op *o = op_of(r);
    if (!o) return;
    drop(t, o);
    set_op(r, NULL);
    if (!t->broken) tr_break(t, CK_SUCCESS, "a %s %s rank %d (tag %d) was abandoned half-way",
                             r->kind == CK_EV_SEND ? "send" : "receive", r->kind == CK_EV_SEND ? "to" : "from",
                             r->peer, r->tag);
}

/* ------------------------------------------------------------ local work */

static int cu_reduce(void *self, void *dst, const void *a, const void *b, size_t n, ck_dtype dt, ck_op op_)
{
    ck_cuda_tr *t = self;
    if (t->broken) return dead(t);
    if ((unsigned)dt >= CK_NUM_DTYPES || (unsigned)op_ >= CK_AVG)
        return tr_fail(t, CK_ERR_INVALID_ARG, "reduce: bad dtype %d or op %d", (int)dt, (int)op_);
    CU(t, cudaSetDevice(t->dev));   /* a kernel launches on the current device */
    CU(t, ck_cuda_reduce(dst, a, b, n, dt, op_, t->stream));
    return CK_SUCCESS;
}

/* avg's division runs after finish, so it waits for the stream itself. */
static int cu_divide(void *self, void *buf, size_t n, ck_dtype dt, int divisor)
{
    ck_cuda_tr *t = self;
    if (t->broken) return dead(t);
    if (divisor <= 0 || !ck_dtype_is_float(dt))
        return tr_fail(t, CK_ERR_INVALID_ARG, "divide: by %d in %s", divisor, ck_dtype_name(dt));
    CU(t, cudaSetDevice(t->dev));
    CU(t, ck_cuda_divide(buf, n, dt, divisor, t->stream));
    return drain(t, "avg's division");
}

static int cu_copy(void *self, void *dst, const void *src, size_t bytes)
{
    ck_cuda_tr *t = self;
    if (t->broken) return dead(t);
    if (!bytes || dst == src) return CK_SUCCESS;
    CU(t, cudaSetDevice(t->dev));
    const char *d = dst, *s = src;
    if (d < s + bytes && s < d + bytes) {
        /* Overlap (memmove semantics): cudaMemcpy does not allow it, go through a temporary. */
        void *tmp;
        CU(t, cudaMallocAsync(&tmp, bytes, t->stream));
        CU(t, cudaMemcpyAsync(tmp, src, bytes, cudaMemcpyDefault, t->stream));
        CU(t, cudaMemcpyAsync(dst, tmp, bytes, cudaMemcpyDefault, t->stream));
        CU(t, cudaFreeAsync(tmp, t->stream));
        return CK_SUCCESS;
    }
    CU(t, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, t->stream));
    return CK_SUCCESS;
}

/* The program's own copies: they work on a broken transport too (to look at
 * what arrived), and a CUDA error of the copy itself (a bad pointer) does
 * not break it; a stream that never drains does. */
static int cu_upload(void *self, void *dst, const void *host_src, size_t bytes)
{
    ck_cuda_tr *t = self;
    CU_REPORT(t, cudaSetDevice(t->dev));
    CU_REPORT(t, cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, t->stream));
    return drain(t, "upload");
}

static int cu_download(void *self, void *host_dst, const void *src, size_t bytes)
{
    ck_cuda_tr *t = self;
    CU_REPORT(t, cudaSetDevice(t->dev));
    CU_REPORT(t, cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, t->stream));
    return drain(t, "download");
}

static void *cu_alloc(void *self, size_t bytes)
{
    ck_cuda_tr *t = self;
    void *p = NULL;
    if (cudaSetDevice(t->dev) != cudaSuccess) return NULL;
    if (cudaMalloc(&p, ROUND_2M(bytes ? bytes : 1)) != cudaSuccess) return NULL;
    return p;
}

/* Work queued on the stream may still use p: wait for it first. If it does
 * not finish in time, leak p rather than free memory a copy still writes. */
static void cu_free(void *self, void *p)
{
    ck_cuda_tr *t = self;
    if (!p) return;
    cudaSetDevice(t->dev);
    if (drain(t, "freeing a buffer") == CK_SUCCESS) cudaFree(p);
}

static int cu_finish(void *self)
{
    ck_cuda_tr *t = self;
    if (t->broken) return dead(t);
    CU(t, cudaSetDevice(t->dev));
    return drain(t, "waiting for the queued copies and kernels");
}

static void cu_set_timeout(void *self, double timeout_s) { ((ck_cuda_tr *)self)->timeout_s = timeout_s; }
static const char *cu_error(void *self) { return ((ck_cuda_tr *)self)->err; }

/* ------------------------------------------------------------ lifecycle */

static void cu_destroy(void *self)
{
    ck_cuda_tr *t = self;
    if (!t) return;
    cudaSetDevice(t->dev);
    /* A copy still queued may write into a peer's staging area or read from
     * one: only if the stream drains are the mappings closed and memory freed. */
    int idle = !t->stream || drain(t, "destroying the communicator") == CK_SUCCESS;
    while (t->head) drop(t, t->head);
    for (ctl_send *m = t->busy, *n; m; m = n) {
        n = m->next;
        if (!t->broken) { MPI_Wait(&m->rq, MPI_STATUS_IGNORE); free(m); continue; }
        /* The peer may never receive it, and a send cannot be reliably
         * cancelled: let MPI finish it whenever, and leave the 40 bytes. */
        MPI_Request_free(&m->rq);
    }
    for (ctl_send *m = t->spare, *n; m; m = n) { n = m->next; free(m); }
    /* Close what I opened of the peers' memory before anyone frees it. */
    for (int q = 0; idle && t->peers && q < t->size; q++) {
        peer *pe = &t->peers[q];
        if (!pe->opened) continue;
        cudaIpcCloseMemHandle(pe->stage);
        for (int k = 0; k < NSLOT; k++) { cudaEventDestroy(pe->fill[k]); cudaEventDestroy(pe->drain[k]); }
    }
    if (t->grant_comm != MPI_COMM_NULL) MPI_Barrier(t->grant_comm);
    for (int q = 0; idle && t->peers && q < t->size; q++)
        for (int k = 0; k < NSLOT; k++) {
            if (t->peers[q].my_fill[k]) cudaEventDestroy(t->peers[q].my_fill[k]);
            if (t->peers[q].my_drain[k]) cudaEventDestroy(t->peers[q].my_drain[k]);
        }
    if (idle && t->stage) cudaFree(t->stage);
    if (idle && t->stream) cudaStreamDestroy(t->stream);
    free(t->peers);
    free(t->pci);
    if (t->grant_comm != MPI_COMM_NULL) MPI_Comm_free(&t->grant_comm);
    if (t->fill_comm != MPI_COMM_NULL) MPI_Comm_free(&t->fill_comm);
    free(t);
}

/* Local checks: device, IPC support, one node. Returns a status and a reason. */
static int local_setup(ck_cuda_tr *t, const char **why)
{
    int ndev = 0, lrank = 0, lsize = 0, v = 0;
    MPI_Comm local;
    if (MPI_Comm_split_type(t->comm, MPI_COMM_TYPE_SHARED, t->rank, MPI_INFO_NULL, &local) != MPI_SUCCESS) {
        *why = "MPI_Comm_split_type failed";
        return CK_ERR_TRANSPORT;
    }
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    MPI_Comm_free(&local);
    if (lsize != t->size) { *why = "CUDA IPC needs every rank on one node"; return CK_ERR_UNSUPPORTED; }
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        cudaGetLastError();
        *why = "no CUDA device";
        return CK_ERR_UNSUPPORTED;
    }
    t->dev = lrank % ndev;
    if (cudaSetDevice(t->dev) != cudaSuccess) { *why = "cudaSetDevice failed"; return CK_ERR_TRANSPORT; }
    if (cudaDeviceGetAttribute(&v, cudaDevAttrIpcEventSupport, t->dev) == cudaSuccess && !v) {
        *why = "the device does not support IPC events";
        return CK_ERR_UNSUPPORTED;
    }
    if (cudaStreamCreate(&t->stream) != cudaSuccess) { *why = "cudaStreamCreate failed"; return CK_ERR_TRANSPORT; }
    if (cudaDeviceGetPCIBusId(t->pci + (size_t)t->rank * 32, 32, t->dev) != cudaSuccess) {
        *why = "cudaDeviceGetPCIBusId failed";
        return CK_ERR_TRANSPORT;
    }
    if (t->size > 1) {
        size_t bytes = (size_t)t->size * NSLOT * SLOT;
        if (cudaMalloc((void **)&t->stage, ROUND_2M(bytes)) != cudaSuccess) { *why = "staging cudaMalloc failed"; return CK_ERR_NOMEM; }
    }
    for (int q = 0; q < t->size; q++) {
        if (q == t->rank) continue;
        ck_slot_pool_init(&t->peers[q].pool);
        for (int k = 0; k < NSLOT; k++)
            if (cudaEventCreateWithFlags(&t->peers[q].my_fill[k], cudaEventInterprocess | cudaEventDisableTiming) != cudaSuccess ||
                cudaEventCreateWithFlags(&t->peers[q].my_drain[k], cudaEventInterprocess | cudaEventDisableTiming) != cudaSuccess) {
                *why = "cudaEventCreateWithFlags(interprocess) failed";
                return CK_ERR_TRANSPORT;
            }
    }
    return CK_SUCCESS;
}

/* Every pair of ranks on different GPUs must reach each other's memory.
 * Gathers the PCI ids, then each rank's row of the access matrix; every rank
 * finds the same first bad pair, so they all fail together. */
static int check_peer_access(ck_cuda_tr *t)
{
    const int p = t->size;
    unsigned char *row = malloc((size_t)p), *ok = malloc((size_t)p * (size_t)p);
    int bad = !row || !ok, anybad = 0, a, b;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t->pci, 32, MPI_CHAR, t->comm);
    for (int q = 0; !bad && q < p; q++) {
        int d = -1, can = 1;
        const char *id = t->pci + (size_t)q * 32;
        if (q != t->rank && strcmp(id, t->pci + (size_t)t->rank * 32) && cudaDeviceGetByPCIBusId(&d, id) == cudaSuccess &&
            d != t->dev && cudaDeviceCanAccessPeer(&can, t->dev, d) != cudaSuccess)
            can = 0;
        cudaGetLastError();   /* a GPU not visible here is not an error (see the top) */
        row[q] = (unsigned char)(can != 0);
    }
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, t->comm);
    if (anybad) {
        free(row); free(ok);
        return tr_fail(t, CK_ERR_NOMEM, "out of host memory");
    }
    MPI_Allgather(row, p, MPI_UNSIGNED_CHAR, ok, p, MPI_UNSIGNED_CHAR, t->comm);
    int rc = CK_SUCCESS;
    if (ck_peer_first_unreachable(ok, p, &a, &b)) {
        rc = CK_ERR_UNSUPPORTED;
        snprintf(t->err, sizeof t->err, "rank %d: ranks %d and %d are on GPUs %.32s and %.32s, which cannot access "
                 "each other's memory (cudaDeviceCanAccessPeer is 0): CUDA IPC needs peer access between the GPUs "
                 "of every pair of ranks", t->rank, a, b, t->pci + (size_t)a * 32, t->pci + (size_t)b * 32);
        if (t->rank == a) fprintf(stderr, "collkit cuda-ipc: %s\n", t->err);
    }
    free(row); free(ok);
    return rc;
}

/* Exchange the staging handle (all-gather) and the event handles (all-to-all). */
static int exchange(ck_cuda_tr *t)
{
    const int p = t->size;
    const size_t eh = sizeof(cudaIpcEventHandle_t) * NSLOT;
    cudaIpcMemHandle_t mine, *stages = calloc((size_t)p, sizeof *stages);
    char *out_fill = calloc((size_t)p, eh), *out_drain = calloc((size_t)p, eh);
    char *in_fill = calloc((size_t)p, eh), *in_drain = calloc((size_t)p, eh);
    int bad = !stages || !out_fill || !out_drain || !in_fill || !in_drain, anybad = 0;
    memset(&mine, 0, sizeof mine);
    if (!bad && p > 1 && cudaIpcGetMemHandle(&mine, t->stage) != cudaSuccess) bad = 1;
    for (int q = 0; q < p && !bad; q++) {
        if (q == t->rank) continue;
        for (int k = 0; k < NSLOT && !bad; k++)
            if (cudaIpcGetEventHandle((cudaIpcEventHandle_t *)(out_fill + q * eh) + k, t->peers[q].my_fill[k]) != cudaSuccess ||
                cudaIpcGetEventHandle((cudaIpcEventHandle_t *)(out_drain + q * eh) + k, t->peers[q].my_drain[k]) != cudaSuccess)
                bad = 1;
    }
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, t->comm);
    if (!anybad) {
        MPI_Allgather(&mine, sizeof mine, MPI_BYTE, stages, sizeof mine, MPI_BYTE, t->comm);
        MPI_Alltoall(out_fill, (int)eh, MPI_BYTE, in_fill, (int)eh, MPI_BYTE, t->comm);
        MPI_Alltoall(out_drain, (int)eh, MPI_BYTE, in_drain, (int)eh, MPI_BYTE, t->comm);
        for (int q = 0; q < p; q++) {
            peer *pe = &t->peers[q];
            pe->stage_h = stages[q];
            /* From q I got its fill events for q -> me and its drain events for me -> q. */
            memcpy(pe->fill_h, in_fill + q * eh, eh);
            memcpy(pe->drain_h, in_drain + q * eh, eh);
        }
    }
    free(stages); free(out_fill); free(out_drain); free(in_fill); free(in_drain);
    if (anybad) return tr_fail(t, CK_ERR_TRANSPORT, "%s", bad ? "exporting IPC handles failed" : "another rank failed to export its IPC handles");
    return CK_SUCCESS;
}

int ck_transport_cuda_create(MPI_Comm comm, double timeout_s, ck_transport *out)
{
    ck_cuda_tr *t = calloc(1, sizeof *t);
    int rc = CK_SUCCESS, worst = 0, flag = 0, *ub = NULL, rank = 0;
    const char *why = "out of host memory";
    MPI_Comm_rank(comm, &rank);
    if (t) {
        t->comm = comm;
        t->rank = rank;
        t->timeout_s = timeout_s;
        t->grant_comm = t->fill_comm = MPI_COMM_NULL;
        MPI_Comm_size(comm, &t->size);
        t->peers = calloc((size_t)t->size, sizeof *t->peers);
        t->pci = calloc((size_t)t->size, 32);
        rc = (t->peers && t->pci) ? local_setup(t, &why) : CK_ERR_NOMEM;
    } else {
        rc = CK_ERR_NOMEM;
    }
    /* Agree before any exchange: one rank without a device fails them all. */
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (rc) fprintf(stderr, "collkit cuda-ipc: rank %d: %s\n", rank, why);
    if (!rc && worst) rc = worst;
    if (!rc) rc = check_peer_access(t);
    if (!rc) rc = exchange(t);
    if (!rc && (MPI_Comm_dup(comm, &t->grant_comm) != MPI_SUCCESS || MPI_Comm_dup(comm, &t->fill_comm) != MPI_SUCCESS))
        rc = CK_ERR_TRANSPORT;
    if (rc) {
        if (t) {
            /* Nothing was opened yet; skip destroy's barrier unless every rank reaches it. */
            if (t->grant_comm != MPI_COMM_NULL) MPI_Comm_free(&t->grant_comm);
            if (t->fill_comm != MPI_COMM_NULL) MPI_Comm_free(&t->fill_comm);
            cu_destroy(t);
        }
        return rc;
    }
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
    t->tag_ub = flag && ub ? *ub : 32767;
    *out = (ck_transport){
        .name = "cuda-ipc", .mem = CK_MEM_CUDA, .self = t,
        .isend = cu_isend, .irecv = cu_irecv, .test = cu_test, .cancel = cu_cancel,
        .reduce = cu_reduce, .divide = cu_divide, .copy = cu_copy,
        .upload = cu_upload, .download = cu_download,
        .alloc = cu_alloc, .free = cu_free, .finish = cu_finish, .destroy = cu_destroy,
        .set_timeout = cu_set_timeout, .error = cu_error,
    };
    return CK_SUCCESS;
}
