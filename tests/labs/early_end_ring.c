/*
 * A test file for the grader: lab 01's reference ring, right in every case,
 * that ends the program early, or never returns, in the way GRADE_TEST_END
 * names (read at run time, so one file serves every test):
 *
 *   exit       every rank calls exit(0) in its first call with data
 *   quit_last  at p > 1 the last rank calls _exit(0) there (no exit handler
 *              runs: the launcher reports a rank that never finalized MPI)
 *   abort      MPI_Abort(MPI_COMM_WORLD, 0): the launcher's status is 0
 *   finalize   MPI's own finalize (ompi_mpi_finalize where the library has
 *              it, else PMPI_Finalize) and _exit(0): status 0 again, and a
 *              call into MPI's insides for the integrity part to find
 *   loop       an endless loop that never waits (no watchdog sees it)
 *   slow       right, but sleeps 0.25 s in every call: cases finish, too
 *              slowly for the time limit (slow, not an endless loop)
 *   bench      MPI_Abort(MPI_COMM_WORLD, 0) at 1 Mi elements only (the
 *              paired part's 4 MB; the checker's large count is 1 Mi + 1):
 *              every check passes, and the paired run ends with status 0
 *              and no result
 *   (unset)    the ring, nothing else
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collkit_algo.h"

extern int ompi_mpi_finalize(void) __attribute__((weak));

static void end_early(ck_comm *comm, size_t count)
{
    const char *how = getenv("GRADE_TEST_END");
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    if (!how || !count) return;
    if (!strcmp(how, "exit")) exit(0);
    if (!strcmp(how, "quit_last") && p > 1 && r == p - 1) _exit(0);
    if (!strcmp(how, "abort")) MPI_Abort(MPI_COMM_WORLD, 0);
    if (!strcmp(how, "finalize")) {
        if (ompi_mpi_finalize) ompi_mpi_finalize();
        else PMPI_Finalize();
        _exit(0);
    }
    if (!strcmp(how, "loop")) {
        volatile int spin = 1;
        while (spin) { }
    }
    if (!strcmp(how, "slow")) {
        struct timespec t = {0, 250000000};
        nanosleep(&t, NULL);
    }
    if (!strcmp(how, "bench") && count == (size_t)1 << 20) MPI_Abort(MPI_COMM_WORLD, 0);
}

static int my_ring_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    const int p = ck_comm_size(comm), r = ck_comm_rank(comm);
    const size_t es = ck_dtype_size(dt);
    const int right = (r + 1) % p, left = (r - 1 + p) % p;
    const char *in = sendbuf;
    char *out = recvbuf;

    end_early(comm, count);
    if (p == 1) return ck_copy(comm, out, in, count * es);
    size_t off0, max_len;
    ck_block(count, p, 0, &off0, &max_len);
    char *tmp = ck_scratch(comm, max_len * es);
    if (!tmp) return CK_ERR_NOMEM;
    for (int s = 0; s < p - 1; s++) {   /* reduce-scatter */
        ck_step(comm, s, "reduce-scatter");
        const int sb = ((r - s) % p + p) % p, rb = ((r - s - 1) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        const char *src = (s == 0 ? in : out) + soff * es;
        int rc = ck_sendrecv(comm, src, slen * es, right, tmp, rlen * es, left, s);
        if (!rc) rc = ck_reduce_local(comm, out + roff * es, in + roff * es, tmp, rlen, dt, op);
        if (rc) return rc;
    }
    for (int s = 0; s < p - 1; s++) {   /* all-gather */
        ck_step(comm, p - 1 + s, "all-gather");
        const int sb = ((r + 1 - s) % p + p) % p, rb = ((r - s) % p + p) % p;
        size_t soff, slen, roff, rlen;
        ck_block(count, p, sb, &soff, &slen);
        ck_block(count, p, rb, &roff, &rlen);
        int rc = ck_sendrecv(comm, out + soff * es, slen * es, right, out + roff * es, rlen * es, left, p - 1 + s);
        if (rc) return rc;
    }
    return CK_SUCCESS;
}

static uint64_t my_ring_bytes(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)cfg;
    if (p == 1) return 0;
    size_t off, skip_rs, skip_ag;
    ck_block(count, p, (r + 1) % p, &off, &skip_rs);
    ck_block(count, p, (r + 2) % p, &off, &skip_ag);
    return (uint64_t)(2 * count - skip_rs - skip_ag) * es;
}

static uint64_t my_ring_msgs(int p, int r, size_t count, size_t es, const ck_config *cfg)
{
    (void)r; (void)es; (void)cfg;
    return p == 1 || count == 0 ? 0 : 2 * (uint64_t)(p - 1);
}

const ck_algo my_ring = {.name = "my_ring", .summary = "a ring that ends the program early", .mem = CK_MEM_HOST,
                         .bytes_formula = "2(p-1)/p * n", .bytes_sent = my_ring_bytes, .msgs_sent = my_ring_msgs,
                         .run = my_ring_run};
CK_REGISTER_ALGO(my_ring)
