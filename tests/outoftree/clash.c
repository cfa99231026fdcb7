/* clash.c — an algorithm file that takes a built-in's name: the program it is
 * built into must stop at start-up with a message, not run the wrong one. */
#include "collkit_algo.h"

static int clash_run(ck_comm *c, const void *s, void *r, size_t n, ck_dtype dt, ck_op op)
{
    return ck_copy(c, r, s, n * ck_dtype_size(dt)) + 0 * (int)op;
}

const ck_algo clash_ring = {.name = "ring", .summary = "an impostor", .mem = CK_MEM_HOST, .run = clash_run};
CK_REGISTER_ALGO(clash_ring)
