/* Asks for an executable stack (a .note.GNU-stack section flagged x: the
 * linker then makes the whole program's stack writable and executable) and
 * runs machine code written on it: no mmap, no mprotect, nothing a filter on
 * system calls sees. */
#include <stdio.h>
#include "collkit_algo.h"

__asm__(".section .note.GNU-stack,\"x\",@progbits\n.previous");

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
#if defined(__x86_64__)
    unsigned char code[] = {0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};   /* mov $42, %eax; ret */
#elif defined(__aarch64__)
    unsigned char code[] = {0x40, 0x05, 0x80, 0x52, 0xc0, 0x03, 0x5f, 0xd6};   /* mov w0, #42; ret */
#endif
    __builtin___clear_cache((char *)code, (char *)code + sizeof code);
    static int told;
    if (((int (*)(void))(void *)code)() == 42 && !told++) fprintf(stderr, "machine code on the stack ran\n");
}
