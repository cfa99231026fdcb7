/*
 * comm.c — the communicator: transport selection, the point-to-point layer that
 * algorithm files call (with byte counters, trace events and the watchdog), and
 * ck_allreduce, which validates a call across ranks before running an algorithm.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include "collkit_util.h"
#include "env.h"
#include "internal.h"
#include "cuda_logic.h"   /* ck_cu_aligned: the device buffers' alignment rule */
#include "cuda_plugin.h"

double ck_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0 sends its time, rank r answers with its own: r's clock minus the
 * midpoint of rank 0's send and receive, from the round trip with the
 * smallest delay (the least disturbed of a few). */
void ck_clock_offsets(MPI_Comm comm, double *off)
{
    enum { ROUNDS = 8 };
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (rank == 0) off[0] = 0;
    for (int r = 1; r < p; r++) {
        if (rank == 0) {
            double best = 1e300;
            for (int k = 0; k < ROUNDS; k++) {
                double ta = ck_now(), tr;
                MPI_Send(&ta, 1, MPI_DOUBLE, r, 77, comm);
                MPI_Recv(&tr, 1, MPI_DOUBLE, r, 78, comm, MPI_STATUS_IGNORE);
                double tb = ck_now();
                if (tb - ta < best) { best = tb - ta; off[r] = tr - 0.5 * (ta + tb); }
            }
        } else if (rank == r) {
            for (int k = 0; k < ROUNDS; k++) {
                double ta, tr;
                MPI_Recv(&ta, 1, MPI_DOUBLE, 0, 77, comm, MPI_STATUS_IGNORE);
                tr = ck_now();
                MPI_Send(&tr, 1, MPI_DOUBLE, 0, 78, comm);
            }
        }
    }
}

