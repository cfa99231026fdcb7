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
 * space. No vocabulary has to be built, stored or agreed on between ranks:
 * the bucket of a word is a pure function of its bytes. Collisions are the
 * price; with dim = 2^14 or more and ~10^4 distinct n-grams they are rare
 * enough not to matter for this task.
 */
#include "features.h"

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

static uint64_t fnv1a(uint64_t h, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
#define FNV_OFFSET 0xcbf29ce484222325ULL

uint32_t feat_bucket(const char *s, size_t len, int dim)
{
    return dim > 0 ? (uint32_t)(fnv1a(FNV_OFFSET, s, len) % (uint64_t)dim) : 0;
}

/* Call fn(bucket) for every unigram and bigram of a cleaned text. The bigram
 * hash continues the first word's state over " " and the second word, which
 * equals FNV-1a of "a b" without building that string. */
#define FOR_EACH_NGRAM(clean, dim, BODY)                                        \
    do {                                                                        \
        const char *p_ = (clean);                                               \
        uint64_t prev_ = 0;                                                     \
        int have_prev_ = 0;                                                     \
        while (*p_) {                                                           \
            while (*p_ == ' ') p_++;                                            \
            const char *t_ = p_;                                                \
            while (*p_ && *p_ != ' ') p_++;                                     \
            size_t n_ = (size_t)(p_ - t_);                                      \
            if (!n_) break;                                                     \
            uint64_t h_ = fnv1a(FNV_OFFSET, t_, n_);                            \
            { uint32_t bucket = (uint32_t)(h_ % (uint64_t)(dim)); BODY }        \
            if (have_prev_) {                                                   \
                uint64_t g_ = fnv1a(fnv1a(prev_, " ", 1), t_, n_);              \
                { uint32_t bucket = (uint32_t)(g_ % (uint64_t)(dim)); BODY }    \
            }                                                                   \
            prev_ = h_;                                                         \
            have_prev_ = 1;                                                     \
        }                                                                       \
    } while (0)

int feat_fit(featurizer *f, int dim, const mwml_data *d, const size_t *rows, size_t nrows)
{
    if (!f) return -1;
    f->dim = 0;
    f->idf = NULL;
    if (dim < 1 || dim > FEAT_MAX_DIM || !d || (nrows && !d->rows)) return -1;
    if (!rows) nrows = d->n;
    for (size_t i = 0; rows && i < nrows; i++)
        if (rows[i] >= d->n) return -1;

    float *idf = malloc((size_t)dim * sizeof *idf);
    uint32_t *df = calloc((size_t)dim, sizeof *df);
    /* last[b] = 1 + the last row that hit bucket b: counts each row once per
     * bucket without sorting its n-grams. */
    size_t *last = calloc((size_t)dim, sizeof *last);
    if (!idf || !df || !last) { free(idf); free(df); free(last); return -1; }

    for (size_t i = 0; i < nrows; i++) {
        const mwml_row *r = &d->rows[rows ? rows[i] : i];
        char *clean = text_clean(r->title, r->description);
        if (!clean) { free(idf); free(df); free(last); return -1; }
        FOR_EACH_NGRAM(clean, dim, {
            if (last[bucket] != i + 1) { last[bucket] = i + 1; df[bucket]++; }
        });
        free(clean);
    }
    for (int b = 0; b < dim; b++)
        idf[b] = (float)(log((1.0 + (double)nrows) / (1.0 + (double)df[b])) + 1.0);
    free(df);
    free(last);
    f->dim = dim;
    f->idf = idf;
    return 0;
}

int feat_load(featurizer *f, int dim, const float *idf)
{
    if (!f) return -1;
    f->dim = 0;
    f->idf = NULL;
    if (dim < 1 || dim > FEAT_MAX_DIM || !idf) return -1;
    f->idf = malloc((size_t)dim * sizeof *f->idf);
    if (!f->idf) return -1;
    memcpy(f->idf, idf, (size_t)dim * sizeof *f->idf);
    f->dim = dim;
    return 0;
}

void feat_transform_clean(const featurizer *f, const char *clean, float *out)
{
    const int dim = f->dim;
    memset(out, 0, (size_t)dim * sizeof *out);
    /* Term counts first, then weight and norm: a float count is exact up to 2^24. */
    FOR_EACH_NGRAM(clean, dim, { out[bucket] += 1.0f; });
    double ss = 0;
    for (int b = 0; b < dim; b++) {
        if (out[b] != 0.0f) {
            out[b] *= f->idf[b];
            ss += (double)out[b] * out[b];
        }
    }
    if (ss > 0) {
        const float inv = (float)(1.0 / sqrt(ss));
        for (int b = 0; b < dim; b++) out[b] *= inv;
    }
}

void feat_transform(const featurizer *f, const char *title, const char *description, float *out)
{
    char *clean = text_clean(title, description);
    if (!clean) {
        memset(out, 0, (size_t)f->dim * sizeof *out);
        return;
    }
    feat_transform_clean(f, clean, out);
    free(clean);
}

int feat_transform_rows(const featurizer *f, const mwml_data *d, const size_t *rows,
                        size_t nrows, float *out)
{
    if (!f || !f->idf || !d || !out) return -1;
    if (!rows) nrows = d->n;
    for (size_t i = 0; rows && i < nrows; i++)
        if (rows[i] >= d->n) return -1;
    for (size_t i = 0; i < nrows; i++) {
        const mwml_row *r = &d->rows[rows ? rows[i] : i];
        char *clean = text_clean(r->title, r->description);
        if (!clean) return -1;
        feat_transform_clean(f, clean, out + i * (size_t)f->dim);
        free(clean);
    }
    return 0;
}

void feat_free(featurizer *f)
{
    if (!f) return;
    free(f->idf);
    f->idf = NULL;
    f->dim = 0;
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
