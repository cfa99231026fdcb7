/*
 * model.c — MLP layers (forward/backward pairs over flat arrays) on cblas_sgemm.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "model.h"
#include "collkit_util.h"

int mlp_parse_hidden(const char *s, mlp_config *cfg, char *err, size_t errlen)
{
    int n = 0;
    if (!s || !*s) { snprintf(err, errlen, "--hidden: empty list (want e.g. 256,128)"); return -1; }
    /* Split by hand rather than with strtok, which would skip the empty
     * entry of "12,,3" or "12," instead of refusing it. */
    for (const char *p = s;; ) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char tok[24], why[96];
        long long v = 0;
        if (len >= sizeof tok) snprintf(why, sizeof why, "too long");
        else {
            memcpy(tok, p, len);
            tok[len] = '\0';
        }
        if (len >= sizeof tok || ck_parse_int(tok, 1, 65536, &v, why, sizeof why)) {
            snprintf(err, errlen, "--hidden '%s': entry %d: %s (want comma-separated widths in 1..65536, e.g. 256,128)",
                     s, n + 1, why);
            return -1;
        }
        if (n == MLP_MAX_HIDDEN) {
            snprintf(err, errlen, "--hidden '%s': at most %d hidden layers", s, MLP_MAX_HIDDEN);
            return -1;
        }
        cfg->hidden[n++] = (int)v;
        if (!comma) break;
        p = comma + 1;
    }
    cfg->nhidden = n;
    return 0;
}

static void *alloc_floats(size_t n)
{
    void *p = NULL;
    size_t bytes = ((n ? n : 1) * sizeof(float) + 63) / 64 * 64;
    if (posix_memalign(&p, 64, bytes)) return NULL;
    memset(p, 0, bytes);
    return p;
}

int mlp_tp_check(const mlp_config *cfg, int T, char *why, size_t cap)
{
    /* Layer 2j is split by its columns: its width H_2j, when layer 2j+1 exists. */
    for (int j = 0; 2 * j + 1 <= cfg->nhidden; j++)
        if (cfg->hidden[2 * j] % T) {
            snprintf(why, cap, "--tp %d does not divide hidden layer %d's width %d (layer %d is split by columns, "
                     "layer %d by rows)", T, 2 * j + 1, cfg->hidden[2 * j], 2 * j, 2 * j + 1);
            return -1;
        }
    return 0;
}

int mlp_create(mlp *m, const mlp_config *cfg, int max_batch) { return mlp_create_part(m, cfg, max_batch, 1, 0, 0, -1); }
int mlp_create_tp(mlp *m, const mlp_config *cfg, int max_batch, int T, int rank)
{
    return mlp_create_part(m, cfg, max_batch, T, rank, 0, -1);
}

/* Layer i's shape on this rank: Megatron's pairs (2j by columns, 2j+1 by rows). */
static void tp_shape(mlp *m, int i, int T, int rank)
{
    const int L = m->cfg.nhidden;
    m->full_out[i] = m->out[i];
    if (T < 2) return;
    if (i % 2 == 0 && i + 1 <= L) {
        m->split[i] = MLP_SPLIT_COL;
        m->out[i] /= T;
        m->col0[i] = rank * m->out[i];
    } else if (i % 2 == 1) {
        m->split[i] = MLP_SPLIT_ROW;
        m->in[i] /= T;
    }
}

/* The activations of layers l0 .. l1 for max_batch rows (a_l0 too, when a
 * previous stage sends it), and the backward's two gradient buffers. */
static int alloc_acts(mlp *m)
{
    const size_t B = (size_t)m->max_batch;
    /* The widest d(activation) the backward keeps: the input x needs none. */
    int widest = MLP_CLASSES;
    for (int i = 0; i < m->cfg.nhidden; i++) widest = m->cfg.hidden[i] > widest ? m->cfg.hidden[i] : widest;
    int ok = 1;
    if (m->l0 > 0) ok = (m->act[m->l0] = alloc_floats(B * m->in[m->l0])) != NULL;
    for (int i = m->l0; i < m->l1 && ok; i++) {
        m->pre[i] = alloc_floats(B * m->out[i]);
        ok = ok && m->pre[i];
        if (i < m->cfg.nhidden) {
            m->act[i + 1] = alloc_floats(B * m->out[i]);
            m->mask[i] = alloc_floats(B * m->out[i]);
            ok = ok && m->act[i + 1] && m->mask[i];
        }
    }
    m->probs = alloc_floats(B * MLP_CLASSES);
    m->dbuf[0] = alloc_floats(B * widest);
    m->dbuf[1] = alloc_floats(B * widest);
    return ok && m->probs && m->dbuf[0] && m->dbuf[1] ? 0 : -1;
}

