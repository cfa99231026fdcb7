/*
 * broken.c — all-reduce algorithms with one deliberate bug each, written
 * against collkit.h only and registered at run time the documented way for
 * out-of-tree code (ck_register_algo before collcheck_main). The checker
 * tests run collcheck on each and require both a failure and the right
 * diagnosis:
 *
 *   broken_ring_index      all-gather stores block r-s-1 instead of r-s
 *                          (a block index off by one)
 *   broken_ring_skip       reduce-scatter step 1 copies the incoming partial
 *                          sum instead of adding its own input
 *   broken_ring_wholebuf   a "ring" that passes every whole buffer around:
 *                          right result, (p-1)*n bytes instead of 2(p-1)/p*n
 *   broken_ring_max        reduces with max whatever op was asked
 *   broken_ring_chatty     the ring's exact bytes, but one message per
 *                          element instead of one per step
 *   broken_naive_overrun   the broadcast sends count+1 elements: every rank
 *                          writes one element past the end of recvbuf
 *   broken_deadlock        pairs of ranks both receive before they send
 *
 * and one for each check that only it catches:
 *
 *   broken_gather_order    every rank gathers all inputs and adds them
 *                          starting from its own: exact on integers, but
 *                          ranks end with different last bits on floats
 *                          (random-float inputs, compared across ranks)
 *   broken_ring_leak       every step's send is posted and never waited
 *                          for: right result, right traffic, requests left
 *                          behind (the p2p layer's request accounting)
 *   broken_ring_recvsize   receives each block with the size of the block it
 *                          sends: with uneven blocks, truncated on one rank and
 *                          short on another (the MPI transport's size check)
 *   broken_ring_maxrecv    receives every block with the largest block's size:
 *                          MPI takes the shorter message silently, the result
 *                          is right (the size check only)
 *   broken_naive_identity  reduces into an accumulator started at 0 for min
 *                          and max (1 for prod, 0 for sum): invisible while
 *                          an element's inputs straddle zero (inputs that are
 *                          all positive or all negative)
 *   broken_ring_stale      keeps its accumulator from one call to the next:
 *                          the first call is right (each case's second call)
 *   broken_ring_race       with probability 1/64 per call and rank, reduces
 *                          a block before its receive completed (a race,
 *                          simulated so its probability is known: --repeat)
 *   broken_naive_copyover  out of place, copies sendbuf to recvbuf one
 *                          element too long: sendbuf's guard lands in
 *                          recvbuf's (guard patterns that differ per buffer)
 *   broken_crash           crashes (SIGSEGV) on rank 1 for i64: the case it
 *                          was in is on the screen (announced before it runs)
 *   broken_exit            every rank calls exit(0) for i64: the checker's
 *                          exit handler makes the run fail and names the case
 *   broken_naive_inplace   the root receives rank 1's input into recvbuf, then
 *                          adds sendbuf: right out of place; in place rank
 *                          0's input was overwritten (rank 1's in its place)
 *   broken_naive_narrow    reduces i64 inputs in 32-bit integers (an int
 *                          accumulator): right while every value fits in 32
 *                          bits, so the i64 inputs must not all fit
 *   broken_naive_tag       the reduce's sends carry tag 2, the root receives
 *                          tag 0: a deadlock whose watchdog message names the
 *                          message that arrived with the other tag
 *   broken_ring_stray      the ring, then one more zero-byte send to the right
 *                          neighbour that no rank ever receives: right result,
 *                          right bytes, a message left behind for the next call
 *                          (the checker's probe once every rank has returned)
 *   broken_ring_peer       rank 1 sends left and receives from the right: a
 *                          deadlock where rank 1's watchdog names the message
 *                          that arrived from its real left neighbour
 *   broken_ring_scratch    the ring with scratch for count/p elements rounded
 *                          down: where p does not divide count, the largest
 *                          block's receive writes past the end of it (heap
 *                          memory: the result stays right; ck_scratch's guard)
 *   broken_ring_scratch_end  the same scratch, each block received flush with
 *                          its end: the largest block begins one element
 *                          before the scratch space (the guard before it)
 *   broken_ring_status     the ring, right result, then returns -1: a status
 *                          that is no collkit code, named as such, with the
 *                          note that the result itself is right
 *   broken_ring_mean       the ring, then every element divided by p: an
 *                          average where a sum was asked
 *   broken_ring_far        the ring, then two elements written far past the
 *                          end of recvbuf, beyond its guard: where sendbuf
 *                          follows recvbuf in memory, into sendbuf's guard
 *   broken_ring_first      the ring whose first call on a communicator skips
 *                          one reduction (set-up done too late): every later
 *                          call is right
 *   broken_pipe_oneslot    the pipelined ring (chunks of cfg->chunk_bytes)
 *                          with one receive slot where it needs two: chunk
 *                          k+1 is received into the slot chunk k is still
 *                          to be reduced from
 *   broken_ring_carry      keeps its last result and, when a call's count or
 *                          op differs from the last call's, returns that
 *                          result instead of reducing (a cache keyed on too
 *                          little): state carried from one case to the next
 *   broken_ring_uninit     rank 0's first reduce-scatter step reduces its
 *                          scratch space before anything was received into it
 *   broken_naive_small     below p elements, a reduce and a broadcast whose
 *                          loop stops one rank short: the last rank is wrong,
 *                          only when the count is smaller than p
 *   broken_rd_nofold       recursive doubling without the fold: right at p a
 *                          power of two, some ranks miss contributions at
 *                          other p
 *   broken_ring_recvin     the ring on recvbuf as its input: right in place;
 *                          out of place it reduces the fill recvbuf came with
 *   broken_ring_sendout    the ring whose first step sends its block from
 *                          recvbuf: out of place, from the fill
 *   broken_ring_f32        the ring whose reduction is always f32's (the
 *                          dtype ignored): only f32 passes (i32 sums of
 *                          small values pass too: as floats they are
 *                          denormals, which add like integers)
 *   broken_ring_sum        the ring whose reduction is always a sum (the op
 *                          ignored): sum and avg pass (avg reaches it as sum)
 *   broken_flag_spin       on i64 every rank spins on a flag no peer sets,
 *                          outside the watchdog: the checker's own watch on
 *                          the call's progress ends the job
 *   broken_ring_stuck      a reduce-scatter loop whose offset never advances:
 *                          the same message pair forever (the bound on the
 *                          messages one call may post ends the job)
 *   broken_ring_mleak      the ring on a malloc'd copy of its input, never
 *                          freed: the heap grows by a buffer per call
 *   broken_ring_sendover   the ring, then one element past the end of sendbuf
 *                          (out of place): named as sendbuf's overrun, not as
 *                          a far one of recvbuf's when sendbuf follows it
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collkit_algo.h"

/* ------------------------------------------------------------------ ring
 * The ring of collectives/algos/ring.c (reduce-scatter, then all-gather;
 * rank r sends to r+1), with one of four bugs switched on. */
