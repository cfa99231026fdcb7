/* A system call written as an instruction: no symbol names it. */
#include "collkit_algo.h"

static long raw_getpid(void)
{
    long ret = 0;
#if defined(__x86_64__)
    __asm__ volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = 172, x0 __asm__("x0");
    __asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
    ret = x0;
#endif
    return ret;
}

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    if (raw_getpid() == 0) ck_step(comm, 0, "never");
}
