/* Allocates and touches memory without end: the machine's memory, not the
 * student's work, would end the grading. */
#include <stdlib.h>
#include <string.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    for (;;) {
        char *m = malloc((size_t)1 << 28);
        if (!m) abort();
        memset(m, 1, (size_t)1 << 28);
    }
}