enum { BUG_BLOCK_INDEX = 1, BUG_SKIP_REDUCE, BUG_WRONG_OP, BUG_CHATTY, BUG_LEAK, BUG_RECV_SIZE, BUG_MAX_RECV,
       BUG_RACE, BUG_SCRATCH, BUG_SCRATCH_END, BUG_PEER, BUG_UNINIT, BUG_SEND_OUT, BUG_F32, BUG_SUM };

/* A random number, different on every rank, call and run: a xorshift
 * generator seeded once from the clock, the pid and the rank. */
static uint64_t draw(int rank)
{
    static uint64_t x;
    if (!x) x = ((uint64_t)time(NULL) << 20) ^ ((uint64_t)getpid() << 8) ^ (uint64_t)rank ^ 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x >> 11;
}

/* One ring step's exchange. BUG_CHATTY sends the block one element per
 * message: the same bytes, but (block length) times the latency. The block a
 * rank receives is the one its left neighbour sends, so both sides agree on
 * the number of pieces. BUG_LEAK posts the send and never waits for it. */
static int exchange(ck_comm *comm, const char *sb, size_t sbytes, int dst, char *rb, size_t rbytes, int src,
                    int tag, size_t es, int bug)
{
    if (bug == BUG_LEAK) {
        ck_req rq[2];
        int rc;
        if ((rc = ck_irecv(comm, rb, rbytes, src, tag, &rq[0]))) return rc;
        if ((rc = ck_isend(comm, sb, sbytes, dst, tag, &rq[1]))) return rc;
        return ck_wait(comm, &rq[0]);   /* BUG: rq[1], the send, is never completed */
    }
    if (bug != BUG_CHATTY) return ck_sendrecv(comm, sb, sbytes, dst, rb, rbytes, src, tag);
    for (size_t j = 0; j < sbytes / es || j < rbytes / es; j++) {   /* BUG: a message per element */
        ck_req rq[2];
        int rc;
        memset(rq, 0, sizeof rq);
        if (j < rbytes / es && (rc = ck_irecv(comm, rb + j * es, es, src, tag, &rq[0]))) return rc;
        if (j < sbytes / es && (rc = ck_isend(comm, sb + j * es, es, dst, tag, &rq[1]))) return rc;
        if ((rc = ck_waitall(comm, rq, 2))) return rc;
    }
    return CK_SUCCESS;
}

static int ring_with_bug(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                         ck_dtype dt, ck_op op, int bug)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;
    if (p == 1) return ck_copy(comm, out, in, count * es);
    /* BUG_PEER: rank 1 has its neighbours the wrong way round */
    const int right = bug == BUG_PEER && r == 1 ? (r - 1 + p) % p : (r + 1) % p;
    const int left = bug == BUG_PEER && r == 1 ? (r + 1) % p : (r - 1 + p) % p;
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    /* BUG_SCRATCH(_END): room for count/p elements, rounded down; the largest block has one more */
    const size_t room = bug == BUG_SCRATCH || bug == BUG_SCRATCH_END ? count / (size_t)p : max_len;
    char *tmp = ck_scratch(comm, room * es);
    if (!tmp) return CK_ERR_NOMEM;

    /* BUG_RECV_SIZE: every receive posted with the size of the block sent in
     * the same step; BUG_MAX_RECV: with the largest block's size. */
#define RECV_LEN(slen, rlen) (bug == BUG_RECV_SIZE ? (slen) : bug == BUG_MAX_RECV ? max_len : (rlen))
    const uint64_t luck = bug == BUG_RACE ? draw(r) : 1;
    /* BUG_UNINIT: rank 0's first step always (its scratch never written yet) */
    const int race_step = bug == BUG_UNINIT ? (r == 0 ? 0 : -1)
                                            : luck % 64 == 0 ? (int)(luck / 64 % (uint64_t)(p - 1)) : -1;   /* probability 1/64 */
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if (s == race_step &&   /* BUG: reduces what tmp held before this step's receive arrived */
            (rc = ck_reduce_local(comm, out + roff * es, in + roff * es, tmp, rlen, dt, op))) return rc;
        /* BUG_SCRATCH_END: each block received flush with the end of the
         * scratch space, so the largest one begins an element before it */
        char *rtmp = bug == BUG_SCRATCH_END ? tmp + ((ptrdiff_t)room - (ptrdiff_t)rlen) * (ptrdiff_t)es : tmp;
        /* BUG_SEND_OUT: step 0 sends its block from recvbuf, which out of
         * place holds no input yet */
        if ((rc = exchange(comm, (s == 0 && bug != BUG_SEND_OUT ? in : out) + soff * es, slen * es, right,
                           rtmp, RECV_LEN(slen, rlen) * es, left, s, es, bug))) return rc;
        if (s == race_step) continue;
        if (bug == BUG_SKIP_REDUCE && s == 1)   /* BUG: forgets to add this rank's input */
            rc = ck_copy(comm, out + roff * es, rtmp, rlen * es);
        else                                     /* BUG_WRONG_OP: max, whatever op is */
            rc = ck_reduce_local(comm, out + roff * es, in + roff * es, rtmp, rlen,
                                 bug == BUG_F32 ? CK_F32 : dt,   /* BUG_F32: the dtype ignored */
                                 bug == BUG_WRONG_OP ? CK_MAX : bug == BUG_SUM ? CK_SUM : op);
        if (rc) return rc;
    }
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        int sb = ((r + 1 - s) % p + p) % p;
        int rb = bug == BUG_BLOCK_INDEX ? ((r - s - 1) % p + p) % p   /* BUG: one block early */
                                        : ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = exchange(comm, out + soff * es, slen * es, right,
                           out + roff * es, RECV_LEN(slen, rlen) * es, left, p - 1 + s, es, bug))) return rc;
    }
