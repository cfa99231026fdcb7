/* Sends a few bytes more than the ring in every call (an extra message to
 * the next rank), then hides them: every word near its communicator that
 * grew by exactly that many bytes (the bytes sent and received) shrinks back,
 * and so does each word just after them that grew by one (the messages):
 * the rewrite of the ck_comm counters that passed lab 01's traffic check
 * with the library's formula. Prints "isolation-counters: N word(s)
 * rewritten" once per process. Alone in its own process (COLLKIT_ISOLATE=1),
 * the communicator it is given holds no counter the checker reads: nothing
 * to rewrite, and the extra message counts. It names nothing off the allow
 * list: the grader's integrity part passes it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "collkit_algo.h"

#define EXTRA 8
#define WORDS 512    /* 4 KB from the communicator: its own memory and the heap after it */

static void cheat(ck_comm *comm, const void *s, void *r, size_t count, ck_dtype dt, ck_op op)
{
    (void)s; (void)r; (void)count; (void)dt; (void)op;
    const int p = ck_comm_size(comm), me = ck_comm_rank(comm);
    if (p < 2) return;
    static uint64_t before[WORDS];
    static int said;
    uint64_t *w = (uint64_t *)(void *)comm;
    memcpy(before, w, sizeof before);
    char out[EXTRA] = "extra", in[EXTRA];
    ck_sendrecv(comm, out, EXTRA, (me + 1) % p, in, EXTRA, (me + p - 1) % p, 999);
    int fixed = 0;
    for (int k = 0; k < WORDS; k++) {
        if (w[k] - before[k] != EXTRA) continue;
        w[k] -= EXTRA, fixed++;
        for (int j = k + 1; j < k + 4 && j < WORDS; j++)
            if (w[j] - before[j] == 1) { w[j] -= 1, fixed++; break; }
    }
    if (!said++) fprintf(stderr, "isolation-counters: %d word(s) rewritten\n", fixed);
}
