/*
 * ckpt.c — checkpoint serialisation, atomic write, verified read.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ckpt.h"
#include "collkit_util.h"

#define HEADER_BYTES 32
#define VERSION 2u

/* ------------------------------------------------------------ writer */

typedef struct { unsigned char *buf; size_t len, cap; int oom; } wbuf;

static void put(wbuf *w, const void *p, size_t n)
{
    if (w->oom) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n) cap *= 2;
        unsigned char *nb = realloc(w->buf, cap);
        if (!nb) { w->oom = 1; return; }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}
static void put_u32(wbuf *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(wbuf *w, uint64_t v) { put(w, &v, 8); }
static void put_i64(wbuf *w, int64_t v) { put(w, &v, 8); }
static void put_f32(wbuf *w, float v) { put(w, &v, 4); }
static void put_f64(wbuf *w, double v) { put(w, &v, 8); }

static void put_config(wbuf *w, const train_config *c)
{
    put_u32(w, (uint32_t)c->model.in_dim);
    put_u32(w, (uint32_t)c->model.nhidden);
    for (int i = 0; i < MLP_MAX_HIDDEN; i++) put_u32(w, (uint32_t)c->model.hidden[i]);
    put_f32(w, c->model.dropout);
    put_u32(w, (uint32_t)c->opt.kind);
    put_f32(w, c->opt.lr); put_f32(w, c->opt.beta1); put_f32(w, c->opt.beta2);
    put_f32(w, c->opt.eps); put_f32(w, c->opt.weight_decay);
    put_u32(w, (uint32_t)c->opt.sched);
    put_i64(w, c->opt.warmup); put_i64(w, c->opt.total_steps);
    put_f32(w, c->opt.min_frac);
    put_i64(w, c->opt.step_every); put_f32(w, c->opt.step_gamma);
    put_u32(w, (uint32_t)c->feat_dim);
    put_u32(w, (uint32_t)c->epochs);
    put_u32(w, (uint32_t)c->batch);
    put_u32(w, (uint32_t)c->accum);
    put_u64(w, c->seed);
    put_f64(w, c->val_frac);
    put_u64(w, c->split_seed);
    put_u32(w, (uint32_t)c->feat.char_min);
    put_u32(w, (uint32_t)c->feat.char_max);
    put_u32(w, (uint32_t)c->feat.sublinear);
    put_u32(w, (uint32_t)c->feat.title_weight);
    put_f32(w, c->model.label_smoothing);
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0) { if (errno == EINTR) continue; return -1; }
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

int ckpt_probe(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errno == ENOENT ? 0 : -1;
    char magic[8] = {0};
    size_t k = fread(magic, 1, 8, f);
    fclose(f);
    return k == 8 && !memcmp(magic, CKPT_MAGIC, 8) ? 1 : -1;
}

int ckpt_save(const char *path, const checkpoint *c, char *err, size_t errlen)
{
    if (ckpt_probe(path) < 0) {
        snprintf(err, errlen, "%s exists and is not a tagtrain checkpoint: refusing to overwrite it", path);
        return -1;
    }
    wbuf w = {0};
    put_config(&w, &c->cfg);
    put_u32(&w, (uint32_t)c->epochs_done);
    put_i64(&w, c->opt_steps);
    put_f64(&w, c->best_val_loss);
    put_u64(&w, (uint64_t)c->nparams);
    put(&w, c->params, c->nparams * sizeof(float));
    put(&w, c->m, c->nparams * sizeof(float));
    put(&w, c->v, c->nparams * sizeof(float));
    put(&w, c->idf, (size_t)c->cfg.feat_dim * sizeof(float));
    if (w.oom) { free(w.buf); snprintf(err, errlen, "out of memory serialising the checkpoint"); return -1; }

    unsigned char hdr[HEADER_BYTES] = {0};
    uint32_t ver = VERSION;
    uint64_t len = w.len, sum = ck_fnv1a64(w.buf, w.len);
    memcpy(hdr, CKPT_MAGIC, 8);
    memcpy(hdr + 8, &ver, 4);
    memcpy(hdr + 16, &len, 8);
    memcpy(hdr + 24, &sum, 8);

    /* The temporary file lives beside the target so rename() is atomic. */
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32), *dircopy = strdup(path);
    if (!tmp || !dircopy) { free(tmp); free(dircopy); free(w.buf); snprintf(err, errlen, "out of memory"); return -1; }
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644), rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    } else if (write_all(fd, hdr, sizeof hdr) || write_all(fd, w.buf, w.len) || fsync(fd)) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
    } else if (close(fd)) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, path)) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    } else {
        /* Make the rename itself durable. */
        int dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) { fsync(dfd); close(dfd); }
        rc = 0;
    }
    free(tmp);
    free(dircopy);
    free(w.buf);
    return rc;
}

