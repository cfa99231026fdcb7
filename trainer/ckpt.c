/*
 * ckpt.c — checkpoint serialisation, atomic write, verified read, and the
 * save directory's policy (lock, stale temporary files, best.ckpt repair).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ckpt.h"
#include "collkit_util.h"

#define HEADER_BYTES 32
/* Version 4 added feat.nb_scale after title_weight; a version 3 file (every
 * field else the same) is read as nb_scale 0, which is how it was trained. */
#define VERSION 4u
#define VERSION_OLDEST 3u

/* ------------------------------------------------------------ configuration */

static void put(unsigned char **w, const void *p, size_t n) { memcpy(*w, p, n); *w += n; }
static void put_u32(unsigned char **w, uint32_t v) { put(w, &v, 4); }
static void put_u64(unsigned char **w, uint64_t v) { put(w, &v, 8); }
static void put_i64(unsigned char **w, int64_t v) { put(w, &v, 8); }
static void put_f32(unsigned char **w, float v) { put(w, &v, 4); }
static void put_f64(unsigned char **w, double v) { put(w, &v, 8); }

/* Configuration + progress: the fixed-size front of the payload. */
enum { FRONT_MAX = 512 };

static size_t put_front(unsigned char *buf, const checkpoint *ck)
{
    unsigned char *w = buf;
    const train_config *c = &ck->cfg;
    put_u32(&w, (uint32_t)c->model.in_dim);
    put_u32(&w, (uint32_t)c->model.nhidden);
    for (int i = 0; i < MLP_MAX_HIDDEN; i++) put_u32(&w, (uint32_t)c->model.hidden[i]);
    put_f32(&w, c->model.dropout);
    put_f32(&w, c->model.label_smoothing);
    for (int i = 0; i < MLP_CLASSES; i++) put_f32(&w, c->model.class_weight[i]);
    put_u32(&w, (uint32_t)c->opt.kind);
    put_f32(&w, c->opt.lr); put_f32(&w, c->opt.beta1); put_f32(&w, c->opt.beta2);
    put_f32(&w, c->opt.eps); put_f32(&w, c->opt.weight_decay);
    put_u32(&w, (uint32_t)c->opt.sched);
    put_i64(&w, c->opt.warmup); put_i64(&w, c->opt.total_steps);
    put_f32(&w, c->opt.min_frac);
    put_i64(&w, c->opt.step_every); put_f32(&w, c->opt.step_gamma);
    put_u32(&w, (uint32_t)c->feat_dim);
    put_u32(&w, (uint32_t)c->epochs);
    put_u32(&w, (uint32_t)c->batch);
    put_u32(&w, (uint32_t)c->accum);
    put_u64(&w, c->seed);
    put_f64(&w, c->val_frac);
    put_u64(&w, c->split_seed);
    put_u32(&w, (uint32_t)c->folds);
    put_u32(&w, (uint32_t)c->fold);
    put_u32(&w, (uint32_t)c->feat.char_min);
    put_u32(&w, (uint32_t)c->feat.char_max);
    put_u32(&w, (uint32_t)c->feat.sublinear);
    put_u32(&w, (uint32_t)c->feat.title_weight);
    put_u32(&w, (uint32_t)c->feat.nb_scale);
    put_u32(&w, (uint32_t)ck->epochs_done);
    put_i64(&w, ck->opt_steps);
    put_f64(&w, ck->best_val_loss);
    put_u32(&w, (uint32_t)ck->best_epoch);
    put_u64(&w, (uint64_t)ck->nparams);
    return (size_t)(w - buf);
}

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

/* A u32 field as an int, or -1 when it does not fit (the range checks that
 * follow then refuse it): a huge value cannot wrap into a plausible one. */
static int narrow(uint32_t v) { return v > INT_MAX ? -1 : (int)v; }

