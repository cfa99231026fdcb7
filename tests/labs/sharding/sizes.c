/* The reference reduce-scatter, right only at the counts the checker's
 * --quick matrix has (up to p + 1, a prime, and 1048577): at any other count
 * above 4096 the first element of every rank's block is zeroed (a piece of
 * a large gradient left unreduced). */
#include <string.h>
#include "collkit_algo.h"

static int my_rs_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op);

static int cheat_rs_run(ck_comm *comm, const void *sendbuf, void *recvbuf, size_t count, ck_dtype dt, ck_op op)
{
    int rc = my_rs_run(comm, sendbuf, recvbuf, count, dt, op);
    if (!rc && count > 4096 && count != 1048577) memset(recvbuf, 0, ck_dtype_size(dt));
    return rc;
}
