/*
 * agree.c — do the ranks of a job agree? For the tools (collbench,
 * collcheck, tagtrain), before they communicate: a digest per rank, gathered
 * at rank 0, compared with rank 0's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit.h"
#include "collkit_util.h"

int ck_first_differing_rank(MPI_Comm comm, uint64_t digest)
{
    int rank, p, q = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    uint64_t *all = rank == 0 ? malloc((size_t)p * sizeof *all) : NULL;
    if (rank == 0 && !all) {
        ck_watch_abort("out of memory comparing the ranks");
    }
    ck_watch_gather(&digest, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, comm, "comparing the ranks");
    for (int r = 1; rank == 0 && r < p && q < 0; r++)
        if (all[r] != all[0]) q = r;
    free(all);
    ck_watch_bcast(&q, 1, MPI_INT, 0, comm, "comparing the ranks");
    return q;
}

/* argv[1..argc) as one line, words after a space each (cut at cap). */
static void join_args(int argc, char **argv, char *line, size_t cap)
{
    size_t k = 0;
    line[0] = '\0';
    for (int i = 1; i < argc && k + 1 < cap; i++) {
        int n = snprintf(line + k, cap - k, " %s", argv[i]);
        if (n < 0) break;
        k += (size_t)n < cap - k ? (size_t)n : cap - k - 1;
    }
}

int ck_same_command_line(MPI_Comm comm, int argc, char **argv, const char *prog)
{
    uint64_t h = CK_FNV1A64_INIT;
    for (int i = 1; i < argc; i++) h = ck_fnv1a64_update(h, argv[i], strlen(argv[i]) + 1);   /* NUL-separated words */
    const int q = ck_first_differing_rank(comm, h);
    if (q < 0) return CK_SUCCESS;
    /* Rank q's line goes to rank 0, which prints both, in order. */
    int rank;
    MPI_Comm_rank(comm, &rank);
    char line[2048];
    join_args(argc, argv, line, sizeof line);
    char other[sizeof line], why[1536];
    MPI_Request rq = MPI_REQUEST_NULL;
    if (rank == q) MPI_Isend(line, (int)strlen(line) + 1, MPI_CHAR, 0, 0, comm, &rq);
    if (rank == 0) MPI_Irecv(other, (int)sizeof other, MPI_CHAR, q, 0, comm, &rq);
    if (rq != MPI_REQUEST_NULL && ck_watch_wait(&rq, ck_watch_timeout(), "comparing command lines", why, sizeof why))
        ck_watch_abort("%s", why);
    if (rank == 0) {
        other[sizeof other - 1] = '\0';
        fprintf(stderr, "%s: the ranks were given different command lines; every rank of a run must get the same "
                "options\n  rank 0:%s\n  rank %d:%s\n", prog, line[0] ? line : " (none)", q, other[0] ? other : " (none)");
        fflush(stderr);
    }
    return CK_ERR_MISMATCH;
}

/* The memory this machine can still give, in bytes: MemAvailable, lowered to
 * what a cgroup (a container, a batch job) leaves; 0 when unknown. */
static uint64_t memory_available(void)
{
    uint64_t avail = 0;
    char line[256];
    FILE *f = fopen("/proc/meminfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long kb;
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) { avail = (uint64_t)kb * 1024; break; }
    }
    if (f) fclose(f);
    unsigned long long max = 0, cur = 0;
    f = fopen("/sys/fs/cgroup/memory.max", "r");   /* "max" when there is no limit */
    int limited = f && fscanf(f, "%llu", &max) == 1;
    if (f) fclose(f);
    f = limited ? fopen("/sys/fs/cgroup/memory.current", "r") : NULL;
    if (f && fscanf(f, "%llu", &cur) == 1 && max > cur && (!avail || max - cur < avail)) avail = max - cur;
    if (f) fclose(f);
    return avail;
}

int ck_memory_fits(MPI_Comm comm, uint64_t bytes, const char *prog, const char *what)
{
    int rank, p, local = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
    }
    const uint64_t avail = memory_available();
    /* bytes * local, saturated: a count near 2^64 must not wrap into "fits" */
    const uint64_t need = bytes > UINT64_MAX / (uint64_t)local ? UINT64_MAX : bytes * (uint64_t)local;
    const int short_here = avail && need > avail;
    int first = short_here ? rank : p;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == p) return CK_SUCCESS;
    if (rank == first)
        fprintf(stderr,
                "%s: not enough memory for %s: about %.3g GiB per rank, %d rank%s on rank %d's node (%.3g GiB), "
                "where %.3g GiB is available; give smaller sizes or fewer ranks per node\n",
                prog, what, (double)bytes / (1u << 30), local, local == 1 ? "" : "s", rank,
                (double)need / (1u << 30), (double)avail / (1u << 30));
    return CK_ERR_NOMEM;
}