/* The reverse of put_front; returns the parameter count. */
static uint64_t get_front(rbuf *r, checkpoint *ck, uint32_t ver)
{
    train_config *c = &ck->cfg;
    c->model.in_dim = narrow(get_u32(r));
    c->model.nhidden = narrow(get_u32(r));
    for (int i = 0; i < MLP_MAX_HIDDEN; i++) c->model.hidden[i] = narrow(get_u32(r));
    c->model.dropout = get_f32(r);
    c->model.label_smoothing = get_f32(r);
    for (int i = 0; i < MLP_CLASSES; i++) c->model.class_weight[i] = get_f32(r);
    c->opt.kind = (opt_kind)narrow(get_u32(r));
    c->opt.lr = get_f32(r); c->opt.beta1 = get_f32(r); c->opt.beta2 = get_f32(r);
    c->opt.eps = get_f32(r); c->opt.weight_decay = get_f32(r);
    c->opt.sched = (sched_kind)narrow(get_u32(r));
    c->opt.warmup = get_i64(r); c->opt.total_steps = get_i64(r);
    c->opt.min_frac = get_f32(r);
    c->opt.step_every = get_i64(r); c->opt.step_gamma = get_f32(r);
    c->feat_dim = narrow(get_u32(r));
    c->epochs = narrow(get_u32(r));
    c->batch = narrow(get_u32(r));
    c->accum = narrow(get_u32(r));
    c->seed = get_u64(r);
    c->val_frac = get_f64(r);
    c->split_seed = get_u64(r);
    c->folds = narrow(get_u32(r));
    c->fold = narrow(get_u32(r));
    c->feat.char_min = narrow(get_u32(r));
    c->feat.char_max = narrow(get_u32(r));
    c->feat.sublinear = narrow(get_u32(r));
    c->feat.title_weight = narrow(get_u32(r));
    c->feat.nb_scale = ver >= 4 ? narrow(get_u32(r)) : 0;
    ck->epochs_done = narrow(get_u32(r));
    ck->opt_steps = get_i64(r);
    ck->best_val_loss = get_f64(r);
    ck->best_epoch = narrow(get_u32(r));
    return get_u64(r);
}

/* Range checks, one field at a time, named as on the command line. */
#define WANT(cond, ...) do { if (!(cond)) { snprintf(err, errlen, __VA_ARGS__); return -1; } } while (0)
#define FINITE_IN(x, lo, hi) (isfinite(x) && (x) >= (lo) && (x) <= (hi))

