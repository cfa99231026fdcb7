/*
 * tagsynth — a synthetic tagging dataset of any size, in the Made With ML format.
 *
 *   tagsynth --rows N --out FILE [--seed S] [--overwrite]
 *
 * Why: the real dataset has 764 rows, which is too few to time data-parallel
 * training at scale or to stress the loader. This writes N rows (millions if
 * asked) with the same header, the same four tags in the real class
 * proportions, and text a model can learn: each tag has its own vocabulary,
 * mixed with words shared by all tags, words borrowed from other tags and
 * stopwords, so the task is learnable but not trivial.
 *
 * The CSV deliberately exercises the parser: titles with commas, descriptions
 * with "quoted" words (doubled quotes), embedded newlines and a few non-ASCII
 * words, all written by the RFC 4180 rules (quote a field that holds a comma,
 * quote or line break; double the quotes inside).
 *
 * Safety: an existing FILE is never replaced unless --overwrite is given. The
 * rows go to a temporary file next to FILE, which is flushed, fsync'ed and
 * then linked (no --overwrite: fails if FILE appeared meanwhile) or renamed
 * (--overwrite) into place, so FILE is never seen half-written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collkit_util.h"
#include "mwml.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Vocabulary of each tag, in mwml_tags order. */
static const char *const vocab_cv[] = {
    "image", "images", "detection", "segmentation", "pixel", "camera", "video", "object",
    "yolo", "convolutional", "cnn", "face", "pose", "depth", "gan", "stylegan", "diffusion",
    "super-resolution", "opencv", "bounding", "boxes", "tracking", "instance", "semantic",
    "3d", "point", "cloud", "lidar", "vision", "visual", "photo", "inpainting", "ocr",
    "resnet", "vit", "keypoints", "optical", "flow", "satellite", "medical",
};
static const char *const vocab_mlops[] = {
    "deployment", "serving", "monitoring", "pipeline", "pipelines", "kubernetes", "docker",
    "mlflow", "kubeflow", "airflow", "feature", "store", "versioning", "experiment",
    "tracking", "ci", "cd", "production", "latency", "infrastructure", "orchestration",
    "registry", "drift", "observability", "scaling", "api", "endpoint", "workflow",
    "reproducible", "dvc", "ray", "cluster", "batch", "inference", "platform", "metadata",
    "testing", "continuous", "automation", "ops",
};
static const char *const vocab_nlp[] = {
    "text", "language", "transformer", "bert", "gpt", "token", "tokenizer", "embeddings",
    "sentiment", "translation", "summarization", "question", "answering", "ner", "entity",
    "corpus", "word2vec", "attention", "seq2seq", "chatbot", "dialogue", "speech",
    "sentence", "parsing", "grammar", "spacy", "huggingface", "llm", "prompt", "generation",
    "classification", "nlp", "lstm", "vocabulary", "document", "retrieval", "semantic",
    "multilingual", "t5", "roberta",
};
static const char *const vocab_other[] = {
    "graph", "reinforcement", "agent", "reward", "policy", "time", "series", "forecasting",
    "recommendation", "recommender", "tabular", "anomaly", "clustering", "bayesian",
    "probabilistic", "causal", "survival", "game", "chess", "robotics", "node", "network",
    "embedding", "pagerank", "knowledge", "financial", "stock", "trading", "gradient",
    "boosting", "xgboost", "optimization", "evolutionary", "genetic", "physics",
    "molecule", "protein", "climate", "audio", "music",
};
static const char *const *const vocab[MWML_NTAGS] = { vocab_cv, vocab_mlops, vocab_nlp, vocab_other };
static const size_t vocab_n[MWML_NTAGS] = {
    NELEM(vocab_cv), NELEM(vocab_mlops), NELEM(vocab_nlp), NELEM(vocab_other)
};
/* Words every tag uses. */
static const char *const shared[] = {
    "model", "models", "learning", "deep", "neural", "training", "dataset", "data",
    "library", "framework", "pytorch", "tensorflow", "python", "implementation", "paper",
    "tutorial", "benchmark", "open-source", "state-of-the-art", "fast", "simple", "new",
    "toolkit", "accuracy", "research", "code", "repository", "notebook", "guide", "using",
    "based", "approach", "method", "results", "collection", "awesome", "efficient",
};
static const char *const stop[] = {
    "the", "a", "an", "of", "for", "with", "and", "to", "in", "on", "is", "that", "this",
    "we", "our", "it", "from", "by", "your",
};
/* A few non-ASCII words so the UTF-8 path is used. */
static const char *const accented[] = { "naïve", "café", "Zürich", "résumé", "über", "—", "façade" };
/* Class priors: the share of each tag in the real dataset.csv (285/63/310/106 of 764). */
static const double prior[MWML_NTAGS] = { 285.0 / 764, 63.0 / 764, 310.0 / 764, 106.0 / 764 };

