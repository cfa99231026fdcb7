/*
 * collcheck.c — the checker's driver: runs a matrix of all-reduce cases
 * (count x dtype x op x in-place x alignment x inputs; matrix.c) through
 * ck_allreduce for each selected algorithm (options.c) and checks every call
 * (case.c: result, guards, protocol, traffic, messages).
 *
 * Every case is called --repeat times (default 2), each call with other
 * inputs (the salt of the encoding, or the seed of the random floats), so
 * state kept from one call to the next fails the next; a large --repeat is a
 * stress test for nondeterministic bugs (races), and a failure says which
 * call it was. The ranks agree after every call, so the calls stop together
 * at the first failure.
 *
 * Random-float cases (sum and avg on f32, f64, bf16): each rank checks its
 * result against the exact sum within the rounding bound of any summation
 * order (random.c), and here the ranks compare hashes of their results: ranks
 * whose result differs in any bit from the majority's are named, with the
 * first element that differs — a data-parallel job whose replicas end with
 * different numbers drifts apart.
 *
 * The case's label is printed (and flushed) before it runs and its result
 * after, on the same line: a crash mid-matrix leaves the case it was in on
 * the screen.
 *
 * Messages left behind: once every rank has returned from a call, a message
 * that arrived and that no receive matched (the MPI transport) fails the
 * call, naming its sender, receiver, tag and size.
 *
 * Hangs: the communicator's watchdog turns a hang inside an algorithm into
 * CK_ERR_TIMEOUT with "rank R waited for rank Q at step S"; the checker's own
 * agreement among ranks is polled with a deadline too; a call stuck in the
 * algorithm's own code on every rank (no wait anywhere) is ended by a thread
 * that watches its progress, and one that keeps posting messages by a bound
 * on their number (runaway calls, below): the run ends within a bound
 * whatever the algorithm does.
 *
 * Rank 0 prints one line per case and the closing line "N passed, M failed";
 * the exit code is 0 only when nothing failed (2 for bad arguments, or for
 * options that leave no case to run).
 *
 * An algorithm that ends the program (exit(), MPI_Finalize and exit, a
 * return from a handler that exits) must not pass for a run that ended well:
 * while the cases run, an exit handler turns any exit into status 1 with a
 * line that names the rank and the case. (Not under SimGrid SMPI, where the
 * simulated ranks share one process.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__) && !defined(COLLKIT_SMPI)
#include <malloc.h>
#endif
#include "check_cli.h"
#include "results.h"
#include "encoding.h"   /* cc_format */
#include "collkit_util.h"

/* ------------------------------------------------------------ agreement */

/* The checker's agreement among ranks goes through the library's bounded
 * collectives with a returning bound: it never blocks in an MPI collective
 * (a rank that is gone or stuck must not hang the others), and a timeout is
 * a verdict on the algorithm under test, said by the checker, not an end of
 * the job. Without a deadline (--timeout 0, the default under SimGrid SMPI)
 * the blocking form: under SMPI every poll costs simulated time and its
 * nonblocking collectives are naive (MPI_Iallreduce sends p^2 messages). */
#define AGREEMENT "the checker's agreement after the call"
static char g_stuck[1536];   /* the watchdog's sentence when a control wait ran out */

static ck_bound ctl_bound(double limit) { return ck_bound_return(limit, g_stuck, sizeof g_stuck); }

/* A bounded collective's answer as the agreement reads it: 0 done, 1 a
 * timeout (g_stuck says who did not come), -1 MPI failed. */
static int agreed(int rc) { return rc == CK_SUCCESS ? 0 : rc == CK_ERR_TIMEOUT ? 1 : -1; }

static int agree_max(const int *in, int *out, int n, MPI_Comm ctl, double limit)
{
    return agreed(ck_bounded_allreduce(ctl_bound(limit), in, out, n, MPI_INT, MPI_MAX, ctl, AGREEMENT));
}

/* Messages that arrived for this rank and that no receive matched. Called
 * when every rank has returned from the call (after a barrier): the
 * algorithm posts no receive any more, so a message waiting on the MPI
 * transport's communicator is one it sent and never received — the next call
 * would take it for one of its own (a stale value, or a size mismatch blamed
 * on the wrong call). Each one is received here (drained) and the first is
 * named. Only the MPI transport: on shm and CUDA IPC a send waits for its
 * receive, so an unmatched one is a hang the watchdog names. */
static void stray_messages(ck_comm *comm, const ck_algo *algo, cc_result *res)
{
    if (res->status != CK_SUCCESS || strcmp(ck_comm_transport_name(comm), "mpi")) return;
    MPI_Comm mc = ck_comm_mpi(comm);
    int n = 0, src = -1, tag = -1, bytes = 0;
    for (int k = 0; k < 4096; k++) {
        int found = 0, got = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, mc, &found, &st) != MPI_SUCCESS || !found) break;
        MPI_Get_count(&st, MPI_BYTE, &got);
        void *sink = malloc(got > 0 ? (size_t)got : 1);
        if (!sink) break;
        MPI_Recv(sink, got, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, mc, MPI_STATUS_IGNORE);
        free(sink);
        if (!n++) { src = st.MPI_SOURCE; tag = st.MPI_TAG; bytes = got; }
    }
    if (!n) return;
    ck_sbuf m;
    ck_sbuf_init(&m, res->msg, sizeof res->msg);
    m.len = strlen(res->msg);
    ck_sbuf_sep(&m, "; ");
    ck_sbuf_add(&m, "unmatched message: rank %d sent %d B to rank %d (tag %d) and no receive of '%s' took it (still "
                    "waiting when every rank had returned)", src, bytes, ck_comm_rank(comm), tag, algo->name);
    if (n > 1) ck_sbuf_add(&m, " (and %d more message%s like it)", n - 1, n == 2 ? "" : "s");
    ck_sbuf_add(&m, "; every send needs its receive in the same call, or the next call takes it for one of its own");
    res->fail = 1;
}

