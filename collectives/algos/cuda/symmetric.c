/*
 * symmetric.c — the symmetric buffers behind oneshot and twoshot.
 *
 * Every rank cudaMallocs one buffer of the same layout, exports it with
 * cudaIpcGetMemHandle, and maps every peer's (cudaIpcOpenMemHandle): a kernel
 * on rank r can then load rank q's data directly (over NVLink or PCIe, or
 * from the same GPU's memory when ranks share it). Layout of each buffer:
 *
 *   [ flags: start barrier [block][rank], mid barrier [block][rank] ][ half 0 ][ half 1 ]
 *
 * Every rank must use the same layout (a kernel finds rank q's half at the
 * same offset in q's buffer as in its own) and the same grid (the barriers
 * pair blocks by index): both follow from max_blocks (ck_sym_max_blocks:
 * CK_SYM_BLOCKS_PER_SM times the smallest SM count among the ranks' GPUs,
 * divided among the ranks that share a GPU), agreed on at setup.
 *
 * One launch reduces at most CK_SYM_HALF bytes: copy my input into a half,
 * then one kernel does barrier -> loads (symmetric_kernels.cu). Launch g uses
 * half g % 2, so the copy of launch g+1 never overwrites what a slow peer may
 * still be reading of launch g (the kernel file says why two are enough).
 *
 * The state is per communicator: kept with ck_algo_state under a key of its
 * own, so oneshot and twoshot share one set of buffers and one launch
 * counter, and ck_comm_destroy frees it. Setting it up and tearing it down are
 * collective, with MPI on the communicator's own MPI_Comm: every rank must
 * agree that every rank allocated, and no rank may free its buffer while a
 * peer still has it mapped.
 *
 * Failures. A kernel barrier that waits longer than the communicator's
 * timeout sets a host-mapped word and the block leaves: the call returns
 * CK_ERR_TIMEOUT. After that, or any CUDA failure, the ranks' launch
 * counters may be out of step, so the buffers refuse further calls.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "symmetric.h"

typedef struct sym {
    ck_comm     *comm;           /* its owner: the stream waits (ck_cuda_wait) */
    MPI_Comm     mpi;            /* the communicator's MPI_Comm: the teardown agreement */
    int          p, rank, dev;
    cudaStream_t stream;         /* the transport's */
    char        *base;           /* my buffer */
    size_t       bytes, flags_bytes;
    unsigned     max_blocks;     /* the grid's cap, the same on every rank */
    char       **peer_base;      /* host: rank q's buffer mapped here (mine for q == rank) */
    char       **d_peer_base;    /* the same table in device memory, for the kernels */
    unsigned     gen;            /* launches so far: the same on every rank */
    int         *err;            /* pinned host word, mapped: a barrier timed out */
    int         *d_err;          /* its device address */
    int         *gave_up;        /* device word: a barrier timed out, later launches skip */
    int          broken;
    double       timeout_s;      /* the communicator's, at the last call */
} sym;

/* The ck_algo_state key: a descriptor of its own (never registered), so both
 * algorithms find the same state. */
static const ck_algo sym_key = {.name = "oneshot/twoshot symmetric buffers"};

/* Two barrier areas of max_blocks x p flags, rounded to a page: the halves
 * after it stay 16-byte (indeed page) aligned. */
static size_t flags_bytes(int p, unsigned max_blocks)
{
    return ((size_t)2 * max_blocks * (size_t)p * sizeof(unsigned) + 4095) / 4096 * 4096;
}
static size_t round_2m(size_t x) { const size_t m = (size_t)2 << 20; return (x + m - 1) / m * m; }

/* Close my mappings of the peers' buffers, then (collective) agree that every
 * rank's stream drained, then free mine. A kernel still spinning after a
 * timeout, on this rank or a peer, may still read or write my buffer: then
 * every rank leaks its buffer rather than pull memory from under it. (The
 * transport's staging areas follow the same rule.) */
static void teardown(sym *s, int collective)
{
    if (!s) return;
    int idle = ck_cuda_wait(s->comm, s->timeout_s) == 1, all_idle = idle;
    for (int q = 0; idle && s->peer_base && q < s->p; q++)
        if (q != s->rank && s->peer_base[q]) cudaIpcCloseMemHandle(s->peer_base[q]);
    if (collective) MPI_Allreduce(&idle, &all_idle, 1, MPI_INT, MPI_MIN, s->mpi);
    if (!all_idle && s->rank == 0)
        fprintf(stderr, "collkit: a rank's oneshot/twoshot kernel did not finish: the symmetric buffers are left "
                "allocated until the process ends (a peer's kernel may still use them)\n");
    if (all_idle) {
        if (s->base) cudaFree(s->base);
        if (s->d_peer_base) cudaFree(s->d_peer_base);
        if (s->err) cudaFreeHost(s->err);
        if (s->gave_up) cudaFree(s->gave_up);
    }
    free(s->peer_base);
    free(s);
}

