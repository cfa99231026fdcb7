/* Tries, in its first call, what a confined graded process may not do:
 * open a file, make a socket, start a process, map executable memory, start
 * a thread. Prints "isolation-confine: open=.. socket=.. fork=.. exec-map=..
 * thread=.." (ok, or the error) once per process, then does the ring's
 * work. In the checker's process without COLLKIT_CONFINE every one works;
 * alone in its own process (COLLKIT_ISOLATE=1) every one fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "collkit_algo.h"

static const char *said(long rc) { return rc < 0 ? strerror(errno) : "ok"; }
static void *idle(void *arg) { return arg; }

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    static int once;
    if (once++) return;
    long fd = syscall(SYS_openat, AT_FDCWD, "/etc/hostname", O_RDONLY);
    const char *o = said(fd);
    if (fd >= 0) close((int)fd);
    long sk = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    const char *k = said(sk);
    if (sk >= 0) close((int)sk);
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) syscall(SYS_exit, 0);
    const char *f = said(pid);
    void *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const char *m = said(x == MAP_FAILED ? -1 : 0);
    pthread_t t;
    int tr = pthread_create(&t, NULL, idle, NULL);
    if (!tr) pthread_join(t, NULL);
    else errno = tr;
    fprintf(stderr, "isolation-confine: open=%s socket=%s fork=%s exec-map=%s thread=%s\n", o, k, f, m, said(tr ? -1 : 0));
}
