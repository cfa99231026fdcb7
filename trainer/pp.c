/*
 * pp.c — the pipeline's schedules and messages (pp.h): the schedules as
 * lists of operations (collkit_pp.h), checked by playing the pipeline's
 * messages through, then run as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pp.h"

void pp_stage_layers(int n, int S, int stage, int *l0, int *l1)
{
    *l0 = stage * n / S;
    *l1 = (stage + 1) * n / S;
}

/* ---- the schedules: tagtrain's two, as the slides draw them ---- */

/* GPipe: every forward, then every backward, the last micro-batch's first. */
static int gpipe(int S, int stage, int M, ck_pp_op *ops)
{
    (void)S;
    (void)stage;
    int n = 0;
    for (int k = 0; k < M; k++) ops[n++] = (ck_pp_op){CK_PP_F, k};
    for (int k = M - 1; k >= 0; k--) ops[n++] = (ck_pp_op){CK_PP_B, k};
    return n;
}

/* 1F1B: a forward while fewer than S - stage micro-batches are in flight
 * (and forwards are left), else the oldest one's backward. That is S -
 * stage - 1 forwards to fill the pipe, then one forward, one backward, then
 * the backwards left. */
static int one_f_one_b(int S, int stage, int M, ck_pp_op *ops)
{
    const int most = S - stage < M ? S - stage : M;
    int n = 0, f = 0, b = 0;
    while (b < M)
        ops[n++] = f < M && f - b < most ? (ck_pp_op){CK_PP_F, f++} : (ck_pp_op){CK_PP_B, b++};
    return n;
}

/* ---- the registry: --pp-schedule NAME ---- */

enum { PP_MAX_SCHEDULES = 16 };
static struct {
    const char       *name;
    ck_pp_schedule_fn fn;
} registry[PP_MAX_SCHEDULES] = {{"gpipe", gpipe}, {"1f1b", one_f_one_b}};
static int nregistered = 2;

void ck_register_schedule_or_exit(const char *name, ck_pp_schedule_fn fn, const char *file)
{
    for (int i = 0; i < nregistered; i++)
        if (!strcmp(registry[i].name, name)) {
            fprintf(stderr, "%s: the schedule name '%s' is taken\n", file, name);
            exit(2);
        }
    if (nregistered == PP_MAX_SCHEDULES || !fn) {
        fprintf(stderr, "%s: schedule '%s': %s\n", file, name, fn ? "too many schedules" : "no generator");
        exit(2);
    }
    registry[nregistered].name = name;
    registry[nregistered++].fn = fn;
}

int pp_schedule_parse(const char *value, void *field, char *err, size_t cap)
{
    for (int i = 0; i < nregistered; i++)
        if (!strcmp(registry[i].name, value)) {
            *(int *)field = i;
            return 0;
        }
    int n = snprintf(err, cap, "'%s': no such schedule (known:", value);
    for (int i = 0; i < nregistered && n > 0 && (size_t)n < cap; i++)
        n += snprintf(err + n, cap - (size_t)n, " %s", registry[i].name);
    if (n > 0 && (size_t)n < cap) snprintf(err + n, cap - (size_t)n, ")");
    return -1;
}

const char *pp_schedule_name(int sched) { return sched >= 0 && sched < nregistered ? registry[sched].name : "?"; }

/* ---- the check: every stage's list, then the pipeline played through ---- */

/* Every stage's list and, per stage and micro-batch, its slot and the
 * micro-batch that held that slot before it (-1: none). */
typedef struct plan {
    int            S, M;
    ck_pp_op      *ops;            /* stage s's from ops + 2M s */
    int           *slot, *before;  /* [s M + k] */
    int           *nslots;         /* [s] */
    unsigned char *done;           /* [(2 s + is_b) M + k]: played through */
} plan;

static unsigned char *done_at(const plan *P, int s, int kind, int k) { return &P->done[(2 * s + (kind == CK_PP_B)) * P->M + k]; }

