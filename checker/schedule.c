/*
 * schedule.c — a hang named where the ranks' schedules diverged, not only
 * where it was noticed. The watchdog says which rank waited for which
 * peer's message at which step; the rank it names is often not the one at
 * fault: it waits in turn for another, or it returned from the call long
 * ago, having run a step fewer. Each rank's report of the call (its wait,
 * or the step it last announced before it returned) is followed from the
 * rank that spoke, peer to peer, to the rank that ended the chain: one that
 * returned (its schedule ended while a peer still expected a message), or a
 * cycle of waits (every rank receives before it sends).
 */
#include <stdio.h>
#include <string.h>
#include "check_cli.h"
#include "collkit_util.h"

/* One rank in the hang: waiting for `peer` at `step`, or returned. */
typedef struct {
    int waits, peer, step, tag;
} rank_state;

/* The watchdog's words (ck_watch): "... for recv of N B from rank Q (tag
 * T) in 'ALGO' step S ..." (or "send ... to rank Q"). */
static rank_state read_state(const cc_result *res)
{
    rank_state st = {0, -1, res->step, -1};
    if (res->status != CK_ERR_TIMEOUT) return st;
    const char *at = strstr(res->msg, " from rank ");
    if (!at) at = strstr(res->msg, " to rank ");
    if (!at || sscanf(strstr(at, "rank "), "rank %d (tag %d)", &st.peer, &st.tag) < 1) return st;
    const char *sp = strstr(at, "' step ");
    if (sp) sscanf(sp, "' step %d", &st.step);
    st.waits = 1;
    return st;
}

static void add_step(ck_sbuf *b, const cc_result *res, int step)
{
    if (step < 0) ck_sbuf_add(b, "before its first step");
    else if (res->phase[0] && res->step == step) ck_sbuf_add(b, "step %d (%s)", step, res->phase);
    else ck_sbuf_add(b, "step %d", step);
}

/* Ranks in one cycle of waits that announced different phases run
 * different schedules: the one whose phase no other shares is named. */
static int other_phase(ck_sbuf *b, char *claim, size_t ccap, const cc_result *all, const int *cyc, int len)
{
    for (int k = 0; k < len; k++) {
        const cc_result *a = &all[cyc[k]];
        int alone = a->phase[0] != 0, others = 0;
        for (int j = 0; j < len; j++) {
            if (j == k || !all[cyc[j]].phase[0]) continue;
            others++;
            alone &= strcmp(all[cyc[j]].phase, a->phase) != 0;
        }
        if (!alone || others < 1) continue;
        const cc_result *o = &all[cyc[(k + 1) % len]];
        ck_sbuf_add(b, "rank %d waits in step %d (%s) while the ranks it waits with are in '%s' (rank %d at step %d): "
                       "rank %d runs another schedule than its peers (a branch on its rank, or on p, that the others "
                       "do not take)", cyc[k], a->step, a->phase, o->phase, cyc[(k + 1) % len], o->step, cyc[k]);
        snprintf(claim, ccap, "a hang: rank %d runs '%.24s' while its peers run '%.24s'", cyc[k], a->phase, o->phase);
        return 1;
    }
    return 0;
}

int cc_schedules(char *out, size_t cap, char *claim, size_t ccap, const cc_result *all, int p, int who)
{
    ck_sbuf b;
    ck_sbuf_init(&b, out, cap);
    rank_state st[256];
    if (p > 256) return 0;
    for (int q = 0; q < p; q++) st[q] = read_state(&all[q]);
    if (!st[who].waits) return 0;
    int seen[256] = {0}, chain[256], n = 0, x = who;
    while (x >= 0 && x < p && st[x].waits && !seen[x]) {
        seen[x] = 1;
        chain[n++] = x;
        x = st[x].peer;
    }
    if (x < 0 || x >= p) return 0;
    const int last = chain[n - 1];
    if (!st[x].waits) {   /* the chain ends at a rank that returned */
        ck_sbuf_add(&b, "rank %d waits at ", last);
        add_step(&b, &all[last], st[last].step);
        ck_sbuf_add(&b, " for a message from rank %d, but rank %d returned from the call after ", x, x);
        add_step(&b, &all[x], st[x].step);
        ck_sbuf_add(&b, ": the two ranks' schedules diverge there (rank %d's has a step fewer, or rank %d expects a "
                        "message rank %d never sends)", x, last, x);
        if (n > 1) ck_sbuf_add(&b, "; rank %d, which the watchdog named first, waits on that chain", who);
        snprintf(claim, ccap, "a hang: rank %d returned after step %d while rank %d waits for it", x, st[x].step, last);
        return 1;
    }
    /* A cycle: x waits, and the chain came back to it. */
    int from = 0;
    while (chain[from] != x) from++;
    const int len = n - from;
    if (other_phase(&b, claim, ccap, all, chain + from, len)) return 1;
    int same_step = 1, unreceived = 0;
    for (int k = from; k < n; k++) {
        same_step &= st[chain[k]].step == st[x].step;
        unreceived += strstr(all[chain[k]].msg, "waits unreceived") != NULL;
    }
    ck_sbuf_add(&b, "a cycle of waits:");
    for (int k = from; k < n && k < from + 8; k++)
        ck_sbuf_add(&b, " rank %d at step %d waits for rank %d%s", chain[k], st[chain[k]].step, st[chain[k]].peer,
                    k + 1 < n ? ";" : "");
    if (from > 0) ck_sbuf_add(&b, " (rank %d waits on that cycle)", who);
    if (unreceived) {   /* the message did come, under another tag or from another peer: the watchdog named it */
        ck_sbuf_add(&b, ": %d of them found the message they wait for sent with another tag or by another peer, "
                        "waiting unreceived: the send's and the receive's parameters differ", unreceived);
        const char *tail = strrchr(all[who].msg, ':');
        snprintf(claim, ccap, "a hang:%s", tail ? tail + 1 : " parameters of a send and its receive differ");
        return 1;
    }
    if (same_step)
        ck_sbuf_add(&b, ": every rank in it waits at the same step, so each receive comes before the send its peer "
                        "waits for (post the receives and sends together, or order them by rank)");
    else
        ck_sbuf_add(&b, ": the ranks in it are at different steps, so their schedules diverged before: the rank at "
                        "the lowest step expects a message its peer sent at another step or never");
    if (len == 2) snprintf(claim, ccap, "a hang: ranks %d and %d wait for each other", x, st[x].peer);
    else snprintf(claim, ccap, "a hang: a cycle of %d ranks waiting%s", len, same_step ? " at one step" : "");
    return 1;
}
