/*
 * poll.c — ck_poll_bounded: the one bounded wait the transports use for work
 * they cannot express as a request (a device stream draining), so that it
 * ends in CK_ERR_TIMEOUT with a message instead of a silent hang, like every
 * ck_wait does.
 */
#include <math.h>
#include <limits.h>
#include "transport.h"

/* 1 ms hot (a small all-reduce finishes within it), yield until 10 ms, then
 * nap 20 us a poll: a rank time-sharing its GPU or core with others must not
 * spin the machine away from them. */
static const ck_backoff_policy device_policy = {
    .spin_polls = ULONG_MAX, .spin_s = 1e-3, .yield_polls = ULONG_MAX, .yield_s = 1e-2, .nap_ns = 20000};

int ck_poll_bounded(int (*ready)(void *arg), void *arg, double timeout_s, double *waited)
{
    ck_backoff b;
    ck_backoff_start(&b, &device_policy, 1);   /* answering roll calls of ranks whose wait ran out (watch.c) */
    int rc = 0;
    for (;;) {
        if ((rc = ready(arg)) != 0) break;
        if (timeout_s > 0 && ck_now() - b.t0 > timeout_s) break;
        ck_backoff_pause(&b);
    }
    if (waited) *waited = ck_now() - b.t0;
    return rc > 0 ? 1 : rc;
}
