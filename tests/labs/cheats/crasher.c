/* Crashes in its first all-reduce on rank 0 (a null write). */
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)s; (void)r; (void)count; (void)dt; (void)op;
    if (ck_comm_rank(comm) == 0) *(volatile int *)0 = 1;
}
