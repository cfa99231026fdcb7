/*
 * mwml.c — RFC 4180 loader for the Made With ML CSV files, and data lookup.
 *
 * How the loader works, and why this way:
 *   1. Read the whole file (bounded by max_file) into one buffer. The files
 *      are small (142 KB) and even a synthetic million-row file is a few
 *      hundred MB; one read keeps the parser a plain loop over bytes.
 *   2. A first pass refuses NUL bytes and invalid UTF-8, with the line. Doing
 *      this up front means binary garbage gets one clear message instead of
 *      whatever CSV error it happens to trip first.
 *   3. The parser decodes fields in place: an unquoted field is copied as is
 *      and a quoted one loses its quotes and the doubled "" become ", so the
 *      decoded text is never longer than the raw text and the write cursor
 *      never overtakes the read cursor. Each field gets a terminating NUL.
 *   4. The rows and the decoded text are copied into one allocation, so a
 *      mwml_data is freed with one free() and holds no slack.
 *
 * Line numbers are physical lines (1-based, "\r\n" is one line end). An error
 * about a whole record (field count) names the line the record starts on; an
 * error about one field names the line that field starts on; an error about
 * one byte (a stray quote, bad UTF-8) names the line of that byte.
 */
#define _GNU_SOURCE
#include "mwml.h"
#include "collkit_util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const mwml_tags[MWML_NTAGS] = {
    "computer-vision", "mlops", "natural-language-processing", "other"
};

enum { NCOLS = 5 };
static const char *const col_names[NCOLS] = { "id", "created_on", "title", "description", "tag" };
#define HEADER_TEXT "id,created_on,title,description,tag"

int mwml_tag_index(const char *name)
{
    if (!name) return -1;
    for (int t = 0; t < MWML_NTAGS; t++)
        if (strcmp(name, mwml_tags[t]) == 0) return t;
    return -1;
}

void mwml_class_counts(const mwml_data *d, size_t counts[MWML_NTAGS])
{
    for (int t = 0; t < MWML_NTAGS; t++) counts[t] = 0;
    if (!d) return;
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].tag >= 0 && d->rows[i].tag < MWML_NTAGS) counts[d->rows[i].tag]++;
}

void mwml_free(mwml_data *d)
{
    if (!d) return;
    free(d->rows);
    d->rows = NULL;
    d->n = 0;
}

/* "path:line: message" (line 0: "path: message"). Always returns -1. */
static int fail(char *err, size_t errlen, const char *path, size_t line, const char *fmt, ...)
{
    if (!err || errlen == 0) return -1;
    int k = line ? snprintf(err, errlen, "%s:%zu: ", path, line)
                 : snprintf(err, errlen, "%s: ", path);
    if (k < 0 || (size_t)k >= errlen) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static void human_size(size_t bytes, char *out, size_t len)
{
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0)
        snprintf(out, len, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(out, len, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(out, len, "%zu KiB", bytes >> 10);
    else
        snprintf(out, len, "%zu bytes", bytes);
}

/* ------------------------------------------------------------- reading */

/* Whole file into a malloc'd buffer with one spare byte (the parser may write
 * a NUL just past the last field). Refuses files over max_file without ever
 * holding more than max_file + one chunk in memory, which also covers pipes
 * and /dev files whose size stat cannot tell. */
static int read_all(const char *path, size_t max_file, char **buf_out, size_t *len_out,
                    char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, path, 0, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return fail(err, errlen, path, 0, "is a directory, not a CSV file");
    }
    char lim[32];
    human_size(max_file, lim, sizeof lim);
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)max_file) {
        fclose(f);
        return fail(err, errlen, path, 0, "file is %lld bytes, over the %s limit",
                    (long long)st.st_size, lim);
    }
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, len = 0;
    if (cap < 4096) cap = 4096;
    char *buf = malloc(cap);
    if (!buf) { fclose(f); return fail(err, errlen, path, 0, "out of memory reading the file"); }
    for (;;) {
        if (cap - len < 2) {
            /* Grow, but never past max_file + 2: reading max_file + 1 bytes is
             * enough to know the file is too big. */
            size_t ncap = cap <= (max_file + 2) / 2 ? cap * 2 : max_file + 2;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                return ncap > cap ? fail(err, errlen, path, 0, "out of memory reading the file")
                                  : fail(err, errlen, path, 0, "file is over the %s limit", lim);
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (len > max_file) {
            free(buf);
            fclose(f);
            return fail(err, errlen, path, 0, "file is over the %s limit", lim);
        }
        if (got == 0) break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(buf);
        return fail(err, errlen, path, 0, "read error");
    }
    *buf_out = buf;
    *len_out = len;
    return 0;
}