static uint64_t rng_state;
static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1.0p-53; }
static size_t pick(size_t n) { return (size_t)(next_u64() % n); }

/* A growing string for one field. */
typedef struct { char *s; size_t n, cap; } str;
static int put(str *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) return -1;
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}
static int puts_(str *b, const char *s) { return put(b, s, strlen(s)); }

/* One content word for a row of tag t. */
static const char *word(int t)
{
    double u = uniform();
    if (u < 0.55) return vocab[t][pick(vocab_n[t])];
    if (u < 0.65) {                        /* borrowed from another tag: keeps it honest */
        int o = (int)pick(MWML_NTAGS);
        return vocab[o][pick(vocab_n[o])];
    }
    if (u < 0.98) return shared[pick(NELEM(shared))];
    return accented[pick(NELEM(accented))];
}

static int make_title(str *b, int t)
{
    int n = 2 + (int)pick(5), rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        const char *w = word(t);
        if (i) rc |= puts_(b, uniform() < 0.08 ? ", " : " ");
        /* Capitalise like a project name. */
        char first[2] = { w[0] >= 'a' && w[0] <= 'z' ? (char)(w[0] - 32) : w[0], 0 };
        rc |= puts_(b, first);
        rc |= puts_(b, w + 1);
    }
    if (!rc && uniform() < 0.05) rc |= puts_(b, ": \"Reloaded\"");
    return rc;
}

static int make_description(str *b, int t)
{
    int n = 8 + (int)pick(23), rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (i) {
            double u = uniform();
            rc |= puts_(b, u < 0.06 ? ", " : u < 0.08 ? ". " : u < 0.09 ? "\n" : " ");
        }
        if (uniform() < 0.3) rc |= puts_(b, stop[pick(NELEM(stop))]);
        else if (uniform() < 0.04) {
            rc |= puts_(b, "\"");
            rc |= puts_(b, word(t));
            rc |= puts_(b, "\"");
        } else rc |= puts_(b, word(t));
    }
    if (!rc) rc |= puts_(b, uniform() < 0.1 ? ".\n" : ".");
    return rc;
}

/* RFC 4180: quote when the field holds a comma, quote or line break. */
static void write_field(FILE *f, const str *b)
{
    if (strpbrk(b->s, ",\"\r\n") == NULL) {
        fwrite(b->s, 1, b->n, f);
        return;
    }
    putc('"', f);
    for (size_t i = 0; i < b->n; i++) {
        if (b->s[i] == '"') putc('"', f);
        putc(b->s[i], f);
    }
    putc('"', f);
}

/* ------------------------------------------------------------ options */

typedef struct opts {
    uint64_t    rows, seed;
    const char *out;
    int         overwrite;
} opts;

