/*
 * pp.c — the pipeline's schedules and messages (pp.h).
 */
#include <stdlib.h>
#include <string.h>
#include "pp.h"

void pp_stage_layers(int n, int S, int stage, int *l0, int *l1)
{
    *l0 = stage * n / S;
    *l1 = (stage + 1) * n / S;
}

int pp_open(pp_ctx *p, ck_comm *comm, int S, int stage, int M, int sched, const mlp *base)
{
    const char *hook = getenv("TAGTRAIN_TEST_PP_DROP");
    *p = (pp_ctx){.S = S, .stage = stage, .M = M, .sched = sched, .comm = comm, .drop_last = hook && !strcmp(hook, "1")};
    p->nslots = sched == PP_GPIPE || S - stage > M ? M : S - stage;
    p->slot = calloc((size_t)p->nslots, sizeof *p->slot);
    p->fwd = calloc((size_t)p->nslots, sizeof *p->fwd);
    p->bwd = calloc((size_t)p->nslots, sizeof *p->bwd);
    p->cnt = calloc((size_t)M, sizeof *p->cnt);
    p->off = calloc((size_t)M, sizeof *p->off);
    if (!p->slot || !p->fwd || !p->bwd || !p->cnt || !p->off) return -1;
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
    mlp *m = &p->slot[k % p->nslots];
    ck_req *f = &p->fwd[k % p->nslots], *g = &p->bwd[k % p->nslots];
    /* The slot's last sends are done before its buffers are written again. */
    check(p, ck_wait(p->comm, f), "send", k);
    check(p, ck_wait(p->comm, g), "send", k);
    m->params = base->params;
    m->grads = base->grads;
    const int b = p->cnt[k];
    if (p->stage > 0) receive(p, m->act[m->l0], (size_t)b * m->in[m->l0] * sizeof(float), p->stage - 1, 2 * k, k);
    bt->loss += mlp_forward(m, bt->x, bt->rows + p->off[k], bt->labels + p->off[k], b, 1, bt->drop);
    if (p->charge) p->charge(2.0 * b * (double)m->nparams);
    if (p->stage < p->S - 1)
        check(p, ck_isend(p->comm, m->act[m->l1], (size_t)b * m->out[m->l1 - 1] * sizeof(float), p->stage + 1, 2 * k, f),
              "send", k);
}

static void backward(pp_ctx *p, batch *bt, int k)
{
    mlp *m = &p->slot[k % p->nslots];
    const int b = p->cnt[k];
    if (p->stage < p->S - 1)
        receive(p, m->dbuf[0], (size_t)b * m->out[m->l1 - 1] * sizeof(float), p->stage + 1, 2 * k + 1, k);
    mlp_backward(m, bt->labels + p->off[k], b, NULL, NULL, 0);
    if (p->charge) p->charge(4.0 * b * (double)m->nparams);
    if (p->stage > 0)
        check(p, ck_isend(p->comm, m->dinput, (size_t)b * m->in[m->l0] * sizeof(float), p->stage - 1, 2 * k + 1,
                          &p->bwd[k % p->nslots]), "send", k);
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
    if (p->sched == PP_GPIPE) {
        for (int k = 0; k < p->M; k++) forward(p, base, &bt, k);
        for (int k = p->M - 1; k >= 0; k--) backward(p, &bt, k);
    } else {
        /* Fill the pipe, then one forward and one backward at a time, then drain. */
        const int warm = p->nslots - 1;
        for (int k = 0; k < warm; k++) forward(p, base, &bt, k);
        for (int j = 0; j < p->M; j++) {
            if (warm + j < p->M) forward(p, base, &bt, warm + j);
            backward(p, &bt, j);
        }
    }
    for (int k = 0; k < p->nslots; k++) {
        check(p, ck_wait(p->comm, &p->fwd[k]), "send", k);
        check(p, ck_wait(p->comm, &p->bwd[k]), "send", k);
    }
    p->run_s += ck_now() - t0;
    return bt.loss;
}