/* The length of the valid UTF-8 character at s[i] (1 for ASCII), or 0 for a
 * NUL byte or an invalid sequence (overlong forms, surrogates and code points
 * above U+10FFFF are invalid too, as in RFC 3629). */
static size_t utf8_char(const unsigned char *s, size_t len, size_t i)
{
    unsigned c = s[i];
    if (c == 0) return 0;
    if (c < 0x80) return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;   /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;    /* overlong */
        if (c == 0xED) hi = 0x9F;    /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;    /* overlong */
        if (c == 0xF4) hi = 0x8F;    /* above U+10FFFF */
    } else n = 0;
    int ok = n != 0 && i + n <= len && s[i + 1] >= lo && s[i + 1] <= hi;
    for (size_t k = 2; ok && k < n; k++) ok = s[i + k] >= 0x80 && s[i + k] <= 0xBF;
    return ok ? n : 0;
}

/* First NUL byte or invalid UTF-8 sequence, with its line and column. */
static int check_text(const char *path, const unsigned char *s, size_t len, char *err, size_t errlen)
{
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < len;) {
        const size_t n = utf8_char(s, len, i);
        if (n == 0 && s[i] == 0)
            return fail(err, errlen, path, line,
                        "NUL byte at column %zu: this is binary data, not a CSV text file",
                        i - line_start + 1);
        if (n == 0)
            return fail(err, errlen, path, line,
                        "invalid UTF-8 (byte 0x%02X at column %zu): the file must be UTF-8 text",
                        s[i], i - line_start + 1);
        if (s[i] == '\n') { line++; line_start = i + 1; }
        i += n;
    }
    return 0;
}

int mwml_check_field(const char *s, char *why, size_t whylen)
{
    const unsigned char *u = (const unsigned char *)s;
    const size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        const size_t n = utf8_char(u, len, i);
        if (!n) {
            snprintf(why, whylen, "invalid UTF-8 (byte 0x%02X at byte %zu)", u[i], i + 1);
            return -1;
        }
        i += n;
    }
    return 0;
}

/* -------------------------------------------------------------- parsing */

enum { MAX_KEEP = NCOLS + 1 };   /* fields remembered per record (one extra for messages) */

typedef struct {
    const char *path;
    char *buf;
    size_t len, pos, w, line;
    size_t max_field;
    char *err;
    size_t errlen;
    /* the record just parsed */
    int nf;
    size_t rec_line;
    size_t off[MAX_KEEP], fline[MAX_KEEP];
} parser;

static const char *col_name(int i) { return i < NCOLS ? col_names[i] : "extra"; }

/* Parse one record starting at p->pos. Returns 1 with a record, 0 at end of
 * input, -1 on error. Blank lines before the record are skipped. */