static const ck_opt options[] = {
    {"--rows", 0, CK_OPT_SIZE, offsetof(opts, rows), .arg = "N", .help = "number of data rows, 1 .. 1000000000 (K, M: x1024)"},
    {"--out", 0, CK_OPT_STR, offsetof(opts, out), .arg = "FILE",
     .help = "where to write; an existing FILE is refused unless --overwrite; FILE\n"
             "appears whole or not at all (a full disk or Ctrl-C leaves nothing)"},
    {"--seed", 0, CK_OPT_SIZE, offsetof(opts, seed), .arg = "S",
     .help = "random seed (default %D); the same seed gives the same file"},
    {"--overwrite", 0, CK_OPT_FLAG, offsetof(opts, overwrite), .help = "replace FILE if it exists"},
    {NULL},
};
enum { NOPTIONS = sizeof options / sizeof options[0], ROWS = 0 };

static const opts defaults = {.seed = 1};

static void usage(void)
{
    printf("usage: tagsynth --rows N --out FILE [--seed S] [--overwrite]\n"
           "\n"
           "Writes a synthetic tagging dataset of N rows in the Made With ML CSV format\n"
           "(header id,created_on,title,description,tag; tags computer-vision, mlops,\n"
           "natural-language-processing, other in the real class proportions).\n"
           "\n");
    ck_opt_help(stdout, options, &defaults);
    printf("  --help               this text\n");
}

/* Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, opts *o)
{
    *o = defaults;
    const char *given[NOPTIONS] = {0};
    char err[200];
    const int rc = ck_opt_parse(options, argc, argv, o, given, err, sizeof err);
    if (rc == CK_OPT_HELP) {
        usage();
        return 0;
    }
    if (rc == CK_OPT_BAD) fprintf(stderr, "tagsynth: %s%s\n", err, strncmp(err, "unknown", 7) ? "" : " (see --help)");
    else if (!given[ROWS] || !o->out) fprintf(stderr, "tagsynth: --rows and --out are required (see --help)\n");
    else if (o->rows < 1 || o->rows > 1000000000ULL)
        fprintf(stderr, "tagsynth: --rows must be between 1 and 1000000000, got %" PRIu64 "\n", o->rows);
    else if (!*o->out) fprintf(stderr, "tagsynth: --out: empty file name\n");
    else return -1;
    return 2;
}

/* ------------------------------------------------------------ the file */

/* The temporary file being written: removed when the run is interrupted
 * (Ctrl-C, a job's time limit), so that a stopped run leaves nothing behind. */
static char *tmp_path;

static void drop_tmp(int sig)
{
    if (tmp_path) unlink(tmp_path);   /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* FILE may be written: 1, or 0 after saying why. */
static int may_write(const opts *o)
{
    struct stat st;
    if (lstat(o->out, &st) != 0) return 1;
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tagsynth: %s is a directory; give a file name\n", o->out);
        return 0;
    }
    if (!o->overwrite) {
        fprintf(stderr, "tagsynth: %s exists: not written over (give another file, or --overwrite)\n", o->out);
        return 0;
    }
    return 1;
}

/* A temporary file beside FILE (tmp_path), opened for buffered writing, with
 * the mode a plain create would give; NULL after saying why. */
static FILE *open_tmp(const char *out, int *fd)
{
    size_t tl = strlen(out) + 16;
    char *tmp = malloc(tl);
    if (!tmp) { fprintf(stderr, "tagsynth: out of memory\n"); return NULL; }
    snprintf(tmp, tl, "%s.tmp.XXXXXX", out);
    *fd = mkstemp(tmp);
    if (*fd < 0) {
        fprintf(stderr, "tagsynth: cannot create a temporary file beside %s: %s\n", out, strerror(errno));
        free(tmp);
        return NULL;
    }
    tmp_path = tmp;
    static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof stop_signals / sizeof stop_signals[0]; k++) signal(stop_signals[k], drop_tmp);
    /* A file size limit (ulimit -f) then fails the write with EFBIG, as a
     * full disk does with ENOSPC, instead of killing the process. */
    signal(SIGXFSZ, SIG_IGN);
    FILE *f = fdopen(*fd, "w");
    if (!f) {
        fprintf(stderr, "tagsynth: %s: %s\n", tmp, strerror(errno));
        close(*fd);
        unlink(tmp);
        tmp_path = NULL;
        free(tmp);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    /* mkstemp makes the file 0600; give it the mode a plain create would. */
    mode_t um = umask(0);
    umask(um);
    fchmod(*fd, 0666 & ~um);
    return f;
}