static void sym_destroy(void *state)
{
    sym *s = state;
    cudaSetDevice(s->dev);
    teardown(s, 1);
}

#define TRY(call) do { if (e == cudaSuccess) e = (call); } while (0)

/* A failed setup: every rank got here together (after an agreement), so
 * each releases its own part; `mapped`: some ranks opened peers' buffers,
 * so the release is collective. */
static int setup_failed(ck_comm *comm, sym *s, int mapped, const char *name, const char *what,
                        int mine, cudaError_t e)
{
    ck_algo_state_set(comm, &sym_key, NULL, NULL);
    teardown(s, mapped);
    return ck_fail(comm, CK_ERR_TRANSPORT, "%s: could not %s the symmetric buffers%s%s", name, what,
                   !mine ? " (another rank failed)" : ": ",
                   !mine ? "" : e != cudaSuccess ? cudaGetErrorString(e) : "out of host memory");
}

/* Collective: agree on the grid cap, allocate, agree, exchange handles, map,
 * agree again. On failure every rank releases what it made and the next call
 * tries again. */
static int setup(ck_comm *comm, const char *name, sym **out)
{
    const int p = ck_comm_size(comm), rank = ck_comm_rank(comm);
    const MPI_Comm mc = ck_comm_mpi(comm);
    cudaError_t e = cudaSuccess;
    cudaIpcMemHandle_t mine, *all = calloc((size_t)p, sizeof *all);
    sym *s = calloc(1, sizeof *s);
    int bad, anybad = 0, sms = 0, sharing = 0;
    memset(&mine, 0, sizeof mine);
    if (s) {
        s->comm = comm;
        s->mpi = mc;
        s->p = p;
        s->rank = rank;
        s->dev = ck_cuda_device(comm);
        s->stream = ck_cuda_stream(comm);
        s->timeout_s = ck_comm_config(comm)->timeout_s;
        s->peer_base = calloc((size_t)p, sizeof *s->peer_base);
        TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, s->dev));
        /* The PCI ids were gathered at the transport's creation: every rank
         * finds the same count. */
        const char **ids = malloc((size_t)p * sizeof *ids);
        if (ids) {
            for (int q = 0; q < p; q++) ids[q] = ck_cuda_pci_id(comm, q);
            sharing = ck_sym_max_sharing(ids, p);
            free(ids);
        }
    }
    /* Take the state slot now (no destructor yet): a failure to do so is
     * then local and agreed on like the others. */
    bad = !all || !s || !s->peer_base || e != cudaSuccess || sms < 1 || sharing < 1 ||
          ck_algo_state_set(comm, &sym_key, s, NULL) != CK_SUCCESS;
    /* One reduction for both: any failure, and the smallest SM count. */
    int in[2] = {bad, bad ? 0 : -sms}, agreed[2];
    MPI_Allreduce(in, agreed, 2, MPI_INT, MPI_MAX, mc);
    if (agreed[0]) { free(all); return setup_failed(comm, s, 0, name, "set up", bad, e); }
    s->max_blocks = ck_sym_max_blocks(-agreed[1], sharing);
    s->flags_bytes = flags_bytes(p, s->max_blocks);
    s->bytes = round_2m(s->flags_bytes + 2 * CK_SYM_HALF);

    TRY(cudaMalloc((void **)&s->base, s->bytes));
    TRY(cudaMemsetAsync(s->base, 0, s->flags_bytes, s->stream));
    TRY(cudaStreamSynchronize(s->stream));   /* flags are zero before any peer can write them */
    TRY(cudaIpcGetMemHandle(&mine, s->base));
    TRY(cudaHostAlloc((void **)&s->err, sizeof(int), cudaHostAllocMapped));
    TRY(cudaHostGetDevicePointer((void **)&s->d_err, s->err, 0));
    TRY(cudaMalloc((void **)&s->d_peer_base, (size_t)p * sizeof(char *)));
    TRY(cudaMalloc((void **)&s->gave_up, sizeof(int)));
    TRY(cudaMemset(s->gave_up, 0, sizeof(int)));
    bad = e != cudaSuccess;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, mc);
    if (anybad) { free(all); return setup_failed(comm, s, 0, name, "allocate", bad, e); }

    *s->err = 0;
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, mc);
    for (int q = 0; q < p && e == cudaSuccess; q++) {
        if (q == rank) { s->peer_base[q] = s->base; continue; }
        TRY(cudaIpcOpenMemHandle((void **)&s->peer_base[q], all[q], cudaIpcMemLazyEnablePeerAccess));
        if (e != cudaSuccess) s->peer_base[q] = NULL;
    }
    TRY(cudaMemcpy(s->d_peer_base, s->peer_base, (size_t)p * sizeof(char *), cudaMemcpyHostToDevice));
    free(all);
    bad = e != cudaSuccess;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, mc);
    if (anybad) return setup_failed(comm, s, 1, name, "map", bad, e);

    ck_algo_state_set(comm, &sym_key, s, sym_destroy);   /* same state: only the destructor changes */
    *out = s;
    return CK_SUCCESS;
}

