/*
 * mwml.h — the Made With ML tagging dataset: CSV loader and data lookup.
 *
 * The files (dataset.csv: 764 rows, holdout.csv: 191 rows) are RFC 4180 CSV
 * with the header  id,created_on,title,description,tag  and one of four tags
 * per row. Fields may be quoted; quoted fields may hold commas, doubled
 * quotes ("") and newlines. Text is UTF-8 and is kept byte for byte.
 *
 * Every failure is reported as "path:line: what" in the caller's err buffer
 * (MWML_ERRLEN bytes is always enough) and a non-zero return; the loader never
 * aborts, and its memory is bounded by the caps below.
 */
#ifndef COLLKIT_MWML_H
#define COLLKIT_MWML_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MWML_NTAGS = 4 };
/* Tag names in alphabetical order; a row's `tag` indexes this array. */
extern const char *const mwml_tags[MWML_NTAGS];

/* Suggested size of an error buffer: holds the longest message mwml_find writes. */
enum { MWML_ERRLEN = 2048 };

/* Default caps of mwml_load: one field (a description) and the whole file. */
#define MWML_MAX_FIELD ((size_t)1 << 20)   /* 1 MiB */
#define MWML_MAX_FILE  ((size_t)1 << 30)   /* 1 GiB */

typedef struct {
    char *id, *created_on, *title, *description;
    int tag;                     /* index into mwml_tags */
} mwml_row;

/* The rows and all their strings live in one allocation owned by `rows`. */
typedef struct {
    mwml_row *rows;
    size_t n;
} mwml_data;

/* Parse `path`. The header must be exactly id,created_on,title,description,tag.
 * Accepted: \n or \r\n line ends, a UTF-8 byte-order mark, a missing final
 * newline, blank lines between records (skipped). Refused, with the line: NUL
 * bytes and invalid UTF-8, unterminated quotes, a stray quote in an unquoted
 * field, text after a closing quote, a bare \r, a record with fewer or more
 * than 5 fields, an empty id or title, an unknown tag, a wrong or missing
 * header, a file with no data rows, a field over MWML_MAX_FIELD or a file over
 * MWML_MAX_FILE. Returns 0 and fills *out, or non-zero with *out empty. */
int  mwml_load(const char *path, mwml_data *out, char *err, size_t errlen);
/* The same with explicit caps (bytes); 0 means the default. */
int  mwml_load_capped(const char *path, size_t max_field, size_t max_file,
                      mwml_data *out, char *err, size_t errlen);
void mwml_free(mwml_data *d);

/* A text given outside a file (tagpredict's --title): 0 when it is valid
 * UTF-8 without NUL bytes, as every field of a loaded file is; else -1 and
 * why. */
int  mwml_check_field(const char *s, char *why, size_t whylen);
/* Index of a tag name in mwml_tags, -1 if unknown (exact, case-sensitive). */
int  mwml_tag_index(const char *name);
/* Per-class row counts: counts[t] = rows with tag t. */
void mwml_class_counts(const mwml_data *d, size_t counts[MWML_NTAGS]);

/* Find `file` ("dataset.csv" or "holdout.csv"). Order:
 *   1. explicit_path, when non-NULL (a --data/--holdout flag): used as given;
 *   2. $COLLKIT_DATA/<file>, when COLLKIT_DATA is set;
 *   3. D/datasets/madewithml/<file>, then D/../shared/datasets/madewithml/<file>,
 *      for D the folder the running executable is in, then each folder above
 *      it, nearest first (build/bin/tagtrain: the repository's datasets/,
 *      filled by datasets/fetch, or ../shared beside it; a student kit's
 *      bin/tagtrain: the kit's datasets/). No path of the machine that built
 *      the program is compiled in.
 * Steps 1 and 2 are a user's explicit choice: when they name a file that is
 * not there, that is an error, never a silent fall-back to other data.
 * Returns 0 and writes the path found, or non-zero with a message that lists
 * every place tried and how to get the data. */
int  mwml_find(const char *explicit_path, const char *file,
               char *path_out, size_t len, char *err, size_t errlen);

/* Problems a file can have that parse fine but make training or its
 * evaluation quietly wrong. Counts over the rows of `train` (data rows
 * numbered from 1 in the examples):
 *   dup_ids      rows whose id an earlier row already has;
 *   dup_text     rows whose title and description (byte for byte) an earlier
 *                row with another id already has;
 *   conflicting  rows among those two whose tag differs from the earlier row's
 *                (the same project labelled twice, differently);
 *   in_holdout   rows whose title and description are also a row's of
 *                `hold` (the holdout score would then be measured on training
 *                rows; a shared id alone is not counted: files numbered
 *                from 1 share ids and no rows); 0 when hold is NULL.
 * example[i] describes the first case of each kind ("" when none), in the
 * order above. */
typedef struct {
    size_t dup_ids, dup_text, conflicting, in_holdout;
    char   example[4][256];
} mwml_audit;

/* Fill *out. 0, or -1 when out of memory (*out then says nothing). */
int  mwml_audit_rows(const mwml_data *train, const mwml_data *hold, mwml_audit *out);

#ifdef __cplusplus
}
#endif
#endif