static void case_label(char *out, size_t cap, const cc_case *c, const ck_algo *a, int width)
{
    snprintf(out, cap, "%-*s n=%-8zu %-4s %-4s %-12s%s%s", width, a->name, c->count, ck_dtype_name(c->dt),
             c->coll == CK_COLL_ALLGATHER ? "-" : ck_op_name(c->op), c->inplace ? "in-place" : "out-of-place", c->misaligned ? " misaligned" : "",
             c->random ? " random" : "");
}

/* A failing rank's status, ranked for who speaks: a protocol error names the
 * cause (a receive of the wrong size, a request left behind), a watchdog
 * timeout the step where a rank got stuck, anything else comes after. */
static int speaks_first(const cc_result *r)
{
    if (r->status == CK_ERR_PROTOCOL) return 4;
    /* A watchdog that also found the message its receive missed (another
     * tag, another peer) names the mistake, not only where it stuck. */
    if (r->status == CK_ERR_TIMEOUT) return strstr(r->msg, "waits unreceived") ? 3 : 2;
    /* A rank whose bytes or messages only were off speaks after one whose
     * result or guard bytes are wrong: a wrong value says more. */
    if (!strncmp(r->msg, "traffic:", 8) || !strncmp(r->msg, "messages:", 9)) return 0;
    return 1;
}

/* Random-float cases: the ranks' results must be identical, bit for bit.
 * Hashes are gathered; on a difference the lowest rank of the largest group
 * of equal results sends its result to all, and every rank outside that group
 * fails, naming the ranks on each side and its first differing element.
 * Returns 0, or nonzero when the other ranks did not answer in time. */
static int compare_across_ranks(MPI_Comm ctl, double limit, const cc_case *cs, const void *mine, void *theirs,
                                cc_result *res, uint64_t *hashes, int *any_differ)
{
    int rank, p;
    MPI_Comm_rank(ctl, &rank);
    MPI_Comm_size(ctl, &p);
    *any_differ = 0;
    if (agreed(ck_bounded_allgather(ctl_bound(limit), &res->hash, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, ctl,
                                    AGREEMENT)))
        return -1;
    int ref = 0, best = 0;
    for (int q = 0; q < p; q++) {
        int same = 0;
        for (int k = 0; k < p; k++) same += hashes[k] == hashes[q];
        if (same > best) { best = same; ref = q; }   /* ties: the lowest rank's group */
    }
    if (best == p) return 0;
    *any_differ = 1;
    const size_t es = ck_dtype_size(cs->dt), bytes = cs->count * es;
    if (rank == ref) memcpy(theirs, mine, bytes);
    if (agreed(ck_bounded_bcast(ctl_bound(limit), theirs, (int)bytes, MPI_BYTE, ref, ctl, AGREEMENT))) return -1;
    if (hashes[rank] == hashes[ref]) return 0;
    size_t first = cs->count, ndiff = 0;
    for (size_t i = 0; i < cs->count; i++)
        if (memcmp((const char *)mine + i * es, (const char *)theirs + i * es, es)) {
            if (first == cs->count) first = i;
            ndiff++;
        }
    ck_sbuf m;
    ck_sbuf_init(&m, res->msg, sizeof res->msg);
    m.len = strlen(res->msg);
    ck_sbuf_sep(&m, "; ");
    ck_sbuf_add(&m, "rank %d's result differs from rank %d's in %zu of %zu elements (random float inputs): ranks must "
                    "end with bitwise identical results, but the ranks' results fall into groups", rank, ref, ndiff,
                cs->count);
    /* The groups of equal results, each named by its ranks (in rank order). */
    int groups = 0;
    for (int q = 0; q < p && groups < 16; q++) {
        int seen = 0;
        for (int k = 0; k < q; k++) seen |= hashes[k] == hashes[q];
        if (seen) continue;
        ck_sbuf_add(&m, " {");
        for (int k = q, n = 0; k < p; k++)
            if (hashes[k] == hashes[q]) ck_sbuf_add(&m, n++ ? ",%d" : "%d", k);
        ck_sbuf_add(&m, "}");
        groups++;
    }
    if (first < cs->count) {
        char a[64], b[64];
        cc_format(a, sizeof a, theirs, first, cs->dt);
        cc_format(b, sizeof b, mine, first, cs->dt);
        ck_sbuf_add(&m, "; first: element %zu: rank %d has %s, rank %d has %s", first, ref, a, rank, b);
    }
    ck_sbuf_add(&m, " (the ranks add the same inputs in different orders: a summation order that depends on the rank)");
    res->fail = 1;
    return 0;
}

/* ------------------------------------------------------------ early exit */

#ifndef COLLKIT_SMPI
static int running;             /* the cases are running: no exit may end the program now */
static int running_rank;
static char running_label[160]; /* the case being run */

static void early_exit(void)
{
    if (!running) return;
    running = 0;
    fflush(stdout);
    fprintf(stderr, "\ncollcheck: the program ended before the checker finished: rank %d exited during '%s' "
                    "(an algorithm must return to the checker, never end the program)\n", running_rank, running_label);
    fflush(stderr);
    _Exit(1);   /* the status of a failed run, whatever status exit() was given */
}
#endif

static void cases_running(int on, int rank, const char *label)
{
#ifndef COLLKIT_SMPI
    static int registered;
    if (on && !registered) registered = atexit(early_exit) == 0;
    running_rank = rank;
    if (label) {   /* the label without its column padding */
        size_t n = 0;
        for (const char *c = label; *c && n + 1 < sizeof running_label; c++)
            if (*c != ' ' || (n > 0 && running_label[n - 1] != ' ')) running_label[n++] = *c;
        while (n > 0 && running_label[n - 1] == ' ') n--;
        running_label[n] = 0;
    }
    running = on;
#else
    (void)on; (void)rank; (void)label;
#endif
}

/* ------------------------------------------------------------ runaway calls
 * The watchdog bounds every wait in the library, and a rank that waits asks
 * the others where they are. An algorithm stuck in its own code on every
 * rank (an endless loop: an unsigned index counted down past 0, a chunk
 * offset never advanced) waits nowhere, so no rank ever asks: the run would
 * hang for good. A thread watches each call: one that makes no progress (no
 * ck_step, no message posted) for RUNAWAY_BOUNDS watchdog bounds ends the
 * job, naming the rank, the case and the step the algorithm last announced.
 * Every wait-based hang ends within two bounds (the watchdog's roll call,
 * then one bound more), so this one never fires first on a rank that waits. */
