/* A fork bomb before main (a constructor: before any confinement), each
 * process then waiting: 2^10 processes from every process that loads the
 * file. Bounded by the fixture itself (ten doublings, each child ending after
 * a minute), so that a grader whose process cap does not hold fails its test
 * without taking the machine's process table. */
#include <unistd.h>
#include "collkit_algo.h"

__attribute__((constructor)) static void bomb(void)
{
    int child = 0;
    for (int d = 0; d < 10; d++)
        if (fork() == 0)
            child = 1;
    if (child) {
        sleep(60);
        _exit(0);
    }
}

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
}