#undef RECV_LEN
    return CK_SUCCESS;
}

/* What a correct ring sends: every block but (r+1), then every block but (r+2). */
static uint64_t ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, l1, l2;
    ck_block(count, p, (r + 1) % p, &off, &l1);
    ck_block(count, p, (r + 2) % p, &off, &l2);
    return (uint64_t)(2 * count - l1 - l2) * es;
}

/* A correct ring sends one message per step: 2(p-1). */
static uint64_t ring_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)count; (void)es; (void)cfg;
    return p == 1 ? 0 : 2 * (uint64_t)(p - 1);
}

static int ring_index_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_BLOCK_INDEX); }
static int ring_skip_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_SKIP_REDUCE); }
static int ring_max_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_WRONG_OP); }
static int ring_chatty_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_CHATTY); }
static int ring_leak_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_LEAK); }
static int ring_recvsize_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_RECV_SIZE); }
static int ring_maxrecv_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_MAX_RECV); }
static int ring_peer_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_PEER); }
static int ring_scratch_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_SCRATCH); }
static int ring_scratch_end_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_SCRATCH_END); }

/* The race: with probability 1/64 per call on each rank, one reduce-scatter
 * step reduces its scratch block before the receive into it (instead of
 * after): the result then holds the previous step's (or call's) block. On a
 * real machine this shows only when the message is late; here it is forced,
 * so the probability is known: at p = 4 a call goes wrong with probability
 * 1 - (63/64)^4 = 0.061, the default two calls of one case miss it with
 * probability 0.94^2 = 0.88, and --repeat 400 on one case misses it with
 * probability (63/64)^1600 < 1e-10. */
static int ring_race_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_RACE); }

/* The ring with a message too many: after the all-gather, every rank sends
 * zero bytes to its right neighbour (tag 1000), waits for the send and
 * returns; no rank posts the receive. On MPI the send completes at once
 * (eager), so nothing hangs and nothing is counted wrong (0 B): the message
 * waits in the receiver's queue. */
static int ring_stray_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring_with_bug(c, s, d, n, dt, op, 0);
    if (rc || ck_comm_size(c) == 1) return rc;
    ck_req rq;
    if ((rc = ck_isend(c, d, 0, (ck_comm_rank(c) + 1) % ck_comm_size(c), 1000, &rq))) return rc;   /* BUG */
    return ck_wait(c, &rq);
}

/* The ring, right, then a status that is not one: -1, as a C library would
 * say "error" (what the caller would take for it is anyone's guess). */
static int ring_status_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring_with_bug(c, s, d, n, dt, op, 0);
    return rc ? rc : -1;   /* BUG */
}

/* The ring, then the mean: every element divided by p (BUG: sum was asked). */
static int ring_mean_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring_with_bug(c, s, d, n, dt, op, 0);
    const int p = ck_comm_size(c);
    for (size_t i = 0; i < n && !rc; i++) {
        switch (dt) {
        case CK_F32: ((float *)d)[i] /= (float)p; break;
        case CK_F64: ((double *)d)[i] /= p; break;
        case CK_I32: ((int32_t *)d)[i] /= p; break;
        case CK_I64: ((int64_t *)d)[i] /= p; break;
        default: break;
        }
    }
    return rc;
}

/* The ring, then a stray write far past the end of recvbuf: two elements
 * just before sendbuf where sendbuf lies after recvbuf (out of place, in
 * memory: its guard is what the bytes hit), else right after recvbuf. */
static int ring_far_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring_with_bug(c, s, d, n, dt, op, 0);
    const size_t es = ck_dtype_size(dt);
    char *end = (char *)d + n * es, *at = end;
    if (s != CK_IN_PLACE && (const char *)s > end + 64 && (const char *)s - end < (1 << 20)) at = (char *)s - 2 * es;
    memset(at, 0x5A, 2 * es);   /* BUG */
    return rc;
}

/* The ring whose first call on a communicator forgets a reduction: its
 * set-up (here only a marker kept with the communicator) comes too late. */
static const ck_algo first_key = {.name = "broken_ring_first's marker"};
static int ring_first_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    int first = ck_algo_state(c, &first_key) == NULL, rc;
    if (first && (rc = ck_algo_state_set(c, &first_key, calloc(1, 1), free))) return rc;
    return ring_with_bug(c, s, d, n, dt, op, first ? BUG_SKIP_REDUCE : 0);   /* BUG: the first call */
}

/* The ring behind a result cache keyed on (count, op) changes only: a call
 * whose count or op differs from the last one's gets the last result back
 * (BUG), as many elements as both have; the rest is reduced. A static cache:
 * it outlives the communicator, so it carries one case's result into the
 * next case's first call. */