#ifndef COLLKIT_SMPI
#include <pthread.h>
#include <stdatomic.h>

#define RUNAWAY_BOUNDS 2.5

static struct {
    atomic_int   in_call;          /* 1 while this rank runs a call */
    atomic_llong progress_us;      /* ck_now() of the call's start, or its last step or post */
    atomic_int   step;             /* the step it last announced; -1 none yet */
    _Atomic(const char *) phase;   /* that step's phase (a static string, may be NULL) */
    pthread_mutex_t mu;            /* label and algo, written between calls */
    char         label[160];
    char         algo[64];
    int          rank, rank_set, started;
    double       bound;
    unsigned long long posts, post_bound;   /* the call's posts (its own thread only), their bound */
} rw = {.mu = PTHREAD_MUTEX_INITIALIZER};

static long long now_us(void) { return (long long)(ck_now() * 1e6); }

static void rw_step(void *ctx, int step, const char *phase)
{
    (void)ctx;
    atomic_store(&rw.step, step);
    atomic_store(&rw.phase, phase);
    atomic_store(&rw.progress_us, now_us());
}

static void rw_fire(const char *why);

/* Posts: progress, unless there are more of them than any schedule of the
 * call's size makes (one message per element and step is far below the
 * bound): an endless loop that keeps sending ends the job too. */
static void rw_message(void *ctx, int kind, const void *buf, size_t bytes, int peer, int step)
{
    (void)ctx; (void)kind; (void)buf; (void)bytes; (void)peer;
    atomic_store(&rw.progress_us, now_us());
    if (++rw.posts <= rw.post_bound) return;
    char why[800];
    pthread_mutex_lock(&rw.mu);
    snprintf(why, sizeof why, "rank %d: '%s' posted more than %llu messages in one call of '%s' (step %d): an endless "
             "loop that keeps sending? (a loop whose offset or index never advances)", rw.rank, rw.algo,
             (unsigned long long)rw.post_bound, rw.label, step);
    pthread_mutex_unlock(&rw.mu);
    rw_fire(why);
}

static void *rw_thread(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec t = {0, 200000000};
        nanosleep(&t, NULL);
        if (!atomic_load(&rw.in_call)) continue;
        const double idle = (double)(now_us() - atomic_load(&rw.progress_us)) / 1e6;
        if (idle < rw.bound) continue;
        pthread_mutex_lock(&rw.mu);
        if (!atomic_load(&rw.in_call)) { pthread_mutex_unlock(&rw.mu); continue; }
        const int step = atomic_load(&rw.step);
        const char *phase = atomic_load(&rw.phase);
        char where[160] = "before its first ck_step";
        if (step >= 0) snprintf(where, sizeof where, "after it announced step %d%s%s%s", step, phase ? " (" : "",
                                phase ? phase : "", phase ? ")" : "");
        char why[800];
        snprintf(why, sizeof why, "rank %d: '%s' made no progress for %.1f s (no step announced, no message posted) "
                 "%s in '%s', and waits in nothing the watchdog bounds: an endless loop in the algorithm's own "
                 "code? (a loop whose index never reaches its bound: an unsigned counted down past 0, an offset "
                 "never advanced; or a peer's flag waited for in a plain loop, not ck_shm_wait)", rw.rank, rw.algo, idle, where, rw.label);
        pthread_mutex_unlock(&rw.mu);
        rw_fire(why);
    }
    return NULL;
}

/* End the job: rank 0 prints the case's FAIL, the others their reason on
 * stderr a moment later. No MPI call (the watching thread makes none): the
 * launcher ends the other ranks when one exits with a failure. */
static void rw_fire(const char *why)
{
    atomic_store(&rw.in_call, 0);
    if (rw.rank == 0) printf("FAIL  %s\n", why);
    else {
        struct timespec t = {1, 0};
        nanosleep(&t, NULL);
        fprintf(stderr, "\ncollcheck: %s\n", why);
    }
    fflush(stdout);
    fflush(stderr);
    _Exit(1);
}

/* Watch the calls made on comm from now on: their posts, and with a
 * watchdog bound (timeout > 0) their progress. */
static void runaway_watch(ck_comm *comm, int rank, double timeout)
{
    static const ck_observer obs = {.step = rw_step, .message = rw_message};
    ck_observe(comm, &obs);
    if (!rw.rank_set) {   /* once, before the thread that reads it starts */
        rw.rank = rank;
        rw.rank_set = 1;
    }
    if (rw.started || !(timeout > 0)) return;
    rw.bound = RUNAWAY_BOUNDS * timeout;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rw.started = pthread_create(&t, &a, rw_thread, NULL) == 0;
    pthread_attr_destroy(&a);
}

/* A call of algo in the case cases_running last named, of count elements
 * over p ranks. */
static void runaway_begin(const ck_algo *algo, size_t count, int p)
{
    rw.posts = 0;
    rw.post_bound = 64ull * (count + 2) * (unsigned long long)p + 4096;
    pthread_mutex_lock(&rw.mu);
    snprintf(rw.algo, sizeof rw.algo, "%s", algo->name);
    snprintf(rw.label, sizeof rw.label, "%s", running_label);
    atomic_store(&rw.step, -1);
    atomic_store(&rw.phase, NULL);
    atomic_store(&rw.progress_us, now_us());
    atomic_store(&rw.in_call, 1);
    pthread_mutex_unlock(&rw.mu);
}

static void runaway_end(void) { atomic_store(&rw.in_call, 0); }

