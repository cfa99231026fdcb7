/*
 * features.c — preprocessing, hashed TF-IDF features and the stratified split.
 *
 * Preprocessing follows Made With ML's clean_text: lower-case, drop English
 * stopwords, turn every character outside [A-Za-z0-9] into a space, collapse
 * spaces. Here it is done as one tokenizer pass (a token is a run of ASCII
 * letters and digits; a token that is a stopword is dropped), which gives the
 * same words as their regex sequence: the contractions in the list ("don't")
 * split at the apostrophe into parts that are all stopwords themselves ("don",
 * "t"). Non-ASCII bytes are separators, as their [^A-Za-z0-9] filter makes them.
 * On dataset.csv this reproduces their cleaned text for 763 of 764 rows (the
 * one left: a stopword glued to Chinese characters, which their Unicode-aware
 * \b does not see as a word of its own).
 *
 * Features: the hashing trick. Every unigram and every bigram of adjacent
 * kept tokens is hashed (FNV-1a, 64 bit) into one of `dim` buckets; a bigram
 * is hashed as the text "a b", which no unigram can equal since tokens hold no
 * space. Optionally the character n-grams of each word (padded " word ") go
 * into the same buckets, hashed after a 0x01 byte. No vocabulary has to be
 * built, stored or agreed on between ranks: the bucket of an n-gram is a pure
 * function of its bytes. Collisions are the price: the training split has
 * ~10^4 distinct word n-grams and several times more character n-grams, so
 * the trainer's default of 2^16 buckets keeps most of them apart.
 *
 * Optionally (feat_opts.nb_scale) every bucket's idf is multiplied by how
 * strongly it points at one class: the largest |log-count ratio| over the
 * classes, the feature scaling of NBSVM (Wang and Manning, "Baselines and
 * Bigrams", ACL 2012), counted on the rows the featurizer is fitted on, and
 * kept in the same vector as the idf, so that transforming a text still
 * needs no label and a checkpoint still carries one [dim] vector.
 */
#include "features.h"
#include "collkit_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NLTK's English stopword list (179 words), in byte order for bsearch. */
static const char *const stopwords[] = {
    "a", "about", "above", "after", "again", "against", "ain", "all", "am", "an", "and",
    "any", "are", "aren", "aren't", "as", "at", "be", "because", "been", "before", "being",
    "below", "between", "both", "but", "by", "can", "couldn", "couldn't", "d", "did",
    "didn", "didn't", "do", "does", "doesn", "doesn't", "doing", "don", "don't", "down",
    "during", "each", "few", "for", "from", "further", "had", "hadn", "hadn't", "has",
    "hasn", "hasn't", "have", "haven", "haven't", "having", "he", "her", "here", "hers",
    "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "isn",
    "isn't", "it", "it's", "its", "itself", "just", "ll", "m", "ma", "me", "mightn",
    "mightn't", "more", "most", "mustn", "mustn't", "my", "myself", "needn", "needn't",
    "no", "nor", "not", "now", "o", "of", "off", "on", "once", "only", "or", "other", "our",
    "ours", "ourselves", "out", "over", "own", "re", "s", "same", "shan", "shan't", "she",
    "she's", "should", "should've", "shouldn", "shouldn't", "so", "some", "such", "t",
    "than", "that", "that'll", "the", "their", "theirs", "them", "themselves", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
    "up", "ve", "very", "was", "wasn", "wasn't", "we", "were", "weren", "weren't", "what",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "won", "won't",
    "wouldn", "wouldn't", "y", "you", "you'd", "you'll", "you're", "you've", "your",
    "yours", "yourself", "yourselves",
};
enum { NSTOP = sizeof stopwords / sizeof stopwords[0] };

int text_is_stopword(const char *word, size_t len)
{
    size_t lo = 0, hi = NSTOP;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *s = stopwords[mid];
        int c = strncmp(word, s, len);
        if (c == 0) c = s[len] == '\0' ? 0 : -1;   /* word is a proper prefix of s */
        if (c == 0) return 1;
        if (c < 0) hi = mid; else lo = mid + 1;
    }
    return 0;
}

