/*
 * test_datasets — the CSV loader, data lookup, preprocessing, features, split
 * and the synthetic generator.
 *
 *   test_datasets loader   FIXTURES_DIR     tricky and malformed files
 *   test_datasets real                      dataset.csv / holdout.csv (exit 77 = skip when absent)
 *   test_datasets features                  text_clean, TF-IDF, stratified split
 *   test_datasets synth    TAGSYNTH_BINARY  tagsynth output and its overwrite guard
 *
 * Each mode prints one line per failed check and "N passed, M failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "features.h"
#include "mwml.h"

static int passed, failed;

static void check(int ok, const char *fmt, ...)
{
    if (ok) { passed++; return; }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "FAIL: ");
    vfprintf(stdout, fmt, ap);
    fprintf(stdout, "\n");
    va_end(ap);
}

static int finish(void)
{
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/collkit-datasets-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot create a temporary folder: %s\n", strerror(errno));
        exit(1);
    }
}

static void remove_tmpdir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

static int write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

/* ------------------------------------------------------------ loader */

typedef struct { const char *id, *title, *description; int tag; } want_row;

static void expect_rows(const char *dir, const char *file, const want_row *w, size_t n)
{
    char path[1024], err[MWML_ERRLEN];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    mwml_data d;
    int rc = mwml_load(path, &d, err, sizeof err);
    check(rc == 0, "%s: load failed: %s", file, err);
    if (rc) return;
    check(d.n == n, "%s: %zu rows, want %zu", file, d.n, n);
    for (size_t i = 0; i < n && i < d.n; i++) {
        check(strcmp(d.rows[i].id, w[i].id) == 0, "%s row %zu: id [%s] want [%s]", file, i, d.rows[i].id, w[i].id);
        check(strcmp(d.rows[i].title, w[i].title) == 0, "%s row %zu: title [%s] want [%s]",
              file, i, d.rows[i].title, w[i].title);
        check(strcmp(d.rows[i].description, w[i].description) == 0,
              "%s row %zu: description [%s] want [%s]", file, i, d.rows[i].description, w[i].description);
        check(d.rows[i].tag == w[i].tag, "%s row %zu: tag %d want %d", file, i, d.rows[i].tag, w[i].tag);
    }
    mwml_free(&d);
    check(d.rows == NULL && d.n == 0, "%s: mwml_free leaves an empty mwml_data", file);
}

/* Load must fail with "path:line: ..." (line 0: "path: ...") holding `what`. */
static void expect_error_capped(const char *path, const char *label, size_t line, const char *what,
                                size_t max_field, size_t max_file)
{
    char err[MWML_ERRLEN], prefix[1100];
    mwml_data d = { (mwml_row *)&d, 12345 };   /* must be reset by the loader */
    int rc = mwml_load_capped(path, max_field, max_file, &d, err, sizeof err);
    check(rc != 0, "%s: accepted, want an error \"%s\"", label, what);
    if (!rc) { mwml_free(&d); return; }
    check(d.rows == NULL && d.n == 0, "%s: output not empty after an error", label);
    if (line) snprintf(prefix, sizeof prefix, "%s:%zu: ", path, line);
    else snprintf(prefix, sizeof prefix, "%s: ", path);
    check(strncmp(err, prefix, strlen(prefix)) == 0, "%s: message \"%s\" does not start with \"%s\"",
          label, err, prefix);
    check(strstr(err, what) != NULL, "%s: message \"%s\" does not contain \"%s\"", label, err, what);
}

static void expect_error(const char *dir, const char *file, size_t line, const char *what)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    expect_error_capped(path, file, line, what, 0, 0);
}