/* Stage s's list on its own: each F k and B k once, B k after F k; its slots. */
static int check_stage(plan *P, int s, int n, char *err, size_t cap)
{
    const int M = P->M;
    const ck_pp_op *ops = P->ops + (size_t)2 * M * s;
    if (n != 2 * M) return snprintf(err, cap, "stage %d: %d operations, not 2M = %d (each F k and B k once)", s, n, 2 * M), -1;
    int *before = P->before + (size_t)s * M, *slot = P->slot + (size_t)s * M;
    for (int k = 0; k < M; k++) before[k] = -1, slot[k] = -1;
    P->nslots[s] = 0;
    int last[M > 0 ? M : 1];   /* per slot: -2 taken, else the micro-batch that held it last (-1: none) */
    for (int i = 0; i < n; i++) {
        const int k = ops[i].mb;
        const char kind = ops[i].kind == CK_PP_F ? 'F' : ops[i].kind == CK_PP_B ? 'B' : '?';
        if (kind == '?' || k < 0 || k >= M)
            return snprintf(err, cap, "stage %d, operation %d: not F or B of a micro-batch 0..%d", s, i, M - 1), -1;
        unsigned char *d = done_at(P, s, ops[i].kind, k);
        if (*d) return snprintf(err, cap, "stage %d, operation %d: %c %d a second time", s, i, kind, k), -1;
        if (kind == 'B' && !*done_at(P, s, CK_PP_F, k))
            return snprintf(err, cap, "stage %d, operation %d: B %d before F %d", s, i, k, k), -1;
        *d = 1;
        if (kind == 'F') {   /* the lowest free slot; the micro-batch that held it last, if any */
            int q = 0;
            while (q < P->nslots[s] && last[q] == -2) q++;
            if (q == P->nslots[s]) last[P->nslots[s]++] = -1;
            before[k] = last[q];
            slot[k] = q;
            last[q] = -2;   /* taken */
        } else {
            last[slot[k]] = k;
        }
    }
    return 0;
}

/* Whether stage s's next operation can run, given what the others have
 * done; else what it waits for, in why. */
static int ready(const plan *P, int s, const ck_pp_op *op, char *why, size_t cap)
{
    const int k = op->mb, S = P->S;
    if (op->kind == CK_PP_B) {
        if (s == S - 1 || *done_at(P, s + 1, CK_PP_B, k)) return 1;
        return snprintf(why, cap, "stage %d's B %d", s + 1, k), 0;
    }
    if (s > 0 && !*done_at(P, s - 1, CK_PP_F, k)) return snprintf(why, cap, "stage %d's F %d", s - 1, k), 0;
    /* A slot is written again once its last micro-batch's sends are taken. */
    const int j = P->before[(size_t)s * P->M + k];
    if (j >= 0 && s < S - 1 && !*done_at(P, s + 1, CK_PP_F, j))
        return snprintf(why, cap, "stage %d's F %d to free its slot", s + 1, j), 0;
    if (j >= 0 && s > 0 && !*done_at(P, s - 1, CK_PP_B, j))
        return snprintf(why, cap, "stage %d's B %d to free its slot", s - 1, j), 0;
    return 1;
}

/* The pipeline played through: every stage runs its next operation once
 * what it receives has been sent, until all are done or none can move. */
static int play(plan *P, char *err, size_t cap)
{
    const int S = P->S, M = P->M;
    memset(P->done, 0, (size_t)2 * S * M);
    int pc[S], left = 2 * M * S, moved = 1;
    for (int s = 0; s < S; s++) pc[s] = 0;
    char why[96];
    while (left && moved) {
        moved = 0;
        for (int s = 0; s < S; s++) {
            const ck_pp_op *op = P->ops + (size_t)2 * M * s + pc[s];
            while (pc[s] < 2 * M && ready(P, s, op, why, sizeof why)) {
                *done_at(P, s, op->kind, op->mb) = 1;
                pc[s]++, op++, left--, moved = 1;
            }
        }
    }
    if (!left) return 0;
    int n = snprintf(err, cap, "the schedule would hang:");
    for (int s = 0; s < S && n > 0 && (size_t)n < cap; s++) {
        const ck_pp_op *op = P->ops + (size_t)2 * M * s + pc[s];
        if (pc[s] == 2 * M) continue;
        ready(P, s, op, why, sizeof why);
        n += snprintf(err + n, cap - (size_t)n, " stage %d's %c %d waits for %s;", s, op->kind == CK_PP_F ? 'F' : 'B', op->mb, why);
    }
    if (n > 0 && (size_t)n <= cap && n > 1 && err[n - 1] == ';') err[n - 1] = 0;
    return -1;
}

