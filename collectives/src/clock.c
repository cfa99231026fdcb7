/*
 * clock.c — the library's one clock (ck_now) and the offsets between the
 * ranks' clocks (ck_clock_offsets), which the traces use to put every
 * rank's events on rank 0's time. At the bottom of the library: every wait
 * reads it, and it calls nothing of the library.
 */
#include <time.h>
#include "collkit.h"

double ck_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0 sends its time, rank r answers with its own: r's clock minus the
 * midpoint of rank 0's send and receive, from the round trip with the
 * smallest delay (the least disturbed of a few). */
void ck_clock_offsets(MPI_Comm comm, double *off)
{
    enum { ROUNDS = 8 };
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (rank == 0) off[0] = 0;
    for (int r = 1; r < p; r++) {
        if (rank == 0) {
            double best = 1e300;
            for (int k = 0; k < ROUNDS; k++) {
                double ta = ck_now(), tr;
                MPI_Send(&ta, 1, MPI_DOUBLE, r, 77, comm);
                MPI_Recv(&tr, 1, MPI_DOUBLE, r, 78, comm, MPI_STATUS_IGNORE);
                double tb = ck_now();
                if (tb - ta < best) { best = tb - ta; off[r] = tr - 0.5 * (ta + tb); }
            }
        } else if (rank == r) {
            for (int k = 0; k < ROUNDS; k++) {
                double ta, tr;
                MPI_Recv(&ta, 1, MPI_DOUBLE, 0, 77, comm, MPI_STATUS_IGNORE);
                tr = ck_now();
                MPI_Send(&tr, 1, MPI_DOUBLE, 0, 78, comm);
            }
        }
    }
}