static int parse_record(parser *p)
{
    char *b = p->buf;
    while (p->pos < p->len) {
        if (b[p->pos] == '\n') { p->pos++; p->line++; }
        else if (b[p->pos] == '\r' && p->pos + 1 < p->len && b[p->pos + 1] == '\n') { p->pos += 2; p->line++; }
        else break;
    }
    if (p->pos >= p->len) return 0;

    char lim[32];
    human_size(p->max_field, lim, sizeof lim);
    p->nf = 0;
    p->rec_line = p->line;
    for (;;) {
        const int fi = p->nf;
        const size_t start = p->w, fline = p->line;
        if (p->pos < p->len && b[p->pos] == '"') {
            p->pos++;
            for (;;) {
                if (p->pos >= p->len)
                    return fail(p->err, p->errlen, p->path, fline,
                                "unterminated quoted field %d (%s): the quote opened on this line is never closed",
                                fi + 1, col_name(fi));
                char c = b[p->pos];
                if (c == '"') {
                    if (p->pos + 1 < p->len && b[p->pos + 1] == '"') { b[p->w++] = '"'; p->pos += 2; }
                    else { p->pos++; break; }
                } else {
                    if (c == '\n') p->line++;
                    b[p->w++] = c;
                    p->pos++;
                }
                if (p->w - start > p->max_field)
                    return fail(p->err, p->errlen, p->path, fline,
                                "quoted field %d (%s) is longer than the %s limit "
                                "(a quote that is never closed makes the rest of the file one field)",
                                fi + 1, col_name(fi), lim);
            }
            if (p->pos < p->len && b[p->pos] != ',' && b[p->pos] != '\n' &&
                !(b[p->pos] == '\r' && p->pos + 1 < p->len && b[p->pos + 1] == '\n'))
                return fail(p->err, p->errlen, p->path, p->line,
                            "text after the closing quote of field %d (%s): a quote inside a quoted "
                            "field must be doubled (\"\")", fi + 1, col_name(fi));
        } else {
            while (p->pos < p->len) {
                char c = b[p->pos];
                if (c == ',' || c == '\n') break;
                if (c == '\r') {
                    if (p->pos + 1 < p->len && b[p->pos + 1] == '\n') break;
                    return fail(p->err, p->errlen, p->path, p->line,
                                "bare carriage return in field %d (%s): lines must end in \\n or \\r\\n",
                                fi + 1, col_name(fi));
                }
                if (c == '"')
                    return fail(p->err, p->errlen, p->path, p->line,
                                "stray quote in unquoted field %d (%s): quote the whole field and "
                                "double the quotes inside it", fi + 1, col_name(fi));
                b[p->w++] = c;
                p->pos++;
                if (p->w - start > p->max_field)
                    return fail(p->err, p->errlen, p->path, fline,
                                "field %d (%s) is longer than the %s limit", fi + 1, col_name(fi), lim);
            }
        }
        /* Look at the delimiter before writing the NUL: when nothing has been
         * compacted yet, the write cursor sits on it. */
        const char d = p->pos < p->len ? b[p->pos] : 0;
        b[p->w++] = '\0';
        if (fi < MAX_KEEP) { p->off[fi] = start; p->fline[fi] = fline; }
        if (p->nf < INT_MAX) p->nf++;
        if (d == ',') { p->pos++; continue; }
        if (d == '\n') { p->pos++; p->line++; }
        else if (d == '\r') { p->pos += 2; p->line++; }
        return 1;
    }
}

