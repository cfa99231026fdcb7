/* Times itself with MPI_Wtime: a forbidden name in its object code (the
 * next grading, of another file, must not see it). */
#include <mpi.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)s; (void)r; (void)count; (void)dt; (void)op;
    if (MPI_Wtime() < 0) ck_step(comm, 0, "never");
}
