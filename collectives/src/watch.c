/*
 * watch.c — the one rule for every wait of a collkit program: bounded by the
 * watchdog (COLLKIT_TIMEOUT), and when the bound passes the job ends on every
 * rank with a message naming the rank that did not arrive and the phase.
 *
 * Why a roll call. A rank that waits in a collective knows only that it
 * waited; which rank is missing the collective cannot say. So a rank whose
 * wait reaches the bound asks every other rank, over a private duplicate of
 * MPI_COMM_WORLD (no message of the program can match it), "where are you?".
 * Every rank that is itself waiting anywhere the library polls (these bounded
 * collectives, ck_allreduce's waits, the shm transport's, the argument
 * agreement) answers with its phase and what it waits for; a rank that is
 * stopped, stalled in computation or gone does not. The roll call takes the
 * last part of the bound (ck_watch_grace), so a bounded wait, roll call
 * included, lasts no longer than the bound. When every rank answers, all are
 * alive and each waits somewhere bounded too (a deadlock, or a rank still
 * in a wait of its own that will end): the wait goes on one bound more, then
 * ends the job saying where each rank is: two bounds at most.
 *
 * Ending. MPI_Abort on MPI_COMM_WORLD: Open MPI's launcher then kills every
 * rank, the stopped ones included (SIGKILL reaches a stopped process), and
 * exits non-zero. A rank killed outright is the launcher's to notice: mpirun
 * names it and ends the job at once. A rank the launcher cannot reach (its
 * node cut off by the network, its daemon stopped) would wait in MPI_Abort
 * forever: it exits by itself when MPI_Abort has not ended it within half a
 * bound (MPI_Abort below, abort_wait).
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collkit.h"
#include "collkit_util.h"
#include "env.h"

enum { CALL = 1, HERE = 2, TAG = 7 };

typedef struct {
    int    kind;
    double waited;
    char   where[200];
} watch_msg;

static MPI_Comm    g_watch = MPI_COMM_NULL;   /* duplicate of MPI_COMM_WORLD, for roll calls only */
static int         g_rank, g_size;
static double      g_timeout = 30.0;
static char        g_prog[32] = "collkit";
static char        g_phase[96] = "start-up";
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;   /* g_phase: set by the main thread, read by any */
/* What this thread waits for right now (the progress thread has its own). */
static __thread const char *t_what;
static __thread double t_since;

int ck_watch_init(const char *prog)
{
    if (prog) snprintf(g_prog, sizeof g_prog, "%s", prog);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
#ifdef COLLKIT_SMPI
    g_timeout = 0;   /* SimGrid names a deadlock's blocked ranks itself; polling costs simulated time */
#endif
    char instead[64];
    snprintf(instead, sizeof instead, g_timeout > 0 ? "the watchdog stays at %g s" : "the watchdog stays off",
             g_timeout);
    ck_env_double("COLLKIT_TIMEOUT", 0, 1e6, g_rank, instead, &g_timeout);
    if (g_watch == MPI_COMM_NULL && MPI_Comm_dup(MPI_COMM_WORLD, &g_watch) != MPI_SUCCESS) {
        g_watch = MPI_COMM_NULL;
        return CK_ERR_TRANSPORT;
    }
    return CK_SUCCESS;
}

void ck_watch_set_timeout(double seconds) { g_timeout = seconds; }
double ck_watch_timeout(void) { return g_timeout; }

/* The last part of a bound that the roll call takes: long enough for a rank
 * that polls every few milliseconds to answer on a loaded machine, short
 * beside the bound. */
double ck_watch_grace(double bound)
{
    double g = bound / 5;
    return g > 2.0 ? 2.0 : g;
}

void ck_watch_phase(const char *phase)
{
    pthread_mutex_lock(&g_mu);
    snprintf(g_phase, sizeof g_phase, "%s", phase ? phase : "?");
    pthread_mutex_unlock(&g_mu);
}

