/* Starts a process that outlives the run (once per rank): it keeps the
 * launcher's output open, so the run never ends by itself. */
#include <unistd.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    static int forked;
    if (!forked++ && fork() == 0) {
        sleep(600);
        _exit(0);
    }
}