/* ------------------------------------------------------------ reader */

typedef struct { const unsigned char *p; size_t len, pos; int short_read; } rbuf;

static void get(rbuf *r, void *out, size_t n)
{
    if (r->short_read || r->len - r->pos < n) { r->short_read = 1; memset(out, 0, n); return; }
    memcpy(out, r->p + r->pos, n);
    r->pos += n;
}
static uint32_t get_u32(rbuf *r) { uint32_t v; get(r, &v, 4); return v; }
static uint64_t get_u64(rbuf *r) { uint64_t v; get(r, &v, 8); return v; }
static int64_t get_i64(rbuf *r) { int64_t v; get(r, &v, 8); return v; }
static float get_f32(rbuf *r) { float v; get(r, &v, 4); return v; }
static double get_f64(rbuf *r) { double v; get(r, &v, 8); return v; }

static void get_config(rbuf *r, train_config *c)
{
    c->model.in_dim = (int)get_u32(r);
    c->model.nhidden = (int)get_u32(r);
    for (int i = 0; i < MLP_MAX_HIDDEN; i++) c->model.hidden[i] = (int)get_u32(r);
    c->model.dropout = get_f32(r);
    c->opt.kind = (opt_kind)get_u32(r);
    c->opt.lr = get_f32(r); c->opt.beta1 = get_f32(r); c->opt.beta2 = get_f32(r);
    c->opt.eps = get_f32(r); c->opt.weight_decay = get_f32(r);
    c->opt.sched = (sched_kind)get_u32(r);
    c->opt.warmup = get_i64(r); c->opt.total_steps = get_i64(r);
    c->opt.min_frac = get_f32(r);
    c->opt.step_every = get_i64(r); c->opt.step_gamma = get_f32(r);
    c->feat_dim = (int)get_u32(r);
    c->epochs = (int)get_u32(r);
    c->batch = (int)get_u32(r);
    c->accum = (int)get_u32(r);
    c->seed = get_u64(r);
    c->val_frac = get_f64(r);
    c->split_seed = get_u64(r);
    c->feat.char_min = (int)get_u32(r);
    c->feat.char_max = (int)get_u32(r);
    c->feat.sublinear = (int)get_u32(r);
    c->feat.title_weight = (int)get_u32(r);
    c->model.label_smoothing = get_f32(r);
}

void ckpt_free(checkpoint *c)
{
    free(c->params); free(c->m); free(c->v); free(c->idf);
    c->params = c->m = c->v = c->idf = NULL;
}