static struct { size_t count; ck_op op; ck_dtype dt; unsigned char *last; } carry;
static int ring_carry_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring_with_bug(c, s, d, n, dt, op, 0);
    const size_t es = ck_dtype_size(dt);
    if (rc) return rc;
    if (carry.last && carry.dt == dt && (carry.count != n || carry.op != op))
        memcpy(d, carry.last, (n < carry.count ? n : carry.count) * es);   /* BUG */
    unsigned char *keep = realloc(carry.last, n * es + 1);
    if (!keep) return CK_ERR_NOMEM;
    memcpy(keep, d, n * es);
    carry.last = keep; carry.count = n; carry.op = op; carry.dt = dt;
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ pipelined ring
 * Each reduce-scatter step sends its block in nc chunks and receives the
 * incoming block's chunks, the receive of chunk k+1 posted before chunk k is
 * reduced — into the same single slot (BUG: two are needed). */
static size_t pipe_chunks(int p, size_t count, size_t es, const ck_config *cfg)
{
    size_t chunk = cfg->chunk_bytes / es, off0, largest;
    ck_block(count, p, 0, &off0, &largest);
    return ck_num_chunks(largest, chunk ? chunk : 1);
}

static int pipe_oneslot_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm), right = (r + 1) % p, left = (r - 1 + p) % p;
    const size_t es = ck_dtype_size(dt);
    const char *in = sendbuf;
    char *out = recvbuf;
    int rc;
    if (p == 1) return ck_copy(comm, out, in, count * es);
    const size_t nc = pipe_chunks(p, count, es, ck_comm_config(comm));
    size_t off0, largest;
    ck_block(count, p, 0, &off0, &largest);
    char *slot = ck_scratch(comm, ((largest + nc - 1) / nc) * es + 1);
    if (!slot) return CK_ERR_NOMEM;
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "reduce-scatter");
        const int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen, co, cl;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        const char *src = (s == 0 ? in : out) + soff * es;
        /* Two chunks at a time: both received into the one slot, both sent,
         * then reduced — the first from a slot the second has overwritten. */
        for (size_t k = 0; k < nc; k += 2) {
            const size_t m = k + 1 < nc ? 2 : 1;
            ck_req rq[4] = {{0}};
            for (size_t j = 0; j < m; j++) {
                ck_block(rlen, nc, k + j, &co, &cl);
                if ((rc = ck_irecv(comm, slot, cl * es, left, s, &rq[j]))) return rc;   /* BUG: one slot */
            }
            for (size_t j = 0; j < m; j++) {
                ck_block(slen, nc, k + j, &co, &cl);
                if ((rc = ck_isend(comm, src + co * es, cl * es, right, s, &rq[2 + j]))) return rc;
            }
            if ((rc = ck_waitall(comm, rq, 4))) return rc;
            for (size_t j = 0; j < m; j++) {
                ck_block(rlen, nc, k + j, &co, &cl);
                if ((rc = ck_reduce_local(comm, out + (roff + co) * es, in + (roff + co) * es, slot, cl, dt, op)))
                    return rc;
            }
        }
    }
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, p - 1 + s, "all-gather");
        const int sb = ((r + 1 - s) % p + p) % p, rb = ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        if ((rc = ck_sendrecv(comm, out + soff * es, slen * es, right, out + roff * es, rlen * es, left, p - 1 + s)))
            return rc;
    }
    return CK_SUCCESS;
}

/* ------------------------------------------------------------ stale state
 * The ring, run on an accumulator that lives with the communicator: made
 * from the input on the first call, and on later calls (BUG) combined with
 * the new input instead of replaced by it. The first call of a case is right;
 * the second returns (previous result) op (this result). */
static const ck_algo stale_key = {.name = "broken_ring_stale's accumulator"};
typedef struct { size_t bytes; unsigned char *acc; } stale_state;
static void stale_free(void *p) { stale_state *st = p; if (st) { free(st->acc); free(st); } }

static int ring_stale_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const size_t n = count * ck_dtype_size(dt);
    stale_state *st = ck_algo_state(comm, &stale_key);
    int rc;
    if (!st || st->bytes != n) {
        stale_state *fresh = calloc(1, sizeof *fresh);
        if (!fresh || !(fresh->acc = ck_alloc(comm, n ? n : 1))) { free(fresh); return CK_ERR_NOMEM; }
        fresh->bytes = n;
        if ((rc = ck_algo_state_set(comm, &stale_key, fresh, stale_free))) return rc;
        if ((rc = ck_copy(comm, fresh->acc, sendbuf, n))) return rc;
        st = fresh;
    } else if ((rc = ck_reduce_local(comm, st->acc, st->acc, sendbuf, count, dt, op))) {   /* BUG: never reset */
        return rc;
    }
    return ring_with_bug(comm, st->acc, recvbuf, count, dt, op, 0);
}

/* ------------------------------------------------------------ whole buffer
 * Each rank forwards whole buffers around the ring: at step s it passes on
 * the input of rank r-s and adds what arrives. p-1 steps of n bytes: the
 * result is right, the traffic is p/2 times a real ring's. */
static int ring_wholebuf_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t n = count * ck_dtype_size(dt);
    char *buf = ck_scratch(comm, 2 * n), *fwd = buf, *got = buf + n;
    int rc;
    if (!buf) return CK_ERR_NOMEM;
    if ((rc = ck_copy(comm, fwd, sendbuf, n))) return rc;
    if ((rc = ck_copy(comm, recvbuf, sendbuf, n))) return rc;
    for (int s = 0; s < p - 1; s++) {
        ck_step(comm, s, "pass-around");
        if ((rc = ck_sendrecv(comm, fwd, n, (r + 1) % p, got, n, (r - 1 + p) % p, s))) return rc;
        if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, got, count, dt, op))) return rc;
        char *t = fwd; fwd = got; got = t;
    }
    return CK_SUCCESS;
}

/* ---------------------------------------------------------------- overrun
 * Reduce to rank 0, broadcast back — with the classic length bug: the
 * broadcast moves count+1 elements. */
