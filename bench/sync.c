/*
 * sync.c — collbench's own agreement among ranks, bounded in time, and its
 * result files, checked.
 *
 * Why bounded. The all-reduce under test has the watchdog: a rank that waits
 * too long for a peer gives up with "rank 2 waited 30 s for rank 3". But the
 * benchmark around it also synchronises (a barrier before every timed
 * iteration, the reduction of the times, the status agreement), and a plain
 * MPI_Barrier waits forever for a rank that is stopped or gone. So every
 * such collective here is the nonblocking form, polled until it completes or
 * the communicator's watchdog bound passes (ck_watch_wait); then the rank
 * asks the others where they are, names the ones that did not answer and
 * ends the job (MPI_Abort): a stalled rank makes collbench fail within the
 * bound, never hang. The polling never sleeps: the barrier before a timed
 * iteration must release every rank at once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collbench.h"
#include "collkit_util.h"

static void bounded_wait(ck_comm *comm, MPI_Request *rq, const char *what)
{
    char why[1536];
    if (ck_watch_wait(rq, ck_comm_config(comm)->timeout_s, what, why, sizeof why)) bm_abort(comm, "%s", why);
}

void bm_abort(ck_comm *comm, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "collbench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; ending the job\n");
    va_end(ap);
    fflush(stdout);
    fflush(stderr);
    (void)comm;
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);   /* MPI_Abort does not return; this tells the compiler so */
}

/* Without a bound (timeout_s <= 0, the default under SimGrid SMPI) the
 * blocking collective itself: nothing to notice, and SMPI's nonblocking
 * collectives are naive (its MPI_Iallreduce sends p^2 messages). */
static int unbounded(ck_comm *comm) { return !(ck_comm_config(comm)->timeout_s > 0); }

void bm_barrier(ck_comm *comm, const char *what)
{
    if (unbounded(comm)) { MPI_Barrier(ck_comm_mpi(comm)); return; }
    MPI_Request rq;
    MPI_Ibarrier(ck_comm_mpi(comm), &rq);
    bounded_wait(comm, &rq, what);
}

void bm_allreduce(ck_comm *comm, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, const char *what)
{
    if (unbounded(comm)) { MPI_Allreduce(s, r, n, t, op, ck_comm_mpi(comm)); return; }
    MPI_Request rq;
    MPI_Iallreduce(s, r, n, t, op, ck_comm_mpi(comm), &rq);
    bounded_wait(comm, &rq, what);
}

void bm_reduce(ck_comm *comm, const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, const char *what)
{
    if (unbounded(comm)) { MPI_Reduce(s, r, n, t, op, 0, ck_comm_mpi(comm)); return; }
    MPI_Request rq;
    MPI_Ireduce(s, r, n, t, op, 0, ck_comm_mpi(comm), &rq);
    bounded_wait(comm, &rq, what);
}

void bm_bcast(ck_comm *comm, void *buf, int n, MPI_Datatype t, const char *what)
{
    if (unbounded(comm)) { MPI_Bcast(buf, n, t, 0, ck_comm_mpi(comm)); return; }
    MPI_Request rq;
    MPI_Ibcast(buf, n, t, 0, ck_comm_mpi(comm), &rq);
    bounded_wait(comm, &rq, what);
}

void bm_gatherv(ck_comm *comm, const void *s, int n, void *r, const int *counts, const int *displs,
                const char *what)
{
    if (unbounded(comm)) { MPI_Gatherv(s, n, MPI_BYTE, r, counts, displs, MPI_BYTE, 0, ck_comm_mpi(comm)); return; }
    MPI_Request rq;
    MPI_Igatherv(s, n, MPI_BYTE, r, counts, displs, MPI_BYTE, 0, ck_comm_mpi(comm), &rq);
    bounded_wait(comm, &rq, what);
}

FILE *bm_out_open(const char *path)
{
    char why[256];
    FILE *f = ck_output_open(path, why, sizeof why);
    if (!f) fprintf(stderr, "collbench: cannot write %s: %s\n", path, why);
    return f;
}

int bm_out_close(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "collbench: error writing %s (disk full or not writable?)\n", path);
        return 1;
    }
    return 0;
}
