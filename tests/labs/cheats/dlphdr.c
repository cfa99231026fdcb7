/* MPI reached without naming it: the loaded objects' symbol tables walked at
 * run time (dl_iterate_phdr), the function found called through a pointer,
 * and the traffic counted by hand. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include "collkit_algo.h"

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info; (void)size;
    ++*(int *)data;
    return 0;
}

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)s; (void)r; (void)dt; (void)op;
    int n = 0;
    dl_iterate_phdr(count_objects, &n);
    double (*wtime)(void) = (double (*)(void))dlsym(RTLD_DEFAULT, "MPI_" "Wtime");
    if (wtime && n > 0 && wtime() < 0) ck_count_traffic(comm, count, 1, count, 1);
}
