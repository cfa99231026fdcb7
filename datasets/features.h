/*
 * features.h — from a (title, description) pair to a fixed-length vector.
 *
 *   text_clean        Made With ML's preprocessing: lower-case, English
 *                     stopwords out, everything but [a-z0-9] becomes a space.
 *   feat_fit          inverse document frequencies of hashed unigrams and
 *                     bigrams over a set of rows (the training split);
 *   feat_transform    one text -> TF-IDF vector of `dim` floats, L2-normalised;
 *   stratified_split  train/val index sets that keep every class's share.
 *
 * Everything here is deterministic: the same inputs give bit-identical
 * outputs on every rank and every run (a fixed hash, FNV-1a 64, no global
 * state), which is what lets each rank featurize its own shard and lets a
 * checkpoint carry just `dim` and the idf vector.
 */
#ifndef COLLKIT_FEATURES_H
#define COLLKIT_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#include "mwml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* title + " " + description, lower-cased, NLTK English stopwords removed,
 * non-alphanumerics replaced by spaces, runs of spaces collapsed, no space at
 * either end, and link schemes ("https") dropped as Made With ML does. NULL counts as "". Returns a malloc'd string (NULL only when
 * out of memory). */
char *text_clean(const char *title, const char *description);
/* True when `word` (lower-case) is in the NLTK English stopword list. */
int   text_is_stopword(const char *word, size_t len);

/* Largest number of hash buckets accepted (the trainer's input layer is dense). */
#define FEAT_MAX_DIM (1 << 26)

/* Which n-grams are features and how they are counted. */
typedef struct {
    int char_min, char_max;  /* character n-grams of each word, lengths char_min..char_max,
                                the word padded with a space on both sides (" word ");
                                0, 0: none */
    int sublinear;           /* 1: tf = 1 + ln(count) instead of the raw count */
    int title_weight;        /* the title's n-grams are counted this many times (>= 1) */
    int nb_scale;            /* 1: each bucket's idf times its largest |log-count ratio| over
                                the classes (NBSVM), counted on the fitting rows' tags */
} feat_opts;

#define FEAT_MAX_CHAR_N 16
#define FEAT_MAX_TITLE_WEIGHT 16

/* Word unigrams + bigrams, raw counts, title counted once, no NB scaling: what feat_fit uses. */
extern const feat_opts feat_words_only;
/* 1 when o holds a usable combination (char_min <= char_max <= FEAT_MAX_CHAR_N,
 * both 0 or char_min >= 1; sublinear 0/1; title_weight in 1..FEAT_MAX_TITLE_WEIGHT; nb_scale 0/1). */
int feat_opts_valid(const feat_opts *o);

typedef struct {
    int dim;        /* number of hash buckets = length of a feature vector */
    float *idf;     /* [dim] */
    feat_opts opt;
} featurizer;

/* Fit the idf of every bucket on rows[0..nrows) of d (all of d when rows is
 * NULL): idf = ln((1 + n) / (1 + df)) + 1, df = rows whose text hits the
 * bucket (scikit-learn's smooth idf). 0 on success; -1 on a bad argument
 * (dim outside 1..FEAT_MAX_DIM, a row index out of range) or no memory. */
int  feat_fit(featurizer *f, int dim, const mwml_data *d, const size_t *rows, size_t nrows);
/* The same with other n-grams and weighting (o must be feat_opts_valid). Every
 * n-gram kind hashes into the same `dim` buckets; character n-grams start
 * from their own FNV state so they never equal a word's hash by construction.
 * With o->nb_scale the rows' tags are read too (each must be a valid tag, else
 * -1), and idf[] holds idf times the NB scale of the bucket (features.c): the
 * vector a checkpoint saves and feat_load_opts takes back. */
int  feat_fit_opts(featurizer *f, int dim, const feat_opts *o, const mwml_data *d, const size_t *rows,
                   size_t nrows);
/* Rebuild a featurizer from a saved idf vector (copied). 0 or -1. */
int  feat_load(featurizer *f, int dim, const float *idf);
int  feat_load_opts(featurizer *f, int dim, const feat_opts *o, const float *idf);
/* out[0..dim) = TF-IDF vector of the row: counts of its n-gram buckets (the
 * title's counted title_weight times; 1 + ln(count) when sublinear) times
 * their idf, scaled to unit L2 norm (all zeros when the text has no word left
 * after cleaning). */
void feat_transform(const featurizer *f, const char *title, const char *description, float *out);
/* The same for text already passed through text_clean (title and description
 * together, so the title is counted once whatever title_weight says). */
void feat_transform_clean(const featurizer *f, const char *clean, float *out);
/* Row-major [nrows][dim] matrix for rows[0..nrows) of d (all of d when rows
 * is NULL). 0, or -1 on a bad row index or no memory. */
int  feat_transform_rows(const featurizer *f, const mwml_data *d, const size_t *rows,
                         size_t nrows, float *out);
void feat_free(featurizer *f);

/* Featurised rows in CSR (compressed sparse row) form: row i's non-zeros are
 * idx[ptr[i] .. ptr[i+1]) (bucket ids, ascending) with values val[same
 * range], and y[i] is its tag. A TF-IDF row has tens to hundreds of non-zeros
 * out of tens of thousands of buckets, so this is what the trainer keeps and
 * what its input layer reads. */
typedef struct {
    size_t *ptr;   /* [n + 1] */
    int    *idx;   /* [nnz] */
    float  *val;   /* [nnz] */
    int    *y;     /* [n] */
    size_t  n;
    int     dim;
} feat_csr;

/* CSR matrix of rows[0..nrows) of d (all of d when rows is NULL): the same
 * values as feat_transform_rows, bit for bit, without a [dim] row per sample.
 * 0, or -1 on a bad row index or no memory (*out is then empty). */
int  feat_transform_csr(const featurizer *f, const mwml_data *d, const size_t *rows, size_t nrows, feat_csr *out);
void feat_csr_free(feat_csr *m);

/* Bucket of a token or of a bigram "a b": FNV-1a 64 of the bytes, mod dim. */
uint32_t feat_bucket(const char *s, size_t len, int dim);

/* Split the rows of d into train and val: in each class, round(val_frac * n_c)
 * rows chosen at random (seeded, same on every machine) go to val and the rest
 * to train. Both index lists come back sorted ascending in malloc'd arrays
 * (free them). val_frac must be in [0, 1]. 0, or -1 on a bad argument. */
int stratified_split(const mwml_data *d, double val_frac, uint64_t seed,
                     size_t **train, size_t *ntrain, size_t **val, size_t *nval);

/* Stratified k-fold: the rows of d dealt into k folds (2 <= k), every class
 * spread evenly; fold `fold` (0-based) is returned as val and the other k-1
 * as train, both sorted ascending in malloc'd arrays. The same seed gives the
 * same folds, and the k val sets partition the rows. 0, or -1 on a bad
 * argument. This is what model selection uses (tagtrain --folds K --fold I):
 * every row of dataset.csv is validated on once, and holdout.csv is never read. */
int stratified_kfold(const mwml_data *d, int k, int fold, uint64_t seed,
                     size_t **train, size_t *ntrain, size_t **val, size_t *nval);

#ifdef __cplusplus
}
#endif
#endif