int mlp_create_part(mlp *m, const mlp_config *cfg, int max_batch, int T, int rank, int l0, int l1)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->nlayers = cfg->nhidden + 1;
    m->l0 = l0;
    m->l1 = l1 < 0 ? m->nlayers : l1;
    m->max_batch = max_batch < 1 ? 1 : max_batch;
    m->tp_size = T < 1 ? 1 : T;
    m->tp_rank = rank;
    /* Offsets from the first layer held: a stage's layers are one slice of the whole buffer. */
    size_t off = 0;
    for (int i = 0; i < m->nlayers; i++) {
        m->in[i] = i == 0 ? cfg->in_dim : cfg->hidden[i - 1];
        m->out[i] = i == cfg->nhidden ? MLP_CLASSES : cfg->hidden[i];
        tp_shape(m, i, m->tp_size, rank);
        if (i < m->l0 || i >= m->l1) continue;
        m->w_off[i] = off; off += (size_t)m->in[i] * m->out[i];
        m->b_off[i] = off; off += (size_t)m->out[i];
    }
    m->nparams = off;
    m->params = alloc_floats(off);
    m->grads = alloc_floats(off);
    if (!m->params || !m->grads || alloc_acts(m)) { mlp_free(m); return -1; }
    return 0;   /* alloc_floats zeroes: the gradients start at 0 */
}

int mlp_clone_acts(mlp *dst, const mlp *src, int max_batch)
{
    *dst = *src;
    dst->max_batch = max_batch < 1 ? 1 : max_batch;
    for (int i = 0; i < MLP_MAX_HIDDEN + 1; i++) dst->pre[i] = dst->act[i] = NULL;
    for (int i = 0; i < MLP_MAX_HIDDEN; i++) dst->mask[i] = NULL;
    dst->shared = 1;
    if (alloc_acts(dst)) { mlp_free(dst); return -1; }
    return 0;
}

size_t mlp_act_bytes(const mlp *m)
{
    size_t n = MLP_CLASSES;
    int widest = MLP_CLASSES;
    for (int i = 0; i < m->cfg.nhidden; i++) widest = m->cfg.hidden[i] > widest ? m->cfg.hidden[i] : widest;
    n += 2 * (size_t)widest + (m->l0 > 0 ? (size_t)m->in[m->l0] : 0);
    for (int i = m->l0; i < m->l1; i++) n += (size_t)m->out[i] * (i < m->cfg.nhidden ? 3 : 1);
    return n * (size_t)m->max_batch * sizeof(float);
}

void mlp_free(mlp *m)
{
    if (!m->shared) {
        free(m->params);
        free(m->grads);
    }
    for (int i = 0; i < MLP_MAX_HIDDEN + 1; i++) {
        free(m->pre[i]);
        free(m->act[i]);
        if (i < MLP_MAX_HIDDEN) free(m->mask[i]);
    }
    free(m->probs);
    free(m->dbuf[0]);
    free(m->dbuf[1]);
    memset(m, 0, sizeof *m);
}

void mlp_init_params(mlp *m, uint64_t seed)
{
    rng_t r = rng_stream(seed, RNG_INIT, 0, 0);
    for (int i = 0; i < m->nlayers; i++) {
        float *W = m->params + m->w_off[i];
        size_t n = (size_t)m->in[i] * m->out[i];
        if (i < m->nlayers - 1) {
            /* He: keeps the variance of ReLU activations constant through depth. */
            float sd = sqrtf(2.0f / (float)m->in[i]);
            for (size_t k = 0; k < n; k++) W[k] = sd * rng_normal(&r);
        } else {
            float a = sqrtf(6.0f / (float)(m->in[i] + m->out[i]));
            for (size_t k = 0; k < n; k++) W[k] = a * (2.0f * rng_uniform(&r) - 1.0f);
        }
        memset(m->params + m->b_off[i], 0, (size_t)m->out[i] * sizeof(float));
    }
}