int ck_sym_allreduce(ck_comm *comm, const void *sendbuf, void *recvbuf,
                     size_t count, ck_dtype dt, ck_op op, int two_shot)
{
    const char *name = two_shot ? "twoshot" : "oneshot";
    const size_t es = ck_dtype_size(dt);
    const double to = ck_comm_config(comm)->timeout_s;
    int rc;
    if ((rc = ck_cuda_use(comm))) return rc;
    sym *s = ck_algo_state(comm, &sym_key);
    if (!s && (rc = setup(comm, name, &s))) return rc;
    if (s->broken)
        return ck_fail(comm, CK_ERR_TRANSPORT, "%s: the symmetric buffers are unusable after an earlier "
                       "failure (the ranks' launch counters may differ)", name);
    s->timeout_s = to;
    if ((uintptr_t)sendbuf % es || (uintptr_t)recvbuf % es) {
        s->broken = 1;   /* the peers launch without us: out of step from here on */
        return ck_fail(comm, CK_ERR_INVALID_ARG, "%s: device buffers must be aligned to the element size (%zu B)",
                       name, es);
    }

    const size_t per = ck_sym_launch_elems(es);
    for (size_t off = 0; off < count; off += per) {
        ck_sym_launch a = {
            .peers = (char *const *)s->d_peer_base, .p = s->p, .rank = s->rank,
            .max_blocks = s->max_blocks, .flags_off = 0, .out = (char *)recvbuf + off * es, .count = count - off < per ? count - off : per,
            .dt = (int)dt, .op = (int)op, .gen = ++s->gen,
            .timeout_ns = to > 0 ? (unsigned long long)(to * 1e9) : 0, .err = s->d_err,
            .gave_up = s->gave_up,
        };
        a.data_off = s->flags_bytes + (a.gen & 1u) * CK_SYM_HALF;
        a.blocks = ck_sym_grid(a.count, s->p, es, two_shot, s->max_blocks);
        cudaError_t e = cudaMemcpyAsync(s->base + a.data_off, (const char *)sendbuf + off * es, a.count * es,
                                        cudaMemcpyDefault, s->stream);
        if (e == cudaSuccess) e = ck_sym_launch_kernel(&a, two_shot, s->stream);
        if (e != cudaSuccess) {
            s->broken = 1;
            return ck_fail(comm, CK_ERR_TRANSPORT, "%s: launch %u (elements %zu..%zu): %s", name, a.gen,
                           off, off + a.count - 1, cudaGetErrorString(e));
        }
    }
    /* Wait here rather than in ck_allreduce: a barrier that timed out in the
     * kernel is reported as such. A block gives up after `to` at a barrier,
     * and once one has, the later launches of the call return at once; so
     * the stream drains within `to` per barrier of the call, and only past
     * that bound (plus a second) is it called stuck. */
    const size_t launches = (count + per - 1) / per;
    const double bound = to > 0 ? to * (double)(launches * (two_shot ? 2 : 1)) + 1 : 0;
    int drained = ck_cuda_wait(comm, bound);
    if (*(volatile int *)s->err) {
        s->broken = 1;
        return ck_fail(comm, CK_ERR_TIMEOUT,
                       "watchdog: rank %d waited more than %.1f s in a %s barrier for the other ranks "
                       "(a rank did not make the call, or is stuck); the symmetric buffers are unusable now",
                       s->rank, to, name);
    }
    if (drained == 0) {
        s->broken = 1;
        return ck_fail(comm, CK_ERR_TIMEOUT, "watchdog: rank %d: the %s kernels did not finish within %.1f s",
                       s->rank, name, bound);
    }
    if ((rc = ck_sync(comm))) s->broken = 1;   /* a CUDA error: ck_sync has the detail */
    return rc;
}
