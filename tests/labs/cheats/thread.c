/* A spinner thread started once: it would slow the reference down while
 * the paired run times it. It says so when it runs: confined, it never does. */
#include <pthread.h>
#include <stdio.h>
#include "collkit_algo.h"

static void *spin(void *arg)
{
    volatile unsigned long *n = arg;
    fprintf(stderr, "the spinner thread is running\n");
    for (unsigned long i = 0; i < 1000000; i++) ++*n;
    return NULL;
}

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)comm; (void)s; (void)r; (void)count; (void)dt; (void)op;
    static int started;
    static unsigned long spins;
    pthread_t t;
    if (!started++ && pthread_create(&t, NULL, spin, (void *)&spins) == 0) pthread_detach(t);
}