static int test_loader(const char *dir)
{
    /* Well-formed files with every quoting rule. */
    static const want_row quoting[] = {
        { "1", "Show, Infer & Tell", "He said \"hi\", then left.", 0 },
        { "2", "Multi line", "first line\nsecond, line\n", 2 },
        { "3", "\"Quoted\" title", "", 1 },
        { "4", "Na\xC3\xAFve Bayes \xE2\x80\x94 caf\xC3\xA9", "Z\xC3\xBCrich \"\xC3\xBC\"", 3 },
        { "5", "T", "\"", 3 },
    };
    expect_rows(dir, "ok_quoting.csv", quoting, 5);
    static const want_row crlf[] = {
        { "10", "CRLF row", "embedded\r\nnewline", 1 },
        { "11", "Last row", "no newline at end", 0 },
    };
    expect_rows(dir, "ok_crlf_bom.csv", crlf, 2);
    static const want_row blank[] = {
        { "20", "A", "desc a", 3 },
        { "21", "B", "desc, b", 3 },
    };
    expect_rows(dir, "ok_blank_lines.csv", blank, 2);
    static const want_row qheader[] = { { "30", "t", "d", 1 } };
    expect_rows(dir, "ok_quoted_header.csv", qheader, 1);

    /* created_on is kept too. */
    {
        char path[1024], err[MWML_ERRLEN];
        mwml_data d;
        snprintf(path, sizeof path, "%s/ok_quoting.csv", dir);
        if (mwml_load(path, &d, err, sizeof err) == 0) {
            check(strcmp(d.rows[0].created_on, "2020-02-20 06:43:18") == 0, "created_on [%s]", d.rows[0].created_on);
            size_t c[MWML_NTAGS];
            mwml_class_counts(&d, c);
            check(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 2, "class counts %zu %zu %zu %zu",
                  c[0], c[1], c[2], c[3]);
            mwml_free(&d);
        }
    }

    /* Malformed files: the message and the line. */
    expect_error(dir, "bad_empty.csv", 1, "empty file: expected the header id,created_on,title,description,tag");
    expect_error(dir, "bad_blank_only.csv", 1, "empty file");
    expect_error(dir, "bad_header_only.csv", 2, "no data rows after the header");
    expect_error(dir, "bad_wrong_header.csv", 1,
                 "wrong header: expected \"id,created_on,title,description,tag\", found \"id,created,title,description,tag\"");
    expect_error(dir, "bad_header_columns.csv", 1, "found \"id,created_on,title,description\"");
    expect_error(dir, "bad_missing_header.csv", 1, "missing header");
    expect_error(dir, "bad_unterminated.csv", 3, "unterminated quoted field 4 (description)");
    expect_error(dir, "bad_missing_column.csv", 5, "missing columns: expected 5 fields");
    expect_error(dir, "bad_missing_column.csv", 5, "found 4");
    expect_error(dir, "bad_extra_column.csv", 3, "extra columns: expected 5 fields");
    expect_error(dir, "bad_extra_column.csv", 3, "found 6");
    expect_error(dir, "bad_unknown_tag.csv", 4, "unknown tag \"robotics\"");
    expect_error(dir, "bad_tag_case.csv", 2, "unknown tag \"MLOps\"");
    expect_error(dir, "bad_blank_field_tag.csv", 2, "unknown tag \"\"");
    expect_error(dir, "bad_stray_quote.csv", 2, "stray quote in unquoted field 3 (title)");
    expect_error(dir, "bad_after_quote.csv", 2, "text after the closing quote of field 3 (title)");
    expect_error(dir, "bad_empty_title.csv", 3, "empty title");
    expect_error(dir, "bad_empty_id.csv", 2, "empty id");
    expect_error(dir, "bad_bare_cr.csv", 2, "bare carriage return in field 5 (tag)");
    expect_error(dir, "bad_nul.csv", 2, "NUL byte at column 26");
    expect_error(dir, "bad_utf8.csv", 3, "invalid UTF-8 (byte 0xE9 at column 26)");
    expect_error(dir, "bad_binary.bin", 1, "invalid UTF-8 (byte 0x89 at column 1)");
    expect_error(dir, "no_such_file.csv", 0, "cannot open: No such file or directory");
    expect_error_capped(dir, "a directory", 0, "is a directory", 0, 0);

    /* Huge inputs: memory stays bounded and the message names the limit. */
    make_tmpdir();
    {
        const char *head = "id,created_on,title,description,tag\n1,2020-01-01 00:00:00,t,";
        size_t hl = strlen(head), big = MWML_MAX_FIELD + 1;
        char *buf = malloc(hl + big + 32);
        memcpy(buf, head, hl);
        memset(buf + hl, 'x', big);
        size_t n = hl + big;
        n += (size_t)sprintf(buf + n, ",mlops\n");
        char path[512];
        snprintf(path, sizeof path, "%s/huge_field.csv", tmpdir);
        check(write_file(path, buf, n) == 0, "write %s", path);
        expect_error_capped(path, "huge_field.csv", 2, "field 4 (description) is longer than the 1 MiB limit", 0, 0);
        /* Exactly at the limit is fine. */
        n = hl + MWML_MAX_FIELD;
        memset(buf + hl, 'y', MWML_MAX_FIELD);
        n += (size_t)sprintf(buf + n, ",mlops\n");
        check(write_file(path, buf, n) == 0, "write %s", path);
        char err[MWML_ERRLEN];
        mwml_data d;
        int rc = mwml_load(path, &d, err, sizeof err);
        check(rc == 0 && d.n == 1 && strlen(d.rows[0].description) == MWML_MAX_FIELD,
              "a field of exactly 1 MiB loads (%s)", rc ? err : "ok");
        if (rc == 0) mwml_free(&d);
        free(buf);

        /* An unclosed quote swallowing the rest of the file hits the field cap. */
        snprintf(path, sizeof path, "%s/runaway_quote.csv", tmpdir);
        FILE *f = fopen(path, "wb");
        fprintf(f, "id,created_on,title,description,tag\n1,2020-01-01 00:00:00,t,d,mlops\n");
        fprintf(f, "2,2020-01-01 00:00:00,t,\"never closed\n");
        for (int i = 0; i < 200; i++) fprintf(f, "%d,2020-01-01 00:00:00,t,d,other\n", i + 3);
        fclose(f);
        expect_error_capped(path, "runaway_quote.csv", 3,
                            "quoted field 4 (description) is longer than the 1000 bytes limit "
                            "(a quote that is never closed", 1000, 0);
        /* File cap, on a regular file and on an endless character device. */
        char ok[1024];
        snprintf(ok, sizeof ok, "%s/ok_quoting.csv", dir);
        expect_error_capped(ok, "file cap", 0, "over the 64 bytes limit", 0, 64);
        expect_error_capped("/dev/zero", "/dev/zero", 0, "over the 4 KiB limit", 0, 4096);
    }

    /* Tag names. */
    check(mwml_tag_index("computer-vision") == 0 && mwml_tag_index("mlops") == 1 &&
          mwml_tag_index("natural-language-processing") == 2 && mwml_tag_index("other") == 3,
          "tag indices follow mwml_tags");
    check(mwml_tag_index("Other") == -1 && mwml_tag_index("") == -1 && mwml_tag_index(NULL) == -1,
          "unknown tags give -1");
    for (int t = 1; t < MWML_NTAGS; t++)
        check(strcmp(mwml_tags[t - 1], mwml_tags[t]) < 0, "mwml_tags is alphabetical");

    /* Lookup: explicit paths and COLLKIT_DATA are used as given or refused. */
    {
        char out[1024], err[MWML_ERRLEN], path[1024];
        snprintf(path, sizeof path, "%s/ok_quoting.csv", dir);
        check(mwml_find(path, "dataset.csv", out, sizeof out, err, sizeof err) == 0, "explicit path found: %s", err);
        check(strstr(out, "ok_quoting.csv") != NULL, "explicit path returned: %s", out);
        snprintf(path, sizeof path, "%s/missing.csv", dir);
        check(mwml_find(path, "dataset.csv", out, sizeof out, err, sizeof err) != 0 &&
              strstr(err, "missing.csv") && strstr(err, "No such file"), "missing explicit path refused: %s", err);
        check(mwml_find(dir, "dataset.csv", out, sizeof out, err, sizeof err) != 0 &&
              strstr(err, "is a directory"), "a directory as explicit path refused: %s", err);

        char dpath[512];
        snprintf(dpath, sizeof dpath, "%s/holdout.csv", tmpdir);
        check(write_file(dpath, "x", 1) == 0, "write %s", dpath);
        setenv("COLLKIT_DATA", tmpdir, 1);
        check(mwml_find(NULL, "holdout.csv", out, sizeof out, err, sizeof err) == 0 &&
              strstr(out, "collkit-datasets-") && strstr(out, "/holdout.csv"), "COLLKIT_DATA used: %s %s", out, err);
        check(mwml_find(NULL, "dataset.csv", out, sizeof out, err, sizeof err) != 0 &&
              strstr(err, "COLLKIT_DATA=") && strstr(err, "dataset.csv"),
              "COLLKIT_DATA without the file is an error, not a fall-back: %s", err);
        unsetenv("COLLKIT_DATA");
        check(mwml_find(NULL, "nonexistent.csv", out, sizeof out, err, sizeof err) != 0 &&
              strstr(err, "cannot find nonexistent.csv") && strstr(err, "datasets/madewithml/nonexistent.csv") &&
              strstr(err, "../shared/datasets/madewithml/nonexistent.csv") && strstr(err, "datasets/fetch"),
              "not found: the message lists the places and datasets/fetch: %s", err);
        check(mwml_find(NULL, "dataset.csv", out, 4, err, sizeof err) != 0, "a short output buffer is an error: %s", err);
    }
    remove_tmpdir();
    return finish();
}

/* --------------------------------------------------------- real data */