static void plan_free(plan *P)
{
    free(P->ops);
    free(P->slot);
    free(P->before);
    free(P->nslots);
    free(P->done);
}

/* Every stage's list made and checked: 0, or -1 with the reason. */
static int plan_make(plan *P, int sched, int S, int M, char *err, size_t cap)
{
    *P = (plan){.S = S, .M = M};
    if (sched < 0 || sched >= nregistered) return snprintf(err, cap, "no schedule number %d", sched), -1;
    const size_t sm = (size_t)S * M;
    P->ops = calloc(2 * sm, sizeof *P->ops);
    P->slot = calloc(sm, sizeof *P->slot);
    P->before = calloc(sm, sizeof *P->before);
    P->nslots = calloc((size_t)S, sizeof *P->nslots);
    P->done = calloc(2 * sm, 1);
    if (!P->ops || !P->slot || !P->before || !P->nslots || !P->done) return snprintf(err, cap, "out of memory"), -1;
    for (int s = 0; s < S; s++) {
        const int n = registry[sched].fn(S, s, M, P->ops + 2 * (size_t)M * s);
        if (check_stage(P, s, n, err, cap)) return -1;
    }
    return play(P, err, cap);
}

int pp_schedule_check(int sched, int S, int M, int stage, ck_pp_op *ops, char *err, size_t cap)
{
    plan P;
    int rc = plan_make(&P, sched, S, M, err, cap);
    if (!rc && ops) memcpy(ops, P.ops + 2 * (size_t)M * stage, 2 * (size_t)M * sizeof *ops);
    plan_free(&P);
    return rc;
}

/* ---- the run ---- */

int pp_open(pp_ctx *p, ck_comm *comm, int S, int stage, int M, int sched, const mlp *base)
{
    const char *hook = getenv("TAGTRAIN_TEST_PP_DROP");
    *p = (pp_ctx){.S = S, .stage = stage, .M = M, .sched = sched, .comm = comm, .drop_last = hook && !strcmp(hook, "1")};
    plan P;
    char why[512];
    if (plan_make(&P, sched, S, M, why, sizeof why))
        ck_watch_abort("--pp-schedule %s (%d stages, %d micro-batches): %s", pp_schedule_name(sched), S, M, why);
    p->nslots = P.nslots[stage];
    p->ops = malloc(2 * (size_t)M * sizeof *p->ops);
    p->slot_of = malloc((size_t)M * sizeof *p->slot_of);
    if (p->ops) memcpy(p->ops, P.ops + 2 * (size_t)M * stage, 2 * (size_t)M * sizeof *p->ops);
    if (p->slot_of) memcpy(p->slot_of, P.slot + (size_t)M * stage, (size_t)M * sizeof *p->slot_of);
    plan_free(&P);
    p->slot = calloc((size_t)p->nslots, sizeof *p->slot);
    p->fwd = calloc((size_t)p->nslots, sizeof *p->fwd);
    p->bwd = calloc((size_t)p->nslots, sizeof *p->bwd);
    p->cnt = calloc((size_t)M, sizeof *p->cnt);
    p->off = calloc((size_t)M, sizeof *p->off);
    if (!p->ops || !p->slot_of || !p->slot || !p->fwd || !p->bwd || !p->cnt || !p->off) return -1;
    /* A micro-batch is at most ceil(b / M) of the replica's b rows. */
    const int rows = (base->max_batch + M - 1) / M;
    for (int k = 0; k < p->nslots; k++)
        if (mlp_clone_acts(&p->slot[k], base, rows)) return -1;
    return 0;
}

void pp_close(pp_ctx *p)
{
    for (int k = 0; p->slot && k < p->nslots; k++)
        if (p->slot[k].max_batch) mlp_free(&p->slot[k]);
    free(p->slot);
    free(p->fwd);
    free(p->bwd);
    free(p->cnt);
    free(p->off);
    free(p->ops);
    free(p->slot_of);
    memset(p, 0, sizeof *p);
}

size_t pp_act_bytes(const pp_ctx *p) { return p->nslots ? (size_t)p->nslots * mlp_act_bytes(&p->slot[0]) : 0; }

