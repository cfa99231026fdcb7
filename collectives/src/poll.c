/*
 * poll.c — ck_poll_bounded: the one bounded wait the transports use for work
 * they cannot express as a request (a device stream draining), so that it
 * ends in CK_ERR_TIMEOUT with a message instead of a silent hang, like every
 * ck_wait does.
 */
#include <sched.h>
#include <time.h>
#include "transport.h"

int ck_poll_bounded(int (*ready)(void *arg), void *arg, double timeout_s, double *waited)
{
    const double t0 = ck_now();
    int rc = 0;
    for (;;) {
        if ((rc = ready(arg)) != 0) break;
        double now = ck_now();
        if (timeout_s > 0 && now - t0 > timeout_s) break;
        /* 1 ms hot (a small all-reduce finishes within it), yield until
         * 10 ms, then nap 20 us a poll: a rank time-sharing its GPU or core
         * with others must not spin the machine away from them. */
        if (now - t0 < 1e-3) continue;
        if (now - t0 < 1e-2) { sched_yield(); continue; }
        ck_watch_answer();   /* roll calls of ranks whose wait ran out (watch.c) */
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    if (waited) *waited = ck_now() - t0;
    return rc > 0 ? 1 : rc;
}