int ckpt_check_config(const train_config *c, char *err, size_t errlen)
{
    const mlp_config *m = &c->model;
    const opt_config *o = &c->opt;
    WANT(c->feat_dim >= 1 && c->feat_dim <= FEAT_MAX_DIM, "features = %d (want 1..%d)", c->feat_dim, FEAT_MAX_DIM);
    WANT(m->in_dim == c->feat_dim, "model input width %d differs from features = %d", m->in_dim, c->feat_dim);
    WANT(m->nhidden >= 1 && m->nhidden <= MLP_MAX_HIDDEN, "hidden layer count = %d (want 1..%d)", m->nhidden,
         MLP_MAX_HIDDEN);
    for (int i = 0; i < MLP_MAX_HIDDEN; i++) {
        if (i < m->nhidden)
            WANT(m->hidden[i] >= 1 && m->hidden[i] <= CFG_MAX_WIDTH, "hidden width %d = %d (want 1..%d)", i + 1,
                 m->hidden[i], CFG_MAX_WIDTH);
        else
            WANT(m->hidden[i] == 0, "hidden width %d = %d past the %d layers (want 0)", i + 1, m->hidden[i], m->nhidden);
    }
    WANT(m->dropout >= 0.0f && m->dropout < 1.0f, "dropout = %g (want 0 <= P < 1)", m->dropout);
    WANT(m->label_smoothing >= 0.0f && m->label_smoothing < 1.0f, "label smoothing = %g (want 0 <= E < 1)",
         m->label_smoothing);
    for (int i = 0; i < MLP_CLASSES; i++)
        WANT(m->class_weight[i] > 0.0f && FINITE_IN(m->class_weight[i], 0.0f, CFG_MAX_CLASS_WEIGHT),
             "class weight %d = %g (want 0 < W <= %g)", i, m->class_weight[i], CFG_MAX_CLASS_WEIGHT);
    WANT(o->kind == OPT_ADAM || o->kind == OPT_SGD, "optimizer = %d (want 0 adam or 1 sgd)", (int)o->kind);
    WANT(FINITE_IN(o->lr, 0.0f, CFG_MAX_LR), "lr = %g (want 0..%g)", o->lr, CFG_MAX_LR);
    WANT(o->beta1 >= 0.0f && o->beta1 < 1.0f, "momentum (beta1) = %g (want 0 <= M < 1)", o->beta1);
    WANT(o->beta2 >= 0.0f && o->beta2 < 1.0f, "beta2 = %g (want 0 <= B < 1)", o->beta2);
    WANT(o->eps > 0.0f && FINITE_IN(o->eps, 0.0f, 1.0f), "eps = %g (want 0 < EPS <= 1)", o->eps);
    WANT(FINITE_IN(o->weight_decay, 0.0f, 1.0f), "weight decay = %g (want 0..1)", o->weight_decay);
    WANT(o->sched == SCHED_CONST || o->sched == SCHED_COSINE || o->sched == SCHED_STEP,
         "schedule = %d (want 0 const, 1 cosine or 2 step)", (int)o->sched);
    WANT(o->warmup >= 0 && o->warmup <= CFG_MAX_WARMUP, "warmup = %lld (want 0..%d)", (long long)o->warmup,
         CFG_MAX_WARMUP);
    WANT(o->total_steps >= 0 && o->total_steps <= CFG_MAX_STEPS, "total steps = %lld (want 0..2^53)",
         (long long)o->total_steps);
    WANT(FINITE_IN(o->min_frac, 0.0f, 1.0f), "final lr fraction = %g (want 0..1)", o->min_frac);
    WANT(o->step_every >= 0 && o->step_every <= CFG_MAX_STEPS, "step schedule period = %lld (want 0..2^53)",
         (long long)o->step_every);
    WANT(o->step_gamma > 0.0f && FINITE_IN(o->step_gamma, 0.0f, 1.0f), "step schedule factor = %g (want 0 < G <= 1)",
         o->step_gamma);
    WANT(c->epochs >= 1 && c->epochs <= CFG_MAX_EPOCHS, "epochs = %d (want 1..%d)", c->epochs, CFG_MAX_EPOCHS);
    WANT(c->batch >= 1 && c->batch <= CFG_MAX_BATCH, "batch = %d (want 1..%d)", c->batch, CFG_MAX_BATCH);
    WANT(c->accum >= 1 && c->accum <= CFG_MAX_ACCUM, "accum = %d (want 1..%d)", c->accum, CFG_MAX_ACCUM);
    WANT(FINITE_IN(c->val_frac, 0.0, CFG_MAX_VAL_FRAC), "val-frac = %g (want 0..%g)", c->val_frac, CFG_MAX_VAL_FRAC);
    WANT(c->folds == 0 || (c->folds >= 2 && c->folds <= CFG_MAX_FOLDS), "folds = %d (want 0, or 2..%d)", c->folds,
         CFG_MAX_FOLDS);
    WANT(c->folds ? c->fold >= 0 && c->fold < c->folds : c->fold == 0, "fold = %d (want 1..folds, or none)",
         c->fold + 1);
    WANT(feat_opts_valid(&c->feat),
         "feature options (char n-grams %d,%d, sublinear-tf %d, title-weight %d, nb-scale %d) out of range",
         c->feat.char_min, c->feat.char_max, c->feat.sublinear, c->feat.title_weight, c->feat.nb_scale);
    return 0;
}

/* Every value finite (and, for v, never negative): a checkpoint is written
 * only from a run whose loss stayed finite, so anything else is damage. */
static int bad_array(const float *x, size_t n, int nonneg)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || (nonneg && x[i] < 0.0f)) return 1;
    return 0;
}

/* The arrays of c: every value finite, v never negative, idf positive (what
 * the loader checks, and the save directory's writer before it replaces a
 * checkpoint). */