static void where_now(char *out, size_t cap)
{
    pthread_mutex_lock(&g_mu);
    if (t_what) snprintf(out, cap, "%s (%s)", g_phase, t_what);
    else snprintf(out, cap, "%s", g_phase);
    pthread_mutex_unlock(&g_mu);
}

static void answer(int to)
{
    watch_msg m = {.kind = HERE, .waited = t_what ? ck_now() - t_since : 0};
    where_now(m.where, sizeof m.where);
    /* A few hundred bytes: sent eagerly, the caller is alive and polling. */
    MPI_Send(&m, (int)sizeof m, MPI_BYTE, to, TAG, g_watch);
}

/* Take one roll-call message if there is one (matched probe: the progress
 * thread and the caller's may both poll). 1 with it in *m, else 0. */
static int take(watch_msg *m, int *from)
{
    int found = 0;
    MPI_Status st;
#ifdef COLLKIT_SMPI
    /* SimGrid SMPI has no matched probe; its simulated ranks run in one
     * thread, so probe then receive cannot be split by another taker. */
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG, g_watch, &found, &st) != MPI_SUCCESS || !found) return 0;
    MPI_Recv(m, (int)sizeof *m, MPI_BYTE, st.MPI_SOURCE, TAG, g_watch, &st);
#else
    MPI_Message h;
    if (MPI_Improbe(MPI_ANY_SOURCE, TAG, g_watch, &found, &h, &st) != MPI_SUCCESS || !found) return 0;
    MPI_Mrecv(m, (int)sizeof *m, MPI_BYTE, &h, &st);
#endif
    *from = st.MPI_SOURCE;
    return 1;
}

void ck_watch_enter(const char *what)
{
    t_what = what;
    t_since = ck_now();
}

void ck_watch_leave(void) { t_what = NULL; }

void ck_watch_answer(void)
{
    if (g_watch == MPI_COMM_NULL) return;
    watch_msg m;
    int from;
    while (take(&m, &from))
        if (m.kind == CALL) answer(from);
    /* A HERE outside a roll call answers one that already ended: dropped. */
}

/* Ask every other rank where it is, for `grace` seconds; describe who did not
 * answer (and where the others are) into out. */
