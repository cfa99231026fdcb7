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
 * The protocol (matching, grants, fills, their checks and the failure rules)
 * is protocol.h's engine, shared with the shm transport; this file plugs in
 * the CUDA parts. One message of n bytes from s to d, tag t (chunks of at
 * most SLOT bytes; a 0-byte message is one empty chunk that uses no slot):
 *
 *   rank s (sender)                          rank d (receiver)
 *   isend: queue op                          irecv: queue op
 *                                    <-----  GRANT{k}   (k free; for each chunk)
 *   put:  stream: wait drain[k]              (the last copy-out of slot k)
 *         stream: copy chunk -> d.slot[s][k]
 *         stream: record fill[k]
 *   FILL{k, len} ----------------------->
 *                                            get:  stream: wait fill[k]
 *                                                  stream: copy d.slot[s][k] -> buf
 *                                                  stream: record drain[k]; k is free again
 *   send done when every chunk is queued     recv done when every chunk is queued
 *
 * Why it is correct (the CUDA part; protocol.h has the matching and the caps)
 *   - Each event is recorded by its owner before the control message that
 *     names it is sent, and waited on by the other side after that message
 *     arrives; the owner records it again only after the other side's answer
 *     (the next GRANT or FILL for that slot) — so every wait sees exactly the
 *     record it is meant to. No host thread ever blocks on the GPU, and every
 *     GPU wait is on a record already queued, so the GPUs cannot deadlock.
 *   - "done" means queued on the transport's stream. ck_reduce_local, ck_copy
 *     and the next send run on that same stream, so they see the data; finish
 *     (after each all-reduce), download and free wait for the stream.
 *   - Control messages travel as MPI messages of 3 words on two private
 *     duplicates of the communicator (one for GRANTs, one for FILLs), with
 *     the user's tag as MPI tag: MPI keeps messages of one (source, tag) in
 *     order, which is the order the engine needs.
 *
 * Streams. Everything is ordered on the transport's own stream only. Device
 * buffers that the program wrote on another stream (its compute stream, a
 * library's) must be synchronised with it before they are handed to
 * ck_isend / ck_allreduce, e.g. cudaStreamSynchronize(theirs) or an event
 * the program waits on; likewise results are read after ck_allreduce returns
 * (or after ck_sync), not by work queued on another stream before that.
 *
 * Failures. As protocol.h says: any failure after a control message was
 * sent (a CUDA error, an MPI error, a size mismatch, a request abandoned after
 * a timeout) marks the transport broken, and every later call fails at once
 * with the first failure's text. A request is never freed while its control
 * receive is posted: it is cancelled and completed first (ctl_forget), since
 * MPI would otherwise write into freed memory.
 *
 * Watchdog. Waiting for the stream (finish, download, free, destroy) polls
 * cudaStreamQuery against the communicator's timeout (handed in at creation
 * and before each call by set_timeout): a copy that waits on a peer's event
 * forever ends in CK_ERR_TIMEOUT with a message, like a ck_wait would. Each
 * "not ready" answer is cleared from the thread's last error at once
 * (ck_cu_poll), and after one timeout later waits poll once instead of
 * waiting the whole timeout again (ck_cu_watch_wait).
 *
 * Teardown. A rank frees its staging area only when every rank's stream has
 * drained (agreed at destroy): a peer's copy still queued after a timeout may
 * write into it. Otherwise it leaks it (ck_cu_teardown).
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
#include "protocol.h"

#define SLOT  CK_CUDA_SLOT
#define NSLOT CK_CUDA_NSLOT
/* cuda_logic.h speaks of these errors as plain ints. */
_Static_assert(CK_CU_SUCCESS == (int)cudaSuccess && CK_CU_NOT_READY == (int)cudaErrorNotReady &&
               CK_CU_NO_DEVICE == (int)cudaErrorNoDevice && CK_CU_NO_DRIVER == (int)cudaErrorInsufficientDriver,
               "cuda_logic.h's error codes are cudaError_t's");

#define ROUND_2M(x) (((x) + ((size_t)2 << 20) - 1) / ((size_t)2 << 20) * ((size_t)2 << 20))

/* The engine's per-request state for this transport: the posted control receive. */
typedef struct {
    MPI_Request rq;
    int         posted;        /* an MPI_Irecv for the next control message is out, into o->msg */
} ctl_recv;
_Static_assert(sizeof(ctl_recv) <= sizeof(((ck_proto_op *)0)->be), "ck_proto_op.be too small");
static ctl_recv *ctl_of(ck_proto_op *o) { return (ctl_recv *)(void *)&o->be; }

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
} peer;

