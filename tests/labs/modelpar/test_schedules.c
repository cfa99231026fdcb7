/*
 * test_schedules.c — the pipeline schedules as data (trainer/pp.c), without
 * MPI: tagtrain's gpipe and 1f1b pass the check for S = 1..6 stages and
 * M = 1..12 micro-batches, with the micro-batches in flight each keeps
 * (GPipe M, 1F1B min(S - s, M)); a program's own schedule is found by name;
 * and lists that are not whole, or would hang, are refused with the reason.
 * (Proven able to fail: with play() in pp.c returning 0 the "hang" case
 * passes the check, and this test fails on it.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pp.h"

static int bad_case;   /* which broken list my_bad writes */

/* Stage 0 runs F k, B k one at a time, the last stage its forwards last first: together they hang. */
static int my_bad(int S, int stage, int M, ck_pp_op *ops)
{
    int n = 0;
    if (bad_case == 0 && stage == 0) {
        for (int k = 0; k < M; k++) ops[n++] = (ck_pp_op){CK_PP_F, k}, ops[n++] = (ck_pp_op){CK_PP_B, k};
        return n;
    }
    for (int k = 0; k < M; k++) ops[n++] = (ck_pp_op){CK_PP_F, bad_case == 0 ? M - 1 - k : k};
    for (int k = 0; k < M; k++) ops[n++] = (ck_pp_op){CK_PP_B, k};
    if (bad_case == 1 && stage == S - 1) n--;                          /* the last B left out */
    if (bad_case == 2 && stage == 1) ops[1] = ops[0];                  /* F 0 twice */
    if (bad_case == 3 && stage == 0) ops[0] = (ck_pp_op){CK_PP_B, 0};  /* B 0 before F 0 */
    if (bad_case == 4 && stage == 0) ops[0].mb = M;                    /* no such micro-batch */
    return n;
}
CK_REGISTER_SCHEDULE(my_bad)

static int fails;
static void expect(int ok, const char *what, const char *detail)
{
    if (!ok) {
        printf("FAIL: %s: %s\n", what, detail);
        fails++;
    }
}

/* The most micro-batches between their F and B in a stage's list. */
static int held(const ck_pp_op *ops, int n)
{
    int in = 0, most = 0;
    for (int i = 0; i < n; i++) {
        in += ops[i].kind == CK_PP_F ? 1 : -1;
        if (in > most) most = in;
    }
    return most;
}

int main(void)
{
    char err[512], what[64];
    ck_pp_op ops[24];
    for (int sched = PP_GPIPE; sched <= PP_1F1B; sched++)
        for (int S = 1; S <= 6; S++)
            for (int M = 1; M <= 12; M++)
                for (int s = 0; s < S; s++) {
                    snprintf(what, sizeof what, "%s S=%d M=%d stage %d", pp_schedule_name(sched), S, M, s);
                    err[0] = 0;
                    const int rc = pp_schedule_check(sched, S, M, s, ops, err, sizeof err);
                    expect(rc == 0, what, err);
                    const int want = sched == PP_GPIPE ? M : (S - s < M ? S - s : M);
                    char d[64];
                    snprintf(d, sizeof d, "holds %d micro-batches, not %d", held(ops, 2 * M), want);
                    expect(rc || held(ops, 2 * M) == want, what, d);
                }
    int mine = -1;
    expect(pp_schedule_parse("my_bad", &mine, err, sizeof err) == 0 && mine == 2, "my_bad by name", err);
    expect(pp_schedule_parse("nosuch", &mine, err, sizeof err) == -1 && strstr(err, "known: gpipe 1f1b my_bad"),
           "an unknown name lists the known ones", err);
    const char *why[] = {
        "the schedule would hang: stage 0's B 0 waits for stage 1's B 0; stage 1's F 3 waits for stage 0's F 3",
        "stage 1: 7 operations, not 2M = 8 (each F k and B k once)",
        "stage 1, operation 1: F 0 a second time",
        "stage 0, operation 0: B 0 before F 0",
        "stage 0, operation 0: not F or B of a micro-batch 0..3",
    };
    for (bad_case = 0; bad_case < 5; bad_case++) {
        err[0] = 0;
        const int rc = pp_schedule_check(mine, 2, 4, 0, NULL, err, sizeof err);
        expect(rc == -1 && !strcmp(err, why[bad_case]), why[bad_case], err[0] ? err : "passed the check");
    }
    printf("%s\n", fails ? "FAILED" : "ok: gpipe and 1f1b at S = 1..6, M = 1..12; five bad lists refused with the reason");
    return fails != 0;
}