static int rollcall(double grace, char *out, size_t cap)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    if (g_watch == MPI_COMM_NULL || g_size < 2) return -1;
    char *answered = calloc((size_t)g_size, 1);
    char (*where)[200] = calloc((size_t)g_size, sizeof *where);
    if (!answered || !where) { free(answered); free(where); return -1; }
    static const watch_msg call = {.kind = CALL};
    for (int r = 0; r < g_size; r++) {
        if (r == g_rank) continue;
        MPI_Request rq;
        if (MPI_Isend(&call, (int)sizeof call, MPI_BYTE, r, TAG, g_watch, &rq) == MPI_SUCCESS) MPI_Request_free(&rq);
    }
    answered[g_rank] = 1;
    int n = 1;
    const double t0 = ck_now();
    while (n < g_size && ck_now() - t0 < grace) {
        watch_msg m;
        int from;
        if (take(&m, &from)) {
            if (m.kind == CALL) answer(from);   /* another rank's roll call: this one is here too */
            else if (!answered[from]) {
                answered[from] = 1;
                m.where[sizeof m.where - 1] = '\0';
                memcpy(where[from], m.where, sizeof m.where);
                n++;
            }
            continue;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    int missing = g_size - n, k = 0;
    if (missing) {
        ck_sbuf_add(&b, "rank%s", missing > 1 ? "s" : "");
        for (int r = 0; r < g_size; r++)
            if (!answered[r]) ck_sbuf_add(&b, "%s %d", k++ ? (k == missing ? " and" : ",") : "", r);
        ck_sbuf_add(&b, " did not answer (stopped, stalled or gone)");
    } else {
        ck_sbuf_add(&b, "every rank answered, none where this one waits (ranks in different collectives)");
    }
    /* Where the others are, for up to four of them: enough to see a pattern. */
    k = 0;
    for (int r = 0; r < g_size && k < 4; r++)
        if (r != g_rank && answered[r]) ck_sbuf_add(&b, "%s rank %d in %s", k++ ? ";" : "; waiting:", r, where[r]);
    free(answered);
    free(where);
    return missing;
}

/* The bound passed: hold the roll call, and say so into why. Returns how
 * many ranks did not answer (-1: no roll call possible). */
static int expired(double waited, double bound, const char *what, char *why, size_t cap)
{
    char phase[96], who[1024] = "";
    pthread_mutex_lock(&g_mu);
    snprintf(phase, sizeof phase, "%s", g_phase);
    pthread_mutex_unlock(&g_mu);
    const int missing = rollcall(ck_watch_grace(bound), who, sizeof who);
    snprintf(why, cap, "watchdog: rank %d waited %.1f s for the other ranks in %s (%s)%s%s", g_rank,
             waited + ck_watch_grace(bound), phase, what, who[0] ? ": " : "", who);
    return missing;
}

/* ------------------------------------------------------------ back-off */

enum { SPIN, YIELD, NAP };

static int stage(const ck_backoff *b)
{
    const ck_backoff_policy *p = b->p;
    const double t = b->now - b->t0;
    if (b->polls < p->spin_polls && t < p->spin_s) return SPIN;
    if ((b->polls < p->yield_polls && t < p->yield_s) || !p->nap_ns) return YIELD;
    return NAP;
}

void ck_backoff_start(ck_backoff *b, const ck_backoff_policy *p, int answer)
{
    *b = (ck_backoff){.p = p, .answer = answer};
    b->t0 = b->now = ck_now();
    b->next_answer = b->t0 + 0.005;
}

void ck_backoff_pause(ck_backoff *b)
{
    int s = stage(b);
    const unsigned long n = ++b->polls;
    /* Reading the clock every poll of a spin would cost more than the poll. */
    if (s == NAP || (s == YIELD && (n & 15) == 0) || (n & 255) == 0) {
        b->now = ck_now();
        if (b->answer && b->now >= b->next_answer) {
            ck_watch_answer();
            b->next_answer = b->now + 0.005;
        }
        s = stage(b);
    }
    if (s == YIELD) {
        if (b->yield) b->yield(b->yield_arg);
        else sched_yield();
    } else if (s == NAP) {
        nanosleep(&(struct timespec){.tv_nsec = b->p->nap_ns}, NULL);
    }
}

/* A bounded wait's polling: no sleeping at first, since a barrier before a
 * timed iteration must release every rank at once. After 50 ms the wait is
 * for a slow rank, not a timing: a nap a poll leaves the core to the ranks
 * that compute (more ranks than cores). */
static const ck_backoff_policy wait_policy = {
    .spin_polls = ULONG_MAX, .spin_s = 0.05, .yield_polls = 0, .yield_s = 0, .nap_ns = 50000};

int ck_watch_wait(MPI_Request *rq, double bound, const char *what, char *why, size_t cap)
{
    if (!(bound > 0)) return MPI_Wait(rq, MPI_STATUS_IGNORE) == MPI_SUCCESS ? CK_SUCCESS : CK_ERR_TRANSPORT;
    ck_watch_enter(what);
    const double until = bound - ck_watch_grace(bound);
    double extra = 0;
    ck_backoff b;
    ck_backoff_start(&b, &wait_policy, 1);
    for (;;) {
        int done = 0;
        if (MPI_Test(rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            ck_watch_leave();
            snprintf(why, cap, "MPI failed in %s", what);
            return CK_ERR_TRANSPORT;
        }
        if (done) break;
        ck_backoff_pause(&b);
        if (b.now - b.t0 > until + extra) {
            /* Still waiting (answers say where) while the roll call runs. */
            if (expired(b.now - b.t0, bound, what, why, cap) == 0 && !extra) {
                /* Every rank is alive and waiting somewhere; each of those
                 * waits is bounded too, so a rank whose own wait ends comes
                 * here next: one bound more before calling it a deadlock. */
                extra = bound;
                continue;
            }
            ck_watch_leave();
            return CK_ERR_TIMEOUT;
        }
    }
    ck_watch_leave();
    return CK_SUCCESS;
}

#ifndef COLLKIT_SMPI   /* a simulated rank has no launcher to lose (and SMPI's nanosleep is its own) */
/* How long MPI_Abort may take before the rank ends itself: half the bound,
 * from 1 to 10 s (10 s with the watchdog off), so a rank cut off from the
 * launcher is gone within two bounds of its wait's start. */
static double abort_wait(void)
{
    if (!(g_timeout > 0)) return 10.0;
    const double w = g_timeout / 2;
    return w < 1.0 ? 1.0 : w > 10.0 ? 10.0 : w;
}

static struct {
    double wait;
    int    code;
} g_end;

static void *end_anyway(void *arg)
{
    (void)arg;
    const double s = g_end.wait;
    nanosleep(&(struct timespec){.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)}, NULL);
    char line[200];
    const int n = snprintf(line, sizeof line,
                           "%s: rank %d: MPI_Abort did not end the job within %g s (the launcher cannot be reached: "
                           "a network partition?); this rank exits by itself\n",
                           g_prog, g_rank, s);
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1)) {}
    _exit(g_end.code);
}