typedef struct ck_cuda_tr {
    MPI_Comm     comm, grant_comm, fill_comm;
    int          rank, size, dev;
    double       timeout_s;       /* the communicator's watchdog bound (<= 0: none) */
    cudaStream_t stream;
    char        *stage;           /* mine: ring s at s * NSLOT * SLOT */
    peer        *peers;
    ck_proto     pr;              /* the engine: requests, grants, fills, failures */
    ctl_send    *busy, *spare;
    char        *pci;             /* size * 32 chars */
    cudaError_t  last;            /* the CUDA error a stream poll saw */
    ck_cu_watch  watch;           /* the stream timed out once: later waits poll once */
} ck_cuda_tr;

/* ------------------------------------------------------------ failures */

/* Failures are the engine's (protocol.c): the text goes to the communicator's
 * message (through error()) and to stderr, where the other ranks' messages land too. */
#define tr_fail(t, ...)  ck_proto_fail(&(t)->pr, __VA_ARGS__)
/* The same, and the transport is out of step with its peers from now on. */
#define tr_break(t, ...) ck_proto_break(&(t)->pr, __VA_ARGS__)
/* Fail fast once broken. */
static int dead(ck_cuda_tr *t) { return ck_proto_dead(&t->pr); }

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

static int query_stream(void *arg) { return (int)cudaStreamQuery(((ck_cuda_tr *)arg)->stream); }
static int clear_last(void) { return (int)cudaGetLastError(); }

static int stream_ready(void *arg)
{
    ck_cuda_tr *t = arg;
    int e = 0, r = ck_cu_poll(query_stream, clear_last, t, &e);
    if (r < 0) t->last = (cudaError_t)e;
    return r;
}

int ck_cuda_tr_wait(void *self, double bound_s, double *waited)
{
    ck_cuda_tr *t = self;
    return ck_cu_watch_wait(&t->watch, stream_ready, t, bound_s, waited);
}

cudaError_t ck_cuda_tr_last(void *self) { return ((ck_cuda_tr *)self)->last; }

/* Wait until the stream has run everything queued, at most timeout_s: a
 * copy waiting on a peer's event that never comes is a hang like any other. */
