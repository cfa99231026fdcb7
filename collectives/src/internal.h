/*
 * internal.h — the communicator behind ck_comm. Private to collectives/src/:
 * algorithm files use collkit_algo.h (and collkit_cuda.h), programs
 * collkit.h, transports transport.h.
 */
#ifndef COLLKIT_INTERNAL_H
#define COLLKIT_INTERNAL_H

#include "transport.h"
#include "collkit_group.h"   /* ck_topo */

struct ck_comm {
    int          rank, size;
    MPI_Comm     mpi;            /* private duplicate of the user's communicator */
    ck_transport tr;
    ck_config    cfg;            /* the settings the library reads */
    ck_config   *cfg_view;       /* what ck_comm_config hands out: a copy, apart from cfg */
    long long   *agree;          /* the cross-rank agreement's buffers (validate_across_ranks) */
    long long  **agree_lost;     /* those of agreements given up at the watchdog's bound: MPI may
                                  * still write them, so they are freed only with the communicator */
    int          nagree_lost;

    /* the call in progress (for watchdog messages and events) */
    const char  *algo_name;
    int          step;
    const char  *phase;

    ck_counters  ctr;            /* the transport's counts (ck_counters_get adds `self`) */
    ck_counters  self;           /* what ck_count_traffic reported, kept apart */
    uint64_t     msg_bound;      /* the running call's max_msg_bytes; UINT64_MAX: none declared */

    /* Request accounting: every post, completion and cancel is counted, and
     * the requests posted but not yet completed are kept (where the caller's
     * ck_req is, and a copy of it taken at the post), so ck_allreduce can
     * tell an algorithm that returned with a request still posted which one
     * it was, and finish or cancel it. */
    uint64_t     nposted, ncompleted, ncancelled;
    struct ck_pending {
        const ck_req *where;     /* the caller's request; NULL once reused for another post */
        ck_req        snap;      /* the request as posted (the transport's handles included) */
        const char   *phase;
    } *pending;
    int          npending, cap_pending;
    /* The first size mismatch of the call in progress: the receive completes
     * (so the ranks go on, no one hangs) and ck_allreduce reports it. */
    char         protocol[400];

    /* ck_observe: called only while a collective (ck_allreduce, ck_reduce_scatter, ck_allgather) runs the algorithm (running) */
    ck_observer  obs;
    int          running;

    ck_event    *events;
    size_t       ev_cap, ev_n, ev_dropped;

    /* ck_scratch's buffer: scratch_bytes of room, and on host memory
     * SCRATCH_GUARD bytes of a known pattern before it and right after the
     * size last asked for (scratch_asked), checked when the call returns. */
    void        *scratch;
    size_t       scratch_bytes, scratch_asked;
    int          scratch_armed;

    /* per-algorithm state (ck_algo_state), destroyed with the communicator */
    struct ck_algo_slot { const ck_algo *algo; void *state; void (*destroy)(void *); } *slots;
    int          nslots;

    /* 1 on the async engine's private clone: waits back off (yield, then
     * nap) instead of spinning, so the progress thread leaves the core to
     * the caller's computation */
    int          polite;

    struct ck_async_engine *async;  /* progress thread for ck_allreduce_async; NULL until first use */
    /* Stops it (async.c sets it with the thread): ck_comm_destroy calls the
     * engine through this, so the lifecycle needs nothing of the engine. */
    void       (*async_stop)(ck_comm *comm);

    ck_topo      topo;           /* the nodes, found at creation (topo.c) */
    int          asked_shm;      /* shm was asked for: oneshot/twoshot fall back to ring where it could not be had */
    struct ck_comm *parent;      /* a view's (group.c): whose transport it uses and whose traffic it counts */
    int         *to_parent;      /* a view's: its ranks' ranks in the parent (the watcher sees them there) */

    char         errmsg[512];
    char         group_note[160];  /* group.c: " [group ranks 0-1 are world ranks 2,3]", or "" */
};

/* Append one event (no-op when tracing is off). */
void ck_trace_add(ck_comm *comm, int kind, int peer, uint64_t bytes, double t0, double t1);

/* group.c: the map from a group's ranks to the job's, for its messages. */
void ck_group_note(MPI_Comm comm, char *out, size_t cap);

/* group.c: a view's traffic becomes its parent's. */
void ck_view_credit(ck_comm *view);

/* Shared by the communicator's files (comm.c, p2p.c, collective.c). */

/* The transport's own account of its last failure, as ": detail" (or ""),
 * to complete the communicator's message. */
static inline const char *tr_sep(const ck_comm *c)
{
    const char *d = c->tr.error ? c->tr.error(c->tr.self) : NULL;
    return d && *d ? ": " : "";
}
static inline const char *tr_detail(const ck_comm *c)
{
    const char *d = c->tr.error ? c->tr.error(c->tr.self) : NULL;
    return d && *d ? d : "";
}

/* Hand the transport the watchdog bound before a call that may block in it
 * (ck_config is mutable, so it is passed again every time). */
static inline void tr_arm(ck_comm *c)
{
    if (c->tr.set_timeout) c->tr.set_timeout(c->tr.self, c->cfg.timeout_s);
}

/* The agreement of validate_across_ranks: NV values, each as (x, -x), in and out. */
enum { AGREE_NV = 6, AGREE_WORDS = 4 * AGREE_NV };

/* Guard bytes around ck_scratch's space: host memory only (on a device they
 * would cost a copy each call). */
enum { SCRATCH_GUARD = 64 };
static inline size_t scratch_guard(const ck_comm *c) { return (c->tr.mem & CK_MEM_HOST) ? SCRATCH_GUARD : 0; }
static inline unsigned char scratch_pattern(size_t k) { return (unsigned char)(0xA7 ^ (k * 29u)); }

#endif