static int check_arrays(const checkpoint *c, char *why, size_t whylen)
{
    const float *a[5] = {c->params, c->m, c->v, c->best, c->idf};
    const size_t n[5] = {c->nparams, c->nparams, c->nparams, c->nparams, (size_t)c->cfg.feat_dim};
    static const char *const names[5] = {"parameters", "optimizer state m", "optimizer state v", "best parameters",
                                         "idf"};
    for (int i = 0; i < 5; i++) {
        if (c->kind == CKPT_MODEL && i >= 1 && i <= 3) continue;
        if (bad_array(a[i], n[i], i == 2)) {
            snprintf(why, whylen, "%s hold %s values", names[i], i == 2 ? "negative or non-finite" : "non-finite");
            return -1;
        }
        if (i == 4)
            for (size_t k = 0; k < n[i]; k++)
                if (!(a[i][k] > 0.0f)) {
                    snprintf(why, whylen, "idf value %zu = %g (want > 0)", k, a[i][k]);
                    return -1;
                }
    }
    return 0;
}

/* ------------------------------------------------------------ writer */

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
    struct stat st;
    if (lstat(path, &st)) return errno == ENOENT ? 0 : -1;
    if (!S_ISREG(st.st_mode)) return -1;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    char magic[8] = {0};
    ssize_t k = read(fd, magic, 8);
    close(fd);
    return k == 8 && !memcmp(magic, CKPT_MAGIC, 8) ? 1 : -1;
}

/* The payload's arrays, in file order. */
static int arrays_of(const checkpoint *c, const void *ptr[5], size_t len[5])
{
    int n = 0;
    ptr[n] = c->params; len[n++] = c->nparams * sizeof(float);
    if (c->kind == CKPT_STATE) {
        ptr[n] = c->m; len[n++] = c->nparams * sizeof(float);
        ptr[n] = c->v; len[n++] = c->nparams * sizeof(float);
        ptr[n] = c->best; len[n++] = c->nparams * sizeof(float);
    }
    ptr[n] = c->idf; len[n++] = (size_t)c->cfg.feat_dim * sizeof(float);
    return n;
}

/* Create a new temporary file beside path: PATH.tmp.PID, or when a file of
 * that name is there already (left by a killed run whose PID this process
 * has now: containers start their processes with the same PIDs), PATH.tmp.
 * PID0, PID1, ... — all digits, the names the next run cleans. The
 * descriptor and *tmp_out (the caller frees it), or -1 with errno. */
static int open_temp(const char *path, char **tmp_out)
{
    size_t n = strlen(path) + 40;
    char *tmp = malloc(n);
    *tmp_out = NULL;
    if (!tmp) { errno = ENOMEM; return -1; }
    int fd = -1;
    for (int k = -1; k < 100 && fd < 0; k++) {
        if (k < 0) snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
        else snprintf(tmp, n, "%s.tmp.%ld%d", path, (long)getpid(), k);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) { const int e = errno; free(tmp); errno = e; return -1; }
    *tmp_out = tmp;
    return fd;
}

/* A checkpoint write in two halves: write_temp puts the complete, synced file
 * under a temporary name beside the target (*tmp, the caller frees it);
 * commit renames it over the target and makes the rename durable. On failure
 * either half removes the temporary file. */
static int write_temp(const char *path, const checkpoint *c, char **tmp_out, char *err, size_t errlen)
{
    *tmp_out = NULL;
    if (ckpt_probe(path) < 0) {
        snprintf(err, errlen, "%s exists and is not a tagtrain checkpoint: refusing to overwrite it", path);
        return -1;
    }

    /* The arrays are written straight from memory (no 64 MiB copy): the
     * checksum is computed over the pieces first, then the file is written. */
    unsigned char front[FRONT_MAX];
    const size_t nfront = put_front(front, c);
    const void *ptr[5];
    size_t len[5];
    const int na = arrays_of(c, ptr, len);
    uint64_t plen = nfront, sum = ck_fnv1a64(front, nfront);
    for (int i = 0; i < na; i++) { sum = ck_fnv1a64_update(sum, ptr[i], len[i]); plen += len[i]; }
    unsigned char hdr[HEADER_BYTES] = {0};
    uint32_t ver = VERSION, kind = (uint32_t)c->kind;
    memcpy(hdr, CKPT_MAGIC, 8);
    memcpy(hdr + 8, &ver, 4);
    memcpy(hdr + 12, &kind, 4);
    memcpy(hdr + 16, &plen, 8);
    memcpy(hdr + 24, &sum, 8);

    /* The temporary file lives beside the target so rename() is atomic. */
    char *tmp;
    int fd = open_temp(path, &tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary file %s.tmp.%ld: %s", path, (long)getpid(), strerror(errno));
        return -1;
    }
    int bad = write_all(fd, hdr, sizeof hdr) || write_all(fd, front, nfront);
    for (int i = 0; i < na && !bad; i++) {
        bad = write_all(fd, ptr[i], len[i]);
        if (i == 0) ck_fault_point("ckpt/write", 0);   /* the test hook (collkit_util.h); only rank 0 saves */
    }
    bad = bad || fsync(fd);
    const int saved = errno;
    if (close(fd) && !bad) bad = 1;
    else errno = saved;
    if (bad) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    *tmp_out = tmp;
    return 0;
}

