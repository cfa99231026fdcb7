/*
 * comm_shm.c — the collkit_shm.h calls: where a buffer lies in the shared
 * heap, a peer's memory mapped here, and the bounded wait of algorithms that
 * synchronise through shared flags. They live beside the communicator (like
 * comm_cuda.c) because the wait needs its watchdog bound, step and trace,
 * and algorithm files never see ck_comm's fields.
 */
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include "internal.h"
#include "transport_shm.h"
#include "collkit_shm.h"

static void *shm_self(const ck_comm *c)
{
    return c && (c->tr.mem & CK_MEM_SHM) ? c->tr.self : NULL;
}

int ck_shm_active(const ck_comm *c) { return shm_self(c) != NULL; }

int64_t ck_shm_offset(const ck_comm *c, const void *ptr, size_t bytes)
{
    void *t = shm_self(c);
    return t ? ck_shm_tr_offset(t, ptr, bytes) : -1;
}

void *ck_shm_peer(const ck_comm *c, int rank, int64_t offset)
{
    void *t = shm_self(c);
    char *b = t ? ck_shm_tr_base(t, rank) : NULL;
    return b && offset >= 0 ? b + offset : NULL;
}

/* ------------------------------------------------------------ symmetric regions */

static void region_free(ck_shm_region *g)
{
    if (!g) return;
    if (g->mine) ck_free(g->comm, g->mine);
    free(g->peer);
    free(g);
}

int ck_shm_region_create(ck_comm *c, size_t bytes, ck_shm_region **out)
{
    if (!c || !out) return CK_ERR_INVALID_ARG;
    *out = NULL;
    const size_t take = bytes ? bytes : 64;
    ck_shm_region *g = calloc(1, sizeof *g);
    int64_t off = -1, *offs = malloc((size_t)c->size * sizeof *offs);
    int bad = 1, anybad = 1;
    if (g) {
        g->comm = c;
        g->p = c->size;
        g->rank = c->rank;
        g->bytes = bytes;
        g->peer = calloc((size_t)c->size, sizeof *g->peer);
        g->mine = ck_shm_active(c) ? ck_alloc(c, take) : NULL;
        off = g->mine ? ck_shm_offset(c, g->mine, take) : -1;
        bad = !offs || !g->peer || off < 0;
        /* zeroed before any peer can see it: the agreement below orders it */
        if (!bad) memset(g->mine, 0, take);
    }
    ck_watch_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, c->mpi, "taking a shared region");
    if (anybad) {
        region_free(g);
        free(offs);
        if (!ck_shm_active(c))
            return ck_fail(c, CK_ERR_UNSUPPORTED, "a shared region needs the shm transport (this communicator is %s)",
                           ck_comm_transport_name(c));
        return ck_fail(c, CK_ERR_NOMEM, "could not take a shared region of %zu B from the shared heap%s", take,
                       bad ? "" : " (on another rank)");
    }
    ck_watch_allgather(&off, 1, MPI_INT64_T, offs, 1, MPI_INT64_T, c->mpi, "taking a shared region");
    for (int q = 0; q < g->p; q++) g->peer[q] = q == g->rank ? g->mine : ck_shm_peer(c, q, offs[q]);
    free(offs);
    *out = g;
    return CK_SUCCESS;
}

void ck_shm_region_destroy(void *region)
{
    ck_shm_region *g = region;
    if (!g) return;
    ck_watch_barrier(g->comm->mpi, "freeing a shared region");   /* nobody frees while a peer may still load from it */
    region_free(g);
}

/* A wait for a peer's flag: the shm transport's rule for each pause (yield
 * at once on an oversubscribed node or when the peer shares our core, else
 * spin a little first); the async engine's clone naps after 256 polls. */
static const ck_backoff_policy flag_policy = {.spin_polls = 0, .yield_polls = ULONG_MAX, .yield_s = INFINITY};
static const ck_backoff_policy polite_flag_policy = {
    .spin_polls = 0, .yield_polls = 256, .yield_s = INFINITY, .nap_ns = 20000};

typedef struct {
    void  *tr;      /* the shm transport, or NULL (a plain yield) */
    int    who;     /* the peer waited for */
    double waited;
} flag_wait;

static void flag_pause(void *arg)
{
    flag_wait *w = arg;
    if (w->tr) ck_shm_tr_pause(w->tr, w->who, w->waited);
    else sched_yield();
}

int ck_shm_wait(ck_comm *c, int (*pending)(void *arg), void *arg, const char *what)
{
    int who = pending(arg);
    if (who < 0) return CK_SUCCESS;   /* the common case on an idle node: no clock, no event */
    flag_wait w = {.tr = shm_self(c), .who = who};
    const double bound = c->cfg.timeout_s;
    int last = who;
    if (w.tr) ck_shm_tr_here(w.tr);
    ck_backoff b;   /* answering roll calls of ranks whose wait ran out (watch.c) */
    ck_backoff_start(&b, c->polite ? &polite_flag_policy : &flag_policy, 1);
    b.yield = flag_pause;
    b.yield_arg = &w;
    while ((who = pending(arg)) >= 0) {
        last = w.who = who;
        ck_backoff_pause(&b);
        w.waited = b.now - b.t0;   /* read every 16 polls at most */
        if ((b.polls & 255) == 0 && bound > 0 && w.waited > bound) {
            int rc = ck_fail(c, CK_ERR_TIMEOUT, "watchdog: rank %d waited %.1f s for rank %d (%s) in '%s' step %d%s%s%s",
                             c->rank, w.waited, last, what, c->algo_name ? c->algo_name : "?", c->step,
                             c->phase ? " (" : "", c->phase ? c->phase : "", c->phase ? ")" : "");
            fprintf(stderr, "collkit %s\n", c->errmsg);
            fflush(stderr);
            return rc;
        }
    }
    if (c->ev_cap) ck_trace_add(c, CK_EV_WAIT, last, 0, b.t0, ck_now());
    return CK_SUCCESS;
}

int ck_shm_copy_nt(ck_comm *c, void *dst, const void *src, size_t bytes)
{
    if (!bytes || dst == src) return CK_SUCCESS;
    const size_t total = bytes;
    double t0 = c->ev_cap ? ck_now() : 0.0;
#if defined(__x86_64__)
    char *d = dst;
    const char *s = src;
    /* up to a 16-byte boundary of dst, then 64 bytes a round in streaming stores */
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > bytes) head = bytes;
    memcpy(d, s, head);
    d += head; s += head; bytes -= head;
    for (; bytes >= 64; d += 64, s += 64, bytes -= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 32)), f = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), e);
        _mm_stream_si128((__m128i *)(d + 48), f);
    }
    memcpy(d, s, bytes);
    _mm_sfence();   /* streaming stores are weakly ordered: done before any later (release) store */
#else
    memcpy(dst, src, bytes);
#endif
    if (c->ev_cap) ck_trace_add(c, CK_EV_COPY, -1, (uint64_t)total, t0, ck_now());
    return CK_SUCCESS;
}