static int test_real(void)
{
    unsetenv("COLLKIT_DATA");
    static const char *const files[2] = { "dataset.csv", "holdout.csv" };
    static const size_t rows[2] = { 764, 191 };
    static const size_t counts[2][MWML_NTAGS] = { { 285, 63, 310, 106 }, { 71, 16, 78, 26 } };
    for (int k = 0; k < 2; k++) {
        char path[1024], err[MWML_ERRLEN];
        if (mwml_find(NULL, files[k], path, sizeof path, err, sizeof err) != 0) {
            printf("SKIP: %s\n", err);
            return 77;
        }
        printf("%s: %s\n", files[k], path);
        mwml_data d;
        int rc = mwml_load(path, &d, err, sizeof err);
        check(rc == 0, "load %s: %s", path, err);
        if (rc) continue;
        check(d.n == rows[k], "%s: %zu rows, want %zu", files[k], d.n, rows[k]);
        size_t c[MWML_NTAGS];
        mwml_class_counts(&d, c);
        for (int t = 0; t < MWML_NTAGS; t++)
            check(c[t] == counts[k][t], "%s: %zu %s rows, want %zu", files[k], c[t], mwml_tags[t], counts[k][t]);
        if (k == 0) {
            /* The first rows, as in the file: a quoted title with a comma and
             * a description ending in an embedded newline. */
            check(strcmp(d.rows[0].id, "6") == 0 &&
                  strcmp(d.rows[0].title, "Comparison between YOLO and RCNN on real world videos") == 0,
                  "first row: [%s] [%s]", d.rows[0].id, d.rows[0].title);
            check(strcmp(d.rows[1].title, "Show, Infer & Tell: Contextual Inference for Creative Captioning") == 0,
                  "second row title: [%s]", d.rows[1].title);
            size_t l = strlen(d.rows[1].description);
            check(l > 0 && d.rows[1].description[l - 1] == '\n', "second row description ends in a newline");
            /* Non-ASCII rows are kept as UTF-8 (SOURCE.md: 66 training rows). */
            size_t nonascii = 0;
            for (size_t i = 0; i < d.n; i++) {
                const mwml_row *r = &d.rows[i];
                const char *f4[4] = { r->id, r->created_on, r->title, r->description };
                int any = 0;
                for (int j = 0; j < 4 && !any; j++)
                    for (const unsigned char *s = (const unsigned char *)f4[j]; *s; s++)
                        if (*s >= 0x80) { any = 1; break; }
                nonascii += (size_t)any;
            }
            check(nonascii == 66, "%zu non-ASCII rows, want 66", nonascii);
        }
        mwml_free(&d);
    }
    /* The real files are clean: no repeated ids or texts, no holdout row in
     * the training file (tagtrain would warn at every run otherwise). */
    mwml_data tr, ho;
    char p1[1024], p2[1024], err[MWML_ERRLEN];
    if (mwml_find(NULL, files[0], p1, sizeof p1, err, sizeof err) == 0 && mwml_load(p1, &tr, err, sizeof err) == 0 &&
        mwml_find(NULL, files[1], p2, sizeof p2, err, sizeof err) == 0 && mwml_load(p2, &ho, err, sizeof err) == 0) {
        mwml_audit a;
        check(mwml_audit_rows(&tr, &ho, &a) == 0 && a.dup_ids == 0 && a.dup_text == 0 && a.conflicting == 0 &&
              a.in_holdout == 0, "audit of the real files: %zu %zu %zu %zu", a.dup_ids, a.dup_text, a.conflicting,
              a.in_holdout);
        /* The holdout audited against itself: every row is "in the holdout". */
        check(mwml_audit_rows(&ho, &ho, &a) == 0 && a.in_holdout == ho.n && a.dup_ids == 0,
              "holdout against itself: %zu of %zu rows found", a.in_holdout, ho.n);
        mwml_free(&tr);
        mwml_free(&ho);
    }
    return finish();
}

/* ------------------------------------------------------------ features */

static mwml_row mkrow(const char *title, const char *desc, int tag)
{
    mwml_row r = { (char *)"0", (char *)"", (char *)title, (char *)desc, tag };
    return r;
}

static void expect_clean(const char *title, const char *desc, const char *want)
{
    char *got = text_clean(title, desc);
    check(got && strcmp(got, want) == 0, "text_clean(\"%s\", \"%s\") = \"%s\", want \"%s\"",
          title ? title : "NULL", desc ? desc : "NULL", got ? got : "NULL", want);
    free(got);
}

static void test_text(void)
{
    expect_clean("Show, Infer & Tell: Contextual Inference for Creative Captioning",
                 "The beauty of the work lies in the way it architects the fundamental idea that humans "
                 "look at the overall image and then individual pieces of it.\n",
                 "show infer tell contextual inference creative captioning beauty work lies way architects "
                 "fundamental idea humans look overall image individual pieces");
    /* Contractions: both halves are stopwords. Non-ASCII letters split words
     * ("naïve" -> "na" + "ve", and "ve" is a stopword), as [^A-Za-z0-9] does. */
    expect_clean("Don't PANIC!!", "It's   a C++ lib (v2.0) \xE2\x80\x94 na\xC3\xAFve", "panic c lib v2 0 na");
    expect_clean("", "", "");
    expect_clean(NULL, "The of and", "");
    expect_clean("BERT", NULL, "bert");
    expect_clean("a", "b", "b");
    /* Link schemes go, as Made With ML's "http\S+" rule does; a bare "http" stays. */
    expect_clean("Link", "see https://arxiv.org/abs/1 and http x", "link see arxiv org abs 1 http x");
    expect_clean("GPT-3:", "\"few-shot\"  learners\r\n\ttabs", "gpt 3 shot learners tabs");

    check(text_is_stopword("the", 3) && text_is_stopword("yourselves", 10) && text_is_stopword("a", 1) &&
          text_is_stopword("y", 1) && text_is_stopword("wouldn", 6), "stopwords found");
    check(!text_is_stopword("th", 2) && !text_is_stopword("model", 5) && !text_is_stopword("thee", 4) &&
          !text_is_stopword("", 0) && !text_is_stopword("zzz", 3), "non-stopwords not found");
    check(text_is_stopword("theirs", 6) && !text_is_stopword("their", 4), "length is respected");
}

static double norm2(const float *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)v[i] * v[i];
    return sqrt(s);
}