/* Every MPI_Abort of a program built on the library (the watchdog's, a
 * tool's own, a lab's) comes here first, through MPI's profiling interface.
 * MPI_Abort asks the launcher, through this node's daemon, to end the job;
 * with the network to the launcher cut, or the daemon itself stopped, the
 * request never arrives (Open MPI's MPI_Abort then waits in its help message
 * forever) and the kill it waits for never comes. So the rank arms its own
 * end first: the same status, abort_wait() later. */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
    g_end.wait = abort_wait();
    g_end.code = errorcode;
    pthread_t t;
    if (pthread_create(&t, NULL, end_anyway, NULL) == 0) pthread_detach(t);
    return PMPI_Abort(comm, errorcode);
}
#endif

void ck_watch_abort(const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "%s: %s; ending the job\n", g_prog, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);   /* ends this rank within abort_wait(), reached or not */
    exit(1);                        /* not reached: MPI_Abort does not return */
}

/* ------------------------------------------------------------ bounded collectives */

ck_bound ck_bound_job(void) { return (ck_bound){.seconds = g_timeout}; }
ck_bound ck_bound_return(double seconds, char *why, size_t whylen)
{
    return (ck_bound){.seconds = seconds, .why = why, .whylen = whylen};
}

/* What a bound does with a failure: end the job, or say why and return it. */
static int failed(ck_bound b, int rc, const char *why)
{
    if (!b.why) ck_watch_abort("%s", why);
    if (b.why != why) snprintf(b.why, b.whylen, "%s", why);
    return rc;
}

/* A bounded collective: started nonblocking (MPI's answer in `started`),
 * waited for with the bound. */
static int finish(ck_bound b, MPI_Request *rq, int started, const char *what)
{
    char mine[1536];
    char *why = b.why ? b.why : mine;
    const size_t cap = b.why ? b.whylen : sizeof mine;
    if (started != MPI_SUCCESS) {
        snprintf(why, cap, "rank %d: MPI failed to start %s", g_rank, what);
        return failed(b, CK_ERR_TRANSPORT, why);
    }
    const int rc = ck_watch_wait(rq, b.seconds, what, why, cap);
    return rc ? failed(b, rc, why) : CK_SUCCESS;
}

/* Without a bound: the blocking collective's answer (`done`) as the family's. */
static int blocking(ck_bound b, int done, const char *what)
{
    char why[256];
    if (done == MPI_SUCCESS) return CK_SUCCESS;
    snprintf(why, sizeof why, "rank %d: MPI failed in %s", g_rank, what);
    return failed(b, CK_ERR_TRANSPORT, why);
}

#define UNBOUNDED(b) (!((b).seconds > 0))

int ck_bounded_barrier(ck_bound b, MPI_Comm comm, const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Barrier(comm), what);
    return finish(b, &rq, MPI_Ibarrier(comm, &rq), what);
}