static int is_alnum_ascii(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Append the kept tokens of `s` to out (which has room: a cleaned text is
 * never longer than its input). k = bytes written so far. */
static size_t clean_into(const char *s, char *out, size_t k)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        while (*p && !is_alnum_ascii(*p)) p++;
        const unsigned char *t = p;
        while (*p && is_alnum_ascii(*p)) p++;
        size_t n = (size_t)(p - t);
        if (n == 0) continue;
        char *dst = out + k + (k ? 1 : 0);
        for (size_t i = 0; i < n; i++) dst[i] = (char)(t[i] >= 'A' && t[i] <= 'Z' ? t[i] + 32 : t[i]);
        if (text_is_stopword(dst, n)) continue;
        /* Their last step deletes "http\S+": the scheme of a link ("https"). */
        if (n > 4 && memcmp(dst, "http", 4) == 0) continue;
        if (k) out[k++] = ' ';
        k += n;
    }
    return k;
}

char *text_clean(const char *title, const char *description)
{
    if (!title) title = "";
    if (!description) description = "";
    size_t lt = strlen(title), ld = strlen(description);
    char *out = malloc(lt + ld + 2);
    if (!out) return NULL;
    /* Title and description are joined with a space, which is a separator,
     * so cleaning them one after the other gives the same tokens. */
    size_t k = clean_into(title, out, 0);
    k = clean_into(description, out, k);
    out[k] = '\0';
    return out;
}

/* ------------------------------------------------------------ features */

uint32_t feat_bucket(const char *s, size_t len, int dim)
{
    return dim > 0 ? (uint32_t)(ck_fnv1a64(s, len) % (uint64_t)dim) : 0;
}

/* Hash namespace of character n-grams: their FNV-1a state starts from the
 * byte 0x01, which no cleaned word holds, so "cat" the word and "cat" the
 * character 3-gram are different features. */
#define CHAR_NS 0x01

const feat_opts feat_words_only = {0, 0, 0, 1, 0};

/* A growing list of bucket ids (with repeats: one per n-gram occurrence). */
typedef struct { uint32_t *b; size_t n, cap; int oom; } bucket_list;

static void push(bucket_list *l, uint64_t h, int dim)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        uint32_t *b = realloc(l->b, cap * sizeof *b);
        if (!b) { l->oom = 1; return; }
        l->b = b;
        l->cap = cap;
    }
    l->b[l->n++] = (uint32_t)(h % (uint64_t)dim);
}

/* Every n-gram of a cleaned text, `times` times over: word unigrams, bigrams
 * of adjacent words (the hash continues the first word's state over " " and
 * the second word, which equals FNV-1a of "a b" without building it), and,
 * when o->char_min > 0, the character n-grams of each word padded with a
 * space on both sides (" word "; scikit-learn's char_wb analyzer), so that
 * prefixes and suffixes are features of their own. */
static void ngrams(const feat_opts *o, int dim, const char *clean, int times, bucket_list *l)
{
    for (int rep = 0; rep < times; rep++) {
        const char *p = clean;
        uint64_t prev = 0;
        int have_prev = 0;
        while (*p) {
            while (*p == ' ') p++;
            const char *t = p;
            while (*p && *p != ' ') p++;
            size_t n = (size_t)(p - t);
            if (!n) break;
            uint64_t h = ck_fnv1a64(t, n);
            push(l, h, dim);
            if (have_prev) push(l, ck_fnv1a64_update(ck_fnv1a64_update(prev, " ", 1), t, n), dim);
            prev = h;
            have_prev = 1;
            if (o->char_min > 0) {
                char ns = CHAR_NS;
                const uint64_t h0 = ck_fnv1a64(&ns, 1);
                /* padded[i] = ' ' for i = 0 and i = n + 1, else t[i - 1] */
                for (int k = o->char_min; k <= o->char_max; k++) {
                    if ((size_t)k > n + 2) break;
                    for (size_t i = 0; i + (size_t)k <= n + 2; i++) {
                        uint64_t g = h0;
                        for (size_t j = i; j < i + (size_t)k; j++) {
                            char c = (j == 0 || j == n + 1) ? ' ' : t[j - 1];
                            g = ck_fnv1a64_update(g, &c, 1);
                        }
                        push(l, g, dim);
                    }
                }
            }
        }
    }
}

/* The n-grams of one row: the whole cleaned text once, and the cleaned title
 * title_weight - 1 more times (the title says more about the tag per word). */
static int row_ngrams(const feat_opts *o, int dim, const char *title, const char *description,
                      bucket_list *l)
{
    l->n = 0;
    char *clean = text_clean(title, description);
    if (!clean) return -1;
    ngrams(o, dim, clean, 1, l);
    free(clean);
    if (o->title_weight > 1) {
        char *ct = text_clean(title, NULL);
        if (!ct) return -1;
        ngrams(o, dim, ct, o->title_weight - 1, l);
        free(ct);
    }
    return l->oom ? -1 : 0;
}

