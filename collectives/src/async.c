/* async.c — placeholder until the progress-thread engine lands. */
#include "internal.h"

int ck_allreduce_async(ck_comm *comm, const ck_algo *algo, const void *sendbuf, void *recvbuf,
                       size_t count, ck_dtype dt, ck_op op, ck_async **handle)
{
    (void)comm; (void)algo; (void)sendbuf; (void)recvbuf; (void)count; (void)dt; (void)op;
    *handle = NULL;
    return CK_ERR_UNSUPPORTED;
}
int ck_allreduce_wait(ck_async *h) { (void)h; return CK_ERR_UNSUPPORTED; }
void ck_async_shutdown(ck_comm *comm) { (void)comm; }
