/*
 * transport_mpi.c — the host-memory transport: MPI_Isend/MPI_Irecv/MPI_Test on
 * the communicator's private MPI_Comm, reductions by the host kernels.
 */
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include "transport.h"

typedef struct { MPI_Comm comm; } mpi_tr;

/* ck_req.impl holds up to 4 MPI requests: messages larger than INT_MAX bytes
 * are split, since MPI counts are int. */
#define MAX_PART ((size_t)1 << 30)
#define MAX_REQS 4

static MPI_Request *reqs_of(ck_req *r) { return (MPI_Request *)(void *)r->impl; }

static int post(mpi_tr *t, void *buf, size_t bytes, int peer, int tag, ck_req *r, int is_send)
{
    _Static_assert(sizeof(MPI_Request) * MAX_REQS <= sizeof(((ck_req *)0)->impl), "ck_req.impl too small");
    MPI_Request *q = reqs_of(r);
    size_t nparts = bytes ? (bytes + MAX_PART - 1) / MAX_PART : 1;
    if (nparts > MAX_REQS) return CK_ERR_UNSUPPORTED;
    for (size_t i = 0; i < MAX_REQS; i++) q[i] = MPI_REQUEST_NULL;
    for (size_t i = 0; i < nparts; i++) {
        size_t off = i * MAX_PART, len = bytes - off < MAX_PART ? bytes - off : MAX_PART;
        char *p = (char *)buf + off;
        int rc = is_send ? MPI_Isend(p, (int)len, MPI_BYTE, peer, tag, t->comm, &q[i])
                         : MPI_Irecv(p, (int)len, MPI_BYTE, peer, tag, t->comm, &q[i]);
        if (rc != MPI_SUCCESS) return CK_ERR_TRANSPORT;
    }
    return CK_SUCCESS;
}

static int mpi_isend(void *self, const void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return post(self, (void *)buf, bytes, peer, tag, r, 1);
}

static int mpi_irecv(void *self, void *buf, size_t bytes, int peer, int tag, ck_req *r)
{
    return post(self, buf, bytes, peer, tag, r, 0);
}

static int mpi_test(void *self, ck_req *r, int *done)
{
    (void)self;
    if (MPI_Testall(MAX_REQS, reqs_of(r), done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return CK_ERR_TRANSPORT;
    return CK_SUCCESS;
}

static void mpi_cancel(void *self, ck_req *r)
{
    (void)self;
    MPI_Request *q = reqs_of(r);
    for (int i = 0; i < MAX_REQS; i++)
        if (q[i] != MPI_REQUEST_NULL) { MPI_Cancel(&q[i]); MPI_Request_free(&q[i]); }
}

static int mpi_reduce(void *self, void *dst, const void *a, const void *b, size_t n, ck_dtype dt, ck_op op)
{
    (void)self;
    return ck_reduce_host(dst, a, b, n, dt, op);
}

static int mpi_divide(void *self, void *buf, size_t n, ck_dtype dt, int divisor)
{
    (void)self;
    return ck_divide_host(buf, n, dt, divisor);
}

static int mpi_copy(void *self, void *dst, const void *src, size_t bytes)
{
    (void)self;
    if (bytes && dst != src) memmove(dst, src, bytes);
    return CK_SUCCESS;
}

static void *mpi_alloc(void *self, size_t bytes)
{
    (void)self;
    void *p = NULL;
    size_t rounded = (bytes + 63) / 64 * 64;
    if (posix_memalign(&p, 64, rounded ? rounded : 64)) return NULL;
    return p;
}

static void mpi_free(void *self, void *p) { (void)self; free(p); }
static void mpi_destroy(void *self) { free(self); }

int ck_transport_mpi_create(MPI_Comm comm, ck_transport *out)
{
    mpi_tr *t = calloc(1, sizeof *t);
    if (!t) return CK_ERR_NOMEM;
    t->comm = comm;
    *out = (ck_transport){
        .name = "mpi", .mem = CK_MEM_HOST, .self = t,
        .isend = mpi_isend, .irecv = mpi_irecv, .test = mpi_test, .cancel = mpi_cancel,
        .reduce = mpi_reduce, .divide = mpi_divide, .copy = mpi_copy,
        .upload = mpi_copy, .download = mpi_copy,
        .alloc = mpi_alloc, .free = mpi_free, .finish = NULL, .destroy = mpi_destroy,
    };
    return CK_SUCCESS;
}