/* idf[b] *= max over the classes c of |r_c(b)|, the log-count ratio of
 * bucket b for class c against the others (NBSVM's, one-vs-rest):
 *
 *   r_c(b) = ln( p_c(b) / q_c(b) ),
 *   p_c(b) = (df_c(b) + 1) / (SUM_b' df_c(b') + dim)      rows of class c
 *   q_c(b) = (df_o(b) + 1) / (SUM_b' df_o(b') + dim)      rows of the other classes
 *
 * with df counting rows (presence, not occurrences) and add-one smoothing, so
 * a bucket no training row hits gets a finite ratio. Classes without a row in
 * the fitting set are left out of the max: their ratio says nothing. A bucket seen about as
 * often in every class, whatever its idf, ends up weighing little; one seen
 * mostly in one class (or mostly outside it) weighs more: a prior on which
 * inputs matter, in closed form from the training rows, that the MLP's first
 * layer would otherwise have to learn from a few hundred examples. */
static void nb_scale_idf(float *idf, const uint32_t *dfc, const uint32_t *df, const size_t *nrow_c, int dim)
{
    double tot[MWML_NTAGS] = { 0 }, all = 0;
    for (int b = 0; b < dim; b++)
        for (int c = 0; c < MWML_NTAGS; c++) tot[c] += dfc[(size_t)b * MWML_NTAGS + c];
    for (int c = 0; c < MWML_NTAGS; c++) all += tot[c];
    for (int b = 0; b < dim; b++) {
        double mx = 0.0;
        for (int c = 0; c < MWML_NTAGS; c++) {
            if (!nrow_c[c]) continue;
            const double in = dfc[(size_t)b * MWML_NTAGS + c], out = (double)df[b] - in;
            const double r = log(((in + 1.0) / (tot[c] + dim)) / ((out + 1.0) / (all - tot[c] + dim)));
            if (fabs(r) > mx) mx = fabs(r);
        }
        /* Every r_c(b) exactly 0 would zero the bucket; a floor keeps every
         * weight positive, as a saved idf vector must be. */
        if (mx < 1e-6) mx = 1e-6;
        idf[b] = (float)(idf[b] * mx);
    }
}

int feat_opts_valid(const feat_opts *o)
{
    if (!o) return 0;
    if (o->char_min == 0 && o->char_max != 0) return 0;
    if (o->char_min < 0 || o->char_max > FEAT_MAX_CHAR_N || o->char_min > o->char_max) return 0;
    if (o->sublinear != 0 && o->sublinear != 1) return 0;
    if (o->nb_scale != 0 && o->nb_scale != 1) return 0;
    return o->title_weight >= 1 && o->title_weight <= FEAT_MAX_TITLE_WEIGHT;
}

int feat_fit_opts(featurizer *f, int dim, const feat_opts *o, const mwml_data *d, const size_t *rows, size_t nrows)
{
    if (!f) return -1;
    f->dim = 0;
    f->idf = NULL;
    if (dim < 1 || dim > FEAT_MAX_DIM || !feat_opts_valid(o) || !d || (nrows && !d->rows)) return -1;
    if (!rows) nrows = d->n;
    for (size_t i = 0; rows && i < nrows; i++)
        if (rows[i] >= d->n) return -1;
    size_t nrow_c[MWML_NTAGS] = { 0 };
    for (size_t i = 0; o->nb_scale && i < nrows; i++) {
        const int t = d->rows[rows ? rows[i] : i].tag;
        if (t < 0 || t >= MWML_NTAGS) return -1;
        nrow_c[t]++;
    }

    float *idf = malloc((size_t)dim * sizeof *idf);
    uint32_t *df = calloc((size_t)dim, sizeof *df);
    /* dfc[b * C + c]: rows of class c that hit bucket b (only for nb_scale). */
    uint32_t *dfc = o->nb_scale ? calloc((size_t)dim * MWML_NTAGS, sizeof *dfc) : NULL;
    /* last[b] = 1 + the last row that hit bucket b: counts each row once per
     * bucket without sorting its n-grams. */
    size_t *last = calloc((size_t)dim, sizeof *last);
    bucket_list l = {0};
    if (!idf || !df || !last || (o->nb_scale && !dfc)) { free(idf); free(df); free(dfc); free(last); return -1; }

    for (size_t i = 0; i < nrows; i++) {
        const mwml_row *r = &d->rows[rows ? rows[i] : i];
        if (row_ngrams(o, dim, r->title, r->description, &l)) {
            free(idf); free(df); free(dfc); free(last); free(l.b);
            return -1;
        }
        for (size_t k = 0; k < l.n; k++) {
            uint32_t b = l.b[k];
            if (last[b] != i + 1) {
                last[b] = i + 1;
                df[b]++;
                if (dfc) dfc[(size_t)b * MWML_NTAGS + r->tag]++;
            }
        }
    }
    for (int b = 0; b < dim; b++)
        idf[b] = (float)(log((1.0 + (double)nrows) / (1.0 + (double)df[b])) + 1.0);
    if (dfc) nb_scale_idf(idf, dfc, df, nrow_c, dim);
    free(df);
    free(dfc);
    free(last);
    free(l.b);
    f->dim = dim;
    f->idf = idf;
    f->opt = *o;
    return 0;
}