/* A tag drawn from the class priors. */
static int draw_tag(void)
{
    double u = uniform(), acc = 0;
    for (int k = 0; k < MWML_NTAGS; k++) {
        acc += prior[k];
        if (u < acc) return k;
    }
    return MWML_NTAGS - 1;
}

/* The header and the rows, counted per tag. 0, or -1 out of memory. */
static int write_rows(FILE *f, uint64_t rows, uint64_t *counts)
{
    str title = { 0 }, desc = { 0 };
    int rc = 0;
    const time_t t0 = 1582181000;   /* 2020-02-20, the date of the first real row */
    fputs("id,created_on,title,description,tag\n", f);
    /* ferror: a full disk ends the run at once, not after every row is formatted */
    for (uint64_t r = 0; r < rows && !rc && !ferror(f); r++) {
        const int t = draw_tag();
        counts[t]++;
        title.n = desc.n = 0;
        rc |= make_title(&title, t);
        rc |= make_description(&desc, t);
        if (rc) break;
        time_t when = t0 + (time_t)(r * 97 % 120000000);   /* spread over ~4 years */
        struct tm tm;
        gmtime_r(&when, &tm);
        char date[32];
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(f, "%" PRIu64 ",%s,", r + 1, date);
        write_field(f, &title);
        putc(',', f);
        write_field(f, &desc);
        fprintf(f, ",%s\n", mwml_tags[t]);
    }
    free(title.s);
    free(desc.s);
    if (rc) fprintf(stderr, "tagsynth: out of memory\n");
    return rc ? -1 : 0;
}

/* The rows on disk (flushed, fsync'ed), then the temporary file put in place:
 * linked (fails instead of replacing a FILE that appeared meanwhile) or,
 * with --overwrite, renamed. 0, or 1 after saying why; the temporary name
 * is gone either way. */
static int put_in_place(FILE *f, int fd, int rc, const opts *o)
{
    char *tmp = tmp_path;
    if (!rc && (fflush(f) != 0 || ferror(f) || fsync(fd) != 0)) {
        fprintf(stderr, "tagsynth: writing %s failed: %s\n", tmp, strerror(errno));
        rc = 1;
    }
    if (fclose(f) != 0 && !rc) {
        fprintf(stderr, "tagsynth: writing %s failed: %s\n", tmp, strerror(errno));
        rc = 1;
    }
    if (!rc && o->overwrite && rename(tmp, o->out) != 0) {
        fprintf(stderr, "tagsynth: cannot rename %s to %s: %s\n", tmp, o->out, strerror(errno));
        rc = 1;
    } else if (!rc && !o->overwrite && link(tmp, o->out) != 0) {
        if (errno == EEXIST)
            fprintf(stderr, "tagsynth: %s appeared while writing; not replacing it (use --overwrite)\n", o->out);
        else
            fprintf(stderr, "tagsynth: cannot create %s: %s\n", o->out, strerror(errno));
        rc = 1;
    }
    tmp_path = NULL;
    unlink(tmp);   /* after link(): the name is no longer needed; after a failure: clean up */
    free(tmp);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    if (!may_write(&o)) return 1;
    int fd;
    FILE *f = open_tmp(o.out, &fd);
    if (!f) return 1;
    rng_state = o.seed;
    uint64_t counts[MWML_NTAGS] = { 0 };
    rc = write_rows(f, o.rows, counts);
    if (put_in_place(f, fd, rc, &o)) return 1;
    printf("tagsynth: wrote %" PRIu64 " rows to %s (seed %" PRIu64 "):", o.rows, o.out, o.seed);
    for (int k = 0; k < MWML_NTAGS; k++) printf(" %s %" PRIu64, mwml_tags[k], counts[k]);
    printf("\n");
    return ck_stdout_done("tagsynth");
}