/* The step this rank last announced, for the schedules of a hang. */
static void runaway_where(cc_result *res)
{
    const char *phase = atomic_load(&rw.phase);
    res->step = atomic_load(&rw.step);
    snprintf(res->phase, sizeof res->phase, "%s", phase ? phase : "");
}
#else
static void runaway_where(cc_result *res) { res->step = -1; res->phase[0] = 0; }
static void runaway_watch(ck_comm *comm, int rank, double timeout) { (void)comm; (void)rank; (void)timeout; }
static void runaway_begin(const ck_algo *algo, size_t count, int p) { (void)algo; (void)count; (void)p; }
static void runaway_end(void) {}
#endif

/* ------------------------------------------------------------ leaks
 * Memory an algorithm takes in every call and never gives back (a malloc, a
 * ck_alloc without its free) grows the heap by about a buffer per call. The
 * heap in use (glibc's count, mmapped blocks included) after a case's first
 * call and after its second: a growth of at least the call's buffer size and
 * LEAK_FLOOR bytes fails the call. Below that floor the program's own
 * allocations (MPI's free lists, about a KiB per call, 16 KiB at a million
 * elements) would blur it, so a small leak shows in the large cases only.
 * Without glibc (or under a sanitizer's allocator, where the count stays 0)
 * nothing is measured. Only with --leaks: the MPI library's own buffers for
 * large messages (free lists that grow and are kept) grew the heap by 10 MB
 * between two calls of a correct tree at p = 3, so a default verdict on it
 * could fail correct work. */
#define LEAK_FLOOR (256u << 10)

static size_t heap_in_use(void)
{
#if defined(__GLIBC__) && !defined(COLLKIT_SMPI) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
#else
    return 0;
#endif
}

/* After call `call` (0-based) of a case whose buffers hold `bytes`: a leak
 * since the previous call of the same case goes into res. */
static void check_leak(unsigned call, size_t bytes, cc_result *res)
{
    static size_t before;
    const size_t now = heap_in_use();
    if (call > 0 && now > before) {
        const size_t grew = now - before;
        if (grew >= LEAK_FLOOR && grew >= bytes) {
            const size_t len = strlen(res->msg);
            snprintf(res->msg + len, sizeof res->msg - len, "%smemory: the heap grew by %zu B from call %u to call "
                     "%u of this case (buffers of %zu B) and was not given back: memory taken in every call and "
                     "never freed (a malloc or ck_alloc without its free?)", len ? "; " : "", grew, call, call + 1,
                     bytes);
            if (!res->claim[0]) snprintf(res->claim, sizeof res->claim, "memory not freed");
            res->fail = 1;
        }
    }
    before = now;
}