void mlp_zero_grads(mlp *m)
{
    memset(m->grads, 0, m->nparams * sizeof(float));
}

/* ------------------------------------------------------------ layers */

void csr_linear_forward(float *out, const csr_rows *x, const size_t *rows, const float *W, const float *bias, int b,
                        int out_dim)
{
    for (int r = 0; r < b; r++) {
        float *o = out + (size_t)r * out_dim;
        const size_t row = rows[r];
        if (bias) memcpy(o, bias, (size_t)out_dim * sizeof(float));
        else memset(o, 0, (size_t)out_dim * sizeof(float));
        /* z[r,:] = b + sum over the non-zeros k of x[r,k] W[k,:]: a weighted sum of rows of W. */
        for (size_t e = x->ptr[row]; e < x->ptr[row + 1]; e++) {
            const float xv = x->val[e], *w = W + (size_t)x->idx[e] * out_dim;
            for (int j = 0; j < out_dim; j++) o[j] += xv * w[j];
        }
    }
}

void csr_linear_backward(float *dW, float *dbias, const float *dout, const csr_rows *x, const size_t *rows, int b,
                         int out_dim)
{
    for (int r = 0; r < b; r++) {
        const float *d = dout + (size_t)r * out_dim;
        for (int j = 0; j < out_dim; j++) dbias[j] += d[j];
        /* Only the rows of W that this sample's non-zeros select get a gradient. */
        const size_t row = rows[r];
        for (size_t e = x->ptr[row]; e < x->ptr[row + 1]; e++) {
            const float xv = x->val[e];
            float *g = dW + (size_t)x->idx[e] * out_dim;
            for (int j = 0; j < out_dim; j++) g[j] += xv * d[j];
        }
    }
}

void linear_forward(float *out, const float *inp, const float *W, const float *bias, int b, int in, int out_dim)
{
    if (b <= 0) return;
    for (int r = 0; r < b; r++)
        if (bias) memcpy(out + (size_t)r * out_dim, bias, (size_t)out_dim * sizeof(float));
        else memset(out + (size_t)r * out_dim, 0, (size_t)out_dim * sizeof(float));
    /* out[b x out] += inp[b x in] . W[in x out] */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, out_dim, in,
                1.0f, inp, in, W, out_dim, 1.0f, out, out_dim);
}

void linear_backward(float *dinp, float *dW, float *dbias, const float *dout, const float *inp,
                     const float *W, int b, int in, int out_dim)
{
    if (b <= 0) return;
    /* dW[in x out] += inp^T . dout (beta 1: gradient accumulation over micro-batches) */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, in, out_dim, b,
                1.0f, inp, in, dout, out_dim, 1.0f, dW, out_dim);
    for (int r = 0; r < b; r++) {
        const float *d = dout + (size_t)r * out_dim;
        for (int j = 0; j < out_dim; j++) dbias[j] += d[j];
    }
    /* dinp[b x in] = dout . W^T */
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, in, out_dim,
                    1.0f, dout, out_dim, W, out_dim, 0.0f, dinp, in);
}

void relu_dropout_forward(float *out, float *mask, const float *z, size_t n, float p, int train, rng_t *rng)
{
    if (!train || p <= 0.0f) {
        for (size_t k = 0; k < n; k++) { out[k] = z[k] > 0.0f ? z[k] : 0.0f; mask[k] = 1.0f; }
        return;
    }
    /* Inverted dropout: scale the kept units at training time so evaluation needs no rescaling. */
    const float keep_scale = 1.0f / (1.0f - p);
    for (size_t k = 0; k < n; k++) {
        mask[k] = rng_uniform(rng) < p ? 0.0f : keep_scale;
        out[k] = (z[k] > 0.0f ? z[k] : 0.0f) * mask[k];
    }
}