static int commit(const char *tmp, const char *path, char *err, size_t errlen)
{
    ck_fault_point("ckpt/rename", 0);
    if (rename(tmp, path)) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    /* Make the rename itself durable. */
    char *dir = strdup(path);
    if (!dir) return 0;   /* renamed; only the directory's fsync is skipped */
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    else strcpy(dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { fsync(dfd); close(dfd); }
    free(dir);
    return 0;
}

int ckpt_save(const char *path, const checkpoint *c, char *err, size_t errlen)
{
    char *tmp;
    if (write_temp(path, c, &tmp, err, errlen)) return -1;
    int rc = commit(tmp, path, err, errlen);
    free(tmp);
    return rc;
}

/* ------------------------------------------------------------ reader */

void ckpt_free(checkpoint *c)
{
    free(c->params); free(c->m); free(c->v); free(c->best); free(c->idf);
    c->params = c->m = c->v = c->best = c->idf = NULL;
}

int ckpt_load(const char *path, checkpoint *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return -1; }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "%s: not a regular file (a checkpoint is one)", path);
        return -1;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) { close(fd); snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return -1; }
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
    uint32_t ver, kind;
    uint64_t len, sum;
    memcpy(&ver, hdr + 8, 4);
    memcpy(&kind, hdr + 12, 4);
    memcpy(&len, hdr + 16, 8);
    memcpy(&sum, hdr + 24, 8);
    if (ver < VERSION_OLDEST || ver > VERSION) {
        fclose(f);
        snprintf(err, errlen, "%s: checkpoint format version %u, this build reads versions %u to %u", path, ver,
                 VERSION_OLDEST, VERSION);
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
    if (kind != CKPT_MODEL && kind != CKPT_STATE) {
        free(buf);
        snprintf(err, errlen, "%s: invalid checkpoint: kind = %u (want 1 model or 2 training state)", path, kind);
        return -1;
    }

    /* The checksum says the bytes are what was written; these checks say the
     * writer was sane, so a forged or buggy file cannot make us divide by a
     * zero batch, train with a NaN learning rate, allocate wildly or read past
     * the end. */
    rbuf r = {buf, len, 0, 0};
    c->kind = (ckpt_kind)kind;
    c->checksum = sum;
    uint64_t np = get_front(&r, c, ver);
    char why[256] = "";
    mlp_config *mc = &c->cfg.model;
    if (r.short_read) snprintf(why, sizeof why, "fields cut short");
    else if (ckpt_check_config(&c->cfg, why, sizeof why)) { /* why says which */ }
    else if (c->epochs_done < 0 || c->epochs_done > c->cfg.epochs)
        snprintf(why, sizeof why, "epochs done = %d (want 0..epochs = %d)", c->epochs_done, c->cfg.epochs);
    else if (c->opt_steps < 0 || c->opt_steps > CFG_MAX_STEPS)
        snprintf(why, sizeof why, "optimizer steps = %lld (want 0..2^53)", (long long)c->opt_steps);
    else if (isnan(c->best_val_loss) || c->best_val_loss < 0)
        snprintf(why, sizeof why, "best val loss = %g (want >= 0, or inf)", c->best_val_loss);
    else if (c->best_epoch < 0 || c->best_epoch > c->epochs_done)
        snprintf(why, sizeof why, "best epoch = %d (want 0..epochs done = %d)", c->best_epoch, c->epochs_done);
    if (!why[0]) {
        uint64_t expect = 0;
        int in = mc->in_dim;
        for (int i = 0; i <= mc->nhidden; i++) {
            int out = i == mc->nhidden ? MLP_CLASSES : mc->hidden[i];
            expect += (uint64_t)in * (uint64_t)out + (uint64_t)out;
            in = out;
        }
        uint64_t narr = kind == CKPT_STATE ? 4 : 1;
        if (expect != np)
            snprintf(why, sizeof why, "parameter count %llu does not match the model shape (%llu)",
                     (unsigned long long)np, (unsigned long long)expect);
        else if ((len - r.pos) != (narr * np + (uint64_t)c->cfg.feat_dim) * sizeof(float))
            snprintf(why, sizeof why, "array sizes do not match the payload length");
    }
    if (!why[0]) {
        c->nparams = (size_t)np;
        float **dst[5] = {&c->params, &c->m, &c->v, &c->best, &c->idf};
        size_t n[5] = {c->nparams, c->nparams, c->nparams, c->nparams, (size_t)c->cfg.feat_dim};
        for (int i = 0; i < 5 && !why[0]; i++) {
            if (kind == CKPT_MODEL && i >= 1 && i <= 3) continue;
            *dst[i] = malloc(n[i] * sizeof(float) + 1);
            if (!*dst[i]) { snprintf(why, sizeof why, "out of memory"); break; }
            get(&r, *dst[i], n[i] * sizeof(float));
        }
        if (!why[0]) check_arrays(c, why, sizeof why);
    }
    free(buf);
    if (why[0]) {
        ckpt_free(c);
        snprintf(err, errlen, "%s: invalid checkpoint: %s", path, why);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ the save directory */

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    if (!path[0]) { snprintf(err, errlen, "an empty directory name"); return -1; }
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) { snprintf(err, errlen, "path too long"); return -1; }
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) && errno != EEXIST) {
                snprintf(err, errlen, "cannot create directory %.1000s: %s", buf, strerror(errno));
                return -1;
            }
            struct stat st;
            if (stat(buf, &st) || !S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "%.1000s exists and is not a directory", buf);
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    return 0;
}

