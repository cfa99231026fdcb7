/*
 * tp.c — tensor parallelism's communication and layout (tp.h): the reduce
 * hook the split layers call, and the moves between the shards and the
 * whole model (scatter, gather, take), a piece of rows at a time so that no
 * rank but world rank 0 ever holds a whole layer. A shard may hold only a
 * pipeline stage's layers (the hybrid, sync_pipeline.c): the moves walk
 * those.
 */
#include <stdlib.h>
#include <string.h>
#include "tp.h"

void tp_reduce(float *buf, size_t n, void *ctx)
{
    tp_ctx *t = ctx;
    const double t0 = ck_now();
    const int rc = ck_allreduce(t->comm, t->algo, CK_IN_PLACE, buf, n, CK_F32, CK_SUM);
    /* A failed all-reduce leaves the group's ranks apart: the job ends, named. */
    if (rc) ck_watch_abort("--tp: all-reduce of %zu floats with '%s' on the tensor-parallel group failed: %s (%s)", n,
                           t->algo->name, ck_strerror(rc), ck_comm_errmsg(t->comm));
    t->comm_s += ck_now() - t0;
    t->bytes += n * sizeof(float);
}

/* Rank q's part of one matrix of a layer (W, or its bias as one row). */
enum { WHOLE, COLS, ROWS };
typedef struct { int kind, rows, F, w, c0, r0, nr; } piece;

static piece geom(const tp_ctx *t, const mlp *sh, int i, int bias, int q)
{
    piece g = {.kind = WHOLE, .rows = bias ? 1 : sh->in[i], .F = sh->full_out[i]};
    if (sh->split[i] == MLP_SPLIT_COL) {
        g.kind = COLS;
        g.w = sh->out[i];
        g.c0 = q * g.w - (t->shift && q == t->T - 1 && q > 0);
    } else if (sh->split[i] == MLP_SPLIT_ROW && !bias) {
        g.kind = ROWS;
        g.nr = sh->in[i];
        g.rows = g.nr * t->T;
        g.r0 = q * g.nr;
    }
    return g;
}

/* The part's first row among rows k0.., as an offset into the shard. */
static size_t part_offset(piece g, int k0)
{
    if (g.kind == COLS) return (size_t)k0 * g.w;
    if (g.kind == ROWS) return (size_t)(k0 > g.r0 ? (k0 < g.r0 + g.nr ? k0 : g.r0 + g.nr) - g.r0 : 0) * g.F;
    return (size_t)k0 * g.F;
}

/* Between rows k0..k1 of the whole matrix (full: row k0 on) and rank q's part
 * of them (part, packed). dir 0: whole -> part; 1: part -> whole. NULL
 * pointers: only count. Returns the part's floats. */
static size_t copy_rows(piece g, int k0, int k1, float *full, float *part, int dir)
{
    size_t n = 0;
    if (g.kind == COLS) {
        for (int k = k0; k < k1 && full; k++) {
            float *a = full + (size_t)(k - k0) * g.F + g.c0, *b = part + (size_t)(k - k0) * g.w;
            memcpy(dir ? a : b, dir ? b : a, (size_t)g.w * sizeof(float));
        }
        return (size_t)(k1 - k0) * g.w;
    }
    int lo = k0, hi = k1;
    if (g.kind == ROWS) {
        lo = k0 > g.r0 ? k0 : g.r0;
        hi = k1 < g.r0 + g.nr ? k1 : g.r0 + g.nr;
    }
    if (hi <= lo) return 0;
    n = (size_t)(hi - lo) * g.F;
    if (full) {
        float *a = full + (size_t)(lo - k0) * g.F;
        memcpy(dir ? a : part, dir ? part : a, n * sizeof(float));
    }
    return n;
}

/* Rows a piece of the moves takes: about a MiB of floats. */
enum { PIECE_FLOATS = 1 << 18 };
static int piece_rows(int F) { return F >= PIECE_FLOATS ? 1 : PIECE_FLOATS / F; }