void relu_dropout_forward_cols(float *out, float *mask, const float *z, int b, int full, int col0, int width, float p,
                               int train, rng_t *rng)
{
    if (!train || p <= 0.0f) {
        relu_dropout_forward(out, mask, z, (size_t)b * width, p, train, rng);
        return;
    }
    /* The whole layer's draws, in its order, on every rank of the group: each
     * keeps its columns, so the mask is the one a single rank would draw. */
    const float keep_scale = 1.0f / (1.0f - p);
    for (int r = 0; r < b; r++)
        for (int j = 0; j < full; j++) {
            const float u = rng_uniform(rng);
            if (j < col0 || j >= col0 + width) continue;
            const size_t k = (size_t)r * width + (size_t)(j - col0);
            mask[k] = u < p ? 0.0f : keep_scale;
            out[k] = (z[k] > 0.0f ? z[k] : 0.0f) * mask[k];
        }
}

void relu_dropout_backward(float *dz, const float *dout, const float *mask, const float *z, size_t n)
{
    for (size_t k = 0; k < n; k++) dz[k] = z[k] > 0.0f ? dout[k] * mask[k] : 0.0f;
}

double softmax_xent_forward(float *probs, const float *logits, const int *labels, int b, int c, float eps,
                            const float *w)
{
    double loss = 0.0;
    for (int r = 0; r < b; r++) {
        const float *l = logits + (size_t)r * c;
        float *pr = probs + (size_t)r * c;
        float mx = l[0];
        for (int j = 1; j < c; j++) mx = l[j] > mx ? l[j] : mx;
        double sum = 0.0;   /* subtracting the max keeps exp() finite for any logits */
        for (int j = 0; j < c; j++) { pr[j] = expf(l[j] - mx); sum += pr[j]; }
        for (int j = 0; j < c; j++) pr[j] = (float)(pr[j] / sum);
        if (!labels) continue;
        /* -log p_j = lse - l_j in the max-shifted (log-sum-exp) form: no log(0).
         * Against the smoothed target: (1 - eps) (-log p_y) + eps / c SUM_j (-log p_j). */
        const double lse = log(sum);
        double ce = lse - (double)(l[labels[r]] - mx);
        if (eps > 0.0f) {
            double all = 0.0;
            for (int j = 0; j < c; j++) all += lse - (double)(l[j] - mx);
            ce = (1.0 - eps) * ce + (double)eps / c * all;
        }
        loss += (w ? w[labels[r]] : 1.0) * ce;
    }
    return loss;
}

void softmax_xent_backward(float *dlogits, const float *probs, const int *labels, int b, int c, float eps,
                           const float *w)
{
    const float off = eps / (float)c, on = 1.0f - eps + off;
    for (int r = 0; r < b; r++) {
        const float wr = w ? w[labels[r]] : 1.0f;
        for (int j = 0; j < c; j++)
            dlogits[(size_t)r * c + j] = wr * (probs[(size_t)r * c + j] - (j == labels[r] ? on : off));
    }
}

/* ------------------------------------------------------------ whole model */

double mlp_forward(mlp *m, const csr_rows *x, const size_t *rows, const int *labels, int b, int train, rng_t *rng)
{
    const int L = m->cfg.nhidden;
    m->x = *x;
    m->rows = rows;
    m->train = train;
    for (int i = m->l0; i < m->l1; i++) {
        const float *W = m->params + m->w_off[i], *bias = m->params + m->b_off[i];
        /* A row-split layer's bias is whole on every rank: added once, by rank 0, before the sum. */
        if (m->split[i] == MLP_SPLIT_ROW && m->tp_rank) bias = NULL;
        if (i == 0) csr_linear_forward(m->pre[0], x, rows, W, bias, b, m->out[0]);
        else linear_forward(m->pre[i], m->act[i], W, bias, b, m->in[i], m->out[i]);
        if (m->split[i] == MLP_SPLIT_ROW) m->reduce(m->pre[i], (size_t)b * m->out[i], m->reduce_ctx);
        if (i < L && m->split[i] == MLP_SPLIT_COL)
            relu_dropout_forward_cols(m->act[i + 1], m->mask[i], m->pre[i], b, m->full_out[i], m->col0[i], m->out[i],
                                      m->cfg.dropout, train, rng);
        else if (i < L)
            relu_dropout_forward(m->act[i + 1], m->mask[i], m->pre[i], (size_t)b * m->out[i], m->cfg.dropout, train, rng);
    }
    if (m->l1 < m->nlayers) return 0.0;   /* a pipeline stage before the last: a_l1 is its output */
    /* Label smoothing and class weights shape the training loss only: the
     * evaluation loss is the plain cross-entropy, comparable across settings. */
    return softmax_xent_forward(m->probs, m->pre[L], labels, b, MLP_CLASSES, train ? m->cfg.label_smoothing : 0.0f,
                                train ? m->cfg.class_weight : NULL);
}