/* NAME.ckpt.tmp.DIGITS, where NAME is last or best: a temporary file of ckpt_save. */
static int is_temp_name(const char *n)
{
    const char *rest;
    if (!strncmp(n, "last.ckpt.tmp.", 14) || !strncmp(n, "best.ckpt.tmp.", 14)) rest = n + 14;
    else return 0;
    if (!*rest) return 0;
    for (; *rest; rest++)
        if (*rest < '0' || *rest > '9') return 0;
    return 1;
}

/* Remove what killed writes left: files with a temporary name that hold the
 * start of a checkpoint (or nothing yet). Anything else is left alone. */
static void remove_stale(const ckpt_dir *cd, int *count, double *bytes)
{
    *count = 0;
    *bytes = 0;
    DIR *d = opendir(cd->dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_temp_name(e->d_name)) continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        char head[8];
        ssize_t k = read(fd, head, 8);
        close(fd);
        if (k < 0 || memcmp(head, CKPT_MAGIC, (size_t)k)) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
            (*count)++;
            *bytes += (double)st.st_size;
        }
    }
    closedir(d);
}

/* The run's lock on DIR: a file beside it, PARENT/.NAME.tagtrain-lock,
 * flock'ed. Beside, not DIR itself: a lock on DIR's inode would not survive
 * DIR being removed and made again during the run (rm -rf DIR; mkdir DIR),
 * and a second run would lock the new inode and write into the same place.
 * The lock file's path is checked to still name the locked file after
 * locking (a run that ends does not remove it, but a user may): else the
 * lock is taken again on the file that is there now. The file stays. */