static void check(pp_ctx *p, int rc, const char *what, int k)
{
    if (rc) ck_watch_abort("--pp: stage %d: %s of micro-batch %d: %s (%s)", p->stage, what, k, ck_strerror(rc),
                           ck_comm_errmsg(p->comm));
}

/* A receive, waited for: the time is the stage's wait (the bubble). */
static void receive(pp_ctx *p, void *buf, size_t bytes, int peer, int tag, int k)
{
    ck_req rq;
    const double t0 = ck_now();
    check(p, ck_irecv(p->comm, buf, bytes, peer, tag, &rq), "receive", k);
    check(p, ck_wait(p->comm, &rq), "receive", k);
    p->wait_s += ck_now() - t0;
}

typedef struct {
    const csr_rows *x;
    const size_t   *rows;
    const int      *labels;
    rng_t          *drop;
    double          loss;
} batch;

static void forward(pp_ctx *p, const mlp *base, batch *bt, int k)
{
    const int q = p->slot_of[k];
    mlp *m = &p->slot[q];
    ck_req *f = &p->fwd[q], *g = &p->bwd[q];
    /* The slot's last sends are done before its buffers are written again. */
    check(p, ck_wait(p->comm, f), "send", k);
    check(p, ck_wait(p->comm, g), "send", k);
    m->params = base->params;
    m->grads = base->grads;
    const int b = p->cnt[k];
    if (p->stage > 0) receive(p, m->act[m->l0], (size_t)b * m->in[m->l0] * sizeof(float), p->stage - 1, 2 * k, k);
    const double t0 = ck_now();
    bt->loss += mlp_forward(m, bt->x, bt->rows + p->off[k], bt->labels + p->off[k], b, 1, bt->drop);
    if (p->charge) p->charge(2.0 * b * (double)m->nparams);
    if (p->stage < p->S - 1)
        check(p, ck_isend(p->comm, m->act[m->l1], (size_t)b * m->out[m->l1 - 1] * sizeof(float), p->stage + 1, 2 * k, f),
              "send", k);
    if (p->trace) tr_add(p->trace, TR_MAIN, "fwd", k, t0, ck_now(), 0);
}

static void backward(pp_ctx *p, batch *bt, int k)
{
    mlp *m = &p->slot[p->slot_of[k]];
    const int b = p->cnt[k];
    if (p->stage < p->S - 1)
        receive(p, m->dbuf[0], (size_t)b * m->out[m->l1 - 1] * sizeof(float), p->stage + 1, 2 * k + 1, k);
    const double t0 = ck_now();
    mlp_backward(m, bt->labels + p->off[k], b, NULL, NULL, 0);
    if (p->charge) p->charge(4.0 * b * (double)m->nparams);
    if (p->stage > 0)
        check(p, ck_isend(p->comm, m->dinput, (size_t)b * m->in[m->l0] * sizeof(float), p->stage - 1, 2 * k + 1,
                          &p->bwd[p->slot_of[k]]), "send", k);
    if (p->trace) tr_add(p->trace, TR_MAIN, "bwd", k, t0, ck_now(), 0);
}

double pp_run(pp_ctx *p, const mlp *base, const csr_rows *x, const size_t *rows, const int *labels, int b,
              rng_t *drop)
{
    const double t0 = ck_now();
    batch bt = {x, rows, labels, drop, 0.0};
    for (int k = 0; k < p->M; k++) {
        p->off[k] = (int)((long long)k * b / p->M);
        p->cnt[k] = (int)((long long)(k + 1) * b / p->M) - p->off[k];
    }
    /* Test hook (tests/trainer/pp.sh): every stage drops the last micro-batch's rows. */
    if (p->drop_last) p->cnt[p->M - 1] = 0;
    /* The trace's call: this run (its events and the all-reduce after it). */
    if (p->trace && p->runs++) p->trace->step++;
    /* The schedule, as it was checked (pp_open). */
    for (int i = 0; i < 2 * p->M; i++) {
        if (p->ops[i].kind == CK_PP_F) forward(p, base, &bt, p->ops[i].mb);
        else backward(p, &bt, p->ops[i].mb);
    }
    for (int k = 0; k < p->nslots; k++) {
        check(p, ck_wait(p->comm, &p->fwd[k]), "send", k);
        check(p, ck_wait(p->comm, &p->bwd[k]), "send", k);
    }
    p->run_s += ck_now() - t0;
    return bt.loss;
}
