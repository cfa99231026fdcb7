/*
 * comm.c — the communicator's lifecycle and configuration: creation (the
 * transport chosen by memory kind, agreed across ranks), the settings,
 * destruction; and what a communicator keeps between calls: its failure
 * message (ck_fail), trace events, traffic counters and the algorithms'
 * state. Point-to-point is p2p.c, the collective entry collective.c, the
 * clock clock.c (see README.md for the layers).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "env.h"
#include "internal.h"
#include "cuda_plugin.h"

int ck_fail(ck_comm *comm, int status, const char *fmt, ...)
{
    if (comm) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(comm->errmsg, sizeof comm->errmsg, fmt, ap);
        va_end(ap);
        /* A group's ranks are not the job's: the message says both (group.c). */
        if (comm->group_note[0] && n >= 0 && (size_t)n < sizeof comm->errmsg)
            snprintf(comm->errmsg + n, sizeof comm->errmsg - (size_t)n, "%s", comm->group_note);
    }
    return status;
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

/* The communicator's own memory (not its MPI communicator or transport). */
static void comm_free(ck_comm *c)
{
    for (int i = 0; i < c->nagree_lost; i++) free(c->agree_lost[i]);
    free(c->agree_lost);
    free(c->agree);
    free(c->cfg_view);
    free(c->to_parent);
    free(c);
}

/* The nodes of the communicator (topo.c), recorded for the descriptors'
 * count functions. A COLLKIT_RANKS_PER_NODE every rank refuses alike is
 * the communicator's failure, said once by rank 0. */
static int find_nodes(ck_comm *c, int **node_of)
{
    char why[256];
    *node_of = malloc((size_t)c->size * sizeof **node_of);
    if (!*node_of) return CK_ERR_NOMEM;
    int rc = ck_mpi_topo(c->mpi, &c->topo, *node_of, why, sizeof why);
    if (rc) {
        if (c->rank == 0) {
            fprintf(stderr, "collkit: ck_comm_create: %s\n", why);
            fflush(stderr);
        }
        free(*node_of);
        *node_of = NULL;
        return rc;
    }
    ck_topo_record(c->size, *node_of);
    return CK_SUCCESS;
}

/* The transport of the memory kind asked for (every rank asked for the
 * same): shm on one node, mixed across nodes, mpi, or CUDA IPC. */
static int transport_create(ck_comm *c, unsigned mem, const int *node_of)
{
    int rc;
    c->asked_shm = (mem & CK_MEM_SHM) != 0;
    /* Every rank a node of its own on real nodes (SimGrid SMPI's hosts, a
     * one-slot hostfile) has no pair to share memory: the shm transport's own
     * refusal below says so, and MPI it is. */
    const int spans = c->topo.nodes > 1 && (c->topo.nodes < c->size || c->topo.emulated);
    if ((mem & CK_MEM_SHM) && spans) {
        /* Shared memory reaches the ranks of one node: inside each node
         * shm, between nodes MPI (transport_mixed.c). Said once a process. */
        static int said;
        if (c->rank == 0 && !said++) {
            fprintf(stderr, "collkit: the %d ranks span %d %snodes: the mixed transport (shm inside a node, mpi between "
                    "nodes); oneshot and twoshot run as ring\n", c->size, c->topo.nodes, c->topo.emulated ? "emulated " : "");
            fflush(stderr);
        }
        rc = ck_transport_mixed_create(c->mpi, node_of, &c->tr);
    } else if (mem & CK_MEM_SHM) {
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
    return rc;
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
    ck_group_note(c->mpi, c->group_note, sizeof c->group_note);
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
    int *node_of = NULL;
    if (!(rc = find_nodes(c, &node_of))) rc = transport_create(c, mem, node_of);
    free(node_of);
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

void ck_comm_destroy(ck_comm *c)
{
    if (!c) return;
    if (c->async_stop) c->async_stop(c);   /* the progress thread, when one was started (async.c) */
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

/* The bound of the program's own collectives on this communicator (watch.c). */
ck_bound ck_bound_comm(ck_comm *c) { return (ck_bound){.seconds = c->cfg.timeout_s}; }

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
    /* A view's events are its parent's, in the parent's ranks (group.c). */
    ck_comm *to = c->parent ? c->parent : c;
    if (c->parent && peer >= 0) peer = c->to_parent[peer];
    if (!to->ev_cap) return;
    if (to->ev_n == to->ev_cap) { to->ev_dropped++; return; }
    to->events[to->ev_n++] = (ck_event){kind, peer, c->step, c->phase, bytes, t0, t1};
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