static int lock_dir(ckpt_dir *cd, const char *dir, char *err, size_t errlen)
{
    char real[PATH_MAX], lock[PATH_MAX + 32];
    if (!realpath(dir, real)) { snprintf(err, errlen, "cannot resolve %s: %s", dir, strerror(errno)); return -1; }
    char *slash = strrchr(real, '/');
    const char *name = slash[1] ? slash + 1 : "root";
    if (slash == real) snprintf(lock, sizeof lock, "/.%s.tagtrain-lock", name);
    else snprintf(lock, sizeof lock, "%.*s/.%s.tagtrain-lock", (int)(slash - real), real, name);
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) {
            /* Made by another user: locked all the same (flock needs no write access). */
            fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            /* None, and a parent one may not write (a container's volume
             * mounted at /out, a cluster's /scratch/USER): DIR itself is
             * locked, which holds as long as DIR is not removed and made again. */
            if (fd < 0 && errno == ENOENT) {
                snprintf(lock, sizeof lock, "%s", real);
                fd = open(lock, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            }
        }
        if (fd < 0) {
            snprintf(err, errlen, "cannot create the lock file %s of %s: %s", lock, dir, strerror(errno));
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB)) {
            const int e = errno;
            close(fd);
            if (e == EWOULDBLOCK)
                snprintf(err, errlen, "another tagtrain run is saving into %s (choose another --save DIR)", dir);
            else
                snprintf(err, errlen, "cannot lock %s: %s", lock, strerror(e));
            return -1;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(lock, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            cd->lock_fd = fd;
            return 0;
        }
        close(fd);   /* removed or replaced between open and flock: lock the one there now */
    }
    snprintf(err, errlen, "cannot lock %s: the lock file %s keeps being replaced", dir, lock);
    return -1;
}

void ckpt_dir_close(ckpt_dir *cd)
{
    if (cd->lock_fd >= 0) close(cd->lock_fd);   /* releases the lock */
    free(cd->dir); free(cd->last); free(cd->best);
    memset(cd, 0, sizeof *cd);
    cd->lock_fd = -1;
}

int ckpt_dir_open(ckpt_dir *cd, const char *dir, char *note, size_t notelen, char *err, size_t errlen)
{
    memset(cd, 0, sizeof *cd);
    cd->lock_fd = -1;
    if (notelen) note[0] = '\0';
    size_t n = strlen(dir) + 16;
    cd->dir = strdup(dir);
    cd->last = malloc(n);
    cd->best = malloc(n);
    if (!cd->dir || !cd->last || !cd->best) { snprintf(err, errlen, "out of memory"); goto fail; }
    snprintf(cd->last, n, "%s/last.ckpt", dir);
    snprintf(cd->best, n, "%s/best.ckpt", dir);
    if (mkdir_p(dir, err, errlen)) goto fail;
    /* Prove now that a checkpoint can be created here (a read-only file
     * system, or a directory we may not write, would otherwise be found after
     * the training), before the lock file beside it is made. The probe has a
     * temporary file's name and content, so even a crash right here leaves
     * nothing the next run would not clean. */
    char *probe;
    int fd = open_temp(cd->last, &probe);
    int bad = fd < 0 || write_all(fd, CKPT_MAGIC, 8);
    const int e = errno;
    if (fd >= 0 && close(fd) && !bad) bad = 1;
    else errno = e;
    if (bad) {
        snprintf(err, errlen, "cannot write checkpoints into %s: %s", dir, strerror(errno));
        if (fd >= 0) unlink(probe);
        free(probe);
        goto fail;
    }
    unlink(probe);
    free(probe);
    if (lock_dir(cd, dir, err, errlen)) goto fail;
    /* Under the lock no other run writes here: every temporary file is stale. */
    int nstale;
    double bytes;
    remove_stale(cd, &nstale, &bytes);
    if (nstale && notelen)
        snprintf(note, notelen, "removed %d temporary file%s of interrupted checkpoint writes (%.1f MiB) from %s",
                 nstale, nstale == 1 ? "" : "s", bytes / 1048576.0, dir);
    if (ckpt_probe(cd->last) < 0 || ckpt_probe(cd->best) < 0) {
        snprintf(err, errlen, "%s holds a last.ckpt or best.ckpt that is not a tagtrain checkpoint: refusing to "
                 "overwrite it (choose another --save DIR)", dir);
        goto fail;
    }
    return 0;
fail:
    ckpt_dir_close(cd);
    return -1;
}

