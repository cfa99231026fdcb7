/* Its cost function is its own code, run by collbench --extrapolate with no
 * collective before it: there it maps memory executable (machine code of
 * its own: the call any object-code check never sees) and says so when it
 * could. Confined (the grader's), it never can. */
#include <stdio.h>
#include <sys/mman.h>
#include "collkit_algo.h"

static double costly(const ck_cost_params *m, int p, double n)
{
    static int told;
    void *x = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (x != MAP_FAILED && !told++) fprintf(stderr, "a cost function mapped executable memory\n");
    if (x != MAP_FAILED) munmap(x, 4096);
    return 2 * (p - 1) * (m->alpha + n / p * m->beta);
}
static int none_run(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    return CK_SUCCESS;
}
const ck_algo my_ring = {.name = "my_ring", .summary = "a cost function of its own", .mem = CK_MEM_HOST,
                         .cost = costly, .run = none_run};
CK_REGISTER_ALGO(my_ring)