/* Record fields joined with commas, for the wrong-header message. */
static void join_fields(const parser *p, char *out, size_t len)
{
    size_t k = 0;
    out[0] = '\0';
    int shown = p->nf < MAX_KEEP ? p->nf : MAX_KEEP;
    for (int i = 0; i < shown && k + 1 < len; i++) {
        int m = snprintf(out + k, len - k, "%s%s", i ? "," : "", p->buf + p->off[i]);
        if (m < 0) break;
        k += (size_t)m;
    }
    if (k >= len && len > 4) {
        /* Cut on a UTF-8 character boundary and mark the cut. */
        size_t c = len - 4;
        while (c > 0 && ((unsigned char)out[c] & 0xC0) == 0x80) c--;
        memcpy(out + c, "...", 4);
    }
    for (char *s = out; *s; s++)
        if (*s == '\n' || *s == '\r') *s = ' ';
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

typedef struct { size_t off[4]; int tag; } row_off;

int mwml_load_capped(const char *path, size_t max_field, size_t max_file,
                     mwml_data *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return fail(err, errlen, path ? path : "(null)", 0, "no output given");
    out->rows = NULL;
    out->n = 0;
    if (!path) return fail(err, errlen, "(null)", 0, "no file name given");
    if (!max_field) max_field = MWML_MAX_FIELD;
    if (!max_file) max_file = MWML_MAX_FILE;

    char *buf = NULL;
    size_t len = 0;
    if (read_all(path, max_file, &buf, &len, err, errlen)) return -1;
    if (check_text(path, (unsigned char *)buf, len, err, errlen)) { free(buf); return -1; }

    parser p = { .path = path, .buf = buf, .len = len, .line = 1, .max_field = max_field,
                 .err = err, .errlen = errlen };
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) p.pos = 3;   /* UTF-8 byte-order mark */

    row_off *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = parse_record(&p);
    if (rc < 0) goto bad;
    if (rc == 0) {
        fail(err, errlen, path, 1, "empty file: expected the header " HEADER_TEXT);
        goto bad;
    }
    /* The header. */
    {
        int ok = p.nf == NCOLS;
        for (int i = 0; ok && i < NCOLS; i++) ok = strcmp(buf + p.off[i], col_names[i]) == 0;
        if (!ok) {
            if (p.nf == NCOLS && mwml_tag_index(buf + p.off[NCOLS - 1]) >= 0) {
                fail(err, errlen, path, p.rec_line,
                     "missing header: the first line must be " HEADER_TEXT
                     " (this one looks like a data row)");
            } else {
                char found[160];
                join_fields(&p, found, sizeof found);
                fail(err, errlen, path, p.rec_line, "wrong header: expected \"" HEADER_TEXT
                     "\", found \"%s\"", found);
            }
            goto bad;
        }
    }
    /* The data rows. */
    while ((rc = parse_record(&p)) == 1) {
        if (p.nf != NCOLS) {
            fail(err, errlen, path, p.rec_line,
                 "%s columns: expected %d fields (" HEADER_TEXT "), found %d%s",
                 p.nf < NCOLS ? "missing" : "extra", NCOLS, p.nf,
                 p.nf > NCOLS ? " (a comma in a field that is not quoted?)" : "");
            goto bad;
        }
        if (buf[p.off[0]] == '\0') {
            fail(err, errlen, path, p.fline[0], "empty id");
            goto bad;
        }
        if (is_blank(buf + p.off[2])) {
            fail(err, errlen, path, p.fline[2], "empty title");
            goto bad;
        }
        const char *tag = buf + p.off[4];
        int t = mwml_tag_index(tag);
        if (t < 0) {
            fail(err, errlen, path, p.fline[4],
                 "unknown tag \"%.60s%s\" (expected computer-vision, mlops, natural-language-processing or other)",
                 tag, strlen(tag) > 60 ? "..." : "");
            goto bad;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            row_off *nr = realloc(rows, ncap * sizeof *nr);
            if (!nr) { fail(err, errlen, path, p.rec_line, "out of memory"); goto bad; }
            rows = nr;
            cap = ncap;
        }
        for (int i = 0; i < 4; i++) rows[n].off[i] = p.off[i];
        rows[n].tag = t;
        n++;
    }
    if (rc < 0) goto bad;
    if (n == 0) {
        fail(err, errlen, path, p.line, "no data rows after the header");
        goto bad;
    }

    /* One block: the row array, then the decoded text (p.w bytes). */
    {
        mwml_row *block = malloc(n * sizeof(mwml_row) + p.w);
        if (!block) { fail(err, errlen, path, 0, "out of memory (%zu rows)", n); goto bad; }
        char *text = (char *)(block + n);
        memcpy(text, buf, p.w);
        for (size_t i = 0; i < n; i++) {
            block[i].id = text + rows[i].off[0];
            block[i].created_on = text + rows[i].off[1];
            block[i].title = text + rows[i].off[2];
            block[i].description = text + rows[i].off[3];
            block[i].tag = rows[i].tag;
        }
        out->rows = block;
        out->n = n;
    }
    free(rows);
    free(buf);
    return 0;
bad:
    free(rows);
    free(buf);
    return -1;
}

int mwml_load(const char *path, mwml_data *out, char *err, size_t errlen)
{
    return mwml_load_capped(path, 0, 0, out, err, errlen);
}

/* --------------------------------------------------------------- audit */

/* A row's key (its id, or its title and description) and where it comes from. */
typedef struct { uint64_t h; size_t row; int hold; } audit_key;

static uint64_t fnv_str(uint64_t h, const char *s) { return ck_fnv1a64_update(h, s, strlen(s)); }

static uint64_t key_hash(const mwml_row *r, int text)
{
    uint64_t h = CK_FNV1A64_INIT;
    if (!text) return fnv_str(h, r->id);
    h = fnv_str(h, r->title);
    h = ck_fnv1a64_update(h, "\x1f", 1);   /* a separator no field holds as its end */
    return fnv_str(h, r->description);
}