static int naive_overrun_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), n = count * es;
    int rc;
    if (r != 0) {
        ck_step(comm, 0, "reduce");
        if ((rc = ck_sendrecv(comm, sendbuf, n, 0, NULL, 0, -1, 0))) return rc;
        ck_step(comm, 1, "broadcast");
        return ck_sendrecv(comm, NULL, 0, -1, recvbuf, n + es, 0, 1);   /* BUG: n + es */
    }
    char *acc = ck_scratch(comm, 2 * n + es), *tmp = acc + n + es;
    if (!acc) return CK_ERR_NOMEM;
    if ((rc = ck_copy(comm, acc, sendbuf, n)) || (rc = ck_copy(comm, acc + n, sendbuf, es))) return rc;
    for (int src = 1; src < p; src++) {
        ck_step(comm, 0, "reduce");
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, n, src, 0))) return rc;
        if ((rc = ck_reduce_local(comm, acc, acc, tmp, count, dt, op))) return rc;
    }
    ck_step(comm, 1, "broadcast");
    for (int dst = 1; dst < p; dst++)
        if ((rc = ck_sendrecv(comm, acc, n + es, dst, NULL, 0, -1, 1))) return rc;   /* BUG */
    return ck_copy(comm, recvbuf, acc, n + es);                                       /* BUG */
}

static uint64_t naive_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    return (uint64_t)count * es * (r == 0 ? (uint64_t)(p - 1) : 1);
}

/* ------------------------------------------------------- naive variants
 * Reduce to rank 0 into an accumulator, then broadcast; `bug` picks the
 * mistake. BUG_IDENTITY starts the accumulator from the op's "identity" out
 * of a wrong table (0 for min and max) and reduces every rank's input into
 * it; BUG_COPYOVER copies sendbuf to recvbuf one element too long first;
 * BUG_CRASH dies on rank 1 when the dtype is i64; BUG_EXIT ends the program
 * (exit(0), every rank) when the dtype is i64; BUG_INPLACE receives rank 1's
 * input straight into recvbuf and then adds sendbuf to it: right out of
 * place, but in place sendbuf IS recvbuf, so rank 0's input is gone and
 * rank 1's is added twice. BUG_NARROW reduces i64 in 32 bits. */
enum { BUG_IDENTITY = 1, BUG_COPYOVER, BUG_CRASH, BUG_EXIT, BUG_INPLACE, BUG_NARROW, BUG_TAG };

/* acc += x for i64 sums in 32-bit arithmetic (wrapping, as an int would). */
static void reduce_narrow(void *acc, const void *x, size_t count, ck_op op)
{
    for (size_t i = 0; i < count; i++) {
        int64_t a, b;
        memcpy(&a, (char *)acc + 8 * i, 8);
        memcpy(&b, (const char *)x + 8 * i, 8);
        const int32_t a32 = (int32_t)a, b32 = (int32_t)b;   /* BUG: the values in 32 bits */
        int64_t s;
        switch (op) {
        case CK_MIN: s = a32 < b32 ? a32 : b32; break;
        case CK_MAX: s = a32 > b32 ? a32 : b32; break;
        case CK_PROD: s = (int32_t)((uint32_t)a32 * (uint32_t)b32); break;
        default: s = (int32_t)((uint32_t)a32 + (uint32_t)b32); break;
        }
        memcpy((char *)acc + 8 * i, &s, 8);
    }
}

static int naive_with_bug(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op,
                          int bug)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), n = count * es;
    int rc;
    if (bug == BUG_CRASH && r == 1 && dt == CK_I64) raise(SIGSEGV);   /* BUG: a crash, mid-matrix */
    if (bug == BUG_EXIT && dt == CK_I64) exit(0);                      /* BUG: the program ends, "fine" */
    if (bug == BUG_COPYOVER && (rc = ck_copy(comm, recvbuf, sendbuf, n + es))) return rc;   /* BUG: n + es */
    if (r != 0) {
        ck_step(comm, 0, "reduce");   /* BUG_TAG: sent with tag 2, received with tag 0 */
        if ((rc = ck_sendrecv(comm, sendbuf, n, 0, NULL, 0, -1, bug == BUG_TAG ? 2 : 0))) return rc;
        ck_step(comm, 1, "broadcast");
        return ck_sendrecv(comm, NULL, 0, -1, recvbuf, n, 0, 1);
    }
    char *tmp = ck_scratch(comm, n);
    if (!tmp) return CK_ERR_NOMEM;
    if (bug == BUG_IDENTITY) {
        /* BUG: the "identity" is 0 for sum, min and max, 1 for prod: right only for sum and prod */
        unsigned char id[8] = {0};
        if (op == CK_PROD) {
            const float f = 1;
            const double d = 1;
            const int32_t i = 1;
            const int64_t l = 1;
            const uint16_t b = ck_f32_to_bf16(1);
            const void *one[] = {[CK_F32] = &f, [CK_F64] = &d, [CK_I32] = &i, [CK_I64] = &l, [CK_BF16] = &b};
            memcpy(id, one[dt], es);
        }
        char *init = ck_scratch(comm, 2 * n);
        if (!init) return CK_ERR_NOMEM;
        tmp = init + n;
        for (size_t i = 0; i < count; i++) memcpy(init + i * es, id, es);
        if ((rc = ck_copy(comm, recvbuf, init, n))) return rc;
        if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, sendbuf, count, dt, op))) return rc;
    } else if (bug == BUG_INPLACE && p > 1) {
        ck_step(comm, 0, "reduce");   /* BUG: in place, this receive overwrites rank 0's own input */
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, recvbuf, n, 1, 0))) return rc;
        if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, sendbuf, count, dt, op))) return rc;
    } else if ((rc = ck_copy(comm, recvbuf, sendbuf, n))) {
        return rc;
    }
    for (int src = bug == BUG_INPLACE ? 2 : 1; src < p; src++) {
        ck_step(comm, 0, "reduce");
        if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, n, src, 0))) return rc;
        if (bug == BUG_NARROW && dt == CK_I64 && op != CK_AVG) reduce_narrow(recvbuf, tmp, count, op);
        else if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, tmp, count, dt, op))) return rc;
    }
    ck_step(comm, 1, "broadcast");
    for (int dst = 1; dst < p; dst++)
        if ((rc = ck_sendrecv(comm, recvbuf, n, dst, NULL, 0, -1, 1))) return rc;
    return CK_SUCCESS;
}