/* Feature options: character n-grams, sublinear tf, title weight, NB scaling. */
static void test_feature_opts(void)
{
    const int dim = 1 << 20;
    mwml_row rows[1] = { mkrow("ab", "", 0) };
    mwml_data d = { rows, 1 };
    featurizer f;
    float *v = calloc((size_t)dim, sizeof *v);

    /* "ab" with character 2..3-grams of " ab ": " a" "ab" "b " " ab" "ab ", each
     * hashed after the byte 0x01 (their own namespace), plus the word "ab".
     * One document: every idf is 1, so every weight is 1/sqrt(6). */
    feat_opts o = {2, 3, 0, 1, 0};
    check(feat_fit_opts(&f, dim, &o, &d, NULL, 0) == 0, "feat_fit_opts with char n-grams");
    feat_transform(&f, "ab", NULL, v);
    static const char *const grams[] = { "\x01 a", "\x01" "ab", "\x01" "b ", "\x01 ab", "\x01" "ab " };
    int ok = fabs(v[feat_bucket("ab", 2, dim)] - 1 / sqrt(6.0)) < 1e-6;
    for (int i = 0; i < 5; i++) ok &= fabs(v[feat_bucket(grams[i], strlen(grams[i]), dim)] - 1 / sqrt(6.0)) < 1e-6;
    int nnz = 0;
    for (int i = 0; i < dim; i++) nnz += v[i] != 0;
    check(ok && nnz == 6, "char n-grams of \"ab\": %d non-zeros, want 6 of weight 1/sqrt(6)", nnz);
    /* A word shorter than the n-gram (with its padding) gives none of that length. */
    feat_transform(&f, "x", NULL, v);
    nnz = 0;
    for (int i = 0; i < dim; i++) nnz += v[i] != 0;
    check(nnz == 4, "\"x\" with 2..3-grams: word, \" x\", \"x \", \" x \" = 4 non-zeros, got %d", nnz);
    feat_free(&f);

    /* Sublinear tf: "alpha alpha" -> alpha 1 + ln 2, bigram "alpha alpha" 1 (idf 1 each). */
    mwml_row r2[1] = { mkrow("alpha alpha", "", 0) };
    mwml_data d2 = { r2, 1 };
    o = (feat_opts){0, 0, 1, 1, 0};
    check(feat_fit_opts(&f, dim, &o, &d2, NULL, 0) == 0, "feat_fit_opts sublinear");
    feat_transform(&f, "alpha alpha", NULL, v);
    double ta = 1 + log(2.0), nrm = sqrt(ta * ta + 1);
    check(fabs(v[feat_bucket("alpha", 5, dim)] - ta / nrm) < 1e-6 &&
          fabs(v[feat_bucket("alpha alpha", 11, dim)] - 1 / nrm) < 1e-6, "sublinear tf weights %g %g",
          v[feat_bucket("alpha", 5, dim)], v[feat_bucket("alpha alpha", 11, dim)]);
    feat_free(&f);

    /* Title weight 3: title "alpha" counted 3 times, "beta" and "alpha beta" once. */
    o = (feat_opts){0, 0, 0, 3, 0};
    check(feat_fit_opts(&f, dim, &o, &d2, NULL, 0) == 0, "feat_fit_opts title weight");
    feat_transform(&f, "Alpha", "beta", v);
    double ia = 1, ib = log(2.0 / 1.0) + 1;   /* alpha in the one doc; beta and the bigram in none */
    double wa = 3 * ia, n3 = sqrt(wa * wa + 2 * ib * ib);
    check(fabs(v[feat_bucket("alpha", 5, dim)] - wa / n3) < 1e-6 && fabs(v[feat_bucket("beta", 4, dim)] - ib / n3) < 1e-6 &&
          fabs(v[feat_bucket("alpha beta", 10, dim)] - ib / n3) < 1e-6, "title weight 3: %g %g %g",
          v[feat_bucket("alpha", 5, dim)], v[feat_bucket("beta", 4, dim)], v[feat_bucket("alpha beta", 10, dim)]);
    feat_free(&f);
    /* feat_fit is words only, raw counts, title once. */
    check(feat_fit(&f, 16, &d2, NULL, 0) == 0 && f.opt.char_min == 0 && f.opt.sublinear == 0 && f.opt.title_weight == 1,
          "feat_fit uses feat_words_only");
    feat_free(&f);

    /* NB scaling: every bucket's idf times max over the classes with rows of
     * |ln(p_c / q_c)| (features.c). Three rows of class 0 share "cat", and
     * every row has "shared": "cat" points at class 0, "shared" at nothing. */
    {
        mwml_row r6[6] = { mkrow("shared cat a0", "", 0), mkrow("shared cat a1", "", 0), mkrow("shared cat a2", "", 0),
                           mkrow("shared b0", "", 1), mkrow("shared b1", "", 1), mkrow("shared b2", "", 1) };
        mwml_data d6 = { r6, 6 };
        o = (feat_opts){0, 0, 0, 1, 1};
        const int fit = feat_fit_opts(&f, dim, &o, &d6, NULL, 0);
        check(fit == 0, "feat_fit_opts with nb_scale");
        if (fit) { free(v); return; }
        /* Distinct buckets per class: 3 x {shared, cat, aK, "shared cat", "cat aK"} and 3 x {shared, bK, "shared bK"}. */
        const double D = dim, tot0 = 15, tot1 = 9, all = 24;
        /* ln(p_0 / q_0) of a bucket in k0 rows of class 0 and k1 of class 1; class 1's ratio is its negative
         * up to the denominators, so both are computed. */
        #define NB_R(in, out, tin, tout) log((((in) + 1.0) / ((tin) + D)) / (((out) + 1.0) / ((tout) + D)))
        double s_cat = fmax(fabs(NB_R(3, 0, tot0, all - tot0)), fabs(NB_R(0, 3, tot1, all - tot1)));
        double s_shared = fmax(fabs(NB_R(3, 3, tot0, all - tot0)), fabs(NB_R(3, 3, tot1, all - tot1)));
        double idf_cat = log(7.0 / 4.0) + 1, idf_shared = 1.0;
        float got_cat = f.idf[feat_bucket("cat", 3, dim)], got_shared = f.idf[feat_bucket("shared", 6, dim)];
        check(fabs(got_cat - idf_cat * s_cat) < 1e-5 * idf_cat * s_cat &&
              fabs(got_shared - idf_shared * s_shared) < 1e-5 * idf_shared * s_shared + 1e-6,
              "nb-scaled idf: cat %g (want %g), shared %g (want %g)", got_cat, idf_cat * s_cat, got_shared,
              idf_shared * s_shared);
        check(s_cat > 1.3 && got_cat > 100 * got_shared, "a class's word outweighs one in every row: %g vs %g",
              got_cat, got_shared);
        for (int b = 0; b < dim; b++)
            if (!(f.idf[b] > 0.0f)) { check(0, "nb-scaled weight %d = %g, want > 0", b, f.idf[b]); break; }
        /* Classes 2 and 3 have no row: they are left out (else "shared", absent from them, would look telling). */
        feat_free(&f);
        /* Fitting on a subset reads only its rows' tags: rows 0 and 3 alone. */
        const size_t sub[2] = { 0, 3 };
        const double want_sub = (log(3.0 / 2.0) + 1) * fmax(fabs(NB_R(1, 0, 5, 3)), fabs(NB_R(0, 1, 3, 5)));
        const int fit_sub = feat_fit_opts(&f, dim, &o, &d6, sub, 2);
        const double got_sub = fit_sub == 0 ? f.idf[feat_bucket("cat", 3, dim)] : -1.0;
        check(fit_sub == 0 && fabs(got_sub - want_sub) < 1e-5 * want_sub,
              "nb_scale on a subset of rows: cat %g, want %g", got_sub, want_sub);
        feat_free(&f);
        /* Without nb_scale the tags are not read; with it, a bad tag is an error. */
        r6[4].tag = MWML_NTAGS;
        check(feat_fit_opts(&f, dim, &o, &d6, NULL, 0) != 0 && f.idf == NULL, "nb_scale refuses a row with a bad tag");
        o.nb_scale = 0;
        check(feat_fit_opts(&f, dim, &o, &d6, NULL, 0) == 0, "no nb_scale: tags not read");
        feat_free(&f);
        #undef NB_R
    }

    /* Bad options are refused. */
    static const feat_opts bad[] = { {0, 3, 0, 1, 0}, {3, 2, 0, 1, 0}, {1, FEAT_MAX_CHAR_N + 1, 0, 1, 0}, {-1, 2, 0, 1, 0},
                                     {0, 0, 2, 1, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, FEAT_MAX_TITLE_WEIGHT + 1, 0},
                                     {0, 0, 0, 1, 2}, {0, 0, 0, 1, -1} };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        check(!feat_opts_valid(&bad[i]) && feat_fit_opts(&f, 16, &bad[i], &d2, NULL, 0) != 0 && f.idf == NULL,
              "bad options %zu refused", i);
        float idf[16] = {1};
        check(feat_load_opts(&f, 16, &bad[i], idf) != 0, "bad options %zu refused by feat_load_opts", i);
    }
    free(v);
}