static float *piece_buffer(const mlp *full)
{
    size_t n = PIECE_FLOATS;
    for (int i = 0; i < full->nlayers; i++) n = (size_t)full->out[i] > n ? (size_t)full->out[i] : n;
    float *b = malloc(n * sizeof *b);
    if (!b) ck_watch_abort("--tp: out of memory for a piece of the model");
    return b;
}

static size_t offset_of(const mlp *m, int i, int bias) { return bias ? m->b_off[i] : m->w_off[i]; }

static int holds(const mlp *sh, int i) { return i >= sh->l0 && i < sh->l1; }

void tp_scatter(const tp_ctx *t, const mlp *sh, const mlp *full, const float *src, float *dst)
{
    int world_rank;
    MPI_Comm_rank(t->world, &world_rank);
    float *buf = piece_buffer(full);
    /* Every layer goes to every rank (a broadcast over world): a pipeline
     * stage keeps its part of the layers it holds only. */
    for (int i = 0; i < full->nlayers; i++)
        for (int bias = 0; bias < 2; bias++) {
            const piece g = geom(t, sh, i, bias, t->rank);
            const size_t fo = offset_of(full, i, bias), so = holds(sh, i) ? offset_of(sh, i, bias) : 0;
            for (int k0 = 0, step = piece_rows(g.F); k0 < g.rows; k0 += step) {
                const int k1 = k0 + step < g.rows ? k0 + step : g.rows;
                float *rows = world_rank == 0 ? (float *)src + fo + (size_t)k0 * g.F : buf;
                ck_watch_bcast(rows, (k1 - k0) * g.F, MPI_FLOAT, 0, t->world, "--tp: the model to its shards");
                if (holds(sh, i)) copy_rows(g, k0, k1, rows, dst + so + part_offset(g, k0), 0);
            }
        }
    free(buf);
}

void tp_gather(const tp_ctx *t, const mlp *sh, const mlp *full, const float *src, float *dst)
{
    if (!t->gathers) return;
    float *buf = t->rank == 0 ? piece_buffer(full) : NULL;
    int *counts = calloc((size_t)t->T * 2, sizeof *counts);
    if (!counts) ck_watch_abort("--tp: out of memory");
    const size_t base = full->w_off[sh->l0];   /* dst is the slice of the stage's layers */
    for (int i = sh->l0; i < sh->l1; i++)
        for (int bias = 0; bias < 2; bias++) {
            const size_t fo = offset_of(full, i, bias) - base, so = offset_of(sh, i, bias);
            const piece mine = geom(t, sh, i, bias, t->rank);
            for (int k0 = 0, step = piece_rows(mine.F); k0 < mine.rows; k0 += step) {
                const int k1 = k0 + step < mine.rows ? k0 + step : mine.rows;
                /* A whole matrix is the same on every rank of the group: rank 0's is sent. */
                for (int q = 0, at = 0; q < t->T; q++) {
                    const piece g = geom(t, sh, i, bias, q);
                    counts[q] = g.kind == WHOLE && q ? 0 : (int)copy_rows(g, k0, k1, NULL, NULL, 0);
                    counts[t->T + q] = at;
                    at += counts[q];
                }
                ck_watch_gatherv(src + so + part_offset(mine, k0), counts[t->rank], MPI_FLOAT, buf, counts,
                                 counts + t->T, MPI_FLOAT, 0, t->group, "--tp: the shards to rank 0's model");
                for (int q = 0; q < t->T && t->rank == 0; q++)
                    if (counts[q]) copy_rows(geom(t, sh, i, bias, q), k0, k1, dst + fo + (size_t)k0 * mine.F,
                                             buf + counts[t->T + q], 1);
            }
        }
    free(counts);
    free(buf);
}

void tp_take(const tp_ctx *t, const mlp *sh, const mlp *full, const float *src, float *dst)
{
    for (int i = sh->l0; i < sh->l1; i++)
        for (int bias = 0; bias < 2; bias++) {
            const piece g = geom(t, sh, i, bias, t->rank);
            copy_rows(g, 0, g.rows, (float *)src + offset_of(full, i, bias), dst + offset_of(sh, i, bias), 0);
        }
}

size_t tp_w0_bytes(const mlp *m) { return (size_t)m->in[0] * (size_t)m->out[0] * sizeof(float); }