static int naive_identity_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return naive_with_bug(c, s, d, n, dt, op, BUG_IDENTITY); }
static int naive_copyover_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return naive_with_bug(c, s, d, n, dt, op, BUG_COPYOVER); }
static int naive_inplace_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return naive_with_bug(c, s, d, n, dt, op, BUG_INPLACE); }
static int naive_narrow_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return naive_with_bug(c, s, d, n, dt, op, BUG_NARROW); }
static int naive_tag_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return naive_with_bug(c, s, d, n, dt, op, BUG_TAG); }
static int crash_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return naive_with_bug(c, s, d, n, dt, op, BUG_CRASH); }
static int exit_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return naive_with_bug(c, s, d, n, dt, op, BUG_EXIT); }

/* ---------------------------------------------------------- gather order
 * Every rank sends its input to every other rank, then adds the p inputs in
 * the order r, r+1, ..., r-1: its own first. Every order gives the same exact
 * integers, but on floats the ranks' results differ in the last bits — what
 * data-parallel replicas must never do. */
static int gather_order_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt,
                            ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t n = count * ck_dtype_size(dt);
    char *all = ck_scratch(comm, (size_t)p * n);
    int rc;
    if (!all) return CK_ERR_NOMEM;
    if ((rc = ck_copy(comm, all + (size_t)r * n, sendbuf, n))) return rc;
    for (int s = 1; s < p; s++) {
        ck_step(comm, s - 1, "all-gather");
        const int to = (r + s) % p, from = (r - s + p) % p;
        if ((rc = ck_sendrecv(comm, sendbuf, n, to, all + (size_t)from * n, n, from, s))) return rc;
    }
    ck_step(comm, p - 1, "add");
    if ((rc = ck_copy(comm, recvbuf, all + (size_t)r * n, n))) return rc;
    for (int s = 1; s < p; s++)   /* BUG: the order depends on the rank */
        if ((rc = ck_reduce_local(comm, recvbuf, recvbuf, all + (size_t)((r + s) % p) * n, count, dt, op))) return rc;
    return CK_SUCCESS;
}

static uint64_t gather_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)cfg;
    return (uint64_t)(p - 1) * count * es;
}

static uint64_t gather_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)count; (void)es; (void)cfg;
    return (uint64_t)(p - 1);
}

/* --------------------------------------------------------------- deadlock
 * Ranks 2k and 2k+1 swap buffers, but both post the receive and wait for it
 * before sending: neither send is ever posted. */
static int deadlock_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                        ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm), peer = r ^ 1;
    const size_t n = count * ck_dtype_size(dt);
    ck_req rq;
    int rc;
    if (peer >= p) return ck_copy(comm, recvbuf, sendbuf, n);
    char *tmp = ck_scratch(comm, n);
    if (!tmp) return CK_ERR_NOMEM;
    ck_step(comm, 0, "exchange");
    if ((rc = ck_irecv(comm, tmp, n, peer, 0, &rq)) || (rc = ck_wait(comm, &rq))) return rc;  /* BUG */
    if ((rc = ck_sendrecv(comm, sendbuf, n, peer, NULL, 0, -1, 0))) return rc;
    return ck_reduce_local(comm, recvbuf, sendbuf, tmp, count, dt, op);
}

static uint64_t deadlock_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    return (r ^ 1) < p ? (uint64_t)count * es : 0;
}

/* ------------------------------------------------------------ edge cases
 * Bugs that show only at one edge of the matrix. */

/* The ring reading its scratch space before anything was received into it:
 * rank 0's first step reduces whatever the scratch held. */
static int ring_uninit_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_UNINIT); }

/* Below p elements a reduce to rank 0 and a broadcast whose loop stops one
 * rank short (BUG: dst < p - 1): the last rank keeps its own input. At p
 * elements or more, the ring. */
static int naive_small_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), n = count * es;
    int rc;
    if (count >= (size_t)p || p == 1) return ring_with_bug(comm, sendbuf, recvbuf, count, dt, op, 0);
    if (recvbuf != sendbuf && (rc = ck_copy(comm, recvbuf, sendbuf, n))) return rc;
    char *tmp = ck_scratch(comm, n);
    if (!tmp && n) return CK_ERR_NOMEM;
    ck_step(comm, 0, "reduce");
    if (r != 0) {
        if ((rc = ck_sendrecv(comm, recvbuf, n, 0, NULL, 0, -1, 0))) return rc;
    } else {
        for (int src = 1; src < p; src++)
            if ((rc = ck_sendrecv(comm, NULL, 0, -1, tmp, n, src, 0)) ||
                (rc = ck_reduce_local(comm, recvbuf, recvbuf, tmp, count, dt, op))) return rc;
    }
    ck_step(comm, 1, "broadcast");
    if (r == 0) {
        for (int dst = 1; dst < p - 1; dst++)   /* BUG: p - 1 */
            if ((rc = ck_sendrecv(comm, recvbuf, n, dst, NULL, 0, -1, 1))) return rc;
    } else if (r < p - 1 && (rc = ck_sendrecv(comm, NULL, 0, -1, recvbuf, n, 0, 1))) return rc;
    return CK_SUCCESS;
}

/* What it claims: the ring's formula, and below p elements the broadcast's
 * (root (p-1)n, each other rank its n up to the root): the root's count is
 * one n short, as its loop is. */
