/* Prints without end: a log that would fill the grader's disk. */
#include <stdio.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    for (;;) printf("%0200d\n", 0);
}
