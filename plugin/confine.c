/*
 * confine.c — the grader's policy, in the grader's program (the one
 * collkit-cc builds around a student's file): under the grader
 * (COLLKIT_CONFINE=1), a process whose algorithms are about to run can no
 * longer start other processes or programs, nor reach into another process.
 * main.c registers plugin_confine as the library's hook that runs before
 * the first algorithm code (ck_set_before_algorithms); the library itself
 * knows no policy.
 *
 * The grader's checks on the object code see what a file names; a file can
 * still reach a C library function it never names, through the address of
 * one it may name. What such a call could do to a grade is start a process:
 * a program that writes where the verdict is read, or one that takes the
 * CPU while the library's algorithm is being timed. So before the first
 * collective runs (or the first cost function: collbench --extrapolate), a
 * seccomp filter (on every thread of the process) makes fork, vfork, clone
 * without CLONE_THREAD, execve, execveat, ptrace and
 * process_vm_readv/writev fail with EPERM, and clone3 and io_uring_setup
 * with ENOSYS (the C library then makes its threads with clone), and so
 * does every call of another ABI (int $0x80 from a 64-bit program: the same
 * calls under other numbers). Threads stay possible with COLLKIT_CONFINE=1:
 * the library's async engine makes its own after the first collective (and
 * a CUDA runtime may).
 *
 * COLLKIT_CONFINE=2, for the runs that need none of what follows (the
 * checker and the benchmark on host buffers: MPI and BLAS have made their
 * threads and loaded their code by then), stacks a second filter: a new
 * thread fails (EAGAIN, as when none can be had), so do a timer (setitimer,
 * timer_create, alarm: its signal's handler would run inside the library's
 * timed calls) and memory made executable (mmap, mprotect, pkey_mprotect
 * with PROT_EXEC, shmat with SHM_EXEC, personality's READ_IMPLIES_EXEC):
 * machine code written at run time could make any call the object code
 * checks never saw. Reached however — a name the grader sees, a function
 * pointer, a system call instruction hidden in other bytes — they fail.
 * Everything before that call (MPI's start, the communicator) is not
 * confined; nothing of the student's runs there (the grader refuses
 * constructors other than the registration).
 */
#define _GNU_SOURCE   /* CLONE_THREAD */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collkit.h"

#if defined(__linux__) && !defined(COLLKIT_SMPI)
#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define CK_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CK_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
/* syscall nr -> return value: two instructions each */
#define DENY(nr, err) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_ERRNO | (err))

static int install(void)
{
#ifdef CK_AUDIT_ARCH
    struct sock_filter f[] = {
        LOAD(offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CK_AUDIT_ARCH, 1, 0),
        RET(SECCOMP_RET_ERRNO | ENOSYS),   /* another ABI (32-bit): none in this program */
        LOAD(offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
        /* the x32 numbers of the same calls (the same audit arch) */
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1), RET(SECCOMP_RET_ERRNO | ENOSYS),
#endif
#ifdef __NR_fork
        DENY(__NR_fork, EPERM),
#endif
#ifdef __NR_vfork
        DENY(__NR_vfork, EPERM),
#endif
        DENY(__NR_execve, EPERM),
        DENY(__NR_execveat, EPERM),
        DENY(__NR_ptrace, EPERM),
        DENY(__NR_process_vm_readv, EPERM),
        DENY(__NR_process_vm_writev, EPERM),
        DENY(__NR_clone3, ENOSYS),
        DENY(__NR_io_uring_setup, ENOSYS),
        /* clone: a thread (CLONE_THREAD in its flags, the first argument)
         * only, and none under COLLKIT_CONFINE=2 */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
        LOAD(offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_ERRNO | EPERM),
        RET(SECCOMP_RET_ALLOW),   /* every other call */
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) ? -1 : 0;
#else
    return -1;
#endif
}

/* The second filter (COLLKIT_CONFINE=2), on top of the first: its other ABI
 * is the first's to refuse. DENY_IF: call nr with any of bits set in
 * argument arg -> err; that call without them -> allowed; another call -> the
 * rules after it (five instructions, the jump over all of them). */
#define DENY_IF(nr, arg, bits, err)                                                                   \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), LOAD(offsetof(struct seccomp_data, args[arg])), \
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (bits), 0, 1), RET(SECCOMP_RET_ERRNO | (err)), RET(SECCOMP_RET_ALLOW)
static int install_strict(void)
{
#ifdef CK_AUDIT_ARCH
    struct sock_filter f[] = {
        LOAD(offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CK_AUDIT_ARCH, 1, 0),
        RET(SECCOMP_RET_ALLOW),
        LOAD(offsetof(struct seccomp_data, nr)),
        DENY(__NR_setitimer, EPERM),
        DENY(__NR_timer_create, EPERM),
#ifdef __NR_alarm
        DENY(__NR_alarm, EPERM),
#endif
        /* (the low 32 bits of each argument: flags and protections fit) */
        DENY_IF(__NR_clone, 0, CLONE_THREAD, EAGAIN),
        DENY_IF(__NR_mmap, 2, PROT_EXEC, EPERM),
        DENY_IF(__NR_mprotect, 2, PROT_EXEC, EPERM),
        DENY_IF(__NR_pkey_mprotect, 2, PROT_EXEC, EPERM),
        DENY_IF(__NR_shmat, 2, SHM_EXEC, EPERM),
        DENY_IF(__NR_personality, 0, READ_IMPLIES_EXEC, EPERM),
        RET(SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f};
    return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) ? -1 : 0;
#else
    return -1;
#endif
}
#else
static int install(void) { return -1; }
static int install_strict(void) { return -1; }
#endif

void plugin_confine(void);   /* main.c registers it */

void plugin_confine(void)
{
    const char *e = getenv("COLLKIT_CONFINE");
    if (!e || (strcmp(e, "1") && strcmp(e, "2"))) return;
    if (install() || (!strcmp(e, "2") && install_strict())) {
        fprintf(stderr, "collkit: COLLKIT_CONFINE=%s, but this system cannot confine the process (seccomp): "
                        "other processes stay possible\n", e);
        fflush(stderr);
    }
}
