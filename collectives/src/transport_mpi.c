/*
 * transport_mpi.c — the host-memory transport: MPI_Isend/MPI_Irecv/MPI_Test on
 * the communicator's private MPI_Comm, reductions by the host kernels.
 *
 * Under SimGrid SMPI (COLLKIT_SMPI, cmake/smpi.cmake) two things differ:
 * a local reduction is charged to simulated time as modelled compute (one
 * flop per element at the simulated host's speed) rather than as the time
 * this machine took, and buffers come from plain malloc, which SMPI's shared
 * malloc can fold (sim/README.md).
 */
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdio.h>
#include "transport.h"

typedef struct {
    MPI_Comm comm;
    int      rank;
    char     err[256];   /* the detail of the last failure (a size mismatch) */
} mpi_tr;

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

/* A completed receive must have got exactly the bytes it posted: a longer
 * message is MPI_ERR_TRUNCATE, a shorter one completes without complaint, and
 * either way the two sides disagree about the schedule. Both become
 * CK_ERR_PROTOCOL with the request finished (*done = 1), naming both ranks and
 * both sizes. (Open MPI's status counts the message's full size on a
 * truncation; where an MPI counts only what fit, the message says "more than".) */
static int finished(mpi_tr *t, ck_req *r, int rc, MPI_Status *st, int *done)
{
    t->err[0] = '\0';
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return CK_ERR_TRANSPORT;
    if (!*done && rc == MPI_SUCCESS) return CK_SUCCESS;
    size_t got = 0;
    int truncated = 0, failed = 0;
    for (int i = 0; i < MAX_REQS; i++) {
        int ec = MPI_SUCCESS, n = 0;
        if (rc == MPI_ERR_IN_STATUS && st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING)
            MPI_Error_class(st[i].MPI_ERROR, &ec);
        truncated |= ec == MPI_ERR_TRUNCATE;
        failed |= ec != MPI_SUCCESS && ec != MPI_ERR_TRUNCATE;
        if (r->kind == CK_EV_RECV && MPI_Get_count(&st[i], MPI_BYTE, &n) == MPI_SUCCESS && n > 0) got += (size_t)n;
    }
    if (failed) return CK_ERR_TRANSPORT;
    if (r->kind != CK_EV_RECV || (!truncated && got == r->bytes)) return CK_SUCCESS;
    if (rc == MPI_ERR_IN_STATUS) {   /* parts still pending: drop them, the request is over */
        MPI_Request *q = reqs_of(r);
        for (int i = 0; i < MAX_REQS; i++)
            if (q[i] != MPI_REQUEST_NULL) { MPI_Cancel(&q[i]); MPI_Request_free(&q[i]); }
    }
    *done = 1;
    if (truncated && got <= r->bytes)
        snprintf(t->err, sizeof t->err, "size mismatch: rank %d sent more than the %zu B rank %d expected (tag %d)",
                 r->peer, r->bytes, t->rank, r->tag);
    else
        snprintf(t->err, sizeof t->err, "size mismatch: rank %d sent %zu B to rank %d (tag %d) where rank %d expected %zu B",
                 r->peer, got, t->rank, r->tag, t->rank, r->bytes);
    return CK_ERR_PROTOCOL;
}

static int mpi_test(void *self, ck_req *r, int *done)
{
    MPI_Status st[MAX_REQS];
    int rc = MPI_Testall(MAX_REQS, reqs_of(r), done, st);
    return finished(self, r, rc, st, done);
}

/* The blocking form, for ck_waitall without the watchdog: the same checks. */
static int mpi_wait(void *self, ck_req *r)
{
    MPI_Status st[MAX_REQS];
    int done = 1, rc = MPI_Waitall(MAX_REQS, reqs_of(r), st);
    return finished(self, r, rc, st, &done);
}

static const char *mpi_error(void *self) { return ((mpi_tr *)self)->err; }

/* Open MPI moves its pending sends and receives on inside any call that
 * enters its progress engine: a probe that matches nothing is the cheapest. */
static int mpi_progress(void *self)
{
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ((mpi_tr *)self)->comm, &flag, MPI_STATUS_IGNORE);
    return CK_SUCCESS;
}