/* dW[k0:k1, :] += inp[:, k0:k1]^T . dout : one row block of a weight gradient. */
static void wgrad_rows(float *dW, const float *dout, const float *inp, int b, int in, int out_dim, int k0, int k1)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k1 - k0, out_dim, b,
                1.0f, inp + k0, in, dout, out_dim, 1.0f, dW + (size_t)k0 * out_dim, out_dim);
}

void mlp_backward(mlp *m, const int *labels, int b, mlp_ready_fn ready, void *ctx, size_t chunk)
{
    int cur = 0;
    if (m->l1 == m->nlayers)
        softmax_xent_backward(m->dbuf[cur], m->probs, labels, b, MLP_CLASSES, m->train ? m->cfg.label_smoothing : 0.0f,
                              m->train ? m->cfg.class_weight : NULL);
    else   /* a pipeline stage: the next stage's gradient of a_l1 in dbuf[0], through this stage's relu and dropout */
        relu_dropout_backward(m->dbuf[0], m->dbuf[0], m->mask[m->l1 - 1], m->pre[m->l1 - 1], (size_t)b * m->out[m->l1 - 1]);
    for (int i = m->l1 - 1; i >= (m->l0 > 1 ? m->l0 : 1); i--) {
        float *dinp = m->dbuf[1 - cur];
        const float *dout = m->dbuf[cur], *W = m->params + m->w_off[i];
        float *dW = m->grads + m->w_off[i], *db = m->grads + m->b_off[i];
        const int in = m->in[i], out = m->out[i];
        if (!ready) {
            linear_backward(dinp, dW, db, dout, m->act[i], W, b, in, out);
        } else {
            /* The same arithmetic as linear_backward, reordered so the buffer
             * is released from the end: bias, then weight rows last to first. */
            for (int r = 0; r < b; r++)
                for (int j = 0; j < out; j++) db[j] += dout[(size_t)r * out + j];
            ready(m->b_off[i], ctx);
            int rows = chunk ? (int)(chunk / (size_t)out) : in;
            if (rows < 1) rows = 1;
            for (int k1 = in; k1 > 0; k1 -= rows) {
                int k0 = k1 - rows > 0 ? k1 - rows : 0;
                if (b > 0) wgrad_rows(dW, dout, m->act[i], b, in, out, k0, k1);
                ready(m->w_off[i] + (size_t)k0 * out, ctx);
            }
            if (b > 0)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, in, out,
                            1.0f, dout, out, W, out, 0.0f, dinp, in);
        }
        /* A column-split layer's input gradient is this rank's part of a sum. */
        if (m->split[i] == MLP_SPLIT_COL) m->reduce(dinp, (size_t)b * in, m->reduce_ctx);
        /* The first layer of a later stage: its input's relu and dropout are the previous stage's. */
        if (i > m->l0) relu_dropout_backward(dinp, dinp, m->mask[i - 1], m->pre[i - 1], (size_t)b * in);
        cur = 1 - cur;
    }
    m->dinput = m->dbuf[cur];
    if (m->l0 > 0) return;
    /* Layer 0 reads the CSR input: its weight gradient touches only the rows
     * the batch's non-zeros select, all at once (no row blocks to release). */
    csr_linear_backward(m->grads + m->w_off[0], m->grads + m->b_off[0], m->dbuf[cur], &m->x, m->rows, b, m->out[0]);
    if (ready) ready(0, ctx);
}