static void test_features(void)
{
    /* The hash is part of a checkpoint's meaning: pin it. FNV-1a 64 of "a". */
    check(feat_bucket("a", 1, 1 << 30) == (uint32_t)(0xaf63dc4c8601ec8cULL % (1u << 30)), "FNV-1a of \"a\"");
    check(feat_bucket("", 0, 1000) == (uint32_t)(0xcbf29ce484222325ULL % 1000), "FNV-1a of \"\"");

    /* idf on a tiny corpus: 3 docs, "alpha" in 2, "delta" in 1. */
    mwml_row rows[3] = { mkrow("alpha beta", "", 0), mkrow("Alpha", "gamma", 1), mkrow("delta", NULL, 2) };
    mwml_data d = { rows, 3 };
    const int dim = 1 << 20;
    featurizer f;
    check(feat_fit(&f, dim, &d, NULL, 0) == 0 && f.dim == dim, "feat_fit");
    uint32_t ba = feat_bucket("alpha", 5, dim), bd = feat_bucket("delta", 5, dim),
             bab = feat_bucket("alpha beta", 10, dim), bz = feat_bucket("zeta", 4, dim);
    check(ba != bd && ba != bab && ba != bz && bd != bz && bab != bz, "test buckets distinct");
    check(fabsf(f.idf[ba] - (float)(log(4.0 / 3.0) + 1)) < 1e-6f, "idf(alpha) = %g", f.idf[ba]);
    check(fabsf(f.idf[bd] - (float)(log(4.0 / 2.0) + 1)) < 1e-6f, "idf(delta) = %g", f.idf[bd]);
    check(fabsf(f.idf[bab] - (float)(log(4.0 / 2.0) + 1)) < 1e-6f, "idf(bigram alpha beta) = %g", f.idf[bab]);
    check(fabsf(f.idf[bz] - (float)(log(4.0) + 1)) < 1e-6f, "idf(unseen) = %g", f.idf[bz]);

    float *v = calloc((size_t)dim, sizeof *v), *v2 = calloc((size_t)dim, sizeof *v2);
    /* "alpha alpha delta": alpha counted twice, bigrams alpha-alpha and alpha-delta. */
    feat_transform(&f, "Alpha, alpha", "the delta", v);
    uint32_t baa = feat_bucket("alpha alpha", 11, dim), bad = feat_bucket("alpha delta", 11, dim);
    double wa = 2 * (log(4.0 / 3.0) + 1), wd = log(2.0) + 1, wb = log(4.0) + 1;
    double nrm = sqrt(wa * wa + wd * wd + 2 * wb * wb);
    check(fabs(v[ba] - wa / nrm) < 1e-6 && fabs(v[bd] - wd / nrm) < 1e-6 &&
          fabs(v[baa] - wb / nrm) < 1e-6 && fabs(v[bad] - wb / nrm) < 1e-6,
          "tf-idf weights: %g %g %g %g", v[ba], v[bd], v[baa], v[bad]);
    int nnz = 0;
    for (int i = 0; i < dim; i++) nnz += v[i] != 0;
    check(nnz == 4, "%d non-zeros, want 4", nnz);
    check(fabs(norm2(v, dim) - 1) < 1e-6, "unit norm");
    /* Empty text after cleaning: all zeros (and the callee zeroes the output). */
    for (int i = 0; i < dim; i++) v[i] = 7;
    feat_transform(&f, "The", "of it", v);
    check(norm2(v, dim) == 0, "a text of stopwords only gives zeros");
    feat_free(&f);
    check(f.idf == NULL && f.dim == 0, "feat_free clears");

    /* Bad arguments. */
    size_t bad_row = 3;
    check(feat_fit(&f, 0, &d, NULL, 0) != 0 && f.idf == NULL, "dim 0 refused");
    check(feat_fit(&f, FEAT_MAX_DIM + 1, &d, NULL, 0) != 0, "dim too big refused");
    check(feat_fit(&f, 16, &d, &bad_row, 1) != 0 && f.idf == NULL, "row index out of range refused");
    check(feat_load(&f, 16, NULL) != 0, "feat_load without idf refused");

    /* Determinism and normalisation on a larger corpus. */
    mwml_row many[64];
    char titles[64][64];
    static const char *const w[] = { "graph", "neural", "image", "text", "deploy", "model", "pipeline", "bert" };
    for (int i = 0; i < 64; i++) {
        snprintf(titles[i], sizeof titles[i], "%s %s %s", w[i % 8], w[(i / 8) % 8], w[(i * 5 + 3) % 8]);
        many[i] = mkrow(titles[i], "for the data", i % 4);
    }
    mwml_data dm = { many, 64 };
    size_t sel[32];
    for (int i = 0; i < 32; i++) sel[i] = (size_t)(2 * i);
    featurizer f1, f2, f3;
    check(feat_fit(&f1, 256, &dm, sel, 32) == 0 && feat_fit(&f2, 256, &dm, sel, 32) == 0, "fit twice");
    check(memcmp(f1.idf, f2.idf, 256 * sizeof(float)) == 0, "feat_fit is deterministic");
    check(feat_load(&f3, 256, f1.idf) == 0 && memcmp(f3.idf, f1.idf, 256 * sizeof(float)) == 0 &&
          f3.idf != f1.idf, "feat_load copies the idf");
    float *m = malloc(64 * 256 * sizeof *m);
    check(feat_transform_rows(&f1, &dm, NULL, 64, m) == 0, "feat_transform_rows");
    int ok_norm = 1, ok_same = 1;
    for (int i = 0; i < 64; i++) {
        feat_transform(&f3, many[i].title, many[i].description, v2);
        if (memcmp(v2, m + i * 256, 256 * sizeof(float)) != 0) ok_same = 0;
        if (fabs(norm2(m + i * 256, 256) - 1) > 1e-5) ok_norm = 0;
    }
    check(ok_same, "feat_transform is deterministic and matches feat_transform_rows");
    check(ok_norm, "every row has unit L2 norm");
    check(feat_transform_rows(&f1, &dm, &bad_row, 1, m) == 0, "row 3 of 64 is valid");
    size_t oob = 64;
    check(feat_transform_rows(&f1, &dm, &oob, 1, m) != 0, "feat_transform_rows refuses a bad index");
    free(m);
    feat_free(&f1);
    feat_free(&f2);
    feat_free(&f3);
    free(v);
    free(v2);
}