static int key_equal(const mwml_row *a, const mwml_row *b, int text)
{
    if (!text) return strcmp(a->id, b->id) == 0;
    return strcmp(a->title, b->title) == 0 && strcmp(a->description, b->description) == 0;
}

/* Sort by hash, then train rows before holdout rows, then by row: within a
 * run of equal keys the first train row is the "earlier row". */
static int cmp_key(const void *pa, const void *pb)
{
    const audit_key *a = pa, *b = pb;
    if (a->h != b->h) return a->h < b->h ? -1 : 1;
    if (a->hold != b->hold) return a->hold - b->hold;
    return (a->row > b->row) - (a->row < b->row);
}

static void clip(char *out, size_t len, const char *s)
{
    snprintf(out, len, "%.60s%s", s, strlen(s) > 60 ? "..." : "");
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

int mwml_audit_rows(const mwml_data *train, const mwml_data *hold, mwml_audit *out)
{
    if (!out) return -1;
    memset(out, 0, sizeof *out);
    if (!train) return 0;
    const size_t nh = hold ? hold->n : 0, n = train->n + nh;
    audit_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!k) return -1;
    for (int text = 0; text < 2; text++) {
        for (size_t i = 0; i < train->n; i++) k[i] = (audit_key){key_hash(&train->rows[i], text), i, 0};
        for (size_t i = 0; i < nh; i++) k[train->n + i] = (audit_key){key_hash(&hold->rows[i], text), i, 1};
        qsort(k, n, sizeof *k, cmp_key);
        for (size_t s = 0; s < n;) {
            size_t e = s + 1;
            while (e < n && k[e].h == k[s].h) e++;
            /* Within a run of equal hashes, compare every row with every
             * earlier one (runs are one row long unless keys repeat). */
            for (size_t j = s; j < e; j++) {
                if (k[j].hold) continue;
                const mwml_row *r = &train->rows[k[j].row];
                int dup = 0, leak = 0;
                const mwml_row *first = NULL;
                size_t first_row = 0;
                for (size_t i = s; i < e; i++) {
                    if (i == j) continue;
                    const mwml_row *q = k[i].hold ? &hold->rows[k[i].row] : &train->rows[k[i].row];
                    if (!key_equal(r, q, text)) continue;
                    if (k[i].hold) leak = 1;
                    else if (k[i].row < k[j].row && !first) { first = q; first_row = k[i].row; dup = 1; }
                }
                /* A text repeat under the same id is already counted as a repeated id. */
                if (dup && text && strcmp(first->id, r->id) == 0) dup = 0;
                char a[80], b[80];
                if (dup) {
                    size_t *cnt = text ? &out->dup_text : &out->dup_ids;
                    char *ex = out->example[text ? 1 : 0];
                    if ((*cnt)++ == 0) {
                        clip(a, sizeof a, text ? r->title : r->id);
                        snprintf(ex, sizeof out->example[0], "%s \"%s\" on rows %zu and %zu", text ? "title" : "id", a,
                                 first_row + 1, k[j].row + 1);
                    }
                    if (first->tag != r->tag && out->conflicting++ == 0) {
                        clip(a, sizeof a, text ? r->title : r->id);
                        snprintf(out->example[2], sizeof out->example[2], "%s \"%s\": row %zu says %s, row %zu says %s",
                                 text ? "title" : "id", a, first_row + 1, mwml_tags[first->tag], k[j].row + 1,
                                 mwml_tags[r->tag]);
                    }
                }
                /* A holdout row in the training file is one with the same
                 * title and description: an id alone says nothing (two files
                 * numbered from 1 share ids and no rows). */
                if (leak && text && out->in_holdout++ == 0) {
                    clip(b, sizeof b, r->title);
                    snprintf(out->example[3], sizeof out->example[3], "row %zu (title \"%s\")", k[j].row + 1, b);
                }
            }
            s = e;
        }
    }
    free(k);
    return 0;
}

/* -------------------------------------------------------------- lookup */

