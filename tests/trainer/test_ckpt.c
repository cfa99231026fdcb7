/*
 * test_ckpt — checkpoint files: round trip, atomic replace, and refusal of
 * every kind of damaged or foreign file with a message that says which.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ckpt.h"
#include "check.h"


static char dir[256];

static void path_in(char *out, size_t len, const char *name) { snprintf(out, len, "%s/%s", dir, name); }

static void make(checkpoint *c)
{
    memset(c, 0, sizeof *c);
    c->cfg.feat_dim = c->cfg.model.in_dim = 10;
    c->cfg.model.nhidden = 1;
    c->cfg.model.hidden[0] = 3;
    c->cfg.model.dropout = 0.25f;
    c->cfg.opt.lr = 0.5f;
    c->cfg.seed = 77;
    c->cfg.split_seed = 78;
    c->cfg.feat = (feat_opts){2, 4, 1, 3};
    c->cfg.epochs = 9;
    c->epochs_done = 4;
    c->opt_steps = 123;
    c->best_val_loss = 0.375;
    c->nparams = 10 * 3 + 3 + 3 * 4 + 4;
    c->params = malloc(c->nparams * sizeof(float));
    c->m = malloc(c->nparams * sizeof(float));
    c->v = malloc(c->nparams * sizeof(float));
    c->idf = malloc(10 * sizeof(float));
    for (size_t i = 0; i < c->nparams; i++) { c->params[i] = (float)i * 0.5f; c->m[i] = -(float)i; c->v[i] = (float)i * i; }
    for (int i = 0; i < 10; i++) c->idf[i] = 1.0f + i;
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) ? -1 : (long)st.st_size;
}

static void copy_mutated(const char *src, const char *dst, long flip_at, long keep)
{
    FILE *f = fopen(src, "rb");
    long n = file_size(src);
    unsigned char *b = malloc((size_t)n);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    if (flip_at >= 0 && flip_at < n) b[flip_at] ^= 0x10;
    f = fopen(dst, "wb");
    fwrite(b, 1, (size_t)(keep >= 0 ? keep : n), f);
    fclose(f);
    free(b);
}

static void expect_refused(const char *path, const char *what, const char *needle)
{
    checkpoint c;
    char err[512] = "";
    int rc = ckpt_load(path, &c, err, sizeof err);
    CHECK(rc != 0 && strstr(err, needle), "%s: want an error containing '%s', got rc %d '%s'", what, needle, rc, err);
    if (!rc) ckpt_free(&c);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/collkit_test_ckpt.%ld", (long)getpid());
    mkdir(dir, 0755);
    char p[512], q[512], err[512];
    checkpoint a, b;
    make(&a);
    path_in(p, sizeof p, "a.ckpt");

    CHECK(ckpt_save(p, &a, err, sizeof err) == 0, "save: %s", err);
    CHECK(ckpt_probe(p) == 1, "probe sees a checkpoint");
    CHECK(ckpt_load(p, &b, err, sizeof err) == 0, "load: %s", err);
    CHECK(b.nparams == a.nparams && !memcmp(b.params, a.params, a.nparams * 4) && !memcmp(b.m, a.m, a.nparams * 4) &&
          !memcmp(b.v, a.v, a.nparams * 4) && !memcmp(b.idf, a.idf, 40), "arrays round-trip bit for bit");
    CHECK(b.epochs_done == 4 && b.opt_steps == 123 && b.best_val_loss == 0.375 && b.cfg.seed == 77 &&
          b.cfg.model.hidden[0] == 3 && b.cfg.model.dropout == 0.25f && b.cfg.epochs == 9 &&
          b.cfg.split_seed == 78 && b.cfg.feat.char_min == 2 && b.cfg.feat.char_max == 4 && b.cfg.feat.sublinear == 1 &&
          b.cfg.feat.title_weight == 3, "fields round-trip");
    ckpt_free(&b);

    /* Replacing is atomic and leaves no temporary file behind. */
    a.epochs_done = 5;
    CHECK(ckpt_save(p, &a, err, sizeof err) == 0, "overwrite own checkpoint: %s", err);
    CHECK(ckpt_load(p, &b, err, sizeof err) == 0 && b.epochs_done == 5, "overwrite took effect");
    ckpt_free(&b);
    char tmpname[600];
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", p, (long)getpid());
    CHECK(access(tmpname, F_OK) != 0, "temporary file removed");

    long n = file_size(p);
    path_in(q, sizeof q, "bad.ckpt");
    copy_mutated(p, q, n / 2, -1);
    expect_refused(q, "flipped payload byte", "checksum mismatch");
    copy_mutated(p, q, n - 1, -1);
    expect_refused(q, "flipped last byte", "checksum mismatch");
    copy_mutated(p, q, 20, -1);
    expect_refused(q, "flipped length byte", "header says");
    copy_mutated(p, q, 26, -1);
    expect_refused(q, "flipped checksum byte", "checksum mismatch");
    copy_mutated(p, q, -1, n - 7);
    expect_refused(q, "truncated payload", "truncated");
    copy_mutated(p, q, -1, 20);
    expect_refused(q, "truncated header", "truncated");
    copy_mutated(p, q, -1, 0);
    expect_refused(q, "empty file", "not a tagtrain checkpoint");
    copy_mutated(p, q, 9, -1);
    expect_refused(q, "other version", "version");
    copy_mutated(p, q, 2, -1);
    expect_refused(q, "bad magic", "not a tagtrain checkpoint");
    path_in(q, sizeof q, "missing.ckpt");
    expect_refused(q, "missing file", "cannot open");

    /* A user's file under a checkpoint name is never overwritten. */
    path_in(q, sizeof q, "notes.txt");
    FILE *f = fopen(q, "w");
    fputs("my precious notes\n", f);
    fclose(f);
    expect_refused(q, "foreign file", "not a tagtrain checkpoint");
    CHECK(ckpt_save(q, &a, err, sizeof err) != 0 && strstr(err, "refusing"), "save over a foreign file refused: %s", err);
    CHECK(file_size(q) == 18, "the foreign file is untouched");

    /* Consistent bytes, inconsistent fields: a shape that does not match nparams. */
    a.cfg.model.hidden[0] = 4;
    path_in(q, sizeof q, "shape.ckpt");
    CHECK(ckpt_save(q, &a, err, sizeof err) == 0, "save odd shape");
    expect_refused(q, "shape mismatch", "parameter count");

    free(a.params); free(a.m); free(a.v); free(a.idf);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) printf("note: could not remove %s\n", dir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