static void test_split(void)
{
    /* The real class sizes, in memory (this test needs no data files). */
    static const size_t sizes[MWML_NTAGS] = { 285, 63, 310, 106 };
    size_t n = 0;
    for (int t = 0; t < MWML_NTAGS; t++) n += sizes[t];
    mwml_row *rows = malloc(n * sizeof *rows);
    /* Interleave the classes so group order differs from file order. */
    size_t left[MWML_NTAGS];
    memcpy(left, sizes, sizeof left);
    for (size_t i = 0, t = 0; i < n; t = (t + 1) % MWML_NTAGS) {
        if (!left[t]) continue;
        left[t]--;
        rows[i++] = mkrow("t", "d", (int)t);
    }
    mwml_data d = { rows, n };
    const double fracs[] = { 0.2, 0.0, 1.0, 0.5, 0.33 };
    for (size_t k = 0; k < sizeof fracs / sizeof fracs[0]; k++) {
        size_t *tr, *va, ntr, nva;
        int rc = stratified_split(&d, fracs[k], 1234, &tr, &ntr, &va, &nva);
        check(rc == 0, "split %.2f", fracs[k]);
        if (rc) continue;
        check(ntr + nva == n, "split %.2f: %zu + %zu != %zu", fracs[k], ntr, nva, n);
        size_t cv[MWML_NTAGS] = { 0 };
        char *seen = calloc(n, 1);
        int sorted = 1, dup = 0;
        for (size_t i = 0; i < nva; i++) {
            cv[rows[va[i]].tag]++;
            dup |= seen[va[i]]++;
            if (i && va[i] <= va[i - 1]) sorted = 0;
        }
        for (size_t i = 0; i < ntr; i++) {
            dup |= seen[tr[i]]++;
            if (i && tr[i] <= tr[i - 1]) sorted = 0;
        }
        check(!dup, "split %.2f: train and val are disjoint and cover every row once", fracs[k]);
        check(sorted, "split %.2f: index lists ascending", fracs[k]);
        for (int t = 0; t < MWML_NTAGS; t++) {
            double exact = fracs[k] * (double)sizes[t];
            check(fabs((double)cv[t] - exact) <= 1.0, "split %.2f: class %d has %zu val rows, exact %.1f",
                  fracs[k], t, cv[t], exact);
        }
        free(seen);
        /* Same seed: the same split. Another seed: another one. */
        size_t *tr2, *va2, ntr2, nva2;
        stratified_split(&d, fracs[k], 1234, &tr2, &ntr2, &va2, &nva2);
        check(nva2 == nva && memcmp(va2, va, nva * sizeof *va) == 0, "split %.2f deterministic", fracs[k]);
        free(tr2);
        free(va2);
        if (fracs[k] == 0.2) {
            stratified_split(&d, fracs[k], 99, &tr2, &ntr2, &va2, &nva2);
            check(nva2 == nva && memcmp(va2, va, nva * sizeof *va) != 0, "another seed, another split");
            free(tr2);
            free(va2);
        }
        free(tr);
        free(va);
    }
    size_t *tr, *va, ntr, nva;
    check(stratified_split(&d, -0.1, 1, &tr, &ntr, &va, &nva) != 0 && !tr && !va, "val_frac < 0 refused");
    check(stratified_split(&d, 1.5, 1, &tr, &ntr, &va, &nva) != 0, "val_frac > 1 refused");
    check(stratified_split(&d, NAN, 1, &tr, &ntr, &va, &nva) != 0, "val_frac NaN refused");
    mwml_data empty = { NULL, 0 };
    check(stratified_split(&empty, 0.2, 1, &tr, &ntr, &va, &nva) == 0 && ntr == 0 && nva == 0,
          "empty data: empty split");
    free(tr);
    free(va);
    free(rows);
}

/* CSR rows hold exactly the dense rows' non-zeros, bit for bit, in ascending
 * bucket order (with and without character n-grams and sublinear tf). */
static void test_csr(void)
{
    mwml_row many[40];
    char titles[40][64];
    static const char *const w[] = { "graph", "neural", "image", "text", "deploy", "model", "the", "bert" };
    for (int i = 0; i < 40; i++) {
        snprintf(titles[i], sizeof titles[i], "%s %s %s", w[i % 8], w[(i / 8) % 8], w[(i * 5 + 3) % 8]);
        many[i] = mkrow(titles[i], i % 5 ? "for the data, data" : "of the", i % 4);
    }
    mwml_data d = { many, 40 };
    const feat_opts opts[2] = { { 0, 0, 0, 1, 0 }, { 2, 5, 1, 2, 0 } };
    for (int o = 0; o < 2; o++) {
        const int dim = 512;
        featurizer f;
        size_t sel[3] = { 7, 0, 39 };
        check(feat_fit_opts(&f, dim, &opts[o], &d, NULL, 0) == 0, "fit for CSR");
        float *dense = malloc(40 * (size_t)dim * sizeof *dense);
        feat_csr c, c3;
        check(feat_transform_rows(&f, &d, NULL, 40, dense) == 0 && feat_transform_csr(&f, &d, NULL, 0, &c) == 0,
              "dense and CSR transforms");
        int same = c.n == 40 && c.dim == dim && c.ptr[0] == 0, sorted = 1, empty_row = 0;
        for (size_t i = 0; same && i < 40; i++) {
            size_t e = c.ptr[i];
            for (int k = 0; k < dim; k++) {
                float x = dense[i * (size_t)dim + (size_t)k];
                if (x == 0.0f) continue;
                if (e >= c.ptr[i + 1] || c.idx[e] != k || memcmp(&c.val[e], &x, sizeof x)) { same = 0; break; }
                e++;
            }
            same = same && e == c.ptr[i + 1] && c.y[i] == many[i].tag;
            for (size_t k = c.ptr[i] + 1; k < c.ptr[i + 1]; k++) sorted &= c.idx[k] > c.idx[k - 1];
            empty_row |= c.ptr[i] == c.ptr[i + 1];
        }
        check(same, "options %d: CSR rows equal the dense rows bit for bit", o);
        check(sorted, "options %d: CSR bucket ids ascend within each row", o);
        check(!empty_row, "options %d: no empty row", o);
        /* A subset of rows, in the given order. */
        check(feat_transform_csr(&f, &d, sel, 3, &c3) == 0 && c3.n == 3 &&
              c3.ptr[1] - c3.ptr[0] == c.ptr[8] - c.ptr[7] &&
              !memcmp(c3.val, c.val + c.ptr[7], (c.ptr[8] - c.ptr[7]) * sizeof(float)) && c3.y[2] == many[39].tag,
              "options %d: CSR of selected rows", o);
        feat_csr_free(&c3);
        size_t oob = 40;
        check(feat_transform_csr(&f, &d, &oob, 1, &c3) != 0 && c3.ptr == NULL, "CSR refuses a bad row index");
        feat_csr_free(&c);
        check(c.ptr == NULL && c.n == 0, "feat_csr_free clears");
        free(dense);
        feat_free(&f);
    }
    /* A text of stopwords only: an empty CSR row. */
    mwml_row sw[2] = { mkrow("the of", "it", 0), mkrow("alpha", "", 1) };
    mwml_data ds = { sw, 2 };
    featurizer f;
    feat_csr c;
    check(feat_fit(&f, 64, &ds, NULL, 0) == 0 && feat_transform_csr(&f, &ds, NULL, 0, &c) == 0 && c.ptr[1] == 0 &&
          c.ptr[2] == 1 && fabsf(c.val[0] - 1.0f) < 1e-6f, "stopwords-only row is empty, a one-word row has norm 1");
    feat_csr_free(&c);
    feat_free(&f);
}