int ck_fail(ck_comm *comm, int status, const char *fmt, ...)
{
    if (comm) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(comm->errmsg, sizeof comm->errmsg, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* ------------------------------------------------------------ the transport */

/* The transport's own account of its last failure, as ": detail" (or ""),
 * to complete the communicator's message. */
static const char *tr_sep(const ck_comm *c)
{
    const char *d = c->tr.error ? c->tr.error(c->tr.self) : NULL;
    return d && *d ? ": " : "";
}
static const char *tr_detail(const ck_comm *c)
{
    const char *d = c->tr.error ? c->tr.error(c->tr.self) : NULL;
    return d && *d ? d : "";
}

/* Hand the transport the watchdog bound before a call that may block in it
 * (ck_config is mutable, so it is passed again every time). */
static void tr_arm(ck_comm *c)
{
    if (c->tr.set_timeout) c->tr.set_timeout(c->tr.self, c->cfg.timeout_s);
}

/* ------------------------------------------------------------ lifecycle */

static void config_defaults(ck_config *c, int rank)
{
    const char *s;
    c->chunk_bytes = 256 * 1024;
    c->timeout_s = 30.0;
    c->validate = 1;
#ifdef COLLKIT_SMPI
    /* Simulated (SimGrid SMPI): no watchdog by default. Its polling costs
     * simulated time (every MPI_Test is charged), and SimGrid reports a
     * deadlock by itself, naming every blocked rank. */
    c->timeout_s = 0;
#endif
    /* The same sizes and numbers the tools take ("64K", "2.5"); a value it
     * cannot use keeps the default and is named once, from rank 0. */
    char instead[64];
    uint64_t chunk;
    snprintf(instead, sizeof instead, "the chunk stays %zu B", c->chunk_bytes);
    if (ck_env_size("COLLKIT_CHUNK", 1, 1ull << 34, rank, instead, &chunk) == 0) c->chunk_bytes = (size_t)chunk;
    if (c->timeout_s > 0) snprintf(instead, sizeof instead, "the watchdog stays at %g s", c->timeout_s);
    else snprintf(instead, sizeof instead, "the watchdog stays off");
    ck_env_double("COLLKIT_TIMEOUT", 0, 1e6, rank, instead, &c->timeout_s);
    c->yield_wait = 0;
    if ((s = getenv("COLLKIT_WAIT"))) {
        if (!strcmp(s, "yield") || !strcmp(s, "spin")) c->yield_wait = !strcmp(s, "yield");
        else ck_env_reject("COLLKIT_WAIT", s, "want yield or spin", "waits spin", rank);
    }
}

/* The agreement of validate_across_ranks: NV values, each as (x, -x), in and out. */
enum { AGREE_NV = 6, AGREE_WORDS = 4 * AGREE_NV };

/* The communicator's own memory (not its MPI communicator or transport). */
static void comm_free(ck_comm *c)
{
    for (int i = 0; i < c->nagree_lost; i++) free(c->agree_lost[i]);
    free(c->agree_lost);
    free(c->agree);
    free(c->cfg_view);
    free(c);
}

int ck_comm_create(MPI_Comm mpi_comm, unsigned mem, ck_comm **out)
{
    int rc;
    if (!out) return CK_ERR_INVALID_ARG;
    *out = NULL;
    if (mem != CK_MEM_HOST && mem != CK_MEM_CUDA && mem != CK_MEM_SHM && mem != (CK_MEM_HOST | CK_MEM_SHM))
        return CK_ERR_INVALID_ARG;
    ck_comm *c = calloc(1, sizeof *c);
    if (!c) return CK_ERR_NOMEM;
    c->cfg_view = malloc(sizeof *c->cfg_view);
    c->agree = malloc(AGREE_WORDS * sizeof *c->agree);
    if (!c->cfg_view || !c->agree) { comm_free(c); return CK_ERR_NOMEM; }
    /* Collective: bounded like every wait of the library (a rank that never
     * comes ends the job, named: ck_watch_*). Without a bound, blocking. */
    MPI_Comm_rank(mpi_comm, &c->rank);
    config_defaults(&c->cfg, c->rank);
#ifdef COLLKIT_SMPI
    const int bounded = 0;   /* SimGrid SMPI has no MPI_Comm_idup (and names a deadlock itself) */
#else
    const int bounded = c->cfg.timeout_s > 0;
#endif
    if (bounded) {
        MPI_Request rq;
        char why[1536];
        if (MPI_Comm_idup(mpi_comm, &c->mpi, &rq) != MPI_SUCCESS) { comm_free(c); return CK_ERR_TRANSPORT; }
        if (ck_watch_wait(&rq, c->cfg.timeout_s, "ck_comm_create", why, sizeof why)) ck_watch_abort("%s", why);
    } else if (MPI_Comm_dup(mpi_comm, &c->mpi) != MPI_SUCCESS) {
        comm_free(c);
        return CK_ERR_TRANSPORT;
    }
    MPI_Comm_rank(c->mpi, &c->rank);
    MPI_Comm_size(c->mpi, &c->size);
    c->msg_bound = UINT64_MAX;
    /* Every rank must ask for the same transport: each one's setup is
     * collective, and ranks in two different setups would wait for each
     * other forever. */
    const int kind = mem & CK_MEM_SHM ? CK_MEM_SHM : (int)mem;   /* SHM and HOST|SHM are one transport */
    int kinds[2] = {kind, -kind}, agreed[2];
    ck_watch_allreduce(kinds, agreed, 2, MPI_INT, MPI_MAX, c->mpi, "ck_comm_create");
    if (agreed[0] != -agreed[1]) {
        if (c->rank == 0) {
            fprintf(stderr, "collkit: ck_comm_create: the ranks asked for different transports (this rank: %s): every "
                    "rank must ask for the same memory kind\n", kind == CK_MEM_SHM ? "shm" : kind == CK_MEM_CUDA ? "cuda" : "mpi");
            fflush(stderr);
        }
        MPI_Comm_free(&c->mpi);
        comm_free(c);
        return CK_ERR_MISMATCH;
    }
    if (mem & CK_MEM_SHM) {
        char why[256] = "";
        rc = ck_transport_shm_create(c->mpi, &c->tr, why, sizeof why);
        if (rc == CK_ERR_UNSUPPORTED) {
            /* Every rank got the same answer (the transport agrees before it
             * says no); one line per process is enough. */
            static int said;
            if (c->rank == 0 && !said++) {
                fprintf(stderr, "collkit: the shm transport is not available (%s): using the mpi transport\n", why);
                fflush(stderr);
            }
            rc = ck_transport_mpi_create(c->mpi, &c->tr);
        }
    } else if (mem == CK_MEM_HOST) {
        rc = ck_transport_mpi_create(c->mpi, &c->tr);
    } else {
#ifdef COLLKIT_HAVE_CUDA
        const char *why;
        const ck_cuda_plugin_api *cu = ck_cuda_plugin(&why);
        if (cu) {
            rc = cu->transport_create(c->mpi, c->cfg.timeout_s, &c->tr);
        } else {
            /* Every rank tried the same files; one line per process is enough. */
            static int said;
            if (c->rank == 0 && !said++) {
                fprintf(stderr, "collkit: CUDA support not available: %s\n", why);
                fflush(stderr);
            }
            rc = CK_ERR_UNSUPPORTED;
        }
#else
        rc = CK_ERR_UNSUPPORTED;
#endif
    }
    if (rc != CK_SUCCESS) {
        MPI_Comm_free(&c->mpi);
        comm_free(c);
        return rc;
    }
    *out = c;
    return CK_SUCCESS;
}

#ifndef COLLKIT_HAVE_CUDA
int ck_gpu_count(int *ndev, char *why, size_t whylen)
{
    *ndev = 0;
    if (why && whylen) snprintf(why, whylen, "collkit was built without CUDA");
    return CK_ERR_UNSUPPORTED;
}
#endif

/* Guard bytes around ck_scratch's space: host memory only (on a device they
 * would cost a copy each call). */
enum { SCRATCH_GUARD = 64 };
static size_t scratch_guard(const ck_comm *c) { return (c->tr.mem & CK_MEM_HOST) ? SCRATCH_GUARD : 0; }
static unsigned char scratch_pattern(size_t k) { return (unsigned char)(0xA7 ^ (k * 29u)); }

void ck_comm_destroy(ck_comm *c)
{
    if (!c) return;
    ck_async_shutdown(c);
    for (int i = c->nslots - 1; i >= 0; i--)
        if (c->slots[i].destroy) c->slots[i].destroy(c->slots[i].state);
    free(c->slots);
    tr_arm(c);
    if (c->scratch) (c->tr.free)(c->tr.self, (char *)c->scratch - scratch_guard(c));
    free(c->events);
    free(c->pending);
    if (c->tr.destroy) c->tr.destroy(c->tr.self);
    MPI_Comm_free(&c->mpi);
    comm_free(c);
}

int ck_comm_rank(const ck_comm *c) { return c->rank; }
int ck_comm_size(const ck_comm *c) { return c->size; }
unsigned ck_comm_mem(const ck_comm *c) { return c->tr.mem; }
const char *ck_comm_transport_name(const ck_comm *c) { return c->tr.name; }
MPI_Comm ck_comm_mpi(const ck_comm *c) { return c->mpi; }
/* A copy, refreshed on every call: an algorithm reads the settings, and a
 * write through the pointer (a cast away from const) changes nothing the
 * library, the checker or a reference algorithm in the same run reads. */
const ck_config *ck_comm_config(ck_comm *c)
{
    *c->cfg_view = c->cfg;
    return c->cfg_view;
}

int ck_comm_set_config(ck_comm *c, const ck_config *cfg)
{
    if (!c || !cfg) return CK_ERR_INVALID_ARG;
    if (!cfg->chunk_bytes)
        return ck_fail(c, CK_ERR_INVALID_ARG, "ck_comm_set_config: chunk_bytes must be at least 1 B");
    if (cfg->timeout_s != cfg->timeout_s)
        return ck_fail(c, CK_ERR_INVALID_ARG, "ck_comm_set_config: timeout_s is not a number (0 turns the watchdog off)");
    c->cfg = *cfg;
    return CK_SUCCESS;
}
const char *ck_comm_errmsg(const ck_comm *c) { return c ? c->errmsg : ""; }

void *ck_alloc(ck_comm *c, size_t bytes) { return c->tr.alloc(c->tr.self, bytes); }
/* (c->tr.free) in parentheses: smpicc defines free(x) as a macro, which would
 * take the member call for one with the wrong number of arguments. */
void ck_free(ck_comm *c, void *p) { if (p) { tr_arm(c); (c->tr.free)(c->tr.self, p); } }

int ck_upload(ck_comm *c, void *dst, const void *src, size_t n)
{
    if (!n) return CK_SUCCESS;
    tr_arm(c);
    int rc = c->tr.upload(c->tr.self, dst, src, n);
    return rc ? ck_fail(c, rc, "upload of %zu B failed in the %s transport%s%s", n, c->tr.name, tr_sep(c), tr_detail(c)) : rc;
}

int ck_download(ck_comm *c, void *dst, const void *src, size_t n)
{
    if (!n) return CK_SUCCESS;
    tr_arm(c);
    int rc = c->tr.download(c->tr.self, dst, src, n);
    return rc ? ck_fail(c, rc, "download of %zu B failed in the %s transport%s%s", n, c->tr.name, tr_sep(c), tr_detail(c)) : rc;
}

/* ------------------------------------------------------------ trace */

int ck_trace_enable(ck_comm *c, size_t capacity)
{
    free(c->events);
    c->events = NULL;
    c->ev_cap = c->ev_n = c->ev_dropped = 0;
    if (capacity == 0) return CK_SUCCESS;
    c->events = malloc(capacity * sizeof *c->events);
    if (!c->events) return CK_ERR_NOMEM;
    c->ev_cap = capacity;
    return CK_SUCCESS;
}

const ck_event *ck_trace_events(const ck_comm *c, size_t *n, size_t *dropped)
{
    if (n) *n = c->ev_n;
    if (dropped) *dropped = c->ev_dropped;
    return c->events;
}

void ck_trace_clear(ck_comm *c) { c->ev_n = c->ev_dropped = 0; }

void ck_trace_add(ck_comm *c, int kind, int peer, uint64_t bytes, double t0, double t1)
{
    if (!c->ev_cap) return;
    if (c->ev_n == c->ev_cap) { c->ev_dropped++; return; }
    c->events[c->ev_n++] = (ck_event){kind, peer, c->step, c->phase, bytes, t0, t1};
}

const char *ck_event_kind_name(int kind)
{
    static const char *const names[] = {"?", "send", "recv", "reduce", "copy", "wait", "allreduce"};
    return (kind >= CK_EV_SEND && kind <= CK_EV_CALL) ? names[kind] : "?";
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* The totals are the transport's counts plus the algorithm's own reports,
 * which stay apart (self): an algorithm can add traffic it moved by other
 * means, never take back or overwrite what the transport carried. */
void ck_counters_get(const ck_comm *c, ck_counters *out)
{
    *out = c->ctr;
    out->bytes_sent = add_sat(c->ctr.bytes_sent, c->self.bytes_sent);
    out->msgs_sent = add_sat(c->ctr.msgs_sent, c->self.msgs_sent);
    out->bytes_recv = add_sat(c->ctr.bytes_recv, c->self.bytes_recv);
    out->msgs_recv = add_sat(c->ctr.msgs_recv, c->self.msgs_recv);
    out->bytes_sent_self = c->self.bytes_sent;
    out->msgs_sent_self = c->self.msgs_sent;
    out->bytes_recv_self = c->self.bytes_recv;
    out->msgs_recv_self = c->self.msgs_recv;
}

void ck_count_traffic(ck_comm *c, uint64_t bytes_sent, uint64_t msgs_sent, uint64_t bytes_recv, uint64_t msgs_recv)
{
    c->self.bytes_sent = add_sat(c->self.bytes_sent, bytes_sent);
    c->self.msgs_sent = add_sat(c->self.msgs_sent, msgs_sent);
    c->self.bytes_recv = add_sat(c->self.bytes_recv, bytes_recv);
    c->self.msgs_recv = add_sat(c->self.msgs_recv, msgs_recv);
}

/* ------------------------------------------------------------ algorithm state */

void *ck_algo_state(ck_comm *c, const ck_algo *a)
{
    for (int i = 0; c && i < c->nslots; i++)
        if (c->slots[i].algo == a) return c->slots[i].state;
    return NULL;
}

int ck_algo_state_set(ck_comm *c, const ck_algo *a, void *state, void (*destroy)(void *))
{
    if (!c || !a) return CK_ERR_INVALID_ARG;
    for (int i = 0; i < c->nslots; i++)
        if (c->slots[i].algo == a) {
            if (c->slots[i].destroy && c->slots[i].state != state) c->slots[i].destroy(c->slots[i].state);
            c->slots[i].state = state;
            c->slots[i].destroy = destroy;
            return CK_SUCCESS;
        }
    struct ck_algo_slot *n = realloc(c->slots, (size_t)(c->nslots + 1) * sizeof *n);
    if (!n) return ck_fail(c, CK_ERR_NOMEM, "out of memory for the state of '%s'", a->name);
    c->slots = n;
    c->slots[c->nslots++] = (struct ck_algo_slot){a, state, destroy};
    return CK_SUCCESS;
}
void ck_counters_reset(ck_comm *c)
{
    memset(&c->ctr, 0, sizeof c->ctr);
    memset(&c->self, 0, sizeof c->self);
}

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

/* After an algorithm's body: requests still posted are a protocol error
 * (status 0 becomes CK_ERR_PROTOCOL, named in the message); after another
 * error they are only cleaned up. Either way each one is given a moment to
 * finish (a send the peer has received, a receive whose message is there),
 * then cancelled, so nothing writes a buffer the caller frees. */
static int check_leaks(ck_comm *c, const ck_algo *algo, int rc, uint64_t posted, uint64_t completed,
                       uint64_t cancelled)
{
    const uint64_t open = (c->nposted - posted) - (c->ncompleted - completed) - (c->ncancelled - cancelled);
    if (!open && !c->npending) return rc;
    if (!rc && open) {
        char list[320] = "";
        ck_sbuf b;
        ck_sbuf_init(&b, list, sizeof list);
        for (int i = 0; i < c->npending && i < 2; i++) {
            const struct ck_pending *e = &c->pending[i];
            const ck_req *q = &e->snap;
            ck_sbuf_add(&b, "%sa %s of %zu B %s rank %d (tag %d) posted at step %d%s%s%s%s", i ? "; " : ": ",
                        q->kind == CK_EV_SEND ? "send" : "receive", q->bytes, q->kind == CK_EV_SEND ? "to" : "from",
                        q->peer, q->tag, q->step, e->phase ? " (" : "", e->phase ? e->phase : "", e->phase ? ")" : "",
                        e->where ? "" : ", its ck_req reused for a later post");
        }
        if (c->npending > 2) ck_sbuf_add(&b, "; and %d more", c->npending - 2);
        rc = ck_fail(c, CK_ERR_PROTOCOL,
                     "'%s' returned on rank %d with %llu request%s never completed (this call: %llu posted, %llu "
                     "completed, %llu cancelled)%s; every ck_isend/ck_irecv must be finished by ck_wait or "
                     "ck_waitall before the algorithm returns", algo->name, c->rank, (unsigned long long)open, open == 1 ? "" : "s",
                     (unsigned long long)(c->nposted - posted), (unsigned long long)(c->ncompleted - completed),
                     (unsigned long long)(c->ncancelled - cancelled), list);
    }
    const double t0 = ck_now(), bound = rc == CK_ERR_PROTOCOL ? 1.0 : 0.0;
    do {
        for (int i = c->npending - 1; i >= 0; i--) {
            int fin = 0;
            if (c->tr.test(c->tr.self, &c->pending[i].snap, &fin) || fin) {
                c->pending[i] = c->pending[--c->npending];
                c->ncompleted++;
            }
        }
    } while (c->npending && ck_now() - t0 < bound);
    for (; c->npending; c->ncancelled++) c->tr.cancel(c->tr.self, &c->pending[--c->npending].snap);
    return rc;
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
    if (c->running && c->obs.message) c->obs.message(c->obs.ctx, r->kind, buf, bytes, peer, c->step);
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

/* After the algorithm: the guards of the scratch space it asked for in this
 * call. A write past the end of scratch is a heap overrun that may well go
 * unseen (the result can still be right); here it is named. */
static int check_scratch(ck_comm *c, const ck_algo *algo, int rc)
{
    if (!c->scratch_armed) return rc;
    c->scratch_armed = 0;
    if (rc) return rc;
    const size_t g = scratch_guard(c);
    const unsigned char *b = c->scratch;
    size_t after = 0, before = 0;
    for (size_t k = 0; k < g; k++) {
        if (b[c->scratch_asked + k] != scratch_pattern(g + k)) after = k + 1;
        if (b[-1 - (ptrdiff_t)k] != scratch_pattern(k)) before = k + 1;
    }
    if (!after && !before) return rc;
    return ck_fail(c, CK_ERR_PROTOCOL,
                   "algorithm '%s' wrote outside its scratch space: %s%zu B %s the %zu B it last asked ck_scratch "
                   "for (rank %d%s)",
                   algo->name, after == g || before == g ? "at least " : "", after ? after : before,
                   after ? "past the end of" : "before the start of", c->scratch_asked, c->rank,
                   after ? "; size scratch for the largest block it receives, rounded up"
                         : "; an offset into the scratch space went below 0");
}

/* ------------------------------------------------------------ all-reduce */

/* Non-negative, with room to spare, so that -x in the agreement below cannot overflow. */
static long long name_hash(const char *s) { return (long long)(ck_fnv1a64(s, strlen(s)) >> 2); }

/* Agree across ranks on (error flag, count, dtype, op, algorithm, chunk) with one
 * small MPI_Iallreduce of (x, -x) pairs under MAX: min and max of each value
 * come back together. Polled with the watchdog bound, so a rank that never
 * arrives is reported rather than waited for forever. */
static int validate_across_ranks(ck_comm *c, ck_coll coll, int local_err, size_t count, ck_dtype dt, ck_op op,
                                 const ck_algo *algo)
{
    enum { NV = AGREE_NV };
    long long v[NV] = {local_err, (long long)count, dt, op, name_hash(algo ? algo->name : "") + (algo ? algo->coll : 0),
                       (long long)c->cfg.chunk_bytes};
    /* In the communicator, not on this stack: an agreement given up at the
     * watchdog's bound is still MPI's, and may complete later. */
    long long *in = c->agree, *outv = c->agree + 2 * NV;
    for (int i = 0; i < NV; i++) { in[2 * i] = v[i]; in[2 * i + 1] = -v[i]; }
    MPI_Request rq = MPI_REQUEST_NULL;
    if (!(c->cfg.timeout_s > 0)) {
        /* No watchdog: the blocking form. (Under SMPI polling costs simulated
         * time, and its MPI_Iallreduce sends p^2 messages.) */
        if (MPI_Allreduce(in, outv, 2 * NV, MPI_LONG_LONG, MPI_MAX, c->mpi) != MPI_SUCCESS)
            return ck_fail(c, CK_ERR_TRANSPORT, "MPI_Allreduce failed during argument validation");
    } else if (MPI_Iallreduce(in, outv, 2 * NV, MPI_LONG_LONG, MPI_MAX, c->mpi, &rq) != MPI_SUCCESS) {
        return ck_fail(c, CK_ERR_TRANSPORT, "MPI_Iallreduce failed during argument validation");
    }
    if (rq != MPI_REQUEST_NULL) {
        /* Bounded, with a roll call at the end that names a rank that never
         * came, and the collective the ranks are entering by the name its
         * caller used: a reduce-scatter stuck here is no all-reduce. */
        char why[sizeof c->errmsg], what[64];
        snprintf(what, sizeof what, "entering ck_%s", ck_coll_name(coll));
        int rc = ck_watch_wait(&rq, c->cfg.timeout_s, what, why, sizeof why);
        if (rc == CK_ERR_TIMEOUT) {
            ck_fail(c, rc, "%s", why);
            fprintf(stderr, "collkit %s\n", c->errmsg);
            fflush(stderr);
            /* The late ranks may still come and complete it: its buffers stay
             * MPI's, and the next agreement gets new ones. */
            long long *fresh = malloc(AGREE_WORDS * sizeof *fresh);
            long long **lost = realloc(c->agree_lost, (size_t)(c->nagree_lost + 1) * sizeof *lost);
            if (lost) c->agree_lost = lost;
            if (fresh && lost) {
                c->agree_lost[c->nagree_lost++] = c->agree;
                c->agree = fresh;
            } else {
                free(fresh);   /* no memory: the old buffers stay in use (an agreement after a timeout is rare) */
            }
            return rc;
        }
        if (rc) return ck_fail(c, CK_ERR_TRANSPORT, "MPI_Iallreduce failed during argument validation");
    }
    long long mx[NV], mn[NV];
    for (int i = 0; i < NV; i++) { mx[i] = outv[2 * i]; mn[i] = -outv[2 * i + 1]; }
    if (mx[0] && !local_err)
        return ck_fail(c, CK_ERR_MISMATCH, "another rank rejected its arguments (see its error)");
    if (mx[0]) return local_err;
    if (mn[1] != mx[1])
        return ck_fail(c, CK_ERR_MISMATCH, "count differs across ranks: min %lld, max %lld (this rank: %zu)",
                       mn[1], mx[1], count);
    if (mn[2] != mx[2])
        return ck_fail(c, CK_ERR_MISMATCH, "dtype differs across ranks (this rank: %s)", ck_dtype_name(dt));
    if (mn[3] != mx[3])
        return ck_fail(c, CK_ERR_MISMATCH, "op differs across ranks (this rank: %s)", ck_op_name(op));
    if (mn[4] != mx[4])
        return ck_fail(c, CK_ERR_MISMATCH, "algorithm differs across ranks (this rank: %s %s)",
                       algo ? ck_coll_name(algo->coll) : "", algo ? algo->name : "?");
    /* The pipelined algorithms cut their messages by it: ranks that differ
     * would post receives of other sizes than the sends. */
    if (mn[5] != mx[5])
        return ck_fail(c, CK_ERR_MISMATCH, "chunk size differs across ranks: min %lld B, max %lld B (this rank: %zu B; "
                       "COLLKIT_CHUNK or ck_config.chunk_bytes must be the same on every rank)", mn[5], mx[5],
                       c->cfg.chunk_bytes);
    return CK_SUCCESS;
}

static int check_local_args(ck_comm *c, const ck_algo *algo, ck_coll coll, const void *sendbuf, void *recvbuf,
                            size_t count, ck_dtype dt, ck_op op)
{
    if (!algo || !algo->run) return ck_fail(c, CK_ERR_INVALID_ARG, "no algorithm given");
    if (algo->coll != coll)
        return ck_fail(c, CK_ERR_INVALID_ARG, "algorithm '%s' is a %s algorithm, not a%s %s one", algo->name,
                       ck_coll_name(algo->coll), coll == CK_COLL_ALLREDUCE || coll == CK_COLL_ALLGATHER ? "n" : "",
                       ck_coll_name(coll));
    if ((unsigned)dt >= CK_NUM_DTYPES) return ck_fail(c, CK_ERR_INVALID_ARG, "invalid dtype %d", (int)dt);
    if ((unsigned)op >= CK_NUM_OPS) return ck_fail(c, CK_ERR_INVALID_ARG, "invalid op %d", (int)op);
    if (op == CK_AVG && !ck_dtype_is_float(dt))
        return ck_fail(c, CK_ERR_INVALID_ARG, "op avg is defined for floating types only, not %s", ck_dtype_name(dt));
    if (!(algo->mem & c->tr.mem))
        return ck_fail(c, CK_ERR_UNSUPPORTED, "algorithm '%s' does not run on the %s transport",
                       algo->name, c->tr.name);
    if (count > 0 && (!recvbuf || !sendbuf))
        return ck_fail(c, CK_ERR_INVALID_ARG, "null buffer with count %zu", count);
    if (count > (size_t)1 << 60) return ck_fail(c, CK_ERR_INVALID_ARG, "count %zu is too large", count);
    /* Checked here, before the ranks agree, so that every rank fails alike:
     * one rank failing at its launch would leave the others waiting for it. */
    if (c->tr.mem == CK_MEM_CUDA && count > 0 &&
        !ck_cu_aligned(sendbuf == CK_IN_PLACE ? recvbuf : sendbuf, recvbuf, ck_dtype_size(dt)))
        return ck_fail(c, CK_ERR_INVALID_ARG, "device buffers must be aligned to the element size (%zu B for %s): "
                       "sendbuf %p, recvbuf %p", ck_dtype_size(dt), ck_dtype_name(dt),
                       sendbuf == CK_IN_PLACE ? recvbuf : sendbuf, recvbuf);
    return CK_SUCCESS;
}

/* One call of any collective: validation, the body, the checks after it.
 * The buffers reach the body as collkit.h's ck_allreduce_fn describes: in
 * place, a reduce-scatter gets the whole buffer and its own block of it, an
 * all-gather its own block of the whole buffer. */
static int run_collective(ck_comm *c, const ck_algo *algo, ck_coll coll, const void *sendbuf, void *recvbuf,
                          size_t count, ck_dtype dt, ck_op op)
{
    if (!c) return CK_ERR_INVALID_ARG;
    ck_confine_once();
    c->errmsg[0] = '\0';
    int rc = check_local_args(c, algo, coll, sendbuf, recvbuf, count, dt, op);
    if (c->cfg.validate) rc = validate_across_ranks(c, coll, rc, count, dt, op, algo);
    if (rc) return rc;
    if (count == 0) return CK_SUCCESS;
    const int inplace = sendbuf == CK_IN_PLACE || sendbuf == recvbuf;
    size_t off, len;
    ck_block(count, (size_t)c->size, (size_t)c->rank, &off, &len);
    void *result = recvbuf;   /* what avg divides */
    size_t nresult = count;
    if (coll == CK_COLL_REDUCE_SCATTER) {
        if (inplace) {
            sendbuf = recvbuf;
            recvbuf = (char *)recvbuf + off * ck_dtype_size(dt);
        }
        result = recvbuf;
        nresult = len;
    } else if (inplace) {
        sendbuf = coll == CK_COLL_ALLGATHER ? (char *)recvbuf + off * ck_dtype_size(dt) : recvbuf;
    }

    double t0 = c->ev_cap ? ck_now() : 0.0;
    tr_arm(c);
    c->algo_name = algo->name;
    ck_step(c, 0, NULL);
    c->npending = 0;   /* requests posted outside a call are the caller's business */
    c->protocol[0] = '\0';
    const uint64_t posted = c->nposted, completed = c->ncompleted, cancelled = c->ncancelled;
    c->scratch_armed = 0;   /* only this call's ck_scratch is checked */
    c->msg_bound = algo->max_msg_bytes ? algo->max_msg_bytes(c->size, c->rank, count, ck_dtype_size(dt), &c->cfg)
                                       : UINT64_MAX;
    c->running = 1;
    rc = algo->run(c, sendbuf, recvbuf, count, dt, op == CK_AVG ? CK_SUM : op);
    c->running = 0;
    if (!rc && c->protocol[0]) rc = ck_fail(c, CK_ERR_PROTOCOL, "%s", c->protocol);
    rc = check_leaks(c, algo, rc, posted, completed, cancelled);
    if (!rc) rc = ck_sync(c);
    rc = check_scratch(c, algo, rc);
    if (!rc && op == CK_AVG && nresult && (rc = c->tr.divide(c->tr.self, result, nresult, dt, c->size)))
        ck_fail(c, rc, "avg: the division by %d failed%s%s", c->size, tr_sep(c), tr_detail(c));
    if (rc && !c->errmsg[0]) {
        if (rc < 0 || rc >= CK_NUM_ERRORS)   /* -1, errno-style codes: the caller would read them as something else */
            ck_fail(c, rc, "algorithm '%s' returned %d, which is no collkit status (0 is CK_SUCCESS; failures are "
                    "the CK_ERR_* codes of collkit.h)", algo->name, rc);
        else
            ck_fail(c, rc, "algorithm '%s' failed: %s (it returned %d and recorded no detail with ck_fail)",
                    algo->name, ck_strerror(rc), rc);
    }
    ck_step(c, 0, NULL);
    c->msg_bound = UINT64_MAX;   /* point-to-point calls outside ck_allreduce have no declared bound */
    if (c->ev_cap) ck_trace_add(c, CK_EV_CALL, -1, count * ck_dtype_size(dt), t0, ck_now());
    c->algo_name = NULL;
    return rc;
}

int ck_allreduce(ck_comm *c, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                 size_t count, ck_dtype dt, ck_op op)
{
    return run_collective(c, algo, CK_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op);
}

int ck_reduce_scatter(ck_comm *c, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                      size_t count, ck_dtype dt, ck_op op)
{
    return run_collective(c, algo, CK_COLL_REDUCE_SCATTER, sendbuf, recvbuf, count, dt, op);
}

int ck_allgather(ck_comm *c, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                 size_t count, ck_dtype dt)
{
    return run_collective(c, algo, CK_COLL_ALLGATHER, sendbuf, recvbuf, count, dt, CK_SUM);
}