int ck_bounded_bcast(ck_bound b, void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Bcast(buf, n, t, root, comm), what);
    return finish(b, &rq, MPI_Ibcast(buf, n, t, root, comm, &rq), what);
}

int ck_bounded_allreduce(ck_bound b, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                         const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Allreduce(s, r, n, t, op, comm), what);
    return finish(b, &rq, MPI_Iallreduce(s, r, n, t, op, comm, &rq), what);
}

int ck_bounded_reduce(ck_bound b, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                      const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Reduce(s, r, n, t, op, root, comm), what);
    return finish(b, &rq, MPI_Ireduce(s, r, n, t, op, root, comm, &rq), what);
}

int ck_bounded_gather(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt, int root,
                      MPI_Comm comm, const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Gather(s, n, st, r, m, rt, root, comm), what);
    return finish(b, &rq, MPI_Igather(s, n, st, r, m, rt, root, comm, &rq), what);
}

int ck_bounded_gatherv(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, const int *counts,
                       const int *displs, MPI_Datatype rt, int root, MPI_Comm comm, const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Gatherv(s, n, st, r, counts, displs, rt, root, comm), what);
    return finish(b, &rq, MPI_Igatherv(s, n, st, r, counts, displs, rt, root, comm, &rq), what);
}

int ck_bounded_allgather(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt,
                         MPI_Comm comm, const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Allgather(s, n, st, r, m, rt, comm), what);
    return finish(b, &rq, MPI_Iallgather(s, n, st, r, m, rt, comm, &rq), what);
}

int ck_bounded_allgatherv(ck_bound b, const void *s, int n, MPI_Datatype st, void *r, const int *counts,
                          const int *displs, MPI_Datatype rt, MPI_Comm comm, const char *what)
{
    MPI_Request rq;
    if (UNBOUNDED(b)) return blocking(b, MPI_Allgatherv(s, n, st, r, counts, displs, rt, comm), what);
    return finish(b, &rq, MPI_Iallgatherv(s, n, st, r, counts, displs, rt, comm, &rq), what);
}

/* The abort-on-timeout family at the watchdog's bound (the older names). */
void ck_watch_barrier(MPI_Comm comm, const char *what) { ck_bounded_barrier(ck_bound_job(), comm, what); }

void ck_watch_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, const char *what)
{
    ck_bounded_bcast(ck_bound_job(), buf, n, t, root, comm, what);
}

void ck_watch_allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, const char *what)
{
    ck_bounded_allreduce(ck_bound_job(), s, r, n, t, op, comm, what);
}

void ck_watch_reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                     const char *what)
{
    ck_bounded_reduce(ck_bound_job(), s, r, n, t, op, root, comm, what);
}

void ck_watch_gather(const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt, int root, MPI_Comm comm,
                     const char *what)
{
    ck_bounded_gather(ck_bound_job(), s, n, st, r, m, rt, root, comm, what);
}

void ck_watch_gatherv(const void *s, int n, MPI_Datatype st, void *r, const int *counts, const int *displs,
                      MPI_Datatype rt, int root, MPI_Comm comm, const char *what)
{
    ck_bounded_gatherv(ck_bound_job(), s, n, st, r, counts, displs, rt, root, comm, what);
}

void ck_watch_allgather(const void *s, int n, MPI_Datatype st, void *r, int m, MPI_Datatype rt, MPI_Comm comm,
                        const char *what)
{
    ck_bounded_allgather(ck_bound_job(), s, n, st, r, m, rt, comm, what);
}

void ck_watch_finalize(void)
{
    /* MPI_Finalize waits for every rank: a rank stopped after the last
     * collective would hold the others there forever. Meet first, bounded. */
    ck_watch_phase("finish");
    ck_watch_barrier(MPI_COMM_WORLD, "MPI_Finalize");
    if (g_watch != MPI_COMM_NULL) MPI_Comm_free(&g_watch);
    MPI_Finalize();
}
