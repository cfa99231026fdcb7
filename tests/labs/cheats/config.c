/* Writes the communicator's settings through the pointer ck_comm_config
 * returns (a cast away from const): a chunk of 1 B would slow the library's
 * pipelined algorithms timed beside it, a watchdog turned off would hide a
 * hang. The pointer is to a copy: nothing the library reads changes. */
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)s; (void)r; (void)count; (void)dt; (void)op;
    ck_config *cfg = (ck_config *)ck_comm_config(comm);
    cfg->chunk_bytes = 1;
    cfg->timeout_s = 0;
    cfg->validate = 0;
}