/* Append one line to the "places tried" list. */
static void tried(char *list, size_t len, const char *fmt, ...)
{
    size_t k = strlen(list);
    if (k + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(list + k, len - k, fmt, ap);
    va_end(ap);
}

/* 0 when `path` is a readable regular file; otherwise the reason. */
static const char *usable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return strerror(errno);
    if (S_ISDIR(st.st_mode)) return "is a directory (give the CSV file itself)";
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    if (access(path, R_OK) != 0) return strerror(errno);
    return NULL;
}

static int found(const char *path, char *out, size_t len, char *err, size_t errlen)
{
    char real[PATH_MAX];
    const char *use = realpath(path, real) ? real : path;
    if (strlen(use) + 1 > len) return fail(err, errlen, use, 0, "path longer than the buffer given for it");
    memcpy(out, use, strlen(use) + 1);
    return 0;
}

/* The folder the running executable is in (symbolic links resolved), or -1. */
static int exe_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return -1;
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    char real[PATH_MAX];
    if (!realpath(exe[0] ? exe : "/", real) || strlen(real) + 1 > len) return -1;
    memcpy(out, real, strlen(real) + 1);
    return 0;
}

int mwml_find(const char *explicit_path, const char *file, char *path_out, size_t len,
              char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!file || !*file || !path_out || len == 0)
        return fail(err, errlen, "mwml_find", 0, "no file name or output buffer given");
    const char *why;
    if (explicit_path) {
        if ((why = usable(explicit_path)))
            return fail(err, errlen, explicit_path, 0, "%s (given explicitly for %s)", why, file);
        return found(explicit_path, path_out, len, err, errlen);
    }
    char cand[PATH_MAX + 64];
    const char *env = getenv("COLLKIT_DATA");
    if (env && *env) {
        int k = snprintf(cand, sizeof cand, "%s/%s", env, file);
        if (k < 0 || (size_t)k >= sizeof cand)
            return fail(err, errlen, "COLLKIT_DATA", 0, "path too long");
        if ((why = usable(cand)))
            return fail(err, errlen, cand, 0,
                        "%s (COLLKIT_DATA=%s names the data folder; unset it to use the default "
                        "places, or put %s there)", why, env, file);
        return found(cand, path_out, len, err, errlen);
    }

    /* The folders to search: the executable's own and each one above it,
     * nearest first, so that build/bin/tagtrain finds the repository's
     * data, a student kit's bin/tagtrain the kit's, and a program anywhere
     * inside either (build/labs/04-ddp/lab) the same. Nothing of the machine
     * the program was built on is compiled in: a copied build finds its data. */
    static const char *const subdirs[2] = { "datasets/madewithml", "../shared/datasets/madewithml" };
    char list[MWML_ERRLEN];
    list[0] = '\0';
    tried(list, sizeof list, "  $COLLKIT_DATA: not set\n");
    char dir[PATH_MAX];
    if (exe_dir(dir, sizeof dir) != 0) {
        tried(list, sizeof list, "  the program's folder: /proc/self/exe cannot be read\n");
        dir[0] = '\0';
    }
    while (dir[0]) {
        for (int s = 0; s < 2; s++) {
            int k = snprintf(cand, sizeof cand, "%s/%s/%s", strcmp(dir, "/") ? dir : "", subdirs[s], file);
            if (k < 0 || (size_t)k >= sizeof cand) {
                tried(list, sizeof list, "  %s/%s/...: path too long\n", dir, subdirs[s]);
                continue;
            }
            if (!(why = usable(cand))) return found(cand, path_out, len, err, errlen);
            tried(list, sizeof list, "  %s: %s\n", cand, why);
        }
        char *slash = strrchr(dir, '/');
        if (!slash || !strcmp(dir, "/")) break;
        if (slash == dir) slash[1] = '\0';   /* /work -> / */
        else *slash = '\0';
    }
    if (err && errlen)
        snprintf(err, errlen,
                 "cannot find %s. Looked in:\n%s"
                 "To get the data: run datasets/fetch (downloads dataset.csv and holdout.csv from "
                 "Made With ML into the datasets/madewithml/ beside it and checks their sha256), or set "
                 "COLLKIT_DATA to a folder holding both files, or pass the file itself "
                 "(--data / --holdout).", file, list);
    return -1;
}