int feat_fit(featurizer *f, int dim, const mwml_data *d, const size_t *rows, size_t nrows)
{
    return feat_fit_opts(f, dim, &feat_words_only, d, rows, nrows);
}

int feat_load_opts(featurizer *f, int dim, const feat_opts *o, const float *idf)
{
    if (!f) return -1;
    f->dim = 0;
    f->idf = NULL;
    if (dim < 1 || dim > FEAT_MAX_DIM || !idf || !feat_opts_valid(o)) return -1;
    f->idf = malloc((size_t)dim * sizeof *f->idf);
    if (!f->idf) return -1;
    memcpy(f->idf, idf, (size_t)dim * sizeof *f->idf);
    f->dim = dim;
    f->opt = *o;
    return 0;
}

int feat_load(featurizer *f, int dim, const float *idf)
{
    return feat_load_opts(f, dim, &feat_words_only, idf);
}

/* Counts -> (sublinear) tf times idf -> unit L2 norm, over the buckets of one
 * row. `w` is a [dim] scratch array that is all zeros on entry and on exit
 * except at the row's buckets, where it is left holding the final weights.
 * Every bucket is weighted once, the first time the list meets it, so the
 * squared norm is summed in first-occurrence order: the dense and the CSR
 * form of a row hold bit-identical values. Returns the number of distinct
 * buckets, which are written to uniq[] (first-occurrence order; room for l->n). */
static size_t weigh_buckets(const featurizer *f, const bucket_list *l, float *w, uint32_t *uniq)
{
    /* Term counts first, then weight and norm: a float count is exact up to 2^24. */
    for (size_t k = 0; k < l->n; k++) w[l->b[k]] += 1.0f;
    double ss = 0;
    size_t nu = 0;
    for (size_t k = 0; k < l->n; k++) {
        /* count > 0 marks "not weighted yet"; the weight is stored negated until the end. */
        uint32_t b = l->b[k];
        if (w[b] <= 0.0f) continue;
        float tf = f->opt.sublinear ? 1.0f + logf(w[b]) : w[b];
        float x = tf * f->idf[b];
        ss += (double)x * x;
        w[b] = -x;
        uniq[nu++] = b;
    }
    const float inv = ss > 0 ? (float)(1.0 / sqrt(ss)) : 0.0f;
    for (size_t k = 0; k < nu; k++) w[uniq[k]] = -w[uniq[k]] * inv;
    return nu;
}

/* The dense form: out[0..dim) zeroed, then the row's weights. */
static void weigh(const featurizer *f, const bucket_list *l, float *out)
{
    memset(out, 0, (size_t)f->dim * sizeof *out);
    uint32_t *uniq = malloc((l->n ? l->n : 1) * sizeof *uniq);
    if (!uniq) return;   /* out of memory: an all-zero row, as for an empty text */
    weigh_buckets(f, l, out, uniq);
    free(uniq);
}

void feat_transform_clean(const featurizer *f, const char *clean, float *out)
{
    bucket_list l = {0};
    ngrams(&f->opt, f->dim, clean, 1, &l);
    if (l.oom) l.n = 0;
    weigh(f, &l, out);
    free(l.b);
}

void feat_transform(const featurizer *f, const char *title, const char *description, float *out)
{
    bucket_list l = {0};
    if (row_ngrams(&f->opt, f->dim, title, description, &l)) l.n = 0;
    weigh(f, &l, out);
    free(l.b);
}

