/* Machine code made at run time: bytes copied into memory mapped writable
 * and executable, then called. Whatever the bytes are (here a bare return;
 * a system call, another algorithm), no check of the object code sees them. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "collkit_algo.h"

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
#if defined(__x86_64__)
    static const unsigned char code[] = {0xc3};   /* ret */
#elif defined(__aarch64__)
    static const unsigned char code[] = {0xc0, 0x03, 0x5f, 0xd6};   /* ret */
#endif
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    memcpy(m, code, sizeof code);
    __builtin___clear_cache((char *)m, (char *)m + sizeof code);
    ((void (*)(void))m)();
    munmap(m, 4096);
    fprintf(stderr, "machine code written at run time ran\n");   /* confined (the grader's), never */
}