/* Stratified k-fold: the val folds partition the rows, every class is spread
 * evenly, train is the complement, the seed decides. */
static void test_kfold(void)
{
    static const size_t sizes[MWML_NTAGS] = { 285, 63, 310, 106 };
    size_t n = 0;
    for (int t = 0; t < MWML_NTAGS; t++) n += sizes[t];
    mwml_row *rows = malloc(n * sizeof *rows);
    for (size_t i = 0, t = 0, left[MWML_NTAGS] = { 285, 63, 310, 106 }; i < n; t = (t + 1) % MWML_NTAGS) {
        if (!left[t]) continue;
        left[t]--;
        rows[i++] = mkrow("t", "d", (int)t);
    }
    mwml_data d = { rows, n };
    const int K = 5;
    int *fold_of = malloc(n * sizeof *fold_of);
    for (size_t i = 0; i < n; i++) fold_of[i] = -1;
    int ok = 1;
    size_t minsz = n, maxsz = 0;
    for (int f = 0; f < K; f++) {
        size_t *tr, *va, ntr, nva, cv[MWML_NTAGS] = { 0 };
        if (stratified_kfold(&d, K, f, 42, &tr, &ntr, &va, &nva)) { ok = 0; break; }
        ok &= ntr + nva == n;
        for (size_t i = 0; i < nva; i++) {
            ok &= fold_of[va[i]] == -1 && (!i || va[i] > va[i - 1]);
            fold_of[va[i]] = f;
            cv[rows[va[i]].tag]++;
        }
        for (size_t i = 0; i < ntr; i++) ok &= fold_of[tr[i]] != f && (!i || tr[i] > tr[i - 1]);
        for (int t = 0; t < MWML_NTAGS; t++) ok &= cv[t] == sizes[t] / K || cv[t] == sizes[t] / K + 1;
        minsz = nva < minsz ? nva : minsz;
        maxsz = nva > maxsz ? nva : maxsz;
        free(tr);
        free(va);
    }
    for (size_t i = 0; i < n; i++) ok &= fold_of[i] >= 0;
    check(ok, "5 folds: val sets partition the rows, train is the rest, classes spread evenly");
    check(maxsz - minsz <= 1, "fold sizes %zu..%zu differ by at most one", minsz, maxsz);
    size_t *a, *b, *ta, *tb, na, nb, nta, ntb;
    stratified_kfold(&d, K, 2, 42, &ta, &nta, &a, &na);
    stratified_kfold(&d, K, 2, 42, &tb, &ntb, &b, &nb);
    check(na == nb && !memcmp(a, b, na * sizeof *a), "same seed, same fold");
    free(b); free(tb);
    stratified_kfold(&d, K, 2, 43, &tb, &ntb, &b, &nb);
    check(!(na == nb && !memcmp(a, b, na * sizeof *a)), "another seed, another fold");
    free(a); free(b); free(ta); free(tb);
    check(stratified_kfold(&d, 1, 0, 1, &ta, &nta, &a, &na) != 0 && !a, "k = 1 refused");
    check(stratified_kfold(&d, 5, 5, 1, &ta, &nta, &a, &na) != 0, "fold = k refused");
    check(stratified_kfold(&d, 5, -1, 1, &ta, &nta, &a, &na) != 0, "fold < 0 refused");
    free(fold_of);
    free(rows);
}

/* The audit counts repeated ids, repeated texts, conflicting tags and rows
 * shared with the holdout, each once, with an example. */
static void test_audit(void)
{
    mwml_row tr[6] = {
        { (char *)"1", (char *)"", (char *)"Alpha", (char *)"a", 0 },
        { (char *)"2", (char *)"", (char *)"Beta", (char *)"b", 1 },
        { (char *)"1", (char *)"", (char *)"Alpha", (char *)"a", 0 },    /* same id, same row: a repeat */
        { (char *)"3", (char *)"", (char *)"Beta", (char *)"b", 2 },     /* Beta's text under another id and tag */
        { (char *)"4", (char *)"", (char *)"Held", (char *)"out", 3 },   /* also in the holdout (text) */
        { (char *)"9", (char *)"", (char *)"Gamma", (char *)"g", 3 },    /* id 9 is in the holdout, not its text */
    };
    mwml_row ho[2] = {
        { (char *)"8", (char *)"", (char *)"Held", (char *)"out", 3 },
        { (char *)"9", (char *)"", (char *)"Other", (char *)"x", 1 },
    };
    mwml_data dt = { tr, 6 }, dh = { ho, 2 };
    mwml_audit a;
    check(mwml_audit_rows(&dt, &dh, &a) == 0, "audit runs");
    check(a.dup_ids == 1 && strstr(a.example[0], "rows 1 and 3"), "one repeated id: %zu '%s'", a.dup_ids, a.example[0]);
    check(a.dup_text == 1 && strstr(a.example[1], "rows 2 and 4"), "one repeated text: %zu '%s'", a.dup_text,
          a.example[1]);
    check(a.conflicting == 1 && strstr(a.example[2], "mlops") && strstr(a.example[2], "natural-language-processing"),
          "one conflicting tag: %zu '%s'", a.conflicting, a.example[2]);
    /* A holdout row is its text: an id that is also the holdout's (files
     * numbered from 1 share ids) is not one. */
    check(a.in_holdout == 1 && strstr(a.example[3], "row 5"), "one row in the holdout: %zu '%s'", a.in_holdout,
          a.example[3]);
    check(mwml_audit_rows(&dt, NULL, &a) == 0 && a.in_holdout == 0 && a.dup_ids == 1, "no holdout given");
    mwml_data clean = { tr, 2 };
    check(mwml_audit_rows(&clean, NULL, &a) == 0 && !a.dup_ids && !a.dup_text && !a.conflicting && !a.example[0][0],
          "clean rows: nothing to say");
}

static int test_feature_mode(void)
{
    test_text();
    test_features();
    test_feature_opts();
    test_split();
    test_csr();
    test_kfold();
    test_audit();
    return finish();
}