static uint64_t small_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    if (count >= (size_t)p || p == 1) return ring_bytes(p, r, count, es, cfg);
    return (uint64_t)count * es * (r == 0 ? (uint64_t)(p - 1) : 1);
}

/* Recursive doubling without the fold that makes it work at any p: rank r
 * exchanges with r XOR 2^k where that rank exists, and skips the step where
 * it does not (BUG). Right at p = 1, 2, 4, 8, ...; at other p some ranks
 * miss contributions. */
static int rd_nofold_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t n = count * ck_dtype_size(dt);
    int rc;
    if (recvbuf != sendbuf && (rc = ck_copy(comm, recvbuf, sendbuf, n))) return rc;
    char *tmp = ck_scratch(comm, n);
    if (!tmp && n) return CK_ERR_NOMEM;
    int s = 0;
    for (int mask = 1; mask < p; mask <<= 1, s++) {
        const int peer = r ^ mask;
        if (peer >= p) continue;   /* BUG: no fold for the ranks beyond the largest power of two */
        ck_step(comm, s, "exchange");
        if ((rc = ck_sendrecv(comm, recvbuf, n, peer, tmp, n, peer, s)) ||
            (rc = ck_reduce_local(comm, recvbuf, recvbuf, tmp, count, dt, op))) return rc;
    }
    return CK_SUCCESS;
}

/* What it sends: n per step whose peer exists (its traffic is honest). */
static uint64_t nofold_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    uint64_t steps = 0;
    for (int mask = 1; mask < p; mask <<= 1) steps += (r ^ mask) < p;
    return steps * count * es;
}


/* ------------------------------------------------------ the caller's buffers */

/* The ring run on recvbuf as if it held the input (it does in place): out of
 * place every rank reduces the fill recvbuf was handed with, never sendbuf. */
static int ring_recvin_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    (void)s;
    return ring_with_bug(c, d, d, n, dt, op, 0);   /* BUG: sendbuf never read */
}

/* The ring whose first reduce-scatter step sends from recvbuf, as the later
 * steps do: out of place each block's partial sum starts from the fill. */
static int ring_sendout_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_SEND_OUT); }

/* The ring with its reduction written for f32 only: every dtype's elements
 * reduced as that many floats. */
static int ring_f32_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_F32); }

/* The ring whose reduction is always a sum (the op ignored). */
static int ring_sum_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{ return ring_with_bug(c, s, d, n, dt, op, BUG_SUM); }

/* Ways never to return. broken_flag_spin: on i64, every rank waits for a
 * flag its peers never set, in a plain loop (not ck_shm_wait, which the
 * watchdog bounds): no rank waits in the library, so none asks where the
 * others are. broken_ring_stuck: the ring's reduce-scatter in pieces of 4
 * elements whose offset is never advanced: the same piece again and again,
 * in lockstep on both sides, messages and all. */
static volatile int flag_never_set;
static int flag_spin_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    if (dt == CK_I64) {
        ck_step(c, 0, "wait for the peers' flags");
        while (!flag_never_set) {}   /* BUG: a flag no peer sets, waited for outside the watchdog */
    }
    return ring_with_bug(c, s, d, n, dt, op, 0);
}

static int ring_stuck_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    int rc;
    if (p == 1 || count < (size_t)p) return ring_with_bug(comm, sendbuf, recvbuf, count, dt, op, 0);
    char *tmp = ck_scratch(comm, 4 * es);
    if (!tmp) return CK_ERR_NOMEM;
    ck_step(comm, 0, "reduce-scatter");
    size_t soff, slen, roff, rlen;
    ck_block(count, p, r, &soff, &slen);
    ck_block(count, p, (r - 1 + p) % p, &roff, &rlen);
    for (size_t off = 0; off < slen || off < rlen;) {   /* BUG: off is never advanced */
        const size_t sl = off < slen ? (slen - off < 4 ? slen - off : 4) : 0;
        const size_t rl = off < rlen ? (rlen - off < 4 ? rlen - off : 4) : 0;
        if ((rc = ck_sendrecv(comm, (const char *)sendbuf + (soff + off) * es, sl * es, (r + 1) % p, tmp, rl * es,
                              (r - 1 + p) % p, 0)))
            return rc;
    }
    return ring_with_bug(comm, sendbuf, recvbuf, count, dt, op, 0);
}

/* The ring with a copy of the input in memory taken every call and never
 * given back (BUG: no free). */
static int ring_mleak_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    const size_t bytes = n * ck_dtype_size(dt);
    char *copy = malloc(bytes + 1);   /* BUG: never freed */
    if (!copy) return CK_ERR_NOMEM;
    memcpy(copy, s == CK_IN_PLACE ? d : s, bytes);
    return ring_with_bug(c, copy, d, n, dt, op, 0);
}

/* The ring, right, then one element written past the end of sendbuf (out of
 * place): sendbuf's overrun, whatever lies between it and recvbuf. */
static int ring_sendover_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op)
{
    int rc = ring_with_bug(c, s, d, n, dt, op, 0);
    if (s != CK_IN_PLACE && s != d) memset((char *)s + n * ck_dtype_size(dt), 0, ck_dtype_size(dt));   /* BUG */
    return rc;
}

