/*
 * collective.c — the collective entry: ck_allreduce, ck_reduce_scatter and
 * ck_allgather check a call on this rank and agree on it across ranks
 * (count, type, operation, algorithm, chunk) before the algorithm runs, then
 * check what it left behind (requests still posted, writes outside its
 * scratch space). The top of the library's layers (README.md).
 */
#include <stdlib.h>
#include <string.h>
#include "collkit_util.h"
#include "internal.h"
#include "cuda_logic.h"   /* ck_cu_aligned: the device buffers' alignment rule */

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

/* The program's hook before the first algorithm code (the grader's
 * confinement, plugin/confine.c): the library holds no policy of its own. */
static void (*g_before)(void);

void ck_set_before_algorithms(void (*hook)(void)) { g_before = hook; }

void ck_before_algorithms(void)
{
    static int done;
    if (done) return;
    done = 1;
    if (g_before) g_before();
}


/* Non-negative, with room to spare, so that -x in the agreement below cannot overflow. */
static long long name_hash(const char *s) { return (long long)(ck_fnv1a64(s, strlen(s)) >> 2); }

/* Agree across ranks on (error flag, count, dtype, op, algorithm, chunk) with one
 * small MPI_Iallreduce of (x, -x) pairs under MAX: min and max of each value
 * come back together. Polled with the watchdog bound, so a rank that never
 * arrives is reported rather than waited for forever.
 *
 * Every call agrees, even one whose arguments equal the last call's on this
 * communicator: the agreement is not cached. A cache would make the choice
 * to skip a local one (this rank's arguments equal the last agreed ones),
 * and a mismatch is exactly the case where ranks choose differently: the
 * rank whose arguments changed would wait in the agreement while the others
 * ran the algorithm without it, a deadlock at best (named only when the
 * watchdog is on) and, where an algorithm reads its peers' buffers, a read
 * past the end of one. A periodic or hashed check skips on every rank alike
 * but lets the calls between two checks run mismatched. Only the algorithm's
 * own messages could carry the check for free; until they do, what is saved
 * is one latency-bound collective of 96 B per call (about 0.5 us at p = 2 on
 * shared memory, measured with collbench --agree on/off; docs/benchmarking.md),
 * and collbench times calls with it by default. unit.args checks that a
 * mismatch after a run of identical calls is still caught. */
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

/* oneshot and twoshot load from their peers' memory, which ranks on other
 * nodes cannot map: on a communicator that asked for shm and got the mixed
 * transport (ranks on several nodes) or MPI, they run as ring, on every
 * rank alike (the transport is agreed), said once. Their descriptors count
 * the ring's traffic there (ck_topo_of_size), so the checker passes them. */
static const ck_algo *single_node_fallback(ck_comm *c, const ck_algo *algo, ck_coll coll)
{
    if (!algo || coll != CK_COLL_ALLREDUCE || algo->coll != coll || !c->asked_shm || (algo->mem & c->tr.mem) ||
        !(algo->mem & CK_MEM_SHM))
        return algo;
    const ck_algo *ring = ck_algo_find("ring");
    static int said;
    if (ring && c->rank == 0 && !said++) {
        fprintf(stderr, "collkit: %s needs every rank on one node (the %s transport here): it runs as ring\n",
                algo->name, c->tr.name);
        fflush(stderr);
    }
    return ring ? ring : algo;
}

/* One call of any collective: validation, the body, the checks after it.
 * The buffers reach the body as collkit.h's ck_allreduce_fn describes: in
 * place, a reduce-scatter gets the whole buffer and its own block of it, an
 * all-gather its own block of the whole buffer. */
static int run_collective(ck_comm *c, const ck_algo *algo, ck_coll coll, const void *sendbuf, void *recvbuf,
                          size_t count, ck_dtype dt, ck_op op)
{
    if (!c) return CK_ERR_INVALID_ARG;
    ck_before_algorithms();
    c->errmsg[0] = '\0';
    algo = single_node_fallback(c, algo, coll);
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

    if (c->parent) c->ev_cap = c->parent->ev_cap != 0;   /* a view traces into its parent (ck_trace_add) */
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
    if (c->parent) ck_view_credit(c);   /* a view's bytes went over its parent's transport */
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
    if (c->ev_cap && !c->parent) ck_trace_add(c, CK_EV_CALL, -1, count * ck_dtype_size(dt), t0, ck_now());
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