/* ------------------------------------------------------------- synth */

/* Run argv (NULL-terminated) with stdout/stderr to /dev/null; exit status or -1. */
static int run(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* run() with the file size limited to fsize bytes (ulimit -f): a disk that
 * fills up while the file is written. */
static int run_fsize(char *const argv[], rlim_t fsize)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        struct rlimit rl = {fsize, fsize};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(127);
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static int test_synth(const char *tagsynth)
{
    make_tmpdir();
    char out[512], err[MWML_ERRLEN];
    snprintf(out, sizeof out, "%s/synth.csv", tmpdir);
    char *gen[] = { (char *)tagsynth, "--rows", "3000", "--seed", "7", "--out", out, NULL };
    check(run(gen) == 0, "tagsynth --rows 3000 runs");
    mwml_data d;
    int rc = mwml_load(out, &d, err, sizeof err);
    check(rc == 0, "tagsynth output loads: %s", err);
    if (rc == 0) {
        check(d.n == 3000, "%zu rows, want 3000", d.n);
        size_t c[MWML_NTAGS];
        mwml_class_counts(&d, c);
        for (int t = 0; t < MWML_NTAGS; t++) check(c[t] > 100, "class %s has %zu rows", mwml_tags[t], c[t]);
        /* The quoting paths were exercised. */
        int comma = 0, quote = 0, newline = 0, utf8 = 0;
        for (size_t i = 0; i < d.n; i++) {
            const char *s[2] = { d.rows[i].title, d.rows[i].description };
            for (int j = 0; j < 2; j++) {
                comma |= strchr(s[j], ',') != NULL;
                quote |= strchr(s[j], '"') != NULL;
                newline |= strchr(s[j], '\n') != NULL;
                for (const unsigned char *p = (const unsigned char *)s[j]; *p; p++) utf8 |= *p >= 0x80;
            }
        }
        check(comma && quote && newline && utf8, "fields with commas %d, quotes %d, newlines %d, UTF-8 %d",
              comma, quote, newline, utf8);

        /* Learnable: a nearest-centroid classifier on TF-IDF features, fitted
         * on 2000 rows, tags the other 1000 far above chance (0.41). */
        const int dim = 4096;
        size_t tr[2000], te[1000];
        for (size_t i = 0; i < 2000; i++) tr[i] = i;
        for (size_t i = 0; i < 1000; i++) te[i] = 2000 + i;
        featurizer f;
        feat_fit(&f, dim, &d, tr, 2000);
        float *cent = calloc((size_t)MWML_NTAGS * dim, sizeof *cent), *x = malloc(dim * sizeof *x);
        for (size_t i = 0; i < 2000; i++) {
            feat_transform(&f, d.rows[tr[i]].title, d.rows[tr[i]].description, x);
            for (int j = 0; j < dim; j++) cent[d.rows[tr[i]].tag * dim + j] += x[j];
        }
        size_t correct = 0;
        for (size_t i = 0; i < 1000; i++) {
            feat_transform(&f, d.rows[te[i]].title, d.rows[te[i]].description, x);
            int best = 0;
            double bs = -1e30;
            for (int t = 0; t < MWML_NTAGS; t++) {
                double s = 0, nn = 0;
                for (int j = 0; j < dim; j++) { s += (double)x[j] * cent[t * dim + j]; nn += (double)cent[t * dim + j] * cent[t * dim + j]; }
                s /= sqrt(nn) + 1e-12;
                if (s > bs) { bs = s; best = t; }
            }
            correct += best == d.rows[te[i]].tag;
        }
        check(correct > 800, "nearest-centroid accuracy on synthetic data %zu/1000", correct);
        free(cent);
        free(x);
        feat_free(&f);
        mwml_free(&d);
    }

    /* Same seed, same bytes. */
    char out2[512];
    snprintf(out2, sizeof out2, "%s/synth2.csv", tmpdir);
    char *gen2[] = { (char *)tagsynth, "--rows", "3000", "--seed", "7", "--out", out2, NULL };
    check(run(gen2) == 0, "second run");
    size_t l1 = 0, l2 = 0;
    char *a = slurp(out, &l1), *b = slurp(out2, &l2);
    check(a && b && l1 == l2 && memcmp(a, b, l1) == 0, "same seed gives the same file");
    free(b);

    /* An existing file is never replaced without --overwrite. */
    char *again[] = { (char *)tagsynth, "--rows", "10", "--seed", "8", "--out", out, NULL };
    check(run(again) == 1, "existing file refused");
    b = slurp(out, &l2);
    check(b && l1 == l2 && memcmp(a, b, l1) == 0, "refused run left the file unchanged");
    free(b);
    char *over[] = { (char *)tagsynth, "--rows", "10", "--seed", "8", "--out", out, "--overwrite", NULL };
    check(run(over) == 0, "--overwrite replaces");
    rc = mwml_load(out, &d, err, sizeof err);
    check(rc == 0 && d.n == 10, "replaced file has 10 rows (%s)", rc ? err : "ok");
    if (rc == 0) mwml_free(&d);
    free(a);

    /* Bad arguments: exit 2. No temporary files are left behind. */
    char *bad1[] = { (char *)tagsynth, "--rows", "0", "--out", out2, "--overwrite", NULL };
    char *bad2[] = { (char *)tagsynth, "--rows", "12x", "--out", out2, NULL };
    char *bad3[] = { (char *)tagsynth, "--rows", "5", NULL };
    char *bad4[] = { (char *)tagsynth, "--rows", "-5", "--out", out2, NULL };
    char *bad5[] = { (char *)tagsynth, "--bogus", NULL };
    char *bad6[] = { (char *)tagsynth, "--rows", NULL };
    check(run(bad1) == 2 && run(bad2) == 2 && run(bad3) == 2 && run(bad4) == 2 && run(bad5) == 2 &&
          run(bad6) == 2, "bad arguments exit 2");
    char *dirout[] = { (char *)tagsynth, "--rows", "5", "--out", tmpdir, "--overwrite", NULL };
    check(run(dirout) == 1, "a directory as --out is refused");
    /* The disk full half-way (a file size limit): an error, at once, never a
     * kill by SIGXFSZ that leaves the half-written temporary file. */
    char *full[] = { (char *)tagsynth, "--rows", "1000000000", "--out", out2, "--overwrite", NULL };
    int frc = run_fsize(full, 64 << 10);
    check(frc == 1, "a file size limit ends tagsynth with exit 1 (got %d)", frc);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c tmp > /dev/null", tmpdir);
    check(system(cmd) != 0, "no temporary files left");
    remove_tmpdir();
    return finish();
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "loader")) return test_loader(argv[2]);
    if (argc >= 2 && !strcmp(argv[1], "real")) return test_real();
    if (argc >= 2 && !strcmp(argv[1], "features")) return test_feature_mode();
    if (argc >= 3 && !strcmp(argv[1], "synth")) return test_synth(argv[2]);
    fprintf(stderr, "usage: test_datasets loader FIXTURES | real | features | synth TAGSYNTH\n");
    return 2;
}