int feat_transform_rows(const featurizer *f, const mwml_data *d, const size_t *rows,
                        size_t nrows, float *out)
{
    if (!f || !f->idf || !d || !out) return -1;
    if (!rows) nrows = d->n;
    for (size_t i = 0; rows && i < nrows; i++)
        if (rows[i] >= d->n) return -1;
    bucket_list l = {0};
    for (size_t i = 0; i < nrows; i++) {
        const mwml_row *r = &d->rows[rows ? rows[i] : i];
        if (row_ngrams(&f->opt, f->dim, r->title, r->description, &l)) { free(l.b); return -1; }
        weigh(f, &l, out + i * (size_t)f->dim);
    }
    free(l.b);
    return 0;
}

void feat_free(featurizer *f)
{
    if (!f) return;
    free(f->idf);
    f->idf = NULL;
    f->dim = 0;
}

/* ------------------------------------------------------------ CSR form */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void feat_csr_free(feat_csr *m)
{
    if (!m) return;
    free(m->ptr);
    free(m->idx);
    free(m->val);
    free(m->y);
    memset(m, 0, sizeof *m);
}

int feat_transform_csr(const featurizer *f, const mwml_data *d, const size_t *rows, size_t nrows, feat_csr *out)
{
    if (!out) return -1;
    memset(out, 0, sizeof *out);
    if (!f || !f->idf || !d || (d->n && !d->rows)) return -1;
    if (!rows) nrows = d->n;
    for (size_t i = 0; rows && i < nrows; i++)
        if (rows[i] >= d->n) return -1;
    out->n = nrows;
    out->dim = f->dim;
    out->ptr = malloc((nrows + 1) * sizeof *out->ptr);
    out->y = malloc((nrows ? nrows : 1) * sizeof *out->y);
    /* One [dim] scratch row for the whole matrix: weigh_buckets leaves it
     * non-zero only at the row's buckets, which are cleared after each row. */
    float *w = calloc((size_t)f->dim, sizeof *w);
    bucket_list l = {0};
    uint32_t *uniq = NULL;
    size_t cap = 0, nnz = 0, ucap = 0;
    int ok = out->ptr && out->y && w;
    if (ok) out->ptr[0] = 0;
    for (size_t i = 0; ok && i < nrows; i++) {
        const mwml_row *r = &d->rows[rows ? rows[i] : i];
        if (row_ngrams(&f->opt, f->dim, r->title, r->description, &l)) { ok = 0; break; }
        if (l.n > ucap) {
            uint32_t *nu = realloc(uniq, l.n * sizeof *nu);
            if (!nu) { ok = 0; break; }
            uniq = nu;
            ucap = l.n;
        }
        size_t nu = weigh_buckets(f, &l, w, uniq);
        if (nnz + nu > cap) {
            size_t ncap = cap ? cap : 4096;
            while (ncap < nnz + nu) ncap *= 2;
            int *ni = realloc(out->idx, ncap * sizeof *ni);
            if (ni) out->idx = ni;
            float *nv = realloc(out->val, ncap * sizeof *nv);
            if (nv) out->val = nv;
            if (!ni || !nv) { ok = 0; break; }
            cap = ncap;
        }
        /* Ascending bucket ids: the order a scan of the dense row would meet them. */
        if (nu > 1) qsort(uniq, nu, sizeof *uniq, cmp_u32);
        for (size_t k = 0; k < nu; k++) {
            out->idx[nnz] = (int)uniq[k];
            out->val[nnz++] = w[uniq[k]];
            w[uniq[k]] = 0.0f;
        }
        out->ptr[i + 1] = nnz;
        out->y[i] = r->tag;
    }
    free(w);
    free(uniq);
    free(l.b);
    if (!ok) { feat_csr_free(out); return -1; }
    return 0;
}

/* -------------------------------------------------------------- split */

