/*
 * broken_shm.c — a single-copy all-reduce written against collkit_shm.h the
 * way a student would write one (shm_star: copy the input into shared
 * memory, a flag barrier, fold every rank's copy, a closing barrier), and
 * three copies of it with one bug each, registered the out-of-tree way
 * (CK_REGISTER_ALGO). The checker must catch each on the shm transport, for
 * the right reason:
 *
 *   broken_shm_star_uncounted  loads from peers but never ck_count_traffic:
 *                              the traffic check sees 0 bytes
 *   broken_shm_star_skip       folds every rank but the last: its
 *                              contribution is missing on every rank
 *   broken_shm_star_absent     the last rank never raises its flag: the
 *                              others' barrier wait ends in the watchdog,
 *                              which names that rank
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "collkit_shm.h"

enum { BUG_NONE, BUG_UNCOUNTED, BUG_SKIP, BUG_ABSENT };

typedef struct { _Alignas(64) _Atomic uint64_t v; } flag_line;

typedef struct { flag_line *mine; int p, r; int which; } wait_arg;

static int pending(void *arg)
{
    const wait_arg *w = arg;
    for (int q = 0; q < w->p; q++)
        if (q != w->r && atomic_load_explicit(&w->mine[w->which * w->p + q].v, memory_order_acquire) == 0) return q;
    return -1;
}

/* Raise my flag `which` in every peer's region, wait for theirs in mine. */
static int barrier(ck_comm *comm, char **regions, int which, const char *what)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    for (int q = 0; q < p; q++)
        if (q != r) atomic_store_explicit(&((flag_line *)regions[q])[which * p + r].v, 1, memory_order_release);
    wait_arg w = {(flag_line *)regions[r], p, r, which};
    return ck_shm_wait(comm, pending, &w, what);
}

static int star(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op, int bug)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt), n = count * es, flags = 2 * (size_t)p * sizeof(flag_line);
    if (p == 1) return ck_copy(comm, recvbuf, sendbuf, n);
    /* A fresh region per call: flags zeroed before the offsets are exchanged. */
    char *region = ck_alloc(comm, flags + n), **regions = calloc((size_t)p, sizeof *regions);
    int64_t off = region ? ck_shm_offset(comm, region, flags + n) : -1, *offs = calloc((size_t)p, sizeof *offs);
    if (off >= 0) memset(region, 0, flags);
    MPI_Allgather(&off, 1, MPI_INT64_T, offs, 1, MPI_INT64_T, ck_comm_mpi(comm));
    int rc = CK_SUCCESS;
    for (int q = 0; q < p && !rc; q++)
        if (offs[q] < 0 || !regions || !(regions[q] = ck_shm_peer(comm, q, offs[q])))
            rc = ck_fail(comm, CK_ERR_NOMEM, "shm_star: rank %d's region is not in shared memory", q);
    if (!rc && bug == BUG_ABSENT && r == p - 1) {
        rc = ck_copy(comm, recvbuf, sendbuf, n);   /* BUG: never raises its flag, never waits */
        goto out;
    }
    if (!rc) {
        ck_step(comm, 0, "copy-in");
        memcpy(region + flags, sendbuf, n);
        ck_step(comm, 0, "barrier");
        rc = barrier(comm, regions, 0, "its start flag");
    }
    if (!rc) {
        ck_step(comm, 1, "fold");
        const int last = bug == BUG_SKIP ? p - 2 : p - 1;   /* BUG (skip): the last rank is left out */
        rc = ck_reduce_local(comm, recvbuf, regions[0] + flags, regions[1] + flags, count, dt, op);
        for (int q = 2; q <= last && !rc; q++) rc = ck_reduce_local(comm, recvbuf, recvbuf, regions[q] + flags, count, dt, op);
        if (bug != BUG_UNCOUNTED) ck_count_traffic(comm, (uint64_t)(p - 1) * n, 0, (uint64_t)(p - 1) * n, 0);  /* else BUG */
    }
    if (!rc) {
        ck_step(comm, 2, "barrier");
        rc = barrier(comm, regions, 1, "it to finish loading");
    }
out:
    if (rc != CK_ERR_TIMEOUT) ck_free(comm, region);   /* after a timeout a peer may still come: leave it */
    free(regions);
    free(offs);
    return rc;
}

static int star_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op) { return star(c, s, d, n, dt, op, BUG_NONE); }
static int uncounted_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op) { return star(c, s, d, n, dt, op, BUG_UNCOUNTED); }
static int skip_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op) { return star(c, s, d, n, dt, op, BUG_SKIP); }
static int absent_run(ck_comm *c, const void *s, void *d, size_t n, ck_dtype dt, ck_op op) { return star(c, s, d, n, dt, op, BUG_ABSENT); }

static uint64_t star_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)cfg;
    return (uint64_t)(p - 1) * count * es;
}

static uint64_t no_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)p; (void)r; (void)count; (void)es; (void)cfg;
    return 0;
}

#define STAR(var, nm, sum, fn)                                                                            \
    const ck_algo var = {.name = nm, .summary = sum, .mem = CK_MEM_SHM, .bytes_formula = "(p-1) * n (read by peers)", \
                         .bytes_sent = star_bytes, .msgs_sent = no_msgs, .run = fn};                      \
    CK_REGISTER_ALGO(var)

STAR(shm_star, "shm_star", "copy-in, flag barrier, every rank folds every copy (correct)", star_run)
STAR(shm_star_uncounted, "broken_shm_star_uncounted", "shm_star that does not count its loads", uncounted_run)
STAR(shm_star_skip, "broken_shm_star_skip", "shm_star that folds all ranks but the last", skip_run)
STAR(shm_star_absent, "broken_shm_star_absent", "shm_star whose last rank never raises its flag", absent_run)