/* The model checkpoint of a training state's best epoch (shares its arrays). */
static checkpoint model_of(const checkpoint *st)
{
    checkpoint m = *st;
    m.kind = CKPT_MODEL;
    m.epochs_done = st->best_epoch;
    m.opt_steps = 0;
    m.params = st->best;
    m.m = m.v = m.best = NULL;
    return m;
}

/* One save: both files written under temporary names, then renamed. */
static int save_files(const ckpt_dir *cd, const checkpoint *state, const checkpoint *m, int best_changed, char *err,
                      size_t errlen)
{
    char *tbest = NULL, *tlast = NULL;
    if (best_changed && state->best_epoch > 0 && write_temp(cd->best, m, &tbest, err, errlen)) return -1;
    if (write_temp(cd->last, state, &tlast, err, errlen)) {
        if (tbest) unlink(tbest);
        free(tbest);
        return -1;
    }
    int rc = 0;
    if (tbest) {
        rc = commit(tbest, cd->best, err, errlen);
        free(tbest);
        if (rc) { unlink(tlast); free(tlast); return -1; }
        ck_fault_point("ckpt/between", 0);
    }
    rc = commit(tlast, cd->last, err, errlen);
    free(tlast);
    return rc;
}

int ckpt_dir_save(ckpt_dir *cd, const checkpoint *state, int best_changed, char *err, size_t errlen)
{
    const checkpoint m = model_of(state);
    /* What the loader would refuse is never written over a good checkpoint
     * (the caller's own checks missed a diverged model, say): the directory
     * keeps the last state that can be resumed. */
    char why[256];
    if (ckpt_check_config(&state->cfg, why, sizeof why) || check_arrays(state, why, sizeof why) ||
        (best_changed && state->best_epoch > 0 && check_arrays(&m, why, sizeof why))) {
        snprintf(err, errlen, "not saved into %s: the checkpoint would be invalid (%s); the files there are kept",
                 cd->dir, why);
        return -1;
    }
    /* DIR removed during the run (rm -rf by hand, a cleaner): made again,
     * so the training done is saved rather than lost at the first save;
     * files removed while this save was under way: saved again, a few times. */
    struct stat sb;
    for (int attempt = 0;; attempt++) {
        if (stat(cd->dir, &sb) && errno == ENOENT) {
            if (mkdir_p(cd->dir, err, errlen)) return -1;
            cd->remade++;
        }
        const int rc = save_files(cd, state, &m, best_changed, err, errlen);
        if (rc == 0 || attempt == 3 || errno != ENOENT) return rc;   /* ENOENT: a file or DIR went under us */
    }
}

int ckpt_dir_sync_best(ckpt_dir *cd, const checkpoint *state, char *what, size_t whatlen, char *err, size_t errlen)
{
    if (whatlen) what[0] = '\0';
    if (state->best_epoch <= 0) return 0;   /* no best recorded yet: nothing to hold */
    checkpoint b;
    char why[1024];
    const checkpoint want = model_of(state);
    if (ckpt_probe(cd->best) == 0) snprintf(what, whatlen, "best.ckpt was missing");
    else if (ckpt_load(cd->best, &b, why, sizeof why)) snprintf(what, whatlen, "best.ckpt was unreadable (%s)", why);
    else {
        unsigned char f1[FRONT_MAX], f2[FRONT_MAX];
        size_t n1 = put_front(f1, &b), n2 = put_front(f2, &want);
        int same = b.kind == CKPT_MODEL && n1 == n2 && !memcmp(f1, f2, n1) &&
                   !memcmp(b.params, want.params, want.nparams * sizeof(float)) &&
                   !memcmp(b.idf, want.idf, (size_t)want.cfg.feat_dim * sizeof(float));
        if (!same)
            snprintf(what, whatlen, "best.ckpt held %s (epoch %d) instead of epoch %d's", b.kind == CKPT_MODEL ?
                     "another model" : "a training state", b.epochs_done, want.epochs_done);
        ckpt_free(&b);
        if (same) return 0;
    }
    return ckpt_save(cd->best, &want, err, errlen);
}
