/* A timer signal's handler: it runs wherever the program is when the timer
 * fires, in the library's timed calls too, and burns time there, so the
 * reference looks slower beside the file's own algorithm. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include "collkit_algo.h"

static volatile sig_atomic_t fired;

static void burn(int sig)
{
    (void)sig;
    fired = 1;
    for (volatile int i = 0; i < 20000; i++) {
    }
}

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    static int armed, told;
    if (fired && !told++) fprintf(stderr, "a timer's handler ran\n");   /* confined (the grader's), never */
    if (armed++) return;
    struct itimerval every = {{0, 1000}, {0, 1000}};   /* each millisecond */
    signal(SIGALRM, burn);
    setitimer(ITIMER_REAL, &every, NULL);
}