static void finish_abort(int rank, int passed, int failed, const char *why)
{
    cases_running(0, rank, NULL);   /* the checker's own ending */
    if (rank == 0) {
        printf("collcheck: %s\n", why);
        printf("%d passed, %d failed\n", passed, failed);
        fflush(stdout);
        fflush(stderr);
        struct timespec t = {0, 300000000};   /* let the launcher forward the output */
        nanosleep(&t, NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The other ranks give rank 0 time to print, then end themselves. */
    struct timespec t = {1, 0};
    nanosleep(&t, NULL);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* --results: rank 0 writes every rank's record of every call (results.h).
 * The file is the product of a graded run: a write that fails (a full disk)
 * fails the run. */
static FILE *results_open(const cc_options *o, int rank, int p, ck_comm *comm, MPI_Comm ctl)
{
    int ok = 1;
    FILE *f = NULL;
    if (rank == 0 && o->results) {
        char why[1200];
        if (ck_output_free(o->results, o->overwrite, why, sizeof why)) {
            fprintf(stderr, "collcheck: --results %s\n", why);
            ok = 0;
        } else if (!(f = ck_output_open(o->results, why, sizeof why))) {
            fprintf(stderr, "collcheck: cannot write --results '%s': %s\n", o->results, why);
            ok = 0;
        } else
            fprintf(f, CC_RESULTS_MAGIC " collcheck p=%d seed=%llu chunk=%zu transport=%s repeat=%d coll=%s\n", p,
                    (unsigned long long)o->seed, ck_comm_config(comm)->chunk_bytes, ck_comm_transport_name(comm),
                    o->repeat, ck_coll_name(o->coll));
    }
    /* Bounded as every wait: the job ends if a rank does not come. */
    ck_bounded_bcast(ck_bound_comm(comm), &ok, 1, MPI_INT, 0, ctl, "the check of --results");
    return ok ? f : (FILE *)-1;
}

static void results_write(FILE *f, const ck_algo *algo, int k, const cc_case *cs, unsigned call,
                          const cc_record *all, int p, const void *values)
{
    for (int q = 0; q < p; q++) {
        fprintf(f, "call %s %d %u %d count=%zu dtype=%s op=%s inplace=%d misaligned=%d random=%d", algo->name, k,
                call, q, cs->count, ck_dtype_name(cs->dt), ck_op_name(cs->op), cs->inplace, cs->misaligned,
                cs->random);
        cc_results_write_record(f, &all[q]);
        fputc('\n', f);
    }
    if (values) {
        fprintf(f, "values %s %d %u", algo->name, k, call);
        cc_results_write_values(f, values, cs->count * ck_dtype_size(cs->dt));
    }
}

/* The probe after a failed case (on a fresh communicator): the failed call
 * made again, three times, with the same inputs. The same wrong result each
 * time is a deterministic bug; the first repeat like the failure and the
 * others right, a bug of a communicator's first call; the first right and
 * the others wrong, or all right where a later call of the case failed with
 * the previous call's result (CLAIM: rank 0's), state kept from call to call;
 * anything else, a result that changes between identical calls:
 * nondeterministic. Returns CC_PROBE_*, or -1 when a repeat timed out (the
 * run cannot go on). */
static int probe_case(ck_comm *comm, const ck_algo *algo, const cc_case *cs, const cc_result *orig, MPI_Comm ctl,
                      double limit, const char *claim)
{
    cc_result r[4];
    r[0] = *orig;
    int loc[8] = {0}, glob[8];
    for (int k = 1; k <= 3; k++) {
        runaway_begin(algo, cs->count, ck_comm_size(comm));
        cc_run_case(comm, algo, cs, orig->call, &r[k], NULL);
        runaway_end();
        if (agreed(ck_bounded_barrier(ctl_bound(limit), ctl, AGREEMENT))) return -1;
        stray_messages(comm, algo, &r[k]);
        loc[k - 1] = r[k].fail;                                                            /* 0..2: failed */
        loc[k + 2] = r[k].fail != r[k - 1].fail || (r[k].fail && r[k].hash != r[k - 1].hash);   /* 3..5: changed */
        loc[6] |= r[k].poisoned;
    }
    if (agree_max(loc, glob, 8, ctl, limit) || glob[6]) return -1;
    const int f1 = glob[0], f2 = glob[1], f3 = glob[2];
    if (!glob[3] && !glob[4] && !glob[5]) return CC_PROBE_SAME;
    if (!glob[3] && f1 && !f2 && !f3 && orig->call == 0) return CC_PROBE_FIRST_ONLY;
    if (!f1 && f2 && f3) return CC_PROBE_STATE;
    if (!f1 && !f2 && !f3 && orig->call > 0 && claim && strstr(claim, "previous")) return CC_PROBE_STATE;
    return CC_PROBE_DIFFERS;
}

static int setup_comm(ck_comm **comm, const cc_options *o)
{
    int rc = ck_comm_create(MPI_COMM_WORLD, o->mem, comm);
    if (rc) return rc;
    ck_config cfg = *ck_comm_config(*comm);
    if (o->timeout >= 0) cfg.timeout_s = o->timeout;   /* else COLLKIT_TIMEOUT or the default */
    if (o->chunk) cfg.chunk_bytes = o->chunk;
    cfg.validate = 1;
    if ((rc = ck_comm_set_config(*comm, &cfg))) return rc;
    runaway_watch(*comm, ck_comm_rank(*comm), cfg.timeout_s);
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ the run */

/* One run of the checker: what its steps share. */
typedef struct {
    cc_options o;
    int        rank, p;
    int        was_init;                 /* MPI was running before collcheck_main: leave it running */
    int        watching;                 /* ck_watch_init succeeded: the bounded finalize */
    MPI_Comm   ctl;                      /* the checker's own agreement, apart from the algorithm's traffic */
    ck_comm   *comm;                     /* the communicator under test (a fresh one after a failure) */
    cc_case   *cases;
    int        ncases, width;            /* width: of the algorithm names' column */
    FILE      *rf;                       /* --results, rank 0's; NULL: none */
    double     limit_ok, limit_late;     /* the agreement's deadlines (start_cases) */
    int        passed, failed;
    cc_result  res, *all;                /* this rank's call; every rank's (rank 0, on a failure) */
    cc_record *recs;                     /* every rank's record of the call (rank 0, --results) */
    uint64_t  *hashes;                   /* every rank's result hash (random-float cases) */
    unsigned char *mine, *theirs;        /* this rank's result and the majority's (random-float cases) */
    cc_outcome *outcomes;                /* rank 0: the algorithm's cases, for its pattern line */
} cc_run;

/* MPI, the watchdog, the same command line on every rank, and the
 * communicator under test. Returns 0, or the exit code. */
static int start_mpi(cc_run *r, int *argc, char ***argv)
{
    cc_set_seed(r->o.seed);
    MPI_Initialized(&r->was_init);
    if (!r->was_init) MPI_Init(argc, argv);
    /* Every wait bounded by --timeout, a stopped rank named (ck_watch_*). */
    if (ck_watch_init("collcheck")) return 2;
    r->watching = 1;
    ck_watch_set_timeout(r->o.timeout);
    /* Ranks given other options (--repeat, --chunk, ...) would run other
     * cases, and a correct algorithm would be blamed for it. */
    if (ck_same_command_line(MPI_COMM_WORLD, *argc, *argv, "collcheck")) return 2;
    /* Errors come back as codes (CK_ERR_TRANSPORT), e.g. a message longer than
     * the posted receive, instead of killing the job from inside MPI. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r->p);
    MPI_Comm_dup(MPI_COMM_WORLD, &r->ctl);
    const int rc = setup_comm(&r->comm, &r->o);
    if (rc && r->rank == 0)
        fprintf(stderr, "collcheck: cannot create a communicator for %s buffers: %s\n",
                r->o.mem == CK_MEM_CUDA ? "cuda" : "host", ck_strerror(rc));
    return rc ? 2 : 0;
}

/* "0 passed, 0 failed" would read as success: say what left no case
 * (every rank built the same empty matrix, so all stop here alike). */
static void say_no_case(const cc_options *o, int ncases, int p)
{
    if (ncases < 0) fprintf(stderr, "collcheck: out of memory building the case list\n");
    else if (o->count_text) {
        /* The counts at this p: none >= 0, or (random floats only, which
         * skip count 0) none >= 1. */
        long long most = -1;
        for (int i = 0; i < o->ncounts; i++) {
            long long v = o->counts[i].rel ? p + o->counts[i].v : o->counts[i].v;
            if (v > most) most = v;
        }
        if (most == 0 && o->inputs == 2)
            fprintf(stderr, "collcheck: no case to run: --inputs random checks counts >= 1 only, and --count "
                    "'%s' gives none at p = %d\n", o->count_text, p);
        else fprintf(stderr, "collcheck: no case to run: --count '%s' gives no count >= 0 at p = %d\n",
                     o->count_text, p);
    }
    else fprintf(stderr, "collcheck: no case to run at p = %d with these options\n", p);
}

static size_t case_bytes(const cc_case *c) { return c->count * ck_dtype_size(c->dt); }

/* The largest case's buffers, before any is allocated: about 8 times its
 * bytes per rank (send and receive buffers, each with a copy read back,
 * the expected result, the ranks' results compared, the algorithm's
 * scratch space). Returns 0 when they fit. */
static int check_memory(const cc_run *r)
{
    uint64_t largest = 0;
    for (int k = 0; k < r->ncases; k++)
        if (case_bytes(&r->cases[k]) > largest) largest = case_bytes(&r->cases[k]);
    char what[96];
    snprintf(what, sizeof what, "the largest case (%llu B)", (unsigned long long)largest);
    return ck_memory_fits(MPI_COMM_WORLD, 8 * largest + (16u << 20), "collcheck", what);
}

/* The cases, the memory they need, the --results file and the banner.
 * Returns 0, or the exit code. */
static int plan_cases(cc_run *r)
{
    r->ncases = cc_build_matrix(&r->o, r->p, &r->cases);
    if (r->ncases <= 0) {
        if (r->rank == 0) say_no_case(&r->o, r->ncases, r->p);
        return 2;
    }
    if (check_memory(r)) return 2;
    r->width = 6;
    for (int a = 0; a < r->o.nalgos; a++)
        if ((int)strlen(r->o.algos[a]->name) > r->width) r->width = (int)strlen(r->o.algos[a]->name);
    r->rf = results_open(&r->o, r->rank, r->p, r->comm, r->ctl);
    if (r->rf == (FILE *)-1) {
        r->rf = NULL;
        return 2;
    }
    if (r->rank == 0) {
        const ck_config *cfg = ck_comm_config(r->comm);
        printf("collcheck: %d rank%s, %s buffers (%s transport), %d cases per algorithm, "
               "timeout %g s, chunk %zu B%s\n", r->p, r->p == 1 ? "" : "s", r->o.mem == CK_MEM_CUDA ? "cuda" : "host",
               ck_comm_transport_name(r->comm), r->ncases, cfg->timeout_s, cfg->chunk_bytes,
               r->o.seed ? ", seeded inputs" : "");
        fflush(stdout);
    }
    return 0;
}

/* The agreement's deadlines and the buffers the agreement fills. A rank
 * whose own wait in the call ran out (the watchdog, --timeout) has waited
 * one bound already, and so has every rank that waited on the same missing
 * one: half a bound more is enough to meet them or to find out, by the roll
 * call, who is missing. A rank that finished the call waits a whole bound
 * for the others. So a stopped rank ends the run within 1.5 bounds (and a
 * second). */
static void start_cases(cc_run *r)
{
    const double timeout = ck_comm_config(r->comm)->timeout_s;
    r->limit_ok = timeout > 0 ? timeout : 0;
    r->limit_late = r->limit_ok / 2;
    const int root = r->rank == 0;
    size_t max_bytes = 0;
    for (int k = 0; k < r->ncases; k++)
        if (r->cases[k].random && case_bytes(&r->cases[k]) > max_bytes) max_bytes = case_bytes(&r->cases[k]);
    r->all = root ? malloc((size_t)r->p * sizeof *r->all) : NULL;
    r->recs = root ? malloc((size_t)r->p * sizeof *r->recs) : NULL;
    r->outcomes = root ? calloc((size_t)r->ncases, sizeof *r->outcomes) : NULL;
    r->hashes = malloc((size_t)r->p * sizeof *r->hashes);
    r->mine = max_bytes ? malloc(max_bytes) : NULL;
    r->theirs = max_bytes ? malloc(max_bytes) : NULL;
    if (!r->hashes || (root && (!r->all || !r->recs || !r->outcomes)) || (max_bytes && (!r->mine || !r->theirs)))
        finish_abort(r->rank, 0, 0, "out of memory");
}

/* What is said of an algorithm before its cases: no traffic counted (a
 * reference), or no message count declared (with --require-msgs a failure
 * of its own). Returns the failures it counts. */
static int announce_algorithm(const cc_run *r, const ck_algo *algo)
{
    if (algo->flags & CK_ALGO_REFERENCE) {
        if (r->rank == 0) { printf("%-*s traffic: not counted (reference)\n", r->width, algo->name); fflush(stdout); }
        return 0;
    }
    if (algo->msgs_sent) return 0;
    if (r->rank == 0) {
        printf("%-*s messages: message count not declared (msgs_sent): %s\n", r->width, algo->name,
               r->o.require_msgs ? "FAIL (--require-msgs)" : "not checked");
        fflush(stdout);
    }
    return r->o.require_msgs;
}

/* The agreement after a call did not complete: the run cannot go on. */
static void agreement_failed(const cc_run *r, int w)
{
    char why[2048];
    snprintf(why, sizeof why, "%s", w > 0 ? g_stuck : "MPI failed in the checker's agreement after the call");
    if (r->rank != 0) fprintf(stderr, "collcheck: %s\n", why);
    else printf("FAIL  %s\n", r->res.fail ? r->res.msg : "(no result from the other ranks)");
    finish_abort(r->rank, r->passed, r->failed + 1, why);
}

/* --results: every rank's record of the call, written by rank 0 (and on
 * disk before a later case can end the job). */
static int record_call(cc_run *r, const ck_algo *algo, int k, unsigned call, double limit)
{
    const cc_case *cs = &r->cases[k];
    const int w = agreed(ck_bounded_gather(ctl_bound(limit), &r->res.rec, (int)sizeof r->res.rec, MPI_BYTE, r->recs,
                                           (int)sizeof r->res.rec, MPI_BYTE, 0, r->ctl, AGREEMENT));
    if (w == 0 && r->rank == 0) {
        results_write(r->rf, algo, k, cs, call, r->recs, r->p, cs->random ? r->mine : NULL);
        fflush(r->rf);
    }
    return w;
}

/* Call `call` of case k, then the ranks' agreement on it. glob: failed,
 * poisoned, failed for another reason than a leak (the maximum over the
 * ranks). On a failure rank 0 has every rank's result in r->all. */
static void one_call(cc_run *r, const ck_algo *algo, int k, unsigned call, int glob[3], int *self_here)
{
    const cc_case *cs = &r->cases[k];
    cc_result *res = &r->res;
    runaway_begin(algo, cs->count, r->p);
    cc_run_case(r->comm, algo, cs, call, res, cs->random ? r->mine : NULL);
    runaway_end();
    runaway_where(res);
    const double limit = res->status == CK_ERR_TIMEOUT ? r->limit_late : r->limit_ok;
    /* Every rank has returned from the call: what is still waiting to be
     * received was never going to be. */
    int w = agreed(ck_bounded_barrier(ctl_bound(limit), r->ctl, AGREEMENT));
    if (w == 0) stray_messages(r->comm, algo, res);
    const int failed_else = res->fail;   /* for another reason than a leak */
    if (r->o.leaks) check_leak(call, case_bytes(cs), res);
    int loc[3] = {res->fail, res->poisoned, failed_else};
    if (w == 0) w = agree_max(loc, glob, 3, r->ctl, limit);
    if (w == 0 && !glob[0] && cs->random) {
        int differ = 0;
        w = compare_across_ranks(r->ctl, limit, cs, r->mine, r->theirs, res, r->hashes, &differ);
        glob[0] = differ;
    }
    res->rec.local_fail = res->fail;
    *self_here |= res->rec.ctr.bytes_sent_self || res->rec.ctr.msgs_sent_self;
    if (w == 0 && r->o.results) w = record_call(r, algo, k, call, limit);   /* every rank: rf is rank 0's alone */
    if (w == 0 && glob[0])
        w = agreed(ck_bounded_gather(ctl_bound(limit), res, (int)sizeof *res, MPI_BYTE, r->all, (int)sizeof *res,
                                     MPI_BYTE, 0, r->ctl, AGREEMENT));
    if (w != 0) agreement_failed(r, w);
}

/* One rank's result reads as another op (or an average): the claim holds
 * only if the other failing ranks read the same. Where they read otherwise
 * (max on one, min or an average on the next: with these inputs a single
 * rank's input reads as each), no op was applied: each holds some single
 * rank's input. */
static int whole_result_reading(const char *claim)
{
    return !strncmp(claim, "the reduction looks like ", 25) || !strncmp(claim, "the expected value / p", 22);
}

static void say_across_ranks(cc_run *r, int k, int who)
{
    const cc_result *all = r->all;
    if (who < 0 || !whole_result_reading(all[who].claim)) return;
    int other = -1;
    for (int q = 0; q < r->p && other < 0; q++)
        if (q != who && all[q].fail && whole_result_reading(all[q].claim) && strcmp(all[q].claim, all[who].claim))
            other = q;
    if (other < 0) return;
    printf("    across ranks: rank %d's result reads \"%s\", rank %d's \"%s\": no one op fits every rank, so no "
           "reduction was done: each rank holds some single rank's input (a copy or a forward where a reduction "
           "belongs)\n", who, all[who].claim, other, all[other].claim);
    snprintf(r->outcomes[k].claim, sizeof r->outcomes[k].claim, "no reduction: each rank holds a single rank's input");
}

/* Rank 0's FAIL for case k. The first failing rank speaks; a rank with a
 * protocol error (its message names the cause) or whose watchdog fired (its
 * message names the stuck step; first the one that found the message its
 * receive missed) goes first. */
static void print_failure(cc_run *r, int k, const char *label)
{
    const cc_result *all = r->all;
    int who = -1, nf = 0;
    for (int q = 0; q < r->p; q++)
        if (all[q].fail) {
            nf++;
            if (who < 0 || speaks_first(&all[q]) > speaks_first(&all[who])) who = q;
        }
    /* A watchdog printed to stderr after the label: start afresh. */
    int stderr_spoke = 0;
    for (int q = 0; q < r->p; q++) stderr_spoke |= all[q].fail && all[q].status == CK_ERR_TIMEOUT;
    if (stderr_spoke) printf("\n%s  ", label);
    printf("FAIL  ");
    if (who >= 0 && (all[who].call > 0 || (r->o.repeat_given && r->o.repeat > 1)))
        printf("call %u of %d: ", all[who].call + 1, r->o.repeat);
    printf("%s", who >= 0 ? all[who].msg : "?");
    if (nf > 1) {
        printf(" [failed on %d of %d ranks:", nf, r->p);
        for (int q = 0; q < r->p; q++)
            if (all[q].fail) printf(" %d", q);
        printf("]");
    }
    printf("\n");
    if (r->o.verbose)
        for (int q = 0; q < r->p; q++)
            if (all[q].fail && q != who) printf("    %s\n", all[q].msg);
    if (who >= 0) snprintf(r->outcomes[k].claim, sizeof r->outcomes[k].claim, "%s", all[who].claim);
    if (who >= 0) r->outcomes[k].call = all[who].call;
    say_across_ranks(r, k, who);
    /* A hang: named where the schedules diverged, not only where noticed. */
    char sched[1200];
    if (who >= 0 && all[who].status == CK_ERR_TIMEOUT &&
        cc_schedules(sched, sizeof sched, r->outcomes[k].claim, sizeof r->outcomes[k].claim, all, r->p, who))
        printf("    schedules: %s\n", sched);
    fflush(stdout);
}

/* Case k of algo: its label (announced before it runs: if a rank crashes,
 * this is the case), its calls until one fails, and rank 0's PASS or FAIL.
 * glob as one_call leaves it. */
static void check_case(cc_run *r, const ck_algo *algo, int k, int glob[3], int *self_here)
{
    const cc_case *cs = &r->cases[k];
    char label[160], phase[96];
    case_label(label, sizeof label, cs, algo, r->width);
    snprintf(phase, sizeof phase, "case '%.80s'", label);
    ck_watch_phase(phase);
    cases_running(1, r->rank, label);
    if (r->rank == 0) { printf("%s  ", label); fflush(stdout); }
    /* No elements, no inputs to vary: one call says it all. */
    const int calls = cs->count ? r->o.repeat : 1;
    for (int call = 0; call < calls && !glob[0]; call++) one_call(r, algo, k, (unsigned)call, glob, self_here);
    if (r->rank == 0) r->outcomes[k] = (cc_outcome){.cs = *cs, .failed = glob[0]};
    if (!glob[0]) {
        r->passed++;
        if (r->rank == 0) { printf("PASS\n"); fflush(stdout); }
        return;
    }
    r->failed++;
    if (r->rank == 0) print_failure(r, k, label);
}

/* A failed algorithm may have left unmatched messages behind: the next case
 * starts on a fresh communicator. */
static void fresh_comm(cc_run *r)
{
    cc_release_buffers();
    ck_comm_destroy(r->comm);
    if (setup_comm(&r->comm, &r->o)) finish_abort(r->rank, r->passed, r->failed, "cannot recreate the communicator");
}

/* The failed call of case k again, with the same inputs (probe_case), and
 * what rank 0 says of it. */
static void probe_failure(cc_run *r, const ck_algo *algo, int k)
{
    int kind = probe_case(r->comm, algo, &r->cases[k], &r->res, r->ctl, r->limit_ok,
                          r->rank == 0 ? r->outcomes[k].claim : NULL);
    if (kind < 0)
        finish_abort(r->rank, r->passed, r->failed, "stopping: a repeat of a failed call timed out, so later cases "
                     "could not be trusted");
    if (r->rank == 0) {
        r->outcomes[k].probe = kind;
        if (kind == CC_PROBE_DIFFERS && !strstr(r->outcomes[k].claim, "previous"))
            printf("    the same call repeated with the same inputs gave a different result: nondeterministic\n");
        else if (kind == CC_PROBE_FIRST_ONLY)
            printf("    the same call repeated with the same inputs: wrong on a fresh communicator's first call, "
                   "right on the next\n");
        fflush(stdout);
    }
    fresh_comm(r);
}

/* After a failed case: stop when messages may still be in flight, else a
 * fresh communicator, and for the first few failed cases of each algorithm
 * (each costs three calls) the probe. A leak alone is not probed: the
 * repeats, on a fresh communicator, would measure its set-up, not the
 * algorithm. */
static void print_pattern(const cc_run *r, const ck_algo *algo, int ncases, int algo_failed);

static void after_failure(cc_run *r, const ck_algo *algo, int k, const int glob[3], int *probes, int algo_failed)
{
    const cc_case *cs = &r->cases[k];
    if (glob[1]) {   /* the run stops here: the pattern line over the cases run so far first */
        print_pattern(r, algo, k + 1, algo_failed);
        finish_abort(r->rank, r->passed, r->failed,
                     "stopping: after a watchdog timeout or transport error messages may still be in "
                     "flight, so later cases could not be trusted");
    }
    fresh_comm(r);
    if (cs->count && !cs->random && *probes < 6 && glob[2]) {
        ++*probes;
        probe_failure(r, algo, k);
    }
}

/* The lines after an algorithm's cases: what its failed cases share, and
 * traffic it counted itself (ck_count_traffic, part of the traffic check and
 * named: the transport did not carry it). */
static void print_pattern(const cc_run *r, const ck_algo *algo, int ncases, int algo_failed)
{
    if (r->rank != 0 || !algo_failed) return;
    char text[2000];
    if (cc_pattern(text, sizeof text, r->outcomes, ncases, r->p))
        printf("%-*s pattern over %d cases, %d failed: %s\n", r->width, algo->name, ncases, algo_failed, text);
    fflush(stdout);
}

static void close_algorithm(cc_run *r, const ck_algo *algo, int algo_failed, int self_here)
{
    print_pattern(r, algo, r->ncases, algo_failed);
    int self_any = 0;
    if (agree_max(&self_here, &self_any, 1, r->ctl, r->limit_ok) == 0 && self_any && r->rank == 0) {
        printf("%-*s traffic: some of it counted by the algorithm itself (ck_count_traffic), not carried by the "
               "transport\n", r->width, algo->name);
        fflush(stdout);
    }
}

static void check_algorithm(cc_run *r, const ck_algo *algo)
{
    r->failed += announce_algorithm(r, algo);
    int probes = 0, algo_failed = 0, self_here = 0;
    for (int k = 0; k < r->ncases; k++) {
        int glob[3] = {0, 0, 0};
        check_case(r, algo, k, glob, &self_here);
        if (!glob[0]) continue;
        algo_failed++;
        after_failure(r, algo, k, glob, &probes, algo_failed);
    }
    close_algorithm(r, algo, algo_failed, self_here);
}

/* The --results file closed and the closing line. Returns the exit code:
 * 1 when a case failed or the results were not written. */
static int report(cc_run *r)
{
    cases_running(0, r->rank, NULL);
    int results_bad = 0;
    if (r->rf && (fflush(r->rf) || ferror(r->rf))) results_bad = 1;
    if (r->rf && fclose(r->rf)) results_bad = 1;
    r->rf = NULL;
    if (results_bad) fprintf(stderr, "collcheck: writing --results '%s' failed\n", r->o.results);
    if (r->rank == 0) {
        printf("%d passed, %d failed\n", r->passed, r->failed);
        fflush(stdout);
    }
    return r->failed || results_bad ? 1 : 0;
}

/* The one way out: what the run holds given back, and MPI ended unless it
 * was running before (a bounded meeting first, when the watchdog runs). */
static void end_run(cc_run *r)
{
    free(r->all);
    free(r->recs);
    free(r->outcomes);
    free(r->hashes);
    free(r->mine);
    free(r->theirs);
    free(r->cases);
    cc_release_buffers();
    if (r->comm) ck_comm_destroy(r->comm);
    if (r->ctl != MPI_COMM_NULL) MPI_Comm_free(&r->ctl);
    if (r->was_init) return;
    if (r->watching) ck_watch_finalize();
    else MPI_Finalize();
}

int collcheck_main(int argc, char **argv)
{
    cc_run r = {.ctl = MPI_COMM_NULL};
    /* Parse before MPI_Init: --help and --algo list work without mpirun, and
     * bad arguments end every rank the same way without any communication. */
    int code = cc_parse_args(argc, argv, &r.o, !ck_is_print_rank());
    if (code >= 0) return code == 0 && ck_stdout_done("collcheck") ? 1 : code;

    code = start_mpi(&r, &argc, &argv);
    if (!code) code = plan_cases(&r);
    if (!code) {
        start_cases(&r);
        for (int a = 0; a < r.o.nalgos; a++) check_algorithm(&r, r.o.algos[a]);
        code = report(&r);
    }
    end_run(&r);
    /* A verdict that did not reach its reader is not a pass. */
    if (code == 2) return 2;
    return ck_stdout_done("collcheck") || code ? 1 : 0;
}
