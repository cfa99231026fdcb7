/*
 * json.h — the one JSON writer of the trainer (the --log records, the
 * --metrics file, tagpredict --json). Keys and values are written in the
 * order given; strings are escaped; a number that is NaN or infinite is
 * written as null (JSON has no NaN), so a reader never meets "-nan".
 *
 *   json j;
 *   json_open(&j, f);  json_str(&j, "type", "epoch");  json_num(&j, "loss", x);
 *   json_obj(&j, "per_class"); ... json_end(&j);        nested object
 *   json_arr(&j, "labels"); json_str(&j, NULL, "a"); json_end(&j);
 *   json_end(&j);                                       closes the record, "}\n"
 *
 * Inside an array the key is NULL. Write errors are the FILE's: check
 * ferror / fflush / fclose as for any other output.
 */
#ifndef TRAINER_JSON_H
#define TRAINER_JSON_H

#include <stdio.h>

#define JSON_MAX_DEPTH 8

typedef struct {
    FILE *f;
    int   depth;
    int   count[JSON_MAX_DEPTH];   /* members written at each level (for the commas) */
    char  close[JSON_MAX_DEPTH];   /* '}' or ']' */
} json;

void json_open(json *j, FILE *f);
void json_str(json *j, const char *key, const char *v);
void json_int(json *j, const char *key, long long v);
void json_num(json *j, const char *key, double v);     /* %.9g; NaN/Inf -> null */
void json_bool(json *j, const char *key, int v);
void json_obj(json *j, const char *key);
void json_arr(json *j, const char *key);
void json_end(json *j);                                /* the outermost one ends the line */

#endif