static void mpi_cancel(void *self, ck_req *r)
{
    (void)self;
    MPI_Request *q = reqs_of(r);
    for (int i = 0; i < MAX_REQS; i++)
        if (q[i] != MPI_REQUEST_NULL) { MPI_Cancel(&q[i]); MPI_Request_free(&q[i]); }
}

/* Under SMPI the kernel runs outside SMPI's benchmarking of host compute
 * (which, with smpi/simulate-computation on, would charge this machine's
 * time) and is charged as n flops instead: one per element, so the reduce
 * rate is the simulated host's speed and runs are deterministic. With the
 * buffers folded (COLLKIT_SIM_FOLDED, set by sim/simrun -fold) the data are
 * garbage anyway: the kernels and copies are charged but not run, which
 * keeps p = 1024 within minutes of host time. */
#ifdef COLLKIT_SMPI
static int sim_folded(void)
{
    static int folded = -1;   /* per simulated rank: SMPI privatises globals */
    if (folded < 0) folded = getenv("COLLKIT_SIM_FOLDED") != NULL;
    return folded;
}
static void sim_compute_begin(void) { smpi_bench_end(); }
static void sim_compute_end(size_t n) { smpi_execute_flops((double)n); smpi_bench_begin(); }
#else
static int sim_folded(void) { return 0; }
static void sim_compute_begin(void) {}
static void sim_compute_end(size_t n) { (void)n; }
#endif

static int mpi_reduce(void *self, void *dst, const void *a, const void *b, size_t n, ck_dtype dt, ck_op op)
{
    (void)self;
    sim_compute_begin();
    int rc = sim_folded() ? CK_SUCCESS : ck_reduce_host(dst, a, b, n, dt, op);
    sim_compute_end(n);
    return rc;
}

static int mpi_divide(void *self, void *buf, size_t n, ck_dtype dt, int divisor)
{
    (void)self;
    sim_compute_begin();
    int rc = sim_folded() ? CK_SUCCESS : ck_divide_host(buf, n, dt, divisor);
    sim_compute_end(n);
    return rc;
}

static int mpi_copy(void *self, void *dst, const void *src, size_t bytes)
{
    (void)self;
    if (bytes && dst != src && !sim_folded()) memmove(dst, src, bytes);
    return CK_SUCCESS;
}

static void *mpi_alloc(void *self, size_t bytes)
{
    (void)self;
#ifdef COLLKIT_SMPI
    /* Plain malloc (smpicc's macro): with smpi/auto-shared-malloc-thresh set,
     * SMPI folds large buffers of all ranks onto the same pages and skips
     * their copies, so p = 1024 fits in memory (timing runs only: the data
     * are then meaningless, hence collbench -c 0). */
    return malloc(bytes ? bytes : 1);
#else
    void *p = NULL;
    size_t rounded = (bytes + 63) / 64 * 64;
    if (posix_memalign(&p, 64, rounded ? rounded : 64)) return NULL;
    return p;
#endif
}

static void mpi_free(void *self, void *p) { (void)self; free(p); }
static void mpi_destroy(void *self) { free(self); }

int ck_transport_mpi_create(MPI_Comm comm, ck_transport *out)
{
    mpi_tr *t = calloc(1, sizeof *t);
    if (!t) return CK_ERR_NOMEM;
    t->comm = comm;
    MPI_Comm_rank(comm, &t->rank);
    /* A truncated receive is reported by mpi_test, not fatal inside MPI. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    *out = (ck_transport){
        .name = "mpi", .mem = CK_MEM_HOST, .self = t,
        .isend = mpi_isend, .irecv = mpi_irecv, .test = mpi_test, .wait = mpi_wait, .cancel = mpi_cancel,
        .progress = mpi_progress,
        .reduce = mpi_reduce, .divide = mpi_divide, .copy = mpi_copy,
        .upload = mpi_copy, .download = mpi_copy,
        .alloc = mpi_alloc, .free = mpi_free, .finish = NULL, .destroy = mpi_destroy, .error = mpi_error,
    };
    return CK_SUCCESS;
}