int ckpt_load(const char *path, checkpoint *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return -1; }
    unsigned char hdr[HEADER_BYTES];
    size_t k = fread(hdr, 1, sizeof hdr, f);
    if (k < 8 || memcmp(hdr, CKPT_MAGIC, 8)) {
        fclose(f);
        snprintf(err, errlen, "%s: not a tagtrain checkpoint (bad magic)", path);
        return -1;
    }
    if (k < sizeof hdr) {
        fclose(f);
        snprintf(err, errlen, "%s: truncated checkpoint (header is %zu of %d bytes)", path, k, HEADER_BYTES);
        return -1;
    }
    uint32_t ver;
    uint64_t len, sum;
    memcpy(&ver, hdr + 8, 4);
    memcpy(&len, hdr + 16, 8);
    memcpy(&sum, hdr + 24, 8);
    if (ver != VERSION) {
        fclose(f);
        snprintf(err, errlen, "%s: checkpoint format version %u, this build reads version %u", path, ver, VERSION);
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) || (uint64_t)st.st_size < HEADER_BYTES) {
        fclose(f);
        snprintf(err, errlen, "%s: cannot stat", path);
        return -1;
    }
    uint64_t have = (uint64_t)st.st_size - HEADER_BYTES;
    if (have != len) {
        fclose(f);
        snprintf(err, errlen, "%s: %s checkpoint: payload is %llu bytes, header says %llu", path,
                 have < len ? "truncated" : "oversized", (unsigned long long)have, (unsigned long long)len);
        return -1;
    }
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) { fclose(f); snprintf(err, errlen, "%s: out of memory (%llu bytes)", path, (unsigned long long)len); return -1; }
    if (fread(buf, 1, len, f) != len) {
        free(buf);
        fclose(f);
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    fclose(f);
    if (ck_fnv1a64(buf, len) != sum) {
        free(buf);
        snprintf(err, errlen, "%s: checksum mismatch: the checkpoint is corrupt", path);
        return -1;
    }

    rbuf r = {buf, len, 0, 0};
    get_config(&r, &c->cfg);
    c->epochs_done = (int)get_u32(&r);
    c->opt_steps = get_i64(&r);
    c->best_val_loss = get_f64(&r);
    uint64_t np = get_u64(&r);
    /* The checksum says the bytes are what was written; these checks say the
     * fields fit together, so a file from a buggy or hostile writer cannot make
     * us allocate wildly or read past the end. */
    const char *bad = NULL;
    mlp_config *mc = &c->cfg.model;
    if (r.short_read) bad = "header fields cut short";
    else if (mc->nhidden < 0 || mc->nhidden > MLP_MAX_HIDDEN) bad = "hidden layer count out of range";
    else if (c->cfg.feat_dim < 1 || c->cfg.feat_dim > (1 << 26) || mc->in_dim != c->cfg.feat_dim) bad = "feature dimension out of range";
    else if (!(mc->dropout >= 0.0f && mc->dropout < 1.0f)) bad = "dropout out of range";
    else if (!feat_opts_valid(&c->cfg.feat)) bad = "feature options out of range";
    else if (!(mc->label_smoothing >= 0.0f && mc->label_smoothing < 1.0f)) bad = "label smoothing out of range";
    if (!bad) {
        uint64_t expect = 0;
        int in = mc->in_dim;
        for (int i = 0; i <= mc->nhidden && !bad; i++) {
            int out = i == mc->nhidden ? MLP_CLASSES : mc->hidden[i];
            if (out < 1 || out > 65536) bad = "hidden width out of range";
            expect += (uint64_t)in * (uint64_t)out + (uint64_t)out;
            in = out;
        }
        if (!bad && expect != np) bad = "parameter count does not match the model shape";
        if (!bad && (len - r.pos) != (3 * np + (uint64_t)c->cfg.feat_dim) * sizeof(float))
            bad = "array sizes do not match the payload length";
    }
    if (bad) {
        free(buf);
        snprintf(err, errlen, "%s: invalid checkpoint: %s", path, bad);
        return -1;
    }
    c->nparams = (size_t)np;
    c->params = malloc(c->nparams * sizeof(float) + 1);
    c->m = malloc(c->nparams * sizeof(float) + 1);
    c->v = malloc(c->nparams * sizeof(float) + 1);
    c->idf = malloc((size_t)c->cfg.feat_dim * sizeof(float));
    if (!c->params || !c->m || !c->v || !c->idf) {
        ckpt_free(c);
        free(buf);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    get(&r, c->params, c->nparams * sizeof(float));
    get(&r, c->m, c->nparams * sizeof(float));
    get(&r, c->v, c->nparams * sizeof(float));
    get(&r, c->idf, (size_t)c->cfg.feat_dim * sizeof(float));
    free(buf);
    return 0;
}