/* splitmix64: tiny, seedable with any value, identical everywhere. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int stratified_split(const mwml_data *d, double val_frac, uint64_t seed,
                     size_t **train, size_t *ntrain, size_t **val, size_t *nval)
{
    if (!train || !ntrain || !val || !nval) return -1;
    *train = *val = NULL;
    *ntrain = *nval = 0;
    if (!d || (d->n && !d->rows) || !(val_frac >= 0.0 && val_frac <= 1.0)) return -1;
    const size_t n = d->n;
    size_t count[MWML_NTAGS] = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (d->rows[i].tag < 0 || d->rows[i].tag >= MWML_NTAGS) return -1;
        count[d->rows[i].tag]++;
    }
    /* Rows grouped by class, each group in file order (a counting sort). */
    size_t *by = malloc((n ? n : 1) * sizeof *by);
    size_t *tr = malloc((n ? n : 1) * sizeof *tr);
    size_t *va = malloc((n ? n : 1) * sizeof *va);
    if (!by || !tr || !va) { free(by); free(tr); free(va); return -1; }
    size_t start[MWML_NTAGS], fill[MWML_NTAGS];
    for (int t = 0; t < MWML_NTAGS; t++) {
        start[t] = t ? start[t - 1] + count[t - 1] : 0;
        fill[t] = start[t];
    }
    for (size_t i = 0; i < n; i++) by[fill[d->rows[i].tag]++] = i;

    /* Per class (in tag order, one random stream): Fisher-Yates shuffle, then
     * the first round(val_frac * n_c) go to val. */
    uint64_t rng = seed;
    size_t nt = 0, nv = 0;
    for (int t = 0; t < MWML_NTAGS; t++) {
        size_t *g = by + start[t], m = count[t];
        for (size_t i = m; i > 1; i--) {
            /* The modulo bias (at most i / 2^64) is far below anything measurable. */
            size_t j = (size_t)(splitmix64(&rng) % i);
            size_t tmp = g[i - 1]; g[i - 1] = g[j]; g[j] = tmp;
        }
        size_t k = (size_t)floor(val_frac * (double)m + 0.5);
        if (k > m) k = m;
        for (size_t i = 0; i < k; i++) va[nv++] = g[i];
        for (size_t i = k; i < m; i++) tr[nt++] = g[i];
    }
    free(by);
    qsort(tr, nt, sizeof *tr, cmp_size);
    qsort(va, nv, sizeof *va, cmp_size);
    *train = tr; *ntrain = nt;
    *val = va; *nval = nv;
    return 0;
}

int stratified_kfold(const mwml_data *d, int k, int fold, uint64_t seed,
                     size_t **train, size_t *ntrain, size_t **val, size_t *nval)
{
    if (!train || !ntrain || !val || !nval) return -1;
    *train = *val = NULL;
    *ntrain = *nval = 0;
    if (!d || (d->n && !d->rows) || k < 2 || fold < 0 || fold >= k) return -1;
    const size_t n = d->n;
    size_t count[MWML_NTAGS] = { 0 };
    for (size_t i = 0; i < n; i++) {
        if (d->rows[i].tag < 0 || d->rows[i].tag >= MWML_NTAGS) return -1;
        count[d->rows[i].tag]++;
    }
    size_t *by = malloc((n ? n : 1) * sizeof *by);
    size_t *tr = malloc((n ? n : 1) * sizeof *tr);
    size_t *va = malloc((n ? n : 1) * sizeof *va);
    if (!by || !tr || !va) { free(by); free(tr); free(va); return -1; }
    size_t start[MWML_NTAGS], fill[MWML_NTAGS];
    for (int t = 0; t < MWML_NTAGS; t++) {
        start[t] = t ? start[t - 1] + count[t - 1] : 0;
        fill[t] = start[t];
    }
    for (size_t i = 0; i < n; i++) by[fill[d->rows[i].tag]++] = i;
    /* Per class: the same seeded shuffle as stratified_split, then deal the
     * rows out to the folds like cards. The deal continues from class to
     * class (position j overall goes to fold j mod k), so fold sizes differ
     * by at most one and every class is spread as evenly as it can be. */
    uint64_t rng = seed;
    size_t nt = 0, nv = 0, j = 0;
    for (int t = 0; t < MWML_NTAGS; t++) {
        size_t *g = by + start[t], m = count[t];
        for (size_t i = m; i > 1; i--) {
            size_t s = (size_t)(splitmix64(&rng) % i);
            size_t tmp = g[i - 1]; g[i - 1] = g[s]; g[s] = tmp;
        }
        for (size_t i = 0; i < m; i++, j++) {
            if ((int)(j % (size_t)k) == fold) va[nv++] = g[i];
            else tr[nt++] = g[i];
        }
    }
    free(by);
    qsort(tr, nt, sizeof *tr, cmp_size);
    qsort(va, nv, sizeof *va, cmp_size);
    *train = tr; *ntrain = nt;
    *val = va; *nval = nv;
    return 0;
}