const ck_algo broken_algos[] = {
    {.name = "broken_ring_index", .summary = "ring whose all-gather stores each block one slot early", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_index_run},
    {.name = "broken_ring_skip", .summary = "ring whose reduce-scatter step 1 forgets to add its input", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_skip_run},
    {.name = "broken_ring_wholebuf", .summary = "\"ring\" that passes whole buffers around", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_wholebuf_run},
    {.name = "broken_ring_max", .summary = "ring that always reduces with max", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_max_run},
    {.name = "broken_ring_chatty", .summary = "ring that sends each block one element per message", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_chatty_run},
    {.name = "broken_naive_overrun", .summary = "reduce + broadcast that moves count+1 elements", .mem = CK_MEM_HOST,
     .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes, .run = naive_overrun_run},
    {.name = "broken_deadlock", .summary = "pairwise exchange where both sides receive first", .mem = CK_MEM_HOST,
     .bytes_formula = "n (paired ranks)", .bytes_sent = deadlock_bytes, .run = deadlock_run},
    {.name = "broken_gather_order", .summary = "all-gather, then each rank adds the inputs starting from its own",
     .mem = CK_MEM_HOST, .bytes_formula = "(p-1) n", .bytes_sent = gather_bytes, .msgs_sent = gather_msgs,
     .run = gather_order_run},
    {.name = "broken_ring_leak", .summary = "ring that never waits for its sends", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_leak_run},
    {.name = "broken_ring_recvsize", .summary = "ring that receives with the size of the block it sends",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs,
     .run = ring_recvsize_run},
    {.name = "broken_ring_maxrecv", .summary = "ring that receives every block with the largest block's size",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs,
     .run = ring_maxrecv_run},
    {.name = "broken_naive_identity", .summary = "reduce + broadcast from an accumulator started at 0 for min/max",
     .mem = CK_MEM_HOST, .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes,
     .run = naive_identity_run},
    {.name = "broken_ring_stale", .summary = "ring on an accumulator kept from the previous call", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_stale_run},
    {.name = "broken_ring_race", .summary = "ring that sometimes reduces a block before it has arrived",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs,
     .run = ring_race_run},
    {.name = "broken_naive_copyover", .summary = "reduce + broadcast that copies sendbuf one element too long",
     .mem = CK_MEM_HOST, .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes,
     .run = naive_copyover_run},
    {.name = "broken_crash", .summary = "reduce + broadcast whose rank 1 crashes on i64", .mem = CK_MEM_HOST,
     .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes, .run = crash_run},
    {.name = "broken_exit", .summary = "reduce + broadcast whose ranks call exit(0) on i64", .mem = CK_MEM_HOST,
     .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes, .run = exit_run},
    {.name = "broken_naive_inplace", .summary = "reduce + broadcast whose root receives into recvbuf before it reads "
     "sendbuf", .mem = CK_MEM_HOST, .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes,
     .run = naive_inplace_run},
    {.name = "broken_naive_narrow", .summary = "reduce + broadcast that reduces i64 in 32-bit integers",
     .mem = CK_MEM_HOST, .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes,
     .run = naive_narrow_run},
    {.name = "broken_naive_tag", .summary = "reduce + broadcast whose reduce sends carry the wrong tag",
     .mem = CK_MEM_HOST, .bytes_formula = "root (p-1)n, others n", .bytes_sent = naive_bytes,
     .run = naive_tag_run},
    {.name = "broken_ring_stray", .summary = "ring that ends with a zero-byte send no rank receives",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_stray_run},
    {.name = "broken_ring_peer", .summary = "ring whose rank 1 has its left and right neighbours swapped",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs,
     .run = ring_peer_run},
    {.name = "broken_ring_scratch", .summary = "ring whose scratch holds count/p elements, rounded down",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs,
     .run = ring_scratch_run},
    {.name = "broken_ring_scratch_end", .summary = "ring receiving each block flush with the end of count/p elements of scratch",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs,
     .run = ring_scratch_end_run},
    {.name = "broken_ring_status", .summary = "ring that returns -1 after a right result", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_status_run},
    {.name = "broken_ring_mean", .summary = "ring that divides its result by p", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_mean_run},
    {.name = "broken_ring_first", .summary = "ring whose first call on a communicator skips a reduction",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_first_run},
    {.name = "broken_pipe_oneslot", .summary = "pipelined ring with one receive slot where it needs two",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = pipe_oneslot_run},
    {.name = "broken_ring_carry", .summary = "ring behind a result cache keyed on count and op only",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_carry_run},
    {.name = "broken_ring_far", .summary = "ring that writes two elements far past the end of recvbuf",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .run = ring_far_run},
    {.name = "broken_ring_uninit", .summary = "ring whose rank 0 reduces its scratch space before receiving into it",
     .mem = CK_MEM_HOST, .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs,
     .run = ring_uninit_run},
    {.name = "broken_naive_small", .summary = "below p elements, reduce + broadcast that skips the last rank",
     .mem = CK_MEM_HOST, .bytes_formula = "ring; below p elements root (p-1)n, others n", .bytes_sent = small_bytes,
     .run = naive_small_run},
    {.name = "broken_rd_nofold", .summary = "recursive doubling without the fold for p not a power of two",
     .mem = CK_MEM_HOST, .bytes_formula = "n per existing partner", .bytes_sent = nofold_bytes, .run = rd_nofold_run},
    {.name = "broken_ring_recvin", .summary = "ring that takes recvbuf for its input", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_recvin_run},
    {.name = "broken_ring_sendout", .summary = "ring whose first step sends from recvbuf", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_sendout_run},
    {.name = "broken_ring_f32", .summary = "ring that reduces every dtype as f32", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_f32_run},
    {.name = "broken_ring_sum", .summary = "ring that always sums", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_sum_run},
    {.name = "broken_flag_spin", .summary = "ring after a wait, on i64, for a flag no peer sets", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = flag_spin_run},
    {.name = "broken_ring_stuck", .summary = "ring whose reduce-scatter repeats its first piece forever", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_stuck_run},
    {.name = "broken_ring_mleak", .summary = "ring on a copy of its input that is never freed", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_mleak_run},
    {.name = "broken_ring_sendover", .summary = "ring that writes an element past sendbuf", .mem = CK_MEM_HOST,
     .bytes_formula = "2(p-1)/p * n", .bytes_sent = ring_bytes, .msgs_sent = ring_msgs, .run = ring_sendover_run},
};
const int broken_algos_count = (int)(sizeof broken_algos / sizeof broken_algos[0]);
