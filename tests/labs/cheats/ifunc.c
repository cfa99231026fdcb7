/* A GNU indirect function: its resolver runs while the program is loaded,
 * before main and every constructor, where it could see and change what the
 * checker has not yet set up. No constructor is declared, no .init_array
 * entry is written. */
#include "collkit_algo.h"

static int twice_plain(int x) { return 2 * x; }
static void *pick(void) { return (void *)twice_plain; }   /* runs at load time */
static int twice(int x) __attribute__((ifunc("pick")));

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)dt; (void)op;
    volatile int x = twice((int)count);
    (void)x;
}