static int drain(ck_cuda_tr *t, const char *why)
{
    double waited = 0;
    const int was_stuck = t->watch.stuck;
    int r = ck_cuda_tr_wait(t, t->timeout_s, &waited);
    if (r == 1) return CK_SUCCESS;
    if (r == 0 && was_stuck)
        return tr_break(t, CK_ERR_TIMEOUT, "watchdog: the device stream has not finished since an earlier wait "
                        "timed out (%s): a copy or kernel is still waiting on a peer", why);
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

static int send_ctl(void *self, int kind, int peer_rank, int tag, int64_t a, int64_t b, int64_t c)
{
    ck_cuda_tr *t = self;
    MPI_Comm comm = kind == CK_CTL_GRANT ? t->grant_comm : t->fill_comm;
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

static int reap_ctl(void *self)
{
    ck_cuda_tr *t = self;
    for (ctl_send **pp = &t->busy; *pp;) {
        int done = 0;
        if (MPI_Test(&(*pp)->rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return mpi_fail(t, "MPI_Test of a control message");
        if (done) { ctl_send *m = *pp; *pp = m->next; m->next = t->spare; t->spare = m; }
        else pp = &(*pp)->next;
    }
    return CK_SUCCESS;
}

/* The next GRANT (for a send) or FILL (for a receive) of o's (peer, tag):
 * one MPI receive posted at a time, into o->msg. */
static int take_ctl(void *self, int kind, ck_proto_op *o)
{
    ck_cuda_tr *t = self;
    ctl_recv *c = ctl_of(o);
    if (!c->posted) {
        MPI_Comm comm = kind == CK_CTL_GRANT ? t->grant_comm : t->fill_comm;
        if (MPI_Irecv(o->msg, 3, MPI_INT64_T, o->peer, o->tag, comm, &c->rq) != MPI_SUCCESS)
            return -mpi_fail(t, "MPI_Irecv of a control message");
        c->posted = 1;
    }
    int done = 0;
    if (MPI_Test(&c->rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -mpi_fail(t, "MPI_Test of a control message");
    if (!done) return 0;
    c->posted = 0;
    return 1;
}

/* Before o is freed: its control receive (if posted) is cancelled and
 * completed, so MPI no longer writes into o->msg. */
static void forget_ctl(void *self, ck_proto_op *o)
{
    (void)self;
    ctl_recv *c = ctl_of(o);
    if (c->posted) {
        MPI_Cancel(&c->rq);
        MPI_Wait(&c->rq, MPI_STATUS_IGNORE);   /* returns at once: cancelled, or it had already arrived */
        c->posted = 0;
    }
}

/* A GRANT for slot k of the peer's ring for me: queue the copy of the chunk into it. */
static int put_chunk(void *self, int peer_rank, int k, const void *src, size_t len)
{
    ck_cuda_tr *t = self;
    int rc = open_peer(t, peer_rank);   /* also selects the device: any thread may drive progress */
    if (rc) return rc;
    CU(t, cudaStreamWaitEvent(t->stream, t->peers[peer_rank].drain[k], 0));
    CU(t, cudaMemcpyAsync(peer_slot(t, peer_rank, k), src, len, cudaMemcpyDefault, t->stream));
    CU(t, cudaEventRecord(t->peers[peer_rank].my_fill[k], t->stream));
    return CK_SUCCESS;
}

/* A FILL for my slot k of the peer's ring: queue the copy out of it. */
static int get_chunk(void *self, int peer_rank, int k, void *dst, size_t len)
{
    ck_cuda_tr *t = self;
    peer *pe = &t->peers[peer_rank];
    int rc = open_peer(t, peer_rank);
    if (rc) return rc;
    /* Slot k is free in the ledger now; the sender's next copy into it
     * waits on my_drain[k], recorded here before any new grant of k goes out. */
    CU(t, cudaStreamWaitEvent(t->stream, pe->fill[k], 0));
    CU(t, cudaMemcpyAsync(dst, my_slot(t, peer_rank, k), len, cudaMemcpyDefault, t->stream));
    CU(t, cudaEventRecord(pe->my_drain[k], t->stream));
    return CK_SUCCESS;
}

static const ck_proto_ops cuda_ops = {
    .ctl_send = send_ctl, .ctl_take = take_ctl, .ctl_forget = forget_ctl, .ctl_progress = reap_ctl,
    .put = put_chunk, .get = get_chunk,
};

static int cu_isend(void *self, const void *buf, size_t bytes, int peer_rank, int tag, ck_req *r)
{
    return ck_proto_post(&((ck_cuda_tr *)self)->pr, 1, (void *)buf, bytes, peer_rank, tag, r);
}

static int cu_irecv(void *self, void *buf, size_t bytes, int peer_rank, int tag, ck_req *r)
{
    return ck_proto_post(&((ck_cuda_tr *)self)->pr, 0, buf, bytes, peer_rank, tag, r);
}

static int cu_test(void *self, ck_req *r, int *done) { return ck_proto_test(&((ck_cuda_tr *)self)->pr, r, done); }
static void cu_cancel(void *self, ck_req *r) { ck_proto_cancel(&((ck_cuda_tr *)self)->pr, r); }

/* ------------------------------------------------------------ local work */

static int cu_reduce(void *self, void *dst, const void *a, const void *b, size_t n, ck_dtype dt, ck_op op_)
{
    ck_cuda_tr *t = self;
    if (t->pr.broken) return dead(t);
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
    if (t->pr.broken) return dead(t);
    if (divisor <= 0 || !ck_dtype_is_float(dt))
        return tr_fail(t, CK_ERR_INVALID_ARG, "divide: by %d in %s", divisor, ck_dtype_name(dt));
    CU(t, cudaSetDevice(t->dev));
    CU(t, ck_cuda_divide(buf, n, dt, divisor, t->stream));
    return drain(t, "avg's division");
}

static int cu_copy(void *self, void *dst, const void *src, size_t bytes)
{
    ck_cuda_tr *t = self;
    if (t->pr.broken) return dead(t);
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
    if (t->pr.broken) return dead(t);
    CU(t, cudaSetDevice(t->dev));
    return drain(t, "waiting for the queued copies and kernels");
}

static void cu_set_timeout(void *self, double timeout_s) { ((ck_cuda_tr *)self)->timeout_s = timeout_s; }
static const char *cu_error(void *self) { return ((ck_cuda_tr *)self)->pr.err; }

/* ------------------------------------------------------------ lifecycle */

static void cu_destroy(void *self)
{
    ck_cuda_tr *t = self;
    if (!t) return;
    cudaSetDevice(t->dev);
    /* A copy still queued may write into a peer's staging area or read from
     * one: only if the stream drains are the mappings closed and memory freed. */
    int idle = !t->stream || drain(t, "destroying the communicator") == CK_SUCCESS, all_idle = idle;
    ck_proto_fini(&t->pr);   /* drops the requests, control receives cancelled first */
    for (ctl_send *m = t->busy, *n; m; m = n) {
        n = m->next;
        if (!t->pr.broken) { MPI_Wait(&m->rq, MPI_STATUS_IGNORE); free(m); continue; }
        /* The peer may never receive it, and a send cannot be reliably
         * cancelled: let MPI finish it whenever, and leave the 40 bytes. */
        MPI_Request_free(&m->rq);
    }
    for (ctl_send *m = t->spare, *n; m; m = n) { n = m->next; free(m); }
    /* Close what I opened of the peers' memory before anyone frees it; free
     * mine only if no peer's stream may still touch it. */
    const int tear = ck_cu_teardown(idle, 1);
    for (int q = 0; (tear & CK_TEAR_CLOSE) && t->peers && q < t->size; q++) {
        peer *pe = &t->peers[q];
        if (!pe->opened) continue;
        cudaIpcCloseMemHandle(pe->stage);
        for (int k = 0; k < NSLOT; k++) { cudaEventDestroy(pe->fill[k]); cudaEventDestroy(pe->drain[k]); }
    }
    if (t->grant_comm != MPI_COMM_NULL) MPI_Allreduce(&idle, &all_idle, 1, MPI_INT, MPI_MIN, t->grant_comm);
    const int freeing = ck_cu_teardown(idle, all_idle) & CK_TEAR_FREE;
    if (!all_idle && t->rank == 0)
        fprintf(stderr, "collkit cuda-ipc: a rank's device stream did not drain: the staging areas are left "
                "allocated until the process ends (a peer's copy may still use them)\n");
    for (int q = 0; freeing && t->peers && q < t->size; q++)
        for (int k = 0; k < NSLOT; k++) {
            if (t->peers[q].my_fill[k]) cudaEventDestroy(t->peers[q].my_fill[k]);
            if (t->peers[q].my_drain[k]) cudaEventDestroy(t->peers[q].my_drain[k]);
        }
    if (freeing && t->stage) cudaFree(t->stage);
    if (idle && t->stream) cudaStreamDestroy(t->stream);
    free(t->peers);
    free(t->pci);
    if (t->grant_comm != MPI_COMM_NULL) MPI_Comm_free(&t->grant_comm);
    if (t->fill_comm != MPI_COMM_NULL) MPI_Comm_free(&t->fill_comm);
    free(t);
}

/* Local checks: device, IPC support, one node. Returns a status and writes
 * the reason, with CUDA's own words for a CUDA failure (a GPU in
 * Exclusive_Process mode that a second rank cannot use says so here). */
static int setup_fail(char *why, size_t n, int rc, const char *what, cudaError_t e)
{
    if (e != cudaSuccess) snprintf(why, n, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    else snprintf(why, n, "%s", what);
    return rc;
}

static int local_setup(ck_cuda_tr *t, char *why, size_t n)
{
    int ndev = 0, lrank = 0, lsize = 0, v = 0, drv = 0;
    MPI_Comm local;
    cudaError_t e;
    if (MPI_Comm_split_type(t->comm, MPI_COMM_TYPE_SHARED, t->rank, MPI_INFO_NULL, &local) != MPI_SUCCESS)
        return setup_fail(why, n, CK_ERR_TRANSPORT, "MPI_Comm_split_type failed", cudaSuccess);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    MPI_Comm_free(&local);
    if (lsize != t->size) return setup_fail(why, n, CK_ERR_UNSUPPORTED, "CUDA IPC needs every rank on one node", cudaSuccess);
    e = cudaGetDeviceCount(&ndev);
    (void)cudaGetLastError();
    cudaDriverGetVersion(&drv);
    switch (ck_cu_probe_exit((int)e, ndev, drv)) {
    case 0: break;
    case CK_CU_SKIP: return setup_fail(why, n, CK_ERR_UNSUPPORTED, "no CUDA device", e);
    default: return setup_fail(why, n, CK_ERR_TRANSPORT, "cudaGetDeviceCount", e);
    }
    t->dev = lrank % ndev;
    if ((e = cudaSetDevice(t->dev)) != cudaSuccess) return setup_fail(why, n, CK_ERR_TRANSPORT, "cudaSetDevice", e);
    if (cudaDeviceGetAttribute(&v, cudaDevAttrIpcEventSupport, t->dev) == cudaSuccess && !v)
        return setup_fail(why, n, CK_ERR_UNSUPPORTED, "the device does not support IPC events", cudaSuccess);
    /* The first call that needs a context: where Exclusive_Process refuses a second process. */
    if ((e = cudaStreamCreate(&t->stream)) != cudaSuccess) {
        t->stream = NULL;
        return setup_fail(why, n, CK_ERR_TRANSPORT, "cudaStreamCreate (is the GPU in Exclusive_Process compute mode, "
                          "or used up by another process?)", e);
    }
    if ((e = cudaDeviceGetPCIBusId(t->pci + (size_t)t->rank * 32, 32, t->dev)) != cudaSuccess)
        return setup_fail(why, n, CK_ERR_TRANSPORT, "cudaDeviceGetPCIBusId", e);
    if (t->size > 1) {
        size_t bytes = (size_t)t->size * NSLOT * SLOT;
        if ((e = cudaMalloc((void **)&t->stage, ROUND_2M(bytes))) != cudaSuccess) {
            t->stage = NULL;
            return setup_fail(why, n, CK_ERR_NOMEM, "staging cudaMalloc", e);
        }
    }
    for (int q = 0; q < t->size; q++) {
        if (q == t->rank) continue;
        for (int k = 0; k < NSLOT; k++)
            if ((e = cudaEventCreateWithFlags(&t->peers[q].my_fill[k], cudaEventInterprocess | cudaEventDisableTiming)) != cudaSuccess ||
                (e = cudaEventCreateWithFlags(&t->peers[q].my_drain[k], cudaEventInterprocess | cudaEventDisableTiming)) != cudaSuccess)
                return setup_fail(why, n, CK_ERR_TRANSPORT, "cudaEventCreateWithFlags(interprocess)", e);
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
        snprintf(t->pr.err, sizeof t->pr.err, "rank %d: ranks %d and %d are on GPUs %.32s and %.32s, which cannot access "
                 "each other's memory (cudaDeviceCanAccessPeer is 0): CUDA IPC needs peer access between the GPUs "
                 "of every pair of ranks", t->rank, a, b, t->pci + (size_t)a * 32, t->pci + (size_t)b * 32);
        if (t->rank == a) fprintf(stderr, "collkit cuda-ipc: %s\n", t->pr.err);
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
    cudaError_t e = cudaSuccess;
    if (!bad && p > 1 && (e = cudaIpcGetMemHandle(&mine, t->stage)) != cudaSuccess) bad = 1;
    for (int q = 0; q < p && !bad; q++) {
        if (q == t->rank) continue;
        for (int k = 0; k < NSLOT && !bad; k++)
            if ((e = cudaIpcGetEventHandle((cudaIpcEventHandle_t *)(out_fill + q * eh) + k, t->peers[q].my_fill[k])) != cudaSuccess ||
                (e = cudaIpcGetEventHandle((cudaIpcEventHandle_t *)(out_drain + q * eh) + k, t->peers[q].my_drain[k])) != cudaSuccess)
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
    if (anybad)
        return tr_fail(t, CK_ERR_TRANSPORT, "%s%s", !bad ? "another rank failed to export its IPC handles"
                       : e != cudaSuccess ? "exporting IPC handles failed: " : "out of host memory",
                       bad && e != cudaSuccess ? cudaGetErrorString(e) : "");
    return CK_SUCCESS;
}

int ck_transport_cuda_create(MPI_Comm comm, double timeout_s, ck_transport *out)
{
    ck_cuda_tr *t = calloc(1, sizeof *t);
    int rc = CK_SUCCESS, worst = 0, flag = 0, *ub = NULL, rank = 0;
    char why[320] = "out of host memory";
    MPI_Comm_rank(comm, &rank);
    if (t) {
        t->comm = comm;
        t->rank = rank;
        t->timeout_s = timeout_s;
        t->grant_comm = t->fill_comm = MPI_COMM_NULL;
        MPI_Comm_size(comm, &t->size);
        t->peers = calloc((size_t)t->size, sizeof *t->peers);
        t->pci = calloc((size_t)t->size, 32);
        /* The engine first: it holds the failure text every later step may write. */
        rc = ck_proto_init(&t->pr, &cuda_ops, t, "cuda-ipc", rank, t->size, 32767, CK_CUDA_SLOT, CK_CUDA_NSLOT);
        if (!rc) rc = (t->peers && t->pci) ? local_setup(t, why, sizeof why) : CK_ERR_NOMEM;
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
    t->pr.tag_ub = flag && ub ? *ub : 32767;
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
